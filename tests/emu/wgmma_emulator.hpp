// tests/emu/wgmma_emulator.hpp — host emulator of sm_90a wgmma.mma_async with both operands in
// shared memory, written from the PTX ISA and independently of include/vaeconv/arch/
// wgmma_layout.hpp (deliberately not included here).
//
// Sources: NVIDIA PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate":
//   * "Matrix Descriptor Format": a 64-bit value; bits 0-13 start address, 16-29 leading
//     dimension byte offset, 32-45 stride dimension byte offset (each encoded as (x & 0x3FFFF) >> 4),
//     bits 49-51 matrix base offset, bits 62-63 swizzle mode (0 none, 1 128-byte, 2 64-byte,
//     3 32-byte).
//   * "Shared Memory Matrix Layout", K-major operands with swizzling: the operand is stored as
//     rows of the M (N) dimension whose K bytes are contiguous within a row of the swizzle width
//     (32, 64 or 128 bytes); 8 such rows are one swizzle atom, consecutive in memory; the stride
//     dimension byte offset is the distance from one 8-row atom to the next along M (N). The
//     swizzle permutes 16-byte units inside each 8-row atom: address bits [4, 4 + b) are XORed
//     with bits [7, 7 + b), b = 1, 2, 3 for the 32-, 64-, 128-byte modes (CUTLASS Swizzle<b,4,3>).
//     The pattern repeats every 8 * width bytes, and the base-offset field is 0 when the operand
//     starts on such a repeat (the only case emulated: any other start throws).
//   * the same section without swizzling (mode 0): 8 x 16-byte core matrices, 128 contiguous
//     bytes each; LBO between core matrices adjacent in K, SBO between those adjacent in M (N).
//   * "Register Fragments", matrix D of m64nNk16 / m64nNk32 with .f32 accumulators: warp w of the
//     warpgroup owns rows 16w..16w+15; in each 8-column block j of D, thread t = lane % 4 of group
//     g = lane / 4 holds the pairs (row g, columns 8j + 2t, 8j + 2t + 1) then (row g + 8, the same
//     columns), as registers d[4j .. 4j + 3].
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace vaeconv::emu {

struct SmemDescriptor {
  std::uint32_t start, lbo, sbo;
  int base_offset, swizzle_mode;
  static SmemDescriptor decode(std::uint64_t d) {
    SmemDescriptor s{};
    s.start = std::uint32_t(d & 0x3FFFu) << 4;
    s.lbo = std::uint32_t((d >> 16) & 0x3FFFu) << 4;
    s.sbo = std::uint32_t((d >> 32) & 0x3FFFu) << 4;
    s.base_offset = int((d >> 49) & 0x7u);
    s.swizzle_mode = int((d >> 62) & 0x3u);
    return s;
  }
  int width() const {  // bytes of one swizzled row
    switch (swizzle_mode) {
      case 1: return 128;
      case 2: return 64;
      case 3: return 32;
      default: throw std::invalid_argument("emu: only the swizzled K-major layouts are emulated");
    }
  }
  int xor_bits() const { return swizzle_mode == 1 ? 3 : swizzle_mode == 2 ? 2 : 1; }
  // Byte address of K byte `kb` (0..31 for one instruction) of operand row `row`.
  std::uint32_t address(int row, int kb) const {
    if (base_offset != 0) throw std::invalid_argument("emu: non-zero base offset");
    if (swizzle_mode == 0) {
      // "Shared Memory Matrix Layout", no swizzling: the operand is a grid of core matrices of
      // 8 rows x 16 bytes, each 128 contiguous bytes (row after row); the leading dimension byte
      // offset is the distance between core matrices adjacent in K, the stride dimension byte
      // offset between core matrices adjacent in M (N).
      return start + std::uint32_t(row / 8) * sbo + std::uint32_t(row % 8) * 16u +
             std::uint32_t(kb / 16) * lbo + std::uint32_t(kb % 16);
    }
    // An operand starting off the swizzle repeat needs a base offset: not what vaeconv builds.
    const std::uint32_t repeat = 8u * std::uint32_t(width());
    const std::uint32_t atom_base = start & ~(repeat - 1u);
    const std::uint32_t in_row = start - atom_base;
    if (in_row >= std::uint32_t(width()))
      throw std::invalid_argument("emu: start address not within the first row of a swizzle atom");
    const std::uint32_t logical = atom_base + std::uint32_t(row / 8) * sbo +
                                  std::uint32_t(row % 8) * std::uint32_t(width()) + in_row +
                                  std::uint32_t(kb);
    const std::uint32_t mask = (1u << xor_bits()) - 1u;
    return logical ^ (((logical >> 7) & mask) << 4);
  }
};

// Element decoders: the library's bf16 / e4m3fn bit patterns to double.
using Decode = double (*)(const std::uint8_t* p);

// One wgmma.mma_async m64nNkK (K = 32 bytes of K per row: 16 bf16 or 32 e4m3) with scale-d = 1:
// D[l][r] += sum_k A[m][k] * B[k][n], A read from rows 0..63 of desc_a, B (stored N-major rows,
// K-major: "Bt[n][k]") from rows 0..N-1 of desc_b. d is indexed [thread 0..127][register].
inline void wgmma_ss(std::vector<std::vector<double>>& d, const std::vector<std::uint8_t>& smem,
                     std::uint64_t desc_a, std::uint64_t desc_b, int n, int elem_bytes,
                     Decode decode) {
  const SmemDescriptor da = SmemDescriptor::decode(desc_a), db = SmemDescriptor::decode(desc_b);
  const int k = 32 / elem_bytes;
  auto elem = [&](const SmemDescriptor& s, int row, int kk) {
    const std::uint32_t a = s.address(row, kk * elem_bytes);
    if (a + std::uint32_t(elem_bytes) > smem.size()) throw std::out_of_range("emu: smem");
    return decode(&smem[a]);
  };
  if (int(d.size()) != 128) throw std::invalid_argument("emu: a warpgroup has 128 threads");
  for (int t = 0; t < 128; ++t) {
    if (int(d[std::size_t(t)].size()) != n / 2) throw std::invalid_argument("emu: N/2 registers");
    const int warp = t / 32, lane = t % 32, g = lane / 4, tq = lane % 4;
    for (int j = 0; j < n / 8; ++j)
      for (int half = 0; half < 2; ++half)      // rows g, g + 8
        for (int c = 0; c < 2; ++c) {           // columns 2t, 2t + 1
          const int row = 16 * warp + g + 8 * half, col = 8 * j + 2 * tq + c;
          double acc = 0;
          for (int kk = 0; kk < k; ++kk) acc += elem(da, row, kk) * elem(db, col, kk);
          d[std::size_t(t)][std::size_t(4 * j + 2 * half + c)] += acc;
        }
  }
}

}  // namespace vaeconv::emu
