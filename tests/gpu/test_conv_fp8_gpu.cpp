// test_conv_fp8_gpu.cpp — the FP8 kernels and the device quantizer (label gpu; the cases:
// conv_cases.hpp, shared with the BF16 suite; the harness and its checks — device quantizer bit
// for bit, the conv of the dequantized operands, e4m3 outputs — are conv_case.hpp's).
#include <gtest/gtest.h>

#include "conv_cases.hpp"

namespace vaeconv::test {
namespace {

class VaeShapeFp8 : public ::testing::TestWithParam<VaeShape> {};

TEST_P(VaeShapeFp8, MatchesDequantizedReference) { check_seed_shape<DType::kFP8E4M3>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Seed, VaeShapeFp8, ::testing::ValuesIn(kVaeShapes), shape_name);

class ExtraFp8 : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ExtraFp8, MatchesDequantizedReference) {
  check_case<DType::kFP8E4M3>(GetParam().desc, GetParam().opt, GetParam().aim);
}

INSTANTIATE_TEST_SUITE_P(Cases, ExtraFp8, ::testing::ValuesIn(extra_cases(DType::kFP8E4M3)),
                         case_name);

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
