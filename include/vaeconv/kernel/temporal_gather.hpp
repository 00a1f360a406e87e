// vaeconv/kernel/temporal_gather.hpp — WanResample's time_conv, the (3, 1, 1) causal conv over T,
// as a geometry and loader of the implicit GEMM (ConvDesc::temporal3x1x1).
//
// One spatial tap, so K = 3 time taps x Cin and row m reads pixel (oh, ow) = (m / W, m % W) of
// three frames. Output frame ot's tap kt reads frame j = ot * stride_t + kt - pad_front of
// cat(cache, x): j < 0 padding, j < cache_frames the cache, else x frame j - cache_frames
// = ot * stride_t + kt - pad_t (make_params counts the cached frames into pad_t). Stride 1 is
// upsample3d's (Cout = 2C, each half launched with its own weight rows and output frames:
// apply_upsample_phase), stride 2 downsample3d's (one cached frame, no pad). The x view starts at
// the block's first x frame, the cache view at batch n's frame 0 (64-bit bases); offsets inside
// are 32-bit; a thread picks its view per time tap as the cached causal conv does
// (cached_frames.hpp: copy_a_either).
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/cached_frames.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"

namespace vaeconv::kernel {

// The temporal conv's geometry: one spatial tap, no spatial pad (what which_kernel reports).
struct TemporalGeometry {
  static constexpr int kStride = 1, kPad = 0, kUp = 1, kTaps = 1;
};

// x frame of block b's time tap 0 (may be negative: padding or the cache).
VAECONV_HD inline int temporal_x_frame0(const ConvParams& p, const BlockCoord& b) {
  return b.ot * p.stride_t - p.pad_t;
}
// The first x frame block b's taps can reach: the base of its x view.
VAECONV_HD inline int temporal_view_frame(const ConvParams& p, const BlockCoord& b) {
  const int f0 = temporal_x_frame0(p, b);
  return f0 < 0 ? 0 : f0;
}

template <int kRows, int kRowStep, int BK, int kElemBytes>
struct TemporalGather {
  static constexpr int kChunkElems = 16 / kElemBytes;
  uint32_t row_off[kRows];  // oh * in_sh + ow * in_sw, elements
  bool row_ok[kRows];
  int k = 0, c = 0, kt = 0;  // the thread's K position: channel c of time tap kt
  int x_rel0 = 0;            // x frame of tap 0, relative to the x view's base frame
  int x_end = 0;             // x's frames in the view's coordinates
  int cache_j0 = 0;          // frame of tap 0 in cat(cache, x)
  bool from_cache = false;   // the current tap reads a cached frame
  uint32_t off_[kRows];
  bool ok_[kRows];

  VAECONV_HD void init(const ConvParams& p, const BlockCoord& b, int row0, int chunk) {
    k = chunk * kChunkElems;
    kt = k / p.cin;
    c = k - kt * p.cin;
    const int f0 = temporal_x_frame0(p, b), base = temporal_view_frame(p, b);
    x_rel0 = f0 - base;
    x_end = p.t - base;
    cache_j0 = f0 + p.cache_frames;
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) {
      const int m = b.m0 + row0 + i * kRowStep;
      row_ok[i] = m < p.frame_pixels;
      const int oh = m / p.wo, ow = m % p.wo;
      row_off[i] = uint32_t(oh) * uint32_t(p.in_sh) + uint32_t(ow) * uint32_t(p.in_sw);
    }
    refresh(p);
  }
  VAECONV_HD void refresh(const ConvParams& p) {
    const int j = cache_j0 + kt;
    from_cache = unsigned(j) < unsigned(p.cache_frames);
    const bool k_ok = k < p.k && (from_cache || unsigned(x_rel0 + kt) < unsigned(x_end));
    const uint32_t t_off = from_cache ? uint32_t(j) * uint32_t(p.cache_st)
                                      : uint32_t(x_rel0 + kt) * uint32_t(p.in_st);
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) {
      ok_[i] = k_ok && row_ok[i];
      off_[i] = (row_off[i] + t_off + uint32_t(c)) * uint32_t(kElemBytes);
    }
  }
  VAECONV_HD bool exists(int i) const { return ok_[i]; }
  VAECONV_HD uint32_t offset(int i) const { return off_[i]; }
  VAECONV_HD void advance(const ConvParams& p) {
    k += BK;
    c += BK;
    if (c < p.cin) {  // same tap: BK channels further
VAECONV_UNROLL
      for (int i = 0; i < kRows; ++i) off_[i] += uint32_t(BK * kElemBytes);
      return;
    }
    while (c >= p.cin) {
      c -= p.cin;
      ++kt;
    }
    refresh(p);
  }
};

template <>
struct GatherFor<TemporalGeometry> {
  template <int kRows, int kRowStep, int BK, int kElemBytes, bool, bool, bool>
  using type = TemporalGather<kRows, kRowStep, BK, kElemBytes>;
};

// The temporal conv's A copy: its own x view (the time stride moves the block's first frame)
// and the cache's.
template <class Arch>
struct CopyA<TemporalGeometry, Arch> {
  typename Arch::GlobalView view_c, view_x;
  template <int kElemBytes>
  VAECONV_DEVICE void start(const ConvParams& p, const BlockCoord& b) {
    const int64_t x_elem = int64_t(b.n) * p.in_sn + int64_t(temporal_view_frame(p, b)) * p.in_st;
    view_x = Arch::make_view(static_cast<const char*>(p.x) + int64_t(kElemBytes) * x_elem,
                             p.x_view_bytes);
    view_c = p.cache_frames > 0 ? cache_view<Arch, kElemBytes>(p, b) : view_x;
  }
  template <class Gemm, class Slot, class Gather, class View>
  VAECONV_DEVICE VAECONV_FORCE_INLINE void copy(Slot& sl, char* smem, int s, int row0, int chunk,
                                                const Gather& ga, View) const {
    copy_a_either<Arch, Gemm>(sl, smem, s, row0, chunk, ga, view_c, view_x);
  }
};

}  // namespace vaeconv::kernel
