// vaeconv/kernel/epilogue_shape.hpp — how the epilogue stages a block tile's accumulators in LDS.
//
// The fp32 tile goes through LDS in column slabs (rows padded by 4 floats against bank conflicts):
// the widest slab that fits the pipeline's LDS, so the epilogue needs no LDS of its own. Host code
// (tests/host/test_epilogue_shape.cpp) checks the rule on the sizes alone.
#pragma once
#include "vaeconv/core/config.hpp"

namespace vaeconv::kernel {

template <class Policy>
struct EpilogueShape {
  static constexpr int kPadFloats = 4;
  // The widest column slab whose fp32 staging fits the pipeline's LDS, among the divisors of BN
  // that are whole atoms and whole 8-channel store chunks: an atom's columns must not straddle
  // two slabs (Epilogue::run scatters whole atoms). So BN = 96 with 32-wide atoms may take three
  // slabs of 32, which halving alone could not. When no slab of all BM rows fits a pipeline of
  // fewer buffers than stages (TwoBufferTileShape, OneBufferTileShape), each slab is staged in
  // row groups of whole atom rows: the slab and group sizes that fit with the fewest passes
  // (slabs x groups; the wider slab on a tie). Otherwise, when nothing fits, the narrowest slab
  // of all rows is taken and the kernel's LDS grows to its size (ConvKernel::kSmemBytes).
  static constexpr int bytes(int cols, int rows = Policy::BM) {
    return rows * (cols + kPadFloats) * 4;
  }
  // The LDS the staging may take: the pipeline's, less the buffers that only a target whose
  // copies land in LDS keeps beyond the shape's own (TilePolicy::kLdsBuffers, Shape::kLdsStages).
  static constexpr int kBudget =
      Policy::kPipelineBytes - (Policy::kLdsBuffers - Policy::kLdsStages) * Policy::kStageBytes;
  static constexpr bool fits(int cols, int rows = Policy::BM) {
    return bytes(cols, rows) <= kBudget;
  }
  // Slab and row-group units: whole atoms and whole store chunks; for a tile with fewer LDS
  // buffers than stages (TwoBufferTileShape, OneBufferTileShape) whole 32 x 32 MFMA atoms on every
  // target, so that its portable twin (16-wide mma.sync atoms) stages in the same slabs and row
  // groups as AMD.
  static constexpr bool kFewBuffers = Policy::kLdsStages < Policy::kStages;
  static constexpr int kMinUnit = kFewBuffers ? 32 : 8;
  static constexpr int kUnitCols = Policy::AtomT::kN > kMinUnit ? Policy::AtomT::kN : kMinUnit;
  static constexpr int kUnitRows = Policy::AtomT::kM > kMinUnit ? Policy::AtomT::kM : kMinUnit;
  static constexpr bool slab_ok(int cols) { return Policy::BN % cols == 0 && cols % kUnitCols == 0; }
  struct Slab {
    int cols, rows;
  };
  static constexpr Slab choose_slab() {
    int narrowest = Policy::BN;
    for (int cols = Policy::BN; cols >= kUnitCols; --cols) {
      if (!slab_ok(cols)) continue;
      if (fits(cols)) return {cols, Policy::BM};
      narrowest = cols;
    }
    Slab best{0, 0};
    int best_passes = 0;
    for (int rows = Policy::BM / 2; kFewBuffers && rows >= kUnitRows; --rows) {
      if (Policy::BM % rows != 0 || rows % kUnitRows != 0) continue;
      for (int cols = Policy::BN; cols >= kUnitCols; --cols) {
        if (!slab_ok(cols) || !fits(cols, rows)) continue;
        const int passes = (Policy::BN / cols) * (Policy::BM / rows);
        if (best.cols == 0 || passes < best_passes ||
            (passes == best_passes && cols > best.cols)) {
          best = {cols, rows};
          best_passes = passes;
        }
      }
    }
    return best.cols != 0 ? best : Slab{narrowest, Policy::BM};
  }
  static constexpr int kSlabCols = choose_slab().cols;
  static constexpr int kSlabRows = choose_slab().rows;  // BM, or a group of whole atom rows
  static constexpr int kSlabs = Policy::BN / kSlabCols;
  static constexpr int kRowGroups = Policy::BM / kSlabRows;
  static constexpr int kRowFloats = kSlabCols + kPadFloats;
  static constexpr int kBytes = bytes(kSlabCols, kSlabRows);
  // The staging also fits above the buffers of the K tiles copied ahead (Policy::kAheadBytes):
  // a kernel may then stage it while the next tile's first copies land (conv_kernel.hpp).
  static constexpr bool kFitsAboveAhead = kBytes <= Policy::kPipelineBytes - Policy::kAheadBytes;
  static constexpr int kChunksPerRow = kSlabCols / 8;  // 8-channel store chunks per slab row
  static_assert(Policy::BN % kSlabCols == 0, "slabs tile BN");
  static_assert(Policy::BM % kSlabRows == 0 && kSlabRows % kUnitRows == 0,
                "row groups tile BM in whole atom rows");
  static_assert(kSlabCols % Policy::AtomT::kN == 0 && kSlabCols % 8 == 0,
                "a slab holds whole atoms and whole store chunks");

