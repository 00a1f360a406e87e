// vaeconv/kernel/tap_row_halo.hpp — the input halo of a Cin = 3 layer, with the kw taps folded into
// the channels.
//
// The halo kernel (halo_tile.hpp) holds one 16-byte chunk per 8 input channels of a halo pixel and
// lets the atom read tap (kh, kw) at a shifted address. With Cin = 3 (the VAE's first layer) a
// chunk would be 3 elements of data and 13 of padding, and K = 27 is no multiple of the atom's K
// step. So this halo folds the three horizontal taps into the channels instead: its pixel (hr, c)
// holds, for output column ow0 + c, the input row oh0 - 1 + hr at columns ow0 + c - 1 .. ow0 + c + 1
// — the tap row
//
//   e = kw * 3 + ci   (9 elements, then zeros up to kStepElems: 16 bf16 or 32 e4m3 = 32 bytes)
//
// which is one K step of the atom (bf16 k16, e4m3 k32). The conv is then a 3 x 1 conv over tap
// rows: K step kh reads halo rows r + kh, an unshifted 8-pixel run, so 8 consecutive GEMM rows are
// 8 consecutive halo pixels, i.e. one core matrix, exactly as in HaloTile.
//
//   patch   kRows x 8 output pixels (oh0 + r, ow0 + c), GEMM row m = r * 8 + c
//   halo    (kRows + 2) x 8 tap rows, chunk-major: chunk j (tap-row elements j * kChunkElems ..)
//           of halo pixel hp = hr * 8 + c at j * kChunkStride + hp * 16
//   A       K step kh of the atom whose rows start at patch row r0: the descriptor at
//           a_offset(r0, kh), K halves kChunkStride apart (LBO), 8-row groups kRowStride (SBO)
//   B       the weights in the same K order, k' = kh * kStepElems + e: tap_row_k(k') names the
//           packed (natural, (kh, kw, c)) column it copies, or -1 for a zero
//
// The packed weights keep their natural order (packed_weights.hpp): the kernel rearranges its B
// tile when it copies it, so the packing does not depend on which kernel a build has.
// tests/host/test_tap_row_halo.cpp runs these addresses through the wgmma emulator against the
// direct convolution.
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"

namespace vaeconv::kernel {

template <int Rows, int ElemBytes>
struct TapRowHalo {
  static constexpr int kCin = 3;                         // the input channels it is built for
  static constexpr int kTapElems = 3 * kCin;              // data elements of one tap row
  static constexpr int kRows = Rows, kCols = 8, kPixels = Rows * 8;  // output patch
  static constexpr int kHaloRows = Rows + 2, kHaloCols = 8;
  static constexpr int kHaloPixels = kHaloRows * kHaloCols;
  static constexpr int kElemBytes = ElemBytes;
  static constexpr int kChunkElems = 16 / ElemBytes;
  static constexpr int kStepElems = 32 / ElemBytes;      // one atom K step: two chunks
  static constexpr int kChunks = 2;
  static constexpr int kSteps = 3;                       // K steps: kh = 0, 1, 2
  static constexpr int kK = kSteps * kStepElems;         // the GEMM K of the kernel
  static constexpr int kChunkStride = kHaloPixels * 16;  // bytes between the two chunk planes
  static constexpr int kRowStride = kHaloCols * 16;      // bytes between halo rows
  static constexpr int kBytes = kChunks * kChunkStride;
  static_assert(kTapElems <= kStepElems, "a tap row fits one K step");

  // Byte offset of chunk j of halo pixel (hr, c).
  VAECONV_HD static constexpr int offset(int j, int hr, int c) {
    return j * kChunkStride + (hr * kHaloCols + c) * 16;
  }
  // Byte offset, from the halo base, of the first A row of an atom whose rows start at patch row
  // r0 (a multiple of 8 GEMM rows), at K step kh.
  VAECONV_HD static constexpr int a_offset(int r0, int kh) {
    return (r0 / kCols + kh) * kRowStride;
  }
  // Element e of a tap row: the input pixel kw (0..2, left to right) and channel it holds; e >= 9
  // holds zero.
  VAECONV_HD static constexpr int tap_kw(int e) { return e / kCin; }
  VAECONV_HD static constexpr int tap_c(int e) { return e % kCin; }
  // The natural packed K column (((kh * 3) + kw) * 3 + c) of tap-row K position k', or -1.
  VAECONV_HD static constexpr int tap_row_k(int kp) {
    return kp % kStepElems < kTapElems ? (kp / kStepElems) * kTapElems + kp % kStepElems : -1;
  }
  // Packed column k of a weight row held as little-endian 32-bit words (the row's first bytes,
  // as the kernel loads them): its bf16 bits or e4m3 byte.
  VAECONV_HD static constexpr uint32_t packed_elem(const uint32_t* words, int k) {
    return (words[k * kElemBytes / 4] >> (8 * (k * kElemBytes % 4))) &
           (kElemBytes == 2 ? 0xFFFFu : 0xFFu);
  }
};

}  // namespace vaeconv::kernel
