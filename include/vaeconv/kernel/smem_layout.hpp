// vaeconv/kernel/smem_layout.hpp — the LDS layout of an operand tile, shared by every target.
//
// A tile is `rows` rows of `chunks` 16-byte chunks (8 bf16 along K). Chunk c of row r is stored
// at chunk position c ^ f(r) of that row: an XOR swizzle that puts the 8 rows one ldmatrix phase
// (or one ds_read_b128 group of 8 lanes) reads at the same logical chunk into 8 different
// 16-byte bank groups of a 128-byte bank line, so neither reads nor the copy's writes conflict.
//   chunks = 8 (128-byte rows): f(r) = r % 8
//   chunks = 4 ( 64-byte rows): f(r) = (r / 2) % 4   (two rows share a bank line)
//   chunks = 2 ( 32-byte rows): f(r) = (r / 4) % 2
// tests/host/test_smem_layout.cpp checks the bijection and the conflict-freedom.
#pragma once
#include "vaeconv/core/config.hpp"

namespace vaeconv::kernel {

template <int Chunks>
struct SwizzledTile {
  static_assert(Chunks == 2 || Chunks == 4 || Chunks == 8, "16, 32 or 64 bf16 per row");
  static constexpr int kChunks = Chunks;
  static constexpr int kRowsPerLine = 8 / Chunks;  // rows sharing one 128-byte bank line
  static constexpr int kRowBytes = Chunks * 16;
  // The XOR pattern repeats every 8 rows for every chunk count: a block of rows starting on a
  // multiple of 8 sits at its unswizzled address (what a wgmma descriptor needs).
  static constexpr int kRepeatBytes = 8 * kRowBytes;
  VAECONV_HD static constexpr int physical_chunk(int row, int chunk) {
    return chunk ^ ((row / kRowsPerLine) % Chunks);
  }
  // Byte offset of (row, chunk) from the tile's start.
  VAECONV_HD static constexpr int offset(int row, int chunk) {
    return (row * Chunks + physical_chunk(row, chunk)) * 16;
  }
};

}  // namespace vaeconv::kernel
