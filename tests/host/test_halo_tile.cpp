// tests/host/test_halo_tile.cpp — the halo kernel's A operand (kernel/halo_tile.hpp) through the
// wgmma emulator (tests/emu/wgmma_emulator.hpp, written from the PTX ISA), against the direct conv.
//
// Both element types: the shipped bf16 halo and the e4m3 halo of the sweep candidate.
// One block tile is laid out as halo_conv_kernel.hpp lays it out: the patch's input halo in the
// chunk-major layout (zeros outside the frame), and for each K tile the B tile (packed weights,
// K order (kh, kw, c)) in the SwizzledTile of the stage. Each warpgroup's K steps get the
// descriptors the kernel builds: A from HaloCursor::a_offset with make_unswizzled(kChunkStride,
// kRowStride), B from make(stage) + the block offset of K step ka; padded K steps are skipped.
// Every accumulator must equal the conv sum at its (c_row, c_col). Negative controls: a wrong
// row stride, a cursor that ignores the tap, a swizzled A descriptor.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "emu/matrix_emulator.hpp"
#include "emu/operand_codes.hpp"
#include "emu/wgmma_emulator.hpp"
#include "vaeconv/arch/wgmma_layout.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"
#include "vaeconv/kernel/halo_tile.hpp"
#include "vaeconv/kernel/smem_layout.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace {

namespace emu = vaeconv::emu;
using vaeconv::kernel::HaloCursor;
using vaeconv::kernel::SwizzledTile;
using vaeconv::layout::WgmmaDescriptor;
using Halo = vaeconv::kernel::HaloBf16;     // the shipped bf16 halo
using HaloFp8 = vaeconv::kernel::HaloFp8;   // the e4m3 halo of the sweep candidate
using BTile = SwizzledTile<8>;              // BK = 128 bytes (64 bf16, 128 e4m3): 128-byte rows

template <int kElemBytes>
using Elem = emu::OperandCode<kElemBytes>;

enum class Break { kNothing, kRowStride, kIgnoreTap, kSwizzledA };

