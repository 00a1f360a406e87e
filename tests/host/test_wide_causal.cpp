// test_wide_causal.cpp — the rule of the causal tile (kernel/dispatch.hpp's takes_wide_causal),
// host arithmetic: the causal conv, cached or not, T = 1 and T > 1, of either operand type (the
// table decides which type has the tile: sm_90a bf16); the downsample, upsample and temporal
// convs keep the wide tile. Which plans the sm_90a tables give (which_kernel, GPU compiler, no
// GPU needed): tests/gpu/test_wide_causal_gpu.cpp.
#include <gtest/gtest.h>

#include "vaeconv/kernel/dispatch.hpp"

namespace vaeconv {
namespace {

using kernel::takes_wide_causal;
using D = ConvDesc;

TEST(WideCausalRule, CausalCachedOrNot) {
  EXPECT_TRUE(takes_wide_causal(D::causal3x3x3(1, 1, 64, 64, 192, 96)));
  EXPECT_TRUE(takes_wide_causal(D::causal3x3x3(1, 4, 64, 64, 96, 96)));
  for (int cache : {1, 2})
    EXPECT_TRUE(takes_wide_causal(D::causal3x3x3_cached(1, 4, 48, 52, 96, 96, cache))) << cache;
  EXPECT_TRUE(takes_wide_causal(D::causal3x3x3_cached(1, 4, 48, 52, 96, 96, 2, DType::kFP8E4M3)));
}

TEST(WideCausalRule, OtherKindsKeepTheWideTile) {
  EXPECT_FALSE(takes_wide_causal(D::downsample(1, 1, 256, 256, 96, 96)));
  EXPECT_FALSE(takes_wide_causal(D::upsample2x(1, 1, 128, 128, 192, 96)));
  EXPECT_FALSE(takes_wide_causal(D::temporal3x1x1(1, 4, 32, 32, 96, 192, 1, 2)));
  EXPECT_FALSE(takes_wide_causal(D::temporal3x1x1(1, 4, 32, 32, 96, 96, 2, 1)));
}

}  // namespace
}  // namespace vaeconv
