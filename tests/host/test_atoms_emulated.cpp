// tests/host/test_atoms_emulated.cpp — the library's matrix-atom layouts (vaeconv/arch/
// fragment_layouts.hpp) fed through an independent emulator of the hardware instructions
// (tests/emu/matrix_emulator.hpp, written from cdna.md and the PTX ISA).
//
// For every library atom: stage random A (kM x kK) as [m][k] and B as Bt[n][k] in rows of
// 16-byte chunks, let each lane fetch its fragment from the library's (lds_row, lds_chunk) — AMD:
// the 8 consecutive bf16 of that chunk, NVIDIA: through an emulated ldmatrix.x4 — run the emulated
// instruction(s), and require D == A*B (+ C) exactly through the library's c_row/c_col. Also
// check the library's a_row/a_k/b_k/b_col claims against what was fetched, and that c_row/c_col is
// a bijection onto the C tile. Negative controls show the harness can fail.
// The K-order suite (AtomKOrder) runs every AMD bf16 atom with each instruction's K relabelled
// (documented/contiguous, two stripes per lane group, random) and requires bit-identical D: the
// emulator sums exactly (emu::ExactSum), so only a mispaired A/B element could change D.
// AtomFp8K32 (gfx942's 32x32x32 e4m3 atom, Mfma32x32x32Fp8): e4m3fn bytes staged in 16-byte
// chunks (plain, swizzled, inside a wider row; the rest poisoned with 0x80, FNUZ's NaN), each
// lane's chunk split into the two v_mfma_f32_32x32x16_fp8_fp8 the atom issues, D times the x4
// product scale == A*B (+ 4 C) on every element; with negative controls.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "emu/matrix_emulator.hpp"
#include "vaeconv/arch/fp8_fnuz.hpp"
#include "vaeconv/arch/fragment_layouts.hpp"

namespace {

namespace emu = vaeconv::emu;
namespace lay = vaeconv::layout;

enum class Target { Gfx950, Gfx942, Nvidia };

// ------------------------------------------------------------------------------------------------
// Staging: `rows` rows of `k` b16 values, K-contiguous, in 16-byte chunks. With `swizzle` the
// physical chunk of logical (row, chunk) is chunk ^ (row % chunks) — the lanes address through
// the same function, so the fragments must not change.
// ------------------------------------------------------------------------------------------------
struct Staging {
  int rows, chunks;
  bool swizzle;
  std::vector<std::uint8_t> bytes;
  Staging(int r, int k, bool sw) : rows(r), chunks(k / 8), swizzle(sw), bytes(std::size_t(r) * std::size_t(k) * 2, 0) {}
  std::size_t chunk_offset(int row, int chunk) const {
    if (row < 0 || row >= rows || chunk < 0 || chunk >= chunks) throw std::out_of_range("staging: (row, chunk) out of the tile");
    const int pc = swizzle ? (chunk ^ (row % chunks)) : chunk;
    return (std::size_t(row) * std::size_t(chunks) + std::size_t(pc)) * 16;
  }
  void put(int row, int k, std::uint16_t v) {
    const std::size_t o = chunk_offset(row, k / 8) + 2 * std::size_t(k % 8);
    bytes[o] = std::uint8_t(v & 0xFF);
    bytes[o + 1] = std::uint8_t(v >> 8);
  }
};

using Bits8 = emu::Frag<std::uint16_t, 8>;

// AMD: lane l reads the 8 consecutive bf16 of its chunk (one ds_read_b128); element e is the
// e-th bf16 of the chunk.
template <class L>
Bits8 fetch_amd(const Staging& s, bool is_a) {
  Bits8 f(L::kLanes);
  for (int l = 0; l < L::kLanes; ++l) {
    const int row = is_a ? L::a_lds_row(l) : L::b_lds_row(l);
    const int chunk = is_a ? L::a_lds_chunk(l) : L::b_lds_chunk(l);
    const std::size_t off = s.chunk_offset(row, chunk);
    for (int e = 0; e < 8; ++e)
      f.lanes[std::size_t(l)][std::size_t(e)] =
          std::uint16_t(s.bytes[off + 2 * std::size_t(e)] | (s.bytes[off + 2 * std::size_t(e) + 1] << 8));
  }
  return f;
}

// NVIDIA: lanes supply the byte address of their (row, chunk) to ldmatrix.x4.
template <class L>
Bits8 fetch_nv(const Staging& s, bool is_a) {
  std::array<std::uint32_t, 32> addr{};
  for (int l = 0; l < 32; ++l) {
    const int row = is_a ? L::a_lds_row(l) : L::b_lds_row(l);
    const int chunk = is_a ? L::a_lds_chunk(l) : L::b_lds_chunk(l);
    addr[std::size_t(l)] = std::uint32_t(s.chunk_offset(row, chunk));
  }
  return emu::split_b16<4>(emu::ldmatrix_x4(s.bytes, addr));
}

template <class L>
Bits8 fetch(Target t, const Staging& s, bool is_a) {
  return t == Target::Nvidia ? fetch_nv<L>(s, is_a) : fetch_amd<L>(s, is_a);
}

// Runs the atom on the emulated hardware: one gfx950 instruction, two gfx942 instructions on the
// element halves 0..3 / 4..7, or two m16n8k16 mma on the B register halves (elements 0..3 = first
// n8 mma's b0..b3, 4..7 = second's; accumulators 0..3 / 4..7 likewise).
// `order` relabels each AMD instruction's K (emu::KOrder); the NVIDIA path ignores it.
template <class L>
emu::FragF<L::kCElems> run_atom(Target t, const Bits8& abits, const Bits8& bbits, const emu::FragF<L::kCElems>& c,
                                const emu::KOrder& order = {}) {
  const emu::FragF<8> a = emu::bf16_frag_to_float(abits);
  const emu::FragF<8> b = emu::bf16_frag_to_float(bbits);
  if constexpr (L::kLanes == 32) {
    if (t != Target::Nvidia) throw std::logic_error("warp32 atom on an AMD target");
    emu::FragF<4> b0(32), b1(32), c0(32), c1(32);
    for (std::size_t l = 0; l < 32; ++l)
      for (std::size_t i = 0; i < 4; ++i) {
        b0.lanes[l][i] = b.lanes[l][i];
        b1.lanes[l][i] = b.lanes[l][4 + i];
        c0.lanes[l][i] = c.lanes[l][i];
        c1.lanes[l][i] = c.lanes[l][4 + i];
      }
    const emu::FragF<4> d0 = emu::mma_m16n8k16_bf16_f32(a, b0, c0);
    const emu::FragF<4> d1 = emu::mma_m16n8k16_bf16_f32(a, b1, c1);
    emu::FragF<8> d(32);
    for (std::size_t l = 0; l < 32; ++l)
      for (std::size_t i = 0; i < 4; ++i) {
        d.lanes[l][i] = d0.lanes[l][i];
        d.lanes[l][4 + i] = d1.lanes[l][i];
      }
    return d;
  } else {
    if (t == Target::Nvidia) throw std::logic_error("wave64 atom on the NVIDIA target");
    if (t == Target::Gfx950) {
      if constexpr (L::kM == 32) return emu::mfma_f32_32x32x16_bf16(a, b, c, order);
      else return emu::mfma_f32_16x16x32_bf16(a, b, c, order);
    }
    emu::FragF<4> alo(64), ahi(64), blo(64), bhi(64);
    for (std::size_t l = 0; l < 64; ++l)
      for (std::size_t i = 0; i < 4; ++i) {
        alo.lanes[l][i] = a.lanes[l][i];
        ahi.lanes[l][i] = a.lanes[l][4 + i];
        blo.lanes[l][i] = b.lanes[l][i];
        bhi.lanes[l][i] = b.lanes[l][4 + i];
      }
    if constexpr (L::kM == 32)
      return emu::mfma_f32_32x32x8_bf16(ahi, bhi, emu::mfma_f32_32x32x8_bf16(alo, blo, c, order), order);
    else return emu::mfma_f32_16x16x16_bf16(ahi, bhi, emu::mfma_f32_16x16x16_bf16(alo, blo, c, order), order);
  }
}

struct Report {
  long a_claim_mismatch = 0, b_claim_mismatch = 0, c_not_bijective = 0, product_mismatch = 0;
  std::string error, first;
  bool ok() const {
    return error.empty() && a_claim_mismatch == 0 && b_claim_mismatch == 0 && c_not_bijective == 0 && product_mismatch == 0;
  }
  std::string str() const {
    return "a_claim=" + std::to_string(a_claim_mismatch) + " b_claim=" + std::to_string(b_claim_mismatch) +
           " c_not_bijective=" + std::to_string(c_not_bijective) + " product=" + std::to_string(product_mismatch) +
           (error.empty() ? "" : " error=" + error) + (first.empty() ? "" : " first: " + first);
  }
};

inline std::uint16_t bf16(float v) { return emu::bf16_bits_exact(v); }

// The whole check for one library layout L on one target.
template <class L>
Report check_atom(Target t, unsigned seed, bool swizzle) {
  static_assert(L::kAElems == 8 && L::kBElems == 8, "library atoms fetch one 16-byte chunk per lane");
  constexpr int M = L::kM, N = L::kN, K = L::kK;
  Report rep;
  try {
    // 1. Claims: stage unique tags (raw b16 payloads) and compare what each lane fetched with
    //    what a_row/a_k and b_k/b_col say it holds.
    {
      auto tag_a = [](int m, int k) { return std::uint16_t(1 + m * K + k); };
      auto tag_b = [](int k, int n) { return std::uint16_t(0x4000 + k * N + n); };
      Staging sa(M, K, swizzle), sb(N, K, swizzle);
      for (int m = 0; m < M; ++m)
        for (int k = 0; k < K; ++k) sa.put(m, k, tag_a(m, k));
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k) sb.put(n, k, tag_b(k, n));
      const Bits8 fa = fetch<L>(t, sa, true), fb = fetch<L>(t, sb, false);
      for (int l = 0; l < L::kLanes; ++l)
        for (int e = 0; e < 8; ++e) {
          const int r = L::a_row(l, e), k = L::a_k(l, e);
          const bool in = r >= 0 && r < M && k >= 0 && k < K;
          if (!in || fa.lanes[std::size_t(l)][std::size_t(e)] != tag_a(r, k)) {
            if (rep.first.empty()) rep.first = "A claim lane " + std::to_string(l) + " elem " + std::to_string(e);
            ++rep.a_claim_mismatch;
          }
          const int kb = L::b_k(l, e), n = L::b_col(l, e);
          const bool inb = kb >= 0 && kb < K && n >= 0 && n < N;
          if (!inb || fb.lanes[std::size_t(l)][std::size_t(e)] != tag_b(kb, n)) {
            if (rep.first.empty()) rep.first = "B claim lane " + std::to_string(l) + " elem " + std::to_string(e);
            ++rep.b_claim_mismatch;
          }
        }
    }
    // 2. c_row/c_col is a bijection from (lane, register) onto the M x N tile.
    {
      std::vector<int> cover(std::size_t(M) * N, 0);
      bool range_ok = L::kLanes * L::kCElems == M * N;
      for (int l = 0; l < L::kLanes; ++l)
        for (int r = 0; r < L::kCElems; ++r) {
          const int m = L::c_row(l, r), n = L::c_col(l, r);
          if (m < 0 || m >= M || n < 0 || n >= N) range_ok = false;
          else ++cover[std::size_t(m) * N + std::size_t(n)];
        }
      if (!range_ok) ++rep.c_not_bijective;
      for (int c : cover)
        if (c != 1) ++rep.c_not_bijective;
    }
    // 3. Products with small-integer data (exact in bf16 and fp32): once with C = 0 (D == A*B)
    //    and once with a random C placed through c_row/c_col (D == A*B + C).
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> val(-8, 8), cval(-64, 64);
    for (int with_c = 0; with_c < 2; ++with_c) {
      std::vector<float> A(std::size_t(M) * K), B(std::size_t(K) * N), C(std::size_t(M) * N, 0.0f);
      for (auto& x : A) x = float(val(rng));
      for (auto& x : B) x = float(val(rng));
      if (with_c)
        for (auto& x : C) x = float(cval(rng));
      Staging sa(M, K, swizzle), sb(N, K, swizzle);
      for (int m = 0; m < M; ++m)
        for (int k = 0; k < K; ++k) sa.put(m, k, bf16(A[std::size_t(m) * K + std::size_t(k)]));
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k) sb.put(n, k, bf16(B[std::size_t(k) * N + std::size_t(n)]));
      emu::FragF<L::kCElems> cf(L::kLanes);
      for (int l = 0; l < L::kLanes; ++l)
        for (int r = 0; r < L::kCElems; ++r) {
          const int m = L::c_row(l, r), n = L::c_col(l, r);
          const bool in = m >= 0 && m < M && n >= 0 && n < N;
          cf.lanes[std::size_t(l)][std::size_t(r)] = in ? C[std::size_t(m) * N + std::size_t(n)] : 0.0f;
        }
      const emu::FragF<L::kCElems> d = run_atom<L>(t, fetch<L>(t, sa, true), fetch<L>(t, sb, false), cf);
      for (int l = 0; l < L::kLanes; ++l)
        for (int r = 0; r < L::kCElems; ++r) {
          const int m = L::c_row(l, r), n = L::c_col(l, r);
          bool good = m >= 0 && m < M && n >= 0 && n < N;
          if (good) {
            double ref = C[std::size_t(m) * N + std::size_t(n)];
            for (int k = 0; k < K; ++k) ref += double(A[std::size_t(m) * K + std::size_t(k)]) * B[std::size_t(k) * N + std::size_t(n)];
            good = d.lanes[std::size_t(l)][std::size_t(r)] == float(ref);
          }
          if (!good) {
            if (rep.first.empty())
              rep.first = "D lane " + std::to_string(l) + " reg " + std::to_string(r) + (with_c ? " (with C)" : "");
            ++rep.product_mismatch;
          }
        }
    }
  } catch (const std::exception& e) {
    rep.error = e.what();
  }
  return rep;
}

