// test_conv_fp8_gpu.cpp — the FP8 kernels and the device quantizer (label gpu; the harness and
// its checks — device quantizer bit for bit, the conv of the dequantized operands, e4m3 outputs —
// are conv_case.hpp's).
#include <gtest/gtest.h>

#include "conv_case.hpp"

namespace vaeconv::test {
namespace {

class VaeShapeFp8 : public ::testing::TestWithParam<VaeShape> {};

TEST_P(VaeShapeFp8, MatchesDequantizedReference) {
  const VaeShape& s = GetParam();
  CaseOptions o;
  o.seed = 500u + uint32_t(s.cin * 3 + s.cout + s.h);
  check_case<DType::kFP8E4M3>(s.desc(), o, Aim{});
}

INSTANTIATE_TEST_SUITE_P(Seed, VaeShapeFp8, ::testing::ValuesIn(kVaeShapes), shape_name);

std::vector<ConvCase> fp8_extra_cases() {
  CaseOptions plain, res, out8, nobias;
  for (CaseOptions* o : {&plain, &res, &out8, &nobias}) o->seed = 7;
  res.residual = true;
  out8.fp8_out = true;
  out8.residual = true;
  nobias.bias = false;
  // The kernel each case aims at (kernel_aim.hpp: on this build); `none`: no particular one.
  const Aim none{}, gemm = aim_implicit_gemm(true), elementwise = aim_elementwise(),
            phases = aim_upsample_phases(true), phases_elementwise = aim_upsample_phases(false),
            tap_reduce = aim_tap_reduce(), halo = aim_halo(DType::kFP8E4M3), tap_row = aim_tap_row();
  return {
      {"causal_n2_odd", ConvDesc::causal3x3x3(2, 1, 77, 131, 64, 96), plain, none},
      {"causal_1x1", ConvDesc::causal3x3x3(1, 1, 1, 1, 32, 64), nobias, none},
      {"causal_video_t3", ConvDesc::causal3x3x3(1, 3, 13, 17, 32, 48), res, gemm},
      {"causal_cin3", ConvDesc::causal3x3x3(1, 1, 37, 53, 3, 96), plain, tap_row},
      // The e4m3 tap-row kernel where it is built (sm_90a): two images, two Cout tiles and a
      // residual; an fp8 output.
      {"taprow_n2_cout192_res", ConvDesc::causal3x3x3(2, 1, 45, 19, 3, 192), res, tap_row},
      {"taprow_fp8_out", ConvDesc::causal3x3x3(1, 1, 33, 70, 3, 96), out8, tap_row},
      {"taprow_cout40_res", ConvDesc::causal3x3x3(1, 1, 37, 29, 3, 40), res, tap_row},
      {"taprow_n2_cout99_plain", ConvDesc::causal3x3x3(2, 1, 19, 45, 3, 99), plain, tap_row},
      {"causal_cin24_scalar", ConvDesc::causal3x3x3(1, 1, 9, 11, 24, 32), plain, elementwise},
      {"causal_cin16_cout3", ConvDesc::causal3x3x3(1, 1, 30, 31, 16, 3), res, none},
      {"tapreduce_video_t2", ConvDesc::causal3x3x3(1, 2, 19, 23, 32, 3), res, tap_reduce},
      {"tapreduce_fp8_out", ConvDesc::causal3x3x3(2, 1, 20, 30, 48, 3), out8, tap_reduce},
      {"tapreduce_persistent_video_n2", ConvDesc::causal3x3x3(2, 2, 130, 200, 48, 3), res, tap_reduce},
      // Views into wider tensors (padded pixels in and out): the tap-row kernel's element loads
      // at an input pixel stride of 8 and 4 bytes, the e4m3 halo kernel, the tap-reduce kernel,
      // the implicit GEMM of a video with 1-byte outputs.
      {"taprow_strided_res", with_padded_strides(ConvDesc::causal3x3x3(2, 1, 9, 70, 3, 96), 5, 8), res, tap_row},
      {"taprow_strided_fp8_out", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 33, 40, 3, 96), 1, 16), out8, tap_row},
      {"halo_strided_res", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 37, 29, 96, 96), 16, 8), res, halo},
      {"tapreduce_strided_res", with_padded_strides(ConvDesc::causal3x3x3(1, 2, 17, 30, 64, 3), 16, 5), res, tap_reduce},
      {"causal_video_strided_fp8_out", with_padded_strides(ConvDesc::causal3x3x3(1, 3, 13, 17, 32, 64), 16, 8), out8, gemm},
      {"causal_fp8_out", ConvDesc::causal3x3x3(1, 1, 40, 24, 96, 96), out8, none},
      {"down_odd_fp8_out", ConvDesc::downsample(2, 1, 33, 21, 64, 64), out8, gemm},
      {"down_n2_odd", ConvDesc::downsample(2, 1, 77, 131, 96, 96), res, gemm},
      {"up_odd", ConvDesc::upsample2x(1, 1, 39, 65, 96, 48), plain, phases},
      {"up_1x1_fp8_out", ConvDesc::upsample2x(1, 1, 1, 1, 64, 32), out8, phases},
      // The upsample in phases with 1-byte outputs (doubled strides, shifted bases), a residual,
      // two images of two frames; and the element-wise gather (Cin not a multiple of 16).
      {"up_video_n2_res_fp8_out", ConvDesc::upsample2x(2, 2, 13, 17, 96, 96), out8, phases},
      {"up_cin24_elementwise_res", ConvDesc::upsample2x(1, 1, 9, 11, 24, 96), res, phases_elementwise},
      // T = 1 causal convs with Cin a multiple of 32 up to 96: the e4m3 halo kernel's layers
      // where it is built (NVIDIA sm_90a, tile_table.hpp), the implicit GEMM elsewhere: partial
      // patches on both edges, two images, several Cout tiles.
      {"halo_shape_cin96_res", ConvDesc::causal3x3x3(1, 1, 37, 29, 96, 96), res, halo},
      {"halo_shape_cin32_n2_cout192", ConvDesc::causal3x3x3(2, 1, 17, 23, 32, 192), plain, halo},
      {"halo_shape_cin64_cout288", ConvDesc::causal3x3x3(1, 1, 21, 45, 64, 288), nobias, halo},
  };
}

