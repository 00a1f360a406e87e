// vaeconv/conv/fp8_scale.hpp — the FP8 scale rule, shared by the device quantizer, the weight
// packing, the FP8-output epilogue and the host reference quantizer (so all agree bit for bit).
//
//   scale = amax / 448   (amax = max |x| over the tensor or channel)
//   scale = 1            when amax is 0
//   scale = NaN          when amax is not finite (the tensor holds a NaN or an Inf: no scale
//                        represents it, and a NaN scale makes every output that reads it NaN)
//   q     = e4m3fn(x / scale), saturating at +-448, with two exceptions that keep the bytes
//           readable by gfx942's FNUZ instructions as they are (arch/fp8_fnuz.hpp):
//           a result that rounds to -0 is stored as +0 (0x00, never 0x80), and a NaN (x, or a
//           NaN scale) is stored as 0x00 (never 0x7F / 0xFF). So the library emits 253 of the
//           256 codes; its NaN travels in the scale, not in the bytes.
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

// One element: e4m3fn(x / scale), with -0 and NaN stored as 0x00 (see the top of the file).
VAECONV_HD inline uint8_t quantize_e4m3fn(float x, float scale) {
  const float q = x / scale;
  if (q != q) return 0u;
  const uint8_t b = float_to_e4m3fn(q);
  return b == 0x80u ? uint8_t(0u) : b;
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
