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
// The math on a stage is one of two kinds, chosen by the atom: fragment atoms (mma.sync, MFMA)
// load each lane's operands from LDS into registers and multiply; LDS atoms (wgmma, sm_90a) are
// handed the stage's addresses and run asynchronously, one committed batch per K tile, with the
// tile before it still allowed in flight (kInFlight below).
//
// Loader contract (two callables, each force-inlined):
//   issue(s, slot)  start the copy of the loaders' current K tile into buffer s (staging registers
//                   `slot` where the target needs them), Arch::commit(), then advance one K tile;
//   flush(s, slot)  write what issue() staged in `slot` to buffer s (empty on cp.async targets).
#pragma once

#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/pipeline_schedule.hpp"
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
  static constexpr int kChunksPerAtomK = Atom::kK / Policy::kChunkElems;  // LDS chunks per K step
  static constexpr int kRowStep = Policy::kRowsPerPassA;
  template <class GatherA, class View>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void copy_a(Slot& sl, char* smem, int s, int row0,
                                                         int chunk, const GatherA& ga, View view) {
    char* la = stage_a(smem, s);
VAECONV_UNROLL
    for (int i = 0; i < kRowsA; ++i) {
      // Register staging (a buffer load) of a folded offset: the load itself answers exists().
      if constexpr (!std::is_empty_v<Slot> && FoldsRange<GatherA, Arch>::value)
        Arch::load(sl, i, la + Tile::offset(row0 + i * kRowStep, chunk), view, ga.offset(i), true);
      else
        Arch::load(sl, i, la + Tile::offset(row0 + i * kRowStep, chunk), view, ga.offset(i),
                   ga.exists(i));
    }
  }
  template <class Params, class GatherB, class View>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void copy_b(Slot& sl, char* smem, int s, int row0,
                                                         int chunk, const Params& p,
                                                         const GatherB& gb, View view) {
    char* lb = stage_b(smem, s);
VAECONV_UNROLL
    for (int i = 0; i < kRowsB; ++i) {
      const bool in_tile = !Policy::kGuardB || row0 + i * kRowStep < Policy::BN;
      if constexpr (std::is_empty_v<Slot>) {  // cp.async writes LDS: rows past BN copy nothing
        if (in_tile)
          Arch::load(sl, kRowsA + i, lb + Tile::offset(row0 + i * kRowStep, chunk), view,
                     gb.at(p, i), gb.valid(p, i));
      } else {
        // Staged in registers: a row past BN loads zeros (out of range) that flush_b never
        // writes. Unconditional, so every wave issues the same loads per tile: a branch around
        // a load makes the compiler's vmcnt count assume the load may be missing, and the
        // flush of the older slot then waits for the younger slot's loads too (mainloop below).
        if constexpr (FoldsRange<GatherB, Arch>::value)  // folded at init, rows past BN too
          Arch::load(sl, kRowsA + i, lb + Tile::offset(row0 + i * kRowStep, chunk), view,
                     gb.offset(i), true);
        else
          Arch::load(sl, kRowsA + i, lb + Tile::offset(row0 + i * kRowStep, chunk), view,
                     gb.at(p, i), in_tile && gb.valid(p, i));
      }
    }
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
      if (!Policy::kGuardFlushB || row0 + i * kRowStep < Policy::BN)  // else into the padding
        Arch::template flush<Policy::kElemBytes>(sl, kRowsA + i,
                                                 lb + Tile::offset(row0 + i * kRowStep, chunk));
  }

  // Atom groups of an asynchronous atom (wgmma) keep one K tile's batch in flight while the next
  // tile's barrier passes, so the copy refills the buffer of tile kt - 2 instead of kt - 1
  // (pipeline_schedule.hpp). A promoting atom (fp8 wgmma) waits for each batch instead: its
  // partial sum is added into the fp32 accumulators before the next batch reuses its registers.
  static constexpr bool kPromote = Policy::kPromoteEachTile;
  static constexpr int kInFlight = Policy::kBatchesInFlight;
  using Schedule = typename Policy::Schedule;
  static constexpr int kAhead = Schedule::kAhead;
  // Vector memory instructions of one slot's issue(): one buffer load per staged row (B's only
  // where the stages hold B, the halo kernels). A loader that issues more (a second view's
  // reload) makes the steady trips' wait (mainloop) stricter, never too weak: the compiler still
  // waits for each register where it is written to LDS.
  static constexpr int kSlotLoads = Policy::kStagedRows;
  // Register-staged steady trips run unrolled over the buffers' period (mainloop) where a wave's
  // matrix work per K tile is at most six atoms (gfx942's 128 x 96 tiles, gfx950's fp8 256 x 96:
  // the tile's buffer and address arithmetic is then a large share of its issue slots). The
  // gfx950 bf16 256 x 96 tile (12 atoms) keeps one trip at a time: unrolled, LLVM splits its LDS
  // waits once more per tile (docs/perf-notes.md, issue 25 W13).
  static constexpr bool kUnrollBufferTrips =
      Policy::kAtomsM * Policy::kAtomsN * Policy::kAtomsK <= 6;
  static_assert(Policy::kAtomReadsLds || !kPromote, "promotion is for LDS atoms");

  // acc = sum over the k_tiles K tiles of A(block) * B(block)^T for this warp's warp tile at
  // (wm0, wn0). Leaves every copy retired and the LDS free (barrier passed) for the epilogue.
  template <class Issue, class Flush>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], char* smem, int k_tiles, int wm0, int wn0,
      int lane, Issue& issue, Flush& flush) {
    Slot slot[kAhead];
    prologue(slot, k_tiles, issue);
    mainloop(acc, smem, k_tiles, wm0, wn0, lane, slot, issue, flush);
  }

  // run() in two parts, for a kernel that overlaps one tile's epilogue with the next tile's
  // first copies: prologue() starts the copies of K tiles 0 .. kAhead-1 into buffers
  // 0 .. kAhead-1 (the rest of the LDS stays untouched until mainloop()'s first barrier);
  // mainloop() computes, given the same slots.
  template <class Issue>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void prologue(Slot (&slot)[kAhead], int k_tiles,
                                                           Issue& issue) {
VAECONV_UNROLL
    for (int s = 0; s < kAhead; ++s) {
      if (s < k_tiles) issue(Schedule::buffer(s), slot[s]);
      else Arch::commit();  // keep the group count uniform for wait<>
    }
  }

  template <class Issue, class Flush>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void mainloop(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], char* smem, int k_tiles, int wm0, int wn0,
      int lane, Slot (&slot)[kAhead], Issue& issue, Flush& flush) {
    // The math on stage s: the A and B tiles of this policy's stage layout.
    auto compute = [&](FragC (&target)[Policy::kAtomsM][Policy::kAtomsN], int s, int /*kt*/,
                       int first_scale) VAECONV_FORCE_INLINE_LAMBDA {
      if constexpr (Policy::kAtomReadsLds) mma_stage_from_lds(target, smem, s, wm0, wn0, first_scale);
      else mma_stage_fragments(target, smem, s, wm0, wn0, lane);
    };
    mainloop(acc, k_tiles, slot, issue, flush, compute);
  }

  // The same pipeline with the kernel's own math on a stage (the halo kernel: A is not in the
  // stage): compute(target, s, kt, first_scale) issues K tile kt's atoms on buffer s into target
  // (an LDS atom: one batch, which compute begins and commits; first_scale 0 overwrites a
  // promoted partial sum on its first K step).
  template <class Issue, class Flush, class Compute>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void mainloop(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], int k_tiles, Slot (&slot)[kAhead],
      Issue& issue, Flush& flush, Compute& compute) {
    // A promoting atom's per-tile partial sums (a single unused atom otherwise).
    FragC part[kPromote ? Policy::kAtomsM : 1][kPromote ? Policy::kAtomsN : 1];
    zero(acc);
    if constexpr (kPromote) zero(part);

    // Writes slot sl to buffer s; with one buffer, after a barrier that every wave passes only
    // once it has read the tile before (pipeline_schedule.hpp, kBarrierBeforeFlush).
    auto flush_slot = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      if constexpr (Schedule::kBarrierBeforeFlush) __syncthreads();
      flush(s, sl);
    };

    // One iteration: tile kt, staged in sl, which the refill of tile kt + kAhead reuses
    // (Schedule::slot is the same for both).
    auto step = [&](int kt, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      const int s = Schedule::buffer(kt);
      Arch::template wait<Schedule::kPendingCopies>();
      flush_slot(s, sl);
      if constexpr (Policy::kAtomReadsLds) {
        Atom::publish_lds();  // this thread's writes to stage s, visible to the tensor cores
        // Retires tile kt - 1 - kInFlight: its buffer may refill after the barrier.
        Atom::template wait_batches<kInFlight>();
        if constexpr (kPromote)
          if (kt > 0) promote(acc, part);
      }
      __syncthreads();
      // Buffer (kt - 1 - kInFlight) % kStages was last read before this barrier: refill it.
      const int next = Schedule::refill_tile(kt);
      auto refill = [&]() VAECONV_FORCE_INLINE_LAMBDA {
        if (next < k_tiles) issue(Schedule::buffer(next), sl);
        else Arch::commit();
      };
      if constexpr (Schedule::kBatchFirst) {  // the schedule's order (pipeline_schedule.hpp)
        compute(part, s, kt, 0);
        refill();
      } else {
        refill();
        if constexpr (kPromote) compute(part, s, kt, 0);
        else compute(acc, s, kt, 1);
      }
    };
    if constexpr (kAhead == 1 || std::is_empty_v<Slot>) {
      for (int kt = 0; kt < k_tiles; ++kt) step(kt, slot[Schedule::slot(kt)]);
    } else {
      // Staging slots in registers (AMD) with several tiles ahead: indexed by kt % kAhead, the
      // slot array would be a dynamically indexed private array, i.e. scratch memory. So each
      // trip runs kAhead tiles, tile kt0 + u in slot u: every index a compile-time constant.
      static_assert(Schedule::slot(kAhead) == 0 && Schedule::slot(Schedule::refill_tile(1)) == 1,
                    "tile kt and its refill share slot kt % kAhead");
      // The loads' wait is the compiler's (s_waitcnt vmcnt, counted in issue order), and it
      // keeps kAhead tiles in flight only where every path to a flush issued the same loads:
      // a path that skips a refill (past the last tile) or the prologue's second tile, merged
      // into the loop, makes it wait for every load before the first slot's flush, the next
      // tile's too. So the steady trips, whose refills all lie inside K, issue them without a
      // test; their loop is entered with no load pending (the prologue's tiles retired once,
      // a block's first wait); the last 1 .. 2 * kAhead - 1 tiles follow, unrolled, tested.
      // Tile kt0 + u of a trip lives in buffer (kt0 + u) % kStages. Where a tile's matrix work
      // is short (kUnrollBufferTrips), the trips run kBufferTrips at a time, unrolled: the
      // buffers repeat after that many trips (Schedule::kBufferTrips), so each tile's buffer (its
      // LDS addresses, its refill's) is a compile-time constant, and the steady test sits before
      // every trip of the pass. Elsewhere the trips run one at a time and carry b0 = buffer(kt0)
      // from trip to trip (Schedule::rotate: an add and a wrap, not kt % kStages per tile).
      auto steady_step = [&](int kt, int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
        // One wait for the whole slot (its loads retire in issue order; the younger slots' stay
        // in flight) instead of the compiler's wait before each row's write.
        Arch::template wait_loads<kSlotLoads * (kAhead - 1)>();
        flush_slot(s, sl);
        __syncthreads();
        issue(Schedule::rotate(s, kAhead), sl);
        compute(acc, s, kt, 1);
        Arch::schedule_fence();  // the next flush (and its wait) after this tile's math
      };
      static_assert(!Policy::kAtomReadsLds && !kPromote && !Schedule::kBatchFirst,
                    "register staging is for fragment atoms (AMD MFMA)");
      Arch::template wait_loads<0>();
      int kt0 = 0;
      if constexpr (kUnrollBufferTrips) {
        for (bool steady = true; steady;) {
VAECONV_UNROLL
          for (int r = 0; r < Schedule::kBufferTrips; ++r) {
            if (!Schedule::steady_trip(kt0, k_tiles)) {
              steady = false;
              break;
            }
VAECONV_UNROLL
            for (int u = 0; u < kAhead; ++u)
              steady_step(kt0 + u, Schedule::buffer(r * kAhead + u), slot[u]);
            kt0 += kAhead;
          }
        }
      } else {
        for (int b0 = Schedule::buffer(0); Schedule::steady_trip(kt0, k_tiles);
             kt0 += kAhead, b0 = Schedule::rotate(b0, kAhead))
VAECONV_UNROLL
          for (int u = 0; u < kAhead; ++u) steady_step(kt0 + u, Schedule::rotate(b0, u), slot[u]);
      }
      // The rest: tiles kt0 .. k_tiles - 1, at most 2 * kAhead - 1 (slot j % kAhead); only the
      // first kAhead - 1 of them can have a refill inside K.
VAECONV_UNROLL
      for (int j = 0; j < 2 * kAhead - 1; ++j) {
        if (kt0 + j < k_tiles) {
          if (Schedule::last_tiles_refill(j)) step(kt0 + j, slot[j % kAhead]);
          else {
            const int s = Schedule::buffer(kt0 + j);
            flush_slot(s, slot[j % kAhead]);
            __syncthreads();
            compute(acc, s, kt0 + j, 1);
          }
        }
      }
    }
    Arch::template wait<0>();
    if constexpr (Policy::kAtomReadsLds) {
      Atom::template wait_batches<0>();
      fence_all(acc);
      if constexpr (kPromote)
        if (k_tiles > 0) promote(acc, part);
    }
    __syncthreads();  // the epilogue may reuse the pipeline's LDS
  }

  // Helpers for a kernel's own compute (mainloop above) as well as this file's.
  // 16-byte units from a warp tile's first operand block to the block at row `row` (a multiple
  // of 8: the swizzle pattern restarts there, so the offset does not depend on the warp tile's
  // own row) and K step ka.
  VAECONV_HD static constexpr uint32_t block_offset16(int row, int ka) {
    return uint32_t(Tile::offset(row, ka * kChunksPerAtomK)) / 16;
  }

  // One batch of an LDS atom (wgmma) over kSteps K steps, shared by every kernel that runs one:
  // the stage math below, the halo kernel's K tiles, the tap-row kernel's single batch. Step ka
  // of atom (i, j) reads the operand blocks whose descriptors a_desc(i, ka) and b_desc(j, ka)
  // give; its first step adds into acc (first_scale 1) or overwrites it (0). after_step(ka) runs
  // after each K step's atoms (a kernel's K cursor). Nothing but atoms and those calls between
  // the batch's fence and commit: a branch there makes ptxas fence the accumulators (C7519).
  template <int kSteps, class ADesc, class BDesc, class AfterStep>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void lds_batch(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], ADesc&& a_desc, BDesc&& b_desc,
      int first_scale, AfterStep&& after_step) {
    fence_all(acc);
    Atom::begin_batch();
VAECONV_UNROLL
    for (int ka = 0; ka < kSteps; ++ka) {
VAECONV_UNROLL
      for (int i = 0; i < Policy::kAtomsM; ++i) {
        const uint64_t da = a_desc(i, ka);
VAECONV_UNROLL
        for (int j = 0; j < Policy::kAtomsN; ++j)
          Atom::mma(acc[i][j], da, b_desc(j, ka), ka == 0 ? first_scale : 1);
      }
      after_step(ka);
    }
    Atom::commit_batch();
  }

  // One K step of fragment atoms (mma.sync, MFMA), shared by the stage math and the halo kernel
  // on fragment atoms: each lane loads chunk `part` of atom row i's A fragment from a_chunk(i,
  // part) (an LDS address), its B fragments from K step ka of the B tile at lb (warp tile
  // column wn0), then multiplies.
  template <class AChunk>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void fragment_step(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], AChunk&& a_chunk, const char* lb, int ka,
      int wn0, int lane) {
    typename Atom::FragA fa[Policy::kAtomsM];
    typename Atom::FragB fb[Policy::kAtomsN];
VAECONV_UNROLL
    for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
      for (int part = 0; part < Layout::kLdsChunks; ++part)
        Atom::load_a(fa[i], part, a_chunk(i, part));
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

  template <int M, int N>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void zero(FragC (&f)[M][N]) {
VAECONV_UNROLL
    for (int i = 0; i < M; ++i)
VAECONV_UNROLL
      for (int j = 0; j < N; ++j)
VAECONV_UNROLL
        for (int r = 0; r < Layout::kCElems; ++r) f[i][j].v[r] = 0.f;
  }

  // Pins every accumulator's registers (Atom::fence_operands).
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void fence_all(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN]) {
VAECONV_UNROLL
    for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
      for (int j = 0; j < Policy::kAtomsN; ++j) Atom::fence_operands(acc[i][j]);
  }

  // LDS atoms (wgmma): one batch per K tile, committed and left in flight. Each instruction is
  // handed the descriptors of its operand blocks: rows wm0 + 64i (A) and wn0 + N j (B), K
  // chunk 2 ka — whole swizzle repeats, so Tile::offset is the unswizzled address there. The
  // first K step adds into acc (first_scale 1) or overwrites it (0: a promoted partial sum).
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void mma_stage_from_lds(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], char* smem, int s, int wm0, int wn0,
      int first_scale) {
    static_assert(Policy::kTileBytesA % Tile::kRepeatBytes == 0 &&
                      Policy::kStageBytes % Tile::kRepeatBytes == 0 && Atom::kM % 8 == 0 &&
                      Atom::kN % 8 == 0,
                  "every operand block starts on a swizzle repeat");
    static_assert(Policy::WTM % 8 == 0 && Policy::WTN % 8 == 0,
                  "warp tiles start on a swizzle repeat, so block offsets add to them");
    // Descriptors of the warp tile's first A and B blocks; every other block is a constant
    // number of 16-byte units further on (block_offset16), added to the descriptor.
    const uint64_t da = Atom::template descriptor<Tile::kRowBytes>(
        Arch::smem_u32(stage_a(smem, s)) + Tile::offset(wm0, 0));
    const uint64_t db = Atom::template descriptor<Tile::kRowBytes>(
        Arch::smem_u32(stage_b(smem, s)) + Tile::offset(wn0, 0));
    lds_batch<Policy::kAtomsK>(
        acc,
        [&](int i, int ka) VAECONV_FORCE_INLINE_LAMBDA {
          return da + block_offset16(i * Atom::kM, ka);
        },
        [&](int j, int ka) VAECONV_FORCE_INLINE_LAMBDA {
          return db + block_offset16(j * Atom::kN, ka);
        },
        first_scale, [](int) VAECONV_FORCE_INLINE_LAMBDA {});
  }

  // acc += part, after the batch that wrote part has been waited for.
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void promote(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN],
      FragC (&part)[Policy::kAtomsM][Policy::kAtomsN]) {
    fence_all(part);
VAECONV_UNROLL
    for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
      for (int j = 0; j < Policy::kAtomsN; ++j)
VAECONV_UNROLL
        for (int r = 0; r < Layout::kCElems; ++r) acc[i][j].v[r] += part[i][j].v[r];
  }

 private:
  // Fragment atoms (mma.sync, MFMA): each lane loads its A and B fragments from stage s.
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void mma_stage_fragments(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], char* smem, int s, int wm0, int wn0,
      int lane) {
    const char* la = stage_a(smem, s);
    const char* lb = stage_b(smem, s);
VAECONV_UNROLL
    for (int ka = 0; ka < Policy::kAtomsK; ++ka)
      fragment_step(
          acc,
          [&](int i, int part) VAECONV_FORCE_INLINE_LAMBDA {
            return la + Tile::offset(wm0 + i * Atom::kM + Layout::a_lds_row(lane),
                                     ka * kChunksPerAtomK + Layout::a_lds_chunk(lane, part));
          },
          lb, ka, wn0, lane);
  }
};