template <class L>
void expect_atom_ok(Target t) {
  for (unsigned seed : {1u, 2u, 3u})
    for (bool swizzle : {false, true}) {
      const Report r = check_atom<L>(t, seed, swizzle);
      EXPECT_TRUE(r.ok()) << "seed " << seed << " swizzle " << swizzle << ": " << r.str();
    }
}

// ================================================================================================
// Library layouts on the emulated hardware
// ================================================================================================

TEST(AtomEmulatedBf16, Mfma32x32x16OneInstructionGfx950) { expect_atom_ok<lay::Mfma32x32x16Bf16>(Target::Gfx950); }
TEST(AtomEmulatedBf16, Mfma32x32x16TwoInstructionsGfx942) { expect_atom_ok<lay::Mfma32x32x16Bf16>(Target::Gfx942); }
TEST(AtomEmulatedBf16, Mfma16x16x32OneInstructionGfx950) { expect_atom_ok<lay::Mfma16x16x32Bf16>(Target::Gfx950); }
TEST(AtomEmulatedBf16, Mfma16x16x32TwoInstructionsGfx942) { expect_atom_ok<lay::Mfma16x16x32Bf16>(Target::Gfx942); }
TEST(AtomEmulatedBf16, MmaM16N16K16LdmatrixX4TwoMmas) { expect_atom_ok<lay::MmaM16N16K16Bf16>(Target::Nvidia); }

