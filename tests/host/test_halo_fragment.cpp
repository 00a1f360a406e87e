// tests/host/test_halo_fragment.cpp — the halo read by fragment atoms (kernel/halo_fragment.hpp):
// each lane's A address, through the matrix emulator (tests/emu/matrix_emulator.hpp, written from
// cdna.md and the PTX ISA), against the direct convolution; and the LDS bank conflicts of those
// reads under the CDNA bank model (tests/lds/bank_model.hpp).
//
// One block tile as halo_fragment_kernel.hpp lays it out: the patch's input halo in HaloTile's
// chunk-major layout (zeros outside the frame, 0xEE poison everywhere else, the zero chunk
// zeroed), B as the packed weights Bt[n][k]. For every atom of the patch (rows m0 ..) and of
// 96 output channels, every K step k of the packed T = 1 slice: lane l fetches its A chunk(s) at
// HaloFragment::a_offset(l, part, m0, k, cin) — AMD: 16 bytes per chunk as ds_read_b128 would;
// NVIDIA: the row addresses of an emulated ldmatrix.x4 — and the emulated instruction(s) run:
// gfx950 one MFMA 32x32x16 bf16, gfx942 two 32x32x8 on the chunk halves, NVIDIA two m16n8k16.
// Every accumulator must equal the conv sum at its (c_row, c_col). Negative controls: a lane
// address that ignores the tap, one that ignores the lane's chunk, a wrong row pitch. The atoms
// run through tests/emu/fragment_atoms.hpp.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "emu/fragment_atoms.hpp"
#include "emu/matrix_emulator.hpp"
#include "emu/operand_codes.hpp"
#include "lds/bank_model.hpp"
#include "vaeconv/arch/fragment_layouts.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/kernel/halo_fragment.hpp"
#include "vaeconv/kernel/halo_tile.hpp"

namespace {

namespace emu = vaeconv::emu;
namespace lay = vaeconv::layout;
using vaeconv::kernel::HaloFragment;
using Halo = vaeconv::kernel::HaloTile<16, 8, 96, 2>;  // the fragment halo of tile_table.hpp

using Target = emu::FragTarget;
enum class Break { kNothing, kIgnoreTap, kIgnoreLaneChunk, kRowPitch };
const char* target_name(Target t) { return emu::frag_target_name(t); }

// A frame of h x w pixels and cin channels, the patch at (oh0, ow0), 96 output channels. Returns
// the number of wrong accumulator registers over the whole patch x 96 tile (-1: a read left the
// LDS, which only a negative control may do).
template <class L>
int run_tile(Target t, int h, int w, int cin, int oh0, int ow0, Break brk, unsigned seed) {
  using F = HaloFragment<Halo, L>;
  constexpr int kN = 96;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8);  // k / 8: products and sums exact in fp32
  auto gen = [&]() { return vaeconv::float_to_bf16(float(small(rng)) / 8.f); };
  const int k = 9 * cin;
  std::vector<std::uint16_t> x(std::size_t(h) * w * cin), wt(std::size_t(kN) * k);
  for (auto& v : x) v = gen();
  for (auto& v : wt) v = gen();

  // LDS: the halo (poison 0xEE where the kernel writes nothing), then Bt [96][k] unswizzled.
  const std::uint32_t b_base = Halo::kBytes;
  std::vector<std::uint8_t> s(b_base + std::size_t(kN) * k * 2, 0xEE);
  auto put = [&](std::size_t at, std::uint16_t v) {
    s[at] = std::uint8_t(v & 0xFF);
    s[at + 1] = std::uint8_t(v >> 8);
  };
  for (int e = 0; e < 8; ++e) put(std::size_t(F::kZeroChunk) + 2 * std::size_t(e), 0);
  for (int hr = 0; hr < Halo::kHaloRows; ++hr)
    for (int hc = 0; hc < Halo::kHaloCols; ++hc)
      for (int c = 0; c < cin; ++c) {
        const int ih = oh0 - 1 + hr, iw = ow0 - 1 + hc;
        const bool in = ih >= 0 && ih < h && iw >= 0 && iw < w;
        put(std::size_t(Halo::offset(c / 8, hr, hc)) + 2 * std::size_t(c % 8),
            in ? x[(std::size_t(ih) * w + iw) * cin + c] : std::uint16_t(0));
      }
  for (int n = 0; n < kN; ++n)
    for (int kk = 0; kk < k; ++kk) put(b_base + (std::size_t(n) * k + kk) * 2, wt[std::size_t(n) * k + kk]);

