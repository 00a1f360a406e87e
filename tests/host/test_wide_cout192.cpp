// test_wide_cout192.cpp — the rule of the 192-wide bf16 tile (kernel/dispatch.hpp's
// takes_wide_cout192), host arithmetic. Which plans the sm_90a tables give (which_kernel, GPU
// compiler, no GPU needed): tests/gpu/test_wide_cout192_gpu.cpp.
#include <gtest/gtest.h>

#include <string>

#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/kernel/dispatch.hpp"

namespace vaeconv {
namespace {

using kernel::takes_wide_cout192;

TEST(WideCout192Rule, ByCoutAndPhases) {
  EXPECT_TRUE(takes_wide_cout192(192, false));
  EXPECT_TRUE(takes_wide_cout192(384, false));
  EXPECT_TRUE(takes_wide_cout192(768, false));
  EXPECT_FALSE(takes_wide_cout192(96, false));   // half the tile would be padding
  EXPECT_FALSE(takes_wide_cout192(288, false));
  EXPECT_FALSE(takes_wide_cout192(480, false));
  EXPECT_FALSE(takes_wide_cout192(192, true));   // the upsample phases keep the wide tile
  EXPECT_FALSE(takes_wide_cout192(384, true));
}

// On the seed shapes of the wide tile: the 192- and 384-channel layers that are not upsample
// convs, and no other.
TEST(WideCout192Rule, SeedShapes) {
  int taken = 0;
  for (const VaeShape& s : kVaeShapes) {
    if (kernel::choose_tile(s.cout) != kernel::TileId::kWide) continue;
    const bool upsample = s.kind == ConvKind::kUpsample;
    const bool expected = !upsample && (s.cout == 192 || s.cout == 384);
    EXPECT_EQ(takes_wide_cout192(s.desc().out_channels_stored(), upsample), expected) << s.id;
    taken += expected;
  }
  // enc_e1_res1, enc_e1_res2, enc_e2_res1, enc_e2_res2, enc_e3_mid, dec_conv_in,
  // dec_bottleneck_1328 and the 192/384 downsample layers (the halo kernel takes some of them
  // first on sm_90a: the GPU-compiled test counts the plans).
  EXPECT_EQ(taken, 9) << "seed shapes under the rule";
}

}  // namespace
}  // namespace vaeconv