// A frame of H x W pixels, Cin channels; the patch at (oh0, ow0); N = 96 output channels; the
// halo H of either element type (bf16: K steps of 16, e4m3: of 32, both 32 bytes; a K tile is
// one 128-byte B row either way, four K steps). Returns the number of wrong accumulator registers
// (of H::kPixels / 64 m64 atoms x 128 threads x 48): every 64-row atom of the patch gets its own
// descriptor, whichever warpgroup issues it.
template <class H>
int run_tile(int h, int w, int cin, int oh0, int ow0, Break brk, unsigned seed) {
  using E = Elem<H::kElemBytes>;
  constexpr int kEB = H::kElemBytes, kChunk = H::kChunkElems;
  constexpr int kN = 96, kBK = 128 / kEB, kStepK = 32 / kEB, kAtoms = H::kPixels / 64;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8);  // k / 8: exact in bf16 and in e4m3
  auto gen = [&]() { return E::encode(float(small(rng)) / 8.f); };
  std::vector<std::uint16_t> x(size_t(h) * w * cin), wt(size_t(kN) * 9 * cin);
  for (auto& v : x) v = gen();
  for (auto& v : wt) v = gen();
  const int k = 9 * cin, k_tiles = (k + kBK - 1) / kBK;

  // Shared memory: halo at 0, the B stage at a 1 KiB-aligned address after it. Unwritten bytes
  // are 0xEE: a large finite bf16, and -288 in e4m3fn.
  const std::uint32_t halo_base = 0, stage = (H::kBytes + 1023) / 1024 * 1024;
  std::vector<std::uint8_t> smem(stage + kN * 128, 0xEE);
  for (int hp = 0; hp < H::kHaloPixels; ++hp)
    for (int j = 0; j < cin / kChunk; ++j) {
      const int ih = oh0 - 1 + H::halo_row(hp), iw = ow0 - 1 + H::halo_col(hp);
      for (int e = 0; e < kChunk; ++e) {
        const bool in = ih >= 0 && ih < h && iw >= 0 && iw < w;
        const std::uint16_t v = in ? x[(size_t(ih) * w + iw) * cin + kChunk * j + e] : 0;
        E::store(smem, halo_base + H::offset(j, H::halo_row(hp), H::halo_col(hp)) + kEB * e, v);
      }
    }

  std::vector<std::vector<std::vector<double>>> d(kAtoms, std::vector<std::vector<double>>(
                                                         128, std::vector<double>(kN / 2, 0.0)));
  HaloCursor<H> cur;
  for (int kt = 0; kt < k_tiles; ++kt) {
    // B tile kt: packed row n, K elements kBK kt .. kBK kt + kBK - 1 (zeros past K).
    for (int n = 0; n < kN; ++n)
      for (int c8 = 0; c8 < 8; ++c8)
        for (int e = 0; e < kChunk; ++e) {
          const int kk = kt * kBK + kChunk * c8 + e;
          const std::uint16_t v = kk < k ? wt[size_t(n) * k + kk] : 0;
          E::store(smem, stage + BTile::offset(n, c8) + kEB * e, v);
        }
    for (int ka = 0; ka < kBK / kStepK; ++ka) {
      if (cur.k < k) {
        for (int wg = 0; wg < kAtoms; ++wg) {
          const int row0 = 64 * wg;
          std::uint32_t a = halo_base + std::uint32_t(cur.a_offset(row0));
          if (brk == Break::kIgnoreTap) a -= std::uint32_t(cur.tap_offset);
          const std::uint32_t sbo = brk == Break::kRowStride ? H::kRowStride + 16 : H::kRowStride;
          std::uint64_t da = WgmmaDescriptor::make_unswizzled(a, H::kChunkStride, sbo);
          if (brk == Break::kSwizzledA) da |= std::uint64_t(1) << 62;
          const std::uint64_t db = WgmmaDescriptor::make(stage, 128) +
                                   std::uint32_t(BTile::offset(0, 2 * ka)) / 16;
          try {
            emu::wgmma_ss(d[size_t(wg)], smem, da, db, kN, kEB, E::kDecode);
          } catch (const std::exception&) {
            return -1;  // the emulator refused the descriptor (a negative control)
          }
        }
      }
      cur.step(kStepK, cin);
    }
  }

  // Reference: out[m][n] = sum over taps and channels, zero padding outside the frame.
  return emu::wrong_patch_accumulators<E>(d, kN, H::kCols, oh0, ow0, h, w, cin, x, wt, k);
}

TEST(HaloTile, GeometryOfTheShippedHalo) {
  static_assert(Halo::kCols == 8 && Halo::kPixels % 64 == 0, "whole m64 atoms of 8-pixel rows");
  EXPECT_EQ(Halo::kHaloPixels, (Halo::kRows + 2) * 10);
  EXPECT_EQ(Halo::kChunkStride, (Halo::kHaloPixels + 1) * 16);
  EXPECT_EQ(Halo::kRowStride, 160);
  EXPECT_EQ(Halo::kBytes, 12 * (Halo::kHaloPixels + 1) * 16);
  // Row m of tap (kh, kw) reads halo pixel (m / 8 + kh, m % 8 + kw).
  EXPECT_EQ(Halo::a_offset(9, 1, 2, 3), 3 * Halo::kChunkStride + (2 * 10 + 3) * 16);
  EXPECT_EQ(Halo::a_offset(Halo::kPixels - 1, 2, 2, 11),
            11 * Halo::kChunkStride + ((Halo::kRows + 1) * 10 + 9) * 16);
  // Eight consecutive A rows of one patch row are 128 contiguous bytes (one core matrix).
  for (int m = 0; m < 8; ++m) EXPECT_EQ(Halo::a_offset(8 + m, 2, 1, 0), Halo::a_offset(8, 2, 1, 0) + 16 * m);
}

