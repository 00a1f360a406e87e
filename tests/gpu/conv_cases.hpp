// conv_cases.hpp — the GPU suite's conv cases, one table for both operand types
// (test_conv_bf16_gpu.cpp, test_conv_fp8_gpu.cpp; the harness: conv_case.hpp).
//
// A row names a conv, the kernel it aims at (resolved per operand type and build: kernel_aim.hpp)
// and, per operand type, the options it runs with, or kSkip. The options are the same kinds for
// both types; the fp8 cases run with seed 7, the bf16 ones with CaseOptions' default.
#pragma once
#include <vector>

#include "conv_case.hpp"

namespace vaeconv::test {

namespace cases {
// What a case aims at (kernel_aim.hpp's Aim on this build, for the case's operand type).
enum AimAt { kAny, kGemm, kElementwise, kPhases, kPhasesElementwise, kTapReduce, kHalo, kTapRow };
// The options of a case for one operand type; kSkip: not run for that type.
enum Opt { kSkip, kPlain, kNoBias, kRes, kInPlace, kOut8 };
}  // namespace cases
using cases::AimAt;
using cases::Opt;

struct CaseRow {
  const char* name;
  ConvDesc desc;
  AimAt aim;
  Opt bf16, fp8;
};

inline Aim aim_for(AimAt at, DType t) {
  switch (at) {
    case cases::kAny: return Aim{};
    case cases::kGemm: return aim_implicit_gemm(true);
    case cases::kElementwise: return aim_elementwise();
    case cases::kPhases: return aim_upsample_phases(true);
    case cases::kPhasesElementwise: return aim_upsample_phases(false);
    case cases::kTapReduce: return aim_tap_reduce();
    case cases::kHalo: return aim_halo(t);
    case cases::kTapRow: return aim_tap_row();
  }
  return Aim{};
}

inline CaseOptions options_for(Opt o, DType t) {
  CaseOptions c;  // bias on, no residual
  if (t == DType::kFP8E4M3) c.seed = 7;
  c.bias = o != cases::kNoBias;
  c.residual = o == cases::kRes || o == cases::kOut8;
  c.residual_in_place = o == cases::kInPlace;
  c.fp8_out = o == cases::kOut8;  // with a residual
  return c;
}

inline const std::vector<CaseRow>& case_rows() {
  using namespace cases;
  // name, conv, kernel aimed at, bf16 options, fp8 options
  static const std::vector<CaseRow> rows = {
      {"causal_n2_odd", ConvDesc::causal3x3x3(2, 1, 77, 131, 64, 96), kAny, kPlain, kPlain},
      {"causal_1x1", ConvDesc::causal3x3x3(1, 1, 1, 1, 32, 64), kAny, kPlain, kNoBias},
      {"causal_nobias", ConvDesc::causal3x3x3(1, 1, 33, 17, 96, 96), kAny, kNoBias, kSkip},
      {"causal_residual", ConvDesc::causal3x3x3(1, 1, 40, 24, 96, 192), kAny, kRes, kSkip},
      {"causal_residual_inplace", ConvDesc::causal3x3x3(1, 1, 19, 45, 192, 192), kAny, kInPlace, kSkip},
      {"causal_video_t4", ConvDesc::causal3x3x3(1, 4, 23, 29, 32, 48), kGemm, kRes, kSkip},
      {"causal_video_n2_t3", ConvDesc::causal3x3x3(2, 3, 9, 10, 16, 40), kGemm, kPlain, kSkip},
      {"causal_cin3_odd", ConvDesc::causal3x3x3(2, 1, 37, 53, 3, 96), kTapRow, kPlain, kSkip},
      {"causal_cin3_video", ConvDesc::causal3x3x3(1, 3, 11, 7, 3, 32), kElementwise, kPlain, kSkip},
      // T = 1, Cin = 3 of the wide tile: the tap-row kernel where it is built (sm_90a): partial
      // 32 x 8 patches, two Cout tiles with a residual, padded strides in place, a 1 x 1 frame.
      {"taprow_cout192_res", ConvDesc::causal3x3x3(1, 1, 45, 19, 3, 192), kTapRow, kRes, kSkip},
      {"taprow_strided_inplace", with_padded_strides(ConvDesc::causal3x3x3(2, 1, 9, 70, 3, 96), 5, 8), kTapRow, kInPlace, kSkip},
      {"taprow_1x1_nobias", ConvDesc::causal3x3x3(1, 1, 1, 1, 3, 96), kTapRow, kNoBias, kSkip},
      // Partial Cout tiles (B rows past Cout zeroed; Cout % 8 != 0: the element-wise store).
      {"taprow_cout40_res", ConvDesc::causal3x3x3(1, 1, 37, 29, 3, 40), kTapRow, kRes, kRes},
      {"taprow_n2_cout99_res", ConvDesc::causal3x3x3(2, 1, 19, 45, 3, 99), kTapRow, kRes, kSkip},
      {"causal_cout3_odd", ConvDesc::causal3x3x3(1, 1, 61, 35, 96, 3), kAny, kRes, kSkip},
      // Cout <= 3: the tap-reduce kernel (whole and partial 14 x 14 patches, video, views).
      {"tapreduce_video_t3", ConvDesc::causal3x3x3(1, 3, 29, 33, 32, 3), kTapReduce, kRes, kSkip},
      {"tapreduce_cout1_n2", ConvDesc::causal3x3x3(2, 1, 15, 45, 16, 1), kTapReduce, kPlain, kSkip},
      {"tapreduce_cout2_nobias", ConvDesc::causal3x3x3(1, 1, 1, 1, 64, 2), kTapReduce, kNoBias, kSkip},
      {"tapreduce_inplace_whole_patches", ConvDesc::causal3x3x3(1, 1, 28, 14, 96, 3), kTapReduce, kInPlace, kSkip},
      {"tapreduce_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 2, 17, 30, 64, 3), 8, 5), kTapReduce, kRes, kSkip},
      // More patches than resident blocks (the name is from the persistent form, since removed:
      // the grid now holds every patch), K of five tiles (copies past the next patch's buffers,
      // into the LDS the partials use), a batch.
      {"tapreduce_persistent_video_n2", ConvDesc::causal3x3x3(2, 3, 130, 200, 48, 3), kTapReduce, kRes, kSkip},
      {"causal_cin16_cout32", ConvDesc::causal3x3x3(1, 1, 30, 30, 16, 32), kAny, kPlain, kSkip},
      // T = 1 causal convs of the halo kernel, which takes Cin <= 96 (tile_table.hpp): partial
      // 32 x 8 patches, K steps crossing taps inside a K tile, a residual in place, padded
      // strides, several Cout tiles, a batch of two.
      {"halo_cin48_partial", ConvDesc::causal3x3x3(1, 1, 37, 29, 48, 96), kHalo, kPlain, kSkip},
      {"halo_inplace", ConvDesc::causal3x3x3(1, 1, 19, 45, 96, 96), kHalo, kInPlace, kSkip},
      {"halo_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 21, 18, 96, 96), 16, 8), kHalo, kPlain, kSkip},
      {"halo_cout288_n2", ConvDesc::causal3x3x3(2, 1, 17, 23, 32, 288), kHalo, kRes, kSkip},
      {"halo_cin16_cout40", ConvDesc::causal3x3x3(1, 1, 9, 70, 16, 40), kHalo, kNoBias, kSkip},
      {"halo_cin16_n2_cout192_res", ConvDesc::causal3x3x3(2, 1, 35, 19, 16, 192), kHalo, kRes, kSkip},
      // K = 72: two K tiles of the wide wgmma tile (BK 64), all its pipeline issues up front.
      {"causal_cin8_two_k_tiles", ConvDesc::causal3x3x3(1, 1, 23, 19, 8, 96), kGemm, kRes, kSkip},
      {"causal_cin5_cout7", ConvDesc::causal3x3x3(1, 1, 13, 9, 5, 7), kElementwise, kRes, kSkip},
      // More block tiles of the wide tile (414, 276, 296) than an H200 holds at once (264): the
      // persistent grid's blocks compute several tiles each, crossing frames and batch items.
      {"causal_video_persistent", ConvDesc::causal3x3x3(2, 3, 130, 67, 64, 96), kGemm, kRes, kSkip},
      {"down_persistent", ConvDesc::downsample(2, 2, 260, 134, 96, 96), kGemm, kPlain, kSkip},
      {"up_persistent", ConvDesc::upsample2x(2, 2, 50, 47, 64, 96), kPhases, kInPlace, kSkip},
      // Element-wise gather on the wide (Cout > 32) element-wise tile, every conv kind.
      {"down_cin5_wide", ConvDesc::downsample(1, 1, 19, 22, 5, 96), kElementwise, kPlain, kSkip},
      {"up_cin3_wide_video", ConvDesc::upsample2x(1, 2, 9, 7, 3, 64), kPhasesElementwise, kRes, kSkip},
      {"down_n2_odd", ConvDesc::downsample(2, 1, 77, 131, 96, 96), kGemm, kPlain, kRes},
      {"down_2x3", ConvDesc::downsample(1, 1, 2, 3, 64, 64), kGemm, kPlain, kSkip},
      {"down_even_residual", ConvDesc::downsample(1, 1, 64, 38, 192, 192), kGemm, kRes, kSkip},
      {"down_video_t2", ConvDesc::downsample(1, 2, 21, 16, 32, 32), kGemm, kNoBias, kSkip},
      {"up_n2_odd", ConvDesc::upsample2x(2, 1, 39, 65, 96, 48), kPhases, kPlain, kSkip},
      {"up_1x1", ConvDesc::upsample2x(1, 1, 1, 1, 64, 32), kPhases, kPlain, kSkip},
      {"up_residual", ConvDesc::upsample2x(1, 1, 20, 12, 384, 192), kPhases, kRes, kSkip},
      {"up_video_t2", ConvDesc::upsample2x(1, 2, 7, 9, 48, 96), kPhases, kInPlace, kSkip},
      {"causal_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 21, 18, 64, 64), 16, 8), kAny, kRes, kSkip},
      {"down_strided", with_padded_strides(ConvDesc::downsample(1, 1, 21, 18, 32, 32), 8, 24), kGemm, kPlain, kSkip},
      {"up_strided", with_padded_strides(ConvDesc::upsample2x(1, 1, 11, 6, 32, 64), 8, 8), kPhases, kPlain, kSkip},
      // More than 65535 frames (N * T_out, the old grid-y limit; conv_args.hpp): every kernel
      // decodes its tile's frame from the 1D grid. Tiny frames keep the bytes small (a few MB);
      // each case lands on another kernel: the implicit GEMM of a video (tiny tile, 3 time
      // taps), the tap-reduce kernel, the halo and tap-row kernels (sm_90a; the implicit GEMM
      // elsewhere), the downsample and the upsample's four phases (narrow tile), with residuals.
      {"frames_past_65535_causal_video", ConvDesc::causal3x3x3(2, 32800, 2, 2, 8, 8), kGemm, kRes, kSkip},
      {"frames_past_65535_tapreduce", ConvDesc::causal3x3x3(1, 65600, 2, 2, 8, 3), kTapReduce, kRes, kSkip},
      {"frames_past_65535_halo", ConvDesc::causal3x3x3(65600, 1, 1, 2, 16, 40), kHalo, kRes, kSkip},
      {"frames_past_65535_taprow", ConvDesc::causal3x3x3(65600, 1, 1, 2, 3, 40), kTapRow, kPlain, kSkip},
      {"frames_past_65535_down", ConvDesc::downsample(1, 65600, 2, 2, 8, 40), kGemm, kPlain, kSkip},
      {"frames_past_65535_up", ConvDesc::upsample2x(2, 32800, 1, 1, 8, 24), kPhases, kInPlace, kSkip},
      // FP8 only.
      {"causal_video_t3", ConvDesc::causal3x3x3(1, 3, 13, 17, 32, 48), kGemm, kSkip, kRes},
      {"causal_cin3", ConvDesc::causal3x3x3(1, 1, 37, 53, 3, 96), kTapRow, kSkip, kPlain},
      // The e4m3 tap-row kernel where it is built (sm_90a): two images, two Cout tiles and a
      // residual; an fp8 output.
      {"taprow_n2_cout192_res", ConvDesc::causal3x3x3(2, 1, 45, 19, 3, 192), kTapRow, kSkip, kRes},
      {"taprow_fp8_out", ConvDesc::causal3x3x3(1, 1, 33, 70, 3, 96), kTapRow, kSkip, kOut8},
      {"taprow_n2_cout99_plain", ConvDesc::causal3x3x3(2, 1, 19, 45, 3, 99), kTapRow, kSkip, kPlain},
      {"causal_cin24_scalar", ConvDesc::causal3x3x3(1, 1, 9, 11, 24, 32), kElementwise, kSkip, kPlain},
      {"causal_cin16_cout3", ConvDesc::causal3x3x3(1, 1, 30, 31, 16, 3), kAny, kSkip, kRes},
      {"tapreduce_video_t2", ConvDesc::causal3x3x3(1, 2, 19, 23, 32, 3), kTapReduce, kSkip, kRes},
      {"tapreduce_fp8_out", ConvDesc::causal3x3x3(2, 1, 20, 30, 48, 3), kTapReduce, kSkip, kOut8},
      {"tapreduce_persistent_video_n2", ConvDesc::causal3x3x3(2, 2, 130, 200, 48, 3), kTapReduce, kSkip, kRes},
      // Views into wider tensors (padded pixels in and out): the tap-row kernel's element loads
      // at an input pixel stride of 8 and 4 bytes, the e4m3 halo kernel, the tap-reduce kernel,
      // the implicit GEMM of a video with 1-byte outputs.
      {"taprow_strided_res", with_padded_strides(ConvDesc::causal3x3x3(2, 1, 9, 70, 3, 96), 5, 8), kTapRow, kSkip, kRes},
      {"taprow_strided_fp8_out", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 33, 40, 3, 96), 1, 16), kTapRow, kSkip, kOut8},
      {"halo_strided_res", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 37, 29, 96, 96), 16, 8), kHalo, kSkip, kRes},
      {"tapreduce_strided_res", with_padded_strides(ConvDesc::causal3x3x3(1, 2, 17, 30, 64, 3), 16, 5), kTapReduce, kSkip, kRes},
      {"causal_video_strided_fp8_out", with_padded_strides(ConvDesc::causal3x3x3(1, 3, 13, 17, 32, 64), 16, 8), kGemm, kSkip, kOut8},
      {"causal_fp8_out", ConvDesc::causal3x3x3(1, 1, 40, 24, 96, 96), kAny, kSkip, kOut8},
      {"down_odd_fp8_out", ConvDesc::downsample(2, 1, 33, 21, 64, 64), kGemm, kSkip, kOut8},
      {"up_odd", ConvDesc::upsample2x(1, 1, 39, 65, 96, 48), kPhases, kSkip, kPlain},
      {"up_1x1_fp8_out", ConvDesc::upsample2x(1, 1, 1, 1, 64, 32), kPhases, kSkip, kOut8},
      // The upsample in phases with 1-byte outputs (doubled strides, shifted bases), a residual,
      // two images of two frames; and the element-wise gather (Cin not a multiple of 16).
      {"up_video_n2_res_fp8_out", ConvDesc::upsample2x(2, 2, 13, 17, 96, 96), kPhases, kSkip, kOut8},
      {"up_cin24_elementwise_res", ConvDesc::upsample2x(1, 1, 9, 11, 24, 96), kPhasesElementwise, kSkip, kRes},
      // T = 1 causal convs with Cin a multiple of 32 up to 96: the e4m3 halo kernel's layers
      // where it is built (NVIDIA sm_90a, tile_table.hpp), the implicit GEMM elsewhere: partial
      // patches on both edges, two images, several Cout tiles.
      {"halo_shape_cin96_res", ConvDesc::causal3x3x3(1, 1, 37, 29, 96, 96), kHalo, kSkip, kRes},
      {"halo_shape_cin32_n2_cout192", ConvDesc::causal3x3x3(2, 1, 17, 23, 32, 192), kHalo, kSkip, kPlain},
      {"halo_shape_cin64_cout288", ConvDesc::causal3x3x3(1, 1, 21, 45, 64, 288), kHalo, kSkip, kNoBias},
  };
  return rows;
}

// The cases of operand type t, in the table's order.
inline std::vector<ConvCase> extra_cases(DType t) {
  std::vector<ConvCase> v;
  for (const CaseRow& r : case_rows()) {
    const Opt o = t == DType::kFP8E4M3 ? r.fp8 : r.bf16;
    if (o != cases::kSkip) v.push_back({r.name, r.desc, options_for(o, t), aim_for(r.aim, t)});
  }
  return v;
}

// One of the 18 seed shapes, with a seed of its own per operand type.
template <DType kType>
void check_seed_shape(const VaeShape& s) {
  CaseOptions o;
  o.seed = kType == DType::kFP8E4M3 ? 500u + uint32_t(s.cin * 3 + s.cout + s.h)
                                    : 1000u + uint32_t(s.cin * 7 + s.cout * 13 + s.h);
  check_case<kType>(s.desc(), o, Aim{});
}

}  // namespace vaeconv::test
