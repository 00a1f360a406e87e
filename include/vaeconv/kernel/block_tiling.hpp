// vaeconv/kernel/block_tiling.hpp — how a kernel family's blocks cover a frame's output pixels.
//
// Every family numbers its block tiles the same way (frame by frame, the Cout tiles of one pixel
// block adjacent): per frame ConvParams::m_blocks pixel blocks times n_tiles Cout tiles. What a
// pixel block is differs: a run of BM consecutive pixels (LinearTiles: the implicit GEMM), or a
// patch of kRows x kCols output pixels, patch_cols per frame row (PatchTiles: the tap-reduce,
// halo and tap-row kernels). The host grid (block_grid, api/kernel_plan.hpp) reads the tiling of
// a kernel (Kernel::Tiling) and sets m_blocks and patch_cols from it; a block finds its tile's
// coordinates with tile_coord, the one mapping of every family.
//
// A launch covers every frame whole, or one range of each frame's pixels (LaunchPart): a conv the
// tail rule splits (kernel/tail_split.hpp) runs its tile over pixels [0, split) of every frame
// and a smaller tile over [split, frame end), two launches whose pixel blocks start at m_begin.
#pragma once

#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"

namespace vaeconv::kernel {

// One launch of a conv's kernels: the upsample phase or temporal half it runs (-1: none) and the
// pixels of every output frame it covers, [m_begin, m_end) (m_end 0: to the frame's end; a range
// only on LinearTiles, whose pixel blocks are runs of pixels).
struct LaunchPart {
  int phase = -1;
  int m_begin = 0;
  int m_end = 0;
  constexpr bool whole_frames() const { return m_begin == 0 && m_end == 0; }
};
constexpr LaunchPart phase_part(int phase) { return LaunchPart{phase, 0, 0}; }

struct LinearTiles {
  static constexpr bool kPatches = false;
  static constexpr bool kOneCoutTile = false;
  static constexpr int kRows = 0, kCols = 0;  // (no patch)
};
// OneCoutTile: the family's BN holds every channel it takes (n_tiles is 1; the tap-reduce kernel).
template <int Rows, int Cols, bool OneCoutTile = false>
struct PatchTiles {
  static constexpr bool kPatches = true;
  static constexpr bool kOneCoutTile = OneCoutTile;
  static constexpr int kRows = Rows, kCols = Cols;
};

// Tile i's coordinates: frame i / (m_blocks * n_tiles); inside it, Cout tile x % n_tiles of pixel
// block x / n_tiles (x = i % per frame), the pixel block a run of BM pixels from m0 or the patch
// from (oh0, ow0), patch_cols patches per frame row. A run's first pixel counts from the launch's
// m_begin.
template <class Tiling, int BM, int BN>
VAECONV_HD inline BlockCoord tile_coord(const ConvParams& p, int tile) {
  const int per_frame = Tiling::kOneCoutTile ? p.m_blocks : p.m_blocks * p.n_tiles;
  const int x = tile % per_frame;
  BlockCoord b = frame_coord(p, tile / per_frame);
  const int block = Tiling::kOneCoutTile ? x : x / p.n_tiles;
  b.n0 = Tiling::kOneCoutTile ? 0 : (x % p.n_tiles) * BN;
  if constexpr (Tiling::kPatches) {
    b.oh0 = (block / p.patch_cols) * Tiling::kRows;
    b.ow0 = (block % p.patch_cols) * Tiling::kCols;
  } else {
    b.m0 = p.m_begin + block * BM;
  }
  return b;
}

}  // namespace vaeconv::kernel
