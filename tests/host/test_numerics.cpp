// Host tests for numerics_bf16.hpp and numerics_fp8.hpp: exhaustive decode/re-encode over every
// code, rounding ties, saturation, NaN and signed zero. Expected values come from formulas written
// independently of the headers (ldexp on the field values), not from the headers' bit tricks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"

namespace {

using namespace vaeconv;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
bool sign_of(float f) { return (bits_of(f) >> 31) != 0; }

// ---- bf16 ------------------------------------------------------------------------------------

TEST(Bf16Numerics, AllCodesRoundTrip) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const uint16_t code = uint16_t(c);
    const float f = bf16_to_float(code);
    ASSERT_EQ(bits_of(f), c << 16) << "decode " << c;
    const uint16_t back = float_to_bf16(f);
    if ((c & 0x7F80u) == 0x7F80u && (c & 0x7Fu) != 0) {  // NaN code
      ASSERT_TRUE(std::isnan(bf16_to_float(back))) << "code " << c;
      ASSERT_EQ(back & 0x8000u, c & 0x8000u) << "NaN sign, code " << c;
    } else {
      ASSERT_EQ(back, code) << "code " << c;
    }
  }
}

TEST(Bf16Numerics, TiesToEven) {
  EXPECT_EQ(float_to_bf16(float_of(0x3F808000u)), 0x3F80u);  // tie, kept part even: down
  EXPECT_EQ(float_to_bf16(float_of(0x3F818000u)), 0x3F82u);  // tie, kept part odd: up
  EXPECT_EQ(float_to_bf16(float_of(0x3F808001u)), 0x3F81u);  // above the tie: up
  EXPECT_EQ(float_to_bf16(float_of(0x3F807FFFu)), 0x3F80u);  // below the tie: down
  EXPECT_EQ(float_to_bf16(float_of(0xBF818000u)), 0xBF82u);  // negative mirrors positive
  EXPECT_EQ(float_to_bf16(float_of(0x00008000u)), 0x0000u);  // denormal tie to even zero
  EXPECT_EQ(float_to_bf16(float_of(0x00018000u)), 0x0002u);  // denormal tie, odd: up
}

TEST(Bf16Numerics, RoundUpAcrossExponent) {
  EXPECT_EQ(float_to_bf16(float_of(0x3FFFFFFFu)), 0x4000u);  // 1.999.. -> 2.0
  EXPECT_EQ(float_to_bf16(float_of(0x3FFF8000u)), 0x4000u);  // tie at odd 0x3FFF -> 0x4000
  EXPECT_EQ(float_to_bf16(float_of(0x007FFFFFu)), 0x0080u);  // largest denormal -> min normal
}

TEST(Bf16Numerics, OverflowAndInf) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80u);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::max()), 0xFF80u);
  EXPECT_EQ(float_to_bf16(float_of(0x7F7F8000u)), 0x7F80u);  // tie above max bf16 (odd) -> Inf
  EXPECT_EQ(float_to_bf16(float_of(0x7F7F7FFFu)), 0x7F7Fu);  // just below the tie: max finite
  EXPECT_EQ(float_to_bf16(inf), 0x7F80u);
  EXPECT_EQ(float_to_bf16(-inf), 0xFF80u);
  EXPECT_TRUE(std::isinf(bf16_to_float(0x7F80u)));
}

TEST(Bf16Numerics, NaNPreserved) {
  const uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u,
                           0x7FFFFFFFu, 0xFFFFFFFFu, 0x7F80FFFFu, 0x7FBFFFFFu};
  for (uint32_t n : nans) {
    const uint16_t b = float_to_bf16(float_of(n));
    EXPECT_TRUE(std::isnan(bf16_to_float(b))) << std::hex << n << " -> " << b;
    EXPECT_EQ(b & 0x8000u, (n >> 16) & 0x8000u) << std::hex << n;
  }
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::quiet_NaN()), 0x7FC0u);
}

