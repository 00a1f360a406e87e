// test_wide_cout192_gpu.cpp — which conv gets the 192-wide bf16 tile (tile_table.hpp's
// WideCout192Shape; dispatch.hpp's takes_wide_cout192), asserted through which_kernel (label gpu;
// host code: runs without a GPU).
//
// On the sm_90a build (VAECONV_NVIDIA_WGMMA) the implicit GEMM's 16-byte gather takes the 192-wide
// tile of its operand type (bf16 128x192x64, e4m3 128x192x128) exactly for the causal conv
// (cached or not; T = 1 and T > 1) and the downsample conv whose Cout is a multiple of 192, and in
// e4m3 for the upsample phases of such a Cout too: the kernels a GPU has checked and timed on it.
// The temporal convs, the bf16 upsample phases, the 96-channel layers and the element-wise gather
// keep their tiles (a 96-channel layer on the 192 tile would compute half padding; the temporal
// convs have not been timed on it). Every
// other build (the mma.sync twin, AMD) has no such tile: no plan there is 192 wide. The GPU
// suite's seed and extra cases run what these plans name against the reference; the rule alone
// is tests/host/test_wide_cout192.cpp.
#include <gtest/gtest.h>

#include <string>

#include "kernel_aim.hpp"
#include "vaeconv/api/kernel_plan.hpp"
#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv::test {
namespace {

constexpr bool kHasWideCout192 = kWgmmaTables;

// Whether the plan is the 192-wide tile, field by field against its shape where the build has it.
bool on_wide_cout192(const KernelPlan& p) {
  if (p.choice.tile != kernel::TileId::kWideCout192) {
    EXPECT_NE(p.bn, 192) << p.name() << ": a 192-wide plan not under kWideCout192";
    return false;
  }
#if defined(VAECONV_NVIDIA_WGMMA)
  if (p.dtype == DType::kFP8E4M3)
    expect_plan_shape<kernel::WideCout192ShapeFp8>(p);
  else
    expect_plan_shape<kernel::WideCout192Shape>(p);
  return true;
#else
  ADD_FAILURE() << p.name() << ": kWideCout192 on a build without the 192-wide tile";
  return false;
#endif
}

// Every seed shape, both operand types: the 192 tile exactly for the implicit-GEMM vector rows of
// the causal and downsample convs with Cout 192 or 384, and the e4m3 upsample phases of Cout 192.
TEST(WideCout192, SeedShapes) {
  int on192[2] = {0, 0};
  for (const VaeShape& s : kVaeShapes) {
    for (DType dt : {DType::kBF16, DType::kFP8E4M3}) {
      const KernelPlan p = plan_of(s.desc(dt));
      const bool fp8 = dt == DType::kFP8E4M3;
      const bool geometry = s.kind == ConvKind::kCausal3x3x3 ||
                            s.kind == ConvKind::kDownsample ||
                            (fp8 && s.kind == ConvKind::kUpsample && p.choice.upsample_phases);
      const bool expected = kHasWideCout192 &&
                            p.choice.family == KernelChoice::Family::kImplicitGemm &&
                            p.choice.vector && geometry && (s.cout == 192 || s.cout == 384);
      EXPECT_EQ(on_wide_cout192(p), expected) << s.id << ": " << p.name();
      on192[fp8] += expected;
    }
  }
  // bf16: enc_e1_res2, enc_e2_res1, enc_e2_res2, enc_e3_mid, dec_bottleneck_1328 and the two
  // downsample layers of 192 and 384 channels (the other causal layers of Cout >= 192 are the
  // halo kernel's). e4m3: the same seven, dec_conv_in (Cin 16: the halo kernel's in bf16 only)
  // and the two 384 -> 192 upsample layers.
  EXPECT_EQ(on192[0], kHasWideCout192 ? 7 : 0);
  EXPECT_EQ(on192[1], kHasWideCout192 ? 10 : 0);
}

// Named layers, so that a broken rule names the layer it broke.
TEST(WideCout192, NamedLayers) {
  using D = ConvDesc;
  // 384 -> 384 causal, T = 1 and T = 4: the 192 tile.
  EXPECT_EQ(on_wide_cout192(plan_of(D::causal3x3x3(1, 1, 256, 256, 384, 384))), kHasWideCout192);
  EXPECT_EQ(on_wide_cout192(plan_of(D::causal3x3x3(1, 4, 64, 64, 384, 384))), kHasWideCout192);
  EXPECT_EQ(on_wide_cout192(plan_of(D::causal3x3x3(2, 1, 40, 36, 192, 192))), kHasWideCout192);
  // The cached causal conv (one or two frames of the previous chunk) and downsample: the 192 tile.
  EXPECT_EQ(on_wide_cout192(plan_of(D::causal3x3x3_cached(1, 4, 48, 52, 192, 192, 2))),
            kHasWideCout192);
  EXPECT_EQ(on_wide_cout192(plan_of(D::causal3x3x3_cached(1, 2, 30, 52, 384, 384, 2))),
            kHasWideCout192);
  EXPECT_EQ(on_wide_cout192(plan_of(D::causal3x3x3_cached(1, 3, 9, 5, 192, 384, 1))),
            kHasWideCout192);
  EXPECT_EQ(on_wide_cout192(plan_of(D::downsample(1, 1, 256, 256, 384, 384))), kHasWideCout192);
  EXPECT_EQ(on_wide_cout192(plan_of(D::downsample(1, 1, 256, 256, 192, 192))), kHasWideCout192);
  // The temporal convs of stride 2 (Cout = C) and stride 1 (Cout = 2C in two interleaved halves)
  // keep the 96-wide tile, 192 and 384 channels alike (not timed on the 192 tile).
  EXPECT_FALSE(on_wide_cout192(plan_of(D::temporal3x1x1(1, 4, 32, 32, 384, 384, 2, 1))));
  EXPECT_FALSE(on_wide_cout192(plan_of(D::temporal3x1x1(1, 4, 32, 32, 384, 768, 1, 2))));
  EXPECT_FALSE(on_wide_cout192(plan_of(D::temporal3x1x1(1, 4, 32, 32, 192, 384, 1, 2))));
  EXPECT_FALSE(on_wide_cout192(plan_of(D::temporal3x1x1(1, 4, 32, 32, 96, 192, 1, 2))));
  // 96-channel layers keep the 96-wide tile.
  EXPECT_FALSE(on_wide_cout192(plan_of(D::causal3x3x3(1, 1, 256, 256, 96, 96))));
  EXPECT_FALSE(on_wide_cout192(plan_of(D::causal3x3x3_cached(1, 4, 48, 52, 96, 96, 2))));
  EXPECT_FALSE(on_wide_cout192(plan_of(D::downsample(1, 1, 256, 256, 96, 96))));
  // Cout a multiple of 96 but not of 192.
  EXPECT_FALSE(on_wide_cout192(plan_of(D::causal3x3x3(1, 1, 64, 64, 384, 288))));
  // The bf16 upsample phases keep the wide tile, 192 and 384 channels alike; the e4m3 ones take
  // the 192 tile.
  for (int64_t cout : {192, 384}) {
    const KernelPlan up = plan_of(D::upsample2x(1, 1, 128, 128, 384, cout));
    EXPECT_TRUE(up.choice.upsample_phases) << up.name();
    EXPECT_FALSE(on_wide_cout192(up));
    const KernelPlan up8 = plan_of(D::upsample2x(1, 1, 128, 128, 384, cout, DType::kFP8E4M3));
    EXPECT_TRUE(up8.choice.upsample_phases) << up8.name();
    EXPECT_EQ(on_wide_cout192(up8), kHasWideCout192);
  }
  // The element-wise gather (Cin not a multiple of 8) keeps its tile; e4m3 takes the 192 tile as
  // bf16 does, and its temporal convs keep theirs.
  EXPECT_FALSE(on_wide_cout192(plan_of(D::downsample(1, 1, 64, 64, 12, 384))));
  EXPECT_EQ(
      on_wide_cout192(plan_of(D::causal3x3x3(1, 1, 256, 256, 384, 384, DType::kFP8E4M3))),
      kHasWideCout192);
  EXPECT_EQ(on_wide_cout192(plan_of(D::causal3x3x3_cached(1, 2, 30, 52, 384, 384, 2,
                                                          DType::kFP8E4M3))),
            kHasWideCout192);
  EXPECT_FALSE(on_wide_cout192(
      plan_of(D::temporal3x1x1(1, 4, 32, 32, 384, 768, 1, 2, DType::kFP8E4M3))));
}

}  // namespace
}  // namespace vaeconv::test
