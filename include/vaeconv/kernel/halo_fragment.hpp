// vaeconv/kernel/halo_fragment.hpp — where each lane of a fragment atom (MFMA, mma.sync) reads its
// A chunk from the halo (halo_tile.hpp).
//
// The wgmma halo kernel hands the tensor cores one descriptor per K step; a fragment atom instead
// has every lane load its own 16-byte chunk(s) of A (arch/fragment_layouts.hpp: lane l holds row
// a_lds_row(l), chunk a_lds_chunk(l, part) of the atom's A tile). In the halo that row is the
// patch pixel m = m0 + a_lds_row(l) and the chunk is channel chunk c / kChunkElems +
// a_lds_chunk(l, part) of the halo pixel tap (kh, kw) shifts it to, (m / kCols + kh,
// m % kCols + kw). HaloTile's offset is linear in the chunk and in the halo pixel, so the address
// splits into
//   lane_offset(l, part, m0)   per lane, fixed for the block: tap (0, 0), channel chunk 0;
//   step_offset(k, cin)        the same for every lane: the K step's channel plane and tap shift
//                              (HaloCursor::a_offset(0) walks it in the kernel),
// provided Cin is a multiple of the atom's K (a K step never straddles a tap, so every lane of a
// step sees the same tap). halo_fragment_kernel.hpp uses exactly these functions;
// tests/host/test_halo_fragment.cpp runs them through the matrix emulator against the direct conv
// and measures the reads' LDS bank conflicts.
#pragma once

#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/halo_tile.hpp"

namespace vaeconv::kernel {

template <class Halo, class Layout>
struct HaloFragment {
  static_assert(Layout::kElemBytes == Halo::kElemBytes, "the atom's element is the halo's");
  static constexpr int kChunksPerStep = Layout::kK / Halo::kChunkElems;  // chunks of one K step
  static_assert(Layout::kK % Halo::kChunkElems == 0, "a K step is whole chunks");
  static_assert(Halo::kMaxCin % Layout::kK == 0, "the halo holds whole K steps");
  // A zero chunk every lane may read (broadcast) for a K step past K: the padding pixel at the end
  // of channel plane 0, which the kernel zeroes.
  static constexpr int kZeroChunk = Halo::kHaloPixels * 16;

  // Lane `lane`'s chunk `part` of the atom whose A rows start at GEMM row m0, at tap (0, 0) and
  // channel chunk 0.
  VAECONV_HD static constexpr int lane_offset(int lane, int part, int m0) {
    return Halo::a_offset(m0 + Layout::a_lds_row(lane), 0, 0, Layout::a_lds_chunk(lane, part));
  }
  // The shift every lane adds for the K step starting at K position k of the packed T = 1 slice
  // (k = (kh * 3 + kw) * cin + c; cin a multiple of Layout::kK).
  VAECONV_HD static constexpr int step_offset(int k, int cin) {
    const int tap = k / cin, c = k % cin;
    return (c / Halo::kChunkElems) * Halo::kChunkStride +
           ((tap / 3) * Halo::kHaloCols + tap % 3) * 16;
  }
  // The whole address: lane_offset + step_offset.
  VAECONV_HD static constexpr int a_offset(int lane, int part, int m0, int k, int cin) {
    return lane_offset(lane, part, m0) + step_offset(k, cin);
  }
};

}  // namespace vaeconv::kernel
