// test_conv_bf16_gpu.cpp — the BF16 kernels against the CPU reference (label gpu; the harness
// and its checks: conv_case.hpp).
#include <gtest/gtest.h>

#include "conv_case.hpp"

namespace vaeconv::test {
namespace {

// --- All 18 seed shapes ------------------------------------------------------------------------
class VaeShapeBf16 : public ::testing::TestWithParam<VaeShape> {};

TEST_P(VaeShapeBf16, MatchesReference) {
  const VaeShape& s = GetParam();
  CaseOptions o;
  o.seed = 1000u + uint32_t(s.cin * 7 + s.cout * 13 + s.h);
  check_case<DType::kBF16>(s.desc(), o, Aim{});
}

INSTANTIATE_TEST_SUITE_P(Seed, VaeShapeBf16, ::testing::ValuesIn(kVaeShapes), shape_name);

// --- Extra cases: batch, odd sizes, bias/residual, strides, video -------------------------------
std::vector<ConvCase> extra_cases() {
  CaseOptions plain;  // bias on, no residual
  CaseOptions nobias;
  nobias.bias = false;
  CaseOptions res;
  res.residual = true;
  CaseOptions inplace;
  inplace.residual_in_place = true;
  // The kernel each case aims at (kernel_aim.hpp: on this build); `none`: no particular one.
  const Aim none{}, gemm = aim_implicit_gemm(true), elementwise = aim_elementwise(),
            phases = aim_upsample_phases(true), phases_elementwise = aim_upsample_phases(false),
            tap_reduce = aim_tap_reduce(), halo = aim_halo(), tap_row = aim_tap_row();
  std::vector<ConvCase> v = {
      {"causal_n2_odd", ConvDesc::causal3x3x3(2, 1, 77, 131, 64, 96), plain, none},
      {"causal_1x1", ConvDesc::causal3x3x3(1, 1, 1, 1, 32, 64), plain, none},
      {"causal_nobias", ConvDesc::causal3x3x3(1, 1, 33, 17, 96, 96), nobias, none},
      {"causal_residual", ConvDesc::causal3x3x3(1, 1, 40, 24, 96, 192), res, none},
      {"causal_residual_inplace", ConvDesc::causal3x3x3(1, 1, 19, 45, 192, 192), inplace, none},
      {"causal_video_t4", ConvDesc::causal3x3x3(1, 4, 23, 29, 32, 48), res, gemm},
      {"causal_video_n2_t3", ConvDesc::causal3x3x3(2, 3, 9, 10, 16, 40), plain, gemm},
      {"causal_cin3_odd", ConvDesc::causal3x3x3(2, 1, 37, 53, 3, 96), plain, tap_row},
      {"causal_cin3_video", ConvDesc::causal3x3x3(1, 3, 11, 7, 3, 32), plain, elementwise},
      // T = 1, Cin = 3 of the wide tile: the tap-row kernel where it is built (sm_90a): partial
      // 32 x 8 patches, two Cout tiles with a residual, padded strides in place, a 1 x 1 frame.
      {"taprow_cout192_res", ConvDesc::causal3x3x3(1, 1, 45, 19, 3, 192), res, tap_row},
      {"taprow_strided_inplace",
       with_padded_strides(ConvDesc::causal3x3x3(2, 1, 9, 70, 3, 96), 5, 8), inplace, tap_row},
      {"taprow_1x1_nobias", ConvDesc::causal3x3x3(1, 1, 1, 1, 3, 96), nobias, tap_row},
      // Partial Cout tiles (B rows past Cout zeroed; Cout % 8 != 0: the element-wise store).
      {"taprow_cout40_res", ConvDesc::causal3x3x3(1, 1, 37, 29, 3, 40), res, tap_row},
      {"taprow_n2_cout99_res", ConvDesc::causal3x3x3(2, 1, 19, 45, 3, 99), res, tap_row},
      {"causal_cout3_odd", ConvDesc::causal3x3x3(1, 1, 61, 35, 96, 3), res, none},
      // Cout <= 3: the tap-reduce kernel (whole and partial 14 x 14 patches, video, views).
      {"tapreduce_video_t3", ConvDesc::causal3x3x3(1, 3, 29, 33, 32, 3), res, tap_reduce},
      {"tapreduce_cout1_n2", ConvDesc::causal3x3x3(2, 1, 15, 45, 16, 1), plain, tap_reduce},
      {"tapreduce_cout2_nobias", ConvDesc::causal3x3x3(1, 1, 1, 1, 64, 2), nobias, tap_reduce},
      {"tapreduce_inplace_whole_patches", ConvDesc::causal3x3x3(1, 1, 28, 14, 96, 3), inplace, tap_reduce},
      {"tapreduce_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 2, 17, 30, 64, 3), 8, 5), res, tap_reduce},
      // More patches than resident blocks (the name is from the persistent form, since removed:
      // the grid now holds every patch), K of five tiles (copies past the next patch's buffers,
      // into the LDS the partials use), a batch.
      {"tapreduce_persistent_video_n2", ConvDesc::causal3x3x3(2, 3, 130, 200, 48, 3), res, tap_reduce},
      {"causal_cin16_cout32", ConvDesc::causal3x3x3(1, 1, 30, 30, 16, 32), plain, none},
      // T = 1 causal convs of the halo kernel, which takes Cin <= 96 (tile_table.hpp): partial
      // 32 x 8 patches, K steps crossing taps inside a K tile, a residual in place, padded
      // strides, several Cout tiles, a batch of two.
      {"halo_cin48_partial", ConvDesc::causal3x3x3(1, 1, 37, 29, 48, 96), plain, halo},
      {"halo_inplace", ConvDesc::causal3x3x3(1, 1, 19, 45, 96, 96), inplace, halo},
      {"halo_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 21, 18, 96, 96), 16, 8), plain, halo},
      {"halo_cout288_n2", ConvDesc::causal3x3x3(2, 1, 17, 23, 32, 288), res, halo},
      {"halo_cin16_cout40", ConvDesc::causal3x3x3(1, 1, 9, 70, 16, 40), nobias, halo},
      {"halo_cin16_n2_cout192_res", ConvDesc::causal3x3x3(2, 1, 35, 19, 16, 192), res, halo},
      // K = 72: two K tiles of the wide wgmma tile (BK 64), all its pipeline issues up front.
      {"causal_cin8_two_k_tiles", ConvDesc::causal3x3x3(1, 1, 23, 19, 8, 96), res, gemm},
      {"causal_cin5_cout7", ConvDesc::causal3x3x3(1, 1, 13, 9, 5, 7), res, elementwise},
      // More block tiles of the wide tile (414, 276, 296) than an H200 holds at once (264): the
      // persistent grid's blocks compute several tiles each, crossing frames and batch items.
      {"causal_video_persistent", ConvDesc::causal3x3x3(2, 3, 130, 67, 64, 96), res, gemm},
      {"down_persistent", ConvDesc::downsample(2, 2, 260, 134, 96, 96), plain, gemm},
      {"up_persistent", ConvDesc::upsample2x(2, 2, 50, 47, 64, 96), inplace, phases},
      // Element-wise gather on the wide (Cout > 32) element-wise tile, every conv kind.
      {"down_cin5_wide", ConvDesc::downsample(1, 1, 19, 22, 5, 96), plain, elementwise},
      {"up_cin3_wide_video", ConvDesc::upsample2x(1, 2, 9, 7, 3, 64), res, phases_elementwise},
      {"down_n2_odd", ConvDesc::downsample(2, 1, 77, 131, 96, 96), plain, gemm},
      {"down_2x3", ConvDesc::downsample(1, 1, 2, 3, 64, 64), plain, gemm},
      {"down_even_residual", ConvDesc::downsample(1, 1, 64, 38, 192, 192), res, gemm},
      {"down_video_t2", ConvDesc::downsample(1, 2, 21, 16, 32, 32), nobias, gemm},
      {"up_n2_odd", ConvDesc::upsample2x(2, 1, 39, 65, 96, 48), plain, phases},
      {"up_1x1", ConvDesc::upsample2x(1, 1, 1, 1, 64, 32), plain, phases},
      {"up_residual", ConvDesc::upsample2x(1, 1, 20, 12, 384, 192), res, phases},
      {"up_video_t2", ConvDesc::upsample2x(1, 2, 7, 9, 48, 96), inplace, phases},
      {"causal_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 21, 18, 64, 64), 16, 8), res, none},
      {"down_strided", with_padded_strides(ConvDesc::downsample(1, 1, 21, 18, 32, 32), 8, 24), plain, gemm},
      {"up_strided", with_padded_strides(ConvDesc::upsample2x(1, 1, 11, 6, 32, 64), 8, 8), plain, phases},
      // More than 65535 frames (N * T_out, the old grid-y limit; conv_args.hpp): every kernel
      // decodes its tile's frame from the 1D grid. Tiny frames keep the bytes small (a few MB);
      // each case lands on another kernel: the implicit GEMM of a video (tiny tile, 3 time
      // taps), the tap-reduce kernel, the halo and tap-row kernels (sm_90a; the implicit GEMM
      // elsewhere), the downsample and the upsample's four phases (narrow tile), with residuals.
      {"frames_past_65535_causal_video", ConvDesc::causal3x3x3(2, 32800, 2, 2, 8, 8), res, gemm},
      {"frames_past_65535_tapreduce", ConvDesc::causal3x3x3(1, 65600, 2, 2, 8, 3), res, tap_reduce},
      {"frames_past_65535_halo", ConvDesc::causal3x3x3(65600, 1, 1, 2, 16, 40), res, halo},
      {"frames_past_65535_taprow", ConvDesc::causal3x3x3(65600, 1, 1, 2, 3, 40), plain, tap_row},
      {"frames_past_65535_down", ConvDesc::downsample(1, 65600, 2, 2, 8, 40), plain, gemm},
      {"frames_past_65535_up", ConvDesc::upsample2x(2, 32800, 1, 1, 8, 24), inplace, phases},
  };
  return v;
}

class ExtraBf16 : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ExtraBf16, MatchesReference) {
  check_case<DType::kBF16>(GetParam().desc, GetParam().opt, GetParam().aim);
}

INSTANTIATE_TEST_SUITE_P(Cases, ExtraBf16, ::testing::ValuesIn(extra_cases()), case_name);

}  // namespace
}  // namespace vaeconv::test
