// vaeconv/arch/cdna.hpp — the AMD CDNA half of the architecture layer (gfx942, gfx950).
//
// Same interface as nvidia.hpp: kWaveSize, AtomBf16, GlobalView / Copy. One type serves both
// targets; the few lines that differ are selected by the device pass's __gfx942__/__gfx950__
// macros (the host pass compiles empty bodies, as it must for device-only builtins).
//
// Facts used (../shared/notes/cdna.md; unverified on hardware here, pinned by the host emulator
// tests in tests/host/test_atoms_emulated.cpp):
//   * gfx950 v_mfma_f32_32x32x16_bf16 takes 8 consecutive K per lane; gfx942 has only the 32x32x8
//     bf16 form, issued twice on the two halves of the same 16-byte fragment (a legal K permutation).
//   * Buffer loads return 0 for offsets at or beyond num_records: an invalid lane's offset is set to
//     0x80000000 (num_records is kept <= 0x7fffffff), so padding taps cost no branch.
#pragma once
#include <cstdint>
#include <type_traits>

// The one guard of the AMD device passes. Every matrix instruction below is selected by
// __gfx942__ / __gfx950__; a device pass for any other target would take the host pass's empty
// branches and build kernels that write bias-only outputs without a sound. So such a pass is a
// compile error (generic targets such as gfx9-4-generic included: their MFMA set is not gfx950's).
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__ && !defined(__gfx942__) && \
    !defined(__gfx950__)
#error "vaeconv: AMD device code is built for gfx942 (MI300X) and gfx950 (MI350X/MI355X) only; this --offload-arch is not one of them (set CMAKE_HIP_ARCHITECTURES / --offload-arch to gfx942 and/or gfx950)"
#endif

#include "vaeconv/arch/fp8_fnuz.hpp"
#include "vaeconv/arch/runtime.hpp"  // uint4 and the HIP builtins
#include "vaeconv/arch/fragment_layouts.hpp"
#include "vaeconv/core/config.hpp"
#include "vaeconv/core/numerics_bf16.hpp"

namespace vaeconv::arch {

struct Cdna {
  static constexpr int kWaveSize = 64;
  static constexpr const char* kName = "cdna-gfx942/gfx950";
  static constexpr bool kStaticLds = true;  // LDS sized at compile time (<= 64 KiB on gfx942)
  // A kernel on this arch type runs on both targets, so its LDS fits gfx942's 64 KiB
  // (kernel/block_gemm.hpp's run_with_lds asserts it); kBodyOnThisTarget: see CdnaGfx950Only.
  static constexpr int kMaxLdsBytes = 64 * 1024;
  static constexpr bool kBodyOnThisTarget = true;
  static constexpr bool kBulkStore = false;  // no LDS-to-global copy engine (arch/nvidia.hpp)
#if defined(__gfx942__)
  static constexpr uint8_t kFp8NanCode = kFp8NanCodeFnuz;  // the NaN an FP8 output stores (fp8_fnuz.hpp)
#else
  static constexpr uint8_t kFp8NanCode = kFp8NanCodeE4m3fn;
#endif

  using i32x4 = int __attribute__((ext_vector_type(4)));
  using f32x16 = float __attribute__((ext_vector_type(16)));

  // --- Global -> LDS copy with zero fill (buffer loads) ------------------------------------------
  static constexpr uint32_t kOutOfRange = 0x80000000u;  // >= any num_records we build
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
  struct GlobalView {
    __amdgpu_buffer_rsrc_t rsrc;
  };
  // CDNA buffer descriptor word 3 (raw buffer, 32-bit dwords): the value CK uses on gfx9 CDNA.
  static constexpr int kRsrcWord3 = 0x00020000;
  VAECONV_DEVICE static GlobalView make_view(const void* base, uint32_t bytes) {
    const uint32_t n = bytes < kOutOfRange ? bytes : kOutOfRange - 1;
    return {__builtin_amdgcn_make_buffer_rsrc(const_cast<void*>(base), short(0), int(n),
                                              kRsrcWord3)};
  }
#else
  struct GlobalView {
    const void* base;
  };
  VAECONV_DEVICE static GlobalView make_view(const void* base, uint32_t) { return {base}; }
#endif

