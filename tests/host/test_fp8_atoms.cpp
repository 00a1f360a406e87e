// tests/host/test_fp8_atoms.cpp — the library's FP8 (e4m3) matrix atoms on the emulated hardware.
//
// The FP8 counterpart of test_atoms_emulated.cpp. The library layouts (vaeconv/arch/
// fragment_layouts.hpp: Mfma32x32x64Fp8, MmaM16N16K32Fp8) are fed through the independent
// instruction emulator (tests/emu/matrix_emulator.hpp) exactly the way the atoms in arch/cdna.hpp
// and arch/nvidia.hpp use them:
//   * operands staged K-contiguous, A[m][k] and Bt[n][k], in 16-byte chunks (plain, swizzled with
//     kernel::SwizzledTile, and inside a wider swizzled tile at a row/chunk offset, as
//     conv_kernel.hpp addresses it), the rest of the tile poisoned with e4m3fn NaN bytes;
//   * AMD: lane l loads chunks (a_lds_row(l), a_lds_chunk(l, s)), s < kLdsChunks, as two i32x4;
//     gfx950 concatenates them into the 32-byte operand of one v_mfma_f32_32x32x64_f8f6f4, gfx942
//     takes the 8-byte quarters q = 0..3 (dwords 2*(q%2), 2*(q%2)+1 of chunk q/2) into four
//     v_mfma_f32_32x32x16_fp8_fp8 (FNUZ) on the bytes as stored (no rewrite in the kernels:
//     arch/fp8_fnuz.hpp), and the result is multiplied by kFnuzProductScale (AtomFp8::acc_scale,
//     applied by the epilogue). Operand bytes holding -0 or NaN are an external tensor's: they
//     went through sanitize_fp8_for_target first (Knobs::sanitized: e4m3fn_bytes_for_fnuz on
//     the tensor's bytes, not on the LDS poison around them);
//   * NVIDIA: ldmatrix.x4 with the lanes' chunk addresses for A and for B, then two
//     mma.m16n8k32 e4m3 on B's register halves r[0..1] and r[2..3].
// (arch/cdna.hpp itself uses clang vector extensions and cannot be compiled by the host compiler,
// so the register plumbing of AtomFp8 is restated here line for line.)
//
// Suites:
//   Fp8AtomEmulatedLayout     — what each lane fetches vs the layout's a_row/a_k/b_k/b_col claims;
//                               C maps; the K permutation the AMD atoms rely on.
//   Fp8AtomEmulatedProduct    — D == A*B (+C) exactly on each target, through c_row/c_col.
//   Fp8AtomEmulatedCrossArch  — gfx942 (sanitized external bytes + x4) is bit-identical to gfx950
//                               on the same bytes: -0, +-448 neighbourhood, subnormals, random
//                               codes, every pair of codes; fn NaN poisons the same rows/columns.
//   Fp8AtomEmulatedFnuzBytes  — e4m3fn_bytes_for_fnuz (the sanitize pass) on all 256 codes in
//                               every byte position.
//   Fp8ProducerCodes          — the library's own producers (quantize_e4m3fn): the quantizer and
//                               the weight packer emit exactly the 253 codes that read as half in
//                               FNUZ, never 0x80 / 0x7F / 0xFF (exhaustive over bf16 inputs); the
//                               FP8-output epilogue those 253 plus its target's NaN code (0x80 on
//                               gfx942, 0x7F on gfx950 / NVIDIA; bf16 inputs, an fp32 sweep, every
//                               fp32 NaN); their bytes, unsanitized, give gfx942 == gfx950 bit for
//                               bit; a planted 0x80 / 0x7F does not.
//   Fp8OutputNan              — an FP8 output's NaN byte is read as NaN by the next conv's atom on
//                               each target (gfx942 FNUZ as stored, gfx950 / NVIDIA e4m3fn); 0x00,
//                               the other form's code, or a second sanitize pass on gfx942 fail.
//   Fp8AtomEmulatedNegative   — skipping the sanitize pass, forgetting x4, and layout slips are
//                               caught.
//   Fp8AtomEmulatedKOrder     — the K order inside each instruction's operands is irrelevant: the
//                               f8f6f4 operand read as AITER's two 16-byte stripes (cdna.md, the
//                               emulator's documented form), as CK's 32 contiguous K, or randomly;
//                               the gfx942 fp8 form contiguous, striped or randomly: bit-identical
//                               D (the emulator sums exactly); an A-only relabelling changes D.
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
#include <vector>

#include "emu/matrix_emulator.hpp"
#include "vaeconv/arch/fp8_fnuz.hpp"
#include "vaeconv/arch/fragment_layouts.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"
#include "vaeconv/kernel/smem_layout.hpp"

