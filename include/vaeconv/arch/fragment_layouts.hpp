// vaeconv/arch/fragment_layouts.hpp — register layouts of every matrix atom, as constexpr helpers.
//
// An atom computes C[kM x kN] += A[kM x kK] * B[kK x kN] with one wave (AMD, 64 lanes) or one
// warp (NVIDIA, 32 lanes). Operands are staged in shared memory K-contiguous: A as [m][k] and B as
// its transpose Bt[n][k] (the packed weight layout), in rows of 16-byte chunks (8 bf16). Each
// layout below says two things, and both are host-callable so tests/emu can check them:
//
//   1. where lane l reads its operand from LDS: the row and the 16-byte chunk(s) of the atom's
//      tile (a_lds_row/a_lds_chunk, b_lds_row/b_lds_chunk; chunk s of kLdsChunks), and
//   2. what element e of the lane's fragment then holds: A[a_row(l,e)][a_k(l,e)],
//      B[b_k(l,e)][b_col(l,e)], and accumulator register r holds C[c_row(l,r)][c_col(l,r)].
//
// (2) is the hardware's contract (AMD matrix instruction calculator / CDNA ISA; PTX ISA for
// mma.sync and ldmatrix); (1) is the library's choice. tests/host/test_atoms_emulated.cpp feeds
// (1) through an emulator written from (2)'s documentation and checks the products.
#pragma once
#include "vaeconv/core/config.hpp"