TEST(Bf16Numerics, SignedZero) {
  EXPECT_EQ(float_to_bf16(0.0f), 0x0000u);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000u);
  EXPECT_TRUE(sign_of(bf16_to_float(0x8000u)));
  EXPECT_EQ(bf16_to_float(0x8000u), 0.0f);
}

// ---- e4m3 reference formula --------------------------------------------------------------------

// value = (-1)^s * 2^(e - bias) * (1 + m/8), or (-1)^s * 2^(1 - bias) * (m/8) when e == 0.
double e4m3_formula(uint8_t code, int bias) {
  const int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
  const double mag = e == 0 ? std::ldexp(m / 8.0, 1 - bias) : std::ldexp(1.0 + m / 8.0, e - bias);
  return s ? -mag : mag;
}

// Midpoints of every pair of adjacent positive codes (lo, lo + 1) round to the even code, which
// for adjacent codes is the one with an even mantissa field (even code number). Just above or
// below the midpoint rounds to the nearer code. Also checks the negated midpoints.
template <class Enc>
void check_adjacent_ties(Enc enc, int bias, uint8_t max_code, uint8_t neg_bit_zero_code) {
  for (int lo = 0; lo < max_code; ++lo) {
    const double a = e4m3_formula(uint8_t(lo), bias), b = e4m3_formula(uint8_t(lo + 1), bias);
    const float mid = float((a + b) / 2);  // exact: a and b have few significant bits
    ASSERT_EQ(double(mid), (a + b) / 2);
    const uint8_t even = uint8_t((lo % 2 == 0) ? lo : lo + 1);
    EXPECT_EQ(enc(mid), even) << "mid of " << lo;
    EXPECT_EQ(enc(std::nextafter(mid, 0.0f)), uint8_t(lo)) << "below mid of " << lo;
    EXPECT_EQ(enc(std::nextafter(mid, 1e9f)), uint8_t(lo + 1)) << "above mid of " << lo;
    const uint8_t neg_even = even == 0 ? neg_bit_zero_code : uint8_t(even | 0x80);
    EXPECT_EQ(enc(-mid), neg_even) << "negative mid of " << lo;
  }
}

// Independent encoder for cross-checking: pick the nearest of the sorted positive codes by search
// (ties to the even code), clamp beyond the max code. `neg_zero` is the code for a negative value
// that rounds to zero. Sweeps floats with a stride over the whole finite range, both signs.
template <class Enc>
void check_against_search(Enc enc, int bias, uint8_t max_code, uint8_t neg_zero) {
  double vals[128];
  for (int c = 0; c <= max_code; ++c) vals[c] = e4m3_formula(uint8_t(c), bias);
  auto ref = [&](float x) -> uint8_t {
    const double a = std::fabs(double(x));
    int code;
    if (a >= vals[max_code]) {
      code = max_code;
    } else {
      const int hi = int(std::upper_bound(vals, vals + max_code + 1, a) - vals);  // vals[hi] > a
      const int lo = hi - 1;                                                       // vals[lo] <= a
      const double dlo = a - vals[lo], dhi = vals[hi] - a;
      code = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
    }
    if (!std::signbit(x)) return uint8_t(code);
    return code == 0 ? neg_zero : uint8_t(code | 0x80);
  };
  for (uint64_t u = 0; u < 0x7F800000u; u += 997) {
    const float x = float_of(uint32_t(u));
    ASSERT_EQ(enc(x), ref(x)) << std::hexfloat << x;
    ASSERT_EQ(enc(-x), ref(-x)) << std::hexfloat << -x;
  }
}

// ---- e4m3fn ------------------------------------------------------------------------------------

