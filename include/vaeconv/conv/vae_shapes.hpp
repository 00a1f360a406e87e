// vaeconv/conv/vae_shapes.hpp — the 18 Qwen-Image VAE conv shapes of the seed, in one table.
//
// Source: the seed specification (forward-hook traces of AutoencoderKLQwenImage, T2I, T = 1).
// Tests and the benchmark both iterate this table; tests/host/test_vae_shapes.cpp checks its sums
// against the seed (52 causal calls at 1024², 58 calls per 1024² encode+decode, 28 hot 1328² calls).
//
// h and w are the sizes of the tensor the kernel reads: for an upsample conv that is the source,
// before the x2 (the seed lists the already-doubled size; the conv's output has that size).
#pragma once
#include <array>

#include "vaeconv/conv/conv_desc.hpp"

namespace vaeconv {

struct VaeShape {
  const char* id;
  ConvKind kind;
  int cin, cout;
  int h, w;          // input as stored (source size for upsample)
  int calls;         // calls in one T2I encode+decode at `resolution`
  int resolution;    // 1024 or 1328: which image size the call count belongs to

  ConvDesc desc(DType dt = DType::kBF16, int64_t n = 1, int64_t t = 1) const {
    return ConvDesc::vae_conv(kind, n, t, h, w, cin, cout, dt);
  }
};

inline constexpr std::array<VaeShape, 18> kVaeShapes = {{
    // CausalConv3d 3x3x3 (T = 1: the 2D 3x3 conv on weight slice kt = 2)
    {"enc_conv_in", ConvKind::kCausal3x3x3, 3, 96, 1024, 1024, 1, 1024},
    {"enc_e0_res__dec_d3_res", ConvKind::kCausal3x3x3, 96, 96, 1024, 1024, 10, 1024},
    {"enc_e1_res1", ConvKind::kCausal3x3x3, 96, 192, 512, 512, 1, 1024},
    {"enc_e1_res2__dec_d2_res", ConvKind::kCausal3x3x3, 192, 192, 512, 512, 9, 1024},
    {"enc_e2_res1__dec_d1_res1", ConvKind::kCausal3x3x3, 192, 384, 256, 256, 2, 1024},
    {"enc_e2_res2__dec_d1_res", ConvKind::kCausal3x3x3, 384, 384, 256, 256, 8, 1024},
    {"enc_e3_mid__dec_mid_d0", ConvKind::kCausal3x3x3, 384, 384, 128, 128, 18, 1024},
    {"enc_conv_out", ConvKind::kCausal3x3x3, 384, 32, 128, 128, 1, 1024},
    {"dec_conv_in", ConvKind::kCausal3x3x3, 16, 384, 128, 128, 1, 1024},
    {"dec_conv_out", ConvKind::kCausal3x3x3, 96, 3, 1024, 1024, 1, 1024},
    {"dec_bottleneck_1328", ConvKind::kCausal3x3x3, 384, 384, 166, 166, 18, 1328},
    {"dec_d3_res_hot_1328", ConvKind::kCausal3x3x3, 96, 96, 1328, 1328, 10, 1328},
    // Downsample: ZeroPad2d((0,1,0,1)) + 3x3 stride 2, folded into the loader
    {"enc_e0_downsample", ConvKind::kDownsample, 96, 96, 1024, 1024, 1, 1024},
    {"enc_e1_downsample_spatial", ConvKind::kDownsample, 192, 192, 512, 512, 1, 1024},
    {"enc_e2_downsample_spatial", ConvKind::kDownsample, 384, 384, 256, 256, 1, 1024},
    // Upsample: nearest-exact x2 + 3x3 stride 1 pad 1, folded into the loader
    {"dec_d0_upsample", ConvKind::kUpsample, 384, 192, 128, 128, 1, 1024},
    {"dec_d1_upsample", ConvKind::kUpsample, 384, 192, 256, 256, 1, 1024},
    {"dec_d2_upsample", ConvKind::kUpsample, 192, 96, 512, 512, 1, 1024},
}};

}  // namespace vaeconv
