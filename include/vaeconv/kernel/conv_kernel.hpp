// vaeconv/kernel/conv_kernel.hpp — the implicit-GEMM conv kernel, composed from its policies.
//
//   Policy    tile shape + the architecture's atom and copy (tile_policy.hpp, arch/)
//   Geometry  which conv: stride, pad and upsample folded into the gather (conv_gather.hpp)
//   Pipeline  kStages LDS buffers and the atom loop, shared with every kernel (block_gemm.hpp)
//   Epilogue  bias + residual + coalesced NHWC bf16 store (epilogue.hpp)
//   Slices    a SlicedKTileShape's groups of warps, each over its share of K (sliced_k.hpp)
//
// Tiles: tile i is (pixel block, Cout tile) i % tiles_per_frame of output frame (n, ot) =
// i / tiles_per_frame, with the Cout tiles of one pixel block adjacent, so they share the input
// rows in L2. Block b computes tiles b, b + gridDim.x, ...: one tile per block when the grid
// covers them all, or several (a persistent grid, one block per resident slot) when the policy
// can overlap a tile's epilogue with the next tile's first copies (kOverlapEpilogue): the next
// tile's prologue then fills buffers 0 .. kAhead-1 while the epilogue stages its accumulators
// in the buffers above them, so the pipeline does not drain and refill between tiles.
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/block_gemm.hpp"
#include "vaeconv/kernel/block_tiling.hpp"
#include "vaeconv/kernel/cached_frames.hpp"
#include "vaeconv/kernel/temporal_gather.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue.hpp"
#include "vaeconv/kernel/sliced_k.hpp"
#include "vaeconv/kernel/tile_policy.hpp"

namespace vaeconv::kernel {

// The A tile cursor's row test (conv_gather.hpp, kMaskRows) of an implicit-GEMM kernel: the mask
// where the loads read the folded offsets only (AMD); on cp.async targets the flag and a select
// for the cached conv's gather, the mask for the others: each the faster form of its kernels on
// sm_90a (docs/perf-notes.md, W20).
template <class Geo, class Arch>
inline constexpr bool kGatherMasksRows =
    LoadsReadFolded<Arch>::value || !std::is_same_v<Geo, CachedCausalGeometry>;

template <class Policy, class Geo, bool kVectorGather>
struct ConvKernel {
  using Gemm = BlockGemm<Policy>;
  using Arch = typename Policy::ArchT;
  using Tile = typename Gemm::Tile;
  using Slot = typename Gemm::Slot;
  static constexpr int kRowsA = Gemm::kRowsA, kRowsB = Gemm::kRowsB, kRowStep = Gemm::kRowStep;
  // Groups of warps that split K (SlicedKTileShape; 1: the block walks all of K).
  static constexpr int kSlices = Policy::kSlicesK;
  using Reduce = SliceReduce<Policy>;
  static constexpr int max_of(int a, int b) { return a > b ? a : b; }
  // The LDS: the pipeline's (one per group) or the epilogue's staging, and a sliced block's
  // exchange of partial sums, the largest (each in turn reuses all of it).
  static constexpr int kSmemBytes =
      kSlices == 1 ? EpilogueShape<Policy>::kKernelBytes
                   : max_of(max_of(kSlices * Policy::kPipelineBytes,
                                   EpilogueShape<Policy>::kKernelBytes),
                            Reduce::kBytes);
  // The launch's view of the kernel (api/conv.hpp, api/kernel_plan.hpp).
  using PolicyT = Policy;
  using Geometry = Geo;
  using Tiling = LinearTiles;
  // The K tiles of the conv, and of each group's main loop (all of them but in a sliced block,
  // whose dispatch splits them evenly: api/kernel_plan.hpp).
  VAECONV_HD static int k_tiles_total(const ConvParams& p) {
    return (p.k + Policy::BK - 1) / Policy::BK;
  }
  VAECONV_HD static int k_tiles(const ConvParams& p) { return k_tiles_total(p) / kSlices; }
  static_assert(kSlices == 1 || (kVectorGather && !LaneKCursor<typename Policy::AtomT>::value),
                "a sliced block's groups start their tile cursors at their share of K");


