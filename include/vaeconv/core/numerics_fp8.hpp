// vaeconv/core/numerics_fp8.hpp — FP8 e4m3 <-> float conversion, identical on host and device.
//
// Two e4m3 dialects exist and vaeconv meets both:
//   * OCP "e4m3fn" (the library's FP8 format, DType::kFP8E4M3; NVIDIA Hopper/Blackwell, gfx950):
//     bias 7, max finite 448 (0x7E), NaN = 0x7F / 0xFF, 0x80 = -0, no Inf.
//   * AMD gfx942 (MI300) "e4m3fnuz": bias 8, max finite 240 (0x7F), 0x80 is the only NaN,
//     no -0, no Inf.
// Relation between them (AMD's notes on gfx942 FP8): both share the same sign/exponent/mantissa
// field layout and differ only in bias, so the same byte read as FNUZ is exactly half its e4m3fn
// value — for every finite e4m3fn code except 0x80 (-0 in fn, NaN in fnuz). The fn NaN codes
// 0x7F/0xFF are not covered either (0x7F is 240 and 0xFF is -240 in fnuz). So fn operands can be
// fed to a gfx942 FNUZ MFMA unchanged if a factor of 2 is folded into the scale, provided 0x80
// has been mapped to 0x00 and no NaN is present.
//
// Encoders are round-to-nearest-even and SATURATING (finite overflow and +-Inf clamp to the
// largest finite value, the convention of quantisation pipelines, since neither format has an
// Inf). They work on the binary32 bit pattern with integer arithmetic (no tables, no std::
// calls), so they run unchanged in device code; the one float operation, the add that rounds a
// subnormal target code (e4m3_encode_magnitude), relies only on the default round-to-nearest-even
// mode and is exact whether or not denormals are flushed.
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"
#include "vaeconv/core/numerics_bf16.hpp"  // detail::float_as_bits / bits_as_float