  // Loads are staged in registers and written to LDS later (flush), so a pipeline keeps N
  // 16-byte chunks per thread in flight while it computes on LDS.
  template <int N>
  struct Slot {
    i32x4 v[N];
  };

  template <int N>
  VAECONV_DEVICE static void load(Slot<N>& s, int i, void*, GlobalView view, uint32_t offset,
                                  bool valid) {
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
    s.v[i] = __builtin_amdgcn_raw_buffer_load_b128(view.rsrc, valid ? offset : kOutOfRange, 0, 0);
#else
    (void)s; (void)i; (void)view; (void)offset; (void)valid;
#endif
  }
  // Operand bytes are stored to LDS as loaded, on every target and for both element widths: FP8
  // bytes fed to gfx942's FNUZ instructions hold no 0x80 / 0x7F / 0xFF (arch/fp8_fnuz.hpp says
  // who guarantees it), so the main loop rewrites nothing.
  template <int kElemBytes, int N>
  VAECONV_DEVICE static void flush(Slot<N>& s, int i, void* lds_dst) {
    *static_cast<i32x4*>(lds_dst) = s.v[i];
  }
  template <int kElemBytes>
  VAECONV_DEVICE static void store_lds(void* lds_dst, uint4 v) {
    *static_cast<i32x4*>(lds_dst) = i32x4{int(v.x), int(v.y), int(v.z), int(v.w)};
  }
  VAECONV_DEVICE static void commit() {}
  template <int Pending>
  VAECONV_DEVICE static void wait() {}  // s_waitcnt is inserted where the staged data is used
  // Waits until at most `Pending` of this wave's vector memory instructions are outstanding
  // (s_waitcnt vmcnt; they retire in issue order). The builtin, not inline asm: the compiler's
  // own wait insertion reads it, so its count of pending loads starts again from it.
  template <int Pending>
  VAECONV_DEVICE static void wait_loads() {
    static_assert(Pending >= 0 && Pending < 64, "gfx9 vmcnt holds 0 .. 63");
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
    // gfx9 s_waitcnt: vmcnt bits 3:0 and 15:14, expcnt 6:4 (7: no wait), lgkmcnt 11:8 (15).
    __builtin_amdgcn_s_waitcnt((Pending & 0xF) | (0x7 << 4) | (0xF << 8) | ((Pending >> 4) << 14));
#endif
  }

  // The compiler's instruction scheduler moves nothing across this point (its waits are placed
  // after scheduling: a flush's ds_write hoisted into the previous tile's MFMAs takes its vmcnt
  // wait along, and the load then has less work to land under).
  VAECONV_DEVICE static void schedule_fence() {
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
    __builtin_amdgcn_sched_barrier(0);
#endif
  }

  // Whether any / every active lane of the wave holds b, as a wave-uniform answer (a ballot in
  // scalar registers). A copy from one of two views per lane (kernel/cached_frames.hpp:
  // copy_a_either) picks the view once for the wave (uniform, so no waterfall loop), and each row
  // is one load into its staging register that stays in flight until the flush.
  VAECONV_DEVICE static bool wave_any(bool b) {
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
    return __builtin_amdgcn_ballot_w64(b) != 0;
#else
    return b;
#endif
  }
  VAECONV_DEVICE static bool wave_all(bool b) {
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
    return __builtin_amdgcn_ballot_w64(!b) == 0;
#else
    return b;
#endif
  }

  // v, the same in every lane of the wave, in a scalar register (s_readfirstlane).
  VAECONV_DEVICE static int wave_uniform(int v) {
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
    return __builtin_amdgcn_readfirstlane(v);
#else
    return v;
#endif
  }

