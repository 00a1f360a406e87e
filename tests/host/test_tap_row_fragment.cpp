// tests/host/test_tap_row_fragment.cpp — the tap-row kernel on fragment atoms
// (kernel/tap_row_fragment.hpp): each lane's A address, through the matrix emulator
// (tests/emu/fragment_atoms.hpp, written from cdna.md and the PTX ISA), against the direct
// convolution of a Cin = 3 frame.
//
// One block tile as tap_row_conv_kernel.hpp's fill lays it out: tap row (hr, c) holds input row
// oh0 - 1 + hr at columns ow0 + c - 1 .. + 1 (element e = kw * 3 + ci, zeros outside the frame and
// past e = 8), chunk-major; B holds packed (natural K order) column tap_row_k(k') at tap-row
// position k' in the SwizzledTile of a 128-byte row, zeros in the chunks past the three tap rows
// that the atom steps read (the fill's kBChunks), 0xEE poison elsewhere. For every atom of the
// shipped 16 x 8 patch and 96 output channels, every atom step s: lane l fetches its A chunk(s)
// at TapRowFragment::a_offset(l, part, m0, s) and its B chunk(s) where BlockGemm::fragment_step
// reads them, and the emulated instruction(s) run (bf16: gfx950, gfx942, NVIDIA mma.sync; e4m3:
// the 32x32x64 atom on gfx950 and gfx942 in two steps of two tap rows, NVIDIA m16n8k32 in three).
// Every accumulator, times the target's product scale, must equal the conv sum (NaN exactly where
// a planted NaN input reaches it). Negative controls: a step that forgets its tap-row shift; B's
// chunks past the tap rows left as the target's NaN code (not zeroed by the fill: NaN times the
// fourth row's zero A is NaN); the fourth tap row of a two-row atom read from the halo instead of
// the zero chunk, which spreads a NaN input to outputs three rows above it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "emu/fragment_atoms.hpp"
#include "emu/operand_codes.hpp"
#include "emu/tap_row_image.hpp"
#include "vaeconv/arch/fragment_layouts.hpp"
#include "vaeconv/kernel/smem_layout.hpp"
#include "vaeconv/kernel/tap_row_fragment.hpp"
#include "vaeconv/kernel/tap_row_halo.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace {

namespace emu = vaeconv::emu;
namespace lay = vaeconv::layout;
namespace cdna = vaeconv::kernel::cdna;
using vaeconv::kernel::TapRowFragment;
using Target = emu::FragTarget;

enum class Break { kNothing, kNoRowShift, kBTailNotZeroed, kFourthRowFromHalo };

