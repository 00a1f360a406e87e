// test_conv_bf16_gpu.cpp — the BF16 kernels against the CPU reference (label gpu).
#include <gtest/gtest.h>

#include "conv_case.hpp"
#include "vaeconv/conv/vae_shapes.hpp"

namespace vaeconv {
// Readable test parameters in gtest's output.
inline void PrintTo(const VaeShape& s, std::ostream* os) { *os << s.id; }
}  // namespace vaeconv

namespace vaeconv::test {
namespace {

// --- All 18 seed shapes ------------------------------------------------------------------------
class VaeShapeBf16 : public ::testing::TestWithParam<VaeShape> {};

TEST_P(VaeShapeBf16, MatchesReference) {
  VAECONV_REQUIRE_GPU();
  const VaeShape& s = GetParam();
  const ConvDesc d = s.desc(DType::kBF16);
  CaseOptions o;
  o.seed = 1000u + uint32_t(s.cin * 7 + s.cout * 13 + s.h);
  expect_case_ok(d, run_conv_case(d, o));
}

INSTANTIATE_TEST_SUITE_P(Seed, VaeShapeBf16, ::testing::ValuesIn(kVaeShapes),
                         [](const ::testing::TestParamInfo<VaeShape>& i) {
                           return std::string(i.param.id);
                         });

// --- Extra cases: batch, odd sizes, bias/residual, strides, video -------------------------------
struct Extra {
  const char* name;
  ConvDesc desc;
  CaseOptions opt;
};

std::vector<Extra> extra_cases() {
  CaseOptions plain;  // bias on, no residual
  CaseOptions nobias;
  nobias.bias = false;
  CaseOptions res;
  res.residual = true;
  CaseOptions inplace;
  inplace.residual_in_place = true;
  std::vector<Extra> v = {
      {"causal_n2_odd", ConvDesc::causal3x3x3(2, 1, 77, 131, 64, 96), plain},
      {"causal_1x1", ConvDesc::causal3x3x3(1, 1, 1, 1, 32, 64), plain},
      {"causal_nobias", ConvDesc::causal3x3x3(1, 1, 33, 17, 96, 96), nobias},
      {"causal_residual", ConvDesc::causal3x3x3(1, 1, 40, 24, 96, 192), res},
      {"causal_residual_inplace", ConvDesc::causal3x3x3(1, 1, 19, 45, 192, 192), inplace},
      {"causal_video_t4", ConvDesc::causal3x3x3(1, 4, 23, 29, 32, 48), res},
      {"causal_video_n2_t3", ConvDesc::causal3x3x3(2, 3, 9, 10, 16, 40), plain},
      {"causal_cin3_odd", ConvDesc::causal3x3x3(2, 1, 37, 53, 3, 96), plain},
      {"causal_cin3_video", ConvDesc::causal3x3x3(1, 3, 11, 7, 3, 32), plain},
      // T = 1, Cin = 3 of the wide tile: the tap-row kernel where it is built (sm_90a): partial
      // 32 x 8 patches, two Cout tiles with a residual, padded strides in place, a 1 x 1 frame.
      {"taprow_cout192_res", ConvDesc::causal3x3x3(1, 1, 45, 19, 3, 192), res},
      {"taprow_strided_inplace",
       with_padded_strides(ConvDesc::causal3x3x3(2, 1, 9, 70, 3, 96), 5, 8), inplace},
      {"taprow_1x1_nobias", ConvDesc::causal3x3x3(1, 1, 1, 1, 3, 96), nobias},
      // Partial Cout tiles (B rows past Cout zeroed; Cout % 8 != 0: the element-wise store).
      {"taprow_cout40_res", ConvDesc::causal3x3x3(1, 1, 37, 29, 3, 40), res},
      {"taprow_n2_cout99_res", ConvDesc::causal3x3x3(2, 1, 19, 45, 3, 99), res},
      {"causal_cout3_odd", ConvDesc::causal3x3x3(1, 1, 61, 35, 96, 3), res},
      // Cout <= 3: the tap-reduce kernel (whole and partial 14 x 14 patches, video, views).
      {"tapreduce_video_t3", ConvDesc::causal3x3x3(1, 3, 29, 33, 32, 3), res},
      {"tapreduce_cout1_n2", ConvDesc::causal3x3x3(2, 1, 15, 45, 16, 1), plain},
      {"tapreduce_cout2_nobias", ConvDesc::causal3x3x3(1, 1, 1, 1, 64, 2), nobias},
      {"tapreduce_inplace_whole_patches", ConvDesc::causal3x3x3(1, 1, 28, 14, 96, 3), inplace},
      {"tapreduce_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 2, 17, 30, 64, 3), 8, 5), res},
      // More patches than resident blocks (where the tap-reduce kernel is built persistent,
      // kTapReducePersistent / sweep flag trp, its grid loops), K of five tiles (copies past the
      // next patch's buffers, into the LDS the partials use), a batch.
      {"tapreduce_persistent_video_n2", ConvDesc::causal3x3x3(2, 3, 130, 200, 48, 3), res},
      {"causal_cin16_cout32", ConvDesc::causal3x3x3(1, 1, 30, 30, 16, 32), plain},
      // T = 1 causal convs of the halo kernel, which takes Cin <= 96 (tile_table.hpp): partial
      // 32 x 8 patches, K steps crossing taps inside a K tile, a residual in place, padded
      // strides, several Cout tiles, a batch of two.
      {"halo_cin48_partial", ConvDesc::causal3x3x3(1, 1, 37, 29, 48, 96), plain},
      {"halo_inplace", ConvDesc::causal3x3x3(1, 1, 19, 45, 96, 96), inplace},
      {"halo_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 21, 18, 96, 96), 16, 8), plain},
      {"halo_cout288_n2", ConvDesc::causal3x3x3(2, 1, 17, 23, 32, 288), res},
      {"halo_cin16_cout40", ConvDesc::causal3x3x3(1, 1, 9, 70, 16, 40), nobias},
      {"halo_cin16_n2_cout192_res", ConvDesc::causal3x3x3(2, 1, 35, 19, 16, 192), res},
      // K = 72: two K tiles of the wide wgmma tile (BK 64), all its pipeline issues up front.
      {"causal_cin8_two_k_tiles", ConvDesc::causal3x3x3(1, 1, 23, 19, 8, 96), res},
      {"causal_cin5_cout7", ConvDesc::causal3x3x3(1, 1, 13, 9, 5, 7), res},
      // More block tiles of the wide tile (414, 276, 296) than an H200 holds at once (264): the
      // persistent grid's blocks compute several tiles each, crossing frames and batch items.
      {"causal_video_persistent", ConvDesc::causal3x3x3(2, 3, 130, 67, 64, 96), res},
      {"down_persistent", ConvDesc::downsample(2, 2, 260, 134, 96, 96), plain},
      {"up_persistent", ConvDesc::upsample2x(2, 2, 50, 47, 64, 96), inplace},
      // Element-wise gather on the wide (Cout > 32) element-wise tile, every conv kind.
      {"down_cin5_wide", ConvDesc::downsample(1, 1, 19, 22, 5, 96), plain},
      {"up_cin3_wide_video", ConvDesc::upsample2x(1, 2, 9, 7, 3, 64), res},
      {"down_n2_odd", ConvDesc::downsample(2, 1, 77, 131, 96, 96), plain},
      {"down_2x3", ConvDesc::downsample(1, 1, 2, 3, 64, 64), plain},
      {"down_even_residual", ConvDesc::downsample(1, 1, 64, 38, 192, 192), res},
      {"down_video_t2", ConvDesc::downsample(1, 2, 21, 16, 32, 32), nobias},
      {"up_n2_odd", ConvDesc::upsample2x(2, 1, 39, 65, 96, 48), plain},
      {"up_1x1", ConvDesc::upsample2x(1, 1, 1, 1, 64, 32), plain},
      {"up_residual", ConvDesc::upsample2x(1, 1, 20, 12, 384, 192), res},
      {"up_video_t2", ConvDesc::upsample2x(1, 2, 7, 9, 48, 96), inplace},
      {"causal_strided", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 21, 18, 64, 64), 16, 8), res},
      {"down_strided", with_padded_strides(ConvDesc::downsample(1, 1, 21, 18, 32, 32), 8, 24), plain},
      {"up_strided", with_padded_strides(ConvDesc::upsample2x(1, 1, 11, 6, 32, 64), 8, 8), plain},
      // More than 65535 frames (N * T_out, the old grid-y limit; conv_args.hpp): every kernel
      // decodes its tile's frame from the 1D grid. Tiny frames keep the bytes small (a few MB);
      // each case lands on another kernel: the implicit GEMM of a video (tiny tile, 3 time
      // taps), the tap-reduce kernel, the halo and tap-row kernels (sm_90a; the implicit GEMM
      // elsewhere), the downsample and the upsample's four phases (narrow tile), with residuals.
      {"frames_past_65535_causal_video", ConvDesc::causal3x3x3(2, 32800, 2, 2, 8, 8), res},
      {"frames_past_65535_tapreduce", ConvDesc::causal3x3x3(1, 65600, 2, 2, 8, 3), res},
      {"frames_past_65535_halo", ConvDesc::causal3x3x3(65600, 1, 1, 2, 16, 40), res},
      {"frames_past_65535_taprow", ConvDesc::causal3x3x3(65600, 1, 1, 2, 3, 40), plain},
      {"frames_past_65535_down", ConvDesc::downsample(1, 65600, 2, 2, 8, 40), plain},
      {"frames_past_65535_up", ConvDesc::upsample2x(2, 32800, 1, 1, 8, 24), inplace},
  };
  return v;
}

void PrintTo(const Extra& e, std::ostream* os) { *os << e.name << ": " << e.desc.to_string(); }

class ExtraBf16 : public ::testing::TestWithParam<Extra> {};

TEST_P(ExtraBf16, MatchesReference) {
  VAECONV_REQUIRE_GPU();
  expect_case_ok(GetParam().desc, run_conv_case(GetParam().desc, GetParam().opt));
}

INSTANTIATE_TEST_SUITE_P(Cases, ExtraBf16, ::testing::ValuesIn(extra_cases()),
                         [](const ::testing::TestParamInfo<Extra>& i) {
                           return std::string(i.param.name);
                         });

}  // namespace
}  // namespace vaeconv::test
