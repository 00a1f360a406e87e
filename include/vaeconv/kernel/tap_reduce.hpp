// vaeconv/kernel/tap_reduce.hpp — the tap-reduce form of a causal conv with very few outputs.
//
// The implicit GEMM re-reads every input pixel once per spatial tap (nine times). With Cout = 3
// (the VAE's RGB output layer) there is almost no math to hide that behind: the layer is bound
// by L2 traffic (docs/perf-notes.md). The tap-reduce form reads each input pixel once:
//
//   GEMM   P[q][s * Cout + co] = sum over (kt, c) of  x[it(kt)][q][c] * W[co][kt][s][c]
//          q: a pixel of the block's input halo (M),  s = kh * 3 + kw: a spatial tap,
//          N = 9 * Cout columns (<= BN),  K = (kt, c) = time taps x Cin
//   reduce y[oh][ow][co] = sum over (kh, kw) of
//                           P[halo pixel (oh + kh - 1, ow + kw - 1)][s * Cout + co]
//
// A block owns an output patch of kOutRows x kOutCols pixels and the halo around it,
// kHaloRows x kHaloCols = BM input pixels (one pixel of padding on each side). The GEMM is the
// shared block GEMM (block_gemm.hpp) over two gathers defined here, in the same
// at()/valid()/advance() form as conv_gather.hpp; the reduce is the kernel's epilogue
// (tap_reduce_kernel.hpp). B needs no repacking: row s * Cout + co, column (kt, c) is packed
// column (kt * 9 + s) * Cin + c of output channel co.
//
// Only the causal geometry (stride 1, pad 1, no upsample) has this form, and only Cin a multiple
// of the 16-byte chunk (the vector copy). tests/host/test_tap_reduce.cpp runs the whole scheme on
// the host against the reference conv.
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/block_tiling.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"

namespace vaeconv::kernel {

// A block's halo of input pixels (the GEMM's M) and the output patch inside it.
template <int HaloRows, int HaloCols>
struct HaloPatch {
  static constexpr int kHaloRows = HaloRows, kHaloCols = HaloCols;
  static constexpr int kPixels = HaloRows * HaloCols;
  static constexpr int kOutRows = HaloRows - 2, kOutCols = HaloCols - 2;
  // GEMM row of the halo pixel that patch output (r, c) reads at spatial tap (kh, kw).
  VAECONV_HD static constexpr int halo_row(int r, int c, int kh, int kw) {
    return (r + kh) * kHaloCols + c + kw;
  }
  // GEMM column of spatial tap s = kh * 3 + kw and output channel co.
  VAECONV_HD static constexpr int column(int s, int co, int cout) { return s * cout + co; }
  // Output patches along a frame's rows and columns.
  VAECONV_HD static constexpr int patches(int extent, int per_patch) {
    return (extent + per_patch - 1) / per_patch;
  }
};

// The tiling of a tap-reduce kernel (block_tiling.hpp): output patches of Patch, one Cout tile.
template <class Patch>
using TapReduceTiling = PatchTiles<Patch::kOutRows, Patch::kOutCols, /*OneCoutTile=*/true>;

// The K walk of both gathers: K = (kt, c), channels fastest. A thread's chunk never straddles a
// time tap because Cin is a multiple of the chunk.
struct SliceCursor {
  int k = 0, kt = 0, c = 0;
  VAECONV_HD void init(int k0, int cin) {
    k = k0;
    kt = k0 / cin;
    c = k0 - kt * cin;
  }
  // Moves by bk, carrying whole channel runs into the time tap.
  VAECONV_HD void step(int bk, int cin) {
    k += bk;
    c += bk;
    while (c >= cin) {
      c -= cin;
      ++kt;
    }
  }
};

// A operand: row m = halo pixel (m / kHaloCols, m % kHaloCols) of the patch, at (kt, c).
// at(m)/valid(m) are the math; the kernel reads the cached offset(i)/exists(i) of its rows
// m = row0 + i * kRowStep, which advance() steps without recomputing a pixel address (a K step
// moves every row's chunk by the same number of elements). Per row that is one offset and one
// flag: this kernel keeps 8 rows per thread (16 with the AMD roles), so registers matter.
template <class Patch, int kRows, int kRowStep, int BK, int kElemBytes>
struct HaloGather {
  static constexpr int kChunkElems = 16 / kElemBytes;
  bool in_frame[kRows];  // the halo pixel lies inside the input frame (else: padding, zeros)
  uint32_t off_[kRows];  // at() of the current position, stepped by advance()
  SliceCursor cur;
  int it_rel0, t_rel_end, k_end;
  bool slice_ok;         // the current time tap exists and k < K (the same for every row)