  // The index rules of Epilogue::run, host-callable so tests/host/test_epilogue_shape.cpp can
  // replay the scatter and the store for every tile.
  // Whether the atom whose first column is atom_col (in the block tile) is staged with slab s.
  VAECONV_HD static constexpr bool atom_in_slab(int atom_col, int s) {
    return !(atom_col + Policy::AtomT::kN <= s * kSlabCols || atom_col >= (s + 1) * kSlabCols);
  }
  // Whether the atom whose first row is atom_row (in the block tile) is staged with row group g.
  VAECONV_HD static constexpr bool atom_in_group(int atom_row, int g) {
    return atom_row >= g * kSlabRows && atom_row < (g + 1) * kSlabRows;
  }
  // Where tile element (row, col) is staged while slab s, row group g is (col within that slab,
  // row within that group).
  VAECONV_HD static constexpr int stage_index(int row, int col, int s, int g = 0) {
    return (row - g * kSlabRows) * kRowFloats + col - s * kSlabCols;
  }
  // Store step idx (one 8-channel chunk of one row of row group g): its row in the block tile,
  // and its first column in the slab.
  VAECONV_HD static constexpr int store_row(int idx, int g = 0) {
    return g * kSlabRows + idx / kChunksPerRow;
  }
  VAECONV_HD static constexpr int store_col(int idx) { return (idx % kChunksPerRow) * 8; }

  // --- The packed staging (Epilogue::run_packed): the whole tile as bf16, already scaled, biased
  // and rounded in registers, when there is no residual to add before the rounding and the output
  // is bf16. Half the LDS bytes of the fp32 slabs and one 16-byte LDS read per stored chunk.
  // Rows are padded by 8 bf16 (16 bytes): they stay 16-byte aligned, and the 8 rows of one
  // accumulator store (row stride 4 words mod 32 apart for every BN here) hit distinct banks.
  static constexpr int kPackedPad = 8;
  static constexpr int kPackedRowElems = Policy::BN + kPackedPad;
  static constexpr int kPackedBytes = Policy::BM * kPackedRowElems * 2;
  static constexpr int kPackedChunksPerRow = Policy::BN / 8;
  // A kernel's LDS: its pipeline's or the fp32 staging's, the larger (the epilogue stages in it).
  static constexpr int kKernelBytes =
      Policy::kPipelineBytes > kBytes ? Policy::kPipelineBytes : kBytes;
  // The LDS the kernel hands the epilogue: above the copies ahead when it overlaps them
  // (kFitsAboveAhead), else all of its LDS.
  static constexpr int kStagingRoom =
      kFitsAboveAhead ? Policy::kPipelineBytes - Policy::kAheadBytes : kKernelBytes;
  static constexpr bool kPackedFits = kPackedBytes <= kStagingRoom;
  VAECONV_HD static constexpr int packed_index(int row, int col) {
    return row * kPackedRowElems + col;
  }
  VAECONV_HD static constexpr int packed_store_row(int idx) { return idx / kPackedChunksPerRow; }
  VAECONV_HD static constexpr int packed_store_col(int idx) {
    return (idx % kPackedChunksPerRow) * 8;
  }
};

// Whether an atom's accumulator registers come in pairs of adjacent columns of one row (r even:
// C[row][col], r + 1: C[row][col + 1], col even), so that two bf16 results pack into one 32-bit
// LDS store: true for the NVIDIA layouts, false for MFMA (a lane holds one column, many rows).
template <class Layout>
VAECONV_HD constexpr bool c_pairs_along_n() {
  if (Layout::kCElems % 2 != 0) return false;
  for (int l = 0; l < Layout::kLanes; ++l)
    for (int r = 0; r < Layout::kCElems; r += 2)
      if (Layout::c_col(l, r) % 2 != 0 || Layout::c_col(l, r + 1) != Layout::c_col(l, r) + 1 ||
          Layout::c_row(l, r + 1) != Layout::c_row(l, r))
        return false;
  return true;
}

// Whether they come in pairs of adjacent rows of one column instead (r even: C[row][col], r + 1:
// C[row + 1][col]): true for the MFMA layouts. The packed epilogue then rounds the pair with one
// Arch::pack_bf16x2 (one instruction on gfx950) and stores its halves as two 16-bit LDS writes.
template <class Layout>
VAECONV_HD constexpr bool c_pairs_along_m() {
  if (Layout::kCElems % 2 != 0) return false;
  for (int l = 0; l < Layout::kLanes; ++l)
    for (int r = 0; r < Layout::kCElems; r += 2)
      if (Layout::c_col(l, r + 1) != Layout::c_col(l, r) ||
          Layout::c_row(l, r + 1) != Layout::c_row(l, r) + 1)
        return false;
  return true;
}

// The column leader of accumulator register r: the first register r0 <= r that holds the same
// output column as r in every lane (an MFMA lane holds one column in all its registers, so every
// register's leader is 0; an NVIDIA lane holds column pairs that repeat 8 rows down, so r and
// r + 2 share a leader). The packed epilogue reads a column's scale and bias once, at its leader,
// and applies them to every register it leads.
template <class Layout>
VAECONV_HD constexpr int c_col_leader(int r) {
  for (int r0 = 0; r0 < r; ++r0) {
    bool same = true;
    for (int l = 0; l < Layout::kLanes; ++l)
      if (Layout::c_col(l, r0) != Layout::c_col(l, r)) same = false;
    if (same) return r0;
  }
  return r;
}

}  // namespace vaeconv::kernel
