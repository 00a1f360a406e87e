// vaeconv/kernel/sliced_k.hpp — a block whose groups of warps split K (SlicedKTileShape).
//
// A sliced-K block is kSlicesK groups of the tile's warps. Group g walks K tiles
// [g * n, (g + 1) * n), n = k_tiles / kSlicesK, through its own LDS buffers with its own copies:
// the same pipeline and the same trips as every group, so the groups pass each barrier together.
// Then the groups' fp32 partial sums meet in LDS:
//
//   1. groups 1 .. S-1 write their accumulator registers to LDS, one float4 per thread and step
//      (a wave's float4 of one step are one contiguous run),
//   2. barrier, group 0 adds them to its own in group order (acc0 + acc1 + ... : the same bits on
//      every run), barrier; in passes of whole atoms where the LDS of the groups' pipelines does
//      not hold every partial sum at once,
//   3. the epilogue runs on every thread of the block: group 0 stages its sums, every thread
//      stores (epilogue.hpp: kStoreThreads).
//
// The grid keeps one block per tile: no second launch, no workspace, no atomics. What it buys:
// a grid that leaves a CU one or two blocks runs each block's K-tile chain (the latency of its
// copies, waits and barriers, which more blocks would hide) on 1 / kSlicesK of the K tiles.
// Only the dispatch's even splits run it (api/kernel_plan.hpp: k_tiles % kSlicesK == 0).
#pragma once
#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/core/unroll.hpp"

namespace vaeconv::kernel {

template <class Policy>
struct SliceReduce {
  static constexpr int kSlices = Policy::kSlicesK;
  using Layout = typename Policy::AtomT::Layout;
  static_assert(Layout::kCElems % 4 == 0, "accumulators move as float4");
  static constexpr int kQuadsPerAtom = Layout::kCElems / 4;  // float4 of one atom, per thread
  static constexpr int kAtoms = Policy::kAtomsM * Policy::kAtomsN;
  // LDS of one atom of every group but group 0.
  static constexpr int kAtomBytes = (kSlices - 1) * kQuadsPerAtom * Policy::kThreads * 16;
  // The exchange runs in passes of whole atoms, as few as fit the groups' pipeline LDS (which
  // the kernel has anyway): one where it holds every partial sum (gfx950's 160 KiB), more where
  // a larger exchange would cost a resident block (gfx942's 64 KiB).
  static constexpr int passes() {
    for (int n = 1; n < kAtoms; ++n)
      if (kAtoms % n == 0 && (kAtoms / n) * kAtomBytes <= kSlices * Policy::kPipelineBytes)
        return n;
    return kAtoms;
  }
  static constexpr int kPasses = passes();
  static constexpr int kAtomsPerPass = kAtoms / kPasses;
  static constexpr int kBytes = kAtomsPerPass * kAtomBytes;  // the LDS of one pass

  // Adds the partial sums of every group into group 0's acc (the file comment), pass by pass.
  // Every thread of the block calls it after its group's K loop, which left the LDS free; it
  // returns with the LDS free again (a barrier after the last reads).
  template <class FragC>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void add_into_first(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], char* smem, int slice, int tid) {
    float4* part = reinterpret_cast<float4*>(smem);
    // Group g's float4 q of the pass's atom a (0 .. kAtomsPerPass - 1).
    auto quad = [&](int g, int a, int q) VAECONV_FORCE_INLINE_LAMBDA {
      return part + (((g - 1) * kAtomsPerPass + a) * kQuadsPerAtom + q) * Policy::kThreads + tid;
    };
VAECONV_UNROLL
    for (int pass = 0; pass < kPasses; ++pass) {
      if (slice > 0) {
VAECONV_UNROLL
        for (int a = 0; a < kAtomsPerPass; ++a) {
          const int atom = pass * kAtomsPerPass + a;
          auto& c = acc[atom / Policy::kAtomsN][atom % Policy::kAtomsN];
VAECONV_UNROLL
          for (int q = 0; q < kQuadsPerAtom; ++q)
            *quad(slice, a, q) =
                make_float4(c.v[4 * q], c.v[4 * q + 1], c.v[4 * q + 2], c.v[4 * q + 3]);
        }
      }
      __syncthreads();
      if (slice == 0) {
VAECONV_UNROLL
        for (int g = 1; g < kSlices; ++g)
VAECONV_UNROLL
          for (int a = 0; a < kAtomsPerPass; ++a) {
            const int atom = pass * kAtomsPerPass + a;
            auto& c = acc[atom / Policy::kAtomsN][atom % Policy::kAtomsN];
VAECONV_UNROLL
            for (int q = 0; q < kQuadsPerAtom; ++q) {
              const float4 v = *quad(g, a, q);
              c.v[4 * q] += v.x;
              c.v[4 * q + 1] += v.y;
              c.v[4 * q + 2] += v.z;
              c.v[4 * q + 3] += v.w;
            }
            // One atom's partial sums in flight at a time: reading them all ahead would hold
            // the whole tile twice in registers, which the kernels' budget does not have.
            Policy::ArchT::schedule_fence();
          }
      }
      __syncthreads();
    }
  }
};

}  // namespace vaeconv::kernel