namespace {

namespace emu = vaeconv::emu;
namespace lay = vaeconv::layout;
namespace arch = vaeconv::arch;
using vaeconv::kernel::SwizzledTile;

enum class Target { Gfx950, Gfx942, Nvidia };
const char* target_name(Target t) { return t == Target::Gfx950 ? "gfx950" : t == Target::Gfx942 ? "gfx942" : "nvidia"; }

using Bytes = std::vector<std::uint8_t>;

bool fn_nan(std::uint8_t b) { return (b & 0x7F) == 0x7F; }
std::uint32_t f32_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
// Bit-identical, or NaN on both sides.
bool same_result(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return f32_bits(a) == f32_bits(b);
}
std::string hexbyte(unsigned b) {
  static const char* d = "0123456789ABCDEF";
  return std::string("0x") + d[(b >> 4) & 0xF] + d[b & 0xF];
}

// ------------------------------------------------------------------------------------------------
// LDS staging. The atom's operand tile (atom_rows x kK bytes) sits at row row0 and chunk chunk0 of
// a tile of tile_chunks 16-byte chunks per row; with `swizzle` the physical chunk is the library's
// SwizzledTile<tile_chunks>. Everything outside the operand tile holds a NaN of the target's
// reading (0xFF e4m3fn NaN; 0x80 FNUZ NaN on gfx942): a lane reading the wrong place poisons its
// products.
// ------------------------------------------------------------------------------------------------
struct StageCfg {
  int tile_chunks, row0, chunk0;
  bool swizzle;
  const char* name;
};
std::vector<StageCfg> stage_cfgs(int atom_chunks) {
  return {{atom_chunks, 0, 0, false, "plain"},
          {atom_chunks, 0, 0, true, "swizzled"},
          {8, 32, 8 - atom_chunks, true, "swizzled-128B-row-offset"}};
}

struct Lds {
  StageCfg cfg;
  int rows;
  Bytes bytes;
  std::vector<bool> written;  // operand bytes (put); the rest is poison
  Lds(int atom_rows, const StageCfg& c)
      : cfg(c), rows(c.row0 + atom_rows + 8), bytes(std::size_t(rows) * std::size_t(c.tile_chunks) * 16, 0xFF),
        written(bytes.size(), false) {}
  std::size_t chunk_offset(int row, int chunk) const {
    const int R = cfg.row0 + row, C = cfg.chunk0 + chunk;
    if (row < 0 || R >= rows || chunk < 0 || C >= cfg.tile_chunks) throw std::out_of_range("lds: (row, chunk) outside the tile");
    int off = (R * cfg.tile_chunks + C) * 16;
    if (cfg.swizzle) {
      switch (cfg.tile_chunks) {
        case 2: off = SwizzledTile<2>::offset(R, C); break;
        case 4: off = SwizzledTile<4>::offset(R, C); break;
        case 8: off = SwizzledTile<8>::offset(R, C); break;
        default: throw std::logic_error("lds: unsupported chunks per row");
      }
    }
    return std::size_t(off);
  }
  void put(int row, int k, std::uint8_t b) {
    const std::size_t off = chunk_offset(row, k / 16) + std::size_t(k % 16);
    bytes[off] = b;
    written[off] = true;
  }
  std::uint32_t dword(std::size_t off) const {
    return std::uint32_t(bytes[off]) | (std::uint32_t(bytes[off + 1]) << 8) | (std::uint32_t(bytes[off + 2]) << 16) |
           (std::uint32_t(bytes[off + 3]) << 24);
  }
  // sanitize_fp8_for_target on gfx942, applied to the operand tensor's bytes (the byte map of
  // e4m3fn_bytes_for_fnuz, one byte at a time here: it is bytewise).
  void sanitize_operands() {
    for (std::size_t off = 0; off < bytes.size(); ++off)
      if (written[off]) bytes[off] = std::uint8_t(arch::e4m3fn_bytes_for_fnuz(bytes[off]));
  }
  // The poison as gfx942 reads NaN.
  void poison_as_fnuz_nan() {
    for (std::size_t off = 0; off < bytes.size(); ++off)
      if (!written[off]) bytes[off] = 0x80;
  }
};

// A is M x K row-major (A[m*K + k]); B is K x N row-major (B[k*N + n]), staged as Bt[n][k].
template <class L>
Lds stage_a(const Bytes& A, const StageCfg& c) {
  Lds s(L::kM, c);
  for (int m = 0; m < L::kM; ++m)
    for (int k = 0; k < L::kK; ++k) s.put(m, k, A[std::size_t(m) * L::kK + std::size_t(k)]);
  return s;
}
template <class L>
Lds stage_b(const Bytes& B, const StageCfg& c) {
  Lds s(L::kN, c);
  for (int n = 0; n < L::kN; ++n)
    for (int k = 0; k < L::kK; ++k) s.put(n, k, B[std::size_t(k) * L::kN + std::size_t(n)]);
  return s;
}

// ------------------------------------------------------------------------------------------------
// Fragments as the atoms hold them.
// ------------------------------------------------------------------------------------------------
// AMD AtomFp8::FragA/FragB: i32x4 v[2] per lane (v[part] = the chunk at a_lds_chunk(l, part)).
using AmdFrag = std::vector<std::array<std::array<std::uint32_t, 4>, 2>>;
// NVIDIA AtomFp8::FragA/FragB: uint32_t r[4] per lane (ldmatrix.x4 destinations).
using NvFrag = emu::Frag32<4>;

struct Knobs {
  bool sanitized = true;        // gfx942: the operand tensors went through sanitize_fp8_for_target
  bool fnuz_scale = true;       // gfx942: result x kFnuzProductScale (the epilogue's acc_scale)
  bool swap_a_parts = false;    // negative control: A's two chunks handed over in the wrong order
  bool swap_a_quarters = false; // negative control (gfx942): A quarters 0<->1 swapped, B not
  bool nv_swap_b_halves = false;// negative control (NVIDIA): first mma gets b.r[2..3]
  emu::KOrder order;            // each AMD instruction's K relabelled (emu::KOrder)
};

template <class L>
AmdFrag fetch_amd(const Lds& s, bool is_a) {
  static_assert(L::kLdsChunks == 2, "the AMD fp8 atom reads two chunks per lane");
  AmdFrag f(static_cast<std::size_t>(L::kLanes));
  for (int l = 0; l < L::kLanes; ++l)
    for (int part = 0; part < L::kLdsChunks; ++part) {
      const int row = is_a ? L::a_lds_row(l) : L::b_lds_row(l);
      const int chunk = is_a ? L::a_lds_chunk(l, part) : L::b_lds_chunk(l, part);
      const std::size_t off = s.chunk_offset(row, chunk);
      for (int w = 0; w < 4; ++w) f[std::size_t(l)][std::size_t(part)][std::size_t(w)] = s.dword(off + 4 * std::size_t(w));
    }
  return f;
}
// Library element e (0..31) of an AMD fragment: byte e of v[0] | v[1] (the gfx950 i32x8 a8).
std::uint8_t amd_elem(const AmdFrag& f, int l, int e) {
  return std::uint8_t(f[std::size_t(l)][std::size_t(e / 16)][std::size_t((e % 16) / 4)] >> (8 * (e % 4)));
}

template <class L>
NvFrag fetch_nv(const Lds& s, bool is_a) {
  static_assert(L::kLdsChunks == 1, "the NVIDIA fp8 atom reads one chunk address per lane");
  std::array<std::uint32_t, 32> addr{};
  for (int l = 0; l < 32; ++l) {
    const int row = is_a ? L::a_lds_row(l) : L::b_lds_row(l);
    const int chunk = is_a ? L::a_lds_chunk(l, 0) : L::b_lds_chunk(l, 0);
    addr[std::size_t(l)] = std::uint32_t(s.chunk_offset(row, chunk));
  }
  return emu::ldmatrix_x4(s.bytes, addr);
}
// Library element e (0..15) of an NVIDIA fragment: byte e%4 of register e/4.
std::uint8_t nv_elem(const NvFrag& f, int l, int e) {
  return std::uint8_t(f.lanes[std::size_t(l)][std::size_t(e / 4)] >> (8 * (e % 4)));
}

// Runs the atom L on target t from staged A and Bt; returns D (M x N, via c_row/c_col) already
// multiplied by the target's acc_scale. c_acc (M x N, accumulator units, optional) is the
// incoming accumulator.
template <class L>
std::vector<float> run_atom(Target t, Lds la, Lds lb, const Knobs& kn = {}, const std::vector<float>& c_acc = {}) {
  constexpr int M = L::kM, N = L::kN;
  std::vector<float> D(std::size_t(M) * N, -12345.0f);
  emu::FragF<L::kCElems> c(L::kLanes);
  if (!c_acc.empty())
    for (int l = 0; l < L::kLanes; ++l)
      for (int r = 0; r < L::kCElems; ++r)
        c.lanes[std::size_t(l)][std::size_t(r)] = c_acc[std::size_t(L::c_row(l, r)) * N + std::size_t(L::c_col(l, r))];
  emu::FragF<L::kCElems> d(L::kLanes);
  float scale = 1.0f;
  if constexpr (L::kLanes == 64) {
    if (t == Target::Nvidia) throw std::logic_error("wave64 atom on the NVIDIA target");
    if (t == Target::Gfx942) {
      la.poison_as_fnuz_nan();
      lb.poison_as_fnuz_nan();
      if (kn.sanitized) {
        la.sanitize_operands();
        lb.sanitize_operands();
      }
    }
    AmdFrag fa = fetch_amd<L>(la, true), fb = fetch_amd<L>(lb, false);
    if (kn.swap_a_parts)
      for (auto& v : fa) std::swap(v[0], v[1]);
    if (t == Target::Gfx950) {
      // i32x8 a8 = {a.v[0][0..3], a.v[1][0..3]}: byte i of the 32-byte operand is library element i.
      emu::Frag8<32> a8(64), b8(64);
      for (int l = 0; l < 64; ++l)
        for (int i = 0; i < 32; ++i) {
          a8.lanes[std::size_t(l)][std::size_t(i)] = amd_elem(fa, l, i);
          b8.lanes[std::size_t(l)][std::size_t(i)] = amd_elem(fb, l, i);
        }
      d = emu::mfma_scale_f32_32x32x64_f8f6f4_e4m3(a8, b8, c, kn.order);
    } else {
      // aq = (long(a.v[q/2][2*(q%2)+1]) << 32) | a.v[q/2][2*(q%2)]; byte j of the long is element j.
      auto quarter = [](const AmdFrag& f, int q) {
        emu::Frag8<8> x(64);
        for (int l = 0; l < 64; ++l) {
          const auto& v = f[std::size_t(l)][std::size_t(q / 2)];
          const std::uint64_t w = (std::uint64_t(v[std::size_t(2 * (q % 2) + 1)]) << 32) | std::uint64_t(v[std::size_t(2 * (q % 2))]);
          for (int j = 0; j < 8; ++j) x.lanes[std::size_t(l)][std::size_t(j)] = std::uint8_t(w >> (8 * j));
        }
        return x;
      };
      d = c;
      for (int q = 0; q < 4; ++q) {
        const int qa = kn.swap_a_quarters ? (q < 2 ? 1 - q : q) : q;
        d = emu::mfma_f32_32x32x16_fp8_fp8(quarter(fa, qa), quarter(fb, q), d, kn.order);
      }
      if (kn.fnuz_scale) scale = arch::kFnuzProductScale;
    }
  } else {
    if (t != Target::Nvidia) throw std::logic_error("warp32 atom on an AMD target");
    const NvFrag ra = fetch_nv<L>(la, true), rb = fetch_nv<L>(lb, false);
    emu::Frag8<16> a(32);
    for (int l = 0; l < 32; ++l)
      for (int e = 0; e < 16; ++e) a.lanes[std::size_t(l)][std::size_t(e)] = nv_elem(ra, l, e);
    for (int h = 0; h < 2; ++h) {
      const int hb = kn.nv_swap_b_halves ? 1 - h : h;
      emu::Frag8<8> b(32);
      emu::FragF<4> ch(32);
      for (int l = 0; l < 32; ++l) {
        for (int e = 0; e < 8; ++e)  // {b.r[2h], b.r[2h+1]}
          b.lanes[std::size_t(l)][std::size_t(e)] = std::uint8_t(rb.lanes[std::size_t(l)][std::size_t(2 * hb + e / 4)] >> (8 * (e % 4)));
        for (int i = 0; i < 4; ++i) ch.lanes[std::size_t(l)][std::size_t(i)] = c.lanes[std::size_t(l)][std::size_t(4 * h + i)];
      }
      const emu::FragF<4> dh = emu::mma_m16n8k32_e4m3_f32(a, b, ch);
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 4; ++i) d.lanes[std::size_t(l)][std::size_t(4 * h + i)] = dh.lanes[std::size_t(l)][std::size_t(i)];
    }
  }
  for (int l = 0; l < L::kLanes; ++l)
    for (int r = 0; r < L::kCElems; ++r)
      D[std::size_t(L::c_row(l, r)) * N + std::size_t(L::c_col(l, r))] = scale * d.lanes[std::size_t(l)][std::size_t(r)];
  return D;
}

template <class L>
std::vector<float> run_bytes(Target t, const Bytes& A, const Bytes& B, const StageCfg& cfg, const Knobs& kn = {},
                             const std::vector<float>& c_acc = {}) {
  return run_atom<L>(t, stage_a<L>(A, cfg), stage_b<L>(B, cfg), kn, c_acc);
}

// Exact A*B in double (e4m3fn decode; the accumulation starts at +0 as the emulator's does).
template <class L>
std::vector<double> exact_product(const Bytes& A, const Bytes& B) {
  std::vector<double> R(std::size_t(L::kM) * L::kN);
  for (int m = 0; m < L::kM; ++m)
    for (int n = 0; n < L::kN; ++n) {
      double s = 0.0;
      for (int k = 0; k < L::kK; ++k)
        s += emu::decode_e4m3fn(A[std::size_t(m) * L::kK + std::size_t(k)]) * emu::decode_e4m3fn(B[std::size_t(k) * L::kN + std::size_t(n)]);
      R[std::size_t(m) * L::kN + std::size_t(n)] = s;
    }
  return R;
}

// Codes whose e4m3fn value v has |v| <= 4 and 8v an integer (both zeros included): every product
// is a multiple of 1/64 of magnitude <= 16, so any partial sum of 64 of them is exact in fp32.
std::vector<std::uint8_t> small_exact_codes() {
  std::vector<std::uint8_t> v;
  for (int i = 0; i < 256; ++i) {
    const double x = emu::decode_e4m3fn(std::uint8_t(i));
    if (!std::isnan(x) && std::fabs(x) <= 4.0 && std::floor(8.0 * x) == 8.0 * x) v.push_back(std::uint8_t(i));
  }
  return v;
}
Bytes random_from(std::mt19937& rng, std::size_t n, const std::vector<std::uint8_t>& set) {
  std::uniform_int_distribution<std::size_t> pick(0, set.size() - 1);
  Bytes v(n);
  for (auto& x : v) x = set[pick(rng)];
  return v;
}

// ================================================================================================
// Fp8AtomEmulatedLayout
// ================================================================================================

// Stages the row (or n) index in one plane and k in another (both < 0x40, unaffected by anything),
// fetches each plane exactly as the atom does, and compares with the layout's claims.
template <class L>
long claim_mismatches(const StageCfg& cfg, std::string* first) {
  constexpr int M = L::kM, N = L::kN, K = L::kK;
  Bytes Arow(std::size_t(M) * K), Ak(Arow.size()), Bcol(std::size_t(K) * N), Bk(Bcol.size());
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      Arow[std::size_t(m) * K + std::size_t(k)] = std::uint8_t(m);
      Ak[std::size_t(m) * K + std::size_t(k)] = std::uint8_t(k);
    }
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) {
      Bcol[std::size_t(k) * N + std::size_t(n)] = std::uint8_t(n);
      Bk[std::size_t(k) * N + std::size_t(n)] = std::uint8_t(k);
    }
  long bad = 0;
  auto note = [&](const std::string& s) {
    if (first && first->empty()) *first = s;
    ++bad;
  };
  if constexpr (L::kLanes == 64) {
    const AmdFrag ar = fetch_amd<L>(stage_a<L>(Arow, cfg), true), ak = fetch_amd<L>(stage_a<L>(Ak, cfg), true);
    const AmdFrag bc = fetch_amd<L>(stage_b<L>(Bcol, cfg), false), bk = fetch_amd<L>(stage_b<L>(Bk, cfg), false);
    for (int l = 0; l < 64; ++l)
      for (int e = 0; e < L::kAElems; ++e) {
        if (amd_elem(ar, l, e) != L::a_row(l, e) || amd_elem(ak, l, e) != L::a_k(l, e))
          note("A lane " + std::to_string(l) + " elem " + std::to_string(e));
        if (amd_elem(bc, l, e) != L::b_col(l, e) || amd_elem(bk, l, e) != L::b_k(l, e))
          note("B lane " + std::to_string(l) + " elem " + std::to_string(e));
      }
  } else {
    const NvFrag ar = fetch_nv<L>(stage_a<L>(Arow, cfg), true), ak = fetch_nv<L>(stage_a<L>(Ak, cfg), true);
    const NvFrag bc = fetch_nv<L>(stage_b<L>(Bcol, cfg), false), bk = fetch_nv<L>(stage_b<L>(Bk, cfg), false);
    for (int l = 0; l < 32; ++l)
      for (int e = 0; e < 16; ++e) {
        if (nv_elem(ar, l, e) != L::a_row(l, e) || nv_elem(ak, l, e) != L::a_k(l, e))
          note("A lane " + std::to_string(l) + " elem " + std::to_string(e));
        if (nv_elem(bc, l, e) != L::b_col(l, e) || nv_elem(bk, l, e) != L::b_k(l, e))
          note("B lane " + std::to_string(l) + " elem " + std::to_string(e));
      }
  }
  return bad;
}