// A frame of h x w pixels of 3 channels, the patch at (oh0, ow0), kN output channels. Returns the
// number of wrong accumulator registers (-1: a read left the LDS image).
// plant_nan: input pixel (oh0 + 5, ow0 + 2), channel 1, holds the target's NaN code.
template <class H, class L>
int run_tile(Target t, int h, int w, int oh0, int ow0, Break brk, unsigned seed,
             bool plant_nan = false) {
  using E = emu::OperandCode<H::kElemBytes>;
  using F = TapRowFragment<H, L>;
  using Image = emu::TapRowImage<H>;
  using BTile = typename Image::BTile;  // one 128-byte row of B per output channel
  constexpr int kEB = H::kElemBytes, kChunk = H::kChunkElems, kCin = H::kCin;
  constexpr int kN = cdna::TapRowFragmentShape::BN, kKPad = Image::kKPad;
  constexpr int kBChunks = F::kBChunks;  // the chunks TapRowFragmentMath reads and the fill zeroes
  constexpr int kChunksPerStep = L::kK / kChunk;
  static_assert(kBChunks <= 8, "the atom steps read inside one 128-byte B row");
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8);  // k / 8: exact in bf16 and in e4m3
  auto gen = [&]() {
    int v = 0;
    while (v == 0) v = small(rng);  // never zero: a dropped element always shows
    return E::encode(float(v) / 8.f);
  };
  std::vector<std::uint16_t> x(std::size_t(h) * w * kCin), wt(std::size_t(kN) * kKPad, 0);
  for (auto& v : x) v = gen();
  for (int n = 0; n < kN; ++n)
    for (int k = 0; k < 9 * kCin; ++k) wt[std::size_t(n) * kKPad + k] = gen();  // natural
  // bf16 NaN; e4m3: FNUZ's NaN where gfx942 reads the bytes, else e4m3fn's
  const std::uint16_t nan_code = kEB == 2 ? 0x7FC0 : t == Target::kGfx942 ? 0x80 : 0x7F;
  std::size_t nan_at = x.size();
  if (plant_nan) {
    nan_at = (std::size_t(oh0 + 5) * w + std::size_t(ow0 + 2)) * kCin + 1;
    if (nan_at >= x.size()) throw std::logic_error("the planted NaN lies outside the frame");
    x[nan_at] = nan_code;
  }
  auto x_value = [&](std::size_t i) {
    return i == nan_at ? std::nan("") : E::value(x[i]);
  };

  // LDS: the halo at 0, B at the next 1 KiB boundary (HaloPolicy::kHaloBytes). Every byte the
  // fill does not write holds a NaN code of the target (0xFF: bf16 and e4m3fn NaN; 0x80 where
  // gfx942 reads e4m3 as FNUZ), so any read of one shows, even against a zero operand.
  const std::uint32_t stage = (H::kBytes + 1023) / 1024 * 1024;
  const std::uint8_t poison = kEB == 1 && t == Target::kGfx942 ? 0x80 : 0xFF;
  std::vector<std::uint8_t> s(stage + kN * 128, poison);
  Image::put_halo(s, x, h, w, oh0, ow0);
  // B as the fill cuts it (packed_elem of the row's little-endian words, at tap_row_k), then the
  // chunks past the three tap rows up to kBChunks: zeros (the fill) or NaN codes (the control).
  for (int n = 0; n < kN; ++n) {
    Image::put_b_row(s, stage, n, &wt[std::size_t(n) * kKPad]);
    for (int j = H::kSteps * H::kChunks; j < kBChunks; ++j)
      for (int e = 0; e < kChunk; ++e)
        E::store(s, stage + std::uint32_t(BTile::offset(n, j) + kEB * e),
                 brk == Break::kBTailNotZeroed ? nan_code : 0);
  }

  int bad = 0;
  const float scale = emu::product_scale<L>(t);
  for (int m0 = 0; m0 < H::kPixels; m0 += L::kM)
    for (int n0 = 0; n0 < kN; n0 += L::kN) {
      emu::FragF<L::kCElems> c(L::kLanes);
      for (int st = 0; st < F::kSteps; ++st) {
        auto a_addr = [&](int l, int part) {
          const int m = m0 + L::a_lds_row(l), ch = L::a_lds_chunk(l, part);
          const int kh = st * F::kRowsPerStep + ch / H::kChunks;
          if (brk == Break::kFourthRowFromHalo && kh >= H::kSteps)
            return std::uint32_t(H::offset(ch % H::kChunks, m / H::kCols + kh, m % H::kCols));
          return std::uint32_t(F::a_offset(l, part, m0, brk == Break::kNoRowShift ? 0 : st));
        };
        auto b_addr = [&](int l, int part) {
          const int chunk = st * kChunksPerStep + L::b_lds_chunk(l, part);
          return stage + std::uint32_t(BTile::offset(n0 + L::b_lds_row(l), chunk));
        };
        try {
          c = emu::run_lds_atom<L>(t, s, a_addr, b_addr, c);
        } catch (const std::out_of_range&) {
          return -1;
        }
      }
      for (int l = 0; l < L::kLanes; ++l)
        for (int r = 0; r < L::kCElems; ++r) {
          const int m = m0 + L::c_row(l, r), n = n0 + L::c_col(l, r);
          const int oh = oh0 + m / H::kCols, ow = ow0 + m % H::kCols;
          const double want = emu::direct_conv3x3_at(
              oh, ow, h, w, kCin, x_value,
              [&](int k) { return E::value(wt[std::size_t(n) * kKPad + k]); });
          const double got = double(scale) * double(c.lanes[std::size_t(l)][std::size_t(r)]);
          if (!(got == want) && !(std::isnan(got) && std::isnan(want))) ++bad;
        }
    }
  return bad;
}

using HBf16 = cdna::TapRowFragmentHaloBf16;
using HFp8 = cdna::TapRowFragmentHaloFp8;

// Interior, top-left corner, a patch that overhangs the frame, the left edge, a frame smaller than
// the patch.
template <class H, class L>
void expect_exact(Target t) {
  constexpr int R = H::kRows;
  const int cases[][4] = {{3 * R, 30, R, 8}, {R + 4, 12, 0, 0}, {R + 5, 13, R, 8},
                          {2 * R + 1, 17, R, 0}, {R - 3, 5, 0, 0}};
  unsigned seed = 1;
  for (const auto& c : cases)
    EXPECT_EQ((run_tile<H, L>(t, c[0], c[1], c[2], c[3], Break::kNothing, seed++)), 0)
        << emu::frag_target_name(t) << " " << H::kElemBytes << "-byte " << c[0] << "x" << c[1]
        << " patch (" << c[2] << ", " << c[3] << ")";
}