  // v of the lane whose index is this lane's XOR lane_mask, within the 64-lane wave
  // (ds_bpermute_b32: a crossbar move, no LDS memory, lgkmcnt wait before use). Groups of up to 32
  // aligned lanes reduce with it exactly as on a 32-lane warp (kernel/rms_norm_kernel.hpp).
  VAECONV_DEVICE static float shuffle_xor(float v, int lane_mask) {
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__
    return __shfl_xor(v, lane_mask);
#else
    (void)lane_mask;
    return v;
#endif
  }

  // --- Epilogue rounding: two floats to bf16, lo in bits 0-15 -----------------------------------
  // gfx950: v_cvt_pk_bf16_f32, one instruction for the pair (the integer RNE costs about six
  // VALU per value). It is what LLVM selects for IR `fptrunc float to bfloat`, whose semantics are
  // round to nearest even; it rounds per the wave's MODE, which the kernels leave at their
  // descriptor's defaults: RNE with subnormals kept (.amdhsa_float_round_mode_32 0,
  // .amdhsa_float_denorm_mode_32 3, .amdhsa_float_denorm_mode_16_64 3: cmake/asm_checks.cmake's
  // rule fp-mode asserts all three on every kernel, and that none writes MODE). So every non-NaN input gives float_to_bf16's bits and a NaN stays a NaN: the
  // contract test_pack_bf16_gpu.cpp checks on the device, as for NVIDIA's cvt.rn.bf16x2.
  // gfx942 has no such instruction: the shared integer RNE (core/numerics_bf16.hpp).
  VAECONV_DEVICE static uint32_t pack_bf16x2(float lo, float hi) {
#if defined(__gfx950__)
    using f32x2 = float __attribute__((ext_vector_type(2)));
    using bf16x2 = __bf16 __attribute__((ext_vector_type(2)));
    return __builtin_bit_cast(uint32_t, __builtin_convertvector(f32x2{lo, hi}, bf16x2));
#else
    return uint32_t(float_to_bf16(lo)) | (uint32_t(float_to_bf16(hi)) << 16);
#endif
  }

  // --- Matrix atoms --------------------------------------------------------------------------------
  // One 16-byte LDS chunk per lane per operand. gfx950 has the 8-K-per-lane instructions; gfx942
  // only the 4-K-per-lane ones, issued twice on the two halves of the same chunk (a K permutation
  // applied to A and B alike; fragment_layouts.hpp explains, the emulator tests pin it).
  using bf16x8 = __bf16 __attribute__((ext_vector_type(8)));
  using i16x4 = short __attribute__((ext_vector_type(4)));
  using i32x2 = int __attribute__((ext_vector_type(2)));
  using f32x4 = float __attribute__((ext_vector_type(4)));
  struct Frag16B { i32x4 v; };
  VAECONV_DEVICE static void load_chunk(Frag16B& f, const void* chunk) {
    f.v = *static_cast<const i32x4*>(chunk);
  }
  VAECONV_DEVICE static i16x4 lo(const Frag16B& f) {
    return __builtin_bit_cast(i16x4, i32x2{f.v[0], f.v[1]});
  }
  VAECONV_DEVICE static i16x4 hi(const Frag16B& f) {
    return __builtin_bit_cast(i16x4, i32x2{f.v[2], f.v[3]});
  }

