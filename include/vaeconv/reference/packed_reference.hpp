// vaeconv/reference/packed_reference.hpp — the conv that packed weights stand for, on the CPU.
//
// A check of the kernels against the values they really multiply (e4m3 weights with their
// per-row scales, an upsample conv's combined phase weights) needs the conv of the PACKED weights,
// read back through packed_weights.hpp's documented layout — written here independently of the
// kernels' code:
//   direct form (phases == 1): packed row co, K = (tap, ci) with tap = ((kt - kt_base) * 3 + kh)
//     * 3 + kw: the conv d itself;
//   phases (upsample_phases.hpp): output pixel (2a + p, 2b + q) of frame f is pixel (a, b) of the
//     stride-1, pad-1 3 x 3 conv of the source frame f (phase_conv) whose only nonzero taps are
//     the 2 x 2 window at (p, q), holding packed row (2p + q) * Cout + co at K = (2 dh + dw) * Cin + ci.
// A weight value comes through an accessor value(row, k) (bf16 bits, e4m3 bytes times the row's
// scale, or their magnitudes for an error bound), so the same mapping serves every dtype.
//
// conv_reference_packed() computes the whole output (conv_reference.hpp, fast, threaded);
// packed_output_pixel() one output pixel, every channel, in double (pixel_reference.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/reference/conv_reference.hpp"
#include "vaeconv/reference/pixel_reference.hpp"

namespace vaeconv {
namespace reference {

// The conv one phase of an upsample conv packed in phases runs on: the stride-1, pad-1 3 x 3
// conv of each source frame (kt = 1), reading d's input view; its output is dense.
inline ConvDesc phase_conv(const ConvDesc& d) {
  ConvDesc p = d;
  p.kt = 1;
  p.kh = 3;
  p.kw = 3;
  p.stride_t = p.stride_h = p.stride_w = 1;
  p.pad = {0, 0, 1, 1, 1, 1};
  p.upsample = 1;
  p.upsample_mode = UpsampleMode::kNone;
  p.out_strides = Strides5::dense(p.out_t(), p.out_h(), p.out_w(), p.cout);
  return p;
}

// Weight (co, ci, kt, kh, kw) of the conv the packing stands for: d's own taps (phase < 0), or
// phase `phase`'s 3 x 3 grid of phase_conv(d) (zero outside its 2 x 2 window).
template <class Value>
struct PackedTaps {
  const ConvDesc& d;
  const PackedWeightsInfo& info;
  const Value& value;
  int phase = -1;
  float operator()(int64_t co, int64_t ci, int kt, int kh, int kw) const {
    if (phase < 0) {
      if (kt < info.kt_base) return 0.f;  // a slice the packing dropped: it faces only padding
      const int64_t tap = ((kt - info.kt_base) * 3 + kh) * 3 + kw;
      return float(value(co, tap * d.cin + ci));
    }
    const int dh = kh - phase / 2, dw = kw - phase % 2;
    if (dh < 0 || dh > 1 || dw < 0 || dw > 1) return 0.f;
    return float(value(phase * d.cout + co, (dh * 2 + dw) * d.cin + ci));
  }
};

// y = the conv of x with the packed weights' values, + bias + residual (either may be null), for
// d as conv_reference takes it (float operands, views in and out). residual must not alias y.
template <class Value>
Status conv_reference_packed(const ConvDesc& d, const PackedWeightsInfo& info, const Value& value,
                             const float* x, const float* bias, const float* residual, float* y) {
  if (info.phases == 1) {
    const PackedTaps<Value> taps{d, info, value};
    std::vector<float> w(size_t(d.cout * d.cin * d.taps()));
    for (int64_t co = 0; co < d.cout; ++co)
      for (int64_t ci = 0; ci < d.cin; ++ci)
        for (int t = 0; t < d.taps(); ++t)
          w[size_t((co * d.cin + ci) * d.taps() + t)] =
              taps(co, ci, t / (d.kh * d.kw), (t / d.kw) % d.kh, t % d.kw);
    return conv_reference(d, x, w.data(), bias, residual, y);
  }
  if (d.kind != ConvKind::kUpsample || info.phases != kUpsamplePhases)
    return Status(StatusCode::kInvalidArgument,
                  "conv_reference_packed: phases are packed for an upsample conv only");
  const ConvDesc dp = phase_conv(d);
  std::vector<float> w(size_t(d.cout * d.cin * 9)), yp(size_t(dp.out_elements()));
  for (int ph = 0; ph < kUpsamplePhases; ++ph) {
    const PackedTaps<Value> taps{d, info, value, ph};
    for (int64_t co = 0; co < d.cout; ++co)
      for (int64_t ci = 0; ci < d.cin; ++ci)
        for (int t = 0; t < 9; ++t) w[size_t((co * d.cin + ci) * 9 + t)] = taps(co, ci, 0, t / 3, t % 3);
    VAECONV_RETURN_IF_ERROR(conv_reference(dp, x, w.data(), bias, nullptr, yp.data()));
    const int pr = ph / 2, pc = ph % 2;
    const Strides5& s = d.out_strides;
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t t = 0; t < d.t; ++t)
        for (int64_t a = 0; a < d.h; ++a)
          for (int64_t b = 0; b < d.w; ++b)
            for (int64_t co = 0; co < d.cout; ++co) {
              const int64_t o = n * s.n + t * s.t + (2 * a + pr) * s.h + (2 * b + pc) * s.w + co;
              y[o] = yp[size_t((((n * d.t + t) * d.h + a) * d.w + b) * d.cout + co)] +
                     (residual ? residual[o] : 0.f);
            }
  }
  return Status::Ok();
}

// Output pixel m of d (the GEMM row, as output_pixel), every channel, in double, with the packed
// weights' values; x(i) is input element i's value.
template <class XValue, class Value>
void packed_output_pixel(const ConvDesc& d, const PackedWeightsInfo& info, const XValue& x,
                         const Value& value, const float* bias, int64_t m,
                         std::vector<double>* out) {
  if (info.phases == 1) {
    output_pixel(d, x, PackedTaps<Value>{d, info, value}, bias, m, out);
    return;
  }
  // Pixel (oh, ow) of frame f is pixel (oh / 2, ow / 2) of phase (oh % 2, ow % 2)'s conv.
  const int64_t wo = d.out_w(), ho = d.out_h();
  const int64_t ow = m % wo, oh = (m / wo) % ho, f = m / (wo * ho);
  const int phase = int(oh % 2) * 2 + int(ow % 2);
  const ConvDesc dp = phase_conv(d);
  output_pixel(dp, x, PackedTaps<Value>{d, info, value, phase}, bias,
               (f * dp.out_h() + oh / 2) * dp.out_w() + ow / 2, out);
}

}  // namespace reference
}  // namespace vaeconv
