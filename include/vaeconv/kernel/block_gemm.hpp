// vaeconv/kernel/block_gemm.hpp — one block's GEMM: the K pipeline and the matrix-atom loop.
//
// Shared by every conv kernel (conv_kernel.hpp, tap_reduce_kernel.hpp): a kernel says which
// operand bytes form K tile kt (its loaders) and what happens to the accumulators (its epilogue);
// this file owns the LDS buffers, the copy/compute overlap and the atoms.
//
// Pipeline, identical on every target: kStages LDS buffers, tile kt lives in buffer kt % kStages.
// The copy of tile kt + kStages - 1 is issued right after the barrier that frees its buffer, and
// the math on tile kt overlaps it. On NVIDIA the copy is cp.async straight into LDS (wait_group
// retires it); on AMD it is a buffer load into registers that flush() writes to LDS just before
// the barrier of the iteration that needs it.
//
// Loader contract (two callables, each force-inlined):
//   issue(s, slot)  start the copy of the loaders' current K tile into buffer s (staging registers
//                   `slot` where the target needs them), Arch::commit(), then advance one K tile;
//   flush(s, slot)  write what issue() staged in `slot` to buffer s (empty on cp.async targets).
#pragma once

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/smem_layout.hpp"

namespace vaeconv::kernel {

template <class Policy>
struct BlockGemm {
  using Arch = typename Policy::ArchT;
  using Atom = typename Policy::AtomT;
  using Layout = typename Atom::Layout;
  using Tile = SwizzledTile<Policy::kChunksK>;
  using FragC = typename Atom::FragC;
  // One thread's staging registers for one K tile: its A rows and its B rows.
  using Slot = typename Arch::template Slot<Policy::kRowsPerThreadA + Policy::kRowsPerThreadB>;

  VAECONV_DEVICE static char* stage_a(char* smem, int s) { return smem + s * Policy::kStageBytes; }
  VAECONV_DEVICE static char* stage_b(char* smem, int s) {
    return smem + s * Policy::kStageBytes + Policy::kTileBytesA;
  }

  // --- Operand copies: thread (row0, chunk) moves its 16-byte chunk of rows row0 + i * kRowStep.
  // A gather answers offset(i)/exists(i) (cached), a B gather at(p, i)/valid(p, i).
  static constexpr int kRowsA = Policy::kRowsPerThreadA, kRowsB = Policy::kRowsPerThreadB;
  static constexpr int kRowStep = Policy::kRowsPerPassA;
  template <class GatherA, class View>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void copy_a(Slot& sl, char* smem, int s, int row0,
                                                         int chunk, const GatherA& ga, View view) {
    char* la = stage_a(smem, s);
VAECONV_UNROLL
    for (int i = 0; i < kRowsA; ++i)
      Arch::load(sl, i, la + Tile::offset(row0 + i * kRowStep, chunk), view, ga.offset(i),
                 ga.exists(i));
  }
  template <class Params, class GatherB, class View>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void copy_b(Slot& sl, char* smem, int s, int row0,
                                                         int chunk, const Params& p,
                                                         const GatherB& gb, View view) {
    char* lb = stage_b(smem, s);
VAECONV_UNROLL
    for (int i = 0; i < kRowsB; ++i)
      if (!Policy::kGuardB || row0 + i * kRowStep < Policy::BN)
        Arch::load(sl, kRowsA + i, lb + Tile::offset(row0 + i * kRowStep, chunk), view,
                   gb.at(p, i), gb.valid(p, i));
  }
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void flush_a(Slot& sl, char* smem, int s, int row0,
                                                          int chunk) {
    char* la = stage_a(smem, s);
VAECONV_UNROLL
    for (int i = 0; i < kRowsA; ++i)
      Arch::template flush<Policy::kElemBytes>(sl, i,
                                               la + Tile::offset(row0 + i * kRowStep, chunk));
  }
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void flush_b(Slot& sl, char* smem, int s, int row0,
                                                          int chunk) {
    char* lb = stage_b(smem, s);
VAECONV_UNROLL
    for (int i = 0; i < kRowsB; ++i)
      if (!Policy::kGuardB || row0 + i * kRowStep < Policy::BN)
        Arch::template flush<Policy::kElemBytes>(sl, kRowsA + i,
                                                 lb + Tile::offset(row0 + i * kRowStep, chunk));
  }

