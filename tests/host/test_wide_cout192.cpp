// test_wide_cout192.cpp — the rule of the 192-wide bf16 tile (kernel/dispatch.hpp's
// takes_wide_cout192), host arithmetic: the causal conv (cached or not) and the downsample conv
// whose Cout is a multiple of 192, bf16 and e4m3, and the e4m3 upsample phases: the kernels a GPU
// has checked and timed on that tile; the temporal convs and the bf16 upsample phases keep the
// 96-wide tile. Which plans the sm_90a tables give (which_kernel, GPU compiler, no GPU needed):
// tests/gpu/test_wide_cout192_gpu.cpp.
#include <gtest/gtest.h>

#include <string>

#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/kernel/dispatch.hpp"

namespace vaeconv {
namespace {

using kernel::takes_wide_cout192;
using D = ConvDesc;

TEST(WideCout192Rule, CausalByCout) {
  EXPECT_TRUE(takes_wide_cout192(D::causal3x3x3(1, 1, 256, 256, 384, 384), false));
  EXPECT_TRUE(takes_wide_cout192(D::causal3x3x3(1, 1, 512, 512, 192, 192), false));
  EXPECT_TRUE(takes_wide_cout192(D::causal3x3x3(1, 1, 256, 256, 192, 384), false));
  EXPECT_TRUE(takes_wide_cout192(D::causal3x3x3(1, 1, 64, 64, 384, 768), false));
  // T > 1 without a cache: the same CausalGeometry kernel with more time taps.
  EXPECT_TRUE(takes_wide_cout192(D::causal3x3x3(1, 4, 64, 64, 384, 384), false));
  EXPECT_FALSE(takes_wide_cout192(D::causal3x3x3(1, 1, 256, 256, 96, 96), false));  // half padding
  EXPECT_FALSE(takes_wide_cout192(D::causal3x3x3(1, 1, 64, 64, 384, 288), false));
  EXPECT_FALSE(takes_wide_cout192(D::causal3x3x3(1, 1, 64, 64, 384, 480), false));
}

// The cached causal conv (one or two frames of the previous chunk) and the downsample conv take
// it by Cout as the causal conv does.
TEST(WideCout192Rule, CachedAndDownsampleByCout) {
  for (int64_t cout : {192, 384, 768}) {
    for (int cache : {1, 2})
      EXPECT_TRUE(
          takes_wide_cout192(D::causal3x3x3_cached(1, 4, 48, 52, cout, cout, cache), false))
          << "cached causal " << cout << " cache " << cache;
    EXPECT_TRUE(takes_wide_cout192(D::downsample(1, 1, 256, 256, cout, cout), false))
        << "downsample " << cout;
  }
  EXPECT_TRUE(takes_wide_cout192(D::causal3x3x3_cached(1, 3, 9, 5, 192, 384, 1), false));
  for (int64_t cout : {96, 288, 480}) {
    EXPECT_FALSE(takes_wide_cout192(D::causal3x3x3_cached(1, 4, 48, 52, 384, cout, 2), false))
        << cout;
    EXPECT_FALSE(takes_wide_cout192(D::downsample(1, 1, 256, 256, 384, cout), false)) << cout;
  }
}

// The temporal convs (checked on the tile, not timed) and the upsample phases (timed neutral)
// keep the 96-wide one, 192 and 384 channels alike.
TEST(WideCout192Rule, TemporalAndUpsampleKeepTheWideTile) {
  for (int64_t cout : {192, 384, 768}) {
    EXPECT_FALSE(takes_wide_cout192(D::temporal3x1x1(1, 4, 32, 32, cout, cout, 2, 1), false))
        << "temporal stride 2 " << cout;
    EXPECT_FALSE(
        takes_wide_cout192(D::temporal3x1x1(1, 4, 32, 32, cout, 2 * cout, 1, 2), false))
        << "temporal stride 1 in halves of " << cout;
    EXPECT_FALSE(takes_wide_cout192(D::upsample2x(1, 1, 128, 128, 384, cout), true))
        << "bf16 upsample phases " << cout;
  }
}

// e4m3: the same geometries by Cout, and the upsample phases too (bf16 keeps the 96-wide tile
// there); an upsample conv not in phases never takes it, nor does a temporal conv.
TEST(WideCout192Rule, Fp8) {
  constexpr DType f8 = DType::kFP8E4M3;
  for (int64_t cout : {192, 384}) {
    EXPECT_TRUE(takes_wide_cout192(D::causal3x3x3(1, 1, 64, 64, 384, cout, f8), false)) << cout;
    EXPECT_TRUE(takes_wide_cout192(D::causal3x3x3_cached(1, 4, 48, 52, cout, cout, 2, f8), false))
        << cout;
    EXPECT_TRUE(takes_wide_cout192(D::downsample(1, 1, 64, 64, cout, cout, f8), false)) << cout;
    EXPECT_TRUE(takes_wide_cout192(D::upsample2x(1, 1, 64, 64, 384, cout, f8), true)) << cout;
    EXPECT_FALSE(takes_wide_cout192(D::upsample2x(1, 1, 64, 64, 384, cout, f8), false)) << cout;
    EXPECT_FALSE(takes_wide_cout192(D::temporal3x1x1(1, 4, 32, 32, cout, cout, 2, 1, f8), false))
        << cout;
  }
  EXPECT_FALSE(takes_wide_cout192(D::upsample2x(1, 1, 64, 64, 192, 96, f8), true));
  EXPECT_FALSE(takes_wide_cout192(D::causal3x3x3(1, 1, 64, 64, 96, 96, f8), false));
}

// On the seed shapes of the wide tile: the 192- and 384-channel causal and downsample layers.
TEST(WideCout192Rule, SeedShapes) {
  int taken = 0;
  for (const VaeShape& s : kVaeShapes) {
    if (kernel::choose_tile(s.cout) != kernel::TileId::kWide) continue;
    const bool expected =
        (s.kind == ConvKind::kCausal3x3x3 || s.kind == ConvKind::kDownsample) &&
        (s.cout == 192 || s.cout == 384);
    EXPECT_EQ(takes_wide_cout192(s.desc(), s.kind == ConvKind::kUpsample), expected) << s.id;
    taken += expected;
  }
  // enc_e1_res1, enc_e1_res2, enc_e2_res1, enc_e2_res2, enc_e3_mid, dec_conv_in and
  // dec_bottleneck_1328 (the halo kernel takes some of them first on sm_90a: the GPU-compiled
  // test counts the plans), enc_e1_downsample_spatial and enc_e2_downsample_spatial.
  EXPECT_EQ(taken, 9) << "seed shapes under the rule";
}

}  // namespace
}  // namespace vaeconv
