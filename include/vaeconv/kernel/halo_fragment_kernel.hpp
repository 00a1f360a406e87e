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
// The skeleton (HaloKernel), its kernel function halo_fragment_conv_kernel and kernel_entry are
// halo_conv_kernel.hpp's; this file is the math on fragment atoms.
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

// The math of the halo kernel on fragment atoms (the skeleton: HaloKernel, halo_conv_kernel.hpp):
// each lane's A chunks at tap (0, 0), channel chunk 0 are fixed for the block, a K step adds the
// shift every lane shares (HaloCursor::a_offset(0)); B's fragments are loaded as the implicit
// GEMM loads them (BlockGemm::fragment_step).
template <class Policy>
struct HaloFragmentMath {
  using Halo = typename Policy::Halo;
  using Gemm = BlockGemm<Policy>;
  using Atom = typename Policy::AtomT;
  using Layout = typename Atom::Layout;
  using Slot = typename Gemm::Slot;
  using FragC = typename Gemm::FragC;
  using Lanes = HaloFragment<Halo, Layout>;
  static_assert(!Policy::kAtomReadsLds, "fragment atoms (the wgmma atom: halo_conv_kernel.hpp)");
  static_assert(!Policy::kPromoteEachTile, "no promoting fragment atom");
  // HaloFamilyOf takes Cin in steps of 32 bytes: whole K steps of the atom, so no step straddles
  // a tap and every lane of a step reads the same shift.
  static_assert((32 / Policy::kElemBytes) % Atom::kK == 0, "the family's Cin step is whole K steps");
  static constexpr int kZeroChunk = Lanes::kZeroChunk;  // what K steps past K read

  template <class Issue, class Flush>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void mainloop(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], int& wm0, int& wn0, const ConvParams& p,
      char* halo, char* stages, int warp, int lane, int k_tiles, Slot (&slot)[Gemm::kAhead],
      Issue& issue, Flush& flush) {
    wm0 = (warp % Policy::kWarpsM) * Policy::WTM;
    wn0 = (warp / Policy::kWarpsM) * Policy::WTN;
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
        Gemm::fragment_step(
            acc,
            [&](int i, int part) VAECONV_FORCE_INLINE_LAMBDA {
              return halo + (in_k ? a_lane[i][part] + shift : Lanes::kZeroChunk);
            },
            lb, ka, wn0, lane);
        cur.step(Atom::kK, p.cin);
      }
    };
    Gemm::mainloop(acc, k_tiles, slot, issue, flush, compute);
  }
};

template <class Policy>
using HaloFragmentConvKernel = HaloKernel<Policy, HaloFragmentMath<Policy>>;

}  // namespace vaeconv::kernel