  // The bf16 atoms: 32x32x16 (the default, 16 fp32 accumulators per lane) and 16x16x32 (narrow
  // Cout tiles, 4 per lane). Both read one 16-byte LDS chunk per operand and lane; gfx942 has no
  // K = 16/32 bf16 instruction, so it runs the half-K one twice on the chunk's two halves.
  template <int M>
  struct AtomBf16Of {
    static_assert(M == 32 || M == 16, "the 32x32x16 and 16x16x32 bf16 MFMAs");
    using Layout = typename std::conditional<M == 32, layout::Mfma32x32x16Bf16,
                                             layout::Mfma16x16x32Bf16>::type;
    static constexpr int kM = Layout::kM, kN = Layout::kN, kK = Layout::kK;
    using FragA = Frag16B;
    using FragB = Frag16B;
    struct FragC { typename std::conditional<M == 32, f32x16, f32x4>::type v; };
    VAECONV_DEVICE static float acc_scale() { return 1.f; }
    VAECONV_DEVICE static void load_a(FragA& a, int, const void* chunk) { load_chunk(a, chunk); }
    VAECONV_DEVICE static void load_b(FragB& b, int, const void* chunk) { load_chunk(b, chunk); }
    VAECONV_DEVICE static void mma(FragC& c, const FragA& a, const FragB& b) {
#if defined(__gfx950__)
      const bf16x8 a8 = __builtin_bit_cast(bf16x8, a.v), b8 = __builtin_bit_cast(bf16x8, b.v);
      if constexpr (M == 32) c.v = __builtin_amdgcn_mfma_f32_32x32x16_bf16(a8, b8, c.v, 0, 0, 0);
      else c.v = __builtin_amdgcn_mfma_f32_16x16x32_bf16(a8, b8, c.v, 0, 0, 0);
#elif defined(__gfx942__)
      if constexpr (M == 32) {
        c.v = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(lo(a), lo(b), c.v, 0, 0, 0);
        c.v = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(hi(a), hi(b), c.v, 0, 0, 0);
      } else {
        c.v = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(lo(a), lo(b), c.v, 0, 0, 0);
        c.v = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(hi(a), hi(b), c.v, 0, 0, 0);
      }
#else  // the host pass (a device pass is gfx942 or gfx950: the guard at the top)
      (void)c; (void)a; (void)b;
#endif
    }
  };
  using AtomBf16 = AtomBf16Of<32>;
  using AtomBf16Narrow = AtomBf16Of<16>;

  // What turns an e4m3 atom's accumulators into the true sum: gfx942 reads the bytes as FNUZ, whose
  // products are a quarter of e4m3fn's (arch/fp8_fnuz.hpp), gfx950 as e4m3fn itself.
  VAECONV_DEVICE static float fp8_acc_scale() {
#if defined(__gfx942__)
    return kFnuzProductScale;
#else
    return 1.f;
#endif
  }