  // The element-wise gather stores to LDS at issue, so its buffer must not be one a wave still
  // reads: a buffer per stage (pipeline_schedule.hpp).
  static_assert(kVectorGather || Policy::kLdsBuffers == Policy::kStages,
                "a copy that writes LDS at issue keeps a buffer per stage");

  // The epilogue's staging fits above the prologue's buffers (one group of warps: a sliced
  // block's LDS holds the partial sums between its tiles).
  static constexpr bool kOverlapEpilogue = EpilogueShape<Policy>::kFitsAboveAhead && kSlices == 1;
  static constexpr bool kPersistent = kOverlapEpilogue;  // a grid of the resident blocks

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(const ConvParams& p, char* smem) {
    // A sliced block's thread: its group of warps, its place in the group, and the group's LDS
    // buffers, which `smem` points at from here on (the block's LDS lies group_offset before it:
    // the exchange of partial sums and the epilogue use all of it). `smem` moves rather than a
    // second pointer beside it, which changed the register allocation of the unsliced kernels.
    // (The group is whole waves: a scalar register on AMD, not a VGPR kept across the K loop.)
    const int slice = kSlices == 1 ? 0 : Arch::wave_uniform(threadIdx.x / Policy::kThreads);
    const int tid = kSlices == 1 ? threadIdx.x : threadIdx.x % Policy::kThreads;
    const int group_offset = slice * Policy::kPipelineBytes;
    if constexpr (kSlices > 1) smem += group_offset;
    const int lane = tid % Policy::kWaveSize, warp = tid / Policy::kWaveSize;
    int tile = blockIdx.x;
    if (tile >= p.tiles) return;
    BlockCoord b = kernel::tile_coord<LinearTiles, Policy::BM, Policy::BN>(p, tile);

    // Copy roles: thread -> (row0, chunk) of both operand tiles.
    const int chunk = tid % Policy::kChunksK, row0 = tid / Policy::kChunksK;
    constexpr int kElemBytes = Policy::kElemBytes;
    GatherA<Geo, kRowsA, kRowStep, Policy::BK, kElemBytes, !kVectorGather,
            LaneKCursor<typename Policy::AtomT>::value, kGatherMasksRows<Geo, Arch>>
        ga;
    CopyA<Geo, Arch> copy_a;  // the A view(s): x's, and the cache's for a cached conv
    // B keeps its folded offsets where the staged loads read them (AMD: BlockGemm's FoldsRange).
    using Folded = FoldedWeightGather<kRowsB, kRowStep, Policy::BK, kElemBytes>;
    constexpr bool kFoldB = FoldsRange<Folded, Arch>::value;
    std::conditional_t<kFoldB, Folded, WeightGather<kRowsB, kRowStep, Policy::BK, kElemBytes>> gb;
    const char* x_frame = nullptr;
    auto view_a = Arch::make_view(p.x, p.x_view_bytes);
    const auto view_b = Arch::make_view(p.w, p.w_view_bytes);
    // Points the gathers at the group's first K tile of block tile b (tile 0 but in a sliced
    // block).
    auto start_tile = [&]() VAECONV_FORCE_INLINE_LAMBDA {
      ga.init(p, b, row0, chunk);
      if constexpr (kFoldB) gb.init(p, b, row0, chunk, Policy::BN);
      else gb.init(b, row0, chunk);
      x_frame = static_cast<const char*>(p.x) + kElemBytes * input_view_offset(p, b);
      view_a = Arch::make_view(x_frame, p.x_view_bytes);
      copy_a.template start<kElemBytes>(p, b);
      if constexpr (kSlices > 1) {
        const int first = slice * ConvKernel::k_tiles(p);
        ga.skip(p, first);
        gb.skip(first);
      }
    };

    // Issues the copy of K tile `kt` (the gathers' current position) into LDS buffer `s`.
    auto issue = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      if constexpr (kVectorGather) {
        copy_a.template copy<Gemm>(sl, smem, s, row0, chunk, ga, view_a);
      } else {
        // Element-wise (Cin not a multiple of the chunk): synchronous loads packed into chunks.
        using Elem = typename std::conditional<kElemBytes == 2, uint16_t, uint8_t>::type;
        constexpr int kChunkElems = Policy::kChunkElems, kPerWord = 4 / kElemBytes;
        const Elem* x = reinterpret_cast<const Elem*>(x_frame);
        ChunkTaps<Geo, kChunkElems> taps;
        taps.locate(p, ga);
        char* la = Gemm::stage_a(smem, s);
VAECONV_UNROLL
        for (int i = 0; i < kRowsA; ++i) {
          const uint32_t mask = taps.row_mask(ga, i);
          uint32_t w[4] = {0, 0, 0, 0};
VAECONV_UNROLL
          for (int e = 0; e < kChunkElems; ++e)  // fully unrolled: w[] stays in registers
            if (taps.valid(mask, e))
              w[e / kPerWord] |= uint32_t(x[taps.at(p, ga, i, e)])
                                 << (8 * kElemBytes * (e % kPerWord));
          Arch::template store_lds<kElemBytes>(la + Tile::offset(row0 + i * kRowStep, chunk),
                                               make_uint4(w[0], w[1], w[2], w[3]));
        }
      }
      Gemm::copy_b(sl, smem, s, row0, chunk, p, gb, view_b);
      Arch::commit();
      ga.advance(p);
      gb.advance();
    };
    // Writes register-staged data of buffer `s` to LDS (a no-op where the copy is asynchronous).
    auto flush = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      if constexpr (kVectorGather) Gemm::flush_a(sl, smem, s, row0, chunk);
      Gemm::flush_b(sl, smem, s, row0, chunk);
    };

