// vaeconv/arch/nvidia.hpp — the NVIDIA half of the architecture layer (sm_80 and later).
//
// The architecture layer is the only target-specific code in vaeconv. It answers three things,
// with the same names on every target (see cdna.hpp for the AMD half):
//   * kWaveSize                       lanes of one warp/wave;
//   * AtomBf16                        a matrix atom: LDS -> fragments -> C += A*B, with its Layout
//                                     (sm_90a adds warpgroup atoms that read LDS themselves);
//   * GlobalView / Copy               a 16-byte global -> LDS copy that writes zeros when the
//                                     source is out of bounds (padding taps, tile tails).
// Everything else (gather, pipeline, epilogue, dispatch) is shared code.
#pragma once
#include <cstdint>

#include "vaeconv/arch/fp8_fnuz.hpp"  // kFp8NanCodeE4m3fn
#include "vaeconv/arch/fragment_layouts.hpp"
#include "vaeconv/arch/nvidia_wgmma.hpp"
#include "vaeconv/arch/runtime.hpp"  // uint4, threadIdx, the CUDA builtins
#include "vaeconv/core/config.hpp"
#include "vaeconv/core/numerics_bf16.hpp"

namespace vaeconv::arch {

// Two m16n8 mma.sync on the two n8 halves of an m16n16 atom: A (4 registers) is shared, B's
// registers 0-1 feed the first and 2-3 the second, C's floats 0-3 and 4-7 accumulate them.
#define VAECONV_MMA_SYNC_PAIR(INSTR)                                                              \
  VAECONV_UNROLL for (int h = 0; h < 2; ++h) {                                                   \
    asm volatile(INSTR " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"               \
                 : "+f"(c.v[4 * h + 0]), "+f"(c.v[4 * h + 1]), "+f"(c.v[4 * h + 2]),            \
                   "+f"(c.v[4 * h + 3])                                                         \
                 : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[2 * h]),         \
                   "r"(b.r[2 * h + 1]));                                                        \
  }

struct Nvidia {
  static constexpr int kWaveSize = 32;
  static constexpr const char* kName = "nvidia-sm80+";
  static constexpr bool kStaticLds = false;  // dynamic shared memory: tiles may exceed 48 KiB
  static constexpr uint8_t kFp8NanCode = kFp8NanCodeE4m3fn;  // the NaN an FP8 output stores

  VAECONV_DEVICE static uint32_t smem_u32(const void* p) {
#if defined(__CUDA_ARCH__)
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
#else
    (void)p;
    return 0;
#endif
  }

  // AMD's fence of its instruction scheduler (arch/cdna.hpp); nvcc has none to place, and ptxas
  // schedules what it is given.
  VAECONV_DEVICE static void schedule_fence() {}

  // v, the same in every lane of the wave, known to the compiler to be so: a value read from lane
  // 0 lives in a uniform register, so addresses built from it (wgmma descriptors) need no
  // per-instruction move from the vector registers.
  VAECONV_DEVICE static int wave_uniform(int v) {
#if defined(__CUDA_ARCH__)
    return __shfl_sync(0xffffffffu, v, 0);
#else
    return v;
#endif
  }

  // v of the lane whose index is this lane's XOR lane_mask (every lane of the warp takes part).
  // A group of G lanes aligned to G (a power of two <= 32, so the same group on a 64-lane wave)
  // sums its values with lane_mask = G/2 .. 1: kernel/rms_norm_kernel.hpp.
  VAECONV_DEVICE static float shuffle_xor(float v, int lane_mask) {
#if defined(__CUDA_ARCH__)
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
#else
    (void)lane_mask;
    return v;
#endif
  }

  // Debug builds stop a block whose dynamic shared memory is not on the 1 KiB swizzle repeat the
  // wgmma descriptors assume (kernel/block_gemm.hpp declares it aligned; this checks the claim).
  VAECONV_DEVICE static void check_lds_alignment(const void* p) {
#if defined(__CUDA_ARCH__) && !defined(NDEBUG)
    if (smem_u32(p) % 1024 != 0) __trap();
#else
    (void)p;
#endif
  }

