// vaeconv/kernel/halo_conv_kernel.hpp — the causal T = 1 conv with its input halo held in LDS.
//
//   Policy    HaloPolicy: a wide tile shape and the architecture's atom; the stage holds only B
//   Halo      HaloTile: the patch (kRows x 8 output pixels = BM) and its input halo
//             (halo_tile.hpp), copied by HaloLoader (halo_loader.hpp)
//   Pipeline  the shared block GEMM's K pipeline (block_gemm.hpp) over B alone, with the atom
//             kind's math on a stage (Math): A of K step (kh, kw, c) is the halo at tap (kh, kw)
//   Epilogue  the shared epilogue (epilogue.hpp), rows mapped through the patch (PatchRows)
// HaloKernel below is that skeleton for both atom kinds; this file has the wgmma math
// (HaloLdsMath), halo_fragment_kernel.hpp the fragment atoms' (HaloFragmentMath).
//
// LDS: [halo: all Cin channels of the patch's (kRows + 2) x 10 input pixels][kStages B tiles].
// The halo is copied once per block (in the first K tile's copy group), so the K loop's copies are
// the weights' alone: per K tile one 16-byte chunk per thread for 96 output channels instead of
// seven, and no gather arithmetic. Block tile i is patch (i / n_tiles) % patches of frame
// i / (patches * n_tiles), Cout tile i % n_tiles (tile_coord). One tile per block.
//
// Which convs (HaloFamilyOf, dispatch.hpp): causal, T = 1 (one time tap), Cin a multiple
// of the atom's K step and at most the halo's kMaxCin (96), the wide tile; there it measured
// faster than the implicit GEMM, bf16 and e4m3 (docs/perf-notes.md). The e4m3
// atom runs the same code (a promoting atom: the pipeline hands compute() the partial sums and
// first_scale 0). HaloLdsMath needs an atom that reads LDS itself (wgmma); fragment atoms
// (mma.sync, MFMA) take per-lane halo addresses instead (halo_fragment_kernel.hpp).
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/block_gemm.hpp"
#include "vaeconv/kernel/block_tiling.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue.hpp"
#include "vaeconv/kernel/halo_loader.hpp"
#include "vaeconv/kernel/halo_tile.hpp"
#include "vaeconv/kernel/tile_policy.hpp"

