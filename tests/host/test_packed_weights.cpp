// Weight packing: PyTorch layout -> [Cout][k_pad] with K = (kt, kh, kw, cin), zero tails, the
// T = 1 causal slice, and refusals.
#include <gtest/gtest.h>

#include <random>

#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/packed_weights.hpp"

#include <cmath>

namespace vaeconv {
namespace {

std::vector<float> random_weights(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> w(n);
  for (auto& v : w) v = bf16_to_float(float_to_bf16(u(rng)));  // exactly representable
  return w;
}

void check_packing(const ConvDesc& d, int src_kt, int taps_t, int kt_base) {
  const auto w = random_weights(size_t(d.cout * d.cin * src_kt * 9), 3);
  PackedWeightsHost p;
  ASSERT_TRUE(detail::pack_weights_bf16_as(d, w.data(), /*phases=*/false, &p).ok());  // the direct form
  EXPECT_EQ(p.info.taps_t, taps_t);
  EXPECT_EQ(p.info.kt_base, kt_base);
  EXPECT_EQ(p.info.k, taps_t * 9 * d.cin);
  EXPECT_EQ(p.info.k_pad * int64_t(size_of(p.info.dtype)) % kPackRowBytes, 0);
  EXPECT_GE(p.info.k_pad, p.info.k);
  ASSERT_EQ(int64_t(p.bf16.size()), d.cout * p.info.k_pad);
  for (int64_t co = 0; co < d.cout; ++co)
    for (int64_t k = 0; k < p.info.k_pad; ++k) {
      const uint16_t got = p.bf16[size_t(co * p.info.k_pad + k)];
      if (k >= p.info.k) {
        ASSERT_EQ(got, 0) << "K tail must be zero";
        continue;
      }
      const int64_t tap = k / d.cin, ci = k % d.cin;
      const int64_t kt = kt_base + tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
      const float want = w[size_t((((co * d.cin + ci) * src_kt + kt) * 3 + kh) * 3 + kw)];
      ASSERT_EQ(got, float_to_bf16(want)) << "co " << co << " k " << k;
    }
}

TEST(PackedWeights, CausalT1TakesSliceTwo) {
  check_packing(ConvDesc::causal3x3x3(1, 1, 4, 4, 16, 8), 3, 1, 2);
  check_packing(ConvDesc::causal3x3x3(1, 1, 4, 4, 3, 5), 3, 1, 2);
}

TEST(PackedWeights, CausalVideoKeepsAllTaps) {
  check_packing(ConvDesc::causal3x3x3(1, 4, 4, 4, 8, 8), 3, 3, 0);
}

TEST(PackedWeights, TwoDimensionalKinds) {
  check_packing(ConvDesc::downsample(1, 1, 4, 4, 24, 24), 1, 1, 0);
  check_packing(ConvDesc::upsample2x(1, 1, 4, 4, 32, 16), 1, 1, 0);
}

TEST(PackedWeights, FromBf16BitsMatchesFloats) {
  const ConvDesc d = ConvDesc::causal3x3x3(1, 1, 4, 4, 8, 8);
  const auto w = random_weights(size_t(8 * 8 * 27), 9);
  std::vector<uint16_t> bits(w.size());
  for (size_t i = 0; i < w.size(); ++i) bits[i] = float_to_bf16(w[i]);
  PackedWeightsHost a, b;
  ASSERT_TRUE(pack_weights_bf16(d, w.data(), &a).ok());
  ASSERT_TRUE(pack_weights_bf16(d, bits.data(), int64_t(bits.size()), &b).ok());
  EXPECT_EQ(a.bf16, b.bf16);
  EXPECT_EQ(pack_weights_bf16(d, bits.data(), int64_t(bits.size()) - 1, &b).code(),
            StatusCode::kInvalidArgument);
}

TEST(PackedWeights, Refusals) {
  const ConvDesc d = ConvDesc::causal3x3x3(1, 1, 4, 4, 8, 8);
  PackedWeightsHost p;
  EXPECT_EQ(pack_weights_bf16(d, static_cast<const float*>(nullptr), &p).code(),
            StatusCode::kInvalidArgument);
  ConvDesc bad = d;
  bad.cin = 0;
  const float w = 1.f;
  EXPECT_EQ(pack_weights_bf16(bad, &w, &p).code(), StatusCode::kInvalidArgument);
  ConvDesc fp8 = d;
  fp8.set_dtypes(DType::kFP8E4M3);
  EXPECT_EQ(pack_weights_bf16(fp8, &w, &p).code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace vaeconv

namespace vaeconv {
namespace {

TEST(PackedWeightsFp8, PerChannelScalesAndSaturation) {
  ConvDesc d = ConvDesc::causal3x3x3(1, 1, 4, 4, 16, 4, DType::kFP8E4M3);
  std::vector<float> w(size_t(4 * 16 * 27));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : w) v = u(rng);
  for (int64_t ci = 0; ci < 16; ++ci)
    for (int t = 0; t < 27; ++t) w[size_t((1 * 16 + ci) * 27 + t)] = 0.f;  // channel 1: all zero
  w[size_t((2 * 16 + 3) * 27 + 18)] = -1e-30f;  // rounds to -0 in channel 2, slice 2: stored +0
  w[size_t((3 * 16 + 0) * 27 + 2)] = 1e9f;  // a huge value in slice kt = 0: not packed at T = 1
  PackedWeightsHost p;
  ASSERT_TRUE(pack_weights_fp8(d, w.data(), &p).ok());
  ASSERT_EQ(p.scales.size(), 4u);
  ASSERT_EQ(int64_t(p.fp8.size()), 4 * p.info.k_pad);
  EXPECT_TRUE(p.bf16.empty());
  EXPECT_EQ(p.scales[1], 1.f) << "an all-zero channel keeps scale 1";
  for (int64_t co = 0; co < 4; ++co) {
    float amax = 0.f;
    for (int64_t k = 0; k < p.info.k; ++k) {
      const int64_t tap = k / 16, ci = k % 16;
      const float v = w[size_t((co * 16 + ci) * 27 + 18 + tap)];
      if (std::fabs(v) > amax) amax = std::fabs(v);
    }
    EXPECT_EQ(p.scales[size_t(co)], fp8_scale_for_amax(amax)) << "channel " << co;
    for (int64_t k = 0; k < p.info.k_pad; ++k) {
      const uint8_t b = p.fp8[size_t(co * p.info.k_pad + k)];
      if (k >= p.info.k) {
        ASSERT_EQ(b, 0);
        continue;
      }
      const float v = w[size_t((co * 16 + k % 16) * 27 + 18 + k / 16)];
      ASSERT_EQ(b, quantize_e4m3fn(v, p.scales[size_t(co)])) << "co " << co << " k " << k;
      ASSERT_TRUE(b != 0x80 && !e4m3fn_is_nan(b)) << "no -0 or NaN code, co " << co << " k " << k;
    }
  }
  EXPECT_EQ(p.fp8[size_t(2 * p.info.k_pad + 3)], 0x00) << "-0 is stored as +0";
  // A NaN or infinite weight in a packed slice has no FP8 code: refused, naming where.
  for (float bad : {std::nanf(""), -INFINITY}) {
    std::vector<float> wb = w;
    wb[size_t((2 * 16 + 3) * 27 + 18)] = bad;
    const Status st = pack_weights_fp8(d, wb.data(), &p);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
    EXPECT_NE(st.to_string().find("row 2"), std::string::npos) << st.to_string();
    EXPECT_NE(st.to_string().find("column 3"), std::string::npos) << st.to_string();
  }
  ASSERT_TRUE(pack_weights_fp8(d, w.data(), &p).ok());
  EXPECT_LT(p.scales[3], 1.f) << "slice kt = 0 does not count at T = 1";
  // The channel's largest magnitude maps to +-448 (0x7E / 0xFE).
  int top = 0;
  for (int64_t k = 0; k < p.info.k; ++k) top += (p.fp8[size_t(k)] & 0x7F) == 0x7E;
  EXPECT_GE(top, 1);
}

TEST(PackedWeightsFp8, ScaleRule) {
  EXPECT_EQ(fp8_scale_for_amax(448.f), 1.f);
  EXPECT_EQ(fp8_scale_for_amax(0.f), 1.f);
  EXPECT_TRUE(std::isnan(fp8_scale_for_amax(std::nanf("")))) << "no scale represents a NaN";
  EXPECT_TRUE(std::isnan(fp8_scale_for_amax(INFINITY)));
  EXPECT_EQ(fp8_scale_for_amax(3.5f), 3.5f / 448.f);
  std::vector<uint16_t> x = {float_to_bf16(-7.f), float_to_bf16(1.f), float_to_bf16(-1e-9f)};
  std::vector<uint8_t> q(3);
  EXPECT_EQ(quantize_fp8_host(x.data(), 3, q.data()), 7.f / 448.f);
  EXPECT_EQ(q[0], 0xFE);
  EXPECT_EQ(q[2], 0x00) << "a negative that rounds to zero is +0, never 0x80";
  // A NaN (or Inf) anywhere: the scale is NaN and every byte 0x00 (the NaN travels in the scale).
  for (uint16_t special : {uint16_t(0x7FC0), uint16_t(0xFFC0), uint16_t(0x7F80), uint16_t(0xFF80)}) {
    x[1] = special;
    EXPECT_TRUE(std::isnan(quantize_fp8_host(x.data(), 3, q.data()))) << special;
    EXPECT_EQ(q, std::vector<uint8_t>(3, 0x00)) << special;
  }
}

}  // namespace
}  // namespace vaeconv