// A kernel body's LDS: a fixed-size array where the target sizes LDS at compile time (AMD: the
// size then shows in the compiler's resource report), dynamic shared memory elsewhere (tiles may
// exceed 48 KiB; the launch passes Kernel::kSmemBytes). The dynamic array is aligned to 1 KiB,
// the largest swizzle repeat: a wgmma descriptor's swizzle is a function of the absolute shared
// address. (AMD has no such atom: its static LDS keeps 16-byte alignment.)
// AMD: a kernel of a gfx950-only table entry (arch::CdnaGfx950Only) has no body on gfx942's
// device pass, only a trap; every other kernel's LDS must fit what its arch type allows.
template <class Kernel, class Arch>
VAECONV_DEVICE VAECONV_FORCE_INLINE void run_with_lds(const ConvParams& p) {
  if constexpr (Arch::kStaticLds) {
    if constexpr (!Arch::kBodyOnThisTarget) {
      (void)p;
      __builtin_trap();  // not for this target: the dispatch never launches it here
    } else {
      static_assert(Kernel::kSmemBytes <= Arch::kMaxLdsBytes,
                    "the kernel's LDS exceeds what its arch type allows (gfx942 64 KiB: a larger "
                    "tile belongs in the gfx950 table, on arch::CdnaGfx950Only)");
      __shared__ __attribute__((aligned(16))) char smem[Kernel::kSmemBytes];
      Kernel::run(p, smem);
    }
  } else {
    extern __shared__ __attribute__((aligned(1024))) char smem_dynamic[];
    Arch::check_lds_alignment(smem_dynamic);  // debug builds: what wgmma relies on
    Kernel::run(p, smem_dynamic);
  }
}

}  // namespace vaeconv::kernel
