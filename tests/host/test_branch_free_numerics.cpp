// Host tests: the select forms of the epilogue's conversions (float_to_bf16, float_to_e4m3fn,
// float_to_e4m3fnuz, quantize_e4m3fn) give the same bits as the branch forms they replaced, for
// every binary32 input. The branch forms are kept here, verbatim, as the reference: the GPU
// epilogue's output bits (and the host reference built from the same headers) must not change.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"

namespace {

using namespace vaeconv;

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// ---- The branch forms, as they were ----------------------------------------------------------
uint16_t branch_float_to_bf16(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x0040u);
  const uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(rounded >> 16);
}
uint32_t branch_encode_magnitude(uint32_t a, int bias) {
  const uint32_t exp_f = a >> 23;
  const uint32_t min_normal_exp_f = uint32_t(127 - bias + 1);
  if (exp_f >= min_normal_exp_f) {
    const uint32_t r = a - (uint32_t(127 - bias) << 23);
    return (r + 0x7FFFFu + ((r >> 20) & 1u)) >> 20;
  }
  const uint32_t shift = 20u + min_normal_exp_f - exp_f;
  if (shift > 24u) return 0u;
  const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
  const uint32_t half_minus_1 = (1u << (shift - 1u)) - 1u;
  return (mant + half_minus_1 + ((mant >> shift) & 1u)) >> shift;
}
uint8_t branch_float_to_e4m3fn(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t sign = (u >> 24) & 0x80u, a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return uint8_t(sign | 0x7Fu);
  uint32_t mag = branch_encode_magnitude(a, 7);
  if (mag > 0x7Eu) mag = 0x7Eu;
  return uint8_t(sign | mag);
}
uint8_t branch_float_to_e4m3fnuz(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t sign = (u >> 24) & 0x80u, a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return uint8_t(0x80u);
  uint32_t mag = branch_encode_magnitude(a, 8);
  if (mag > 0x7Fu) mag = 0x7Fu;
  return mag == 0u ? uint8_t(0u) : uint8_t(sign | mag);
}
uint8_t branch_quantize_e4m3fn(float x, float scale, uint8_t nan_code) {
  const float q = x / scale;
  if (q != q) return nan_code;
  const uint8_t b = branch_float_to_e4m3fn(q);
  return b == 0x80u ? uint8_t(0u) : b;
}

// Every binary32 pattern, with a count of mismatches and the first one (so a failure names it).
template <class F>
void every_float(F&& check) {
  uint64_t bad = 0;
  uint32_t first = 0;
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; ++u) {
    if (!check(uint32_t(u))) {
      if (bad == 0) first = uint32_t(u);
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << "first mismatch at input bits 0x" << std::hex << first;
}

TEST(BranchFreeNumerics, Bf16EveryFloat) {
  every_float([](uint32_t u) {
    const float f = float_of(u);
    return float_to_bf16(f) == branch_float_to_bf16(f);
  });
}

TEST(BranchFreeNumerics, E4m3fnEveryFloat) {
  every_float([](uint32_t u) {
    const float f = float_of(u);
    return float_to_e4m3fn(f) == branch_float_to_e4m3fn(f);
  });
}

TEST(BranchFreeNumerics, E4m3fnuzEveryFloat) {
  every_float([](uint32_t u) {
    const float f = float_of(u);
    return float_to_e4m3fnuz(f) == branch_float_to_e4m3fnuz(f);
  });
}

// The quantizer at scale 1 over every input (its division is exact) with gfx950's / NVIDIA's
// NaN code, and at scales whose quotients cross the subnormal, normal and saturating ranges with
// every NaN code over a stride of the inputs (the division is the same expression in both
// forms; only the NaN / -0 selects changed).
TEST(BranchFreeNumerics, QuantizeEveryFloatAtScaleOne) {
  every_float([](uint32_t u) {
    const float x = float_of(u);
    return quantize_e4m3fn(x, 1.f, 0x7F) == branch_quantize_e4m3fn(x, 1.f, 0x7F);
  });
}

TEST(BranchFreeNumerics, QuantizeAtScales) {
  const float scales[] = {0.37f, 3.0e-3f, 1.0f / 448.0f, 7.5f, 1.0e-30f, 2.5e30f,
                          float_of(0x7FC00000u), float_of(0x7F800000u), 0.f, -1.25f};
  for (float scale : scales)
    for (uint8_t nan_code : {uint8_t(0x00), uint8_t(0x7F), uint8_t(0x80)}) {
      uint64_t bad = 0, checked = 0;
      for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 251) {
        const float x = float_of(uint32_t(u));
        ++checked;
        if (quantize_e4m3fn(x, scale, nan_code) != branch_quantize_e4m3fn(x, scale, nan_code))
          ++bad;
      }
      EXPECT_GT(checked, 17000000u);
      EXPECT_EQ(bad, 0u) << "scale " << scale << " nan code " << int(nan_code);
    }
}

// The checks can fail: a reference with one rounding changed (ties away from zero) is caught.
TEST(BranchFreeNumerics, ComparisonCatchesARoundingChange) {
  uint64_t differ = 0;
  for (uint32_t u = 0x3F800000u; u < 0x3F800000u + (1u << 21); ++u) {
    const float f = float_of(u);
    const uint16_t away = uint16_t((u + 0x8000u) >> 16);
    if (away != float_to_bf16(f)) ++differ;
  }
  EXPECT_GT(differ, 0u);
}

}  // namespace