class ExtraFp8 : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ExtraFp8, MatchesDequantizedReference) {
  check_case<DType::kFP8E4M3>(GetParam().desc, GetParam().opt, GetParam().aim);
}

INSTANTIATE_TEST_SUITE_P(Cases, ExtraFp8, ::testing::ValuesIn(fp8_extra_cases()), case_name);

// The quantizer on its own: saturation, -0 and tiny negatives stored as +0, a NaN or Inf making the
// scale NaN, odd lengths, refusals.
TEST(QuantizeFp8, SpecialValuesAndTails) {
  VAECONV_REQUIRE_GPU();
  std::vector<uint16_t> x = {float_to_bf16(1.f), float_to_bf16(-3.5f), float_to_bf16(-1e-9f),
                             float_to_bf16(-0.f), float_to_bf16(1e-6f), float_to_bf16(2.f),
                             float_to_bf16(-1e-6f), float_to_bf16(-2.f), float_to_bf16(0.25f)};
  const int64_t n = int64_t(x.size());  // 9: one vector step and a scalar tail
  std::vector<uint8_t> want(x.size());
  const float want_scale = quantize_fp8_host(x.data(), n, want.data());
  EXPECT_EQ(want_scale, 3.5f / 448.f);
  const size_t ws_bytes = precompiled::quantize_fp8_workspace_bytes(n);
  ASSERT_GT(ws_bytes, 0u);
  GuardedBuffer xd(x.size() * 2), yd(x.size()), ws(ws_bytes), sd(4);
  xd.upload(x.data(), x.size() * 2);
  float* scale = static_cast<float*>(sd.ptr());
  ASSERT_TRUE(precompiled::quantize_fp8(xd.ptr(), n, yd.ptr(), scale, ws.ptr(), ws_bytes, nullptr).ok());
  VAECONV_HIP_CHECK(hipDeviceSynchronize());
  std::vector<uint8_t> got(x.size());
  yd.download(got.data(), got.size());
  float s = 0;
  VAECONV_HIP_CHECK(hipMemcpy(&s, scale, 4, hipMemcpyDeviceToHost));
  EXPECT_EQ(got, want);
  EXPECT_EQ(s, want_scale);
  for (int i : {2, 3, 6}) EXPECT_EQ(got[size_t(i)], 0x00) << "element " << i << ": +0, never 0x80";
  // A NaN or an Inf anywhere (vector part or tail): scale NaN, every byte 0x00.
  for (const auto& [at, bits] : std::vector<std::pair<size_t, uint16_t>>{{2, 0x7FC0}, {8, 0xFFC0}, {5, 0xFF80}}) {
    std::vector<uint16_t> xs = x;
    xs[at] = bits;
    xd.upload(xs.data(), xs.size() * 2);
    ASSERT_TRUE(precompiled::quantize_fp8(xd.ptr(), n, yd.ptr(), scale, ws.ptr(), ws_bytes, nullptr).ok());
    VAECONV_HIP_CHECK(hipDeviceSynchronize());
    std::vector<uint8_t> gs(x.size(), 0x55);
    yd.download(gs.data(), gs.size());
    VAECONV_HIP_CHECK(hipMemcpy(&s, scale, 4, hipMemcpyDeviceToHost));
    EXPECT_TRUE(std::isnan(s)) << "element " << at << " = " << bits << ": scale " << s;
    EXPECT_EQ(gs, std::vector<uint8_t>(x.size(), 0x00)) << "element " << at;
  }
  xd.upload(x.data(), x.size() * 2);
  EXPECT_EQ(got[1], 0xFE) << "-amax maps to -448";
  EXPECT_TRUE(yd.guards_intact());
  // Refusals.
  EXPECT_EQ(precompiled::quantize_fp8(xd.ptr(), n, yd.ptr(), scale, ws.ptr(), 8, nullptr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(precompiled::quantize_fp8(nullptr, n, yd.ptr(), scale, ws.ptr(), ws_bytes, nullptr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(precompiled::quantize_fp8(xd.ptr(), n, xd.ptr(), scale, ws.ptr(), ws_bytes, nullptr).code(),
            StatusCode::kOverlap);
}

}  // namespace
}  // namespace vaeconv::test
