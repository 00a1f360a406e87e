// vaeconv/kernel/cached_frames.hpp — the causal conv of a video chunk, its time window read from
// two tensors in place: the cached frames (ConvParams::cache) and the new frames (x).
//
// A chunked decode (Wan / Qwen-Image feat_cache) runs each causal 3x3x3 conv over cat(cache, x)
// with cache_frames = 0..2 frames in front of x's T frames and a zero front pad of
// 2 - cache_frames. Frame j of cat(cache, x) for output frame ot and time tap kt is
//
//   j = ot + kt - (2 - cache_frames),   j < 0: padding;  j < cache_frames: cache frame j;
//                                       else x frame j - cache_frames = ot + kt - 2
//
// so the x side is exactly the causal gather with its 2 frames of front pad (ConvParams::pad_t
// counts the cached frames: make_params), whose frames below 0 it treats as padding, and the
// cache side replaces the taps that fall on the cached ones. Both
// tensors share x's in-frame strides (validate_cache), so a row's spatial offset is one 32-bit
// number; the frame's base differs: x's view starts at the block's first x frame, the cache's at
// batch n's frame 0 (64-bit bases). The time tap is the same for all rows of a thread, so each
// thread reads its K position from one of the two views (CachedConvGather::from_cache).
//
// The copy picks the view per thread (CopyA): a pointer select where a view is a pointer
// (NVIDIA, host passes). On AMD a view is a wave-uniform buffer descriptor (a per-lane one would
// need a waterfall loop), so the wave votes: where all its lanes read one view (every K tile when
// Cin % BK == 0, all but the tile straddling the cache/x boundary otherwise) that view is picked
// in scalar registers and each row is one load; where they differ, each row is loaded from the
// cache's view (x's lanes out of range: buffer loads return 0 there) and then, under x's lanes'
// exec mask, from x's view into the same register. Either way the loads stay in flight until the
// flush (no merge of two results at issue, which would wait for them there), so the register-
// staged loop keeps its tiles ahead for these copies too.
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"

