// vaeconv/kernel/block_tiling.hpp — how a kernel family's blocks cover a frame's output pixels.
//
// Every family numbers its block tiles the same way (frame by frame, the Cout tiles of one pixel
// block adjacent): per frame ConvParams::m_blocks pixel blocks times n_tiles Cout tiles. What a
// pixel block is differs: a run of BM consecutive pixels (LinearTiles: the implicit GEMM), or a
// patch of kRows x kCols output pixels, patch_cols per frame row (PatchTiles: the tap-reduce,
// halo and tap-row kernels). The host grid (block_grid, api/kernel_plan.hpp) reads the tiling of
// a kernel (Kernel::Tiling) and sets m_blocks and patch_cols from it.
#pragma once

namespace vaeconv::kernel {

struct LinearTiles {
  static constexpr bool kPatches = false;
  static constexpr int kRows = 0, kCols = 0;  // (no patch)
};
template <int Rows, int Cols>
struct PatchTiles {
  static constexpr bool kPatches = true;
  static constexpr int kRows = Rows, kCols = Cols;
};

}  // namespace vaeconv::kernel
