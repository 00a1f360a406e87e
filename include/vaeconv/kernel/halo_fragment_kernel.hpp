// vaeconv/kernel/halo_fragment_kernel.hpp — the halo kernel on fragment atoms (MFMA on CDNA,
// mma.sync on NVIDIA without wgmma): the causal T = 1 conv with its input halo in LDS, A read by
// each lane straight from the halo.
//
//   Policy    HaloPolicy (halo_conv_kernel.hpp): a tile shape and a fragment atom; stages hold B
//   Halo      HaloTile: the patch (kRows x 8 output pixels = BM) and its input halo (halo_tile.hpp)
//   A         lane l of atom (i, K step) loads its chunk(s) at HaloFragment::lane_offset (fixed per
//             block) + the K step's uniform shift (HaloCursor::a_offset(0)) (halo_fragment.hpp)
//   B         the shared block GEMM's K pipeline, fragments loaded as the implicit GEMM loads them
//   Epilogue  the shared epilogue, rows mapped through the patch (PatchRows)
//
// The same template runs the MFMA atom (gfx942, gfx950) and the mma.sync atom (the portable twin
// that the GPU suite runs on the H200). Only B crosses the K pipeline: per K tile one weight
// tile, no A copy and no gather arithmetic; the halo (all Cin channels) is copied once per block
// in the first K tile's copy group. A K step past K (the packed row's padding, whose B is zero)
// reads the halo's zero chunk in every lane, so the K loop has no branch around its atoms and
// runs the same MFMAs in every K tile (cmake/asm_checks.cmake counts them per barrier).
// Which convs: HaloFamilyOf (dispatch.hpp) — causal, T = 1, Cin a multiple of the atom's K and
// at most the halo's kMaxCin, the wide tile; bf16, on the builds tile_table.hpp's
// kHaloFragmentKernel names. tests/host/test_halo_fragment.cpp checks the lane addresses through
// the matrix emulator and their LDS bank conflicts; the GPU suite's halo cases run the kernel.
#pragma once
#include <cstdint>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/block_gemm.hpp"
#include "vaeconv/kernel/block_tiling.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue.hpp"
#include "vaeconv/kernel/halo_conv_kernel.hpp"
#include "vaeconv/kernel/halo_fragment.hpp"
#include "vaeconv/kernel/halo_tile.hpp"

namespace vaeconv::kernel {

template <class Policy>
struct HaloFragmentConvKernel {
  using Halo = typename Policy::Halo;
  using Gemm = BlockGemm<Policy>;
  using Arch = typename Policy::ArchT;
  using Atom = typename Policy::AtomT;
  using Layout = typename Atom::Layout;
  using Tile = typename Gemm::Tile;
  using Slot = typename Gemm::Slot;
  using FragC = typename Gemm::FragC;
  using Lanes = HaloFragment<Halo, Layout>;
  static_assert(!Policy::kAtomReadsLds, "fragment atoms (the wgmma atom: halo_conv_kernel.hpp)");
  static_assert(!Policy::kPromoteEachTile, "no promoting fragment atom");
  // HaloFamilyOf takes Cin in steps of 32 bytes: whole K steps of the atom, so no step straddles
  // a tap and every lane of a step reads the same shift.
  static_assert((32 / Policy::kElemBytes) % Atom::kK == 0, "the family's Cin step is whole K steps");
  static constexpr int kSmemBytes = EpilogueShape<Policy>::kKernelBytes;
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

    const int chunk = tid % Policy::kChunksK, row0 = tid / Policy::kChunksK;
    WeightGather<Gemm::kRowsB, Gemm::kRowStep, Policy::BK, Policy::kElemBytes> gb;
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

    load_halo(p, b, halo);
    const int k_tiles = HaloFragmentConvKernel::k_tiles(p);
    Slot slot[Gemm::kAhead];
    Gemm::prologue(slot, k_tiles, issue);