  int bad = 0;
  for (int m0 = 0; m0 < Halo::kPixels; m0 += L::kM)
    for (int n0 = 0; n0 < kN; n0 += L::kN) {
      emu::FragF<L::kCElems> c(L::kLanes);
      for (int k0 = 0; k0 < k; k0 += L::kK) {
        std::vector<std::uint32_t> aa(std::size_t(L::kLanes)), ba(std::size_t(L::kLanes));
        for (int l = 0; l < L::kLanes; ++l) {
          int a = F::a_offset(l, 0, m0, k0, cin);
          if (brk == Break::kIgnoreTap) a = F::lane_offset(l, 0, m0) + F::step_offset(k0 % cin, cin);
          if (brk == Break::kIgnoreLaneChunk) a = F::lane_offset(l, 0, m0) - L::a_lds_chunk(l) * Halo::kChunkStride + F::step_offset(k0, cin);
          if (brk == Break::kRowPitch) a += (m0 + L::a_lds_row(l)) / Halo::kCols * 16;
          aa[std::size_t(l)] = std::uint32_t(a);
          ba[std::size_t(l)] = b_base + std::uint32_t((std::size_t(n0 + L::b_lds_row(l)) * k + k0 +
                                                       8 * L::b_lds_chunk(l)) * 2);
        }
        try {
          c = emu::run_lds_atom<L>(
              t, s, [&](int l, int) { return aa[std::size_t(l)]; },
              [&](int l, int) { return ba[std::size_t(l)]; }, c);
        } catch (const std::out_of_range&) {
          return -1;
        }
      }
      for (int l = 0; l < L::kLanes; ++l)
        for (int r = 0; r < L::kCElems; ++r) {
          const int m = m0 + L::c_row(l, r), n = n0 + L::c_col(l, r);
          const int oh = oh0 + m / Halo::kCols, ow = ow0 + m % Halo::kCols;
          const double want = emu::direct_conv3x3_at(
              oh, ow, h, w, cin,
              [&](std::size_t i) { return double(vaeconv::bf16_to_float(x[i])); },
              [&](int kk) { return double(vaeconv::bf16_to_float(wt[std::size_t(n) * k + kk])); });
          if (double(c.lanes[std::size_t(l)][std::size_t(r)]) != want) ++bad;
        }
    }
  return bad;
}

struct Case {
  int h, w, cin, oh0, ow0;
};
// Interior, corners and edges (padding taps), a partial patch past the frame, every Cin the
// fragment halo takes (multiples of 16 up to 96).
const Case kCases[] = {{40, 24, 96, 8, 8},  {40, 24, 96, 0, 0},  {13, 11, 48, 0, 8},
                       {20, 9, 16, 16, 0},  {19, 17, 32, 8, 8},  {30, 30, 64, 16, 16},
                       {17, 8, 80, 0, 0}};

template <class L>
void expect_exact(Target t) {
  unsigned seed = 1;
  for (const Case& c : kCases) {
    if (c.cin % L::kK != 0) continue;  // a K step would straddle a tap: the dispatch refuses it
    EXPECT_EQ(run_tile<L>(t, c.h, c.w, c.cin, c.oh0, c.ow0, Break::kNothing, seed++), 0)
        << target_name(t) << " " << c.h << "x" << c.w << " cin " << c.cin << " patch (" << c.oh0
        << ", " << c.ow0 << ")";
  }
}

TEST(HaloFragment, Gfx950Mfma32x32x16Bf16MatchesTheDirectConv) {
  expect_exact<lay::Mfma32x32x16Bf16>(Target::kGfx950);
}
TEST(HaloFragment, Gfx942TwoMfma32x32x8Bf16MatchTheDirectConv) {
  expect_exact<lay::Mfma32x32x16Bf16>(Target::kGfx942);
}
TEST(HaloFragment, Mfma16x16x32Bf16MatchesTheDirectConv) {
  expect_exact<lay::Mfma16x16x32Bf16>(Target::kGfx950);
  expect_exact<lay::Mfma16x16x32Bf16>(Target::kGfx942);
}
TEST(HaloFragment, MmaSyncLdmatrixMatchesTheDirectConv) {
  expect_exact<lay::MmaM16N16K16Bf16>(Target::kNvidia);
}

