// vaeconv/reference/pixel_reference.hpp — one output pixel of a conv, every channel, in double.
//
// output_pixel() evaluates the formula of conv_desc.hpp for a single output pixel, straight from
// the description, with no repacking and no blocking: what a sampled check needs where a full
// reference (conv_reference.hpp) would cost too much (the benchmark's shapes, tensors past 2^31
// elements). Each product is formed and summed in double, taps in (kt, kh, kw) order, Cin
// ascending; taps that land in the padding are skipped, never multiplied by zero.
//
// The operands come through accessors, so that a caller checks the values it means (bf16 bits,
// dequantized e4m3 bytes, packed weights: packed_reference.hpp) without copying a tensor:
//   x(i)                      the input element at offset i of d.in_strides (a view is fine)
//   w(co, ci, kt, kh, kw)     the weight, in PyTorch's [Cout][Cin][kt][kh][kw] indexing
// A cached conv (d.cache_frames > 0: frames from a second tensor, conv_reference_cached) is not
// covered: its pixel is NaN in every channel, so a check against it fails rather than passes.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "vaeconv/conv/conv_desc.hpp"

namespace vaeconv {
namespace reference {

// Output pixel m, the GEMM row ((n * To + t) * Ho + h) * Wo + w; *out gets Cout values:
// bias[co] (when bias is not null) plus the sum over the taps that face data.
template <class XValue, class WValue>
void output_pixel(const ConvDesc& d, const XValue& x, const WValue& w, const float* bias,
                  int64_t m, std::vector<double>* out) {
  const int64_t wo = d.out_w(), ho = d.out_h(), to = d.out_t();
  const int64_t ow = m % wo, oh = (m / wo) % ho, ot = (m / (wo * ho)) % to, n = m / (wo * ho * to);
  out->assign(size_t(d.cout), 0.0);
  if (d.cache_frames != 0) {
    out->assign(size_t(d.cout), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  for (int64_t co = 0; co < d.cout; ++co) {
    double acc = bias ? double(bias[co]) : 0.0;
    for (int kt = 0; kt < d.kt; ++kt) {
      const int64_t it = ot * d.stride_t + kt - d.pad.t_front;
      if (it < 0 || it >= d.t) continue;
      for (int kh = 0; kh < d.kh; ++kh) {
        const int64_t ih = oh * d.stride_h + kh - d.pad.h_top;  // in the upsampled frame
        if (ih < 0 || ih >= d.up_h()) continue;
        for (int kw = 0; kw < d.kw; ++kw) {
          const int64_t iw = ow * d.stride_w + kw - d.pad.w_left;
          if (iw < 0 || iw >= d.up_w()) continue;
          const int64_t base = n * d.in_strides.n + it * d.in_strides.t +
                               (ih / d.upsample) * d.in_strides.h + (iw / d.upsample) * d.in_strides.w;
          for (int64_t ci = 0; ci < d.cin; ++ci)
            acc += double(x(base + ci)) * double(w(co, ci, kt, kh, kw));
        }
      }
    }
    (*out)[size_t(co)] = acc;
  }
}

}  // namespace reference
}  // namespace vaeconv