// On gfx950 the library's element claims are exactly the single instruction's hardware layout.
TEST(AtomEmulatedBf16, Gfx950ClaimsEqualHardwareLayout) {
  for (int l = 0; l < 64; ++l) {
    for (int e = 0; e < 8; ++e) {
      using H32 = emu::hw::Mfma32x32x16Bf16;
      using H16 = emu::hw::Mfma16x16x32Bf16;
      using L32 = lay::Mfma32x32x16Bf16;
      using L16 = lay::Mfma16x16x32Bf16;
      EXPECT_EQ(H32::a(l, e).row, L32::a_row(l, e));
      EXPECT_EQ(H32::a(l, e).col, L32::a_k(l, e));
      EXPECT_EQ(H32::b(l, e).row, L32::b_k(l, e));
      EXPECT_EQ(H32::b(l, e).col, L32::b_col(l, e));
      EXPECT_EQ(H16::a(l, e).row, L16::a_row(l, e));
      EXPECT_EQ(H16::a(l, e).col, L16::a_k(l, e));
      EXPECT_EQ(H16::b(l, e).row, L16::b_k(l, e));
      EXPECT_EQ(H16::b(l, e).col, L16::b_col(l, e));
    }
    for (int r = 0; r < 16; ++r) {
      EXPECT_EQ(emu::hw::c_32x32(l, r).row, lay::Mfma32x32x16Bf16::c_row(l, r));
      EXPECT_EQ(emu::hw::c_32x32(l, r).col, lay::Mfma32x32x16Bf16::c_col(l, r));
    }
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(emu::hw::c_16x16(l, r).row, lay::Mfma16x16x32Bf16::c_row(l, r));
      EXPECT_EQ(emu::hw::c_16x16(l, r).col, lay::Mfma16x16x32Bf16::c_col(l, r));
    }
  }
}

// ================================================================================================
// Negative controls: wrong layouts must be caught
// ================================================================================================

// c_row with its two lane halves swapped (4*(1 - l/32) instead of 4*(l/32)).
struct WrongCRowHalves : lay::Mfma32x32x16Bf16 {
  static constexpr int c_row(int l, int r) { return 8 * (r / 4) + 4 * (1 - l / 32) + r % 4; }
};
// B read from the other K chunk than A.
struct WrongBChunk : lay::Mfma32x32x16Bf16 {
  static constexpr int b_lds_chunk(int l) { return 1 - l / 32; }
};
// A claim that lies about K (fetch is right, so only the claim check can catch it).
struct WrongAkClaim : lay::Mfma16x16x32Bf16 {
  static constexpr int a_k(int l, int e) { return 8 * (3 - l / 16) + e; }
};
// B-col claim that lies about which n8 half (NVIDIA).
struct WrongNvBColClaim : lay::MmaM16N16K16Bf16 {
  static constexpr int b_col(int l, int e) { return l / 4 + 8 * ((e / 2) % 2); }
};
// NVIDIA B addressed like A (matrix order n-major instead of k-major): the registers then pair
// the wrong n8 half with the wrong k half.
struct WrongNvBAddressing : lay::MmaM16N16K16Bf16 {
  static constexpr int b_lds_row(int l) { return l % 16; }
  static constexpr int b_lds_chunk(int l) { return l / 16; }
};
// NVIDIA C with the row halves of the two mma swapped.
struct WrongNvCRow : lay::MmaM16N16K16Bf16 {
  static constexpr int c_row(int l, int r) { return l / 4 + 8 * (1 - (r / 2) % 2); }
};
// Not a bijection: every lane writes rows 0..3.
struct NonBijectiveC : lay::Mfma16x16x32Bf16 {
  static constexpr int c_row(int, int r) { return r; }
};

TEST(AtomEmulatedNegative, SwappedCRowHalvesIsCaught) {
  for (Target t : {Target::Gfx950, Target::Gfx942}) {
    const Report r = check_atom<WrongCRowHalves>(t, 1, false);
    EXPECT_FALSE(r.ok());
    EXPECT_GT(r.product_mismatch, 0) << r.str();
    EXPECT_EQ(r.c_not_bijective, 0) << "the swapped map is still a bijection; only the product catches it";
  }
}
TEST(AtomEmulatedNegative, WrongBChunkIsCaught) {
  for (Target t : {Target::Gfx950, Target::Gfx942}) {
    const Report r = check_atom<WrongBChunk>(t, 1, false);
    EXPECT_GT(r.product_mismatch, 0) << r.str();
    EXPECT_GT(r.b_claim_mismatch, 0) << r.str();
  }
}
TEST(AtomEmulatedNegative, WrongAClaimIsCaught) {
  const Report r = check_atom<WrongAkClaim>(Target::Gfx950, 1, false);
  EXPECT_GT(r.a_claim_mismatch, 0) << r.str();
  EXPECT_EQ(r.product_mismatch, 0) << r.str();
}
TEST(AtomEmulatedNegative, NvidiaWrongBColClaimIsCaught) {
  const Report r = check_atom<WrongNvBColClaim>(Target::Nvidia, 1, false);
  EXPECT_GT(r.b_claim_mismatch, 0) << r.str();
}
TEST(AtomEmulatedNegative, NvidiaWrongBAddressingIsCaught) {
  const Report r = check_atom<WrongNvBAddressing>(Target::Nvidia, 1, false);
  EXPECT_GT(r.product_mismatch, 0) << r.str();
}
TEST(AtomEmulatedNegative, NvidiaWrongCRowIsCaught) {
  const Report r = check_atom<WrongNvCRow>(Target::Nvidia, 1, false);
  EXPECT_GT(r.product_mismatch, 0) << r.str();
}
TEST(AtomEmulatedNegative, NonBijectiveCIsCaught) {
  const Report r = check_atom<NonBijectiveC>(Target::Gfx950, 1, false);
  EXPECT_GT(r.c_not_bijective, 0) << r.str();
  EXPECT_GT(r.product_mismatch, 0) << r.str();
}
TEST(AtomEmulatedNegative, EmulatorRejectsNonBf16Operand) {
  emu::FragF<8> a(64), b(64);
  emu::FragF<16> c(64);
  a.lanes[5][3] = 1.0f + 1.0f / 1024.0f;  // needs 10 mantissa bits: not a bf16
  EXPECT_THROW(emu::mfma_f32_32x32x16_bf16(a, b, c), std::invalid_argument);
}

// ================================================================================================
// ldmatrix semantics (PTX "ldmatrix"): row addresses from lanes 8j..8j+7, register j of lane l
// = row l/4 of matrix j, b16 elements 2*(l%4) (low half) and 2*(l%4)+1 (high half).
// ================================================================================================
template <int X>
void check_ldmatrix(std::mt19937& rng) {
  std::vector<std::uint8_t> smem(64 * 16);
  for (auto& b : smem) b = std::uint8_t(rng() & 0xFF);
  std::vector<std::uint32_t> rows(64);
  for (std::uint32_t i = 0; i < 64; ++i) rows[i] = 16 * i;
  std::shuffle(rows.begin(), rows.end(), rng);
  std::array<std::uint32_t, 32> addr{};
  for (int l = 0; l < 32; ++l) addr[std::size_t(l)] = l < 8 * X ? rows[std::size_t(l)] : 3u;  // unused lanes: garbage
  const emu::Frag32<X> d = emu::ldmatrix_b16<X>(smem, addr);
  const auto elems = emu::split_b16<X>(d);
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < X; ++j)
      for (int h = 0; h < 2; ++h) {
        const std::size_t at = addr[std::size_t(8 * j + l / 4)] + 2 * std::size_t(2 * (l % 4) + h);
        const std::uint16_t want = std::uint16_t(smem[at] | (smem[at + 1] << 8));
        EXPECT_EQ(elems.lanes[std::size_t(l)][std::size_t(2 * j + h)], want) << "x" << X << " lane " << l << " reg " << j;
      }
}
TEST(AtomEmulatedLdmatrix, X1X2X4NonTransposed) {
  std::mt19937 rng(7);
  check_ldmatrix<1>(rng);
  check_ldmatrix<2>(rng);
  check_ldmatrix<4>(rng);
}
TEST(AtomEmulatedLdmatrix, RejectsMisalignedUsedAddress) {
  std::vector<std::uint8_t> smem(512);
  std::array<std::uint32_t, 32> addr{};
  addr[9] = 8;  // lane 9 is used by .x2 and .x4, not by .x1
  EXPECT_NO_THROW(emu::ldmatrix_x1(smem, addr));
  EXPECT_THROW(emu::ldmatrix_x2(smem, addr), std::invalid_argument);
  EXPECT_THROW(emu::ldmatrix_x4(smem, addr), std::invalid_argument);
}