  // --- Global -> LDS copy with zero fill --------------------------------------------------------
  // A view is a block-uniform base pointer; loads address it with a 32-bit byte offset (the shared
  // gather guarantees offsets stay below 2^31 from the base; see kernel/conv_gather.hpp).
  struct GlobalView {
    const char* base;
  };
  VAECONV_DEVICE static GlobalView make_view(const void* base, uint32_t /*bytes*/) {
    return {static_cast<const char*>(base)};
  }

  // cp.async needs no staging registers: the copy lands in LDS by itself.
  template <int N>
  struct Slot {};

  // Starts copying 16 bytes from view.base + offset into lds_dst; zeros when !valid (src-size 0
  // reads nothing, so the address of an invalid lane is replaced by the base to stay harmless).
  template <int N>
  VAECONV_DEVICE static void load(Slot<N>&, int, void* lds_dst, GlobalView v, uint32_t offset,
                                  bool valid) {
#if defined(__CUDA_ARCH__)
    const char* src = v.base + (valid ? offset : 0u);
    // .cg caches in L2 only; .ca (L1 as well) measured slower (docs/perf-notes.md).
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(lds_dst)),
                 "l"(src), "r"(valid ? 16 : 0));
#else
    (void)lds_dst; (void)v; (void)offset; (void)valid;
#endif
  }
  // Moves a slot's staged data to LDS: nothing to do for cp.async.
  template <int kElemBytes, int N>
  VAECONV_DEVICE static void flush(Slot<N>&, int, void*) {}
  // Stores a chunk gathered in registers (the element-wise gather) to LDS.
  template <int kElemBytes>
  VAECONV_DEVICE static void store_lds(void* lds_dst, uint4 v) {
    *static_cast<uint4*>(lds_dst) = v;
  }

  VAECONV_DEVICE static void commit() {
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.commit_group;\n" ::);
#endif
  }
  // Waits until at most `Pending` committed groups are still in flight.
  template <int Pending>
  VAECONV_DEVICE static void wait() {
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
  }

  // --- Epilogue stores from LDS by the copy engine (sm_90: cp.async.bulk) ------------------------
  // The packed epilogue (epilogue.hpp) can hand each staged output row to the bulk copy engine
  // instead of moving it through registers in 16-byte pieces: one instruction per row, issued by
  // one thread, and the threads go on while the engine reads LDS and writes global memory.
  // Protocol: every thread that wrote the staging calls bulk_fence() (its generic-proxy LDS writes
  // become visible to the async proxy), then a barrier, then bulk_store() per row, bulk_commit()
  // and bulk_wait_read() by each issuing thread before the LDS is written again or the block exits
  // (the engine has then read the rows; the global writes complete on their own, visible to later
  // kernels). Rows: 16-byte aligned at both ends, a multiple of 16 bytes. Available where the
  // arch layer targets sm_90a (VAECONV_NVIDIA_WGMMA); a kernel policy opts in
  // (kBulkStoreEpilogue, tile_table.hpp), as it is faster for some kernels and slower for others.
#if defined(VAECONV_NVIDIA_WGMMA)
  static constexpr bool kBulkStore = true;
#else
  static constexpr bool kBulkStore = false;
#endif
  VAECONV_DEVICE static void bulk_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  }
  VAECONV_DEVICE static void bulk_store(void* global_dst, const void* lds_src, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(global_dst),
                 "r"(smem_u32(lds_src)), "r"(bytes)
                 : "memory");
#else
    (void)global_dst; (void)lds_src; (void)bytes;
#if defined(__CUDA_ARCH__)
    __trap();  // a device pass below sm_90 reached a bulk store: fail loudly, never drop it
#endif
#endif
  }
  VAECONV_DEVICE static void bulk_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
  }
  VAECONV_DEVICE static void bulk_wait_read() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
