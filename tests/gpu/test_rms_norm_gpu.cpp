// test_rms_norm_gpu.cpp — the RMS norm (+ SiLU) of channels-last bf16 activations through the C
// ABI (vaeconv_rms_norm, the library's compiled kernels), against the CPU reference
// (reference/rms_norm_reference.hpp, double).
//
//   * Every lane plan: C = 8, 64, 96, 192, 384, 1024 (registers: 1 .. 32 lanes per pixel) and
//     C = 1032, 2048 (the streaming form), odd pixel counts, bias and no bias, SiLU on and off;
//     random x with an all-zero pixel (the eps branch: y = bias) and a tiny one; the output
//     poisoned with NaN first, every element compared (one bf16 rounding of the double value,
//     plus the fp32 arithmetic's few ulps), guard bands intact.
//   * In place (y == x).
//   * The grid-stride loop: more pixels than the launch has blocks for (C = 8).
//   * Past 2^31 elements (C = 384, 2.15e9 elements): rows repeat a set of 61 random rows, whose
//     own run is checked against the reference; every row of the big run must then hold exactly
//     the bits of its pattern's row (each pixel's result depends only on its own channels).
//   * Refusals, each naming the offending value: C not a multiple of 8, nulls, no pixels,
//     misaligned and overlapping buffers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "vaeconv/reference/rms_norm_reference.hpp"
#include "vaeconv_c.h"