TEST(Fp8AtomEmulatedLayout, Mfma32x32x64ClaimsMatchTwoChunkFetch) {
  using L = lay::Mfma32x32x64Fp8;
  static_assert(L::kLdsChunks == 2 && L::kElemBytes == 1 && L::kAElems == 32 && L::kBElems == 32, "");
  for (const StageCfg& cfg : stage_cfgs(4)) {
    std::string first;
    EXPECT_EQ(claim_mismatches<L>(cfg, &first), 0) << cfg.name << ": first " << first;
  }
}

TEST(Fp8AtomEmulatedLayout, MmaM16N16K32ClaimsMatchLdmatrix) {
  using L = lay::MmaM16N16K32Fp8;
  static_assert(L::kLdsChunks == 1 && L::kElemBytes == 1 && L::kAElems == 16 && L::kBElems == 16, "");
  for (const StageCfg& cfg : stage_cfgs(2)) {
    std::string first;
    EXPECT_EQ(claim_mismatches<L>(cfg, &first), 0) << cfg.name << ": first " << first;
  }
}

// The claims are each element's place in A / B; they must cover the tiles exactly once per
// lane group (A: every (m, k) held by exactly one lane-element), and C maps must be bijections
// equal to the hardware's C layouts.
template <class L>
void expect_claims_and_c_bijective() {
  std::vector<int> ca(std::size_t(L::kM) * L::kK, 0), cb(std::size_t(L::kK) * L::kN, 0), cc(std::size_t(L::kM) * L::kN, 0);
  for (int l = 0; l < L::kLanes; ++l) {
    for (int e = 0; e < L::kAElems; ++e) ++ca[std::size_t(L::a_row(l, e)) * L::kK + std::size_t(L::a_k(l, e))];
    for (int e = 0; e < L::kBElems; ++e) ++cb[std::size_t(L::b_k(l, e)) * L::kN + std::size_t(L::b_col(l, e))];
    for (int r = 0; r < L::kCElems; ++r) ++cc[std::size_t(L::c_row(l, r)) * L::kN + std::size_t(L::c_col(l, r))];
  }
  for (int x : ca) EXPECT_EQ(x, 1);
  for (int x : cb) EXPECT_EQ(x, 1);
  for (int x : cc) EXPECT_EQ(x, 1);
}
TEST(Fp8AtomEmulatedLayout, ClaimsCoverTilesAndCMapsMatchHardware) {
  expect_claims_and_c_bijective<lay::Mfma32x32x64Fp8>();
  expect_claims_and_c_bijective<lay::MmaM16N16K32Fp8>();
  for (int l = 0; l < 64; ++l)
    for (int r = 0; r < 16; ++r) {
      EXPECT_EQ(lay::Mfma32x32x64Fp8::c_row(l, r), emu::hw::Mfma32x32x64F8f6f4::c(l, r).row);
      EXPECT_EQ(lay::Mfma32x32x64Fp8::c_col(l, r), emu::hw::Mfma32x32x64F8f6f4::c(l, r).col);
      EXPECT_EQ(lay::Mfma32x32x64Fp8::c_row(l, r), emu::hw::Mfma32x32x16Fp8::c(l, r).row);
      EXPECT_EQ(lay::Mfma32x32x64Fp8::c_col(l, r), emu::hw::Mfma32x32x16Fp8::c(l, r).col);
    }
  for (int l = 0; l < 32; ++l)
    for (int r = 0; r < 8; ++r) {  // register 4h + i = mma h's c_i, n offset 8h
      const emu::RC p = emu::hw::MmaM16N8K32E4m3::c(l, r % 4);
      EXPECT_EQ(lay::MmaM16N16K32Fp8::c_row(l, r), p.row);
      EXPECT_EQ(lay::MmaM16N16K32Fp8::c_col(l, r), p.col + 8 * (r / 4));
    }
}

// Why the AMD atom may hand the hardware adjacent chunks: the map (library k) -> (instruction k)
// that each instruction applies must depend on k alone (not on the lane, A vs B alike) and be a
// bijection from the library K it consumes onto the instruction's K. gfx950: one instruction over
// all 64 k; gfx942: instruction q consumes library k in {8q..8q+7} U {32+8q..32+8q+7}.
TEST(Fp8AtomEmulatedLayout, AmdKPermutationIsLaneIndependent) {
  using L = lay::Mfma32x32x64Fp8;
  {
    std::vector<int> pi(64, -1);
    bool consistent = true;
    for (int l = 0; l < 64; ++l)
      for (int i = 0; i < 32; ++i) {
        const int ka = L::a_k(l, i), kb = L::b_k(l, i);
        const int ha = emu::hw::Mfma32x32x64F8f6f4::a(l, i).col, hb = emu::hw::Mfma32x32x64F8f6f4::b(l, i).row;
        for (auto [k, h] : {std::pair<int, int>{ka, ha}, std::pair<int, int>{kb, hb}}) {
          if (pi[std::size_t(k)] == -1) pi[std::size_t(k)] = h;
          else if (pi[std::size_t(k)] != h) consistent = false;
        }
      }
    EXPECT_TRUE(consistent) << "gfx950: library k maps to different instruction k on different lanes";
    std::vector<int> seen(64, 0);
    for (int h : pi) {
      ASSERT_GE(h, 0);
      ++seen[std::size_t(h)];
    }
    for (int s : seen) EXPECT_EQ(s, 1);
  }
  for (int q = 0; q < 4; ++q) {
    std::vector<int> pi(64, -1);
    bool consistent = true;
    for (int l = 0; l < 64; ++l)
      for (int j = 0; j < 8; ++j) {
        const int i = 8 * q + j;  // library element of byte j of quarter q
        const int ka = L::a_k(l, i), kb = L::b_k(l, i);
        const int ha = emu::hw::Mfma32x32x16Fp8::a(l, j).col, hb = emu::hw::Mfma32x32x16Fp8::b(l, j).row;
        for (auto [k, h] : {std::pair<int, int>{ka, ha}, std::pair<int, int>{kb, hb}}) {
          if (pi[std::size_t(k)] == -1) pi[std::size_t(k)] = h;
          else if (pi[std::size_t(k)] != h) consistent = false;
        }
      }
    EXPECT_TRUE(consistent) << "gfx942 quarter " << q;
    std::vector<int> seen(16, 0);
    int used = 0;
    for (int k = 0; k < 64; ++k)
      if (pi[std::size_t(k)] >= 0) {
        ++used;
        ++seen[std::size_t(pi[std::size_t(k)])];
        EXPECT_TRUE((k % 32) / 8 == q) << "quarter " << q << " consumes library k " << k;
      }
    EXPECT_EQ(used, 16);
    for (int s : seen) EXPECT_EQ(s, 1);
  }
}

// ================================================================================================
// Fp8AtomEmulatedProduct: D == A*B (+ C) exactly
// ================================================================================================
template <class L>
void expect_product_exact(Target t, int atom_chunks) {
  const auto codes = small_exact_codes();
  ASSERT_GE(codes.size(), 40u);
  for (unsigned seed : {1u, 2u, 3u})
    for (const StageCfg& cfg : stage_cfgs(atom_chunks))
      for (int with_c = 0; with_c < 2; ++with_c) {
        std::mt19937 rng(seed * 100 + unsigned(with_c));
        const Bytes A = random_from(rng, std::size_t(L::kM) * L::kK, codes);
        const Bytes B = random_from(rng, std::size_t(L::kK) * L::kN, codes);
        const std::vector<double> R = exact_product<L>(A, B);
        // C in accumulator units: the true partial result it stands for is C * acc_scale.
        const float scale = t == Target::Gfx942 ? arch::kFnuzProductScale : 1.0f;
        std::vector<float> C;
        if (with_c) {
          std::uniform_int_distribution<int> cv(-256, 256);
          C.resize(std::size_t(L::kM) * L::kN);
          for (auto& x : C) x = float(cv(rng)) / 64.0f;
        }
        const std::vector<float> D = run_bytes<L>(t, A, B, cfg, Knobs{}, C);
        long bad = 0;
        std::string first;
        for (std::size_t i = 0; i < D.size(); ++i) {
          const double want = R[i] + (with_c ? double(C[i]) * scale : 0.0);
          ASSERT_EQ(double(float(want)), want) << "test data not exact in fp32";
          if (!same_result(D[i], float(want))) {
            if (first.empty()) first = "m " + std::to_string(i / L::kN) + " n " + std::to_string(i % L::kN) + ": got " +
                                       std::to_string(D[i]) + " want " + std::to_string(want);
            ++bad;
          }
        }
        EXPECT_EQ(bad, 0) << target_name(t) << " " << cfg.name << " seed " << seed << (with_c ? " with C" : "") << ": "
                          << first;
      }
}

TEST(Fp8AtomEmulatedProduct, Mfma32x32x64OneF8f6f4Gfx950) { expect_product_exact<lay::Mfma32x32x64Fp8>(Target::Gfx950, 4); }
TEST(Fp8AtomEmulatedProduct, Mfma32x32x64FourFnuzGfx942) { expect_product_exact<lay::Mfma32x32x64Fp8>(Target::Gfx942, 4); }
TEST(Fp8AtomEmulatedProduct, MmaM16N16K32LdmatrixTwoM16n8k32) { expect_product_exact<lay::MmaM16N16K32Fp8>(Target::Nvidia, 2); }

