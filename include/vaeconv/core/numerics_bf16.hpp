// vaeconv/core/numerics_bf16.hpp — bfloat16 <-> float conversion, identical on host and device.
//
// The CPU reference and the kernels both convert through these functions, so a reference result
// and a kernel result are built from bit-identical operands. Everything is integer manipulation
// of the IEEE-754 binary32 encoding: no rounding-mode state, no std:: calls, no lookup tables,
// and no dependence on -ffast-math (which may assume NaN/Inf never occur).
#pragma once
#include <cstdint>
#include <cstring>

#include "vaeconv/core/config.hpp"

// __builtin_bit_cast is available in g++ >= 11, clang >= 9 (hipcc, both passes) and nvcc's
// front end (both passes, checked with CUDA 13). It avoids type punning through unions, which is
// undefined behaviour in C++. The memcpy fallback is still well defined and is also accepted in
// device code by CUDA and HIP; compilers fold it into a register move.
#if defined(__has_builtin)
#if __has_builtin(__builtin_bit_cast)
#define VAECONV_HAS_BUILTIN_BIT_CAST 1
#endif
#endif

namespace vaeconv {
namespace detail {

VAECONV_HD inline std::uint32_t float_as_bits(float f) {
#if defined(VAECONV_HAS_BUILTIN_BIT_CAST)
  return __builtin_bit_cast(std::uint32_t, f);
#else
  std::uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

VAECONV_HD inline float bits_as_float(std::uint32_t u) {
#if defined(VAECONV_HAS_BUILTIN_BIT_CAST)
  return __builtin_bit_cast(float, u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

}  // namespace detail

// bf16 is the upper half of a binary32, so widening is exact: shift the bits into place.
// NaN payloads (including signalling NaNs) are carried over unchanged.
VAECONV_HD inline float bf16_to_float(std::uint16_t bits) {
  return detail::bits_as_float(std::uint32_t(bits) << 16);
}

// Round-to-nearest-even narrowing.
//  * NaN: keep the sign and the upper payload bits, and force the quiet bit (0x0040). Forcing it
//    matters: a NaN whose payload lies only in the low 16 bits would otherwise truncate to the
//    Inf pattern 0x7F80, and the rounding add below could carry a NaN into the sign bit.
//  * Everything else (finite and +-Inf): add 0x7FFF plus the lowest kept bit, then truncate.
//    Below the tie this never carries, above it always does, and on an exact tie it carries only
//    when the kept part is odd: that is RNE. A carry out of the mantissa increments the exponent,
//    which is the correct next binade, and from the largest binade it yields exactly the Inf
//    pattern 0x7F80 (IEEE overflow under RNE). Inf itself has zero low bits and is unchanged.
//    The sum cannot wrap: the largest non-NaN input 0xFF800000 plus 0x8000 stays below 2^32.
// Both results are computed and one selected (a NaN's sum, which may wrap, is discarded): on the
// GPU a select, where an early return became a divergent branch per converted value.
VAECONV_HD inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t u = detail::float_as_bits(f);
  const std::uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u);
  const std::uint32_t quieted = u | 0x00400000u;
  return std::uint16_t(((u & 0x7FFFFFFFu) > 0x7F800000u ? quieted : rounded) >> 16);
}

}  // namespace vaeconv
