// vaeconv/kernel/warp_specialized_conv_kernel.hpp — the implicit-GEMM conv kernel with a producer
// warpgroup (NVIDIA sm_90a, the wgmma atom).
//
// ConvKernel (conv_kernel.hpp) has every warp both copy and multiply, meeting at a block barrier
// per K tile; with wgmma that leaves the tensor pipe idle at each barrier and while a block fills
// its pipeline and stores its tile (docs/performance.md, the profiles of issue 28). Here the
// block's roles are split, as in cuDNN's and CUTLASS's sm_90 kernels:
//   consumers  Shape::kWarps warpgroups (threads 0 .. kConsumerThreads - 1): wait until a stage
//              is full, issue its wgmma batch, release the stage the previous batch read, and at
//              the end of a block tile run the epilogue (its own LDS, after the pipeline's);
//   producer   one or two warpgroups (the last 128 or 256 threads; Shape::kProducerWarpgroups):
//              the same gathers as ConvKernel (GatherA, CopyA's views, the weight gather), laid
//              out over those threads, each K tile's cp.async copies into a free stage, the
//              stage's full barrier armed to complete when they land (MBarrier::arrive_on_copies).
// Stages form a ring of kStages buffers with two mbarriers each (arch/nvidia_mbarrier.hpp):
//   full[s]   one arrival per producer thread, each when its copies of the stage landed;
//   empty[s]  one arrival per consumer warp, once the batch that read the stage has retired.
// K tile u of the block (counted over all its block tiles) lives in stage u % kStages, and is that
// stage's use u / kStages: consumers wait for full[s] at parity (u / kStages) & 1, the producer
// for empty[s] at the parity before it (pipeline_schedule.hpp's StageRing).
// The grid is persistent (the resident blocks, one per SM): block b computes tiles b,
// b + gridDim.x, ... The producer runs ahead into the next tile while the consumers store the last
// one, so neither a tile's first copies nor its epilogue leave the copy engine idle.
// wgmma reads the stages through the async proxy: each consumer thread fences the proxies
// (fence.proxy.async) after its wait on full[s], before the batch.
// A second producer warpgroup halves each producer thread's copies per K tile: one warpgroup
// issuing all 2560 of a 128x192x64 tile's could not keep up with ConvKernel's eight copying warps
// (docs/perf-notes.md).
// sm_90a's tables ship it where it measured faster (kernel/tile_table.hpp: the bf16 causal tile,
// the e4m3 192-wide tile); the GPU suite runs it there.
// Its protocol is also checked on the host (tests/host/test_warp_specialized_ring.cpp), and
// sweeps build it as a candidate (bench/sweep.sh flags wsN, pwN, prN, c192; docs/perf-notes.md).
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/arch/nvidia_mbarrier.hpp"
#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/block_gemm.hpp"
#include "vaeconv/kernel/block_tiling.hpp"
#include "vaeconv/kernel/cached_frames.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_kernel.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue.hpp"
#include "vaeconv/kernel/pipeline_schedule.hpp"
#include "vaeconv/kernel/register_split.hpp"
#include "vaeconv/kernel/tile_policy.hpp"

namespace vaeconv::kernel {

template <class Policy, class Geo, bool kVectorGather>
struct WarpSpecializedConvKernel {
  static_assert(kVectorGather, "the producer runs the 16-byte gather (Cin: whole chunks)");
  static_assert(Policy::kAtomReadsLds && !Policy::kRegisterStaged,
                "a producer warpgroup feeds an LDS atom (wgmma) with copies that land in LDS");
  using Arch = typename Policy::ArchT;
  using Atom = typename Policy::AtomT;
  using Bar = arch::MBarrier;
  static constexpr int kStages = Policy::kStages;
  static constexpr int kConsumerThreads = Policy::kThreads;      // Shape::kWarps warpgroups
  static constexpr int kConsumerWarps = kConsumerThreads / 32;
  static constexpr int kProducerWarpgroups = Policy::kProducerWarpgroups;
  static constexpr int kProducerThreads = 128 * kProducerWarpgroups;
  static_assert(Policy::kWaveSize == 128, "the atom group is a warpgroup");
  // A promoting atom (e4m3) keeps a K tile's partial sums beside the accumulators: the producer
  // gives up registers for them (kPromoteProducerRegisters, register_split.hpp).
  static constexpr bool kPromote = Policy::kPromoteEachTile;
  // The consumers share what the producers leave of the block's launch pool (register_split.hpp).
  // A shape may set the producers' registers (Policy::kProducerRegisters): e.g. two producers of
  // 56 leave each of two consumers 200 (for 96 accumulators) of the 128 a thread that 512 threads
  // launch with.
  static constexpr bool kSplits = kPromote || Policy::kProducerRegisters > 0;
  static constexpr RegisterSplit kSplit = register_split(
      kConsumerThreads / 128,
      Policy::kProducerRegisters > 0 ? Policy::kProducerRegisters : kPromoteProducerRegisters,
      kProducerWarpgroups);
  static_assert(!kPromote || kConsumerThreads == 256, "the register split is for two consumers");