TEST(Fp8E4M3Fn, DecodeAllCodes) {
  for (int c = 0; c < 256; ++c) {
    const uint8_t code = uint8_t(c);
    const float f = e4m3fn_to_float(code);
    if ((c & 0x7F) == 0x7F) {
      EXPECT_TRUE(e4m3fn_is_nan(code));
      EXPECT_TRUE(std::isnan(f)) << c;
      EXPECT_EQ(sign_of(f), (c & 0x80) != 0) << c;
      continue;
    }
    EXPECT_FALSE(e4m3fn_is_nan(code));
    EXPECT_EQ(double(f), e4m3_formula(code, 7)) << "code " << c;
    EXPECT_EQ(sign_of(f), (c & 0x80) != 0) << "sign of code " << c;  // includes 0x80 = -0
  }
  EXPECT_EQ(e4m3fn_to_float(0x7E), kE4M3FnMax);
  EXPECT_EQ(e4m3fn_to_float(0xFE), -kE4M3FnMax);
  EXPECT_EQ(e4m3fn_to_float(0x01), std::ldexp(1.0f, -9));
}

TEST(Fp8E4M3Fn, EncodeRoundTripsAllCodes) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;
    EXPECT_EQ(float_to_e4m3fn(e4m3fn_to_float(uint8_t(c))), uint8_t(c)) << "code " << c;
  }
  EXPECT_EQ(float_to_e4m3fn(e4m3fn_to_float(0x80)), 0x80u);
}

TEST(Fp8E4M3Fn, TiesToEven) { check_adjacent_ties(float_to_e4m3fn, 7, 0x7E, 0x80); }

TEST(Fp8E4M3Fn, EncodeMatchesNearestSearch) {
  check_against_search(float_to_e4m3fn, 7, 0x7E, 0x80);
}

TEST(Fp8E4M3Fn, Saturation) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {448.0f, 449.0f, 464.0f, 479.0f, 480.0f, 500.0f, 1e6f, 3.0e38f, inf}) {
    EXPECT_EQ(float_to_e4m3fn(v), 0x7Eu) << v;
    EXPECT_EQ(float_to_e4m3fn(-v), 0xFEu) << -v;
  }
  EXPECT_EQ(float_to_e4m3fn(447.0f), 0x7Eu);
  EXPECT_EQ(float_to_e4m3fn(415.0f), 0x7Du);  // below the 416/448 midpoint
}

TEST(Fp8E4M3Fn, NaNAndZero) {
  EXPECT_EQ(float_to_e4m3fn(std::numeric_limits<float>::quiet_NaN()), 0x7Fu);
  EXPECT_EQ(float_to_e4m3fn(-std::numeric_limits<float>::quiet_NaN()), 0xFFu);
  EXPECT_EQ(float_to_e4m3fn(float_of(0x7F800001u)), 0x7Fu);  // signalling NaN
  EXPECT_EQ(float_to_e4m3fn(0.0f), 0x00u);
  EXPECT_EQ(float_to_e4m3fn(-0.0f), 0x80u);
  EXPECT_EQ(float_to_e4m3fn(1e-30f), 0x00u);
  EXPECT_EQ(float_to_e4m3fn(-1e-30f), 0x80u);
  EXPECT_EQ(float_to_e4m3fn(float_of(1u)), 0x00u);  // float denormal
}

TEST(Fp8E4M3Fn, SmallestSubnormal) {
  const float min_sub = std::ldexp(1.0f, -9);
  EXPECT_EQ(float_to_e4m3fn(min_sub), 0x01u);
  EXPECT_EQ(float_to_e4m3fn(min_sub / 2), 0x00u);   // tie -> even (zero)
  EXPECT_EQ(float_to_e4m3fn(-min_sub / 2), 0x80u);  // tie -> -0
  EXPECT_EQ(float_to_e4m3fn(std::nextafter(min_sub / 2, 1.0f)), 0x01u);
  EXPECT_EQ(float_to_e4m3fn(min_sub * 1.5f), 0x02u);  // tie between 1 and 2 -> 2
  EXPECT_EQ(float_to_e4m3fn(std::ldexp(7.5f, -9)), 0x08u);  // largest subnormal tie -> min normal
}

// ---- e4m3fnuz ----------------------------------------------------------------------------------

