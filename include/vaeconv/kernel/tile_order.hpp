// vaeconv/kernel/tile_order.hpp — which block tile a block runs.
//
// CDNA deals a launch's workgroups round-robin over its XCDs (block b to XCD b % D), and each
// XCD has its own L2 in front of the Infinity Cache. In block order (block b runs tile b) the
// Cout tiles of one pixel block, adjacent in tile order (block_tiling.hpp), run on different
// XCDs, and each XCD fetches the pixel block's A tile from the Infinity Cache. In domain order
// each XCD runs one contiguous share of the tiles (the first tiles % D shares one tile longer),
// so those Cout tiles run on one XCD at about the same time and share A through its L2
// (bench/cdna_model/l2_reuse.py models the hits; HipKittens measured the same reordering on
// MI355X GEMMs). The order is a permutation of the tiles: a domain count that is not the
// device's XCD count costs L2 hits, never a tile. ConvParams::l2_domains carries it (the table
// set's kL2Domains, tile_table.hpp); 1 is block order.
//
// A persistent grid (conv_kernel.hpp) runs the tiles in rounds of its grid: round r's tiles
// [r * grid, (r + 1) * grid) are dealt in domain order among the blocks, so every round keeps
// the sharing.
//
// TileCursor walks one block's tiles: tile(), valid(), advance(). The build with Hopper's wgmma
// kernels (one L2) keeps block order at compile time (kDomainTileOrder), so its kernels do not
// carry the arithmetic.
#pragma once

#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/conv_params.hpp"

namespace vaeconv::kernel {

#if defined(VAECONV_WIDE_WGMMA)
inline constexpr bool kDomainTileOrder = false;
#else
inline constexpr bool kDomainTileOrder = true;
#endif

// The tile block `block` of `blocks` runs when XCD d = block % domains runs tiles
// [start(d), start(d) + share(d)) in order: the inverse of the hardware's round-robin deal.
VAECONV_HD inline int domain_tile(int block, int blocks, int domains) {
  if (domains <= 1) return block;
  const int per = (blocks + domains - 1) / domains;  // the longer shares' length
  const int tall = blocks % domains == 0 ? domains : blocks % domains;  // how many are longer
  const int d = block % domains, local = block / domains;
  return d < tall ? d * per + local : tall * per + (d - tall) * (per - 1) + local;
}

// One block's tiles: `round` r of a grid of `grid` blocks over p.tiles tiles holds tiles
// [r * grid, r * grid + n), n = min(grid, tiles - r * grid); the block runs the one domain order
// gives it, or none when block >= n.
class TileCursor {
 public:
  VAECONV_HD TileCursor(const ConvParams& p, int block, int grid)
      : tiles_(p.tiles), domains_(p.l2_domains), block_(block), grid_(grid), base_(0) {
    locate();
  }
  VAECONV_HD int tile() const { return tile_; }
  VAECONV_HD bool valid() const { return tile_ >= 0; }
  VAECONV_HD void advance() {  // the next round (limits: base + grid stays below 2^31)
    base_ += grid_;
    locate();
  }

 private:
  VAECONV_HD void locate() {
    if constexpr (!kDomainTileOrder) {
      tile_ = base_ + block_ < tiles_ ? base_ + block_ : -1;
    } else {
      const int left = tiles_ - base_;
      const int n = left < grid_ ? left : grid_;
      tile_ = block_ < n ? base_ + domain_tile(block_, n, domains_) : -1;
    }
  }
  int tiles_, domains_, block_, grid_, base_, tile_ = -1;
};

}  // namespace vaeconv::kernel