// ================================================================================================
// Instruction emulations against a plain matmul, fragments built here from the documented
// layouts (cdna.md "Operand layouts", PTX ISA 9.7.14.5), restated independently of emu::hw.
// ================================================================================================
struct RCt {
  int r, c;
};
inline RCt c32(int l, int r) { return {8 * (r / 4) + 4 * (l / 32) + r % 4, l % 32}; }  // cdna.md
inline RCt c16(int l, int r) { return {4 * (l / 16) + r, l % 16}; }                    // cdna.md
inline RCt cnv(int l, int i) { return {l / 4 + 8 * (i / 2), 2 * (l % 4) + i % 2}; }    // PTX C/D

struct Doc942Bf16_32 {  // v_mfma_f32_32x32x8_bf16
  static constexpr int M = 32, N = 32, K = 8, L = 64, AE = 4, BE = 4, CE = 16;
  static RCt a(int l, int e) { return {l % 32, 4 * (l / 32) + e}; }
  static RCt b(int l, int e) { return {4 * (l / 32) + e, l % 32}; }
  static RCt c(int l, int r) { return c32(l, r); }
};
struct Doc942Bf16_16 {  // v_mfma_f32_16x16x16_bf16
  static constexpr int M = 16, N = 16, K = 16, L = 64, AE = 4, BE = 4, CE = 4;
  static RCt a(int l, int e) { return {l % 16, 4 * (l / 16) + e}; }
  static RCt b(int l, int e) { return {4 * (l / 16) + e, l % 16}; }
  static RCt c(int l, int r) { return c16(l, r); }
};
struct Doc950Bf16_32 {  // v_mfma_f32_32x32x16_bf16
  static constexpr int M = 32, N = 32, K = 16, L = 64, AE = 8, BE = 8, CE = 16;
  static RCt a(int l, int e) { return {l % 32, 8 * (l / 32) + e}; }
  static RCt b(int l, int e) { return {8 * (l / 32) + e, l % 32}; }
  static RCt c(int l, int r) { return c32(l, r); }
};
struct Doc950Bf16_16 {  // v_mfma_f32_16x16x32_bf16
  static constexpr int M = 16, N = 16, K = 32, L = 64, AE = 8, BE = 8, CE = 4;
  static RCt a(int l, int e) { return {l % 16, 8 * (l / 16) + e}; }
  static RCt b(int l, int e) { return {8 * (l / 16) + e, l % 16}; }
  static RCt c(int l, int r) { return c16(l, r); }
};
struct DocNvBf16 {  // mma.m16n8k16 .bf16
  static constexpr int M = 16, N = 8, K = 16, L = 32, AE = 8, BE = 4, CE = 4;
  static RCt a(int l, int i) { return {l / 4 + 8 * ((i / 2) % 2), 2 * (l % 4) + i % 2 + 8 * (i / 4)}; }
  static RCt b(int l, int i) { return {2 * (l % 4) + i % 2 + 8 * (i / 2), l / 4}; }
  static RCt c(int l, int i) { return cnv(l, i); }
};
struct Doc942Fp8_32 {  // v_mfma_f32_32x32x16_fp8_fp8
  static constexpr int M = 32, N = 32, K = 16, L = 64, AE = 8, BE = 8, CE = 16;
  static RCt a(int l, int e) { return {l % 32, 8 * (l / 32) + e}; }
  static RCt b(int l, int e) { return {8 * (l / 32) + e, l % 32}; }
  static RCt c(int l, int r) { return c32(l, r); }
};
struct Doc942Fp8_16 {  // v_mfma_f32_16x16x32_fp8_fp8
  static constexpr int M = 16, N = 16, K = 32, L = 64, AE = 8, BE = 8, CE = 4;
  static RCt a(int l, int e) { return {l % 16, 8 * (l / 16) + e}; }
  static RCt b(int l, int e) { return {8 * (l / 16) + e, l % 16}; }
  static RCt c(int l, int r) { return c16(l, r); }
};
struct Doc950F8_32 {  // v_mfma_scale_f32_32x32x64_f8f6f4, fp8: element i = 16*s + e (cdna.md; unverified on hw)
  static constexpr int M = 32, N = 32, K = 64, L = 64, AE = 32, BE = 32, CE = 16;
  static RCt a(int l, int i) { return {l % 32, 16 * (l / 32) + 32 * (i / 16) + i % 16}; }
  static RCt b(int l, int i) { return {16 * (l / 32) + 32 * (i / 16) + i % 16, l % 32}; }
  static RCt c(int l, int r) { return c32(l, r); }
};
struct DocNvE4m3 {  // mma.m16n8k32 .e4m3
  static constexpr int M = 16, N = 8, K = 32, L = 32, AE = 16, BE = 8, CE = 4;
  static RCt a(int l, int i) { return {l / 4 + 8 * ((i / 4) % 2), 4 * (l % 4) + i % 4 + 16 * (i / 8)}; }
  static RCt b(int l, int i) { return {4 * (l % 4) + i % 4 + 16 * (i / 4), l / 4}; }
  static RCt c(int l, int i) { return cnv(l, i); }
};

// Builds fragments from full matrices with Doc's layout, runs inst, returns D as an M x N matrix.
template <class Doc, class T, class Inst>
std::vector<float> run_doc(Inst inst, const std::vector<T>& A, const std::vector<T>& B, const std::vector<float>& C) {
  emu::Frag<T, Doc::AE> a(Doc::L);
  emu::Frag<T, Doc::BE> b(Doc::L);
  emu::FragF<Doc::CE> c(Doc::L);
  for (int l = 0; l < Doc::L; ++l) {
    for (int e = 0; e < Doc::AE; ++e) {
      const RCt p = Doc::a(l, e);
      a.lanes[std::size_t(l)][std::size_t(e)] = A[std::size_t(p.r) * Doc::K + std::size_t(p.c)];
    }
    for (int e = 0; e < Doc::BE; ++e) {
      const RCt p = Doc::b(l, e);
      b.lanes[std::size_t(l)][std::size_t(e)] = B[std::size_t(p.r) * Doc::N + std::size_t(p.c)];
    }
    for (int r = 0; r < Doc::CE; ++r) {
      const RCt p = Doc::c(l, r);
      c.lanes[std::size_t(l)][std::size_t(r)] = C[std::size_t(p.r) * Doc::N + std::size_t(p.c)];
    }
  }
  const auto d = inst(a, b, c, emu::KOrder{});
  std::vector<float> D(std::size_t(Doc::M) * Doc::N, -12345.0f);
  for (int l = 0; l < Doc::L; ++l)
    for (int r = 0; r < Doc::CE; ++r) {
      const RCt p = Doc::c(l, r);
      D[std::size_t(p.r) * Doc::N + std::size_t(p.c)] = d.lanes[std::size_t(l)][std::size_t(r)];
    }
  return D;
}

template <class Doc, class T, class Dec>
std::vector<float> matmul_ref(const std::vector<T>& A, const std::vector<T>& B, const std::vector<float>& C, Dec dec) {
  std::vector<float> D(std::size_t(Doc::M) * Doc::N);
  for (int m = 0; m < Doc::M; ++m)
    for (int n = 0; n < Doc::N; ++n) {
      double s = 0.0;
      for (int k = 0; k < Doc::K; ++k)
        s += dec(A[std::size_t(m) * Doc::K + std::size_t(k)]) * dec(B[std::size_t(k) * Doc::N + std::size_t(n)]);
      D[std::size_t(m) * Doc::N + std::size_t(n)] = float(s + C[std::size_t(m) * Doc::N + std::size_t(n)]);
    }
  return D;
}

template <class Doc>
std::vector<float> random_c(std::mt19937& rng, bool zero) {
  std::uniform_int_distribution<int> d(-100, 100);
  std::vector<float> C(std::size_t(Doc::M) * Doc::N, 0.0f);
  if (!zero)
    for (auto& x : C) x = float(d(rng)) * 0.25f;
  return C;
}

template <class Doc, class Inst>
void expect_bf16_inst_matches(Inst inst, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v(-16, 16);
  std::vector<float> A(std::size_t(Doc::M) * Doc::K), B(std::size_t(Doc::K) * Doc::N);
  for (auto& x : A) x = float(v(rng)) * 0.5f;
  for (auto& x : B) x = float(v(rng));
  const std::vector<float> C = random_c<Doc>(rng, false);
  const auto D = run_doc<Doc>(inst, A, B, C);
  const auto R = matmul_ref<Doc>(A, B, C, [](float x) { return double(x); });
  for (std::size_t i = 0; i < D.size(); ++i) ASSERT_EQ(D[i], R[i]) << "element " << i;
}