namespace vaeconv::layout {

// --- AMD CDNA (wave64) ----------------------------------------------------------------------------
// gfx950 v_mfma_f32_32x32x16_bf16: lane l holds A[l%32][8*(l/32)+e], e = 0..7 — exactly one 16-byte
// LDS chunk per lane. B mirrors A with n in place of m. C register r: row 8*(r/4) + 4*(l/32) + r%4,
// column l%32.
//
// gfx942 has only v_mfma_f32_32x32x8_bf16 (4 bf16 per lane: A[l%32][4*(l/32)+e]). Any permutation
// of K is legal when A and B use the same one, so gfx942 reads the same 16-byte chunk and issues
// two instructions, the first on elements 0..3 and the second on 4..7: instruction i sees
// library k = 8*(l/32) + 4*i + e' as its own k' = 4*(l/32) + e'. The layout the library sees is
// therefore identical on both targets, which is what lets one LDS layout serve both.
struct Mfma32x32x16Bf16 {
  static constexpr int kM = 32, kN = 32, kK = 16, kLanes = 64;
  static constexpr int kAElems = 8, kBElems = 8, kCElems = 16, kLdsChunks = 1, kElemBytes = 2;
  VAECONV_HD static constexpr int a_lds_row(int l) { return l % 32; }
  VAECONV_HD static constexpr int a_lds_chunk(int l, int = 0) { return l / 32; }
  VAECONV_HD static constexpr int b_lds_row(int l) { return l % 32; }
  VAECONV_HD static constexpr int b_lds_chunk(int l, int = 0) { return l / 32; }
  VAECONV_HD static constexpr int a_row(int l, int) { return l % 32; }
  VAECONV_HD static constexpr int a_k(int l, int e) { return 8 * (l / 32) + e; }
  VAECONV_HD static constexpr int b_k(int l, int e) { return 8 * (l / 32) + e; }
  VAECONV_HD static constexpr int b_col(int l, int) { return l % 32; }
  VAECONV_HD static constexpr int c_row(int l, int r) { return 8 * (r / 4) + 4 * (l / 32) + r % 4; }
  VAECONV_HD static constexpr int c_col(int l, int) { return l % 32; }
};

// gfx950 v_mfma_f32_16x16x32_bf16: A[l%16][8*(l/16)+e]; C register r: row 4*(l/16)+r, column l%16.
// gfx942 composes it from two v_mfma_f32_16x16x16_bf16 (A[l%16][4*(l/16)+e]) as above.
struct Mfma16x16x32Bf16 {
  static constexpr int kM = 16, kN = 16, kK = 32, kLanes = 64;
  static constexpr int kAElems = 8, kBElems = 8, kCElems = 4, kLdsChunks = 1, kElemBytes = 2;
  VAECONV_HD static constexpr int a_lds_row(int l) { return l % 16; }
  VAECONV_HD static constexpr int a_lds_chunk(int l, int = 0) { return l / 16; }
  VAECONV_HD static constexpr int b_lds_row(int l) { return l % 16; }
  VAECONV_HD static constexpr int b_lds_chunk(int l, int = 0) { return l / 16; }
  VAECONV_HD static constexpr int a_row(int l, int) { return l % 16; }
  VAECONV_HD static constexpr int a_k(int l, int e) { return 8 * (l / 16) + e; }
  VAECONV_HD static constexpr int b_k(int l, int e) { return 8 * (l / 16) + e; }
  VAECONV_HD static constexpr int b_col(int l, int) { return l % 16; }
  VAECONV_HD static constexpr int c_row(int l, int r) { return 4 * (l / 16) + r; }
  VAECONV_HD static constexpr int c_col(int l, int) { return l % 16; }
};

// --- NVIDIA (warp32), mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 ----------------------
// The atom is m16 n16 k16: two mma.sync on the two n8 halves, so that B comes in with one
// ldmatrix.x4 like A. Write g = l/4 (the "group") and t = l%4 (thread in group).
//
// A (16x16) by ldmatrix.x4: lanes 8j..8j+7 give the row addresses of 8x8 matrix j; matrix j is
// rows 8*(j%2).., k-chunk j/2, so lane l points at row l%16, chunk l/16. Thread l then holds, per
// matrix j, row g, columns 2t and 2t+1: element e = 2j + (0|1) is A[g + 8*(j%2)][2t + e%2 + 8*(j/2)],
// which is the PTX fragment layout of mma.m16n8k16's A (a0..a7).
// B (Bt[n][k], 16 n x 16 k) by ldmatrix.x4 (non-transposed): matrix j is n-rows 8*(j/2).., k-chunk
// j%2, so lane l points at n-row (l%8) + 8*(l/16), chunk (l/8)%2. Thread l holds per matrix j
// Bt[8*(j/2) + g][8*(j%2) + 2t + (0|1)], i.e. element e: B[2t + e%2 + 8*((e/2)%2)][g + 8*(e/4)] —
// b0..b3 of the first n8 mma, then b0..b3 of the second.
// C: register r of the pair of mma outputs: row g + 8*((r/2)%2), column 2t + r%2 + 8*(r/4).
struct MmaM16N16K16Bf16 {
  static constexpr int kM = 16, kN = 16, kK = 16, kLanes = 32;
  static constexpr int kAElems = 8, kBElems = 8, kCElems = 8, kLdsChunks = 1, kElemBytes = 2;
  VAECONV_HD static constexpr int a_lds_row(int l) { return l % 16; }
  VAECONV_HD static constexpr int a_lds_chunk(int l, int = 0) { return l / 16; }
  VAECONV_HD static constexpr int b_lds_row(int l) { return l % 8 + 8 * (l / 16); }
  VAECONV_HD static constexpr int b_lds_chunk(int l, int = 0) { return (l / 8) % 2; }
  VAECONV_HD static constexpr int a_row(int l, int e) { return l / 4 + 8 * ((e / 2) % 2); }
  VAECONV_HD static constexpr int a_k(int l, int e) { return 2 * (l % 4) + e % 2 + 8 * (e / 4); }
  VAECONV_HD static constexpr int b_k(int l, int e) { return 2 * (l % 4) + e % 2 + 8 * ((e / 2) % 2); }
  VAECONV_HD static constexpr int b_col(int l, int e) { return l / 4 + 8 * (e / 4); }
  VAECONV_HD static constexpr int c_row(int l, int r) { return l / 4 + 8 * ((r / 2) % 2); }
  VAECONV_HD static constexpr int c_col(int l, int r) { return 2 * (l % 4) + r % 2 + 8 * (r / 4); }
};

// --- FP8 (e4m3) atoms: 16 elements per 16-byte chunk ---------------------------------------------
// gfx950 v_mfma_f32_32x32x64_f8f6f4 (e4m3 operands, unit scales): lane l holds 32 bytes, which the
// instruction reads as A[l%32][16*(l/32) + 32*s + e] for its two 16-byte halves s = 0, 1. The
// library instead reads two ADJACENT chunks, 2*(l/32) and 2*(l/32) + 1, and hands them over as
// halves 0 and 1: library chunk 2h + s plays instruction chunk h + 2s. That maps the four K chunks
// onto themselves one-to-one, for A and B alike, so the product is unchanged; the library's view
// is A[l%32][32*(l/32) + e], e = 0..31.
// gfx942 composes the same atom from four v_mfma_f32_32x32x16_fp8_fp8 (8 bytes per lane each:
// A[l%32][8*(l/32) + e']), instruction i taking bytes 8i..8i+7 of the lane's 32 — again one K
// permutation shared by A and B. (gfx942 reads the bytes as FNUZ: see arch/fp8_fnuz.hpp.)
struct Mfma32x32x64Fp8 {
  static constexpr int kM = 32, kN = 32, kK = 64, kLanes = 64;
  static constexpr int kAElems = 32, kBElems = 32, kCElems = 16, kLdsChunks = 2, kElemBytes = 1;
  VAECONV_HD static constexpr int a_lds_row(int l) { return l % 32; }
  VAECONV_HD static constexpr int a_lds_chunk(int l, int s = 0) { return 2 * (l / 32) + s; }
  VAECONV_HD static constexpr int b_lds_row(int l) { return l % 32; }
  VAECONV_HD static constexpr int b_lds_chunk(int l, int s = 0) { return 2 * (l / 32) + s; }
  VAECONV_HD static constexpr int a_row(int l, int) { return l % 32; }
  VAECONV_HD static constexpr int a_k(int l, int e) { return 32 * (l / 32) + e; }
  VAECONV_HD static constexpr int b_k(int l, int e) { return 32 * (l / 32) + e; }
  VAECONV_HD static constexpr int b_col(int l, int) { return l % 32; }
  VAECONV_HD static constexpr int c_row(int l, int r) { return 8 * (r / 4) + 4 * (l / 32) + r % 4; }
  VAECONV_HD static constexpr int c_col(int l, int) { return l % 32; }
};

// gfx942 32x32x32 e4m3 (the K-32 atom; arch/cdna.hpp AtomFp8K32): ONE 16-byte LDS chunk per lane
// and operand, so an fp8 K tile may be 32 deep (32-byte LDS rows, as the bf16 BK = 16 tile), which
// the two-chunk 32x32x64 atom above cannot. Lane l reads row l%32, chunk l/32: the bf16 32x32x16
// layout with one-byte elements, A[l%32][16*(l/32) + e], e = 0..15. It runs as two
// v_mfma_f32_32x32x16_fp8_fp8 (8 bytes per lane each: A[l%32][8*(l/32) + e'], cdna.md), the first
// on bytes 0..7 of the chunk, the second on 8..15: instruction i sees library k = 16*(l/32) + 8*i +
// e' as its own k' = 8*(l/32) + e', a K permutation that depends on k alone and is shared by A and
// B, so the product is unchanged. C: the 32x32 C layout of every 32x32 MFMA.
struct Mfma32x32x32Fp8 {
  static constexpr int kM = 32, kN = 32, kK = 32, kLanes = 64;
  static constexpr int kAElems = 16, kBElems = 16, kCElems = 16, kLdsChunks = 1, kElemBytes = 1;
  VAECONV_HD static constexpr int a_lds_row(int l) { return l % 32; }
  VAECONV_HD static constexpr int a_lds_chunk(int l, int = 0) { return l / 32; }
  VAECONV_HD static constexpr int b_lds_row(int l) { return l % 32; }
  VAECONV_HD static constexpr int b_lds_chunk(int l, int = 0) { return l / 32; }
  VAECONV_HD static constexpr int a_row(int l, int) { return l % 32; }
  VAECONV_HD static constexpr int a_k(int l, int e) { return 16 * (l / 32) + e; }
  VAECONV_HD static constexpr int b_k(int l, int e) { return 16 * (l / 32) + e; }
  VAECONV_HD static constexpr int b_col(int l, int) { return l % 32; }
  VAECONV_HD static constexpr int c_row(int l, int r) { return 8 * (r / 4) + 4 * (l / 32) + r % 4; }
  VAECONV_HD static constexpr int c_col(int l, int) { return l % 32; }
  // The instruction (0 or 1) that consumes library element e of a lane's chunk, and the
  // instruction's own K of it (cdna.md: 8 consecutive K per lane group of 32).
  VAECONV_HD static constexpr int inst_of(int e) { return e / 8; }
  VAECONV_HD static constexpr int inst_k(int l, int e) { return 8 * (l / 32) + e % 8; }
};

// NVIDIA mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32, two of them as an m16 n16 k32
// atom. ldmatrix moves 16-byte rows whatever they hold, so the addressing is the bf16 atom's; each
// 32-bit register now holds 4 fp8 of one row: register j of A is row g + 8*(j%2), k = 16*(j/2) +
// 4t + (0..3) (PTX: a0..a15), of B n = g + 8*(j/2), k = 16*(j%2) + 4t + (0..3).
struct MmaM16N16K32Fp8 {
  static constexpr int kM = 16, kN = 16, kK = 32, kLanes = 32;
  static constexpr int kAElems = 16, kBElems = 16, kCElems = 8, kLdsChunks = 1, kElemBytes = 1;
  VAECONV_HD static constexpr int a_lds_row(int l) { return l % 16; }
  VAECONV_HD static constexpr int a_lds_chunk(int l, int = 0) { return l / 16; }
  VAECONV_HD static constexpr int b_lds_row(int l) { return l % 8 + 8 * (l / 16); }
  VAECONV_HD static constexpr int b_lds_chunk(int l, int = 0) { return (l / 8) % 2; }
  VAECONV_HD static constexpr int a_row(int l, int e) { return l / 4 + 8 * ((e / 4) % 2); }
  VAECONV_HD static constexpr int a_k(int l, int e) { return 16 * (e / 8) + 4 * (l % 4) + e % 4; }
  VAECONV_HD static constexpr int b_k(int l, int e) { return 16 * ((e / 4) % 2) + 4 * (l % 4) + e % 4; }
  VAECONV_HD static constexpr int b_col(int l, int e) { return l / 4 + 8 * (e / 8); }
  VAECONV_HD static constexpr int c_row(int l, int r) { return l / 4 + 8 * ((r / 2) % 2); }
  VAECONV_HD static constexpr int c_col(int l, int r) { return 2 * (l % 4) + r % 2 + 8 * (r / 4); }
};

}  // namespace vaeconv::layout
