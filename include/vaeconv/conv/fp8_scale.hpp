// vaeconv/conv/fp8_scale.hpp — the FP8 scale rule, shared by the device quantizer, the weight
// packing and the host reference quantizer (so all three agree bit for bit).
//
//   scale = amax / 448   (amax = max |x| over the tensor or channel, NaN ignored)
//   scale = 1            when amax is 0 or not finite
//   q     = e4m3fn(x / scale), saturating at +-448; NaN -> NaN of the same sign
#pragma once
#include <cstdint>
#include <vector>

#include "vaeconv/core/config.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"

namespace vaeconv {

VAECONV_HD inline float fp8_scale_for_amax(float amax) {
  const bool usable = amax > 0.f && amax <= 3.4028234663852886e38f;  // false for NaN and Inf
  return usable ? amax / kE4M3FnMax : 1.f;
}

// One element: e4m3fn(x / scale). A NaN is encoded before any arithmetic so that its sign is kept
// the same way on every target (GPUs return a canonical NaN from a division).
VAECONV_HD inline uint8_t quantize_e4m3fn(float x, float scale) {
  return x != x ? float_to_e4m3fn(x) : float_to_e4m3fn(x / scale);
}

// The host reference of quantize_fp8 (api/quantize.hpp): bf16 bits in, e4m3fn bytes and scale out.
inline float quantize_fp8_host(const uint16_t* x, int64_t n, uint8_t* y) {
  float amax = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = bf16_to_float(x[i]);
    const float a = v < 0.f ? -v : v;
    if (a > amax) amax = a;  // NaN compares false
  }
  const float scale = fp8_scale_for_amax(amax);
  for (int64_t i = 0; i < n; ++i) y[i] = quantize_e4m3fn(bf16_to_float(x[i]), scale);
  return scale;
}

}  // namespace vaeconv