TEST(AtomEmulatedInstr, Bf16InstructionsMatchMatmul) {
  expect_bf16_inst_matches<Doc942Bf16_32>(emu::mfma_f32_32x32x8_bf16, 11);
  expect_bf16_inst_matches<Doc942Bf16_16>(emu::mfma_f32_16x16x16_bf16, 12);
  expect_bf16_inst_matches<Doc950Bf16_32>(emu::mfma_f32_32x32x16_bf16, 13);
  expect_bf16_inst_matches<Doc950Bf16_16>(emu::mfma_f32_16x16x32_bf16, 14);
  expect_bf16_inst_matches<DocNvBf16>(emu::mma_m16n8k16_bf16_f32, 15);
}

// Random fp8 bytes drawn from the codes `ok` accepts.
template <class Pred>
std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t n, Pred ok) {
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) {
    do x = std::uint8_t(rng() & 0xFF);
    while (!ok(x));
  }
  return v;
}
inline bool fnuz_finite(std::uint8_t b) { return b != 0x80; }
inline bool fn_finite(std::uint8_t b) { return (b & 0x7F) != 0x7F; }
inline bool fn_finite_not_negzero(std::uint8_t b) { return fn_finite(b) && b != 0x80; }

template <class Doc, class Inst, class Dec, class Pred>
void expect_fp8_inst_matches(Inst inst, Dec dec, Pred ok, unsigned seed) {
  std::mt19937 rng(seed);
  for (int rep = 0; rep < 3; ++rep) {
    const auto A = random_bytes(rng, std::size_t(Doc::M) * Doc::K, ok);
    const auto B = random_bytes(rng, std::size_t(Doc::K) * Doc::N, ok);
    const auto C = random_c<Doc>(rng, rep == 0);
    const auto D = run_doc<Doc>(inst, A, B, C);
    const auto R = matmul_ref<Doc>(A, B, C, dec);
    for (std::size_t i = 0; i < D.size(); ++i) ASSERT_EQ(D[i], R[i]) << "rep " << rep << " element " << i;
  }
}

TEST(AtomEmulatedFp8, Gfx942Fp8InstructionsMatchMatmulFnuz) {
  expect_fp8_inst_matches<Doc942Fp8_32>(emu::mfma_f32_32x32x16_fp8_fp8, emu::decode_e4m3fnuz, fnuz_finite, 21);
  expect_fp8_inst_matches<Doc942Fp8_16>(emu::mfma_f32_16x16x32_fp8_fp8, emu::decode_e4m3fnuz, fnuz_finite, 22);
}
TEST(AtomEmulatedFp8, Gfx950F8f6f4E4m3MatchesMatmul32x32x64) {
  expect_fp8_inst_matches<Doc950F8_32>(emu::mfma_scale_f32_32x32x64_f8f6f4_e4m3, emu::decode_e4m3fn, fn_finite, 23);
}
TEST(AtomEmulatedFp8, NvidiaM16n8k32E4m3MatchesMatmul) {
  expect_fp8_inst_matches<DocNvE4m3>(emu::mma_m16n8k32_e4m3_f32, emu::decode_e4m3fn, fn_finite, 25);
}

// cdna.md "FP8 formats": the same byte read as FNUZ is half its e4m3fn value for every finite
// code, except 0x80 (-0 in e4m3fn, NaN in FNUZ); e4m3fn's NaNs 0x7F/0xFF read as +-240 in FNUZ.
TEST(AtomEmulatedFp8, DecodeFormats) {
  for (int i = 0; i < 256; ++i) {
    const std::uint8_t b = std::uint8_t(i);
    if (b == 0x80 || (b & 0x7F) == 0x7F) continue;
    EXPECT_EQ(emu::decode_e4m3fnuz(b), emu::decode_e4m3fn(b) / 2.0) << "code " << i;
  }
  EXPECT_EQ(emu::decode_e4m3fn(0x7E), 448.0);
  EXPECT_EQ(emu::decode_e4m3fnuz(0x7E), 224.0);
  EXPECT_EQ(emu::decode_e4m3fnuz(0x7F), 240.0);
  EXPECT_EQ(emu::decode_e4m3fnuz(0xFF), -240.0);
  EXPECT_TRUE(std::isnan(emu::decode_e4m3fn(0x7F)));
  EXPECT_TRUE(std::isnan(emu::decode_e4m3fn(0xFF)));
  EXPECT_TRUE(std::isnan(emu::decode_e4m3fnuz(0x80)));
  EXPECT_EQ(emu::decode_e4m3fn(0x80), 0.0);
  EXPECT_TRUE(std::signbit(emu::decode_e4m3fn(0x80)));
  EXPECT_EQ(emu::decode_e4m3fn(0x01), std::ldexp(1.0, -9));    // smallest subnormal
  EXPECT_EQ(emu::decode_e4m3fnuz(0x01), std::ldexp(1.0, -10));
  EXPECT_EQ(emu::decode_e4m3fn(0x08), std::ldexp(1.0, -6));    // smallest normal
  EXPECT_EQ(emu::decode_e4m3fn(0x38), 1.0);
  EXPECT_EQ(emu::decode_e4m3fnuz(0x40), 1.0);
  EXPECT_EQ(emu::decode_e4m3fn(0xC0), -2.0);
}

// e4m3fn bytes fed to the gfx942 (FNUZ) instruction: each operand reads as half, so A*B comes out
// x0.25 exactly; a 0x80 byte (e4m3fn -0) is NaN there and poisons its row (A) or column (B).
template <class Doc, class Inst>
void expect_fn_bytes_on_fnuz(Inst inst, unsigned seed) {
  std::mt19937 rng(seed);
  auto A = random_bytes(rng, std::size_t(Doc::M) * Doc::K, fn_finite_not_negzero);
  auto B = random_bytes(rng, std::size_t(Doc::K) * Doc::N, fn_finite_not_negzero);
  const std::vector<float> Z(std::size_t(Doc::M) * Doc::N, 0.0f);
  {
    const auto D = run_doc<Doc>(inst, A, B, Z);
    const auto R = matmul_ref<Doc>(A, B, Z, emu::decode_e4m3fn);
    for (std::size_t i = 0; i < D.size(); ++i) ASSERT_EQ(D[i], 0.25f * R[i]) << "element " << i;
  }
  const int m0 = 3, k0 = 5, k1 = 2, n1 = 7;
  A[std::size_t(m0) * Doc::K + k0] = 0x80;
  B[std::size_t(k1) * Doc::N + n1] = 0x80;
  const auto D = run_doc<Doc>(inst, A, B, Z);
  const auto R = matmul_ref<Doc>(A, B, Z, emu::decode_e4m3fn);  // e4m3fn: 0x80 is -0, finite
  for (int m = 0; m < Doc::M; ++m)
    for (int n = 0; n < Doc::N; ++n) {
      const std::size_t i = std::size_t(m) * Doc::N + std::size_t(n);
      if (m == m0 || n == n1) EXPECT_TRUE(std::isnan(D[i])) << m << "," << n;
      else EXPECT_EQ(D[i], 0.25f * R[i]) << m << "," << n;
    }
}
TEST(AtomEmulatedFp8, Gfx942ReadsE4m3fnBytesAsQuarterProduct) {
  expect_fn_bytes_on_fnuz<Doc942Fp8_32>(emu::mfma_f32_32x32x16_fp8_fp8, 31);
  expect_fn_bytes_on_fnuz<Doc942Fp8_16>(emu::mfma_f32_16x16x32_fp8_fp8, 32);
}

// The f8f6f4 32x32x64 layout of cdna.md puts two 16-byte chunks 32 apart in K per lane: lane 0
// holds K 0..15 and 32..47, lane 32 holds K 16..31 and 48..63. Pin that reading explicitly.
TEST(AtomEmulatedFp8, Gfx950F8f6f4LaneKChunks) {
  using H = emu::hw::Mfma32x32x64F8f6f4;
  EXPECT_EQ(H::a(0, 0).col, 0);
  EXPECT_EQ(H::a(0, 15).col, 15);
  EXPECT_EQ(H::a(0, 16).col, 32);
  EXPECT_EQ(H::a(32, 0).col, 16);
  EXPECT_EQ(H::a(32, 31).col, 63);
  EXPECT_EQ(H::a(37, 3).row, 5);
}

