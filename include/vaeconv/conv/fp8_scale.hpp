// vaeconv/conv/fp8_scale.hpp — the FP8 scale rule, shared by the device quantizer, the weight
// packing, the FP8-output epilogue and the host reference quantizer (so all agree bit for bit).
//
//   scale = amax / 448   (amax = max |x| over the tensor or channel)
//   scale = 1            when amax is 0
//   scale = NaN          when amax is not finite (the tensor holds a NaN or an Inf: no scale
//                        represents it, and a NaN scale makes every output that reads it NaN)
//   q     = e4m3fn(x / scale), round to nearest even, saturating: a finite overflow and +-Inf
//           become +-448 (0x7E / 0xFE; e4m3fn has no Inf: the OCP "satfinite" convention), with
//           two exceptions that keep the bytes readable by gfx942's FNUZ instructions as they are
//           (arch/fp8_fnuz.hpp):
//           a result that rounds to -0 is stored as +0 (0x00, never 0x80), on every target, and
//           a NaN (x, or a NaN scale) is stored as `nan_code`:
//             - the FP8-output epilogue passes its architecture's kFp8NanCode, the code the
//               target's matrix instructions read as NaN (0x7F on gfx950 and NVIDIA, the FNUZ NaN
//               0x80 on gfx942), so a NaN result stays NaN for every consumer of the output;
//             - the quantizer keeps the default, 0x00: a NaN or Inf input makes its scale NaN, so
//               the NaN travels in the scale (every byte is then 0x00); the weight packer
//               refuses NaN and Inf weights, so its bytes never meet this case.
//           So the quantizer and the packer emit 253 of the 256 codes (none of 0x80 / 0x7F /
//           0xFF), and an FP8 output those 253 plus its target's NaN code.
#pragma once
#include <cstdint>
#include <vector>

#include "vaeconv/core/config.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"

namespace vaeconv {

VAECONV_HD inline float fp8_scale_for_amax(float amax) {
  if (!(amax <= 3.4028234663852886e38f)) return detail::bits_as_float(0x7FC00000u);  // NaN, +Inf
  return amax > 0.f ? amax / kE4M3FnMax : 1.f;
}

// The byte the quantizer stores for a NaN (its NaN is in the scale; see the top of the file).
inline constexpr uint8_t kFp8NanInScale = 0x00u;

// One element: e4m3fn(x / scale), -0 stored as 0x00 and a NaN as nan_code (see the top of the file).
// float_to_e4m3fn's encoding and saturation with the two exceptions applied to its parts, so that
// NaN is tested once: selects, no branch (the FP8-output epilogue runs this per element).
VAECONV_HD inline uint8_t quantize_e4m3fn(float x, float scale, uint8_t nan_code = kFp8NanInScale) {
  const uint32_t u = detail::float_as_bits(x / scale);
  const uint32_t sign = (u >> 24) & 0x80u, a = u & 0x7FFFFFFFu;
  uint32_t mag = detail::e4m3_encode_magnitude(a, 7);
  mag = mag > 0x7Eu ? 0x7Eu : mag;                     // satfinite, as float_to_e4m3fn
  // A -0 result stored as +0: the sign kept only with a nonzero magnitude, whose bit 7 of
  // mag + 0x7F (mag <= 0x7E) says so, without a compare.
  const uint32_t code = mag | (sign & (mag + 0x7Fu));
  return a > 0x7F800000u ? nan_code : uint8_t(code);   // a NaN quotient
}

// The host reference of quantize_fp8 (api/quantize.hpp): bf16 bits in, e4m3fn bytes and scale out.
// A NaN element counts as an infinite magnitude (arch/device_reduce.hpp's AbsBf16 does the same).
inline float quantize_fp8_host(const uint16_t* x, int64_t n, uint8_t* y) {
  float amax = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = bf16_to_float(x[i]);
    const float a = v != v ? detail::bits_as_float(0x7F800000u) : (v < 0.f ? -v : v);
    if (a > amax) amax = a;
  }
  const float scale = fp8_scale_for_amax(amax);
  for (int64_t i = 0; i < n; ++i) y[i] = quantize_e4m3fn(bf16_to_float(x[i]), scale);
  return scale;
}

}  // namespace vaeconv
