// vaeconv/arch/nvidia_wgmma.hpp — the warpgroup atom of the NVIDIA architecture layer (sm_90a).
//
// wgmma.mma_async reads both operands from shared memory through descriptors (arch/
// wgmma_layout.hpp) and runs asynchronously to the issuing warps. Its contract with the shared
// pipeline (kernel/block_gemm.hpp), which asks for it through kOperandsFromLds:
//   publish_lds()       after this thread's generic writes to a stage (cp.async, st.shared):
//                       fence.proxy.async, so the tensor cores' async proxy sees them once the
//                       block barrier has passed;
//   begin_batch()       wgmma.fence before the first wgmma of a K tile (the accumulators were
//                       written by other instructions: zeroing, or a previous batch's wait);
//   mma(c, a, b, acc)   one m64nNk16 (bf16) or m64nNk32 (e4m3) on the operand blocks at shared
//                       addresses a and b of K-major swizzled tiles with rows of kRowBytes,
//                       adding into c when acc is 1 and overwriting it when 0;
//   kPromoteEachTile    the batch of a K tile must go to separate registers that the pipeline
//                       adds into the fp32 accumulators (fp8: see below);
//   commit_batch()      closes the K tile's group;
//   wait_batches<P>()   until at most P groups are in flight: the stages the retired groups read
//                       are free again, and so are their accumulators after fence_operands().
// Only the sm_90a device pass has these instructions: a build that selects the atom
// (VAECONV_NVIDIA_WGMMA, set by CMake when every CUDA architecture is 90a) for any other device
// target stops with an error instead of silently computing nothing.
#pragma once
#include <cstdint>

#include "vaeconv/arch/wgmma_layout.hpp"
#include "vaeconv/core/config.hpp"

#if defined(__CUDA_ARCH__) && defined(VAECONV_NVIDIA_WGMMA) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "VAECONV_NVIDIA_WGMMA needs the sm_90a device target (CMAKE_CUDA_ARCHITECTURES 90a-real)"
#endif
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define VAECONV_HAS_WGMMA 1
#endif

namespace vaeconv::arch {

// D[64 x N] (fp32, in c.v[N/2] per thread) = A * B + (scale_d ? D : 0) for one K step: the
// predicate p comes from the last operand. TAIL holds the immediate scale and transpose operands
// of the operand type.
#define VAECONV_WGMMA_N64(INSTR, TAIL)                                                             \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" INSTR " {"                                      \
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                     \
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"                            \
      "}, %32, %33, p" TAIL ";\n}\n"                                                               \
      : "+f"(c.v[0]), "+f"(c.v[1]), "+f"(c.v[2]), "+f"(c.v[3]), "+f"(c.v[4]), "+f"(c.v[5]),        \
        "+f"(c.v[6]), "+f"(c.v[7]), "+f"(c.v[8]), "+f"(c.v[9]), "+f"(c.v[10]), "+f"(c.v[11]),      \
        "+f"(c.v[12]), "+f"(c.v[13]), "+f"(c.v[14]), "+f"(c.v[15]), "+f"(c.v[16]), "+f"(c.v[17]),  \
        "+f"(c.v[18]), "+f"(c.v[19]), "+f"(c.v[20]), "+f"(c.v[21]), "+f"(c.v[22]), "+f"(c.v[23]),  \
        "+f"(c.v[24]), "+f"(c.v[25]), "+f"(c.v[26]), "+f"(c.v[27]), "+f"(c.v[28]), "+f"(c.v[29]),  \
        "+f"(c.v[30]), "+f"(c.v[31])                                                               \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))

#define VAECONV_WGMMA_N96(INSTR, TAIL)                                                             \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n" INSTR " {"                                      \
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                     \
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                           \
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47"                            \
      "}, %48, %49, p" TAIL ";\n}\n"                                                               \
      : "+f"(c.v[0]), "+f"(c.v[1]), "+f"(c.v[2]), "+f"(c.v[3]), "+f"(c.v[4]), "+f"(c.v[5]),        \
        "+f"(c.v[6]), "+f"(c.v[7]), "+f"(c.v[8]), "+f"(c.v[9]), "+f"(c.v[10]), "+f"(c.v[11]),      \
        "+f"(c.v[12]), "+f"(c.v[13]), "+f"(c.v[14]), "+f"(c.v[15]), "+f"(c.v[16]), "+f"(c.v[17]),  \
        "+f"(c.v[18]), "+f"(c.v[19]), "+f"(c.v[20]), "+f"(c.v[21]), "+f"(c.v[22]), "+f"(c.v[23]),  \
        "+f"(c.v[24]), "+f"(c.v[25]), "+f"(c.v[26]), "+f"(c.v[27]), "+f"(c.v[28]), "+f"(c.v[29]),  \
        "+f"(c.v[30]), "+f"(c.v[31]), "+f"(c.v[32]), "+f"(c.v[33]), "+f"(c.v[34]), "+f"(c.v[35]),  \
        "+f"(c.v[36]), "+f"(c.v[37]), "+f"(c.v[38]), "+f"(c.v[39]), "+f"(c.v[40]), "+f"(c.v[41]),  \
        "+f"(c.v[42]), "+f"(c.v[43]), "+f"(c.v[44]), "+f"(c.v[45]), "+f"(c.v[46]), "+f"(c.v[47])   \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))