// ================================================================================================
// ExactSum: the emulator's accumulation is exact and rounds once (round to nearest even)
// ================================================================================================
float exact_sum(std::initializer_list<double> terms) {
  emu::ExactSum s;
  for (double t : terms) s.add(t);
  return s.to_float();
}
TEST(AtomEmulatedExactSum, ExactThenRoundedOnce) {
  const double big = std::ldexp(1.0, 100);
  EXPECT_EQ(exact_sum({big, 1.0, -big}), 1.0f) << "double would lose the 1";
  EXPECT_EQ(exact_sum({1.0, std::ldexp(1.0, -24)}), 1.0f) << "a tie rounds to even";
  EXPECT_EQ(exact_sum({1.0, std::ldexp(1.0, -24), std::ldexp(1.0, -200)}), 1.0f + std::ldexp(1.0f, -23))
      << "a tie broken by a far smaller term";
  EXPECT_EQ(exact_sum({1.0 + std::ldexp(1.0, -23), std::ldexp(1.0, -24)}), 1.0f + std::ldexp(1.0f, -22));
  EXPECT_EQ(exact_sum({-3.0, 1.0}), -2.0f);
  EXPECT_EQ(exact_sum({1.5 * std::ldexp(1.0, -149)}), std::ldexp(1.0f, -148)) << "subnormal tie to even";
  EXPECT_EQ(exact_sum({std::ldexp(1.0, -266), std::ldexp(1.0, -266)}), 0.0f) << "below fp32's range";
  const float z = exact_sum({-0.0, -0.0});
  EXPECT_EQ(z, 0.0f);
  EXPECT_FALSE(std::signbit(z)) << "an exact zero is +0";
  EXPECT_TRUE(std::isnan(exact_sum({1.0, INFINITY, -INFINITY})));
  EXPECT_EQ(exact_sum({1.0, INFINITY}), INFINITY);
  EXPECT_EQ(exact_sum({std::ldexp(1.0, 127), std::ldexp(1.0, 127)}), INFINITY) << "overflow";
  // Order does not matter, bit for bit, where double summation would.
  const std::vector<double> t = {std::ldexp(1.0, 60), 3.0, -std::ldexp(1.0, 60), std::ldexp(1.0, -40), 7.0};
  std::vector<double> u = t;
  std::reverse(u.begin(), u.end());
  emu::ExactSum a, b;
  for (double x : t) a.add(x);
  for (double x : u) b.add(x);
  EXPECT_EQ(a.to_float(), b.to_float());
  EXPECT_EQ(a.to_float(), 10.0f);
  EXPECT_THROW(emu::ExactSum().add(std::ldexp(1.0, -400)), std::range_error) << "outside the accumulator";
}

// ================================================================================================
// AtomKOrder: the K order inside an instruction's operands is irrelevant to the library's atoms
// ================================================================================================
struct NamedOrder {
  std::string name;
  emu::KOrder order;
};
// The K relabellings of an instruction of `groups` lane groups holding `per` consecutive K each
// (the documented bf16 layouts: contiguous K per lane group, CK's order).
std::vector<NamedOrder> k_orders(int groups, int per) {
  const int k = groups * per;
  return {{"documented (contiguous, CK)", emu::KOrder{}},
          {"two stripes per lane group (AITER-style)", emu::KOrder::same(emu::stripe_order(groups, per))},
          {"random 1", emu::KOrder::same(emu::random_order(k, 1))},
          {"random 2", emu::KOrder::same(emu::random_order(k, 2))}};
}

// Random finite bf16 values over a wide exponent range (so that double summation would round).
float random_bf16(std::mt19937& rng) {
  std::uniform_int_distribution<int> mant(0, 127), ex(-40, 40), sign(0, 1);
  const float v = std::ldexp(1.0f + float(mant(rng)) / 128.0f, ex(rng));
  return sign(rng) ? -v : v;
}

// D of atom L on target t for random staged A, B and C, under K order `order`.
template <class L>
emu::FragF<L::kCElems> run_random_atom(Target t, unsigned seed, const emu::KOrder& order) {
  constexpr int M = L::kM, N = L::kN, K = L::kK;
  std::mt19937 rng(seed);
  Staging sa(M, K, true), sb(N, K, true);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) sa.put(m, k, bf16(random_bf16(rng)));
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) sb.put(n, k, bf16(random_bf16(rng)));
  emu::FragF<L::kCElems> c(L::kLanes);
  for (auto& lane : c.lanes)
    for (auto& x : lane) x = random_bf16(rng);
  return run_atom<L>(t, fetch<L>(t, sa, true), fetch<L>(t, sb, false), c, order);
}

template <class L>
long bit_differences(const emu::FragF<L::kCElems>& x, const emu::FragF<L::kCElems>& y) {
  long bad = 0;
  for (std::size_t l = 0; l < x.lanes.size(); ++l)
    for (std::size_t r = 0; r < std::size_t(L::kCElems); ++r) {
      std::uint32_t a, b;
      std::memcpy(&a, &x.lanes[l][r], 4);
      std::memcpy(&b, &y.lanes[l][r], 4);
      bad += a != b;
    }
  return bad;
}

// groups x per: the instruction's lane groups and K per lane (gfx950 8, gfx942 4 per instruction).
template <class L>
void expect_k_order_irrelevant(Target t) {
  const int groups = 64 / L::kM, per = t == Target::Gfx950 ? 8 : 4;
  for (unsigned seed : {1u, 2u, 3u}) {
    const emu::FragF<L::kCElems> ref = run_random_atom<L>(t, seed, emu::KOrder{});
    for (const NamedOrder& o : k_orders(groups, per)) {
      ASSERT_EQ(int(o.order.a.empty() ? groups * per : o.order.a.size()), groups * per);
      EXPECT_EQ(bit_differences<L>(run_random_atom<L>(t, seed, o.order), ref), 0)
          << (t == Target::Gfx950 ? "gfx950 " : "gfx942 ") << o.name << " seed " << seed;
    }
    // Negative control: A relabelled, B not — the pairs of A and B elements no longer meet.
    emu::KOrder a_only{emu::random_order(groups * per, 7), {}};
    EXPECT_GT(bit_differences<L>(run_random_atom<L>(t, seed, a_only), ref), L::kLanes * L::kCElems / 2)
        << "an asymmetric K order must change D";
  }
}

TEST(AtomKOrder, Bf16Mfma32x32x16Gfx950) { expect_k_order_irrelevant<lay::Mfma32x32x16Bf16>(Target::Gfx950); }
TEST(AtomKOrder, Bf16Mfma32x32x16AsTwo32x32x8Gfx942) { expect_k_order_irrelevant<lay::Mfma32x32x16Bf16>(Target::Gfx942); }
TEST(AtomKOrder, Bf16Mfma16x16x32Gfx950) { expect_k_order_irrelevant<lay::Mfma16x16x32Bf16>(Target::Gfx950); }
TEST(AtomKOrder, Bf16Mfma16x16x32AsTwo16x16x16Gfx942) { expect_k_order_irrelevant<lay::Mfma16x16x32Bf16>(Target::Gfx942); }

// The orders are permutations, and the stripes are AITER's f8f6f4 reading.
TEST(AtomKOrder, OrdersArePermutations) {
  for (const auto& p : {emu::stripe_order(2, 32), emu::random_order(64, 3), emu::inverse_order(emu::stripe_order(4, 8))}) {
    std::vector<int> seen(p.size(), 0);
    for (int k : p) ++seen[std::size_t(k)];
    for (int c : seen) EXPECT_EQ(c, 1);
  }
  // Lane group h, byte i of a 32-byte f8f6f4 operand: CK reads k = 32 h + i, AITER 16 h + 32 (i / 16) + i % 16.
  const std::vector<int> aiter = emu::stripe_order(2, 32);
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 32; ++i) EXPECT_EQ(aiter[std::size_t(32 * h + i)], 16 * h + 32 * (i / 16) + i % 16);
  EXPECT_NE(emu::random_order(64, 1), emu::random_order(64, 2));
  EXPECT_NE(emu::random_order(64, 1), emu::identity_order(64));
}

