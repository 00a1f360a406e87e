// vaeconv/kernel/tap_row_fragment_kernel.hpp — the tap-row kernel on fragment atoms (MFMA on
// CDNA, mma.sync on NVIDIA without wgmma): the causal T = 1 conv of a Cin = 3 layer, A read by
// each lane straight from the tap-row halo.
//
//   Policy    HaloPolicy over a TapRowHalo (tile_table.hpp: cdna::TapRowFragmentShape, ...Fp8)
//   A         lane l of atom i at atom K step s loads its chunk(s) at TapRowFragment::a_offset,
//             a constant per lane and step (tap_row_fragment.hpp)
//   B         the fill's B tile (stage 0), fragments loaded as the implicit GEMM loads them
//   Epilogue  the shared epilogue, rows mapped through the patch (PatchRows)
//
// The same template runs the MFMA atom (gfx942, gfx950) and the mma.sync atom (the portable twin
// that the GPU suite runs on NVIDIA). The skeleton (TapRowKernel: the fill, the barriers, the
// epilogue), its kernel function tap_row_fragment_conv_kernel and kernel_entry are
// tap_row_conv_kernel.hpp's; this file is the math on fragment atoms. The atom steps cover the
// three tap rows (three steps of one row, or two of two rows with zeros past the third: kBChunks
// of B's chunks, which the fill writes), within the policy's BK, so the kernel has no K loop:
// two or three fragment steps after the fill's barrier (cmake/asm_checks.cmake counts them).
#pragma once

#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/block_gemm.hpp"
#include "vaeconv/kernel/tap_row_conv_kernel.hpp"
#include "vaeconv/kernel/tap_row_fragment.hpp"

namespace vaeconv::kernel {

template <class Policy>
struct TapRowFragmentMath {
  using Halo = typename Policy::Halo;
  using Gemm = BlockGemm<Policy>;
  using Atom = typename Policy::AtomT;
  using Layout = typename Atom::Layout;
  using FragC = typename Gemm::FragC;
  using Lanes = TapRowFragment<Halo, Layout>;
  static_assert(!Policy::kAtomReadsLds, "fragment atoms (the wgmma atom: tap_row_conv_kernel.hpp)");
  static_assert(!Policy::kPromoteEachTile, "no promoting fragment atom");
  static_assert(Lanes::kK <= Policy::BK, "the atom steps are one K tile");
  static constexpr int kBChunks = Lanes::kBChunks;  // B chunks the steps read

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void publish() {}  // the fill's ds stores: the barrier

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void compute(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], int& wm0, int& wn0, const char* halo,
      const char* lb, int warp, int lane) {
    wm0 = (warp % Policy::kWarpsM) * Policy::WTM;
    wn0 = (warp / Policy::kWarpsM) * Policy::WTN;
    Gemm::zero(acc);
VAECONV_UNROLL
    for (int s = 0; s < Lanes::kSteps; ++s)
      Gemm::fragment_step(
          acc,
          [&](int i, int part) VAECONV_FORCE_INLINE_LAMBDA {
            return halo + Lanes::a_offset(lane, part, wm0 + i * Atom::kM, s);
          },
          lb, s, wn0, lane);
  }
};

template <class Policy>
using TapRowFragmentConvKernel = TapRowKernel<Policy, TapRowFragmentMath<Policy>>;

}  // namespace vaeconv::kernel