// Chaining atoms along K (what conv_kernel.hpp does for ka = 0, 1 of a 128-byte LDS row): the
// accumulator carries over, and on gfx942 the x4 is applied once at the end.
TEST(Fp8AtomEmulatedProduct, TwoAtomsAlongKAccumulate) {
  using L = lay::Mfma32x32x64Fp8;
  const auto codes = small_exact_codes();
  std::mt19937 rng(77);
  const Bytes A0 = random_from(rng, 32 * 64, codes), B0 = random_from(rng, 64 * 32, codes);
  const Bytes A1 = random_from(rng, 32 * 64, codes), B1 = random_from(rng, 64 * 32, codes);
  const auto R0 = exact_product<L>(A0, B0), R1 = exact_product<L>(A1, B1);
  for (Target t : {Target::Gfx950, Target::Gfx942}) {
    const float scale = t == Target::Gfx942 ? arch::kFnuzProductScale : 1.0f;
    // Both atoms live in one 8-chunk swizzled row: atom 0 at chunks 0..3, atom 1 at 4..7.
    Lds la(32, {8, 0, 0, true, "ka0"}), lb(32, {8, 0, 0, true, "ka0"});
    Lds la1(32, {8, 0, 4, true, "ka1"}), lb1(32, {8, 0, 4, true, "ka1"});
    for (int m = 0; m < 32; ++m)
      for (int k = 0; k < 64; ++k) {
        la.put(m, k, A0[std::size_t(m) * 64 + std::size_t(k)]);
        la.put(m, 64 + k, A1[std::size_t(m) * 64 + std::size_t(k)]);
        lb.put(m, k, B0[std::size_t(k) * 32 + std::size_t(m)]);
        lb.put(m, 64 + k, B1[std::size_t(k) * 32 + std::size_t(m)]);
      }
    la1.bytes = la.bytes;
    lb1.bytes = lb.bytes;
    la1.written = la.written;
    lb1.written = lb.written;
    Knobs raw;
    raw.fnuz_scale = false;  // accumulate in accumulator units, scale once
    const std::vector<float> acc0 = run_atom<L>(t, la, lb, raw);
    std::vector<float> D = run_atom<L>(t, la1, lb1, raw, acc0);
    for (auto& x : D) x *= scale;
    for (std::size_t i = 0; i < D.size(); ++i) ASSERT_EQ(D[i], float(R0[i] + R1[i])) << target_name(t) << " element " << i;
  }
}

// ================================================================================================
// Fp8AtomEmulatedCrossArch: gfx942 (sanitized + x4) computes what gfx950 computes on the same bytes
// ================================================================================================

// Lowest power of two dividing the nonzero double p (p = odd * 2^result).
int lsb_exp(double p) {
  int e;
  const double f = std::frexp(std::fabs(p), &e);
  const std::uint64_t m = std::uint64_t(std::ldexp(f, 53));
  return e - 53 + __builtin_ctzll(m);
}

// Magnitude classes. Rows of A and columns of B get a class; every product of a class pair lies on
// a grid 2^u with sum(|p|) < 2^(u+24), so every partial sum, in any order, is exact in fp32 and the
// one rounding of gfx950 and the four of gfx942 cannot differ. (Checked per element below, not
// assumed.) Big: |v| in [16, 448] (exponent field >= 11) and +-0. Small: exponent field <= 3
// (subnormals, the lowest normals) and +-0.
bool big_code(std::uint8_t b) { return !fn_nan(b) && (((b >> 3) & 0xF) >= 11 || (b & 0x7F) == 0); }
bool small_code(std::uint8_t b) { return ((b >> 3) & 0xF) <= 3; }

const std::vector<std::uint8_t> kBigSpecials = {0x7E, 0xFE, 0x7D, 0xFD, 0x7C, 0xFC, 0x7B, 0xF8, 0x80, 0x00, 0x58, 0xD8};
const std::vector<std::uint8_t> kSmallSpecials = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x81, 0x82, 0x83, 0x84,
                                                  0x85, 0x86, 0x87, 0x80, 0x00, 0x08, 0x88, 0x1F, 0x9F};

struct SpecialData {
  Bytes A, B;
};
SpecialData special_matrices(unsigned seed) {
  constexpr int M = 32, N = 32, K = 64;
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> big, small;
  for (int i = 0; i < 256; ++i) {
    if (big_code(std::uint8_t(i))) big.push_back(std::uint8_t(i));
    if (small_code(std::uint8_t(i))) small.push_back(std::uint8_t(i));
  }
  std::bernoulli_distribution is_big(0.5), special(0.3);
  auto draw = [&](bool b) {
    const auto& set = special(rng) ? (b ? kBigSpecials : kSmallSpecials) : (b ? big : small);
    return set[std::uniform_int_distribution<std::size_t>(0, set.size() - 1)(rng)];
  };
  std::vector<bool> row_big(M), col_big(N);
  for (int m = 0; m < M; ++m) row_big[std::size_t(m)] = m < 2 ? m == 0 : is_big(rng);  // both classes always present
  for (int n = 0; n < N; ++n) col_big[std::size_t(n)] = n < 2 ? n == 1 : is_big(rng);
  SpecialData s{Bytes(std::size_t(M) * K), Bytes(std::size_t(K) * N)};
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) s.A[std::size_t(m) * K + std::size_t(k)] = draw(row_big[std::size_t(m)]);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) s.B[std::size_t(k) * N + std::size_t(n)] = draw(col_big[std::size_t(n)]);
  // Every special code of a class appears in A and in B.
  for (std::size_t i = 0; i < kBigSpecials.size(); ++i) {
    s.A[0 * K + i] = kBigSpecials[i];
    s.B[i * N + 1] = kBigSpecials[i];
  }
  for (std::size_t i = 0; i < kSmallSpecials.size(); ++i) {
    s.A[1 * K + 20 + i] = kSmallSpecials[i];
    s.B[(20 + i) * N + 0] = kSmallSpecials[i];
  }
  // A row and a column of -0 only: +0 on both targets (and NaN on gfx942 without sanitizing).
  const int mz = 5, nz = 6;
  for (int k = 0; k < K; ++k) {
    s.A[std::size_t(mz) * K + std::size_t(k)] = 0x80;
    s.B[std::size_t(k) * N + std::size_t(nz)] = 0x80;
  }
  return s;
}

// The precondition of bit-identity under any accumulation order (see the class comment).
template <class L>
bool all_partial_sums_exact(const Bytes& A, const Bytes& B, std::string* why) {
  for (int m = 0; m < L::kM; ++m)
    for (int n = 0; n < L::kN; ++n) {
      double sum_abs = 0.0;
      int u = std::numeric_limits<int>::max();
      for (int k = 0; k < L::kK; ++k) {
        const double p = emu::decode_e4m3fn(A[std::size_t(m) * L::kK + std::size_t(k)]) *
                         emu::decode_e4m3fn(B[std::size_t(k) * L::kN + std::size_t(n)]);
        if (std::isnan(p)) return *why = "NaN operand", false;
        if (p != 0.0) u = std::min(u, lsb_exp(p));
        sum_abs += std::fabs(p);
      }
      if (sum_abs != 0.0 && !(sum_abs < std::ldexp(1.0, u + 24)))
        return *why = "element " + std::to_string(m) + "," + std::to_string(n) + " spans more than 24 bits", false;
    }
  return true;
}

template <class L>
long cross_mismatches(const Bytes& A, const Bytes& B, const StageCfg& cfg, const Knobs& k942, std::string* first) {
  const std::vector<float> D950 = run_bytes<L>(Target::Gfx950, A, B, cfg);
  const std::vector<float> D942 = run_bytes<L>(Target::Gfx942, A, B, cfg, k942);
  long bad = 0;
  for (std::size_t i = 0; i < D950.size(); ++i)
    if (!same_result(D950[i], D942[i])) {
      if (first && first->empty())
        *first = "m " + std::to_string(i / L::kN) + " n " + std::to_string(i % L::kN) + ": gfx950 " + std::to_string(D950[i]) +
                 " gfx942 " + std::to_string(D942[i]);
      ++bad;
    }
  return bad;
}

TEST(Fp8AtomEmulatedCrossArch, NegZeroNear448SubnormalsRandomBitIdentical) {
  using L = lay::Mfma32x32x64Fp8;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    const SpecialData s = special_matrices(seed);
    std::string why;
    ASSERT_TRUE(all_partial_sums_exact<L>(s.A, s.B, &why)) << "seed " << seed << ": " << why;
    const std::vector<double> R = exact_product<L>(s.A, s.B);
    for (const StageCfg& cfg : stage_cfgs(4)) {
      const std::vector<float> D950 = run_bytes<L>(Target::Gfx950, s.A, s.B, cfg);
      const std::vector<float> D942 = run_bytes<L>(Target::Gfx942, s.A, s.B, cfg);
      long bad = 0, nonzero = 0;
      for (std::size_t i = 0; i < R.size(); ++i) {
        ASSERT_TRUE(std::isfinite(D950[i])) << "test data must stay finite";
        EXPECT_EQ(D950[i], float(R[i])) << "gfx950 vs exact, seed " << seed << " " << cfg.name << " element " << i;
        if (!same_result(D950[i], D942[i])) ++bad;
        if (D950[i] != 0.0f) ++nonzero;
      }
      EXPECT_EQ(bad, 0) << "seed " << seed << " " << cfg.name;
      EXPECT_GT(nonzero, 900) << "the data should exercise real products";
      // The all -0 row and column give +0 (not -0, not NaN) on both.
      for (int n = 0; n < 32; ++n) EXPECT_EQ(f32_bits(D942[std::size_t(5) * 32 + std::size_t(n)]), 0u) << n;
      for (int m = 0; m < 32; ++m) EXPECT_EQ(f32_bits(D942[std::size_t(m) * 32 + 6]), 0u) << m;
    }
  }
}