// ================================================================================================
// AtomFp8K32: gfx942's 32x32x32 e4m3 atom (arch/cdna.hpp) — one 16-byte chunk per lane and
// operand, two v_mfma_f32_32x32x16_fp8_fp8 on its 8-byte halves (FNUZ), x4 product scale.
// ================================================================================================
// fp8 rows of `row_chunks` 16-byte chunks; the atom's two K chunks sit at chunk c0, c0 + 1 of each
// row; with `swizzle` the physical chunk is chunk ^ (row % row_chunks) (kernel::SwizzledTile's
// XOR form). Every byte is first poisoned with 0x80 (NaN when read as FNUZ).
struct Fp8Staging {
  int rows, row_chunks, c0;
  bool swizzle;
  std::vector<std::uint8_t> bytes;
  Fp8Staging(int r, int rc, int first, bool sw)
      : rows(r), row_chunks(rc), c0(first), swizzle(sw), bytes(std::size_t(r) * std::size_t(rc) * 16, 0x80) {}
  std::size_t chunk_offset(int row, int chunk) const {  // chunk: the atom's (0 or 1)
    const int c = c0 + chunk;
    if (row < 0 || row >= rows || chunk < 0 || chunk > 1 || c >= row_chunks)
      throw std::out_of_range("fp8 staging: (row, chunk) out of the tile");
    const int pc = swizzle ? (c ^ (row % row_chunks)) : c;
    return (std::size_t(row) * std::size_t(row_chunks) + std::size_t(pc)) * 16;
  }
  void put(int row, int k, std::uint8_t v) { bytes[chunk_offset(row, k / 16) + std::size_t(k % 16)] = v; }
};
struct Fp8StageCfg {
  const char* name;
  int row_chunks, c0;
  bool swizzle;
};
constexpr Fp8StageCfg kFp8Stagings[] = {
    {"plain 32-byte rows", 2, 0, false},
    {"swizzled 32-byte rows", 2, 0, true},
    {"swizzled 64-byte rows, chunks 2..3", 4, 2, true},
    {"plain 128-byte rows, chunks 4..5", 8, 4, false},
};

// A: M x K bytes row-major; B: K x N bytes row-major, staged as Bt[n][k].
template <class L>
Fp8Staging stage_fp8(const std::vector<std::uint8_t>& X, bool is_a, const Fp8StageCfg& cfg) {
  const int rows = is_a ? L::kM : L::kN;
  Fp8Staging s(rows, cfg.row_chunks, cfg.c0, cfg.swizzle);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < L::kK; ++k)
      s.put(r, k, is_a ? X[std::size_t(r) * L::kK + std::size_t(k)] : X[std::size_t(k) * L::kN + std::size_t(r)]);
  return s;
}

// What lane l's one ds_read_b128 gives it: the 16 bytes of its (lds_row, lds_chunk).
template <class L>
emu::Frag8<16> fetch_fp8(const Fp8Staging& s, bool is_a) {
  emu::Frag8<16> f(L::kLanes);
  for (int l = 0; l < L::kLanes; ++l) {
    const std::size_t off =
        s.chunk_offset(is_a ? L::a_lds_row(l) : L::b_lds_row(l), is_a ? L::a_lds_chunk(l) : L::b_lds_chunk(l));
    for (int e = 0; e < 16; ++e) f.lanes[std::size_t(l)][std::size_t(e)] = s.bytes[off + std::size_t(e)];
  }
  return f;
}

// AtomFp8K32::mma: instruction h takes bytes 8h..8h+7 of A's and of B's chunk (`b_half_of`
// lets a negative control pair A's half h with another half of B).
inline emu::Frag8<8> half_of(const emu::Frag8<16>& f, int h) {
  emu::Frag8<8> o(int(f.lanes.size()));
  for (std::size_t l = 0; l < f.lanes.size(); ++l)
    for (int e = 0; e < 8; ++e) o.lanes[l][std::size_t(e)] = f.lanes[l][std::size_t(8 * h + e)];
  return o;
}
inline emu::FragF<16> run_fp8_k32(const emu::Frag8<16>& a, const emu::Frag8<16>& b, const emu::FragF<16>& c,
                                  int (*b_half_of)(int) = nullptr) {
  emu::FragF<16> d = c;
  for (int h = 0; h < 2; ++h) d = emu::mfma_f32_32x32x16_fp8_fp8(half_of(a, h), half_of(b, b_half_of ? b_half_of(h) : h), d);
  return d;
}

// e4m3fn codes the library's producers emit (never 0x80 / 0x7F / 0xFF) whose values are m/16,
// |v| <= 15: products and 32-term sums stay exact in fp32 under both readings, so D must equal
// the reference bit for bit.
inline std::vector<std::uint8_t> exact_fp8_codes() {
  std::vector<std::uint8_t> v;
  for (int i = 0; i < 256; ++i) {
    const std::uint8_t b = std::uint8_t(i);
    if (!fn_finite_not_negzero(b)) continue;
    const double x = emu::decode_e4m3fn(b);
    if (std::fabs(x) <= 15.0 && x * 16.0 == std::floor(x * 16.0)) v.push_back(b);
  }
  return v;
}

struct Fp8K32Knobs {
  bool apply_scale = true;               // AtomFp8K32::acc_scale (the epilogue's x4)
  int (*b_half_of)(int) = nullptr;       // which half of B each instruction reads
};

// Mismatching elements of D * scale against A*B + scale * C (every element), first one described.
template <class L>
long fp8_k32_errors(const Fp8StageCfg& cfg, unsigned seed, bool with_c, const Fp8K32Knobs& knobs, std::string* first) {
  const auto codes = exact_fp8_codes();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, codes.size() - 1);
  std::vector<std::uint8_t> A(std::size_t(L::kM) * L::kK), B(std::size_t(L::kK) * L::kN);
  for (auto& x : A) x = codes[pick(rng)];
  for (auto& x : B) x = codes[pick(rng)];
  std::vector<float> C(std::size_t(L::kM) * L::kN, 0.0f);  // in accumulator units
  if (with_c) {
    std::uniform_int_distribution<int> cv(-100, 100);
    for (auto& x : C) x = float(cv(rng)) * 0.25f;
  }
  emu::FragF<16> c(L::kLanes);
  for (int l = 0; l < L::kLanes; ++l)
    for (int r = 0; r < L::kCElems; ++r)
      c.lanes[std::size_t(l)][std::size_t(r)] = C[std::size_t(L::c_row(l, r)) * L::kN + std::size_t(L::c_col(l, r))];
  const emu::FragF<16> d = run_fp8_k32(fetch_fp8<L>(stage_fp8<L>(A, true, cfg), true),
                                       fetch_fp8<L>(stage_fp8<L>(B, false, cfg), false), c, knobs.b_half_of);
  const float scale = knobs.apply_scale ? vaeconv::arch::kFnuzProductScale : 1.0f;
  std::vector<float> D(std::size_t(L::kM) * L::kN, std::numeric_limits<float>::quiet_NaN());
  std::vector<int> hits(D.size(), 0);
  for (int l = 0; l < L::kLanes; ++l)
    for (int r = 0; r < L::kCElems; ++r) {
      const std::size_t i = std::size_t(L::c_row(l, r)) * L::kN + std::size_t(L::c_col(l, r));
      D[i] = d.lanes[std::size_t(l)][std::size_t(r)] * scale;
      ++hits[i];
    }
  long bad = 0;
  for (int m = 0; m < L::kM; ++m)
    for (int n = 0; n < L::kN; ++n) {
      double want = double(vaeconv::arch::kFnuzProductScale) * C[std::size_t(m) * L::kN + std::size_t(n)];
      for (int k = 0; k < L::kK; ++k)
        want += emu::decode_e4m3fn(A[std::size_t(m) * L::kK + std::size_t(k)]) *
                emu::decode_e4m3fn(B[std::size_t(k) * L::kN + std::size_t(n)]);
      const std::size_t i = std::size_t(m) * L::kN + std::size_t(n);
      if (double(float(want)) != want) throw std::logic_error("fp8 K32 test data not exact in fp32");
      if (hits[i] != 1 || !(D[i] == float(want))) {
        if (bad == 0 && first)
          *first = "m " + std::to_string(m) + " n " + std::to_string(n) + ": got " + std::to_string(D[i]) + " want " +
                   std::to_string(want) + " (written " + std::to_string(hits[i]) + "x)";
        ++bad;
      }
    }
  return bad;
}