#define VAECONV_WGMMA_N128(INSTR, TAIL)                                                            \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" INSTR " {"                                      \
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                     \
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                           \
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                           \
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"                            \
      "}, %64, %65, p" TAIL ";\n}\n"                                                               \
      : "+f"(c.v[0]), "+f"(c.v[1]), "+f"(c.v[2]), "+f"(c.v[3]), "+f"(c.v[4]), "+f"(c.v[5]),        \
        "+f"(c.v[6]), "+f"(c.v[7]), "+f"(c.v[8]), "+f"(c.v[9]), "+f"(c.v[10]), "+f"(c.v[11]),      \
        "+f"(c.v[12]), "+f"(c.v[13]), "+f"(c.v[14]), "+f"(c.v[15]), "+f"(c.v[16]), "+f"(c.v[17]),  \
        "+f"(c.v[18]), "+f"(c.v[19]), "+f"(c.v[20]), "+f"(c.v[21]), "+f"(c.v[22]), "+f"(c.v[23]),  \
        "+f"(c.v[24]), "+f"(c.v[25]), "+f"(c.v[26]), "+f"(c.v[27]), "+f"(c.v[28]), "+f"(c.v[29]),  \
        "+f"(c.v[30]), "+f"(c.v[31]), "+f"(c.v[32]), "+f"(c.v[33]), "+f"(c.v[34]), "+f"(c.v[35]),  \
        "+f"(c.v[36]), "+f"(c.v[37]), "+f"(c.v[38]), "+f"(c.v[39]), "+f"(c.v[40]), "+f"(c.v[41]),  \
        "+f"(c.v[42]), "+f"(c.v[43]), "+f"(c.v[44]), "+f"(c.v[45]), "+f"(c.v[46]), "+f"(c.v[47]),  \
        "+f"(c.v[48]), "+f"(c.v[49]), "+f"(c.v[50]), "+f"(c.v[51]), "+f"(c.v[52]), "+f"(c.v[53]),  \
        "+f"(c.v[54]), "+f"(c.v[55]), "+f"(c.v[56]), "+f"(c.v[57]), "+f"(c.v[58]), "+f"(c.v[59]),  \
        "+f"(c.v[60]), "+f"(c.v[61]), "+f"(c.v[62]), "+f"(c.v[63])                                 \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))

#define VAECONV_WGMMA_N192(INSTR, TAIL)                                                            \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n" INSTR " {"                                      \
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                     \
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                           \
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                           \
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"                           \
      "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"                           \
      "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"                            \
      "}, %96, %97, p" TAIL ";\n}\n"                                                               \
      : "+f"(c.v[0]), "+f"(c.v[1]), "+f"(c.v[2]), "+f"(c.v[3]), "+f"(c.v[4]), "+f"(c.v[5]),        \
        "+f"(c.v[6]), "+f"(c.v[7]), "+f"(c.v[8]), "+f"(c.v[9]), "+f"(c.v[10]), "+f"(c.v[11]),      \
        "+f"(c.v[12]), "+f"(c.v[13]), "+f"(c.v[14]), "+f"(c.v[15]), "+f"(c.v[16]), "+f"(c.v[17]),  \
        "+f"(c.v[18]), "+f"(c.v[19]), "+f"(c.v[20]), "+f"(c.v[21]), "+f"(c.v[22]), "+f"(c.v[23]),  \
        "+f"(c.v[24]), "+f"(c.v[25]), "+f"(c.v[26]), "+f"(c.v[27]), "+f"(c.v[28]), "+f"(c.v[29]),  \
        "+f"(c.v[30]), "+f"(c.v[31]), "+f"(c.v[32]), "+f"(c.v[33]), "+f"(c.v[34]), "+f"(c.v[35]),  \
        "+f"(c.v[36]), "+f"(c.v[37]), "+f"(c.v[38]), "+f"(c.v[39]), "+f"(c.v[40]), "+f"(c.v[41]),  \
        "+f"(c.v[42]), "+f"(c.v[43]), "+f"(c.v[44]), "+f"(c.v[45]), "+f"(c.v[46]), "+f"(c.v[47]),  \
        "+f"(c.v[48]), "+f"(c.v[49]), "+f"(c.v[50]), "+f"(c.v[51]), "+f"(c.v[52]), "+f"(c.v[53]),  \
        "+f"(c.v[54]), "+f"(c.v[55]), "+f"(c.v[56]), "+f"(c.v[57]), "+f"(c.v[58]), "+f"(c.v[59]),  \
        "+f"(c.v[60]), "+f"(c.v[61]), "+f"(c.v[62]), "+f"(c.v[63]), "+f"(c.v[64]), "+f"(c.v[65]),  \
        "+f"(c.v[66]), "+f"(c.v[67]), "+f"(c.v[68]), "+f"(c.v[69]), "+f"(c.v[70]), "+f"(c.v[71]),  \
        "+f"(c.v[72]), "+f"(c.v[73]), "+f"(c.v[74]), "+f"(c.v[75]), "+f"(c.v[76]), "+f"(c.v[77]),  \
        "+f"(c.v[78]), "+f"(c.v[79]), "+f"(c.v[80]), "+f"(c.v[81]), "+f"(c.v[82]), "+f"(c.v[83]),  \
        "+f"(c.v[84]), "+f"(c.v[85]), "+f"(c.v[86]), "+f"(c.v[87]), "+f"(c.v[88]), "+f"(c.v[89]),  \
        "+f"(c.v[90]), "+f"(c.v[91]), "+f"(c.v[92]), "+f"(c.v[93]), "+f"(c.v[94]), "+f"(c.v[95])   \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))
