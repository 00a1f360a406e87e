// vaeconv/kernel/tile_policy.hpp — the tile vocabulary of the conv kernel.
//
//   block tile  BM x BN x BK   one workgroup: BM output pixels x BN output channels, K in steps of BK
//   warp tile   WTM x WTN      one atom group: (BM / kWarpsM) x (BN / kWarpsN)
//   atom        kM x kN x kK   one matrix instruction (arch layer), repeated kAtomsM x kAtomsN
//   atom group  kWaveSize      the threads that execute one atom: a wave (AMD, 64), a warp
//                              (mma.sync, 32) or a warpgroup (wgmma, 128); "warp" below means it
//   stages      kStages        the K pipeline's depth: the tile computed and the kStages - 1
//                              copies in flight; LDS buffers as many (kLdsStages), except for a
//                              TwoBufferTileShape (two) and a OneBufferTileShape (one); a target
//                              whose copies land in LDS at issue (cp.async) keeps one per stage
//                              (TilePolicy::kLdsBuffers)
//   chunk       16 bytes       the unit of every copy and LDS read: 8 bf16 or 16 fp8 along K
//   min blocks  kMinBlocks     resident blocks per SM/CU the register budget must allow
//   K slices    kSlicesK       groups of kWarps warps in one block, each computing the whole
//                              block tile over its own share of the K tiles, their partial sums
//                              added before the epilogue (SlicedKTileShape; 1 elsewhere)
//
// BK counts elements; the element size comes from the atom (bf16 or fp8), so a bf16 BK = 32 and
// an fp8 BK = 64 are the same bytes and the same LDS layout.
// A TilePolicy is a compile-time value; the shipped configurations are the few listed in
// kernel/tile_table.hpp, not a zoo.
#pragma once
#include <type_traits>

#include "vaeconv/kernel/pipeline_schedule.hpp"
#include "vaeconv/kernel/tile_rounds.hpp"

namespace vaeconv::kernel {

// Atoms that read their operands from LDS themselves and run asynchronously (wgmma) say so with
// kOperandsFromLds; every other atom loads register fragments (block_gemm.hpp runs both).
template <class Atom, class = void>
struct AtomReadsLds : std::false_type {};
template <class Atom>
struct AtomReadsLds<Atom, std::enable_if_t<Atom::kOperandsFromLds>> : std::true_type {};
// ... and, when their accumulation is not fp32-exact, that each K tile's batch must be added into
// the fp32 accumulators separately (kPromoteEachTile: e4m3 wgmma).
template <class Atom, class = void>
struct AtomPromotesEachTile : std::false_type {};
template <class Atom>
struct AtomPromotesEachTile<Atom, std::enable_if_t<Atom::kPromoteEachTile>> : std::true_type {};

// MinBlocks: the blocks per SM/CU the compiler must leave registers for (__launch_bounds__'s
// second argument). The mma.sync atom's fixed issue latency needs several warps per scheduler to
// hide, which a 250-register thread does not leave room for (docs/perf-notes.md).
template <int BM_, int BN_, int BK_, int WarpsM_, int WarpsN_, int Stages_, int MinBlocks_ = 1>
struct TileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int kWarpsM = WarpsM_, kWarpsN = WarpsN_, kWarps = WarpsM_ * WarpsN_;
  static constexpr int kStages = Stages_;
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr int WTM = BM / kWarpsM, WTN = BN / kWarpsN;
  static_assert(BM % kWarpsM == 0 && BN % kWarpsN == 0, "warps must divide the block tile");
  static_assert(kStages >= 2, "at least double buffering");
  static constexpr int kLdsStages = Stages_;  // LDS buffers where copies stage in registers
  static constexpr int kSlicesK = 1;          // one group of warps walks all of K
};

// A tile whose K pipeline keeps its kStages - 1 copies in flight in staging registers and only two
// LDS buffers, where the target stages copies in registers (AMD; pipeline_schedule.hpp: a flush
// overwrites the buffer of two tiles back). The same tile everywhere else (cp.async copies land in
// LDS: kStages buffers there). Deep prefetch at the LDS of double buffering: more resident blocks.
template <int BM_, int BN_, int BK_, int WarpsM_, int WarpsN_, int Stages_, int MinBlocks_ = 1>
struct TwoBufferTileShape : TileShape<BM_, BN_, BK_, WarpsM_, WarpsN_, Stages_, MinBlocks_> {
  static constexpr int kLdsStages = 2;
};

