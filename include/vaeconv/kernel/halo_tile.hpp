// vaeconv/kernel/halo_tile.hpp — an output patch's input halo, held in LDS for all nine taps.
//
// The implicit GEMM of conv_kernel.hpp copies A[m][k] for every K tile: each input pixel crosses
// L2 -> LDS once per spatial tap (nine times), and the gather's address arithmetic runs in the
// K loop. For a stride-1 3x3 conv the nine taps of an output patch read one input halo, so the
// halo kernel (halo_conv_kernel.hpp) copies that halo once per block tile and lets the matrix
// atom read tap (kh, kw) of it at a shifted address: only B (the weights) streams through the
// K pipeline.
//
//   patch   kRows x kCols output pixels (oh0 + r, ow0 + c), GEMM row m = r * kCols + c
//   halo    (kRows + 2) x (kCols + 2) input pixels (oh0 - 1 + hr, ow0 - 1 + hc), all Cin channels
//   LDS     chunk-major: 16-byte chunk j (channels 8j .. 8j + 7 in bf16, 16j .. 16j + 15 in e4m3)
//           of halo pixel hp at j * kChunkStride + hp * 16, hp = hr * kHaloCols + hc
//
// Why chunk-major: the A rows of tap (kh, kw) for output row r are the halo pixels
// (r + kh) * kHaloCols + kw + c, c = 0 .. kCols - 1: consecutive pixels, so 8 consecutive GEMM
// rows are 128 contiguous bytes. That is one core matrix of wgmma's K-major layout without
// swizzle (arch/wgmma_layout.hpp): with kCols = 8, core matrix g of a 64-row atom is output row
// r0 + g (stride-dimension offset kHaloCols * 16) and the two 16-byte K halves of a K step are
// chunks j and j + 1 (leading-dimension offset kChunkStride). The same addresses serve fragment
// atoms (each lane names its row), and 8 consecutive rows never share a bank.
// kChunkStride is one pixel longer than the halo so that the copy's 8-lane groups, which write
// the chunks of one pixel, land in distinct banks.
//
// K walk: the packed K order (kh, kw, c) of the T = 1 slice, in steps of the atom's K; a step never
// straddles a tap when Cin is a multiple of it (HaloCursor). tests/host/test_halo_tile.cpp
// runs the addresses through the wgmma emulator against the direct convolution.
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"

namespace vaeconv::kernel {

template <int Rows, int Cols, int MaxCin, int ElemBytes>
struct HaloTile {
  static constexpr int kRows = Rows, kCols = Cols, kPixels = Rows * Cols;  // output patch
  static constexpr int kHaloRows = Rows + 2, kHaloCols = Cols + 2;
  static constexpr int kHaloPixels = kHaloRows * kHaloCols;
  static constexpr int kElemBytes = ElemBytes;
  static constexpr int kChunkElems = 16 / ElemBytes;
  static constexpr int kMaxCin = MaxCin;
  static constexpr int kMaxChunks = MaxCin / kChunkElems;
  static constexpr int kChunkStride = (kHaloPixels + 1) * 16;  // bytes between chunk planes
  static constexpr int kBytes = kMaxChunks * kChunkStride;
  static constexpr int kRowStride = kHaloCols * 16;           // bytes between halo rows
  static_assert(MaxCin % kChunkElems == 0, "whole chunks");
  static_assert(kChunkStride % 16 == 0 && kRowStride % 16 == 0, "descriptor units of 16 bytes");

  // Byte offset of chunk j of halo pixel (hr, hc).
  VAECONV_HD static constexpr int offset(int j, int hr, int hc) {
    return j * kChunkStride + (hr * kHaloCols + hc) * 16;
  }
  // Byte offset of the 16-byte chunk j of A row m (patch pixel (m / kCols, m % kCols)) at spatial
  // tap (kh, kw): the halo pixel that output pixel reads there.
  VAECONV_HD static constexpr int a_offset(int m, int kh, int kw, int j) {
    return offset(j, m / kCols + kh, m % kCols + kw);
  }
  // The input pixel of halo pixel hp, relative to the patch origin (oh0 - 1 + hr, ...).
  VAECONV_HD static constexpr int halo_row(int hp) { return hp / kHaloCols; }
  VAECONV_HD static constexpr int halo_col(int hp) { return hp % kHaloCols; }
};

// Which spatial tap and channel a K position of the T = 1 packed slice is: k = (kh * 3 + kw) * Cin
// + c, stepped by the atom's K (a multiple that divides Cin). tap_offset is the halo shift of the
// tap in bytes, a_offset(m, kh, kw, j) - a_offset(m, 0, 0, j).
template <class Halo>
struct HaloCursor {
  int k = 0, c = 0, kh = 0, kw = 0;
  int tap_offset = 0;
  // dk <= cin (the kernel steps by the atom's K, which divides Cin): at most one tap change.
  // Written with selects, not branches: the kernel steps the cursor between the wgmmas of one
  // batch, where a branch makes ptxas fence the accumulators before each atom.
  VAECONV_HD void step(int dk, int cin) {
    k += dk;
    c += dk;
    const bool next_tap = c >= cin;
    const bool next_row = next_tap && kw == 2;
    c = next_tap ? c - cin : c;
    kw = next_row ? 0 : kw + int(next_tap);
    kh += int(next_row);
    tap_offset += next_row ? Halo::kRowStride - 2 * 16 : (next_tap ? 16 : 0);
  }
  // Byte offset, from the halo base, of the first A row of an atom whose rows start at patch row
  // row0 (a multiple of kCols), at this position.
  VAECONV_HD int a_offset(int row0) const {
    return int(unsigned(c) / Halo::kChunkElems) * Halo::kChunkStride +
           (row0 / Halo::kCols) * Halo::kRowStride +
           tap_offset;
  }
};

}  // namespace vaeconv::kernel
