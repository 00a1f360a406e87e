// test_wide_causal_gpu.cpp — which conv gets the causal tile (tile_table.hpp's WideCausalShape;
// dispatch.hpp's takes_wide_causal), asserted through which_kernel (label gpu; the plans are host
// code and run without a GPU), and the causal convs it takes run against the CPU reference.
//
// On the sm_90a build (VAECONV_NVIDIA_WGMMA) the implicit GEMM's 16-byte gather takes the bf16
// causal tile (warp-specialized 256x96x64, 3 stages) exactly for the causal conv, cached or not,
// T = 1 and T > 1, that the wide tile would otherwise take: Cout not a multiple of 192 (those take
// the 192-wide tile) and not the halo kernel's (T = 1 with Cin <= 96). The downsample conv, the
// upsample phases, the temporal convs, e4m3 and the element-wise gather keep their tiles. Every
// other build (the mma.sync twin, AMD) has no such tile. The cached causal convs of Cout 96 of
// CachedConvGpu.* also run on it there; the rule alone is tests/host/test_wide_causal.cpp.
#include <gtest/gtest.h>

#include "conv_case.hpp"
#include "vaeconv/api/kernel_plan.hpp"
#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv::test {
namespace {

constexpr bool kHasWideCausal = kWgmmaTables;

// Whether the plan is the causal tile, field by field against its shape where the build has it.
bool on_wide_causal(const KernelPlan& p) {
  if (p.choice.tile != kernel::TileId::kWideCausal) return false;
#if defined(VAECONV_NVIDIA_WGMMA)
  EXPECT_EQ(p.dtype, DType::kBF16) << p.name();
  expect_plan_shape<kernel::WideCausalShape>(p);
  return true;
#else
  ADD_FAILURE() << p.name() << ": kWideCausal on a build without the causal tile";
  return false;
#endif
}

// No seed shape takes it: their causal layers of Cout 96 are the halo kernel's (T = 1,
// Cin <= 96), the others the 192-wide, narrow, tap-row and tap-reduce kernels'.
TEST(WideCausal, NoSeedShape) {
  for (const VaeShape& s : kVaeShapes)
    for (DType dt : {DType::kBF16, DType::kFP8E4M3})
      EXPECT_FALSE(on_wide_causal(plan_of(s.desc(dt)))) << s.id;
}

// Named layers, so that a broken rule names the layer it broke.
TEST(WideCausal, NamedLayers) {
  using D = ConvDesc;
  // Wan's 96-channel cached conv (2 cached + 4 new frames) and its first chunk (T = 1 -> 1 with
  // no cache is the halo kernel's), a cache of one frame, T > 1 without a cache, Cin > 96 at T = 1
  // (past the halo's channels), Cout 96 + 96k not a multiple of 192.
  EXPECT_EQ(on_wide_causal(plan_of(D::causal3x3x3_cached(1, 4, 480, 832, 96, 96, 2))),
            kHasWideCausal);
  EXPECT_EQ(on_wide_causal(plan_of(D::causal3x3x3_cached(1, 3, 9, 5, 96, 96, 1))),
            kHasWideCausal);
  EXPECT_EQ(on_wide_causal(plan_of(D::causal3x3x3(1, 4, 64, 64, 96, 96))), kHasWideCausal);
  EXPECT_EQ(on_wide_causal(plan_of(D::causal3x3x3(1, 1, 240, 416, 192, 96))), kHasWideCausal);
  EXPECT_EQ(on_wide_causal(plan_of(D::causal3x3x3(1, 1, 64, 64, 384, 288))), kHasWideCausal);
  EXPECT_FALSE(on_wide_causal(plan_of(D::causal3x3x3(1, 1, 256, 256, 96, 96))));  // halo
  // The 192-wide tile's convs, the downsample conv, the upsample phases and the temporal convs
  // keep their tiles.
  EXPECT_FALSE(on_wide_causal(plan_of(D::causal3x3x3_cached(1, 4, 48, 52, 192, 192, 2))));
  EXPECT_FALSE(on_wide_causal(plan_of(D::downsample(1, 1, 256, 256, 96, 96))));
  EXPECT_FALSE(on_wide_causal(plan_of(D::upsample2x(1, 1, 128, 128, 192, 96))));
  EXPECT_FALSE(on_wide_causal(plan_of(D::temporal3x1x1(1, 4, 32, 32, 96, 192, 1, 2))));
  EXPECT_FALSE(on_wide_causal(plan_of(D::temporal3x1x1(1, 4, 32, 32, 96, 96, 2, 1))));
  // e4m3 keeps the wide tile; the element-wise gather (Cin not a multiple of 8) its own.
  EXPECT_FALSE(on_wide_causal(
      plan_of(D::causal3x3x3_cached(1, 4, 48, 52, 96, 96, 2, DType::kFP8E4M3))));
  EXPECT_FALSE(on_wide_causal(plan_of(D::causal3x3x3(1, 4, 64, 64, 12, 96))));
}

// The causal convs it takes, against the reference: T > 1 without a cache (odd sizes, N = 2, a
// residual), Cin > 96 at T = 1 with a partial last block of pixels, Cout 288 (three 96-wide
// column blocks). The cached ones are CachedConvGpu's.
TEST(WideCausal, AgainstReference) {
  using D = ConvDesc;
  struct Case {
    ConvDesc d;
    bool residual;
  };
  const Case cases[] = {
      {D::causal3x3x3(2, 3, 11, 13, 96, 96), true},
      {D::causal3x3x3(1, 1, 37, 29, 192, 96), false},
      {D::causal3x3x3(1, 2, 17, 9, 384, 288), true},
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    CaseOptions o;
    o.residual = c.residual;
    o.seed = seed++;
    const ConvDesc d = case_desc(c.d, DType::kBF16, o);
    EXPECT_EQ(on_wide_causal(plan_of(d)), kHasWideCausal) << d.to_string();
    if (::testing::Test::HasFailure()) return;
    VAECONV_REQUIRE_GPU();
    expect_case_ok<DType::kBF16>(d, run_conv_case<DType::kBF16>(d, o));
  }
}

}  // namespace
}  // namespace vaeconv::test