#endif
  }

  // --- Epilogue rounding: two floats to bf16, lo in bits 0-15 -----------------------------------
  // cvt.rn.bf16x2.f32 (sm_80+): round to nearest even, subnormals kept, overflow to Inf — the
  // same bits as float_to_bf16 (core/numerics_bf16.hpp) for every non-NaN input; a NaN stays a
  // NaN (its payload may differ). One instruction instead of about twelve for the pair.
  VAECONV_DEVICE static uint32_t pack_bf16x2(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return uint32_t(float_to_bf16(lo)) | (uint32_t(float_to_bf16(hi)) << 16);
#endif
  }

  // --- Matrix atom: m16n16k16 bf16 = two mma.sync.m16n8k16 ---------------------------------------
  struct AtomBf16 {
    using Layout = layout::MmaM16N16K16Bf16;
    static constexpr int kM = Layout::kM, kN = Layout::kN, kK = Layout::kK;
    struct FragA { uint32_t r[4]; };
    struct FragB { uint32_t r[4]; };
    struct FragC { float v[8]; };

    VAECONV_DEVICE static float acc_scale() { return 1.f; }
    // a_chunk_ptr: the 16-byte LDS chunk this lane points at (Layout::a_lds_row/a_lds_chunk).
    VAECONV_DEVICE static void load_a(FragA& a, int, const void* a_chunk_ptr) {
#if defined(__CUDA_ARCH__)
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(a.r[0]), "=r"(a.r[1]), "=r"(a.r[2]), "=r"(a.r[3])
                   : "r"(smem_u32(a_chunk_ptr)));
#else
      (void)a; (void)a_chunk_ptr;
#endif
    }
    VAECONV_DEVICE static void load_b(FragB& b, int, const void* b_chunk_ptr) {
#if defined(__CUDA_ARCH__)
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(b.r[0]), "=r"(b.r[1]), "=r"(b.r[2]), "=r"(b.r[3])
                   : "r"(smem_u32(b_chunk_ptr)));
#else
      (void)b; (void)b_chunk_ptr;
#endif
    }
    VAECONV_DEVICE static void mma(FragC& c, const FragA& a, const FragB& b) {
#if defined(__CUDA_ARCH__)
      VAECONV_MMA_SYNC_PAIR("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
#else
      (void)c; (void)a; (void)b;
#endif
    }
  };
  // The m16n16 atom is already as narrow as a tile gets: the narrow atom is the same one.
  using AtomBf16Narrow = AtomBf16;

  // --- Matrix atom: m16n16k32 e4m3 = two mma.sync.m16n8k32 ---------------------------------------
  // Same ldmatrix addressing as the bf16 atom (16-byte rows); sm_89+ reads e4m3fn natively.
  struct AtomFp8 {
    using Layout = layout::MmaM16N16K32Fp8;
    static constexpr int kM = Layout::kM, kN = Layout::kN, kK = Layout::kK;
    using FragA = AtomBf16::FragA;
    using FragB = AtomBf16::FragB;
    using FragC = AtomBf16::FragC;
    VAECONV_DEVICE static float acc_scale() { return 1.f; }
    VAECONV_DEVICE static void load_a(FragA& a, int part, const void* p) { AtomBf16::load_a(a, part, p); }
    VAECONV_DEVICE static void load_b(FragB& b, int part, const void* p) { AtomBf16::load_b(b, part, p); }
    // Below sm_89 there is no e4m3 mma.sync. A compile error here would break the whole library
    // for a fat binary such as "80;90a" (VaeconvBackend.cmake builds the mma.sync atoms for it),
    // whose sm_80 code runs the bf16 convs correctly; so an sm_80 device pass compiles the FP8
    // kernels to a trap (a failed launch, never a bias-only output), and conv_forward and the C
    // ABI refuse FP8 before any launch where the device would run such code
    // (api/device_arch.hpp: check_device_arch).
    VAECONV_DEVICE static void mma(FragC& c, const FragA& a, const FragB& b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
      VAECONV_MMA_SYNC_PAIR("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
#else
      (void)c; (void)a; (void)b;
#if defined(__CUDA_ARCH__)
      __trap();  // a device pass below sm_89: api/device_arch.hpp refuses FP8 before launch
#endif
#endif
    }
  };
  using AtomFp8Narrow = AtomFp8;

  // --- Warpgroup atoms (sm_90a): m64 x N, both operands read from LDS (nvidia_wgmma.hpp) -------
  template <int N>
  using AtomWgmmaBf16 = WgmmaAtom<N, false>;
  template <int N>
  using AtomWgmmaFp8 = WgmmaAtom<N, true>;
};

}  // namespace vaeconv::arch