// The same with one LDS buffer where the target stages copies in registers: each K tile's flush
// then waits at a barrier of its own for every wave to finish the tile before it
// (pipeline_schedule.hpp kBarrierBeforeFlush), two barriers a K tile for the LDS of one tile. For
// a kernel whose other LDS is large (the halo kernel's patch), where one buffer less is one more
// resident block.
template <int BM_, int BN_, int BK_, int WarpsM_, int WarpsN_, int Stages_, int MinBlocks_ = 1>
struct OneBufferTileShape : TileShape<BM_, BN_, BK_, WarpsM_, WarpsN_, Stages_, MinBlocks_> {
  static constexpr int kLdsStages = 1;
};

// A block of Slices groups of Shape's warps, each group running Shape's whole K pipeline (its own
// LDS buffers, its own loads) over 1 / Slices of the K tiles, the groups' fp32 partial sums then
// added through LDS before one epilogue (kernel/sliced_k.hpp). For the grids that leave a CU too
// few blocks to hide a block's K-tile chain: each block's chain is 1 / Slices as long and the CU
// holds the groups' waves together, with no second launch, no workspace and a fixed order of the
// sum. The dispatch gives it only convs whose K tiles split evenly (api/kernel_plan.hpp), so the
// groups run the same trips and pass the same barriers.
template <class Shape, int Slices>
struct SlicedKTileShape : Shape {
  static_assert(Shape::kSlicesK == 1, "slices of a shape that is not sliced");
  static_assert(Slices >= 2, "a sliced block has two or more groups");
  static constexpr int kSlicesK = Slices;
};

// A shape whose block is Shape's warps as consumers plus ProducerWarpgroups producer warpgroups
// that do all the copies (kernel/warp_specialized_conv_kernel.hpp: NVIDIA sm_90a, the wgmma atom),
// with an epilogue staging of its own, StagingBytes after the pipeline: the pipeline's buffers
// belong to the producers, which fill them with the next tile's K tiles while the epilogue runs.
// ProducerRegisters > 0: the producers keep that many registers a thread and the consumers share
// the rest of the block's pool (kernel/register_split.hpp); 0: no split, except for a promoting
// atom (e4m3), whose producers keep kPromoteProducerRegisters (register_split.hpp).
template <class Shape, int StagingBytes, int ProducerWarpgroups = 1, int ProducerRegisters = 0>
struct WarpSpecializedTileShape : Shape {
  static_assert(Shape::kSlicesK == 1, "a warp-specialized block walks all of K");
  static_assert(ProducerWarpgroups == 1 || ProducerWarpgroups == 2, "one or two producers");
  static constexpr bool kWarpSpecialized = true;
  static constexpr int kStagingBytes = StagingBytes;
  static constexpr int kProducerWarpgroups = ProducerWarpgroups;
  static constexpr int kProducerRegisters = ProducerRegisters;
};

template <class Policy, class = void>
struct IsWarpSpecialized : std::false_type {};
template <class Policy>
struct IsWarpSpecialized<Policy, std::enable_if_t<Policy::kWarpSpecialized>> : std::true_type {};

// A tile shape bound to an architecture's atom and wave size, and the packed epilogue's store:
// BulkStore hands each staged output row to the copy engine where the arch has one
// (Arch::kBulkStore, epilogue.hpp), else 16-byte pieces through registers. tile_table.hpp sets it
// per kernel where it measured faster.
template <class Shape, class Arch, class Atom, bool BulkStore = false>
struct TilePolicy : Shape {
  using ArchT = Arch;
  using AtomT = Atom;
  static constexpr int kWaveSize = Atom::Layout::kLanes;  // threads of one atom group
  static_assert(kWaveSize % Arch::kWaveSize == 0, "an atom group is whole waves");
  static constexpr bool kAtomReadsLds = AtomReadsLds<Atom>::value;
  static constexpr bool kPromoteEachTile = AtomPromotesEachTile<Atom>::value;
  static constexpr int kElemBytes = Atom::Layout::kElemBytes;   // 2 (bf16) or 1 (fp8)
  static constexpr int kChunkElems = 16 / kElemBytes;           // elements per 16-byte chunk
  static constexpr int kChunksK = Shape::BK / kChunkElems;      // chunks per LDS row
  static_assert(kChunksK == 2 || kChunksK == 4 || kChunksK == 8, "LDS rows of 32, 64 or 128 bytes");
  static_assert(128 % (Shape::BK * kElemBytes) == 0,
                "packed rows (a multiple of 128 bytes, packed_weights.hpp) are whole K tiles");
  // Threads of one group of warps (the whole block unless the shape is sliced in K), which the
  // copy roles, the pipeline and the warp tiles are laid out over; the block launches
  // kBlockThreads = kSlicesK groups of them.
  static constexpr int kThreads = Shape::kWarps * kWaveSize;
  static constexpr int kBlockThreads = kThreads * Shape::kSlicesK;
  static constexpr int kAtomsM = Shape::WTM / Atom::kM;
  static constexpr int kAtomsN = Shape::WTN / Atom::kN;
  static constexpr int kAtomsK = Shape::BK / Atom::kK;
  static_assert(Shape::WTM % Atom::kM == 0 && Shape::WTN % Atom::kN == 0, "atoms tile the warp");
  static_assert(Shape::BK % Atom::kK == 0, "atoms tile BK");