namespace vaeconv::kernel {

// The causal geometry whose time window may start in the cache.
struct CachedCausalGeometry : CausalGeometry {};

template <class Geo>
inline constexpr bool kCachedGeometry = std::is_same<Geo, CachedCausalGeometry>::value;

// The time term of a tap of the cached causal conv (the file comment): frame j = cache_j0 + kt
// of cat(cache, x) is a cached frame when j < cache_frames. The row base holds x's time term
// it_rel0 * in_st, which a cached tap replaces by j * cache_st.
struct CachedFrames {
  static constexpr bool kCache = true;
  using Term = XFrames::Term;
  int cache_j0 = 0;  // frame of tap kt = 0 in cat(cache, x)
  VAECONV_HD void init(const ConvParams& p, const BlockCoord& b) {
    cache_j0 = b.ot + p.kt_base - p.pad_t + p.cache_frames;
  }
  VAECONV_HD Term at(const ConvParams& p, int it_rel0, int t_rel_end, int kt) const {
    const int j = cache_j0 + kt;
    const bool cached = unsigned(j) < unsigned(p.cache_frames);
    const uint32_t off = cached ? uint32_t(j) * uint32_t(p.cache_st) -
                                      uint32_t(it_rel0) * uint32_t(p.in_st)
                                : uint32_t(kt) * uint32_t(p.in_st);
    return {off, cached || unsigned(it_rel0 + kt) < unsigned(t_rel_end), cached};
  }
};

// The causal 16-byte gather with the cached frames in front of x (the file comment): the vector
// gather whose taps take their frame from CachedFrames; from_cache says which view a thread's
// current tap reads.
template <int kRows, int kRowStep, int BK, int kElemBytes, bool kMaskRows = true>
struct CachedConvGather
    : TileConvGather<CausalGeometry, kRows, kRowStep, BK, kElemBytes, CachedFrames, kMaskRows> {};

// The A gather of a geometry: conv_gather.hpp's, or the geometry's own (the cached one here,
// the temporal conv's in temporal_gather.hpp).
// kLaneCursor: the atom asks for the per-thread K cursor (LaneKCursor); the cached and temporal
// gathers have the tile cursor only. kMaskRows: the tile cursor's row test (conv_gather.hpp),
// the kernel's choice (conv_kernel.hpp).
template <class Geo>
struct GatherFor {
  template <int kRows, int kRowStep, int BK, int kElemBytes, bool kFarSteps, bool kLaneCursor,
            bool kMaskRows>
  using type = ConvGather<Geo, kRows, kRowStep, BK, kElemBytes, kFarSteps, kLaneCursor, kMaskRows>;
};
template <>
struct GatherFor<CachedCausalGeometry> {
  template <int kRows, int kRowStep, int BK, int kElemBytes, bool, bool, bool kMaskRows>
  using type = CachedConvGather<kRows, kRowStep, BK, kElemBytes, kMaskRows>;
};
template <class Geo, int kRows, int kRowStep, int BK, int kElemBytes, bool kFarSteps,
          bool kLaneCursor = false, bool kMaskRows = true>
using GatherA = typename GatherFor<Geo>::template type<kRows, kRowStep, BK, kElemBytes, kFarSteps,
                                                       kLaneCursor, kMaskRows>;

namespace detail {
template <class V, class = void>
struct ViewIsPointer : std::false_type {};
template <class V>
struct ViewIsPointer<V, decltype(void(std::declval<V>().base))> : std::true_type {};
}  // namespace detail

// The A copy of the implicit GEMM: one view (Gemm::copy_a), or for the cached geometry the cache
// view and x's, per thread (the file comment).
template <class Geo, class Arch>
struct CopyA {
  template <int kElemBytes>
  VAECONV_HD void start(const ConvParams&, const BlockCoord&) {}
  template <class Gemm, class Slot, class Gather, class View>
  VAECONV_DEVICE VAECONV_FORCE_INLINE void copy(Slot& sl, char* smem, int s, int row0, int chunk,
                                                const Gather& ga, View view_x) const {
    Gemm::copy_a(sl, smem, s, row0, chunk, ga, view_x);
  }
};

// The cache's view for block b's batch element (its frames have their own N stride).
template <class Arch, int kElemBytes>
VAECONV_DEVICE typename Arch::GlobalView cache_view(const ConvParams& p, const BlockCoord& b) {
  return Arch::make_view(
      static_cast<const char*>(p.cache) + int64_t(kElemBytes) * int64_t(b.n) * p.cache_sn,
      p.cache_view_bytes);
}

// A's rows of one K tile into stage s, each row's chunk from the cache's view or x's, per thread
// (the file comment); the cached and the temporal geometries' copy.
template <class Arch, class Gemm, class Slot, class Gather, class View>
VAECONV_DEVICE VAECONV_FORCE_INLINE void copy_a_either(Slot& sl, char* smem, int s, int row0,
                                                       int chunk, const Gather& ga, View view_c,
                                                       View view_x) {
  char* la = Gemm::stage_a(smem, s);
  if constexpr (detail::ViewIsPointer<View>::value) {
VAECONV_UNROLL
    for (int i = 0; i < Gemm::kRowsA; ++i)
      Arch::load(sl, i, la + Gemm::Tile::offset(row0 + i * Gemm::kRowStep, chunk),
                 ga.from_cache ? view_c : view_x, ga.offset(i), ga.exists(i));
  } else {
    // The wave's view, picked once from the uniform vote (the cache's if any lane reads it), and
    // one load per row into the row's staging register. In a wave of both views (a K tile
    // straddling the cache/x boundary) x's lanes then load theirs from x's view into the same
    // register under their exec mask (a divergent branch; the cache's lanes keep their bytes),
    // replacing what the first load gave them; the two loads share their offset, so no register
    // the first one writes is rewritten before it lands. Nothing merges two results, so nothing
    // waits here: the loads stay in flight until the flush.
    const bool any_c = Arch::wave_any(ga.from_cache);
    const bool mixed = any_c != Arch::wave_all(ga.from_cache);
    const View first = any_c ? view_c : view_x;
    // In a mixed wave x's lanes are out of range in the first load: their offsets index x's view,
    // and read through the cache's descriptor they could land inside its range (the next batch
    // element's frames) or past its allocation (num_records is not the allocation's size).
    const bool first_ok = ga.from_cache || !mixed;
    // A folded offset (FoldsRange) already answers exists(): the reload then reads the gather's
    // own offset registers, never a register the first load writes (no wait for it there).
    constexpr bool kFolded = FoldsRange<Gather, Arch>::value;
VAECONV_UNROLL
    for (int i = 0; i < Gemm::kRowsA; ++i)
      Arch::load(sl, i, la + Gemm::Tile::offset(row0 + i * Gemm::kRowStep, chunk), first,
                 ga.offset(i), (kFolded || ga.exists(i)) && first_ok);
    if (mixed && !ga.from_cache) {
VAECONV_UNROLL
      for (int i = 0; i < Gemm::kRowsA; ++i)
        Arch::load(sl, i, la + Gemm::Tile::offset(row0 + i * Gemm::kRowStep, chunk), view_x,
                   ga.offset(i), kFolded || ga.exists(i));
    }
  }
}

template <class Arch>
struct CopyA<CachedCausalGeometry, Arch> {
  typename Arch::GlobalView view_c;
  // The cache view of block b's batch.
  template <int kElemBytes>
  VAECONV_DEVICE void start(const ConvParams& p, const BlockCoord& b) {
    view_c = cache_view<Arch, kElemBytes>(p, b);
  }
  template <class Gemm, class Slot, class Gather, class View>
  VAECONV_DEVICE VAECONV_FORCE_INLINE void copy(Slot& sl, char* smem, int s, int row0, int chunk,
                                                const Gather& ga, View view_x) const {
    copy_a_either<Arch, Gemm>(sl, smem, s, row0, chunk, ga, view_c, view_x);
  }
};

}  // namespace vaeconv::kernel
