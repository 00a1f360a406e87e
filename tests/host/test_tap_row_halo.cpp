// tests/host/test_tap_row_halo.cpp — the tap-row kernel's operands (kernel/tap_row_halo.hpp)
// through the wgmma emulator (tests/emu/wgmma_emulator.hpp, written from the PTX ISA), against the
// direct convolution of a Cin = 3 frame.
//
// One block tile is laid out as tap_row_conv_kernel.hpp lays it out: tap row (hr, c) holds input
// row oh0 - 1 + hr at columns ow0 + c - 1 .. + 1 (element e = kw * 3 + ci, zeros outside the frame
// and past e = 8), chunk-major; the B tile holds packed (natural K order) column tap_row_k(k') at
// tap-row position k', in the SwizzledTile of a 128-byte row. Each 64-row atom gets the kernel's
// descriptors for K steps kh = 0, 1, 2. Every accumulator must equal the conv sum at its
// (c_row, c_col). Both element types (bf16 and e4m3 kernels ship). Negative controls: a wrong K-half stride, a K step that forgets its row shift, a B tile
// in the natural K order.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "emu/operand_codes.hpp"
#include "emu/tap_row_image.hpp"
#include "emu/wgmma_emulator.hpp"
#include "vaeconv/arch/wgmma_layout.hpp"
#include "vaeconv/kernel/smem_layout.hpp"
#include "vaeconv/kernel/tap_row_halo.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace {

namespace emu = vaeconv::emu;
using vaeconv::kernel::SwizzledTile;
using vaeconv::kernel::TapRowHalo;
using vaeconv::layout::WgmmaDescriptor;
using Shipped = vaeconv::kernel::TapRowBf16;
using BTile = SwizzledTile<8>;  // one 128-byte row of B per output channel

enum class Break { kNothing, kChunkStride, kNoRowShift, kNaturalB };

// A frame of h x w pixels of 3 channels, the patch at (oh0, ow0), 96 output channels of packed
// weights (k_pad = one 128-byte row). Returns the number of wrong accumulator registers, or -1
// when the emulator refuses a descriptor.
template <class H>
int run_tile(int h, int w, int oh0, int ow0, Break brk, unsigned seed) {
  using E = emu::OperandCode<H::kElemBytes>;
  constexpr int kEB = H::kElemBytes, kCin = H::kCin;
  constexpr int kN = 96, kKPad = 128 / kEB, kAtoms = H::kPixels / 64;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8);  // k / 8: exact in bf16 and in e4m3
  auto gen = [&]() {
    int v = 0;
    while (v == 0) v = small(rng);  // never zero: a dropped element always shows
    return E::encode(float(v) / 8.f);
  };
  std::vector<std::uint16_t> x(size_t(h) * w * kCin), wt(size_t(kN) * kKPad, 0);
  for (auto& v : x) v = gen();
  for (int n = 0; n < kN; ++n)
    for (int k = 0; k < 9 * kCin; ++k) wt[size_t(n) * kKPad + k] = gen();  // natural packing

  // Shared memory: halo at 0, B at the next 1 KiB boundary. Unwritten bytes are 0xEE (a large
  // finite bf16, -288 in e4m3fn): a read of a byte the kernel does not write shows.
  const std::uint32_t stage = (H::kBytes + 1023) / 1024 * 1024;
  std::vector<std::uint8_t> smem(stage + kN * 128, 0xEE);
  emu::TapRowImage<H>::put_halo(smem, x, h, w, oh0, ow0);
  // B as the kernel cuts it: each packed row's first bytes as little-endian words, element k of
  // them by packed_elem (the kernel's expression), at tap-row position k' (tap_row_k).
  for (int n = 0; n < kN; ++n)
    emu::TapRowImage<H>::put_b_row(smem, stage, n, &wt[size_t(n) * kKPad],
                                   brk == Break::kNaturalB);

  std::vector<std::vector<std::vector<double>>> d(
      kAtoms, std::vector<std::vector<double>>(128, std::vector<double>(kN / 2, 0.0)));
  for (int kh = 0; kh < H::kSteps; ++kh)
    for (int atom = 0; atom < kAtoms; ++atom) {
      const int shift = brk == Break::kNoRowShift ? 0 : kh;
      const std::uint32_t a = std::uint32_t(H::a_offset(64 * atom, 0) + shift * H::kRowStride);
      const std::uint32_t lbo = brk == Break::kChunkStride ? 16 : H::kChunkStride;
      const std::uint64_t da = WgmmaDescriptor::make_unswizzled(a, lbo, H::kRowStride);
      const std::uint64_t db =
          WgmmaDescriptor::make(stage, 128) + std::uint32_t(BTile::offset(0, 2 * kh)) / 16;
      try {
        emu::wgmma_ss(d[size_t(atom)], smem, da, db, kN, kEB, E::kDecode);
      } catch (const std::exception&) {
        return -1;
      }
    }

  return emu::wrong_patch_accumulators<E>(d, kN, H::kCols, oh0, ow0, h, w, kCin, x, wt, kKPad);
}