namespace vaeconv::test {
namespace {

struct NormCase {
  int64_t pixels;
  int64_t channels;
  bool bias;
  bool silu;
};

std::string name_of(const NormCase& c) {
  return "P=" + std::to_string(c.pixels) + " C=" + std::to_string(c.channels) +
         (c.bias ? " bias" : " no bias") + (c.silu ? " silu" : "");
}

// Half a bf16 ulp of |v| (the rounding's own error), for normal values; 2^-134 below.
double half_ulp_bf16(double v) {
  const double a = std::fabs(v);
  if (a < 1.1754943508222875e-38) return std::ldexp(1.0, -134);
  int e = 0;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1): ulp = 2^(e - 8)
  return std::ldexp(1.0, e - 9);
}

// Compares y (bf16 bits) against the double reference of every pixel of x; returns the number of
// elements off by more than one rounding plus 1e-5 of the terms' magnitude (fp32 arithmetic).
int64_t check_against_reference(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y,
                                 int64_t pixels, int64_t channels, const float* gamma,
                                 const float* bias, bool silu, std::string* first_bad) {
  std::vector<double> ref(static_cast<size_t>(channels)), mag(static_cast<size_t>(channels));
  int64_t bad = 0;
  for (int64_t p = 0; p < pixels; ++p) {
    reference::rms_norm_pixel(x.data() + p * channels, channels, gamma, bias, silu, ref.data(),
                              mag.data());
    for (int64_t c = 0; c < channels; ++c) {
      const double got = bf16_to_float(y[size_t(p * channels + c)]);
      const double want = ref[size_t(c)];
      const double tol = half_ulp_bf16(want) + 1e-5 * (mag[size_t(c)] + std::fabs(want)) + 1e-30;
      if (!(std::fabs(got - want) <= tol)) {  // NaN (unwritten) fails too
        if (bad == 0 && first_bad)
          *first_bad = "pixel " + std::to_string(p) + " channel " + std::to_string(c) + ": got " +
                       std::to_string(got) + ", want " + std::to_string(want);
        ++bad;
      }
    }
  }
  return bad;
}

struct Params {
  std::vector<float> gamma, bias;
};

Params random_params(std::mt19937& rng, int64_t channels) {
  std::uniform_real_distribution<float> g(0.25f, 1.75f), b(-0.5f, 0.5f);
  Params p;
  p.gamma.resize(size_t(channels));
  p.bias.resize(size_t(channels));
  for (auto& v : p.gamma) v = g(rng);
  for (auto& v : p.bias) v = b(rng);
  return p;
}

// Random x in [-3, 3]; pixel 0 all zeros (eps), pixel 1 (if any) tiny values.
std::vector<uint16_t> random_x(std::mt19937& rng, int64_t pixels, int64_t channels) {
  std::vector<uint16_t> bits;
  std::vector<float> values;
  random_bf16(rng, size_t(pixels * channels), -3.f, 3.f, &bits, &values);
  for (int64_t c = 0; c < channels; ++c) bits[size_t(c)] = 0;
  if (pixels > 1)
    for (int64_t c = 0; c < channels; ++c)
      bits[size_t(channels + c)] = float_to_bf16(values[size_t(channels + c)] * 1e-30f);
  return bits;
}

// Runs vaeconv_rms_norm on device copies of x / gamma / bias; y is poisoned first (or is x when
// in_place). Returns the C ABI's code; *y gets the output.
int run_norm(const std::vector<uint16_t>& x, int64_t pixels, int64_t channels, const Params& prm,
             bool with_bias, bool silu, bool in_place, std::vector<uint16_t>* y, bool* guards_ok,
             std::string* msg) {
  const size_t n = x.size(), bytes = n * 2;
  GuardedBuffer xd(bytes), yd(in_place ? 16 : bytes), gd(prm.gamma.size() * 4),
      bd(prm.bias.size() * 4);
  if (!xd.ok() || !yd.ok() || !gd.ok() || !bd.ok()) {
    *msg = "device allocation failed";
    return -1;
  }
  xd.upload(x.data(), bytes);
  gd.upload(prm.gamma.data(), prm.gamma.size() * 4);
  bd.upload(prm.bias.data(), prm.bias.size() * 4);
  void* out = in_place ? xd.ptr() : yd.ptr();
  if (!in_place) {
    std::vector<uint16_t> poison(n, kPoisonBf16);
    yd.upload(poison.data(), bytes);
  }
  char buf[512] = {0};
  const int code = vaeconv_rms_norm(xd.ptr(), pixels, channels, static_cast<float*>(gd.ptr()),
                                    with_bias ? static_cast<float*>(bd.ptr()) : nullptr,
                                    silu ? 1 : 0, out, nullptr, buf, sizeof buf);
  *msg = buf;
  if (hipDeviceSynchronize() != hipSuccess) {
    *msg += " (hipDeviceSynchronize failed)";
    return -1;
  }
  y->assign(n, 0);
  (in_place ? xd : yd).download(y->data(), bytes);
  *guards_ok = xd.guards_intact() && yd.guards_intact() && gd.guards_intact() && bd.guards_intact();
  return code;
}

void run_case(const NormCase& c, bool in_place, uint32_t seed) {
  SCOPED_TRACE(name_of(c) + (in_place ? " in place" : ""));
  std::mt19937 rng(seed);
  const Params prm = random_params(rng, c.channels);
  const std::vector<uint16_t> x = random_x(rng, c.pixels, c.channels);
  std::vector<uint16_t> y;
  bool guards = false;
  std::string msg;
  const int code = run_norm(x, c.pixels, c.channels, prm, c.bias, c.silu, in_place, &y, &guards, &msg);
  ASSERT_EQ(code, VAECONV_OK) << msg;
  EXPECT_TRUE(guards) << "a guard band was written";
  std::string first_bad;
  const int64_t bad = check_against_reference(x, y, c.pixels, c.channels, prm.gamma.data(),
                                              c.bias ? prm.bias.data() : nullptr, c.silu,
                                              &first_bad);
  EXPECT_EQ(bad, 0) << bad << " of " << c.pixels * c.channels << " elements wrong; first: "
                    << first_bad;
}

TEST(RmsNormGpu, EveryLanePlanAgainstReference) {
  VAECONV_REQUIRE_GPU();
  const int64_t channels[] = {8, 64, 96, 192, 384, 1024, 1032, 2048};
  const int64_t pixels[] = {1, 3, 1001, 4099};
  uint32_t seed = 1;
  for (int64_t ch : channels)
    for (int64_t p : pixels) {
      if (ch >= 1024 && p > 1001) continue;  // keeps the reference's time down
      for (int flags = 0; flags < 4; ++flags) run_case({p, ch, (flags & 1) != 0, (flags & 2) != 0}, false, seed++);
    }
}

TEST(RmsNormGpu, VaeShapesOddPixels) {
  VAECONV_REQUIRE_GPU();
  // The decoder's channel counts at odd image sizes (P = H W of one frame, or T H W).
  run_case({37 * 53, 96, false, true}, false, 101);
  run_case({2 * 19 * 23, 192, true, true}, false, 102);
  run_case({3 * 17 * 29, 384, false, false}, false, 103);
  run_case({129 * 65, 96, true, false}, false, 104);
}

TEST(RmsNormGpu, InPlace) {
  VAECONV_REQUIRE_GPU();
  run_case({1001, 96, true, true}, true, 201);
  run_case({513, 384, false, false}, true, 202);
  run_case({77, 2048, true, true}, true, 203);
}

TEST(RmsNormGpu, MorePixelsThanTheGridHasBlocksFor) {
  VAECONV_REQUIRE_GPU();
  // C = 8: one lane per pixel, 256 pixels per block, at most 65535 blocks: this many pixels make
  // every block walk a second time (and the last one stop part-way).
  run_case({65535LL * 256 + 999, 8, true, true}, false, 301);
}

TEST(RmsNormGpu, Past2To31Elements) {
  VAECONV_REQUIRE_GPU();
  constexpr int64_t kC = 384, kPatterns = 61;
  const int64_t pixels = ((int64_t(1) << 31) + (int64_t(1) << 22)) / kC | 1;  // odd
  ASSERT_GT(pixels * kC, int64_t(1) << 31);
  std::mt19937 rng(401);
  const Params prm = random_params(rng, kC);
  const std::vector<uint16_t> patterns = random_x(rng, kPatterns, kC);
  // The patterns' own run, checked against the reference.
  std::vector<uint16_t> want;
  bool guards = false;
  std::string msg;
  ASSERT_EQ(run_norm(patterns, kPatterns, kC, prm, true, true, false, &want, &guards, &msg), VAECONV_OK)
      << msg;
  std::string first_bad;
  ASSERT_EQ(check_against_reference(patterns, want, kPatterns, kC, prm.gamma.data(),
                                    prm.bias.data(), true, &first_bad),
            0)
      << first_bad;
  // The big run: row p holds pattern p % 61.
  const size_t row_bytes = size_t(kC) * 2;
  std::vector<uint16_t> x(size_t(pixels * kC));
  for (int64_t p = 0; p < pixels; ++p)
    std::memcpy(&x[size_t(p * kC)], &patterns[size_t((p % kPatterns) * kC)], row_bytes);
  std::vector<uint16_t> y;
  ASSERT_EQ(run_norm(x, pixels, kC, prm, true, true, false, &y, &guards, &msg), VAECONV_OK) << msg;
  EXPECT_TRUE(guards) << "a guard band was written";
  int64_t bad_rows = 0, first_bad_row = -1;
  for (int64_t p = 0; p < pixels; ++p)
    if (std::memcmp(&y[size_t(p * kC)], &want[size_t((p % kPatterns) * kC)], row_bytes) != 0) {
      if (first_bad_row < 0) first_bad_row = p;
      ++bad_rows;
    }
  EXPECT_EQ(bad_rows, 0) << bad_rows << " of " << pixels << " rows differ from their pattern's "
                         << "output; first: pixel " << first_bad_row << " (element offset "
                         << first_bad_row * kC << ")";
}

// Refusals happen before any device work (no GPU needed).
TEST(RmsNormGpu, RefusalsNameTheValue) {
  alignas(16) static uint16_t x[64 * 16];
  alignas(16) static uint16_t y[64 * 16];
  alignas(16) static float g[64];
  char buf[512];
  auto call = [&](const void* xp, int64_t p, int64_t c, const float* gp, const float* bp, void* yp) {
    buf[0] = 0;
    return vaeconv_rms_norm(xp, p, c, gp, bp, 0, yp, nullptr, buf, sizeof buf);
  };
  EXPECT_EQ(call(x, 4, 12, g, nullptr, y), VAECONV_UNSUPPORTED);
  EXPECT_NE(std::string(buf).find("C = 12"), std::string::npos) << buf;
  EXPECT_EQ(call(x, 4, 0, g, nullptr, y), VAECONV_INVALID_ARGUMENT);
  EXPECT_NE(std::string(buf).find("channels"), std::string::npos) << buf;
  EXPECT_EQ(call(nullptr, 4, 8, g, nullptr, y), VAECONV_INVALID_ARGUMENT);
  EXPECT_NE(std::string(buf).find("x is null"), std::string::npos) << buf;
  EXPECT_EQ(call(x, 4, 8, nullptr, nullptr, y), VAECONV_INVALID_ARGUMENT);
  EXPECT_NE(std::string(buf).find("gamma is null"), std::string::npos) << buf;
  EXPECT_EQ(call(x, 0, 8, g, nullptr, y), VAECONV_INVALID_ARGUMENT);
  EXPECT_NE(std::string(buf).find("pixels"), std::string::npos) << buf;
  EXPECT_EQ(call(x + 1, 4, 8, g, nullptr, y), VAECONV_MISALIGNED);
  EXPECT_NE(std::string(buf).find("x must be 16-byte aligned"), std::string::npos) << buf;
  EXPECT_EQ(call(x, 4, 8, g, g + 1, y), VAECONV_MISALIGNED);
  EXPECT_NE(std::string(buf).find("bias"), std::string::npos) << buf;
  EXPECT_EQ(call(x, 16, 8, g, nullptr, x + 8), VAECONV_OVERLAP);
  EXPECT_NE(std::string(buf).find("overlaps x"), std::string::npos) << buf;
  EXPECT_EQ(call(x, int64_t(1) << 62, 64, g, nullptr, y), VAECONV_OVERFLOW);
  EXPECT_NE(std::string(buf).find("overflow"), std::string::npos) << buf;
}

}  // namespace
}  // namespace vaeconv::test
