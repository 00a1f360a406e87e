// test_wide_cout192_gpu.cpp — which conv gets the 192-wide bf16 tile (tile_table.hpp's
// WideCout192Shape; dispatch.hpp's takes_wide_cout192), asserted through which_kernel (label gpu;
// host code: runs without a GPU).
//
// On the sm_90a build (VAECONV_NVIDIA_WGMMA) the bf16 implicit GEMM's 16-byte gather takes the
// 128 x 192 tile exactly for the causal conv (cached or not; T = 1 and T > 1) and the downsample
// conv whose Cout is a multiple of 192, the kernels a GPU has checked and timed on it. The
// temporal convs, the upsample phases, the 96-channel layers, the element-wise gather and every
// fp8 conv keep their tiles (a 96-channel layer on the 192 tile would compute half padding; the
// temporal convs have not been timed on it). Every
// other build (the mma.sync twin, AMD) has no such tile: no plan there is 192 wide. The GPU
// suite's seed and extra cases run what these plans name against the reference; the rule alone
// is tests/host/test_wide_cout192.cpp.
#include <gtest/gtest.h>

#include <string>

#include "vaeconv/api/kernel_plan.hpp"
#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv::test {
namespace {

#if defined(VAECONV_NVIDIA_WGMMA)
constexpr bool kHasWideCout192 = true;
#else
constexpr bool kHasWideCout192 = false;
#endif

KernelPlan plan_of(const ConvDesc& d) {
  KernelPlan p;
  const Status s = which_kernel(d, &p);
  EXPECT_TRUE(s.ok()) << s.to_string() << " for " << d.to_string();
  return p;
}

// Whether the plan is the 192-wide tile, field by field against its shape where the build has it.
bool on_wide_cout192(const KernelPlan& p) {
  if (p.choice.tile != kernel::TileId::kWideCout192) {
    EXPECT_NE(p.bn, 192) << p.name() << ": a 192-wide plan not under kWideCout192";
    return false;
  }
#if defined(VAECONV_NVIDIA_WGMMA)
  using S = kernel::WideCout192Shape;
  EXPECT_EQ(p.choice.family, KernelChoice::Family::kImplicitGemm) << p.name();
  EXPECT_TRUE(p.choice.vector) << p.name();
  EXPECT_FALSE(p.choice.upsample_phases) << p.name();
  EXPECT_EQ(p.dtype, DType::kBF16) << p.name();
  EXPECT_EQ(p.bm, S::BM) << p.name();
  EXPECT_EQ(p.bn, S::BN) << p.name();
  EXPECT_EQ(p.bk, S::BK) << p.name();
  EXPECT_EQ(p.warps_m, S::kWarpsM) << p.name();
  EXPECT_EQ(p.warps_n, S::kWarpsN) << p.name();
  EXPECT_EQ(p.stages, S::kStages) << p.name();
  EXPECT_EQ(p.min_blocks, S::kMinBlocks) << p.name();
  return true;
#else
  ADD_FAILURE() << p.name() << ": kWideCout192 on a build without the 192-wide tile";
  return false;
#endif
}

// Every seed shape, both operand types: the 192 tile exactly for the bf16 implicit-GEMM vector
// rows of the causal and downsample convs with Cout 192 or 384.
TEST(WideCout192, SeedShapes) {
  int on192 = 0;
  for (const VaeShape& s : kVaeShapes) {
    for (DType dt : {DType::kBF16, DType::kFP8E4M3}) {
      const KernelPlan p = plan_of(s.desc(dt));
      const bool expected = kHasWideCout192 && dt == DType::kBF16 &&
                            p.choice.family == KernelChoice::Family::kImplicitGemm &&
                            p.choice.vector &&
                            (s.kind == ConvKind::kCausal3x3x3 || s.kind == ConvKind::kDownsample) &&
                            (s.cout == 192 || s.cout == 384);
      EXPECT_EQ(on_wide_cout192(p), expected) << s.id << ": " << p.name();
      on192 += expected;
    }
  }
  // enc_e1_res2, enc_e2_res1, enc_e2_res2, enc_e3_mid, dec_bottleneck_1328 and the two
  // downsample layers of 192 and 384 channels (the other causal layers of Cout >= 192 are the
  // halo kernel's).
  EXPECT_EQ(on192, kHasWideCout192 ? 7 : 0);
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
  // The upsample phases keep the wide tile, 192 and 384 channels alike.
  for (int64_t cout : {192, 384}) {
    const KernelPlan up = plan_of(D::upsample2x(1, 1, 128, 128, 384, cout));
    EXPECT_TRUE(up.choice.upsample_phases) << up.name();
    EXPECT_FALSE(on_wide_cout192(up));
  }
  // The element-wise gather (Cin not a multiple of 8) and fp8 keep theirs.
  EXPECT_FALSE(on_wide_cout192(plan_of(D::downsample(1, 1, 64, 64, 12, 384))));
  EXPECT_FALSE(on_wide_cout192(plan_of(D::causal3x3x3(1, 1, 256, 256, 384, 384, DType::kFP8E4M3))));
}

}  // namespace
}  // namespace vaeconv::test