TEST(Fp8E4M3Fnuz, DecodeAllCodes) {
  for (int c = 0; c < 256; ++c) {
    const uint8_t code = uint8_t(c);
    const float f = e4m3fnuz_to_float(code);
    if (c == 0x80) {
      EXPECT_TRUE(e4m3fnuz_is_nan(code));
      EXPECT_TRUE(std::isnan(f));
      continue;
    }
    EXPECT_FALSE(e4m3fnuz_is_nan(code));
    EXPECT_EQ(double(f), e4m3_formula(code, 8)) << "code " << c;
  }
  EXPECT_EQ(e4m3fnuz_to_float(0x7F), kE4M3FnuzMax);
  EXPECT_EQ(e4m3fnuz_to_float(0xFF), -kE4M3FnuzMax);
  EXPECT_EQ(e4m3fnuz_to_float(0x01), std::ldexp(1.0f, -10));
}

TEST(Fp8E4M3Fnuz, EncodeRoundTripsAllCodes) {
  for (int c = 0; c < 256; ++c) {
    if (c == 0x80) continue;
    EXPECT_EQ(float_to_e4m3fnuz(e4m3fnuz_to_float(uint8_t(c))), uint8_t(c)) << "code " << c;
  }
}

TEST(Fp8E4M3Fnuz, TiesToEven) { check_adjacent_ties(float_to_e4m3fnuz, 8, 0x7F, 0x00); }

TEST(Fp8E4M3Fnuz, EncodeMatchesNearestSearch) {
  check_against_search(float_to_e4m3fnuz, 8, 0x7F, 0x00);
}

TEST(Fp8E4M3Fnuz, Saturation) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {240.0f, 241.0f, 247.0f, 248.0f, 449.0f, 464.0f, 500.0f, 1e6f, 3.0e38f, inf}) {
    EXPECT_EQ(float_to_e4m3fnuz(v), 0x7Fu) << v;
    EXPECT_EQ(float_to_e4m3fnuz(-v), 0xFFu) << -v;
  }
}

TEST(Fp8E4M3Fnuz, NaNAndZero) {
  EXPECT_EQ(float_to_e4m3fnuz(std::numeric_limits<float>::quiet_NaN()), 0x80u);
  EXPECT_EQ(float_to_e4m3fnuz(-std::numeric_limits<float>::quiet_NaN()), 0x80u);
  EXPECT_EQ(float_to_e4m3fnuz(float_of(0xFF800001u)), 0x80u);
  EXPECT_EQ(float_to_e4m3fnuz(0.0f), 0x00u);
  EXPECT_EQ(float_to_e4m3fnuz(-0.0f), 0x00u);  // no negative zero in FNUZ
  EXPECT_EQ(float_to_e4m3fnuz(-1e-30f), 0x00u);
  EXPECT_FALSE(sign_of(e4m3fnuz_to_float(0x00)));
}

TEST(Fp8E4M3Fnuz, SmallestSubnormal) {
  const float min_sub = std::ldexp(1.0f, -10);
  EXPECT_EQ(float_to_e4m3fnuz(min_sub), 0x01u);
  EXPECT_EQ(float_to_e4m3fnuz(min_sub / 2), 0x00u);   // tie -> even (zero)
  EXPECT_EQ(float_to_e4m3fnuz(-min_sub / 2), 0x00u);  // tie -> zero, never 0x80
  EXPECT_EQ(float_to_e4m3fnuz(-min_sub), 0x81u);
  EXPECT_EQ(float_to_e4m3fnuz(std::nextafter(min_sub / 2, 1.0f)), 0x01u);
  EXPECT_EQ(float_to_e4m3fnuz(std::ldexp(7.5f, -10)), 0x08u);
}

TEST(Fp8E4M3Fnuz, HalfOfE4M3FnValue) {
  for (int c = 0; c < 256; ++c) {
    const uint8_t code = uint8_t(c);
    if (c == 0x80 || e4m3fn_is_nan(code)) continue;
    EXPECT_EQ(e4m3fnuz_to_float(code), 0.5f * e4m3fn_to_float(code)) << "code " << c;
  }
}

}  // namespace