namespace vaeconv {

inline constexpr float kE4M3FnMax = 448.0f;    // 0x7E: 2^8 * 1.75
inline constexpr float kE4M3FnuzMax = 240.0f;  // 0x7F: 2^7 * 1.875

VAECONV_HD constexpr bool e4m3fn_is_nan(std::uint8_t b) { return (b & 0x7Fu) == 0x7Fu; }
VAECONV_HD constexpr bool e4m3fnuz_is_nan(std::uint8_t b) { return b == 0x80u; }

namespace detail {

// Value of the 7-bit magnitude `mag` (exponent field e, mantissa m) of an e4m3 code with the
// given exponent bias, as a non-negative float. NaN codes are handled by the callers.
VAECONV_HD inline float e4m3_magnitude_to_float(std::uint32_t mag, int bias) {
  const std::uint32_t e = mag >> 3, m = mag & 7u;
  if (e == 0) {
    // Subnormal: m * 2^(1 - bias - 3). The product of a small integer and a power of two is
    // exact, and the result (>= 2^-10) is far from the float denormal range, so FTZ is harmless.
    const float scale = bits_as_float(std::uint32_t(127 + 1 - bias - 3) << 23);
    return float(m) * scale;
  }
  // Normal: rebias the exponent and place the 3 mantissa bits at the top of the float mantissa.
  return bits_as_float(((e + std::uint32_t(127 - bias)) << 23) | (m << 20));
}

// Unsaturated RNE encoding of a non-NaN magnitude `a` (binary32 bits with the sign cleared) into
// an e4m3 magnitude code with the given bias. The result may exceed 0x7F (or be the NaN pattern);
// callers saturate. Inf arrives here as a large finite-looking pattern and saturates as well.
// Both encodings below are computed and one selected, branch-free: on the GPU the FP8-output
// epilogue runs this per element, where branches became divergent exec-mask blocks. A NaN `a`
// gives some code (no undefined shift) that the callers replace.
VAECONV_HD inline std::uint32_t e4m3_encode_magnitude(std::uint32_t a, int bias) {
  const std::uint32_t exp_f = a >> 23;
  const std::uint32_t min_normal_exp_f = std::uint32_t(127 - bias + 1);  // float exp of 2^(1-bias)
  // Normal in the target: rebias in place, so the code is just bits [30:20] of r. Rounding by
  // adding (half - 1) + lowest-kept-bit is RNE; a mantissa carry bumps the exponent, which is
  // the right next binade (and may run past the max code: saturated by the caller). (Below the
  // normal range r wraps; that result is not selected.)
  const std::uint32_t r = a - (std::uint32_t(127 - bias) << 23);
  const std::uint32_t normal = (r + 0x7FFFFu + ((r >> 20) & 1u)) >> 20;
  // Subnormal (or zero) in the target: code = round(value / 2^(1-bias-3)), RNE. Adding
  // 2^(21-bias) to the value in binary32 rounds it (RNE, the float add's own rounding) to a
  // multiple of that float's ulp, 2^(21-bias-23) = 2^(1-bias-3): the code, which the sum's low
  // mantissa bits then hold. value < 2^(1-bias) keeps the sum below 2^(22-bias) (one binade, no
  // renormalising); rounding up from the largest subnormal gives code 0x08, the smallest normal,
  // which is correct. Float zeros and denormals give 0 whether or not the target flushes them
  // (the sum is normal). (Above the subnormal range the sum is not selected.)
  const std::uint32_t magic = std::uint32_t(127 + 21 - bias) << 23;  // 2^(21-bias)
  const std::uint32_t subnormal =
      detail::float_as_bits(bits_as_float(a) + bits_as_float(magic)) - magic;
  return exp_f >= min_normal_exp_f ? normal : subnormal;
}

}  // namespace detail

// ---- OCP e4m3fn (bias 7) --------------------------------------------------------------------

// NaN codes decode to a quiet float NaN carrying the code's sign; 0x80 decodes to -0.0f.
VAECONV_HD inline float e4m3fn_to_float(std::uint8_t b) {
  const std::uint32_t sign = std::uint32_t(b & 0x80u) << 24;
  if (e4m3fn_is_nan(b)) return detail::bits_as_float(sign | 0x7FC00000u);
  const float mag = detail::e4m3_magnitude_to_float(b & 0x7Fu, 7);
  return detail::bits_as_float(sign | detail::float_as_bits(mag));
}

// RNE, saturating to +-448 (0x7E / 0xFE) for finite overflow and +-Inf. NaN keeps its sign:
// +NaN -> 0x7F, -NaN -> 0xFF (both are e4m3fn NaNs). Signed zero is kept: -0.0f -> 0x80, and
// negative values that round to zero also give 0x80.
VAECONV_HD inline std::uint8_t float_to_e4m3fn(float f) {
  const std::uint32_t u = detail::float_as_bits(f);
  const std::uint32_t sign = (u >> 24) & 0x80u, a = u & 0x7FFFFFFFu;
  std::uint32_t mag = detail::e4m3_encode_magnitude(a, 7);
  mag = mag > 0x7Eu ? 0x7Eu : mag;  // also catches the NaN pattern 0x7F reached by rounding (464+)
  return std::uint8_t(sign | (a > 0x7F800000u ? 0x7Fu : mag));  // a select, not a branch
}

// ---- AMD gfx942 e4m3fnuz (bias 8) -----------------------------------------------------------

// 0x80 (the only NaN) decodes to a positive quiet float NaN (FNUZ NaN has no sign).
VAECONV_HD inline float e4m3fnuz_to_float(std::uint8_t b) {
  if (e4m3fnuz_is_nan(b)) return detail::bits_as_float(0x7FC00000u);
  const std::uint32_t sign = std::uint32_t(b & 0x80u) << 24;
  const float mag = detail::e4m3_magnitude_to_float(b & 0x7Fu, 8);
  return detail::bits_as_float(sign | detail::float_as_bits(mag));
}

// RNE, saturating to +-240 (0x7F / 0xFF) for finite overflow and +-Inf. Any NaN -> 0x80.
// FNUZ has no -0 (0x80 is NaN), so -0.0f and negative values that round to zero give 0x00.
VAECONV_HD inline std::uint8_t float_to_e4m3fnuz(float f) {
  const std::uint32_t u = detail::float_as_bits(f);
  const std::uint32_t sign = (u >> 24) & 0x80u, a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return std::uint8_t(0x80u);
  std::uint32_t mag = detail::e4m3_encode_magnitude(a, 8);
  if (mag > 0x7Fu) mag = 0x7Fu;
  return mag == 0u ? std::uint8_t(0u) : std::uint8_t(sign | mag);
}

}  // namespace vaeconv
