// vaeconv/kernel/halo_loader.hpp — the loader of the halo kernels: a patch's input halo
// (halo_tile.hpp), all Cin channels, copied from the input frame into LDS once per block.
//
// Chunk j of every halo pixel, zeros outside the frame (the conv's padding). Threads take
// consecutive chunks of one pixel (16-byte runs of one NHWC row), so the reads coalesce and the
// 8-lane groups that write one pixel's chunks land in distinct banks (HaloTile::kChunkStride).
// The copies join the caller's open copy group (the halo kernels: the first K tile's, so the
// pipeline's first wait covers them; arch/ load + flush: cp.async on NVIDIA, a buffer load and
// an LDS store on AMD).
//
// kZeroChunk >= 0 (the halo kernel on fragment atoms, halo_fragment.hpp): the halo also holds a
// zero chunk at that byte offset, which K steps past K read, and the loop's trip count is the
// same for every thread (a per-lane count is a waterfall loop around the buffer load on AMD:
// cmake/asm_checks.cmake); a thread past the last chunk loads nothing and writes zeros to the
// zero chunk. kZeroChunk < 0 (the wgmma halo kernel): no zero chunk, each thread loops over its
// own chunks.
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"

namespace vaeconv::kernel {

template <class Policy, int kZeroChunk>
struct HaloLoader {
  using Halo = typename Policy::Halo;
  using Arch = typename Policy::ArchT;
  static constexpr bool kUniformTrips = kZeroChunk >= 0;

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void load(const ConvParams& p, const BlockCoord& b,
                                                      char* halo) {
    constexpr int kElemBytes = Policy::kElemBytes;
    const int tid = threadIdx.x;
    const int chunks = p.cin / Halo::kChunkElems;
    const int total = chunks * Halo::kHaloPixels;
    const int step_hp = Policy::kThreads / chunks, step_j = Policy::kThreads % chunks;
    int hp = tid / chunks, j = tid % chunks;
    // The one time tap's input slice, relative to the block's input view (taps_t == 1).
    const int it_rel = b.ot + p.kt_base - p.pad_t - b.it_lo;
    const bool t_ok = unsigned(it_rel) < unsigned(p.t - b.it_lo);
    const char* x_frame =
        static_cast<const char*>(p.x) + int64_t(kElemBytes) * input_view_offset(p, b);
    const auto view = Arch::make_view(x_frame, p.x_view_bytes);
    if constexpr (kUniformTrips)
      if (tid == 0) Arch::template store_lds<kElemBytes>(halo + kZeroChunk, uint4{0, 0, 0, 0});
    // Thread tid's chunks are tid, tid + kThreads, ... below total; with kUniformTrips q runs from
    // 0 in every thread (its chunk is q + tid) and `live` says whether that chunk exists.
    for (int q = kUniformTrips ? 0 : tid; q < total; q += Policy::kThreads) {
      const bool live = !kUniformTrips || q + tid < total;
      const int hr = Halo::halo_row(hp), hcol = Halo::halo_col(hp);
      const int ih = b.oh0 - 1 + hr, iw = b.ow0 - 1 + hcol;
      const bool ok =
          live && t_ok && unsigned(ih) < unsigned(p.h) && unsigned(iw) < unsigned(p.w_);
      // Unsigned products, as in the gathers: a pad pixel's offset is never read.
      const uint32_t e = uint32_t(it_rel) * uint32_t(p.in_st) + uint32_t(ih) * uint32_t(p.in_sh) +
                         uint32_t(iw) * uint32_t(p.in_sw) + uint32_t(j * Halo::kChunkElems);
      char* dst = halo + (live ? Halo::offset(j, hr, hcol) : kZeroChunk);
      typename Arch::template Slot<1> one;
      Arch::load(one, 0, dst, view, e * uint32_t(kElemBytes), ok);
      Arch::template flush<kElemBytes>(one, 0, dst);  // AMD: to LDS now; cp.async: nothing
      hp += step_hp;
      j += step_j;
      if (j >= chunks) {
        j -= chunks;
        ++hp;
      }
    }
  }
};

}  // namespace vaeconv::kernel