  // The producers' view of the tile: the same stages laid out over their warpgroups' copy roles.
  using ProducerShape =
      TileShape<Policy::BM, Policy::BN, Policy::BK, kProducerWarpgroups, 1, kStages, 1>;
  using ProducerPolicy = TilePolicy<ProducerShape, Arch, Atom>;
  using Copy = BlockGemm<ProducerPolicy>;
  static_assert(ProducerPolicy::kStageBytes == Policy::kStageBytes &&
                    ProducerPolicy::kTileBytesA == Policy::kTileBytesA,
                "producer and consumers agree on the stage layout");
  using Gemm = BlockGemm<Policy>;

  // The launch's view (api/conv.hpp, api/kernel_plan.hpp): every warp of the block.
  struct LaunchPolicy : Policy {
    static constexpr int kBlockThreads = kConsumerThreads + kProducerThreads;
    static constexpr int kMinBlocks = 1;
  };
  // The epilogue's view: the consumers store, at their own barrier, through the staging LDS
  // (its size as the pipeline's, so EpilogueShape fits its slabs, or row groups, into it).
  struct EpiloguePolicy : Policy {
    static constexpr int kBlockThreads = kConsumerThreads;
    static constexpr int kPipelineBytes = Policy::kStagingBytes;
    static constexpr int kLdsStages = 1, kLdsBuffers = 1, kAheadBytes = 0;
    static constexpr int kStages = 2;  // fewer buffers than stages: row groups allowed
    VAECONV_DEVICE VAECONV_FORCE_INLINE static void store_barrier() {
      Bar::sync_threads<1, kConsumerThreads>();
    }
  };
  using Epi = EpilogueShape<EpiloguePolicy>;
  static_assert(Epi::kBytes <= Policy::kStagingBytes, "the fp32 staging fits its LDS");

  static constexpr int kBarrierOffset = Policy::kPipelineBytes + Policy::kStagingBytes;
  static_assert(kBarrierOffset % 8 == 0, "mbarriers are 8-byte aligned");
  static constexpr int kSmemBytes = kBarrierOffset + 2 * kStages * 8;

  using PolicyT = LaunchPolicy;
  using Geometry = Geo;
  using Tiling = LinearTiles;
  static constexpr bool kPersistent = true;
  VAECONV_HD static int k_tiles(const ConvParams& p) { return (p.k + Policy::BK - 1) / Policy::BK; }

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(const ConvParams& p, char* smem) {
    // Shared addresses of the barriers (8 bytes each): full[s] at full + 8 s, empty[s] likewise.
    const uint32_t full = Arch::smem_u32(smem + kBarrierOffset);
    const uint32_t empty = full + 8 * kStages;
    if (threadIdx.x == 0) {
      for (int s = 0; s < kStages; ++s) {
        Bar::init(full + 8 * s, kProducerThreads);
        Bar::init(empty + 8 * s, kConsumerWarps);
      }
      Bar::fence_init();
    }
    __syncthreads();
    if (int(blockIdx.x) >= p.tiles) return;
    const int k_tiles = WarpSpecializedConvKernel::k_tiles(p);
    if (int(threadIdx.x) >= kConsumerThreads) {
      if constexpr (kSplits) arch::WarpgroupRegisters::decrease_to<kSplit.producer>();
      produce(p, smem, full, empty, k_tiles);
    } else {
      if constexpr (kSplits) arch::WarpgroupRegisters::increase_to<kSplit.consumer>();
      consume(p, smem, full, empty, k_tiles);
    }
  }

