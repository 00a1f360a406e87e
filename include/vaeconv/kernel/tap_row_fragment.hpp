// vaeconv/kernel/tap_row_fragment.hpp — where each lane of a fragment atom (MFMA, mma.sync) reads
// its A chunk from the tap-row halo (tap_row_halo.hpp).
//
// The wgmma tap-row kernel hands the tensor cores a descriptor per tap row; a fragment atom has
// every lane load its own 16-byte chunk(s) of A (arch/fragment_layouts.hpp: lane l holds row
// a_lds_row(l), chunk a_lds_chunk(l, part) of the atom's A tile). An atom K step covers
// kRowsPerStep tap rows (Layout::kK / Halo::kStepElems: 1 for the bf16 atoms and NVIDIA's m16n8k32
// e4m3, 2 for CDNA's 32x32x64 e4m3), so chunk c of atom step s is chunk c % 2 of tap row kh = s *
// kRowsPerStep + c / 2, and GEMM row m's tap row kh is halo pixel (m / 8 + kh, m % 8) = m + 8 kh
// (8-pixel patch rows). Eight consecutive GEMM rows are eight consecutive 16-byte halo pixels, so
// an atom's rows (32 on MFMA, 16 on mma.sync) read contiguous bytes of one chunk plane. The last
// step of a two-row atom covers a fourth tap row, which does not exist: its lanes read chunk 1 of
// their pixel's first tap row instead, which is zero for the e4m3 halo (a tap row's 9 elements fill
// part of chunk 0), and B's chunks there are zero too (the kernel's fill writes them).
//   a_offset(l, part, m0, s)   lane l's address for atom step s, a constant per lane and step.
// tap_row_fragment_kernel.hpp uses exactly this function; tests/host/test_tap_row_fragment.cpp
// runs it through the matrix emulator against the direct convolution.
#pragma once

#include "vaeconv/core/config.hpp"

namespace vaeconv::kernel {

template <class Halo, class Layout>
struct TapRowFragment {
  static_assert(Layout::kElemBytes == Halo::kElemBytes, "the atom's element is the halo's");
  static_assert(Layout::kK % Halo::kStepElems == 0, "an atom K step is whole tap rows");
  static_assert(Layout::kM % Halo::kCols == 0, "an atom's rows are whole patch rows");
  static constexpr int kRowsPerStep = Layout::kK / Halo::kStepElems;
  static constexpr int kSteps = (Halo::kSteps + kRowsPerStep - 1) / kRowsPerStep;  // atom steps
  // K columns the atom steps cover, and B's 16-byte chunks they read: the fill writes zeros into
  // those past the three tap rows (tap_row_conv_kernel.hpp).
  static constexpr int kK = kSteps * Layout::kK;
  static constexpr int kBChunks = kK / Halo::kChunkElems;
  static_assert(kSteps * kRowsPerStep == Halo::kSteps || Halo::kTapElems <= Halo::kChunkElems,
                "a tap row past the third reads chunk 1 of the first, which must be zero");

  // Lane `lane`'s chunk `part` of the atom whose A rows start at GEMM row m0, at atom step s.
  VAECONV_HD static constexpr int a_offset(int lane, int part, int m0, int s) {
    const int m = m0 + Layout::a_lds_row(lane);
    const int c = Layout::a_lds_chunk(lane, part);
    const int kh = s * kRowsPerStep + c / Halo::kChunks;
    const int row = m / Halo::kCols, col = m % Halo::kCols;
    return kh < Halo::kSteps ? Halo::offset(c % Halo::kChunks, row + kh, col)
                             : Halo::offset(1, row, col);  // chunk 1 of the first row: zeros
  }
};

}  // namespace vaeconv::kernel
