// vaeconv/arch/nvidia_mbarrier.hpp — shared-memory barriers of the NVIDIA architecture layer
// (sm_90), for kernels whose warps play different roles (kernel/warp_specialized_conv_kernel.hpp),
// and the register reallocation between those roles (sm_90a).
//
// An mbarrier is a 64-bit word in shared memory that completes a phase when its expected count
// of arrivals has arrived, then starts the next phase with the same count. A waiter names the
// phase it waits for by its parity (0, 1, 0, ...): try_wait.parity P returns once the phase of
// parity P has completed, and at once for P = 1 on a fresh barrier (whose phase 0 is current,
// so "the phase before it" counts as completed). A ring of stages then needs no counter in
// shared memory: use u of stage s (u = 0, 1, ...) waits for parity u & 1. A barrier is named by
// its shared-memory address (Arch::smem_u32 of its 8 bytes, 8-byte aligned).
//   init(bar, n)           expected arrivals per phase (one thread, before a block barrier);
//   arrive(bar)            one arrival, releasing this thread's prior shared-memory accesses;
//   arrive_on_copies(bar)  one arrival once this thread's prior cp.async copies have landed
//                          (cp.async.mbarrier.arrive.noinc: the arrival is one of the n);
//   wait(bar, parity)      until the phase of that parity has completed (acquire);
//   sync_threads<kId, kN>  a named block barrier (bar.sync id, n) for the kN threads of a role,
//                          whole warps: the block's other warps neither wait nor count.
// Only sm_90 device passes have try_wait (a warp-specialized tile is an sm_90a wgmma tile:
// kernel/tile_policy.hpp's WarpSpecializedTileShape).
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define VAECONV_HAS_MBARRIER_TRY_WAIT 1
#endif
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define VAECONV_HAS_SETMAXNREG 1
#endif

namespace vaeconv::arch {

struct MBarrier {
  VAECONV_DEVICE static void init(uint32_t bar, int count) {
#if defined(VAECONV_HAS_MBARRIER_TRY_WAIT)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count)
                 : "memory");
#else
    (void)bar; (void)count;
#endif
  }
  // After init(), before the block barrier that publishes the barriers to the other threads.
  VAECONV_DEVICE static void fence_init() {
#if defined(VAECONV_HAS_MBARRIER_TRY_WAIT)
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
  }
  VAECONV_DEVICE static void arrive(uint32_t bar) {
#if defined(VAECONV_HAS_MBARRIER_TRY_WAIT)
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar)
                 : "memory");
#else
    (void)bar;
#endif
  }
  VAECONV_DEVICE static void arrive_on_copies(uint32_t bar) {
#if defined(VAECONV_HAS_MBARRIER_TRY_WAIT)
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar)
                 : "memory");
#else
    (void)bar;
#endif
  }
  VAECONV_DEVICE static void wait(uint32_t bar, uint32_t parity) {
#if defined(VAECONV_HAS_MBARRIER_TRY_WAIT)
    asm volatile(
        "{\n.reg .pred done;\nWAIT:\n"  // labels inside braces are local to them
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
#else
    (void)bar; (void)parity;
#if defined(__CUDA_ARCH__)
    __trap();  // a device pass without try_wait reached a warp-specialized kernel
#endif
#endif
  }
  template <int kId, int kThreads>
  VAECONV_DEVICE static void sync_threads() {
    static_assert(kThreads % 32 == 0 && kId > 0 && kId < 16,
                  "whole warps, on a barrier other than __syncthreads' (0)");
#if defined(__CUDA_ARCH__)
    asm volatile("bar.sync %0, %1;\n" ::"n"(kId), "n"(kThreads) : "memory");
#endif
  }
  // Waits until every cp.async this thread issued has landed.
  VAECONV_DEVICE static void wait_all_copies() {
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
  }
};

// Register reallocation between the warpgroups of a warp-specialized block (setmaxnreg): a
// producer warpgroup that only issues copies gives registers back, and its consumers take them
// for accumulators. Every warp of the warpgroup executes it; counts are multiples of 8 in
// [24, 256], and a block's warpgroups together never hold more than the block was launched with.
struct WarpgroupRegisters {
  template <int kCount>
  VAECONV_DEVICE static void decrease_to() {
    static_assert(kCount % 8 == 0 && kCount >= 24 && kCount <= 256, "setmaxnreg's range");
#if defined(VAECONV_HAS_SETMAXNREG)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kCount));
#endif
  }
  template <int kCount>
  VAECONV_DEVICE static void increase_to() {
    static_assert(kCount % 8 == 0 && kCount >= 24 && kCount <= 256, "setmaxnreg's range");
#if defined(VAECONV_HAS_SETMAXNREG)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kCount));
#endif
  }
};

}  // namespace vaeconv::arch