TEST(AtomEmulatedFp8K32, TwoFnuzInstructionsTimesFourEqualProduct) {
  using L = lay::Mfma32x32x32Fp8;
  static_assert(L::kK == 32 && L::kLdsChunks == 1 && L::kElemBytes == 1 && L::kAElems == 16 && L::kBElems == 16,
                "one 16-byte chunk of 16 e4m3 per lane and operand");
  ASSERT_GE(exact_fp8_codes().size(), 90u);  // 95 codes: 0, +-(1/16 .. 15)
  for (const Fp8StageCfg& cfg : kFp8Stagings)
    for (unsigned seed : {1u, 2u, 3u})
      for (int with_c = 0; with_c < 2; ++with_c) {
        std::string first;
        EXPECT_EQ(fp8_k32_errors<L>(cfg, seed * 10 + unsigned(with_c), with_c != 0, Fp8K32Knobs{}, &first), 0)
            << cfg.name << " seed " << seed << (with_c ? " with C" : "") << ": " << first;
      }
}

// The element claims (a_row/a_k, b_k/b_col) are what each lane fetches, they cover A and B once,
// and C is the 32x32 MFMA's C layout (a bijection onto the tile).
TEST(AtomEmulatedFp8K32, ClaimsMatchFetchAndCoverTiles) {
  using L = lay::Mfma32x32x32Fp8;
  std::vector<std::uint8_t> Arow(std::size_t(L::kM) * L::kK), Ak(Arow.size()), Bcol(std::size_t(L::kK) * L::kN),
      Bk(Bcol.size());
  for (int m = 0; m < L::kM; ++m)
    for (int k = 0; k < L::kK; ++k) {
      Arow[std::size_t(m) * L::kK + std::size_t(k)] = std::uint8_t(m);
      Ak[std::size_t(m) * L::kK + std::size_t(k)] = std::uint8_t(k);
    }
  for (int k = 0; k < L::kK; ++k)
    for (int n = 0; n < L::kN; ++n) {
      Bcol[std::size_t(k) * L::kN + std::size_t(n)] = std::uint8_t(n);
      Bk[std::size_t(k) * L::kN + std::size_t(n)] = std::uint8_t(k);
    }
  std::vector<int> ca(Arow.size(), 0), cb(Bcol.size(), 0), cc(std::size_t(L::kM) * L::kN, 0);
  for (const Fp8StageCfg& cfg : kFp8Stagings) {
    const auto ar = fetch_fp8<L>(stage_fp8<L>(Arow, true, cfg), true), ak = fetch_fp8<L>(stage_fp8<L>(Ak, true, cfg), true);
    const auto bc = fetch_fp8<L>(stage_fp8<L>(Bcol, false, cfg), false), bk = fetch_fp8<L>(stage_fp8<L>(Bk, false, cfg), false);
    long bad = 0;
    for (int l = 0; l < L::kLanes; ++l)
      for (int e = 0; e < 16; ++e) {
        const std::size_t ul = std::size_t(l), ue = std::size_t(e);
        bad += ar.lanes[ul][ue] != L::a_row(l, e) || ak.lanes[ul][ue] != L::a_k(l, e);
        bad += bc.lanes[ul][ue] != L::b_col(l, e) || bk.lanes[ul][ue] != L::b_k(l, e);
      }
    EXPECT_EQ(bad, 0) << cfg.name;
  }
  for (int l = 0; l < L::kLanes; ++l) {
    for (int e = 0; e < L::kAElems; ++e) ++ca[std::size_t(L::a_row(l, e)) * L::kK + std::size_t(L::a_k(l, e))];
    for (int e = 0; e < L::kBElems; ++e) ++cb[std::size_t(L::b_k(l, e)) * L::kN + std::size_t(L::b_col(l, e))];
    for (int r = 0; r < L::kCElems; ++r) {
      ++cc[std::size_t(L::c_row(l, r)) * L::kN + std::size_t(L::c_col(l, r))];
      EXPECT_EQ(L::c_row(l, r), emu::hw::Mfma32x32x16Fp8::c(l, r).row);
      EXPECT_EQ(L::c_col(l, r), emu::hw::Mfma32x32x16Fp8::c(l, r).col);
    }
  }
  for (int x : ca) EXPECT_EQ(x, 1);
  for (int x : cb) EXPECT_EQ(x, 1);
  for (int x : cc) EXPECT_EQ(x, 1);
}

// Why two instructions on the halves are the product: instruction i's map library k -> its own
// k' (inst_of / inst_k, fragment_layouts.hpp) depends on k alone (same on every lane, A and B
// alike: the documented hardware layout of v_mfma_f32_32x32x16_fp8_fp8) and is a bijection from
// the 16 library k it consumes onto its 16 K.
TEST(AtomEmulatedFp8K32, KPermutationIsLaneIndependent) {
  using L = lay::Mfma32x32x32Fp8;
  using H = emu::hw::Mfma32x32x16Fp8;
  for (int i = 0; i < 2; ++i) {
    std::vector<int> pi(32, -1);
    bool consistent = true;
    for (int l = 0; l < 64; ++l)
      for (int e = 0; e < 16; ++e) {
        if (L::inst_of(e) != i) continue;
        const int j = e % 8;  // byte j of the instruction's 8
        EXPECT_EQ(L::inst_k(l, e), H::a(l, j).col);
        EXPECT_EQ(H::a(l, j).row, L::a_row(l, e));
        EXPECT_EQ(H::b(l, j).col, L::b_col(l, e));
        for (auto [k, h] : {std::pair<int, int>{L::a_k(l, e), H::a(l, j).col}, std::pair<int, int>{L::b_k(l, e), H::b(l, j).row}}) {
          if (pi[std::size_t(k)] == -1) pi[std::size_t(k)] = h;
          else if (pi[std::size_t(k)] != h) consistent = false;
        }
      }
    EXPECT_TRUE(consistent) << "instruction " << i;
    std::vector<int> seen(16, 0);
    int used = 0;
    for (int k = 0; k < 32; ++k)
      if (pi[std::size_t(k)] >= 0) {
        ++used;
        ++seen[std::size_t(pi[std::size_t(k)])];
      }
    EXPECT_EQ(used, 16) << "instruction " << i;
    for (int x : seen) EXPECT_EQ(x, 1) << "instruction " << i;
  }
}

// Negative controls: the same harness fails when B's chunk is misaddressed, when the instructions
// pair A's half h with B's other half, and when the x4 product scale is forgotten.
struct Fp8K32WrongBChunk : lay::Mfma32x32x32Fp8 {
  VAECONV_HD static constexpr int b_lds_chunk(int l, int = 0) { return 1 - l / 32; }
};
inline int other_half(int h) { return 1 - h; }
TEST(AtomEmulatedFp8K32, NegativeControlsAreCaught) {
  const Fp8StageCfg& cfg = kFp8Stagings[1];
  std::string first;
  EXPECT_GT(fp8_k32_errors<Fp8K32WrongBChunk>(cfg, 5, true, Fp8K32Knobs{}, &first), 0) << "wrong B chunk not caught";
  Fp8K32Knobs crossed;
  crossed.b_half_of = other_half;
  EXPECT_GT(fp8_k32_errors<lay::Mfma32x32x32Fp8>(cfg, 6, false, crossed, &first), 0) << "crossed halves not caught";
  Fp8K32Knobs unscaled;
  unscaled.apply_scale = false;
  EXPECT_GT(fp8_k32_errors<lay::Mfma32x32x32Fp8>(cfg, 7, false, unscaled, &first), 0) << "missing x4 not caught";
  // A lane reading outside the atom's chunks reads the poison: 0x80, NaN as FNUZ.
  EXPECT_TRUE(std::isnan(emu::decode_e4m3fnuz(Fp8Staging(32, 4, 2, true).bytes[0])));
}

}  // namespace
