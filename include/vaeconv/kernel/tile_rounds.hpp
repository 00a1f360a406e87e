// vaeconv/kernel/tile_rounds.hpp — the round rule: which of a table's two wide tiles a conv gets.
//
// A table set may hold, for one operand type, two wide tiles of the same block shape (BM x BN):
// its wide tile, which keeps more blocks resident per CU (a deeper K pipeline in less LDS), and
// a few-rounds tile with fewer resident blocks and deeper K tiles. The wide tile is faster where
// the grid fills many rounds of blocks (more waves hide the K-tile chain); where it does not
// save a round, its extra residency buys nothing and its longer K chain (more, shallower K
// tiles) costs time in the last, partial round: the few-rounds tile is faster there. The rule,
// a contract of the dispatch (api/kernel_plan.hpp's choose_kernel):
//
//   resident(tile) = the target's LDS per CU / the tile's LDS (rounded down)
//   rounds(tile)   = ceil(blocks per launch / (units x resident(tile)))
//   the wide tile where rounds(wide) < rounds(few-rounds tile), else the few-rounds tile.
//
// units is the target's NOMINAL CU count, not the device's: gfx942 plans as an MI300X (304 CUs;
// an MI325X has as many; an MI300A (228) or MI308X (80) gets the MI300X's choice, which runs
// correctly and may be the slower tile there), gfx950 as an MI355X (256; its set has one wide
// tile per operand type, no few-rounds partner, and the small-grid rule below: tile_table.hpp).
// The rule reads only
// the conv's grid (its descriptor) and these constants: which_kernel plans on the host what
// conv_forward runs, with no device query and no tuning at run time. resident() counts LDS
// only: the tiles under the rule are limited by LDS, not registers, on their target (the
// resource report's occupancy of their kernels; docs/perf-notes.md, issue 25 W6), and the
// epilogue stages inside the pipeline's LDS (tile_table.hpp asserts it). Host code.
#pragma once
#include <cstdint>

namespace vaeconv::kernel {

// The target constants the rule reads: nominal compute units and LDS bytes per unit.
struct RoundTarget {
  int units;
  int lds_bytes_per_unit;
};
constexpr RoundTarget kRoundTargetGfx942{304, 64 * 1024};   // MI300X
constexpr RoundTarget kRoundTargetGfx950{256, 160 * 1024};  // MI355X

// Rows of a B buffer where copies stage in registers (AMD, wave64; TilePolicy::kLdsRowsB): a B
// tile of one or more whole copy passes of the block's threads (16 bytes each) and a partial
// last pass is padded to whole passes, so every thread writes each of its staged rows; a B tile
// narrower than one pass keeps BN rows (padding would double its LDS) and its surplus threads
// skip their write.
template <class Shape>
constexpr int staged_lds_rows_b(int elem_bytes) {
  const int rows_per_pass = Shape::kWarps * 64 / (Shape::BK * elem_bytes / 16);
  return Shape::BN < rows_per_pass
             ? Shape::BN
             : (Shape::BN + rows_per_pass - 1) / rows_per_pass * rows_per_pass;
}

// The LDS of a tile's K pipeline where copies stage in registers: its LDS buffers x (BM rows of
// A + the B buffer's rows) of BK elements.
template <class Shape>
constexpr int pipeline_lds_bytes(int elem_bytes) {
  return Shape::kLdsStages * (Shape::BM + staged_lds_rows_b<Shape>(elem_bytes)) * Shape::BK *
         elem_bytes;
}

// Blocks of one tile that fit a unit's LDS (at least one: a launch always runs).
constexpr int resident_blocks(const RoundTarget& t, int block_lds_bytes) {
  const int b = block_lds_bytes > 0 ? t.lds_bytes_per_unit / block_lds_bytes : 1;
  return b > 0 ? b : 1;
}

// Rounds of a grid of `blocks` over the target's units, `resident` blocks per unit at a time.
constexpr int64_t grid_rounds(const RoundTarget& t, int64_t blocks, int resident) {
  const int64_t slots = int64_t(t.units) * resident;
  return (blocks + slots - 1) / slots;
}

// The round rule: whether a launch takes the wide tile (else the few-rounds tile), from each
// tile's blocks per launch and LDS per block.
constexpr bool wide_saves_a_round(const RoundTarget& t, int64_t wide_blocks, int wide_lds_bytes,
                                  int64_t few_blocks, int few_lds_bytes) {
  return grid_rounds(t, wide_blocks, resident_blocks(t, wide_lds_bytes)) <
         grid_rounds(t, few_blocks, resident_blocks(t, few_lds_bytes));
}

// The small-grid rule (a table with a WideSmallGrid tile, tile_table.hpp): a launch whose grid
// on the tile the conv would otherwise take (the wide tile, its few-rounds partner or the
// 192-wide one) gives each unit at most the table's few blocks (gfx950: one of its two slots;
// gfx942: two of the few-rounds tile's two, a partial round) leaves their K-tile chains exposed;
// it takes the small-grid tile instead, whose blocks split K over two groups of warps
// (kernel/sliced_k.hpp), so each chain is half as long. Like the round rule it reads only the
// grid and the target's nominal units (host code, no device query).
constexpr bool grid_leaves_few_blocks_per_unit(const RoundTarget& t, int64_t blocks,
                                               int blocks_per_unit) {
  return blocks <= int64_t(t.units) * blocks_per_unit;
}
constexpr bool grid_leaves_one_block_per_unit(const RoundTarget& t, int64_t blocks) {
  return grid_leaves_few_blocks_per_unit(t, blocks, 1);
}

}  // namespace vaeconv::kernel