// Every ordered pair of the 256 codes as a single product: A has one nonzero column k0, B one
// nonzero row k0 (k0 walks all 64 k, so every lane half, chunk and quarter is used), the rest +0
// or -0. 64 atoms of 32 x 32 pairs = all 65536 pairs. NaN codes give NaN on both targets; all
// other pairs are bit-identical (single products are exact in fp32).
TEST(Fp8AtomEmulatedCrossArch, EveryCodePairBitIdentical) {
  using L = lay::Mfma32x32x64Fp8;
  const StageCfg cfg = stage_cfgs(4)[1];
  long bad = 0, nan_pairs = 0, checked = 0;
  std::string first;
  for (int c = 0; c < 64; ++c) {
    const int k0 = (7 * c) % 64;
    const std::uint8_t fill = (c % 2) ? 0x80 : 0x00;
    Bytes A(32 * 64, fill), B(64 * 32, fill);
    for (int m = 0; m < 32; ++m) A[std::size_t(m) * 64 + std::size_t(k0)] = std::uint8_t(32 * (c % 8) + m);
    for (int n = 0; n < 32; ++n) B[std::size_t(k0) * 32 + std::size_t(n)] = std::uint8_t(32 * (c / 8) + n);
    const std::vector<float> D950 = run_bytes<L>(Target::Gfx950, A, B, cfg);
    const std::vector<float> D942 = run_bytes<L>(Target::Gfx942, A, B, cfg);
    for (int m = 0; m < 32; ++m)
      for (int n = 0; n < 32; ++n) {
        const std::uint8_t x = std::uint8_t(32 * (c % 8) + m), y = std::uint8_t(32 * (c / 8) + n);
        const std::size_t i = std::size_t(m) * 32 + std::size_t(n);
        ++checked;
        const bool want_nan = fn_nan(x) || fn_nan(y);
        // gfx950 reference: +0 + x*y, exact in fp32.
        const float want = float(0.0 + emu::decode_e4m3fn(x) * emu::decode_e4m3fn(y));
        bool ok;
        if (want_nan) {
          ++nan_pairs;
          ok = std::isnan(D950[i]) && std::isnan(D942[i]);
        } else {
          ok = same_result(D950[i], want) && same_result(D942[i], want);
        }
        if (!ok) {
          if (first.empty())
            first = hexbyte(x) + " * " + hexbyte(y) + ": gfx950 " + std::to_string(D950[i]) + " gfx942 " + std::to_string(D942[i]);
          ++bad;
        }
      }
  }
  EXPECT_EQ(checked, 65536);
  EXPECT_EQ(nan_pairs, 2 * 2 * 256 - 4);
  EXPECT_EQ(bad, 0) << first;
}

// A fn NaN byte in A (0x7F) or in B (0xFF) poisons its row / column on both targets; the other
// elements stay bit-identical.
TEST(Fp8AtomEmulatedCrossArch, NanBytePoisonsSameRowAndColumnOnBoth) {
  using L = lay::Mfma32x32x64Fp8;
  for (std::uint8_t nan_a : {std::uint8_t(0x7F), std::uint8_t(0xFF)}) {
    SpecialData s = special_matrices(42);
    const int m0 = 9, k0 = 37, k1 = 3, n1 = 17;
    s.A[std::size_t(m0) * 64 + std::size_t(k0)] = nan_a;
    s.B[std::size_t(k1) * 32 + std::size_t(n1)] = std::uint8_t(nan_a ^ 0x80);
    for (const StageCfg& cfg : stage_cfgs(4)) {
      const std::vector<float> D950 = run_bytes<L>(Target::Gfx950, s.A, s.B, cfg);
      const std::vector<float> D942 = run_bytes<L>(Target::Gfx942, s.A, s.B, cfg);
      for (int m = 0; m < 32; ++m)
        for (int n = 0; n < 32; ++n) {
          const std::size_t i = std::size_t(m) * 32 + std::size_t(n);
          if (m == m0 || n == n1) {
            EXPECT_TRUE(std::isnan(D950[i])) << cfg.name << " gfx950 " << m << "," << n;
            EXPECT_TRUE(std::isnan(D942[i])) << cfg.name << " gfx942 " << m << "," << n;
          } else {
            EXPECT_TRUE(std::isfinite(D950[i]) && same_result(D950[i], D942[i])) << cfg.name << " " << m << "," << n;
          }
        }
    }
  }
}

// Fully random finite codes (every magnitude class mixed): exactness of the partial sums is no
// longer guaranteed, so gfx942's four roundings may differ from gfx950's one — but only by the
// rounding of partial sums: |d942 - d950| <= 5 * 2^-24 * sum|p|. Elements where the precondition
// holds anyway must still be bit-identical.
TEST(Fp8AtomEmulatedCrossArch, RandomFiniteCodesAgreeUpToRounding) {
  using L = lay::Mfma32x32x64Fp8;
  std::vector<std::uint8_t> finite;
  for (int i = 0; i < 256; ++i)
    if (!fn_nan(std::uint8_t(i))) finite.push_back(std::uint8_t(i));
  long identical = 0, total = 0;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(1000 + seed);
    const Bytes A = random_from(rng, 32 * 64, finite), B = random_from(rng, 64 * 32, finite);
    const std::vector<float> D950 = run_bytes<L>(Target::Gfx950, A, B, stage_cfgs(4)[0]);
    const std::vector<float> D942 = run_bytes<L>(Target::Gfx942, A, B, stage_cfgs(4)[0]);
    for (int m = 0; m < 32; ++m)
      for (int n = 0; n < 32; ++n) {
        const std::size_t i = std::size_t(m) * 32 + std::size_t(n);
        double sum_abs = 0.0;
        for (int k = 0; k < 64; ++k)
          sum_abs += std::fabs(emu::decode_e4m3fn(A[std::size_t(m) * 64 + std::size_t(k)]) *
                               emu::decode_e4m3fn(B[std::size_t(k) * 32 + std::size_t(n)]));
        ASSERT_TRUE(std::isfinite(D950[i]) && std::isfinite(D942[i]));
        EXPECT_LE(std::fabs(double(D942[i]) - double(D950[i])), 5.0 * std::ldexp(sum_abs, -24)) << m << "," << n;
        identical += same_result(D950[i], D942[i]) ? 1 : 0;
        ++total;
      }
  }
  EXPECT_GT(identical, total / 2) << "rounding differences should be rare";
}

// ================================================================================================
// Fp8AtomEmulatedFnuzBytes: e4m3fn_bytes_for_fnuz
// ================================================================================================

// The per-byte contract: every finite e4m3fn code except 0x80 passes unchanged and then reads as
// exactly half its e4m3fn value in FNUZ; 0x80 (-0) -> 0x00 (+0); the NaNs 0x7F / 0xFF -> 0x80.
void expect_fixed_byte(std::uint8_t b, std::uint8_t f, const std::string& where) {
  if (b == 0x80) {
    EXPECT_EQ(f, 0x00) << where;
    EXPECT_EQ(emu::decode_e4m3fnuz(f), 0.0) << where;
  } else if (fn_nan(b)) {
    EXPECT_EQ(f, 0x80) << where;
    EXPECT_TRUE(std::isnan(emu::decode_e4m3fnuz(f))) << where;
    EXPECT_TRUE(std::isnan(vaeconv::e4m3fnuz_to_float(f))) << where;
  } else {
    EXPECT_EQ(f, b) << where;
    EXPECT_EQ(emu::decode_e4m3fnuz(f), emu::decode_e4m3fn(b) / 2.0) << where;
    // The library's own decoders agree with the emulator's.
    EXPECT_EQ(vaeconv::e4m3fnuz_to_float(f), vaeconv::e4m3fn_to_float(b) / 2.0f) << where;
    EXPECT_EQ(double(vaeconv::e4m3fn_to_float(b)), emu::decode_e4m3fn(b)) << where;
  }
}

TEST(Fp8AtomEmulatedFnuzBytes, AllCodesInEveryBytePosition) {
  std::mt19937 rng(5);
  for (int pos = 0; pos < 4; ++pos)
    for (int v = 0; v < 256; ++v)
      for (int rep = 0; rep < 4; ++rep) {
        // The other three bytes: zeros, the special codes, or random.
        std::uint32_t others = rep == 0 ? 0u : rep == 1 ? 0x807F80FFu : rep == 2 ? 0xFF7F8080u : std::uint32_t(rng());
        const std::uint32_t w = (others & ~(0xFFu << (8 * pos))) | (std::uint32_t(v) << (8 * pos));
        const std::uint32_t out = arch::e4m3fn_bytes_for_fnuz(w);
        for (int i = 0; i < 4; ++i)
          expect_fixed_byte(std::uint8_t(w >> (8 * i)), std::uint8_t(out >> (8 * i)),
                            "word " + std::to_string(w) + " byte " + std::to_string(i));
      }
}

TEST(Fp8AtomEmulatedFnuzBytes, ProductOfFixedBytesIsQuarterOfFnProduct) {
  // For every non-NaN pair: FNUZ(fix(a)) * FNUZ(fix(b)) * 4 == fn(a) * fn(b), with -0 products
  // compared as values (the accumulator adds them to +0).
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      if (fn_nan(std::uint8_t(a)) || fn_nan(std::uint8_t(b))) continue;
      const std::uint8_t fa = std::uint8_t(arch::e4m3fn_bytes_for_fnuz(std::uint32_t(a)));
      const std::uint8_t fb = std::uint8_t(arch::e4m3fn_bytes_for_fnuz(std::uint32_t(b)));
      const double p942 = emu::decode_e4m3fnuz(fa) * emu::decode_e4m3fnuz(fb) * double(arch::kFnuzProductScale);
      const double p950 = emu::decode_e4m3fn(std::uint8_t(a)) * emu::decode_e4m3fn(std::uint8_t(b));
      ASSERT_EQ(p942, p950) << a << " * " << b;
    }
  static_assert(arch::kFnuzProductScale == 4.0f, "FNUZ bias is one larger: each operand reads as half");
  static_assert(arch::e4m3fn_bytes_for_fnuz(0x807F7E80u) == 0x00807E00u, "constexpr on the host");
}

// ================================================================================================
// Fp8ProducerCodes: the library's own FP8 bytes are read correctly by gfx942 as they are
// ================================================================================================

// Exhaustive over the 256 codes: e4m3fn_reads_as_half_fnuz holds for exactly the 253 codes whose
// FNUZ reading is half their e4m3fn value (0x80, 0x7F, 0xFF are the three that are not).
TEST(Fp8ProducerCodes, ExactlyTheFnuzExactCodesReadAsHalf) {
  int exact = 0;
  for (int c = 0; c < 256; ++c) {
    const std::uint8_t b = std::uint8_t(c);
    const bool half = emu::decode_e4m3fnuz(b) == emu::decode_e4m3fn(b) / 2.0;  // NaN: false
    EXPECT_EQ(arch::e4m3fn_reads_as_half_fnuz(b), half) << hexbyte(b);
    EXPECT_EQ(arch::e4m3fn_bytes_for_fnuz(b) == b, half) << hexbyte(b) << ": the sanitize pass keeps exactly these";
    exact += half;
  }
  EXPECT_EQ(exact, 253);
  EXPECT_FALSE(arch::e4m3fn_reads_as_half_fnuz(0x80) || arch::e4m3fn_reads_as_half_fnuz(0x7F) ||
               arch::e4m3fn_reads_as_half_fnuz(0xFF));
}

