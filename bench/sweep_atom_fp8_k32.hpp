// sweep_atom_fp8_k32.hpp — a candidate e4m3 atom for the CDNA model's sweep only (bench/sweep.sh
// amd-model, flag "k32"): 32 x 32 x 32 on gfx942, one 16-byte LDS chunk per lane and operand (16
// e4m3 along K), run as two v_mfma_f32_32x32x16_fp8_fp8 on the chunk's 8-byte halves. It lets an
// fp8 tile be 32 deep (32-byte LDS rows, as the bf16 BK = 16 tile), which the library's 32 x 32 x
// 64 atom (two chunks per lane) cannot. Not in the library: no emulator test pins its layout, and
// it is compiled for the model's instruction counts, never run. The library's atom would go in
// arch/cdna.hpp with its layout in arch/fragment_layouts.hpp and tests/host/test_atoms_emulated.cpp.
//
// Layout: the bf16 32 x 32 x 16 atom's with one-byte elements (lane l reads row l % 32, chunk l / 32:
// A[l % 32][16 (l / 32) + e], e = 0..15). Instruction i takes bytes 8i..8i+7, i.e. its own k' =
// 8 (l / 32) + e' is library k = 16 (l / 32) + 8i + e': one K permutation shared by A and B.
#pragma once
#include "vaeconv/api/conv.hpp"

namespace vaeconv::sweep {

struct Mfma32x32x32Fp8Layout {
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
};

struct AtomFp8K32 {
  using Layout = Mfma32x32x32Fp8Layout;
  static constexpr int kM = Layout::kM, kN = Layout::kN, kK = Layout::kK;
  using i32x4 = arch::Cdna::i32x4;
  struct FragA { i32x4 v; };
  struct FragB { i32x4 v; };
  struct FragC { arch::Cdna::f32x16 v; };
  VAECONV_DEVICE static float acc_scale() { return arch::kFnuzProductScale; }
  VAECONV_DEVICE static void load_a(FragA& a, int, const void* chunk) {
    a.v = *static_cast<const i32x4*>(chunk);
  }
  VAECONV_DEVICE static void load_b(FragB& b, int, const void* chunk) {
    b.v = *static_cast<const i32x4*>(chunk);
  }
  VAECONV_DEVICE static void mma(FragC& c, const FragA& a, const FragB& b) {
#if defined(__gfx942__)
    for (int h = 0; h < 2; ++h) {
      const long ah = (long(uint32_t(a.v[2 * h + 1])) << 32) | long(uint32_t(a.v[2 * h]));
      const long bh = (long(uint32_t(b.v[2 * h + 1])) << 32) | long(uint32_t(b.v[2 * h]));
      c.v = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(ah, bh, c.v, 0, 0, 0);
    }
#else
    (void)c; (void)a; (void)b;
#endif
  }
};

}  // namespace vaeconv::sweep
