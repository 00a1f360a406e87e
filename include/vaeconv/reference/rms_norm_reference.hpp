// vaeconv/reference/rms_norm_reference.hpp — the RMS norm (+ SiLU) of kernel/rms_norm_params.hpp
// on the CPU, in double, before the one rounding: what the GPU tests check every element against.
//
// rms_norm_pixel() gives the unrounded values of one pixel (and, for the tests' tolerance, the
// magnitude of its terms); rms_norm_reference() the rounded bf16 tensor.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "vaeconv/core/numerics_bf16.hpp"

namespace vaeconv {
namespace reference {

// out[c] = v * sigmoid(v) (silu) or v, v = x[c] / max(||x||, 1e-12) * sqrt(C) * gamma[c] + bias[c];
// mag[c] (optional) = |x[c] / max(||x||, eps) * sqrt(C) * gamma[c]| + |bias[c]|, the size of the
// terms the kernel's fp32 arithmetic rounds.
inline void rms_norm_pixel(const uint16_t* x, int64_t channels, const float* gamma,
                           const float* bias, bool silu, double* out, double* mag = nullptr) {
  double ss = 0.0;
  for (int64_t c = 0; c < channels; ++c) {
    const double v = bf16_to_float(x[c]);
    ss += v * v;
  }
  const double denom = std::max(std::sqrt(ss), 1e-12);
  const double root_c = std::sqrt(double(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double n = double(bf16_to_float(x[c])) / denom * root_c * double(gamma[c]);
    const double b = bias ? double(bias[c]) : 0.0;
    const double v = n + b;
    out[c] = silu ? v / (1.0 + std::exp(-v)) : v;
    if (mag) mag[c] = std::fabs(n) + std::fabs(b);
  }
}

// y = bf16 of the above for every pixel of x [pixels][channels].
inline std::vector<uint16_t> rms_norm_reference(const std::vector<uint16_t>& x, int64_t pixels,
                                                int64_t channels, const float* gamma,
                                                const float* bias, bool silu) {
  std::vector<uint16_t> y(size_t(pixels * channels));
  std::vector<double> row(static_cast<size_t>(channels));
  for (int64_t p = 0; p < pixels; ++p) {
    rms_norm_pixel(x.data() + p * channels, channels, gamma, bias, silu, row.data());
    for (int64_t c = 0; c < channels; ++c)
      y[size_t(p * channels + c)] = float_to_bf16(float(row[size_t(c)]));
  }
  return y;
}

}  // namespace reference
}  // namespace vaeconv