  // 32x32x64 e4m3: two adjacent 16-byte chunks per lane (fragment_layouts.hpp: Mfma32x32x64Fp8).
  // gfx950: one v_mfma_f32_32x32x64_f8f6f4 with literal unit scales (the compiler then emits the
  // unscaled form). gfx942: four v_mfma_f32_32x32x16_fp8_fp8 on the lane's 8-byte quarters; the
  // bytes hold no 0x80 / NaN code (arch/fp8_fnuz.hpp), so each product reads as a quarter.
  struct AtomFp8 {
    using Layout = layout::Mfma32x32x64Fp8;
    static constexpr int kM = Layout::kM, kN = Layout::kN, kK = Layout::kK;
    using i32x8 = int __attribute__((ext_vector_type(8)));
    struct FragA { i32x4 v[2]; };
    struct FragB { i32x4 v[2]; };
    struct FragC { f32x16 v; };
    VAECONV_DEVICE static float acc_scale() { return fp8_acc_scale(); }
    VAECONV_DEVICE static void load_a(FragA& a, int part, const void* chunk) {
      a.v[part] = *static_cast<const i32x4*>(chunk);
    }
    VAECONV_DEVICE static void load_b(FragB& b, int part, const void* chunk) {
      b.v[part] = *static_cast<const i32x4*>(chunk);
    }
    VAECONV_DEVICE static void mma(FragC& c, const FragA& a, const FragB& b) {
#if defined(__gfx950__)
      const i32x8 a8 = {a.v[0][0], a.v[0][1], a.v[0][2], a.v[0][3],
                        a.v[1][0], a.v[1][1], a.v[1][2], a.v[1][3]};
      const i32x8 b8 = {b.v[0][0], b.v[0][1], b.v[0][2], b.v[0][3],
                        b.v[1][0], b.v[1][1], b.v[1][2], b.v[1][3]};
      // atype = btype = 0 (E4M3); opsel and E8M0 scales 0: the unscaled instruction.
      c.v = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a8, b8, c.v, 0, 0, 0, 0, 0, 0);
#elif defined(__gfx942__)
      VAECONV_UNROLL
      for (int q = 0; q < 4; ++q) {
        const long aq = (long(uint32_t(a.v[q / 2][2 * (q % 2) + 1])) << 32) |
                        long(uint32_t(a.v[q / 2][2 * (q % 2)]));
        const long bq = (long(uint32_t(b.v[q / 2][2 * (q % 2) + 1])) << 32) |
                        long(uint32_t(b.v[q / 2][2 * (q % 2)]));
        c.v = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(aq, bq, c.v, 0, 0, 0);
      }
#else  // the host pass (a device pass is gfx942 or gfx950: the guard at the top)
      (void)c; (void)a; (void)b;
#endif
    }
  };
  // 32x32x32 e4m3, gfx942's fp8 atom for 32-deep K tiles: ONE 16-byte chunk per lane and operand
  // (fragment_layouts.hpp: Mfma32x32x32Fp8), run as two v_mfma_f32_32x32x16_fp8_fp8 on the chunk's
  // 8-byte halves (FNUZ, the x4 product scale of AtomFp8: arch/fp8_fnuz.hpp). Only gfx942's table
  // set holds it; gfx950's set keeps AtomFp8 (f8f6f4). A fat binary still compiles gfx942's kernels
  // for gfx950, where this atom is never launched: that pass runs the same instruction pair, which
  // gfx950 has and reads as OCP e4m3fn (unit scale), so its body is the same product.
  struct AtomFp8K32 {
    using Layout = layout::Mfma32x32x32Fp8;
    static constexpr int kM = Layout::kM, kN = Layout::kN, kK = Layout::kK;
    using FragA = Frag16B;
    using FragB = Frag16B;
    struct FragC { f32x16 v; };
    VAECONV_DEVICE static float acc_scale() { return fp8_acc_scale(); }
    VAECONV_DEVICE static void load_a(FragA& a, int, const void* chunk) { load_chunk(a, chunk); }
    VAECONV_DEVICE static void load_b(FragB& b, int, const void* chunk) { load_chunk(b, chunk); }
    VAECONV_DEVICE static void mma(FragC& c, const FragA& a, const FragB& b) {
#if defined(__gfx942__) || defined(__gfx950__)
      VAECONV_UNROLL
      for (int h = 0; h < 2; ++h) {
        const long ah = (long(uint32_t(a.v[2 * h + 1])) << 32) | long(uint32_t(a.v[2 * h]));
        const long bh = (long(uint32_t(b.v[2 * h + 1])) << 32) | long(uint32_t(b.v[2 * h]));
        c.v = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(ah, bh, c.v, 0, 0, 0);
      }
#else  // the host pass (a device pass is gfx942 or gfx950: the guard at the top)
      (void)c; (void)a; (void)b;
#endif
    }
  };
  // The 16x16x128 f8f6f4 lane layout is not documented where we could check it: narrow FP8 tiles
  // use the 32x32x64 atom on AMD.
  using AtomFp8Narrow = AtomFp8;
};

// The arch type of a gfx950 table entry (kernel/tile_table.hpp): the same atoms and copies as
// Cdna, with gfx950's 160 KiB of LDS. A fat binary also compiles such a kernel for gfx942, where
// it may not fit: its gfx942 device pass is a body that traps (run_with_lds), never a silently
// wrong kernel; the gfx942 table set never holds it, so conv_forward never launches it there.
// The asm checks know such a kernel by this name in its symbol (cmake/asm_checks.cmake,
// rule not-for-target: on gfx942 its body is s_trap and s_endpgm only).
struct CdnaGfx950Only : Cdna {
  static constexpr int kMaxLdsBytes = 160 * 1024;
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__ && defined(__gfx942__)
  static constexpr bool kBodyOnThisTarget = false;
#endif
};

}  // namespace vaeconv::arch