// The quantizer's per-element rule over every bf16 input (all 65536 patterns: NaNs, infinities,
// both zeros, subnormals) at scales from tiny to huge: only FNUZ-exact codes; at scale 1 every one
// of the 253 (each e4m3fn value is a bf16 value), so the set emitted is exactly those.
TEST(Fp8ProducerCodes, QuantizerEmitsExactlyThe253CodesOverEveryBf16Input) {
  const float scales[] = {1.f, 3.5f / 448.f, 1e-3f / 448.f, std::ldexp(1.f, -20), 1e20f / 448.f, 0.37f,
                          std::ldexp(1.f, -126), vaeconv::fp8_scale_for_amax(INFINITY)};
  std::array<long, 256> emitted_at_1{};
  long bad = 0, checked = 0, neg_zero_in = 0, nan_in = 0;
  std::string first;
  for (float scale : scales)
    for (std::uint32_t bits = 0; bits < 65536; ++bits) {
      const float x = vaeconv::bf16_to_float(std::uint16_t(bits));
      const std::uint8_t b = vaeconv::quantize_e4m3fn(x, scale);
      const std::uint8_t plain = vaeconv::float_to_e4m3fn(x / scale);
      neg_zero_in += plain == 0x80;
      nan_in += fn_nan(plain);
      // Equal to the plain e4m3fn encoding except that -0 and NaN become 0x00.
      const std::uint8_t want = (plain == 0x80 || fn_nan(plain)) ? 0x00 : plain;
      if (!arch::e4m3fn_reads_as_half_fnuz(b) || b != want) {
        if (first.empty()) first = "bf16 " + std::to_string(bits) + " scale " + std::to_string(scale) + " -> " + hexbyte(b);
        ++bad;
      }
      if (scale == 1.f) ++emitted_at_1[b];
      ++checked;
    }
  EXPECT_EQ(bad, 0) << first;
  EXPECT_EQ(checked, long(sizeof scales / sizeof scales[0]) * 65536);
  EXPECT_GT(neg_zero_in, 1000) << "the inputs must include values that round to -0";
  EXPECT_GT(nan_in, 1000) << "and NaNs";
  int distinct = 0;
  for (int c = 0; c < 256; ++c) {
    EXPECT_EQ(emitted_at_1[std::size_t(c)] > 0, arch::e4m3fn_reads_as_half_fnuz(std::uint8_t(c))) << hexbyte(unsigned(c));
    distinct += emitted_at_1[std::size_t(c)] > 0;
  }
  EXPECT_EQ(distinct, 253);
}

// The FP8-output epilogue quantizes fp32 results with the same function (kernel/epilogue.hpp),
// passing its architecture's NaN code (Cdna / Nvidia::kFp8NanCode). Per target, the set of codes
// it can emit, exhaustively: every finite e4m3fn value (each is a bf16 value) reaches its own code
// at y_scale 1, a sweep over the fp32 bit patterns of both signs (every exponent, ~1M values) and
// the specials at several y_scales reach no other, and every fp32 NaN (both signs, every payload)
// stores the target's code. So the emitted set is exactly the 253 FNUZ-exact codes plus the NaN
// code: 0x80 on gfx942 (which makes it exactly the image of the sanitize pass: the gfx942 operand
// form), 0x7F on gfx950 and NVIDIA (an e4m3fn NaN). 0xFF never, -0 never, +-Inf saturate to
// +-448 (0x7E / 0xFE: e4m3fn "satfinite").
struct OutputTarget {
  const char* name;
  std::uint8_t nan_code;  // the architecture's kFp8NanCode
};
const OutputTarget kOutputTargets[] = {{"gfx942", arch::kFp8NanCodeFnuz},
                                       {"gfx950", arch::kFp8NanCodeE4m3fn},
                                       {"nvidia", arch::kFp8NanCodeE4m3fn}};

TEST(Fp8ProducerCodes, EpilogueEmitsThe253CodesAndItsTargetsNanCode) {
  const float y_scales[] = {1.f, 0.01f, 3.7e5f, std::ldexp(1.f, -140), 1e30f};
  const float specials[] = {0.f, -0.f, -1e-30f, -std::ldexp(1.f, -149), std::ldexp(1.f, -149), INFINITY, -INFINITY,
                            std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                            -448.f, 448.f, -464.f, 1e38f, -1e38f};
  // The sanitize pass's image over all 256 codes: the gfx942 operand form.
  std::array<bool, 256> sanitized_form{};
  for (int c = 0; c < 256; ++c) sanitized_form[arch::e4m3fn_bytes_for_fnuz(std::uint32_t(c))] = true;
  for (const OutputTarget& t : kOutputTargets) {
    const bool fnuz = t.nan_code == arch::kFp8NanCodeFnuz;
    std::array<long, 256> emitted{};
    long bad = 0, checked = 0, nan_in = 0;
    std::string first;
    auto check = [&](float v, float ys) {
      const std::uint8_t b = vaeconv::quantize_e4m3fn(v, ys, t.nan_code);
      const float q = v / ys;
      const std::uint8_t plain = vaeconv::float_to_e4m3fn(q);
      const std::uint8_t want = q != q ? t.nan_code : (plain == 0x80 ? std::uint8_t(0x00) : plain);
      nan_in += q != q;
      ++emitted[b];
      ++checked;
      if (b != want) {
        if (first.empty()) first = std::to_string(v) + " / " + std::to_string(ys) + " -> " + hexbyte(b);
        ++bad;
      }
    };
    for (std::uint32_t bits = 0; bits < 65536; ++bits) check(vaeconv::bf16_to_float(std::uint16_t(bits)), 1.f);
    for (float ys : y_scales) {
      for (std::uint64_t u = 0; u < 0x100000000ull; u += 4099) {
        float v;
        const std::uint32_t w = std::uint32_t(u);
        std::memcpy(&v, &w, sizeof v);
        check(v, ys);
      }
      for (float v : specials) check(v, ys);
    }
    // Every fp32 NaN, both signs, every payload; and a NaN y_scale on a finite value.
    long nan_bad = 0;
    for (std::uint32_t sign = 0; sign < 2; ++sign)
      for (std::uint32_t payload = 1; payload < (1u << 23); ++payload) {
        float v;
        const std::uint32_t w = (sign << 31) | 0x7F800000u | payload;
        std::memcpy(&v, &w, sizeof v);
        nan_bad += vaeconv::quantize_e4m3fn(v, 1.f, t.nan_code) != t.nan_code;
      }
    EXPECT_EQ(nan_bad, 0) << t.name << ": an fp32 NaN did not store the target's NaN code";
    EXPECT_EQ(vaeconv::quantize_e4m3fn(1.f, vaeconv::fp8_scale_for_amax(INFINITY), t.nan_code), t.nan_code) << t.name;
    EXPECT_EQ(bad, 0) << t.name << ": " << first;
    EXPECT_GT(checked, 5 * 1000000L);
    EXPECT_GT(nan_in, 1000) << "premise: the inputs include NaNs";
    // The emitted set, exactly.
    int distinct = 0;
    for (int c = 0; c < 256; ++c) {
      const std::uint8_t b = std::uint8_t(c);
      const bool expected = arch::e4m3fn_reads_as_half_fnuz(b) || b == t.nan_code;
      EXPECT_EQ(emitted[std::size_t(c)] > 0, expected) << t.name << " " << hexbyte(b);
      if (fnuz) {
        EXPECT_EQ(emitted[std::size_t(c)] > 0, sanitized_form[std::size_t(c)]) << "gfx942 form " << hexbyte(b);
      }
      distinct += emitted[std::size_t(c)] > 0;
    }
    EXPECT_EQ(distinct, 254) << t.name;
    EXPECT_EQ(emitted[0x80] > 0, fnuz) << t.name << ": 0x80 is the NaN on gfx942 and never emitted elsewhere (-0)";
    EXPECT_EQ(emitted[0x7F] > 0, !fnuz) << t.name << ": 0x7F is the NaN on e4m3fn targets, +240 under FNUZ";
    EXPECT_EQ(emitted[0xFF], 0) << t.name;
    // Named: signed zero, NaN and the satfinite infinities.
    EXPECT_EQ(vaeconv::float_to_e4m3fn(-1e-30f), 0x80);
    EXPECT_EQ(vaeconv::quantize_e4m3fn(-1e-30f, 1.f, t.nan_code), 0x00) << t.name;
    EXPECT_EQ(vaeconv::quantize_e4m3fn(std::numeric_limits<float>::quiet_NaN(), 1.f, t.nan_code), t.nan_code);
    EXPECT_EQ(vaeconv::quantize_e4m3fn(INFINITY, 1.f, t.nan_code), 0x7E) << t.name << ": +Inf saturates to 448";
    EXPECT_EQ(vaeconv::quantize_e4m3fn(-INFINITY, 1.f, t.nan_code), 0xFE) << t.name << ": -Inf saturates to -448";
  }
  // The quantizer's rule (the default NaN byte): a NaN element stores 0x00 on every target, its
  // NaN travelling in the scale (QuantizerEmitsExactlyThe253CodesOverEveryBf16Input).
  EXPECT_EQ(vaeconv::quantize_e4m3fn(std::numeric_limits<float>::quiet_NaN(), 1.f), vaeconv::kFp8NanInScale);
  EXPECT_EQ(vaeconv::kFp8NanInScale, 0x00);
}

// Values whose bf16 encodings quantize (scale exactly 1) to small exact codes, -0 inputs and
// negatives that round to zero included: the quantizer's tensor, its 32 x 64 operand.
struct ProducerOperands {
  Bytes A, B;
  long neg_zero_inputs = 0;
};
ProducerOperands producer_operands(unsigned seed) {
  std::mt19937 rng(seed);
  const auto codes = small_exact_codes();  // includes 0x80: a -0.0f input
  std::uniform_int_distribution<std::size_t> pick(0, codes.size() - 1);
  std::bernoulli_distribution tiny(0.1);
  ProducerOperands p;
  auto value = [&]() {
    if (tiny(rng)) return -1e-30f;  // rounds to -0
    return vaeconv::e4m3fn_to_float(codes[pick(rng)]);
  };
  // A: the quantizer over 32 * 64 values and one 448 after them (amax 448: scale exactly 1).
  std::vector<std::uint16_t> x(32 * 64 + 1);
  for (std::size_t i = 0; i + 1 < x.size(); ++i) {
    const float v = value();
    p.neg_zero_inputs += v == 0.f && std::signbit(v) ? 1 : (v < 0.f && v > -1e-20f ? 1 : 0);
    x[i] = vaeconv::float_to_bf16(v);
  }
  x.back() = vaeconv::float_to_bf16(448.f);
  Bytes qa(x.size());
  if (vaeconv::quantize_fp8_host(x.data(), std::int64_t(x.size()), qa.data()) != 1.f) throw std::logic_error("scale != 1");
  p.A.assign(qa.begin(), qa.begin() + 32 * 64);
  // B: the weight packer, a T = 1 causal conv with Cin = 8 (K = 72 in a 128-byte row), Cout = 32.
  // Packed row n holds Bt[n][k] for k < 64; column 64 (tap 8) holds each row's 448 (scale 1).
  const vaeconv::ConvDesc d = vaeconv::ConvDesc::causal3x3x3(1, 1, 4, 4, 8, 32, vaeconv::DType::kFP8E4M3);
  std::vector<float> w(std::size_t(32 * 8 * 27), 0.f);
  for (int n = 0; n < 32; ++n)
    for (int k = 0; k < 72; ++k) {
      const int tap = k / 8, ci = k % 8;  // packed column k = tap * Cin + ci, tap = kh * 3 + kw
      float v = k < 64 ? value() : (k == 64 ? 448.f : 0.f);
      if (k < 64) p.neg_zero_inputs += (v == 0.f && std::signbit(v)) || (v < 0.f && v > -1e-20f);
      w[std::size_t(((n * 8 + ci) * 3 + 2) * 9 + tap)] = v;  // [Cout][Cin][kt = 2][kh][kw]
    }
  vaeconv::PackedWeightsHost packed;
  if (!vaeconv::pack_weights_fp8(d, w.data(), &packed).ok()) throw std::logic_error("packing failed");
  for (float s : packed.scales)
    if (s != 1.f) throw std::logic_error("weight scale != 1");
  p.B.assign(std::size_t(64) * 32, 0);
  for (int n = 0; n < 32; ++n)
    for (int k = 0; k < 64; ++k) p.B[std::size_t(k) * 32 + std::size_t(n)] = packed.fp8[std::size_t(n * packed.info.k_pad + k)];
  return p;
}