    const int wm0 = (warp % Policy::kWarpsM) * Policy::WTM;
    const int wn0 = (warp / Policy::kWarpsM) * Policy::WTN;
    // Each lane's A chunks at tap (0, 0), channel chunk 0: fixed for the block.
    int a_lane[Policy::kAtomsM][Layout::kLdsChunks];
VAECONV_UNROLL
    for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
      for (int part = 0; part < Layout::kLdsChunks; ++part)
        a_lane[i][part] = Lanes::lane_offset(lane, part, wm0 + i * Atom::kM);
    HaloCursor<Halo> cur;
    auto compute = [&](FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], int s, int /*kt*/,
                       int /*first_scale*/) VAECONV_FORCE_INLINE_LAMBDA {
      const char* lb = Gemm::stage_b(stages, s);
VAECONV_UNROLL
      for (int ka = 0; ka < Policy::kAtomsK; ++ka) {
        // Past K every lane reads the zero chunk (B is zero there too): no branch.
        const bool in_k = cur.k < p.k;
        const int shift = cur.a_offset(0);
        typename Atom::FragA fa[Policy::kAtomsM];
        typename Atom::FragB fb[Policy::kAtomsN];
VAECONV_UNROLL
        for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
          for (int part = 0; part < Layout::kLdsChunks; ++part)
            Atom::load_a(fa[i], part, halo + (in_k ? a_lane[i][part] + shift : Lanes::kZeroChunk));
VAECONV_UNROLL
        for (int j = 0; j < Policy::kAtomsN; ++j)
VAECONV_UNROLL
          for (int part = 0; part < Layout::kLdsChunks; ++part)
            Atom::load_b(fb[j], part,
                         lb + Tile::offset(wn0 + j * Atom::kN + Layout::b_lds_row(lane),
                                           ka * Gemm::kChunksPerAtomK +
                                               Layout::b_lds_chunk(lane, part)));
VAECONV_UNROLL
        for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
          for (int j = 0; j < Policy::kAtomsN; ++j) Atom::mma(acc[i][j], fa[i], fb[j]);
        cur.step(Atom::kK, p.cin);
      }
    };
    FragC acc[Policy::kAtomsM][Policy::kAtomsN];
    Gemm::mainloop(acc, k_tiles, slot, issue, flush, compute);

    Epilogue<Policy>::run(p, b, PatchRows<Halo::kCols>{b.oh0, b.ow0, p.ho, p.wo}, acc, wm0, wn0,
                          lane, smem);
  }

 private:
  // Chunk j of every halo pixel (zeros outside the frame: the conv's padding) and the zero chunk.
  // Threads take consecutive chunks of one pixel (16-byte runs of one NHWC row), so reads coalesce.
  // (The wgmma halo kernel copies its halo the same way.)
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void load_halo(const ConvParams& p,
                                                           const BlockCoord& b, char* halo) {
    constexpr int kElemBytes = Policy::kElemBytes;
    const int tid = threadIdx.x;
    const int chunks = p.cin / Halo::kChunkElems;
    const int total = chunks * Halo::kHaloPixels;
    const int step_hp = Policy::kThreads / chunks, step_j = Policy::kThreads % chunks;
    int hp = tid / chunks, j = tid % chunks;
    const int it_rel = b.ot + p.kt_base - p.pad_t - b.it_lo;
    const bool t_ok = unsigned(it_rel) < unsigned(p.t - b.it_lo);
    const char* x_frame =
        static_cast<const char*>(p.x) + int64_t(kElemBytes) * input_view_offset(p, b);
    const auto view = Arch::make_view(x_frame, p.x_view_bytes);
    if (tid == 0) Arch::template store_lds<kElemBytes>(halo + Lanes::kZeroChunk, uint4{0, 0, 0, 0});
    // A trip count the same for every thread (a per-lane one is a waterfall loop around the buffer
    // load on AMD: cmake/asm_checks.cmake); a thread past the last chunk loads nothing and writes
    // zeros to the zero chunk.
    for (int q0 = 0; q0 < total; q0 += Policy::kThreads) {
      const bool live = q0 + tid < total;
      const int hr = Halo::halo_row(hp), hcol = Halo::halo_col(hp);
      const int ih = b.oh0 - 1 + hr, iw = b.ow0 - 1 + hcol;
      const bool ok =
          live && t_ok && unsigned(ih) < unsigned(p.h) && unsigned(iw) < unsigned(p.w_);
      const uint32_t e = uint32_t(it_rel) * uint32_t(p.in_st) + uint32_t(ih) * uint32_t(p.in_sh) +
                         uint32_t(iw) * uint32_t(p.in_sw) + uint32_t(j * Halo::kChunkElems);
      char* dst = halo + (live ? Halo::offset(j, hr, hcol) : Lanes::kZeroChunk);
      typename Arch::template Slot<1> one;
      Arch::load(one, 0, dst, view, e * uint32_t(kElemBytes), ok);
      Arch::template flush<kElemBytes>(one, 0, dst);
      hp += step_hp;
      j += step_j;
      if (j >= chunks) {
        j -= chunks;
        ++hp;
      }
    }
  }
};

template <class Policy>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocks)
    halo_fragment_conv_kernel(ConvParams p) {
  run_with_lds<HaloFragmentConvKernel<Policy>, typename Policy::ArchT>(p);
}

template <class Policy>
constexpr auto kernel_entry(const HaloFragmentConvKernel<Policy>*) {
  return &halo_fragment_conv_kernel<Policy>;
}

}  // namespace vaeconv::kernel