TEST(TapRowFragment, StepsCoverTheThreeTapRows) {
  using B32 = TapRowFragment<HBf16, lay::Mfma32x32x16Bf16>;
  using F64 = TapRowFragment<HFp8, lay::Mfma32x32x64Fp8>;
  using NvF = TapRowFragment<HFp8, lay::MmaM16N16K32Fp8>;
  static_assert(B32::kRowsPerStep == 1 && B32::kSteps == 3 && B32::kK == 48, "bf16: a row a step");
  static_assert(F64::kRowsPerStep == 2 && F64::kSteps == 2 && F64::kK == 128,
                "CDNA e4m3: two rows a step, the fourth row zeros");
  static_assert(NvF::kRowsPerStep == 1 && NvF::kSteps == 3 && NvF::kK == 96,
                "m16n8k32: a row a step");
  // Eight consecutive GEMM rows are eight consecutive halo pixels of one chunk plane.
  for (int l = 0; l < 8; ++l)
    EXPECT_EQ(B32::a_offset(l, 0, 32, 1) - B32::a_offset(0, 0, 32, 1), 16 * l);
  // The fourth tap row reads chunk 1 of the first, zero in the e4m3 halo (9 elements of 16).
  static_assert(HFp8::kTapElems <= HFp8::kChunkElems, "chunk 1 of an e4m3 tap row is zero");
  EXPECT_EQ(F64::a_offset(40, 0, 0, 1), HFp8::offset(1, 1, 0));  // lane 40: row 8, chunk 2 -> kh 3
}

TEST(TapRowFragment, Gfx950Bf16MatchesTheDirectConv) {
  expect_exact<HBf16, lay::Mfma32x32x16Bf16>(Target::kGfx950);
}
TEST(TapRowFragment, Gfx942Bf16MatchesTheDirectConv) {
  expect_exact<HBf16, lay::Mfma32x32x16Bf16>(Target::kGfx942);
}
TEST(TapRowFragment, MmaSyncBf16MatchesTheDirectConv) {
  expect_exact<HBf16, lay::MmaM16N16K16Bf16>(Target::kNvidia);
}
TEST(TapRowFragment, Gfx950Fp8MatchesTheDirectConv) {
  expect_exact<HFp8, lay::Mfma32x32x64Fp8>(Target::kGfx950);
}
TEST(TapRowFragment, Gfx942Fp8MatchesTheDirectConv) {
  expect_exact<HFp8, lay::Mfma32x32x64Fp8>(Target::kGfx942);
}
TEST(TapRowFragment, MmaSyncFp8MatchesTheDirectConv) {
  expect_exact<HFp8, lay::MmaM16N16K32Fp8>(Target::kNvidia);
}

// A NaN input reaches exactly the outputs whose taps read it: the fourth tap row of the two-row
// e4m3 atoms reads zeros, not the halo row three below (the library's e4m3 tensors hold no NaN
// code, arch/fp8_fnuz.hpp, but a zero in A must not depend on that).
TEST(TapRowFragment, Fp8NanInputReachesOnlyItsOutputs) {
  constexpr int R = HFp8::kRows;
  for (Target t : {Target::kGfx950, Target::kGfx942})
    EXPECT_EQ((run_tile<HFp8, lay::Mfma32x32x64Fp8>(t, 3 * R, 30, R, 8, Break::kNothing, 31,
                                                    true)), 0)
        << emu::frag_target_name(t);
  EXPECT_EQ((run_tile<HBf16, lay::Mfma32x32x16Bf16>(Target::kGfx950, 3 * R, 30, R, 8,
                                                    Break::kNothing, 32, true)), 0);
  EXPECT_EQ((run_tile<HFp8, lay::MmaM16N16K32Fp8>(Target::kNvidia, 3 * R, 30, R, 8,
                                                  Break::kNothing, 33, true)), 0);
}

TEST(TapRowFragment, NegativeControlsFail) {
  constexpr int R = HBf16::kRows;
  EXPECT_NE((run_tile<HBf16, lay::Mfma32x32x16Bf16>(Target::kGfx950, 3 * R, 30, R, 8,
                                                    Break::kNoRowShift, 21)), 0);
  EXPECT_NE((run_tile<HBf16, lay::MmaM16N16K16Bf16>(Target::kNvidia, 3 * R, 30, R, 8,
                                                    Break::kNoRowShift, 22)), 0);
  EXPECT_NE((run_tile<HFp8, lay::Mfma32x32x64Fp8>(Target::kGfx942, 3 * R, 30, R, 8,
                                                  Break::kNoRowShift, 23)), 0);
  EXPECT_NE((run_tile<HFp8, lay::Mfma32x32x64Fp8>(Target::kGfx950, 3 * R, 30, R, 8,
                                                  Break::kBTailNotZeroed, 25)), 0);
  EXPECT_NE((run_tile<HFp8, lay::Mfma32x32x64Fp8>(Target::kGfx942, 3 * R, 30, R, 8,
                                                  Break::kBTailNotZeroed, 26)), 0);
  for (Target t : {Target::kGfx950, Target::kGfx942})
    EXPECT_NE((run_tile<HFp8, lay::Mfma32x32x64Fp8>(t, 3 * R, 30, R, 8,
                                                    Break::kFourthRowFromHalo, 27, true)), 0)
        << emu::frag_target_name(t);
}

}  // namespace