// The quantizer's and the packer's bytes, NOT sanitized, through the emulated gfx942 atom: bit-identical
// to gfx950 and to the exact product, although their inputs held -0 and negatives rounding to 0.
TEST(Fp8ProducerCodes, UnsanitizedProducerBytesGiveGfx942EqualsGfx950) {
  using L = lay::Mfma32x32x64Fp8;
  Knobs raw;
  raw.sanitized = false;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    const ProducerOperands p = producer_operands(seed);
    EXPECT_GT(p.neg_zero_inputs, 100) << "premise: -0 inputs present";
    for (std::uint8_t b : p.A) ASSERT_TRUE(arch::e4m3fn_reads_as_half_fnuz(b)) << "quantizer byte " << hexbyte(b);
    for (std::uint8_t b : p.B) ASSERT_TRUE(arch::e4m3fn_reads_as_half_fnuz(b)) << "packer byte " << hexbyte(b);
    std::string why;
    ASSERT_TRUE(all_partial_sums_exact<L>(p.A, p.B, &why)) << why;
    const std::vector<double> R = exact_product<L>(p.A, p.B);
    for (const StageCfg& cfg : stage_cfgs(4)) {
      const std::vector<float> D942 = run_bytes<L>(Target::Gfx942, p.A, p.B, cfg, raw);
      long bad = 0, nonzero = 0;
      for (std::size_t i = 0; i < R.size(); ++i) {
        bad += !same_result(D942[i], float(R[i]));
        nonzero += R[i] != 0.0;
      }
      EXPECT_EQ(bad, 0) << "seed " << seed << " " << cfg.name;
      EXPECT_GT(nonzero, 900);
      std::string first;
      EXPECT_EQ(cross_mismatches<L>(p.A, p.B, cfg, raw, &first), 0) << first;
    }
  }
}

// Negative control: one planted 0x80 (-0) or 0x7F (NaN) in the quantizer's bytes is read wrongly by
// the unsanitized gfx942 atom (its row: NaN instead of the value, or finite instead of NaN), and
// right once sanitized.
TEST(Fp8ProducerCodes, PlantedNegZeroOrNanIsWrongUnsanitized) {
  using L = lay::Mfma32x32x64Fp8;
  Knobs raw;
  raw.sanitized = false;
  for (std::uint8_t planted : {std::uint8_t(0x80), std::uint8_t(0x7F), std::uint8_t(0xFF)}) {
    ProducerOperands p = producer_operands(11);
    p.A[std::size_t(7) * 64 + 29] = planted;
    const std::vector<float> D950 = run_bytes<L>(Target::Gfx950, p.A, p.B, stage_cfgs(4)[1]);
    const std::vector<float> D942 = run_bytes<L>(Target::Gfx942, p.A, p.B, stage_cfgs(4)[1], raw);
    long wrong = 0;
    for (int m = 0; m < 32; ++m)
      for (int n = 0; n < 32; ++n) {
        const std::size_t i = std::size_t(m) * 32 + std::size_t(n);
        const bool differs = !same_result(D950[i], D942[i]);
        wrong += differs;
        if (m != 7) {
          EXPECT_FALSE(differs) << hexbyte(planted) << " " << m << "," << n;
        }
      }
    EXPECT_EQ(wrong, 32) << hexbyte(planted) << ": the planted row must be wrong in every column";
    EXPECT_EQ(cross_mismatches<L>(p.A, p.B, stage_cfgs(4)[1], Knobs{}, nullptr), 0) << hexbyte(planted) << " sanitized";
  }
}

// ================================================================================================
// Fp8OutputNan: a NaN an FP8-output conv stores is read as NaN by the next conv, on every target
// ================================================================================================

// The next conv's operand A: random small exact codes without -0 (a library tensor), and in each
// of three rows one byte an FP8 output stored for a NaN result (`stored`); B likewise, NaN-free.
// The atom of target t reads them as the kernels do (gfx942: the bytes as stored, unless
// kn.sanitized). Returns the wrong elements over every staging: a planted row must be NaN in
// every column, every other element the exact product.
template <class L>
long nan_readback_errors(Target t, std::uint8_t stored, const Knobs& kn, long* planted_elements, std::string* first) {
  constexpr int M = L::kM, N = L::kN, K = L::kK;
  std::vector<std::uint8_t> codes;
  for (std::uint8_t c : small_exact_codes())
    if (c != 0x80) codes.push_back(c);
  std::mt19937 rng(unsigned(stored) * 3 + unsigned(t));
  Bytes A = random_from(rng, std::size_t(M) * K, codes);
  const Bytes B = random_from(rng, std::size_t(K) * N, codes);
  const std::vector<double> R = exact_product<L>(A, B);  // for the rows without a NaN
  const int nan_rows[] = {1, M / 2 + 3, M - 1};
  std::vector<bool> is_nan_row(std::size_t(M), false);
  for (int r : nan_rows) {
    A[std::size_t(r) * K + std::size_t((5 * r + 3) % K)] = stored;
    is_nan_row[std::size_t(r)] = true;
  }
  long bad = 0;
  *planted_elements = 0;
  for (const StageCfg& cfg : stage_cfgs(L::kK / 16)) {
    const std::vector<float> D = run_bytes<L>(t, A, B, cfg, kn);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        const std::size_t i = std::size_t(m) * N + std::size_t(n);
        const bool ok = is_nan_row[std::size_t(m)] ? std::isnan(D[i]) : same_result(D[i], float(R[i]));
        *planted_elements += is_nan_row[std::size_t(m)];
        if (!ok && first && first->empty())
          *first = std::string(target_name(t)) + " " + cfg.name + " m " + std::to_string(m) + " n " + std::to_string(n) +
                   ": " + std::to_string(D[i]);
        bad += !ok;
      }
  }
  return bad;
}
long nan_readback_errors(Target t, std::uint8_t stored, const Knobs& kn, long* planted, std::string* first = nullptr) {
  return t == Target::Nvidia ? nan_readback_errors<lay::MmaM16N16K32Fp8>(t, stored, kn, planted, first)
                             : nan_readback_errors<lay::Mfma32x32x64Fp8>(t, stored, kn, planted, first);
}
Knobs as_stored() {  // the library's own tensor: gfx942 reads the bytes without a sanitize pass
  Knobs k;
  k.sanitized = false;
  return k;
}
std::uint8_t nan_code_of(Target t) { return t == Target::Gfx942 ? arch::kFp8NanCodeFnuz : arch::kFp8NanCodeE4m3fn; }

// The epilogue's byte for a NaN result (a NaN value, or a NaN y_scale) on each target, read by that
// target's atom — gfx942's FNUZ instruction on the bytes as stored, gfx950's and NVIDIA's e4m3fn
// ones — gives NaN in every column of its row, the other rows exact.
TEST(Fp8OutputNan, ReadAsNanByEveryTargetsAtom) {
  for (Target t : {Target::Gfx942, Target::Gfx950, Target::Nvidia}) {
    const std::uint8_t code = nan_code_of(t);
    const std::uint8_t from_value = vaeconv::quantize_e4m3fn(std::numeric_limits<float>::quiet_NaN(), 0.37f, code);
    const std::uint8_t from_scale = vaeconv::quantize_e4m3fn(2.5f, vaeconv::fp8_scale_for_amax(INFINITY), code);
    const float inf = INFINITY;
    const std::uint8_t from_inf = vaeconv::quantize_e4m3fn(inf - inf, 1.f, code);  // Inf - Inf: a NaN result
    EXPECT_EQ(from_value, code) << target_name(t);
    EXPECT_EQ(from_scale, code) << target_name(t);
    EXPECT_EQ(from_inf, code) << target_name(t);
    long planted = 0;
    std::string first;
    EXPECT_EQ(nan_readback_errors(t, from_value, as_stored(), &planted, &first), 0) << first;
    EXPECT_EQ(planted, (t == Target::Nvidia ? 16 : 32) * 3 * 3) << "premise: three NaN rows in every staging";
  }
}

// Negative controls: the same check fails, in every column of every planted row, for the byte
// the epilogue stored before (0x00: the NaN lost on every target), for the other targets' NaN
// code (0x7F reads as +240 under FNUZ; 0x80 is e4m3fn -0), and when a gfx942 library output is
// sent through sanitize_fp8_for_target again (it is already gfx942's operand form: 0x80 -> 0x00).
TEST(Fp8OutputNan, NegativeControls) {
  const Knobs raw = as_stored();
  for (Target t : {Target::Gfx942, Target::Gfx950, Target::Nvidia}) {
    long planted = 0;
    EXPECT_EQ(nan_readback_errors(t, vaeconv::kFp8NanInScale, raw, &planted), planted)
        << target_name(t) << ": storing a NaN as 0x00 must be caught";
    EXPECT_GT(planted, 0);
    const std::uint8_t other = t == Target::Gfx942 ? arch::kFp8NanCodeE4m3fn : arch::kFp8NanCodeFnuz;
    EXPECT_EQ(nan_readback_errors(t, other, raw, &planted), planted)
        << target_name(t) << ": the other form's NaN code " << hexbyte(other) << " must be caught";
  }
  long planted = 0;
  EXPECT_EQ(nan_readback_errors(Target::Gfx942, arch::kFp8NanCodeFnuz, Knobs{}, &planted), planted)
      << "sanitizing a gfx942 library output again turns its NaN into +0";
  EXPECT_EQ(arch::e4m3fn_bytes_for_fnuz(arch::kFp8NanCodeFnuz), 0x00u);
}

// ================================================================================================
// Fp8AtomEmulatedNegative: the checks above can fail
// ================================================================================================