    typename Gemm::FragC acc[Policy::kAtomsM][Policy::kAtomsN];
    const int wm0 = (warp % Policy::kWarpsM) * Policy::WTM;
    const int wn0 = (warp / Policy::kWarpsM) * Policy::WTN;
    const int k_tiles = ConvKernel::k_tiles(p);
    Slot slot[Gemm::kAhead];
    start_tile();
    Gemm::prologue(slot, k_tiles, issue);
    if constexpr (!kOverlapEpilogue) {  // one tile per block: the grid covers every tile
      Gemm::mainloop(acc, smem, k_tiles, wm0, wn0, lane, slot, issue, flush);
      if constexpr (kSlices > 1) {  // the groups' partial sums into group 0's (sliced_k.hpp)
        char* const block_lds = smem - group_offset;
        Reduce::add_into_first(acc, block_lds, slice, tid);
        Epilogue<Policy>::run(p, b, LinearRows{b.m0, p.frame_pixels}, acc, wm0, wn0, lane,
                              block_lds, slice == 0);
      } else {
        epilogue(p, b, acc, wm0, wn0, lane, smem);
      }
    } else {
      for (;;) {  // a persistent block: tiles blockIdx.x, blockIdx.x + gridDim.x, ...
        Gemm::mainloop(acc, smem, k_tiles, wm0, wn0, lane, slot, issue, flush);
        const BlockCoord done = b;
        tile += int(gridDim.x);
        const bool more = tile < p.tiles;
        if (more) {  // the next tile's first K tiles land in buffers 0 .. kAhead-1 meanwhile
          b = kernel::tile_coord<LinearTiles, Policy::BM, Policy::BN>(p, tile);
          start_tile();
          Gemm::prologue(slot, k_tiles, issue);
        }
        epilogue(p, done, acc, wm0, wn0, lane, smem + Policy::kAheadBytes);
        if (!more) break;
      }
    }
  }

 private:
  template <class FragC>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void epilogue(
      const ConvParams& p, const BlockCoord& b, FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN],
      int wm0, int wn0, int lane, char* staging) {
    Epilogue<Policy>::run(p, b, LinearRows{b.m0, p.frame_pixels}, acc, wm0, wn0, lane, staging);
  }
};

template <class Policy, class Geo, bool kVectorGather>
__global__ void __launch_bounds__(Policy::kBlockThreads, Policy::kMinBlocks)
    conv_kernel(ConvParams p) {
  run_with_lds<ConvKernel<Policy, Geo, kVectorGather>, typename Policy::ArchT>(p);
}

// The kernel function of an instance (api/conv.hpp launches it).
template <class Policy, class Geo, bool kVectorGather>
constexpr auto kernel_entry(const ConvKernel<Policy, Geo, kVectorGather>*) {
  return &conv_kernel<Policy, Geo, kVectorGather>;
}

}  // namespace vaeconv::kernel
