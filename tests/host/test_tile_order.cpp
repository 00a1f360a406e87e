// test_tile_order.cpp — kernel/tile_order.hpp: the domain order is a permutation of the tiles in
// which each XCD (block b on XCD b % D) runs one contiguous share in order, and a block's
// TileCursor visits every tile of a grid exactly once, persistent grids (several rounds) and
// partial last rounds included. The GPU suite runs the order for real: the AMD sets' twins carry
// kL2Domains = 8 (AmdTables.*), whose every output element is checked.
#include <gtest/gtest.h>

#include <vector>

#include "vaeconv/kernel/tile_order.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv {
namespace {

using kernel::domain_tile;
using kernel::TileCursor;

TEST(TileOrder, DomainTileIsAPermutationWithOneContiguousSharePerDomain) {
  for (int blocks : {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 513, 1000, 8192, 13778}) {
    for (int domains : {1, 2, 6, 8}) {
      std::vector<int> seen(blocks, 0);
      for (int d = 0; d < domains; ++d) {
        int expect = -1;
        for (int b = d; b < blocks; b += domains) {
          const int t = domain_tile(b, blocks, domains);
          ASSERT_GE(t, 0);
          ASSERT_LT(t, blocks);
          ++seen[t];
          if (expect >= 0) {
            EXPECT_EQ(t, expect) << blocks << " blocks, " << domains << " domains";
          }
          expect = t + 1;  // the domain's next block runs the next tile
        }
      }
      for (int t = 0; t < blocks; ++t) ASSERT_EQ(seen[t], 1) << "tile " << t << " of " << blocks;
    }
  }
}

TEST(TileOrder, OneDomainIsBlockOrder) {
  for (int b = 0; b < 100; ++b) EXPECT_EQ(domain_tile(b, 100, 1), b);
}

TEST(TileOrder, TheCoutTilesOfAPixelBlockShareADomain) {
  // 4 Cout tiles per pixel block, 4096 tiles over 8 XCDs: in domain order the four tiles of a
  // pixel block run on one XCD (in block order on four).
  const int blocks = 4096, n_tiles = 4, domains = 8;
  std::vector<int> domain_of(blocks);
  for (int b = 0; b < blocks; ++b) domain_of[domain_tile(b, blocks, domains)] = b % domains;
  for (int pixel_block = 0; pixel_block < blocks / n_tiles; ++pixel_block)
    for (int n = 1; n < n_tiles; ++n)
      ASSERT_EQ(domain_of[pixel_block * n_tiles + n], domain_of[pixel_block * n_tiles]);
}

// Every tile once over all blocks and rounds of a grid (grid < tiles: a persistent grid).
void expect_each_tile_once(int tiles, int grid, int domains) {
  kernel::ConvParams p;
  p.tiles = tiles;
  p.l2_domains = domains;
  std::vector<int> seen(tiles, 0);
  for (int block = 0; block < grid; ++block) {
    int rounds = 0;
    for (TileCursor c(p, block, grid); c.valid(); c.advance()) {
      ASSERT_GE(c.tile(), 0);
      ASSERT_LT(c.tile(), tiles);
      // round r's tiles are [r * grid, r * grid + grid)
      ASSERT_EQ(c.tile() / grid, rounds) << "block " << block;
      ++seen[c.tile()];
      ++rounds;
    }
  }
  for (int t = 0; t < tiles; ++t)
    ASSERT_EQ(seen[t], 1) << "tile " << t << " of " << tiles << ", grid " << grid << ", "
                          << domains << " domains";
}

TEST(TileOrder, CursorVisitsEveryTileOnce) {
  for (int domains : {1, 8})
    for (int tiles : {1, 9, 100, 1024, 4099}) {
      expect_each_tile_once(tiles, tiles, domains);        // one tile per block
      expect_each_tile_once(tiles, tiles + 5, domains);    // a grid past the tiles
      for (int grid : {1, 7, 64, 264, 1000})                // persistent: rounds, a partial last
        if (grid < tiles) expect_each_tile_once(tiles, grid, domains);
    }
}

struct NoDomains {};
struct EightDomains {
  static constexpr int kL2Domains = 8;
};

TEST(TileOrder, ASetWithoutDomainsKeepsBlockOrder) {
  EXPECT_EQ(kernel::L2DomainsOf<NoDomains>::value, 1);
  EXPECT_EQ(kernel::L2DomainsOf<EightDomains>::value, 8);
}

}  // namespace
}  // namespace vaeconv