TEST(HaloFragment, NegativeControlsFail) {
  for (Break b : {Break::kIgnoreTap, Break::kIgnoreLaneChunk, Break::kRowPitch}) {
    EXPECT_NE(run_tile<lay::Mfma32x32x16Bf16>(Target::kGfx950, 40, 24, 96, 8, 8, b, 7), 0);
    EXPECT_NE(run_tile<lay::MmaM16N16K16Bf16>(Target::kNvidia, 40, 24, 96, 8, 8, b, 7), 0);
  }
}

// The uniform step shift is the halo cursor's (the kernel walks K with HaloCursor).
TEST(HaloFragment, StepOffsetIsTheCursorShift) {
  using F = HaloFragment<Halo, lay::Mfma32x32x16Bf16>;
  for (int cin : {16, 48, 96}) {
    vaeconv::kernel::HaloCursor<Halo> cur;
    for (int k = 0; k < 9 * cin; k += 16) {
      ASSERT_EQ(cur.a_offset(0), F::step_offset(k, cin)) << cin << " " << k;
      cur.step(16, cin);
    }
  }
  // The zero chunk lies in plane 0's padding pixel, inside the halo and outside every pixel.
  static_assert(F::kZeroChunk + 16 <= Halo::kChunkStride && F::kZeroChunk >= Halo::kHaloPixels * 16);
}

// LDS bank conflicts of the A reads (one ds_read_b128 per lane and K step) over every atom, tap
// and channel step of the shipped fragment halo, and of the halo copy's writes. The row pitch
// of 10 pixels (kCols + 2, shared with the wgmma halo) costs 2-way on gfx942 and 3-way on
// gfx950 where a tap's shift puts two patch rows of a phase on the same banks (a pitch of 12
// pixels would be 1 / 2, one of 24 conflict-free on both at 2.4x the halo's LDS: docs/perf-notes.md).
// The test pins the measured ways so that a layout change shows here.
TEST(HaloFragment, BankConflictsOfTheHaloReads) {
  namespace lds = vaeconv::lds;
  using lds::Instr;
  using lds::WaveAccess;
  using L = lay::Mfma32x32x16Bf16;
  using F = HaloFragment<Halo, L>;
  for (lds::Target t : {lds::Target::kGfx942, lds::Target::kGfx950}) {
    double worst = 0, sum = 0;
    int n = 0;
    for (int m0 = 0; m0 < Halo::kPixels; m0 += L::kM)
      for (int k0 = 0; k0 < 9 * 96; k0 += L::kK) {
        WaveAccess a{Instr::kReadB128};
        for (int l = 0; l < 64; ++l) a.addr[std::size_t(l)] = F::a_offset(l, 0, m0, k0, 96);
        const double ways = lds::cost(t, a).ways();
        worst = std::max(worst, ways);
        sum += ways;
        ++n;
      }
    std::printf("[ halo fragment ] %s ds_read_b128 of A: worst %.2f-way, mean %.2f-way\n",
                lds::target_name(t), worst, sum / n);
    EXPECT_EQ(worst, t == lds::Target::kGfx942 ? 2.0 : 3.0) << lds::target_name(t);
  }
  // The copy (halo_loader.hpp, HaloLoader::load): thread q writes chunk q % chunks of pixel
  // q / chunks, 256 threads per pass, Cin = 96 (12 chunks).
  for (lds::Target t : {lds::Target::kGfx942, lds::Target::kGfx950}) {
    double worst = 0;
    for (int q0 = 0; q0 < 12 * Halo::kHaloPixels; q0 += 64) {
      WaveAccess a{Instr::kWriteB128};
      for (int l = 0; l < 64 && q0 + l < 12 * Halo::kHaloPixels; ++l) {
        const int q = q0 + l, hp = q / 12, j = q % 12;
        a.addr[std::size_t(l)] = Halo::offset(j, Halo::halo_row(hp), Halo::halo_col(hp));
      }
      worst = std::max(worst, lds::cost(t, a).ways());
    }
    std::printf("[ halo fragment ] %s ds_write_b128 of the halo copy: worst %.2f-way\n",
                lds::target_name(t), worst);
    EXPECT_LE(worst, 2.0) << lds::target_name(t);
  }
}

}  // namespace