  // Each thread copies whole 16-byte chunks; rows are spread over the block.
  static constexpr int kRowsPerPassA = kThreads / kChunksK;
  static constexpr int kRowsPerThreadA = Shape::BM / kRowsPerPassA;
  // B may have fewer rows than the passes cover (BN not a multiple of kRowsPerPassA): then the
  // surplus rows copy nothing on cp.async targets (kGuardB) and stage zeros on register-staged
  // ones (kLdsRowsB below).
  static constexpr int kRowsPerThreadB = (Shape::BN + kRowsPerPassA - 1) / kRowsPerPassA;
  static constexpr bool kGuardB = Shape::BN % kRowsPerPassA != 0;
  static_assert(kThreads % kChunksK == 0, "threads cover whole rows");
  static_assert(Shape::BM % kRowsPerPassA == 0, "A rows split evenly over the threads");

  // Where copies are staged in registers (AMD: Arch::Slot holds them), not cp.async.
  static constexpr bool kRegisterStaged = !std::is_empty_v<typename Arch::template Slot<1>>;
  // Rows of a B buffer in LDS (tile_rounds.hpp: staged_lds_rows_b). A register-staged target's
  // buffer of a B tile past one pass has every pass's rows: a thread writes its staged row past
  // BN (zeros, never read) into that padding instead of branching around the write, which costs
  // each K tile an exec mask save and restore, a branch and a load wait of its own
  // (docs/perf-notes.md). cp.async targets copy nothing there (copy_b's guard).
  static constexpr int kLdsRowsB =
      kRegisterStaged ? staged_lds_rows_b<Shape>(kElemBytes) : Shape::BN;
  static_assert(!kRegisterStaged || kThreads == Shape::kWarps * 64,
                "staged_lds_rows_b counts a wave64 target's threads");
  static constexpr bool kGuardFlushB = kGuardB && kLdsRowsB < kRowsPerThreadB * kRowsPerPassA;
  // Rows one K tile's copy stages per thread (a buffer load each): A's and B's.
  static constexpr int kStagedRows = kRowsPerThreadA + kRowsPerThreadB;
  static_assert(kGuardFlushB || kLdsRowsB >= kRowsPerThreadB * kRowsPerPassA,
                "every row a thread writes unguarded lies inside its B buffer");

  static constexpr int kTileBytesA = Shape::BM * Shape::BK * kElemBytes;
  static constexpr int kTileBytesB = kLdsRowsB * Shape::BK * kElemBytes;
  static constexpr int kStageBytes = kTileBytesA + kTileBytesB;
  // LDS buffers: the shape's where copies are staged in registers, else one per stage (cp.async
  // writes LDS at issue).
  // Shape::kLdsStages (the AMD count) is what the plans, the round rule and the epilogue's
  // staging read on every target, so that a portable twin stages and dispatches as AMD does.
  static constexpr int kLdsBuffers = kRegisterStaged ? Shape::kLdsStages : Shape::kStages;
  static constexpr int kPipelineBytes = kStageBytes * kLdsBuffers;
  // The K pipeline's depth (pipeline_schedule.hpp): batches an asynchronous atom leaves in flight
  // across a barrier (a promoting one waits for each), and the LDS of the K tiles copied ahead of
  // the one computed, buffers 0 .. kAhead-1 while a block starts a tile.
  static constexpr int kBatchesInFlight = kAtomReadsLds && !kPromoteEachTile ? 1 : 0;
  // A promoting atom starts its batch before the K tile's refill (pipeline_schedule.hpp,
  // kBatchFirst): the copies' address arithmetic then runs under the batch.
  using Schedule = PipelineSchedule<Shape::kStages, kBatchesInFlight, kPromoteEachTile, kLdsBuffers>;
  static constexpr int kAheadBytes =
      (Schedule::kAhead < kLdsBuffers ? Schedule::kAhead : kLdsBuffers) * kStageBytes;
  static constexpr bool kBulkStoreEpilogue = BulkStore && Arch::kBulkStore;
};

}  // namespace vaeconv::kernel