TEST(TapRowHalo, GeometryOfTheShippedHalo) {
  static_assert(Shipped::kCols == 8 && Shipped::kPixels % 64 == 0, "whole m64 atoms");
  static_assert(Shipped::kK == 48 && Shipped::kStepElems == 16, "three bf16 K steps of 16");
  EXPECT_EQ(Shipped::kHaloPixels, (Shipped::kRows + 2) * 8);
  EXPECT_EQ(Shipped::kRowStride, 128);
  EXPECT_EQ(Shipped::kBytes, 2 * Shipped::kHaloPixels * 16);
  // Eight consecutive A rows (one patch row) are eight consecutive tap rows: one core matrix.
  for (int kh = 0; kh < 3; ++kh)
    EXPECT_EQ(Shipped::a_offset(64, kh), Shipped::offset(0, 8 + kh, 0));
  // Tap-row elements: (kw, c) = (e / 3, e % 3).
  EXPECT_EQ(Shipped::tap_kw(7), 2);
  EXPECT_EQ(Shipped::tap_c(7), 1);
}

// Every natural column 0..26 appears exactly once among H's tap-row K positions; every other
// position is a zero.
template <class H>
void expect_tap_row_k_covers_the_natural_columns() {
  std::vector<int> seen(27, 0);
  int zeros = 0;
  for (int kp = 0; kp < H::kK; ++kp) {
    const int k = H::tap_row_k(kp);
    if (k < 0) {
      ++zeros;
      continue;
    }
    ASSERT_LT(k, 27);
    ++seen[size_t(k)];
  }
  for (int k = 0; k < 27; ++k)
    EXPECT_EQ(seen[size_t(k)], 1) << "elem bytes " << H::kElemBytes << " k " << k;
  EXPECT_EQ(zeros, H::kK - 27);
}

TEST(TapRowHalo, TapRowKNamesTheNaturalColumns) {
  expect_tap_row_k_covers_the_natural_columns<TapRowHalo<32, 2>>();
  expect_tap_row_k_covers_the_natural_columns<TapRowHalo<32, 1>>();
  EXPECT_EQ(Shipped::tap_row_k(16 + 4), 9 + 4);  // kh 1, (kw 1, c 1)
  EXPECT_EQ(Shipped::tap_row_k(9), -1);          // the tap row's padding
}