namespace vaeconv::kernel {

// A tile policy whose stages hold B only, after a halo region aligned to the 1 KiB swizzle repeat
// that B's descriptors need. The shared block GEMM and epilogue read these sizes. B's buffers
// are the base tile's (Base::kLdsBuffers): one per stage, or, for a TwoBufferTileShape /
// OneBufferTileShape where copies stage in registers (AMD), two / one with the tiles ahead in
// registers; the halo is no stage buffer (written once, before the K loop's first barrier), so
// every form holds it.
template <class Base, class Halo_>
struct HaloPolicy : Base {
  using Halo = Halo_;
  static constexpr int kHaloBytes = (Halo::kBytes + 1023) / 1024 * 1024;
  static constexpr int kTileBytesA = 0;
  static constexpr int kStageBytes = Base::kTileBytesB;
  static constexpr int kStagedRows = Base::kRowsPerThreadB;  // a K tile's copy is B's
  static constexpr int kPipelineBytes = kHaloBytes + kStageBytes * Base::kLdsBuffers;
  // One tile per block: the epilogue may stage in all of the LDS once the K loop is done.
  static constexpr int kAheadBytes = kPipelineBytes;
  static_assert(Base::kElemBytes == Halo::kElemBytes, "halo and atom agree on the element");
  static_assert(Base::BM == Halo::kPixels, "the patch is the GEMM's M tile");
  static_assert(Halo::kCols == 8 && Base::WTM % 8 == 0 && Base::AtomT::kM % 8 == 0,
                "a core matrix of 8 A rows is one patch row of 8 pixels");
};

// f(std::integral_constant<int, min(n, N)>) for 1 <= n: a runtime count of steps as a constant.
template <int N, class F>
VAECONV_DEVICE VAECONV_FORCE_INLINE void with_steps(int n, F&& f) {
  if constexpr (N > 1) {
    if (n < N) return with_steps<N - 1>(n, f);
  }
  f(std::integral_constant<int, N>{});
}

// The halo kernels' skeleton, one for either atom kind: the patch tiling (tile_coord), the halo
// loader (halo_loader.hpp) and the weight stream through the shared K pipeline (block_gemm.hpp),
// then Math::mainloop — the warp tile's origin (wm0, wn0) and the pipeline's main loop with the
// atoms' math on a K tile (block_gemm.hpp's mainloop with a kernel's compute) — and the shared
// epilogue over the patch's rows. Math::kZeroChunk: the halo's zero chunk for K steps past K
// (-1: none). HaloConvKernel (below: wgmma) and HaloFragmentConvKernel (halo_fragment_kernel.hpp:
// MFMA, mma.sync) are this skeleton with their math.
template <class Policy, class Math>
struct HaloKernel {
  using Halo = typename Policy::Halo;
  using Gemm = BlockGemm<Policy>;
  using Arch = typename Policy::ArchT;
  using Slot = typename Gemm::Slot;
  using FragC = typename Gemm::FragC;
  static constexpr int kSmemBytes = EpilogueShape<Policy>::kKernelBytes;
  // The launch's view of the kernel (api/conv.hpp, api/kernel_plan.hpp).
  using PolicyT = Policy;
  using Geometry = void;
  using Tiling = PatchTiles<Halo::kRows, Halo::kCols>;
  static constexpr bool kPersistent = false;
  VAECONV_HD static int k_tiles(const ConvParams& p) { return (p.k + Policy::BK - 1) / Policy::BK; }

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(const ConvParams& p, char* smem) {
    const int tid = threadIdx.x;
    const int lane = tid % Policy::kWaveSize, warp = tid / Policy::kWaveSize;
    const BlockCoord b = tile_coord<Tiling, Policy::BM, Policy::BN>(p, int(blockIdx.x));
    char* halo = smem;
    char* stages = smem + Policy::kHaloBytes;

    // B copy roles, as in the conv kernel: thread -> (row0, chunk) of the weight tile.
    const int chunk = tid % Policy::kChunksK, row0 = tid / Policy::kChunksK;
    constexpr int kElemBytes = Policy::kElemBytes;
    WeightGather<Gemm::kRowsB, Gemm::kRowStep, Policy::BK, kElemBytes> gb;
    gb.init(b, row0, chunk);
    const auto view_b = Arch::make_view(p.w, p.w_view_bytes);
    auto issue = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      Gemm::copy_b(sl, stages, s, row0, chunk, p, gb, view_b);
      Arch::commit();
      gb.advance();
    };
    auto flush = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      Gemm::flush_b(sl, stages, s, row0, chunk);
    };

    // The halo's copies join the first K tile's group: the pipeline's first wait covers them.
    HaloLoader<Policy, Math::kZeroChunk>::load(p, b, halo);
    const int k_tiles = HaloKernel::k_tiles(p);
    Slot slot[Gemm::kAhead];
    Gemm::prologue(slot, k_tiles, issue);

    FragC acc[Policy::kAtomsM][Policy::kAtomsN];
    int wm0, wn0;
    Math::mainloop(acc, wm0, wn0, p, halo, stages, warp, lane, k_tiles, slot, issue, flush);
    Epilogue<Policy>::run(p, b, PatchRows<Halo::kCols>{b.oh0, b.ow0, p.ho, p.wo}, acc, wm0, wn0,
                          lane, smem);
  }
};

// The math of the wgmma halo kernel: K tile kt, step ka reads A at the halo shift of its tap;
// steps past K (the packed row's padding) are skipped: every warpgroup skips the same ones.
template <class Policy>
struct HaloLdsMath {
  using Halo = typename Policy::Halo;
  using Gemm = BlockGemm<Policy>;
  using Arch = typename Policy::ArchT;
  using Atom = typename Policy::AtomT;
  using Tile = typename Gemm::Tile;
  using Slot = typename Gemm::Slot;
  using FragC = typename Gemm::FragC;
  static_assert(Policy::kAtomReadsLds, "built for the wgmma atom (see the header)");
  static constexpr int kZeroChunk = -1;  // steps past K are skipped, not read