  VAECONV_HD void init(const ConvParams& p, const BlockCoord& pc, int row0, int chunk) {
    cur.init(chunk * kChunkElems, p.cin);
    it_rel0 = pc.ot + p.kt_base - p.pad_t - pc.it_lo;
    t_rel_end = p.t - pc.it_lo;
    k_end = p.taps_t * p.cin;
    slice_ok = slice_valid();
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) {
      const int m = row0 + i * kRowStep;
      in_frame[i] = pixel_in_frame(p, pc, m);
      off_[i] = at(p, pc, m);
    }
  }
  VAECONV_HD bool exists(int i) const { return in_frame[i] && slice_ok; }
  VAECONV_HD uint32_t offset(int i) const { return off_[i]; }
  VAECONV_HD void advance(const ConvParams& p) {
    const int kt0 = cur.kt;
    cur.step(BK, p.cin);
    // BK channels further, and one frame minus Cin channels per time tap crossed (mod 2^32:
    // a negative time slice's offset is never read and comes right when the slice does).
    const uint32_t step = uint32_t(BK) + uint32_t(cur.kt - kt0) * uint32_t(p.in_st - p.cin);
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) off_[i] += step * uint32_t(kElemBytes);
    slice_ok = slice_valid();
  }

  VAECONV_HD bool slice_valid() const {
    return cur.k < k_end && unsigned(it_rel0 + cur.kt) < unsigned(t_rel_end);
  }
  VAECONV_HD static int halo_ih(const BlockCoord& pc, int m) {
    return pc.oh0 - 1 + m / Patch::kHaloCols;
  }
  VAECONV_HD static int halo_iw(const BlockCoord& pc, int m) {
    return pc.ow0 - 1 + m % Patch::kHaloCols;
  }
  VAECONV_HD static bool pixel_in_frame(const ConvParams& p, const BlockCoord& pc, int m) {
    return m < Patch::kPixels && unsigned(halo_ih(pc, m)) < unsigned(p.h) &&
           unsigned(halo_iw(pc, m)) < unsigned(p.w_);
  }
  VAECONV_HD bool valid(const ConvParams& p, const BlockCoord& pc, int m) const {
    return pixel_in_frame(p, pc, m) && slice_valid();
  }
  // Byte offset of row m's 16-byte chunk from the block's input view (meaningful when valid).
  VAECONV_HD uint32_t at(const ConvParams& p, const BlockCoord& pc, int m) const {
    const uint32_t e = uint32_t(it_rel0 + cur.kt) * uint32_t(p.in_st) +
                       uint32_t(halo_ih(pc, m)) * uint32_t(p.in_sh) +
                       uint32_t(halo_iw(pc, m)) * uint32_t(p.in_sw) + uint32_t(cur.c);
    return e * uint32_t(kElemBytes);
  }
};

// B operand: row n = s * Cout + co (n < 9 * Cout) of the tap-reduce GEMM, at (kt, c).
template <class Patch, int kRows, int kRowStep, int BK, int kElemBytes>
struct TapColumnGather {
  static constexpr int kChunkElems = 16 / kElemBytes;
  int row_base[kRows];  // co * k_pad + s * Cin: the packed element of (kt = 0, c = 0)
  bool row_ok[kRows];
  SliceCursor cur;
  int k_end;

  VAECONV_HD void init(const ConvParams& p, int row0, int chunk) {
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) {
      const int n = row0 + i * kRowStep;
      row_ok[i] = n < 9 * p.cout;
      const int s = n / p.cout, co = n % p.cout;
      row_base[i] = row_ok[i] ? co * p.k_pad + s * p.cin : 0;
    }
    cur.init(chunk * kChunkElems, p.cin);
    k_end = p.taps_t * p.cin;
  }
  VAECONV_HD void advance(const ConvParams& p) { cur.step(BK, p.cin); }
  VAECONV_HD bool valid(const ConvParams&, int i) const { return row_ok[i] && cur.k < k_end; }
  VAECONV_HD uint32_t at(const ConvParams& p, int i) const {
    return uint32_t(row_base[i] + cur.kt * 9 * p.cin + cur.c) * uint32_t(kElemBytes);
  }
};

}  // namespace vaeconv::kernel