TEST(TapRowHalo, WgmmaOnTheTapRowsIsTheConvolution) {
  constexpr int R = Shipped::kRows;
  EXPECT_EQ(run_tile<Shipped>(3 * R, 30, R, 8, Break::kNothing, 1), 0);          // interior
  EXPECT_EQ(run_tile<Shipped>(R + 4, 12, 0, 0, Break::kNothing, 2), 0);          // top-left corner
  EXPECT_EQ(run_tile<Shipped>(R + 5, 13, R, 8, Break::kNothing, 3), 0);          // overhangs
  EXPECT_EQ(run_tile<Shipped>(2 * R + 1, 17, R, 0, Break::kNothing, 4), 0);      // left edge
  EXPECT_EQ(run_tile<Shipped>(R - 3, 5, 0, 0, Break::kNothing, 5), 0);           // frame < patch
  // e4m3: one K step of 32 per kernel row, 9 elements and 23 zeros.
  using Fp8 = vaeconv::kernel::TapRowFp8;
  EXPECT_EQ(run_tile<Fp8>(3 * R, 30, R, 8, Break::kNothing, 6), 0);
  EXPECT_EQ(run_tile<Fp8>(R + 5, 13, R, 8, Break::kNothing, 7), 0);
  EXPECT_EQ(run_tile<Fp8>(R + 4, 12, 0, 0, Break::kNothing, 11), 0);
}

TEST(TapRowHalo, NegativeControlsFail) {
  constexpr int R = Shipped::kRows;
  EXPECT_NE(run_tile<Shipped>(3 * R, 30, R, 8, Break::kChunkStride, 8), 0);
  EXPECT_NE(run_tile<Shipped>(3 * R, 30, R, 8, Break::kNoRowShift, 9), 0);
  EXPECT_NE(run_tile<Shipped>(3 * R, 30, R, 8, Break::kNaturalB, 10), 0);
  using Fp8 = vaeconv::kernel::TapRowFp8;
  EXPECT_NE(run_tile<Fp8>(3 * R, 30, R, 8, Break::kNoRowShift, 12), 0);
  EXPECT_NE(run_tile<Fp8>(3 * R, 30, R, 8, Break::kNaturalB, 13), 0);
}

TEST(TapRowHalo, PackedElemReadsLittleEndianWords) {
  const std::uint32_t words[2] = {0x44332211u, 0x88776655u};
  EXPECT_EQ(Shipped::packed_elem(words, 0), 0x2211u);
  EXPECT_EQ(Shipped::packed_elem(words, 3), 0x8877u);
  EXPECT_EQ(vaeconv::kernel::TapRowFp8::packed_elem(words, 5), 0x66u);
}

TEST(TapRowHalo, DispatchTakesOnlyCin3CausalFrames) {
  using vaeconv::ConvDesc;
  using vaeconv::DType;
  using vaeconv::kernel::use_tap_row_kernel;
  const bool built = vaeconv::kernel::kTapRowKernel;  // GPU builds: wgmma or fragment atoms
  EXPECT_EQ(use_tap_row_kernel(ConvDesc::causal3x3x3(1, 1, 1024, 1024, 3, 96)), built);
  EXPECT_EQ(use_tap_row_kernel(ConvDesc::causal3x3x3(2, 1, 37, 53, 3, 192)), built);
  EXPECT_FALSE(use_tap_row_kernel(ConvDesc::causal3x3x3(1, 3, 64, 64, 3, 96)));  // T > 1
  EXPECT_FALSE(use_tap_row_kernel(ConvDesc::causal3x3x3(1, 1, 64, 64, 4, 96)));  // Cin 4
  EXPECT_FALSE(use_tap_row_kernel(ConvDesc::causal3x3x3(1, 1, 64, 64, 3, 32)));  // narrow tile
  EXPECT_FALSE(use_tap_row_kernel(ConvDesc::upsample2x(1, 1, 64, 64, 3, 96)));
  EXPECT_FALSE(use_tap_row_kernel(ConvDesc::downsample(1, 1, 64, 64, 3, 96)));
  EXPECT_EQ(use_tap_row_kernel(ConvDesc::causal3x3x3(1, 1, 64, 64, 3, 96, DType::kFP8E4M3)),
            built);
}

}  // namespace