// The instruction of each operand type: bf16 K = 16 (both operands K-major: no transposes), e4m3
// K = 32 (K-major only, no transpose operands).
#define VAECONV_WGMMA_BF16(NN)                                                                    \
  VAECONV_WGMMA_N##NN("wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32.bf16.bf16", ", 1, 1, 0, 0")
#define VAECONV_WGMMA_E4M3(NN)                                                                    \
  VAECONV_WGMMA_N##NN("wgmma.mma_async.sync.aligned.m64n" #NN "k32.f32.e4m3.e4m3", ", 1, 1")

template <int N, bool kFp8>
struct WgmmaAtom {
  using Layout = layout::WgmmaM64<N, kFp8 ? 1 : 2>;
  static constexpr int kM = Layout::kM, kN = Layout::kN, kK = Layout::kK;
  static constexpr bool kOperandsFromLds = true;
  // e4m3 wgmma adds its products into D with less than fp32 precision (the H200 GPU suite: with
  // K = 2592, 33 of 92160 fp8 outputs landed more than one e4m3 step from the exact result, which
  // the mma.sync atom never did). So an fp8 batch computes a K tile's partial sum alone
  // (scale_d = 0 on its first step) and the pipeline adds it into fp32 accumulators: the
  // "promotion" of CUTLASS's FP8 kernels and of DeepSeek-V3's report, every 64 K elements here.
  static constexpr bool kPromoteEachTile = kFp8;
  struct FragC { float v[Layout::kCElems]; };
  static_assert(N == 64 || N == 96 || N == 128 || N == 192, "instantiated widths (see the asm)");

  VAECONV_DEVICE static float acc_scale() { return 1.f; }

  VAECONV_DEVICE static void publish_lds() {
#if defined(VAECONV_HAS_WGMMA)
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  }
  VAECONV_DEVICE static void begin_batch() {
#if defined(VAECONV_HAS_WGMMA)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
  }
  VAECONV_DEVICE static void commit_batch() {
#if defined(VAECONV_HAS_WGMMA)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
  }
  template <int Pending>
  VAECONV_DEVICE static void wait_batches() {
#if defined(VAECONV_HAS_WGMMA)
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
  }
  // Compiler-only: pins c's registers at this point of the instruction stream. Called on every
  // accumulator before begin_batch() (their zeroing must not sink past the wgmma.fence) and after
  // wait_batches() (the epilogue's reads must not rise above the wait).
  VAECONV_DEVICE static void fence_operands(FragC& c) {
    VAECONV_UNROLL
    for (int r = 0; r < Layout::kCElems; ++r) asm volatile("" : "+f"(c.v[r])::"memory");
  }

  template <int kRowBytes>
  VAECONV_DEVICE static void mma(FragC& c, uint32_t a_addr, uint32_t b_addr, int scale_d) {
#if defined(VAECONV_HAS_WGMMA)
    const uint64_t desc_a = layout::WgmmaDescriptor::make(a_addr, kRowBytes);
    const uint64_t desc_b = layout::WgmmaDescriptor::make(b_addr, kRowBytes);
    if constexpr (kFp8) {
      if constexpr (N == 64) VAECONV_WGMMA_E4M3(64);
      else if constexpr (N == 96) VAECONV_WGMMA_E4M3(96);
      else if constexpr (N == 128) VAECONV_WGMMA_E4M3(128);
      else VAECONV_WGMMA_E4M3(192);
    } else {
      if constexpr (N == 64) VAECONV_WGMMA_BF16(64);
      else if constexpr (N == 96) VAECONV_WGMMA_BF16(96);
      else if constexpr (N == 128) VAECONV_WGMMA_BF16(128);
      else VAECONV_WGMMA_BF16(192);
    }
#else
    (void)c; (void)a_addr; (void)b_addr; (void)scale_d;
#endif
  }
};

}  // namespace vaeconv::arch