TEST(Fp8AtomEmulatedNegative, SkippingSanitizeIsDetected) {
  using L = lay::Mfma32x32x64Fp8;
  Knobs no_fix;
  no_fix.sanitized = false;
  // -0 bytes (present in every special matrix, and the -0 row/column) read as FNUZ NaN.
  const SpecialData s = special_matrices(3);
  std::string first;
  const long bad = cross_mismatches<L>(s.A, s.B, stage_cfgs(4)[1], no_fix, &first);
  EXPECT_GT(bad, 0) << "raw 0x80 fed to the FNUZ instruction must be caught";
  EXPECT_FALSE(first.empty());
  // With only +0 and finite codes, unsanitized bytes agree (the pass is needed exactly for 0x80
  // and the NaNs).
  Bytes A = s.A, B = s.B;
  for (auto& x : A) x = x == 0x80 ? 0x00 : x;
  for (auto& x : B) x = x == 0x80 ? 0x00 : x;
  EXPECT_EQ(cross_mismatches<L>(A, B, stage_cfgs(4)[1], no_fix, nullptr), 0);
  // A fn NaN unsanitized reads as +-240 on gfx942: the NaN row comes out finite there.
  A[std::size_t(4) * 64 + 10] = 0x7F;
  EXPECT_EQ(cross_mismatches<L>(A, B, stage_cfgs(4)[1], no_fix, nullptr), 32);
  EXPECT_EQ(cross_mismatches<L>(A, B, stage_cfgs(4)[1], Knobs{}, nullptr), 0);
}

TEST(Fp8AtomEmulatedNegative, ForgettingX4IsDetected) {
  using L = lay::Mfma32x32x64Fp8;
  Knobs no_scale;
  no_scale.fnuz_scale = false;
  const SpecialData s = special_matrices(4);
  const long bad = cross_mismatches<L>(s.A, s.B, stage_cfgs(4)[0], no_scale, nullptr);
  long nonzero = 0;
  for (float x : run_bytes<L>(Target::Gfx950, s.A, s.B, stage_cfgs(4)[0])) nonzero += x != 0.0f;
  EXPECT_EQ(bad, nonzero) << "every nonzero element must differ by x4";
  EXPECT_GT(bad, 0);
}

TEST(Fp8AtomEmulatedNegative, OperandPlumbingSlipsAreDetected) {
  using L = lay::Mfma32x32x64Fp8;
  const auto codes = small_exact_codes();
  std::mt19937 rng(9);
  const Bytes A = random_from(rng, 32 * 64, codes), B = random_from(rng, 64 * 32, codes);
  const std::vector<double> R = exact_product<L>(A, B);
  auto mismatches = [&](Target t, const Knobs& kn) {
    const std::vector<float> D = run_bytes<L>(t, A, B, stage_cfgs(4)[2], kn);
    long bad = 0;
    for (std::size_t i = 0; i < D.size(); ++i) bad += D[i] != float(R[i]);
    return bad;
  };
  Knobs swap_parts;
  swap_parts.swap_a_parts = true;
  Knobs swap_quarters;
  swap_quarters.swap_a_quarters = true;
  EXPECT_EQ(mismatches(Target::Gfx950, Knobs{}), 0);
  EXPECT_GT(mismatches(Target::Gfx950, swap_parts), 0);
  EXPECT_GT(mismatches(Target::Gfx942, swap_parts), 0);
  EXPECT_GT(mismatches(Target::Gfx942, swap_quarters), 0);

  using N = lay::MmaM16N16K32Fp8;
  const Bytes An = random_from(rng, 16 * 32, codes), Bn = random_from(rng, 32 * 16, codes);
  const std::vector<double> Rn = exact_product<N>(An, Bn);
  Knobs swap_b;
  swap_b.nv_swap_b_halves = true;
  const std::vector<float> Dn = run_bytes<N>(Target::Nvidia, An, Bn, stage_cfgs(2)[1], swap_b);
  long bad = 0;
  for (std::size_t i = 0; i < Dn.size(); ++i) bad += Dn[i] != float(Rn[i]);
  EXPECT_GT(bad, 0);
}

// Layout slips in the helpers themselves.
struct WrongSecondChunk : lay::Mfma32x32x64Fp8 {  // A's second chunk from the other lane half
  static constexpr int a_lds_chunk(int l, int s = 0) { return s == 0 ? 2 * (l / 32) : 2 * (1 - l / 32) + 1; }
};
struct WrongAkClaimFp8 : lay::Mfma32x32x64Fp8 {  // claims the hardware's instruction k, not the library's
  static constexpr int a_k(int l, int e) { return 16 * (l / 32) + 32 * (e / 16) + e % 16; }
};
struct WrongNvBRowFp8 : lay::MmaM16N16K32Fp8 {  // B addressed like A
  static constexpr int b_lds_row(int l) { return l % 16; }
  static constexpr int b_lds_chunk(int l, int = 0) { return l / 16; }
};
struct WrongNvCColFp8 : lay::MmaM16N16K32Fp8 {  // the two n8 halves swapped
  static constexpr int c_col(int l, int r) { return 2 * (l % 4) + r % 2 + 8 * (1 - r / 4); }
};

template <class L>
long product_mismatches(Target t, int atom_chunks, unsigned seed) {
  const auto codes = small_exact_codes();
  std::mt19937 rng(seed);
  const Bytes A = random_from(rng, std::size_t(L::kM) * L::kK, codes), B = random_from(rng, std::size_t(L::kK) * L::kN, codes);
  const std::vector<double> R = exact_product<L>(A, B);
  const std::vector<float> D = run_bytes<L>(t, A, B, stage_cfgs(atom_chunks)[1]);
  long bad = 0;
  for (std::size_t i = 0; i < D.size(); ++i) bad += !same_result(D[i], float(R[i]));
  return bad;
}

TEST(Fp8AtomEmulatedNegative, LayoutSlipsAreDetected) {
  EXPECT_GT(product_mismatches<WrongSecondChunk>(Target::Gfx950, 4, 1), 0);
  EXPECT_GT(product_mismatches<WrongSecondChunk>(Target::Gfx942, 4, 1), 0);
  EXPECT_GT(claim_mismatches<WrongSecondChunk>(stage_cfgs(4)[0], nullptr), 0);
  EXPECT_EQ(product_mismatches<WrongAkClaimFp8>(Target::Gfx950, 4, 1), 0) << "claims do not enter the product";
  EXPECT_GT(claim_mismatches<WrongAkClaimFp8>(stage_cfgs(4)[0], nullptr), 0);
  EXPECT_GT(product_mismatches<WrongNvBRowFp8>(Target::Nvidia, 2, 1), 0);
  EXPECT_GT(claim_mismatches<WrongNvBRowFp8>(stage_cfgs(2)[0], nullptr), 0);
  EXPECT_GT(product_mismatches<WrongNvCColFp8>(Target::Nvidia, 2, 1), 0);
}

// ================================================================================================
// Fp8AtomEmulatedKOrder: the K order inside an instruction's operands is irrelevant
// ================================================================================================
struct NamedOrder {
  std::string name;
  emu::KOrder order;
};
std::vector<NamedOrder> fp8_k_orders(Target t) {
  if (t == Target::Gfx950)  // K = 64: two lane groups of 32 bytes
    return {{"AITER two 16-byte stripes (documented)", emu::KOrder{}},
            {"CK 32 contiguous K", emu::KOrder::same(emu::inverse_order(emu::stripe_order(2, 32)))},
            {"random 1", emu::KOrder::same(emu::random_order(64, 11))},
            {"random 2", emu::KOrder::same(emu::random_order(64, 12))}};
  return {{"8 contiguous K (documented)", emu::KOrder{}},  // K = 16: two lane groups of 8 bytes
          {"two 4-byte stripes", emu::KOrder::same(emu::stripe_order(2, 8))},
          {"random 1", emu::KOrder::same(emu::random_order(16, 11))},
          {"random 2", emu::KOrder::same(emu::random_order(16, 12))}};
}

long result_differences(const std::vector<float>& x, const std::vector<float>& y) {
  long bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) bad += !same_result(x[i], y[i]);
  return bad;
}

void expect_fp8_k_order_irrelevant(Target t) {
  using L = lay::Mfma32x32x64Fp8;
  std::vector<std::uint8_t> finite;  // every finite code, both zeros included: sums are not exact in fp32
  for (int i = 0; i < 256; ++i)
    if (!fn_nan(std::uint8_t(i))) finite.push_back(std::uint8_t(i));
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(500 + seed);
    const Bytes A = random_from(rng, 32 * 64, finite), B = random_from(rng, 64 * 32, finite);
    std::vector<float> C(32 * 32);
    std::uniform_int_distribution<int> cv(-1000, 1000);
    for (auto& x : C) x = float(cv(rng)) / 8.0f;
    for (const StageCfg& cfg : stage_cfgs(4)) {
      const std::vector<float> ref = run_bytes<L>(t, A, B, cfg, Knobs{}, C);
      for (const NamedOrder& o : fp8_k_orders(t)) {
        Knobs kn;
        kn.order = o.order;
        EXPECT_EQ(result_differences(run_bytes<L>(t, A, B, cfg, kn, C), ref), 0)
            << target_name(t) << " " << o.name << " " << cfg.name << " seed " << seed;
      }
      // Negative control: A relabelled, B not.
      Knobs a_only;
      a_only.order = emu::KOrder{emu::random_order(t == Target::Gfx950 ? 64 : 16, 13), {}};
      EXPECT_GT(result_differences(run_bytes<L>(t, A, B, cfg, a_only, C), ref), 512)
          << target_name(t) << " " << cfg.name << ": an asymmetric K order must change D";
    }
  }
}

TEST(Fp8AtomEmulatedKOrder, F8f6f4Gfx950AiterCkRandom) { expect_fp8_k_order_irrelevant(Target::Gfx950); }
TEST(Fp8AtomEmulatedKOrder, FourFnuzGfx942ContiguousStripedRandom) { expect_fp8_k_order_irrelevant(Target::Gfx942); }

// Under CK's contiguous reading the gfx950 instruction's own layout is exactly the library's view
// (fragment_layouts.hpp: A[l%32][32*(l/32) + e]): the relabelling maps AITER's k to the library k.
TEST(Fp8AtomEmulatedKOrder, CkReadingIsTheLibraryView) {
  using L = lay::Mfma32x32x64Fp8;
  const std::vector<int> ck = emu::inverse_order(emu::stripe_order(2, 32));
  for (int l = 0; l < 64; ++l)
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(ck[std::size_t(emu::hw::Mfma32x32x64F8f6f4::a(l, i).col)], L::a_k(l, i)) << l << " " << i;
      EXPECT_EQ(ck[std::size_t(emu::hw::Mfma32x32x64F8f6f4::b(l, i).row)], L::b_k(l, i)) << l << " " << i;
    }
}

}  // namespace
