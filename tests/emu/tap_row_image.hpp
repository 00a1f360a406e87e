// tests/emu/tap_row_image.hpp — the tap-row kernel's operands in an emulated LDS image, as its
// fill lays them out (kernel/tap_row_conv_kernel.hpp, kernel/tap_row_halo.hpp): shared by the wgmma
// and the fragment-atom tests (test_tap_row_halo.cpp, test_tap_row_fragment.cpp).
//
//   put_halo   tap row (hr, c) holds input row oh0 - 1 + hr at columns ow0 + c - 1 .. + 1
//              (element e = kw * 3 + ci; zeros outside the frame and past e = 8), chunk-major
//   put_b_row  B row n as the fill cuts it from a packed (natural K order) weight row: its
//              little-endian words, element tap_row_k(k') (packed_elem) at tap-row position k' of
//              the SwizzledTile row at `stage` (natural_order: element k' instead, a negative
//              control)
#pragma once
#include <cstdint>
#include <vector>

#include "emu/operand_codes.hpp"
#include "vaeconv/kernel/smem_layout.hpp"

namespace vaeconv::emu {

template <class H>
struct TapRowImage {
  using E = OperandCode<H::kElemBytes>;
  using BTile = vaeconv::kernel::SwizzledTile<8>;  // one 128-byte row of B per output channel
  static constexpr int kEB = H::kElemBytes, kChunk = H::kChunkElems;
  static constexpr int kKPad = 128 / kEB;           // a packed row: one 128-byte row here

  // The halo of the patch at (oh0, ow0) of x [h][w][3] at byte 0 of s.
  static void put_halo(std::vector<std::uint8_t>& s, const std::vector<std::uint16_t>& x, int h,
                       int w, int oh0, int ow0) {
    for (int hr = 0; hr < H::kHaloRows; ++hr)
      for (int c = 0; c < H::kHaloCols; ++c)
        for (int e = 0; e < H::kChunks * kChunk; ++e) {
          const int ih = oh0 - 1 + hr, iw = ow0 - 1 + c + H::tap_kw(e);
          const bool in = e < H::kTapElems && ih >= 0 && ih < h && iw >= 0 && iw < w;
          const std::uint16_t v =
              in ? x[(std::size_t(ih) * std::size_t(w) + std::size_t(iw)) * H::kCin +
                     std::size_t(H::tap_c(e))]
                 : 0;
          E::store(s, std::uint32_t(H::offset(e / kChunk, hr, c) + kEB * (e % kChunk)), v);
        }
  }
  // B row n from the packed row `packed` (kKPad codes) into the tile at byte `stage` of s.
  static void put_b_row(std::vector<std::uint8_t>& s, std::uint32_t stage, int n,
                        const std::uint16_t* packed, bool natural_order = false) {
    std::uint32_t words[128 / 4] = {};
    for (int k = 0; k < kKPad; ++k)
      words[k * kEB / 4] |= std::uint32_t(packed[k]) << (8 * (k * kEB % 4));
    for (int kp = 0; kp < H::kK; ++kp) {
      const int k = natural_order ? kp : H::tap_row_k(kp);
      const std::uint16_t v = k >= 0 ? std::uint16_t(H::packed_elem(words, k)) : 0;
      E::store(s, stage + std::uint32_t(BTile::offset(n, kp / kChunk) + kEB * (kp % kChunk)), v);
    }
  }
};

}  // namespace vaeconv::emu