// The cursor of halo H walks the packed K in the atom's steps (bf16 16, e4m3 32 channels).
template <class H>
void expect_cursor_walks(int cin) {
  constexpr int kStepK = 32 / H::kElemBytes;
  HaloCursor<H> cur;
  for (int k = 0; k < 9 * cin; k += kStepK) {
    const int tap = k / cin, kh = tap / 3, kw = tap % 3, c = k % cin;
    ASSERT_EQ(cur.k, k);
    ASSERT_EQ(cur.c, c) << cin << " " << k;
    ASSERT_EQ(cur.kh * 3 + cur.kw, tap);
    for (int row0 = 0; row0 < H::kPixels; row0 += 64)
      ASSERT_EQ(cur.a_offset(row0), H::a_offset(row0, kh, kw, c / H::kChunkElems)) << cin << " " << k;
    cur.step(kStepK, cin);
  }
}

TEST(HaloTile, CursorWalksThePackedK) {
  for (int cin : {16, 32, 48, 96}) expect_cursor_walks<Halo>(cin);
  for (int cin : {32, 64, 96}) expect_cursor_walks<HaloFp8>(cin);
}

TEST(HaloTile, WgmmaOnTheHaloIsTheConvolution) {
  constexpr int R = Halo::kRows;
  // Interior patch, Cin = 96 (the 96-channel layers: 14 K tiles, the last half padding).
  EXPECT_EQ(run_tile<Halo>(3 * R, 30, 96, R, 8, Break::kNothing, 1), 0);
  // Top-left corner (zero padding on two sides), Cin = 16 (dec_conv_in: 3 K tiles).
  EXPECT_EQ(run_tile<Halo>(R + 4, 12, 16, 0, 0, Break::kNothing, 2), 0);
  // A patch that overhangs the frame's bottom-right corner (partial patch), Cin = 32.
  EXPECT_EQ(run_tile<Halo>(R + 5, 13, 32, R, 8, Break::kNothing, 3), 0);
  // Cin = 48: K steps cross taps inside a K tile.
  EXPECT_EQ(run_tile<Halo>(2 * R + 1, 17, 48, R, 8, Break::kNothing, 4), 0);
}

// The e4m3 halo (the sweep candidate of tile_table.hpp): 16 channels per chunk, K steps of 32,
// BK = 128 (K tiles of 128 e4m3 channels: with Cin = 96, 7 K tiles, the last one 3 steps).
TEST(HaloTile, WgmmaOnTheE4m3HaloIsTheConvolution) {
  constexpr int R = HaloFp8::kRows;
  static_assert(HaloFp8::kChunkElems == 16 && HaloFp8::kMaxChunks == 6, "96 e4m3 channels");
  EXPECT_EQ(run_tile<HaloFp8>(3 * R, 30, 96, R, 8, Break::kNothing, 11), 0);
  EXPECT_EQ(run_tile<HaloFp8>(R + 4, 12, 32, 0, 0, Break::kNothing, 12), 0);      // corner
  EXPECT_EQ(run_tile<HaloFp8>(R + 5, 13, 64, R, 8, Break::kNothing, 13), 0);      // partial; taps
  EXPECT_EQ(run_tile<HaloFp8>(2 * R + 1, 17, 96, R, 0, Break::kNothing, 14), 0);  // left edge
}

TEST(HaloTile, NegativeControlsFail) {
  constexpr int R = Halo::kRows;
  EXPECT_NE(run_tile<Halo>(3 * R, 30, 32, R, 8, Break::kRowStride, 5), 0);
  EXPECT_NE(run_tile<Halo>(3 * R, 30, 32, R, 8, Break::kIgnoreTap, 6), 0);
  EXPECT_NE(run_tile<Halo>(3 * R, 30, 32, R, 8, Break::kSwizzledA, 7), 0);
  constexpr int R8 = HaloFp8::kRows;
  EXPECT_NE(run_tile<HaloFp8>(3 * R8, 30, 64, R8, 8, Break::kRowStride, 15), 0);
  EXPECT_NE(run_tile<HaloFp8>(3 * R8, 30, 64, R8, 8, Break::kIgnoreTap, 16), 0);
}

}  // namespace
