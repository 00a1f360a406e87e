// vaeconv/kernel/rms_norm_kernel.hpp — the RMS norm (+ SiLU) of channels-last bf16 activations in
// one pass: kernel/rms_norm_params.hpp says what it computes and how lanes share a pixel.
//
// Memory-bound: one read and one write of the tensor (the streaming form, C > 1024, reads twice).
// Every pixel index and offset is 64-bit. A block of 256 threads holds 256 / G pixels per trip
// and walks the pixels with the grid's stride; the trip count is the same for every thread of a
// block, so every lane of a warp / wave reaches each shuffle (a pixel past the end takes part with
// zeros and stores nothing). The only target code is Arch::shuffle_xor and Arch::pack_bf16x2.
#pragma once
#include <cstdint>

#include "vaeconv/arch/arch.hpp"
#include "vaeconv/core/config.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/kernel/rms_norm_params.hpp"

namespace vaeconv {
namespace detail {

// The sum of v over the kGroup aligned lanes that share a pixel, the same bits in every lane
// (each butterfly step adds the same two values on both sides).
template <class Arch, int kGroup>
VAECONV_DEVICE VAECONV_FORCE_INLINE float rms_group_sum(float v) {
  static_assert(kGroup >= 1 && kGroup <= kernel::kRmsNormMaxGroup && (kGroup & (kGroup - 1)) == 0,
                "a group is a power of two of at most 32 lanes (whole groups in a warp and a wave)");
  VAECONV_UNROLL
  for (int mask = kGroup / 2; mask > 0; mask /= 2) v += Arch::shuffle_xor(v, mask);
  return v;
}

VAECONV_DEVICE VAECONV_FORCE_INLINE float rms_lo(uint32_t w) { return bf16_to_float(uint16_t(w)); }
VAECONV_DEVICE VAECONV_FORCE_INLINE float rms_hi(uint32_t w) {
  return bf16_to_float(uint16_t(w >> 16));
}

VAECONV_DEVICE VAECONV_FORCE_INLINE float rms_sum_squares(const uint4& v) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  float s = 0.f;
  VAECONV_UNROLL
  for (int i = 0; i < 4; ++i) {
    const float a = rms_lo(w[i]), b = rms_hi(w[i]);
    s += a * a + b * b;
  }
  return s;
}

// One 16-byte chunk (channels 8 j .. 8 j + 7) of the output: x * scale * gamma + bias, SiLU, one
// rounding to bf16.
template <class Arch>
VAECONV_DEVICE VAECONV_FORCE_INLINE uint4 rms_finish_chunk(const kernel::RmsNormParams& p,
                                                           const uint4& v, int64_t j, float scale) {
  const float4* g4 = reinterpret_cast<const float4*>(p.gamma) + 2 * j;
  const float4 g0 = g4[0], g1 = g4[1];
  float4 b0 = make_float4(0.f, 0.f, 0.f, 0.f), b1 = b0;
  if (p.bias != nullptr) {
    const float4* b4 = reinterpret_cast<const float4*>(p.bias) + 2 * j;
    b0 = b4[0];
    b1 = b4[1];
  }
  const float g[8] = {g0.x, g0.y, g0.z, g0.w, g1.x, g1.y, g1.z, g1.w};
  const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  uint32_t out[4];
  VAECONV_UNROLL
  for (int i = 0; i < 4; ++i) {
    float lo = rms_lo(w[i]) * scale * g[2 * i] + b[2 * i];
    float hi = rms_hi(w[i]) * scale * g[2 * i + 1] + b[2 * i + 1];
    if (p.silu) {
      lo = lo / (1.f + expf(-lo));
      hi = hi / (1.f + expf(-hi));
    }
    out[i] = Arch::pack_bf16x2(lo, hi);
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// sqrt(C) / max(||x||, eps): the factor of every channel of the pixel.
VAECONV_DEVICE VAECONV_FORCE_INLINE float rms_scale(const kernel::RmsNormParams& p, float sum_sq) {
  return p.sqrt_c / fmaxf(sqrtf(sum_sq), kernel::kRmsNormEps);
}

// kChunksPerLane > 0: the pixel's chunks stay in registers between the sum and the output.
// kChunksPerLane = 0: the streaming form for C past kGroup x 4 chunks (x read twice).
template <class Arch, int kGroup, int kChunksPerLane>
__global__ void __launch_bounds__(kernel::kRmsNormThreads)
    rms_norm_kernel(kernel::RmsNormParams p) {
  constexpr int kPixelsPerBlock = kernel::kRmsNormThreads / kGroup;
  const int lane = int(threadIdx.x) % kGroup;
  const int64_t slot = int64_t(threadIdx.x) / kGroup;
  const uint4* x = static_cast<const uint4*>(p.x);
  uint4* y = static_cast<uint4*>(p.y);
  const int64_t step = int64_t(gridDim.x) * kPixelsPerBlock;
  for (int64_t first = int64_t(blockIdx.x) * kPixelsPerBlock; first < p.pixels; first += step) {
    const int64_t pixel = first + slot;
    const bool live = pixel < p.pixels;
    const int64_t row = (live ? pixel : 0) * p.chunks;  // chunk offset of the pixel
    if constexpr (kChunksPerLane > 0) {
      uint4 v[kChunksPerLane];
      float sum_sq = 0.f;
      VAECONV_UNROLL
      for (int i = 0; i < kChunksPerLane; ++i) {
        const int64_t j = lane + int64_t(kGroup) * i;
        v[i] = make_uint4(0u, 0u, 0u, 0u);
        if (live && j < p.chunks) v[i] = x[row + j];
        sum_sq += rms_sum_squares(v[i]);
      }
      const float scale = rms_scale(p, rms_group_sum<Arch, kGroup>(sum_sq));
      VAECONV_UNROLL
      for (int i = 0; i < kChunksPerLane; ++i) {
        const int64_t j = lane + int64_t(kGroup) * i;
        if (live && j < p.chunks) y[row + j] = rms_finish_chunk<Arch>(p, v[i], j, scale);
      }
    } else {
      float sum_sq = 0.f;
      if (live)
        for (int64_t j = lane; j < p.chunks; j += kGroup) sum_sq += rms_sum_squares(x[row + j]);
      const float scale = rms_scale(p, rms_group_sum<Arch, kGroup>(sum_sq));
      if (live)
        for (int64_t j = lane; j < p.chunks; j += kGroup)
          y[row + j] = rms_finish_chunk<Arch>(p, x[row + j], j, scale);
    }
  }
}

}  // namespace detail
}  // namespace vaeconv