 private:
  using Ring = StageRing<kStages>;

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void produce(const ConvParams& p, char* smem,
                                                          uint32_t full, uint32_t empty,
                                                          int k_tiles) {
    const int tid = int(threadIdx.x) - kConsumerThreads;
    const int chunk = tid % Policy::kChunksK, row0 = tid / Policy::kChunksK;
    constexpr int kElemBytes = Policy::kElemBytes;
    GatherA<Geo, Copy::kRowsA, Copy::kRowStep, Policy::BK, kElemBytes, false,
            LaneKCursor<Atom>::value, kGatherMasksRows<Geo, Arch>>
        ga;
    CopyA<Geo, Arch> copy_a;
    WeightGather<Copy::kRowsB, Copy::kRowStep, Policy::BK, kElemBytes> gb;
    const auto view_b = Arch::make_view(p.w, p.w_view_bytes);
    typename Copy::Slot slot;  // empty: cp.async stages nothing in registers
    Ring ring;
    for (int tile = int(blockIdx.x); tile < p.tiles; tile += int(gridDim.x)) {
      const BlockCoord b = kernel::tile_coord<LinearTiles, Policy::BM, Policy::BN>(p, tile);
      ga.init(p, b, row0, chunk);
      gb.init(b, row0, chunk);
      const char* x_frame = static_cast<const char*>(p.x) + kElemBytes * input_view_offset(p, b);
      const auto view_a = Arch::make_view(x_frame, p.x_view_bytes);
      copy_a.template start<kElemBytes>(p, b);
      for (int kt = 0; kt < k_tiles; ++kt) {
        Bar::wait(empty + 8 * ring.stage, ring.producer_parity());
        copy_a.template copy<Copy>(slot, smem, ring.stage, row0, chunk, ga, view_a);
        Copy::copy_b(slot, smem, ring.stage, row0, chunk, p, gb, view_b);
        Bar::arrive_on_copies(full + 8 * ring.stage);
        ga.advance(p);
        gb.advance();
        ring.advance();
      }
    }
    Bar::wait_all_copies();
  }

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void consume(const ConvParams& p, char* smem,
                                                          uint32_t full, uint32_t empty,
                                                          int k_tiles) {
    const int tid = int(threadIdx.x);
    const int lane = tid % Policy::kWaveSize, warp = tid / Policy::kWaveSize;
    const int wm0 = (warp % Policy::kWarpsM) * Policy::WTM;
    const int wn0 = (warp / Policy::kWarpsM) * Policy::WTN;
    const bool releases = tid % 32 == 0;  // one arrival per warp on empty[s]
    char* staging = smem + Policy::kPipelineBytes;
    typename Gemm::FragC acc[Policy::kAtomsM][Policy::kAtomsN];
    Gemm::zero(acc);
    Ring ring;
    for (int tile = int(blockIdx.x); tile < p.tiles; tile += int(gridDim.x)) {
      const BlockCoord b = kernel::tile_coord<LinearTiles, Policy::BM, Policy::BN>(p, tile);
      if constexpr (kPromote) {
        // Each K tile's batch into the partial sums alone, waited for, its stage released, then
        // added into acc: the other consumer's batch runs meanwhile.
        typename Gemm::FragC part[Policy::kAtomsM][Policy::kAtomsN];
        Gemm::zero(acc);
        for (int kt = 0; kt < k_tiles; ++kt) {
          const int s = ring.stage;
          Bar::wait(full + 8 * s, ring.consumer_parity());
          Atom::publish_lds();
          Gemm::mma_stage_from_lds(part, smem, s, wm0, wn0, 0);
          Atom::template wait_batches<0>();
          if (releases) Bar::arrive(empty + 8 * s);
          Gemm::promote(acc, part);  // fences part's registers after the wait first
          ring.advance();
        }
      } else {
        int previous = -1;  // the stage of the batch still in flight
        for (int kt = 0; kt < k_tiles; ++kt) {
          const int s = ring.stage;
          Bar::wait(full + 8 * s, ring.consumer_parity());
          Atom::publish_lds();  // the producer's copies, to the tensor cores' async proxy
          // A tile's first batch overwrites acc (scale-d 0).
          Gemm::mma_stage_from_lds(acc, smem, s, wm0, wn0, kt == 0 ? 0 : 1);
          Atom::template wait_batches<1>();                 // the batch before it has retired
          if (previous >= 0 && releases) Bar::arrive(empty + 8 * previous);
          previous = s;
          ring.advance();
        }
        Atom::template wait_batches<0>();
        Gemm::fence_all(acc);
        if (releases) Bar::arrive(empty + 8 * previous);
      }
      Epilogue<EpiloguePolicy>::run(p, b, LinearRows{b.m0, p.frame_pixels}, acc, wm0, wn0, lane,
                                    staging);
    }
  }
};

template <class Policy, class Geo>
__global__ void __launch_bounds__(Policy::kThreads + 128 * Policy::kProducerWarpgroups, 1)
    warp_specialized_conv_kernel(ConvParams p) {
  run_with_lds<WarpSpecializedConvKernel<Policy, Geo, true>, typename Policy::ArchT>(p);
}

template <class Policy, class Geo>
constexpr auto kernel_entry(const WarpSpecializedConvKernel<Policy, Geo, true>*) {
  return &warp_specialized_conv_kernel<Policy, Geo>;
}

// The implicit GEMM's kernel for a policy: the warp-specialized one for a warp-specialized shape.
template <class Policy, class Geo, bool kVectorGather>
using ImplicitGemmKernel =
    std::conditional_t<IsWarpSpecialized<Policy>::value,
                       WarpSpecializedConvKernel<Policy, Geo, kVectorGather>,
                       ConvKernel<Policy, Geo, kVectorGather>>;

}  // namespace vaeconv::kernel
