// test_rms_norm.cpp — the RMS norm's host half: argument checks (each refusal names the value),
// the lane plan (whole groups in a 32-lane warp and a 64-lane wave, every chunk owned by exactly
// one lane), and the CPU reference against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/kernel/rms_norm_params.hpp"
#include "vaeconv/reference/rms_norm_reference.hpp"

namespace vaeconv {
namespace {

struct Buffers {
  alignas(16) uint16_t x[1024];
  alignas(16) uint16_t y[1024];
  alignas(16) float gamma[64];
  alignas(16) float bias[64];
};

RmsNormArgs valid_args(Buffers& b) {
  RmsNormArgs a;
  a.x = b.x;
  a.y = b.y;
  a.gamma = b.gamma;
  a.bias = b.bias;
  a.pixels = 16;
  a.channels = 64;
  return a;
}

void expect_refused(const RmsNormArgs& a, StatusCode code, const std::string& needle) {
  const Status s = check_rms_norm_args(a);
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.to_string();
}

TEST(RmsNormArgs, ValidAndInPlaceAndNoBiasPass) {
  static Buffers b;
  RmsNormArgs a = valid_args(b);
  EXPECT_TRUE(check_rms_norm_args(a).ok());
  a.y = b.x;  // in place
  EXPECT_TRUE(check_rms_norm_args(a).ok());
  a.bias = nullptr;
  EXPECT_TRUE(check_rms_norm_args(a).ok());
}

TEST(RmsNormArgs, RefusalsNameTheValue) {
  static Buffers b;
  RmsNormArgs a = valid_args(b);
  for (int64_t c : {4, 12, 100, 385}) {
    a.channels = c;
    expect_refused(a, StatusCode::kUnsupported, "C = " + std::to_string(c));
  }
  a = valid_args(b);
  a.channels = 0;
  expect_refused(a, StatusCode::kInvalidArgument, "channels must be >= 1, got 0");
  a = valid_args(b);
  a.pixels = -3;
  expect_refused(a, StatusCode::kInvalidArgument, "pixels must be >= 1, got -3");
  a = valid_args(b);
  a.x = nullptr;
  expect_refused(a, StatusCode::kInvalidArgument, "x is null");
  a = valid_args(b);
  a.y = nullptr;
  expect_refused(a, StatusCode::kInvalidArgument, "y is null");
  a = valid_args(b);
  a.gamma = nullptr;
  expect_refused(a, StatusCode::kInvalidArgument, "gamma is null");
  a = valid_args(b);
  a.x = b.x + 1;
  expect_refused(a, StatusCode::kMisaligned, "x must be 16-byte aligned");
  a = valid_args(b);
  a.y = b.y + 4;
  expect_refused(a, StatusCode::kMisaligned, "y must be 16-byte aligned");
  a = valid_args(b);
  a.gamma = b.gamma + 2;
  expect_refused(a, StatusCode::kMisaligned, "gamma must be 16-byte aligned");
  a = valid_args(b);
  a.bias = b.bias + 1;
  expect_refused(a, StatusCode::kMisaligned, "bias must be 16-byte aligned");
  a = valid_args(b);
  a.y = b.x + 8;  // 16 bytes into x: overlapping, not in place
  expect_refused(a, StatusCode::kOverlap, "y overlaps x");
  a = valid_args(b);
  a.channels = 8;
  a.pixels = 2;
  a.gamma = reinterpret_cast<const float*>(b.y + 8);  // inside y's 32 bytes
  expect_refused(a, StatusCode::kOverlap, "y overlaps gamma");
  a = valid_args(b);
  a.pixels = int64_t(1) << 60;
  expect_refused(a, StatusCode::kOverflow, "overflow");
}

TEST(RmsNormPlan, GroupsAreWholeInWarpAndWaveAndCoverEveryChunk) {
  for (int64_t c = 8; c <= 4096; c += 8) {
    const kernel::RmsNormPlan plan = kernel::plan_rms_norm(c);
    const int g = plan.group;
    ASSERT_TRUE(g >= 1 && g <= 32 && (g & (g - 1)) == 0) << "C " << c << " group " << g;
    ASSERT_EQ(32 % g, 0);
    ASSERT_EQ(64 % g, 0);
    ASSERT_EQ(kernel::kRmsNormThreads % g, 0);
    const int64_t chunks = c / 8;
    if (plan.chunks_per_lane > 0) {
      // Registers: lane l owns chunks l + g i, i < chunks_per_lane; every chunk exactly once.
      std::multiset<int64_t> owned;
      for (int l = 0; l < g; ++l)
        for (int i = 0; i < plan.chunks_per_lane; ++i)
          if (l + int64_t(g) * i < chunks) owned.insert(l + int64_t(g) * i);
      ASSERT_EQ(int64_t(owned.size()), chunks) << "C " << c;
      ASSERT_EQ(int64_t(std::set<int64_t>(owned.begin(), owned.end()).size()), chunks);
      // The smallest group that holds the chunks (more lanes per pixel than needed waste them).
      ASSERT_TRUE(g == 1 || int64_t(g / 2) * plan.chunks_per_lane < chunks) << "C " << c;
    } else {
      EXPECT_GT(chunks, 32 * kernel::kRmsNormChunksPerLane) << "C " << c;
      EXPECT_EQ(g, 32);
    }
  }
  EXPECT_EQ(kernel::plan_rms_norm(96).group, 4);
  EXPECT_EQ(kernel::plan_rms_norm(192).group, 8);
  EXPECT_EQ(kernel::plan_rms_norm(384).group, 16);
  EXPECT_EQ(kernel::plan_rms_norm(8).group, 1);
  EXPECT_EQ(kernel::plan_rms_norm(1024).chunks_per_lane, 4);
  EXPECT_EQ(kernel::plan_rms_norm(1032).chunks_per_lane, 0);
}

TEST(RmsNormReference, HandWorkedPixel) {
  // x = (3, 4, 0, ...) over C = 8: ||x|| = 5, sqrt(C) = 2 sqrt 2.
  uint16_t x[8] = {};
  x[0] = float_to_bf16(3.f);
  x[1] = float_to_bf16(4.f);
  float gamma[8], bias[8];
  for (int c = 0; c < 8; ++c) {
    gamma[c] = 1.f + c;
    bias[c] = 0.25f * c;
  }
  double out[8], mag[8];
  reference::rms_norm_pixel(x, 8, gamma, bias, false, out, mag);
  const double r8 = std::sqrt(8.0);
  EXPECT_DOUBLE_EQ(out[0], 0.6 * r8 * 1.0 + 0.0);
  EXPECT_DOUBLE_EQ(out[1], 0.8 * r8 * 2.0 + 0.25);
  EXPECT_DOUBLE_EQ(out[5], 1.25);
  EXPECT_DOUBLE_EQ(mag[1], 0.8 * r8 * 2.0 + 0.25);
  reference::rms_norm_pixel(x, 8, gamma, bias, true, out);
  const double v1 = 0.8 * r8 * 2.0 + 0.25;
  EXPECT_DOUBLE_EQ(out[1], v1 / (1.0 + std::exp(-v1)));
  // An all-zero pixel: eps keeps it finite, y = bias.
  const uint16_t zeros[8] = {};
  reference::rms_norm_pixel(zeros, 8, gamma, bias, false, out);
  for (int c = 0; c < 8; ++c) EXPECT_DOUBLE_EQ(out[c], bias[c]);
  // The rounded tensor is bf16 of those values.
  const std::vector<uint16_t> xs(x, x + 8);
  const std::vector<uint16_t> y = reference::rms_norm_reference(xs, 1, 8, gamma, nullptr, false);
  EXPECT_EQ(y[1], float_to_bf16(float(0.8 * r8 * 2.0)));
}

}  // namespace
}  // namespace vaeconv