  // acc = sum over the k_tiles K tiles of A(block) * B(block)^T for this warp's warp tile at
  // (wm0, wn0). Leaves every copy retired and the LDS free (barrier passed) for the epilogue.
  template <class Issue, class Flush>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], char* smem, int k_tiles, int wm0, int wn0,
      int lane, Issue& issue, Flush& flush) {
    Slot slot[Policy::kStages - 1];
VAECONV_UNROLL
    for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
      for (int j = 0; j < Policy::kAtomsN; ++j)
VAECONV_UNROLL
        for (int r = 0; r < Layout::kCElems; ++r) acc[i][j].v[r] = 0.f;

    // Prologue: tiles 0 .. kStages-2 in flight.
VAECONV_UNROLL
    for (int s = 0; s < Policy::kStages - 1; ++s) {
      if (s < k_tiles) issue(s, slot[s]);
      else Arch::commit();  // keep the group count uniform for wait<>
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % Policy::kStages;
      Arch::template wait<Policy::kStages - 2>();
      flush(s, slot[kt % (Policy::kStages - 1)]);
      __syncthreads();
      // Buffer (kt - 1) % kStages was last read before this barrier: refill it.
      const int next = kt + Policy::kStages - 1;
      if (next < k_tiles) issue(next % Policy::kStages, slot[next % (Policy::kStages - 1)]);
      else Arch::commit();

      const char* la = stage_a(smem, s);
      const char* lb = stage_b(smem, s);
VAECONV_UNROLL
      for (int ka = 0; ka < Policy::kAtomsK; ++ka) {
        constexpr int kChunksPerAtomK = Atom::kK / Policy::kChunkElems;
        typename Atom::FragA fa[Policy::kAtomsM];
        typename Atom::FragB fb[Policy::kAtomsN];
VAECONV_UNROLL
        for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
          for (int part = 0; part < Layout::kLdsChunks; ++part)
            Atom::load_a(fa[i], part,
                         la + Tile::offset(wm0 + i * Atom::kM + Layout::a_lds_row(lane),
                                           ka * kChunksPerAtomK + Layout::a_lds_chunk(lane, part)));
VAECONV_UNROLL
        for (int j = 0; j < Policy::kAtomsN; ++j)
VAECONV_UNROLL
          for (int part = 0; part < Layout::kLdsChunks; ++part)
            Atom::load_b(fb[j], part,
                         lb + Tile::offset(wn0 + j * Atom::kN + Layout::b_lds_row(lane),
                                           ka * kChunksPerAtomK + Layout::b_lds_chunk(lane, part)));
VAECONV_UNROLL
        for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
          for (int j = 0; j < Policy::kAtomsN; ++j) Atom::mma(acc[i][j], fa[i], fb[j]);
      }
    }
    Arch::template wait<0>();
    __syncthreads();  // the epilogue may reuse the pipeline's LDS
  }
};

// A kernel body's LDS: a fixed-size array where the target sizes LDS at compile time (AMD: the
// size then shows in the compiler's resource report), dynamic shared memory elsewhere (tiles may
// exceed 48 KiB; the launch passes Kernel::kSmemBytes).
template <class Kernel, class Arch>
VAECONV_DEVICE VAECONV_FORCE_INLINE void run_with_lds(const ConvParams& p) {
  if constexpr (Arch::kStaticLds) {
    __shared__ __attribute__((aligned(16))) char smem[Kernel::kSmemBytes];
    Kernel::run(p, smem);
  } else {
    extern __shared__ __attribute__((aligned(16))) char smem_dynamic[];
    Kernel::run(p, smem_dynamic);
  }
}

}  // namespace vaeconv::kernel