  template <class Issue, class Flush>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void mainloop(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], int& wm0, int& wn0, const ConvParams& p,
      char* halo, char* stages, int warp, int /*lane*/, int k_tiles, Slot (&slot)[Gemm::kAhead],
      Issue& issue, Flush& flush) {
    // The descriptors are built in uniform registers (the warp index made wave-uniform), A's
    // once per block: each K step adds its halo shift in 16-byte units (the start address field
    // does not carry: LDS addresses are below 2^18).
    const int uwarp = Arch::wave_uniform(warp);
    wm0 = (uwarp % Policy::kWarpsM) * Policy::WTM;
    wn0 = (uwarp / Policy::kWarpsM) * Policy::WTN;
    static_assert(Policy::WTM % Halo::kCols == 0 && Atom::kM % Halo::kCols == 0,
                  "atoms start on patch rows");
    const uint64_t da0 = Atom::descriptor_unswizzled(
        Arch::smem_u32(halo) + uint32_t(wm0 / Halo::kCols * Halo::kRowStride), Halo::kChunkStride,
        Halo::kRowStride);
    HaloCursor<Halo> cur;
    // One batch of N K steps (N a constant): nothing but atoms and scalar cursor steps between
    // the batch's fence and commit. A condition per step there (the K tail) made ptxas inject a
    // warpgroup.arrive before each atom (C7519); the tail picks its step count outside instead.
    auto batch = [&](auto steps, FragC (&t)[Policy::kAtomsM][Policy::kAtomsN], uint64_t db,
                     int first_scale) VAECONV_FORCE_INLINE_LAMBDA {
      Gemm::template lds_batch<decltype(steps)::value>(
          t,
          [&](int i, int) VAECONV_FORCE_INLINE_LAMBDA {
            return da0 + uint32_t(cur.a_offset(i * Atom::kM)) / 16;
          },
          [&](int j, int ka) VAECONV_FORCE_INLINE_LAMBDA {
            return db + Gemm::block_offset16(j * Atom::kN, ka);
          },
          first_scale, [&](int) VAECONV_FORCE_INLINE_LAMBDA { cur.step(Atom::kK, p.cin); });
    };
    auto compute = [&](FragC (&t)[Policy::kAtomsM][Policy::kAtomsN], int s, int /*kt*/,
                       int first_scale) VAECONV_FORCE_INLINE_LAMBDA {
      const uint64_t db = Atom::template descriptor<Tile::kRowBytes>(
          Arch::smem_u32(Gemm::stage_b(stages, s)) + Tile::offset(wn0, 0));
      // K steps of this tile inside K (>= 1; the steps past K are the packed row's padding).
      const int left = (p.k - cur.k) / Atom::kK;
      with_steps<Policy::kAtomsK>(left, [&](auto n) VAECONV_FORCE_INLINE_LAMBDA {
        batch(n, t, db, first_scale);
      });
    };
    Gemm::mainloop(acc, k_tiles, slot, issue, flush, compute);
  }
};

template <class Policy>
struct HaloFragmentMath;  // halo_fragment_kernel.hpp

template <class Policy>
using HaloConvKernel = HaloKernel<Policy, HaloLdsMath<Policy>>;

// The kernel functions: one per atom kind, named for it (the resource report and the assembly
// rules read the names).
template <class Policy>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocks)
    halo_conv_kernel(ConvParams p) {
  run_with_lds<HaloConvKernel<Policy>, typename Policy::ArchT>(p);
}
template <class Policy>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocks)
    halo_fragment_conv_kernel(ConvParams p) {
  run_with_lds<HaloKernel<Policy, HaloFragmentMath<Policy>>, typename Policy::ArchT>(p);
}

template <class Policy, class Math>
constexpr auto kernel_entry(const HaloKernel<Policy, Math>*) {
  if constexpr (Policy::kAtomReadsLds) return &halo_conv_kernel<Policy>;
  else return &halo_fragment_conv_kernel<Policy>;
}

}  // namespace vaeconv::kernel
