// test_conv_bf16_gpu.cpp — the BF16 kernels against the CPU reference (label gpu; the cases:
// conv_cases.hpp, shared with the FP8 suite; the harness and its checks: conv_case.hpp).
#include <gtest/gtest.h>

#include "conv_cases.hpp"

namespace vaeconv::test {
namespace {

// --- All 18 seed shapes ------------------------------------------------------------------------
class VaeShapeBf16 : public ::testing::TestWithParam<VaeShape> {};

TEST_P(VaeShapeBf16, MatchesReference) { check_seed_shape<DType::kBF16>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Seed, VaeShapeBf16, ::testing::ValuesIn(kVaeShapes), shape_name);

// --- Extra cases: batch, odd sizes, bias/residual, strides, video -------------------------------
class ExtraBf16 : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ExtraBf16, MatchesReference) {
  check_case<DType::kBF16>(GetParam().desc, GetParam().opt, GetParam().aim);
}

INSTANTIATE_TEST_SUITE_P(Cases, ExtraBf16, ::testing::ValuesIn(extra_cases(DType::kBF16)),
                         case_name);

}  // namespace
}  // namespace vaeconv::test
