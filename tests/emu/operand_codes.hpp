// tests/emu/operand_codes.hpp — operand elements of either type as the LDS emulations store them:
// bf16 bits or e4m3fn bytes, with their exact values (the halo tests' shared vocabulary).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "emu/matrix_emulator.hpp"
#include "emu/wgmma_emulator.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"

namespace vaeconv::emu {

inline double decode_bf16_le(const std::uint8_t* p) {
  return bf16_bits_to_float(std::uint16_t(p[0] | (p[1] << 8)));
}
inline double decode_e4m3_byte(const std::uint8_t* p) { return decode_e4m3fn(p[0]); }

// An operand element of kElemBytes: its code (bf16 bits or an e4m3fn byte) and its value.
template <int kElemBytes>
struct OperandCode {
  static std::uint16_t encode(float v) {
    return kElemBytes == 2 ? vaeconv::float_to_bf16(v) : vaeconv::float_to_e4m3fn(v);
  }
  static double value(std::uint16_t code) {
    return kElemBytes == 2 ? double(vaeconv::bf16_to_float(code))
                           : double(vaeconv::e4m3fn_to_float(std::uint8_t(code)));
  }
  static void store(std::vector<std::uint8_t>& smem, std::uint32_t at, std::uint16_t code) {
    smem[at] = std::uint8_t(code & 0xFF);
    if (kElemBytes == 2) smem[at + 1] = std::uint8_t(code >> 8);
  }
  static constexpr Decode kDecode = kElemBytes == 2 ? decode_bf16_le : decode_e4m3_byte;
};

// The direct 3 x 3 conv (stride 1, zero padding outside the h x w frame) at output pixel
// (oh, ow), channel n: the sum over taps and channels of x_value(pixel index * cin + c) times
// w_value(k), k = (kh * 3 + kw) * cin + c the natural K order of weight row n. The value
// functions decode the operands (bf16, e4m3, a NaN where a test plants one), so every test of a
// patch or tap-row fragment checks against this one loop.
template <class XValue, class WValue>
double direct_conv3x3_at(int oh, int ow, int h, int w, int cin, XValue x_value,
                         WValue w_value) {
  double want = 0;
  for (int kh = 0; kh < 3; ++kh)
    for (int kw = 0; kw < 3; ++kw) {
      const int ih = oh - 1 + kh, iw = ow - 1 + kw;
      if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
      for (int c = 0; c < cin; ++c)
        want += x_value((std::size_t(ih) * w + iw) * cin + c) * w_value((kh * 3 + kw) * cin + c);
    }
  return want;
}

// The accumulators of the m64 x kN wgmma atoms that cover a patch of kCols-pixel rows at
// (oh0, ow0), checked against the direct 3 x 3 conv (zero padding outside the h x w frame) of
// x [h][w][cin] with weights wt, row n at n * w_row_stride in the natural K order
// ((kh * 3 + kw) * cin + c). d[atom][thread][r]: register r of warpgroup thread t of atom
// `atom` (rows 64 atom ..), in the PTX accumulator layout. Returns the number that differ.
template <class E>
int wrong_patch_accumulators(const std::vector<std::vector<std::vector<double>>>& d, int kN,
                             int kCols, int oh0, int ow0, int h, int w, int cin,
                             const std::vector<std::uint16_t>& x,
                             const std::vector<std::uint16_t>& wt, int w_row_stride) {
  int bad = 0;
  for (size_t atom = 0; atom < d.size(); ++atom)
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < kN / 2; ++r) {
        const int warp = t / 32, lane = t % 32;
        const int m = 64 * int(atom) + 16 * warp + lane / 4 + 8 * ((r / 2) % 2);
        const int n = 8 * (r / 4) + 2 * (lane % 4) + r % 2;
        const int oh = oh0 + m / kCols, ow = ow0 + m % kCols;
        const double want = direct_conv3x3_at(
            oh, ow, h, w, cin, [&](std::size_t i) { return E::value(x[i]); },
            [&](int k) { return E::value(wt[std::size_t(n) * w_row_stride + k]); });
        if (d[atom][size_t(t)][size_t(r)] != want) ++bad;
      }
  return bad;
}

}  // namespace vaeconv::emu
