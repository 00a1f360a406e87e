// The epilogue's column slabs (kernel/epilogue.hpp): a slab must hold whole atoms and whole
// 8-channel store chunks, or the accumulator scatter writes an atom's columns past the slab row.
// The H200 sweep of session 3 found that bug with a 128 x 48 tile (two 24-column slabs of a
// 16-wide atom: 525 of 6144 sampled outputs wrong); the rule is now checked here for every tile
// the table could hold.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vaeconv/arch/fragment_layouts.hpp"
#include "vaeconv/arch/wgmma_layout.hpp"
#include "vaeconv/kernel/epilogue_shape.hpp"
#include "vaeconv/kernel/tile_policy.hpp"

namespace vaeconv {
namespace {

// The sizes EpilogueShape reads from a TilePolicy.
// Its LDS buffers: one stage of all kPipelineBytes (the shape's own count, as on a register-
// staged target), unless a test says otherwise.
template <int BM_, int BN_, int kPipelineBytes_, int kAtomN, int kAheadBytes_ = kPipelineBytes_,
          int kAtomM = 32>
struct FakePolicy {
  static constexpr int BM = BM_, BN = BN_, kPipelineBytes = kPipelineBytes_;
  static constexpr int kAheadBytes = kAheadBytes_;  // default: no room above the copies ahead
  static constexpr int kStageBytes = kPipelineBytes_, kLdsBuffers = 1, kLdsStages = 1, kStages = 1;
  struct AtomT {
    static constexpr int kM = kAtomM, kN = kAtomN;
  };
};

TEST(EpilogueShape, SlabsHoldWholeAtoms) {
  // The sweep candidate that failed on the H200: 128 x 48 x 32, 2 stages, 16-wide atoms.
  using Failed = kernel::EpilogueShape<FakePolicy<128, 48, 2 * (128 + 48) * 64, 16>>;
  EXPECT_EQ(Failed::kSlabCols, 16) << "three whole-atom slabs, not two slabs of 24 columns";
  // Shipped shapes keep their slabs: NVIDIA fp8 wide 192 x 96 (4 stages), AMD bf16 wide 128 x 128.
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<192, 96, 4 * (192 + 96) * 64, 16>>::kSlabCols), 48);
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<128, 96, 4 * (128 + 96) * 64, 16>>::kSlabCols), 96);
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<128, 128, 2 * (128 + 128) * 64, 32>>::kSlabCols), 32);
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<64, 96, 2 * (64 + 96) * 64, 16>>::kSlabCols), 48);
  // NVIDIA wgmma wide tiles (one 96-wide atom per warpgroup) keep one slab.
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<128, 96, 4 * (128 + 96) * 128, 96>>::kSlabCols), 96);
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<64, 96, 4 * (64 + 96) * 64, 96>>::kSlabCols), 96);
  // A 96-wide AMD tile (32-wide MFMA atoms, 2 stages): three slabs of 32 fit its 28 KiB pipeline,
  // where halving stopped at 96 columns (50 KiB of LDS: one workgroup per gfx942 CU).
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<128, 96, 2 * (128 + 96) * 64, 32>>::kSlabCols), 32);
}

// --- Replay of Epilogue::run's index rules for real tile policies -------------------------------
// Every atom group scatters its accumulators (the atom's c_row/c_col) into the staging slab
// through atom_in_slab/stage_index, then the store steps read 8-channel chunks back through
// store_row/store_col/stage_index. Each tile element must be staged once, from the accumulator
// that holds it, inside its slab row, and stored exactly once.
template <class L>
struct AtomOf {
  using Layout = L;
  static constexpr int kM = L::kM, kN = L::kN, kK = L::kK;
};
template <int W>
struct ArchOf {
  static constexpr int kWaveSize = W;
  struct Empty {};
  template <int N>
  struct Staged {
    int v[N];
  };
  // 64-lane waves stand for AMD (copies staged in registers), 32 for NVIDIA (cp.async).
  template <int N>
  using Slot = std::conditional_t<W == 64, Staged<N>, Empty>;
};
// A wgmma-like atom: reads LDS itself, optionally promoting each K tile (e4m3).
template <class L, bool kPromote>
struct LdsAtomOf : AtomOf<L> {
  static constexpr bool kOperandsFromLds = true, kPromoteEachTile = kPromote;
};

template <class P>
std::string replay_epilogue() {
  using S = kernel::EpilogueShape<P>;
  using L = typename P::AtomT::Layout;
  const int stage_floats = S::kBytes / 4;
  std::vector<int> stored(static_cast<size_t>(P::BM * P::BN), 0);
  for (int s = 0; s < S::kSlabs; ++s)
   for (int g = 0; g < S::kRowGroups; ++g) {
    std::vector<int> stage(static_cast<size_t>(stage_floats), -1);  // which element is staged
    for (int warp = 0; warp < P::kWarps; ++warp) {
      const int wm0 = (warp % P::kWarpsM) * P::WTM, wn0 = (warp / P::kWarpsM) * P::WTN;
      for (int lane = 0; lane < P::kWaveSize; ++lane)
        for (int i = 0; i < P::kAtomsM; ++i)
          for (int j = 0; j < P::kAtomsN; ++j) {
            if (!S::atom_in_group(wm0 + i * P::AtomT::kM, g)) continue;
            const int atom_col = wn0 + j * P::AtomT::kN;
            if (!S::atom_in_slab(atom_col, s)) continue;
            for (int r = 0; r < L::kCElems; ++r) {
              const int row = wm0 + i * P::AtomT::kM + L::c_row(lane, r);
              const int col = atom_col + L::c_col(lane, r);
              if (col < s * S::kSlabCols || col >= (s + 1) * S::kSlabCols)
                return "element (" + std::to_string(row) + ", " + std::to_string(col) +
                       ") staged with slab " + std::to_string(s);
              if (row < g * S::kSlabRows || row >= (g + 1) * S::kSlabRows)
                return "element (" + std::to_string(row) + ", " + std::to_string(col) +
                       ") staged with row group " + std::to_string(g);
              const int at = S::stage_index(row, col, s, g);
              if (at < 0 || at >= stage_floats) return "staging index out of the slab buffer";
              if (stage[static_cast<size_t>(at)] != -1) return "two accumulators, one slot";
              stage[static_cast<size_t>(at)] = row * P::BN + col;
            }
          }
    }
    for (int idx = 0; idx < S::kSlabRows * S::kChunksPerRow; ++idx) {
      const int row = S::store_row(idx, g), cc = S::store_col(idx);
      for (int e = 0; e < 8; ++e) {
        const int col = s * S::kSlabCols + cc + e;
        const int got = stage[static_cast<size_t>(S::stage_index(row, col, s, g))];
        if (got != row * P::BN + col)
          return "store of (" + std::to_string(row) + ", " + std::to_string(col) +
                 ") reads the wrong staged element";
        ++stored[static_cast<size_t>(row * P::BN + col)];
      }
    }
  }
  for (int v : stored)
    if (v != 1) return "an element stored " + std::to_string(v) + " times";
  return "";
}

template <class Shape, int W, class L>
using PolicyOf = kernel::TilePolicy<Shape, ArchOf<W>, AtomOf<L>>;

// The same replay for the packed staging (Epilogue::run_packed): the whole tile in bf16, pairs of
// adjacent columns in one 32-bit store where the layout has them, 16-byte chunks read back. Also
// checks that the pair stores of one warp instruction (fixed atom and register, 32 lanes) hit 32
// distinct banks, and that each stored chunk is 16-byte aligned.
template <class P>
std::string replay_packed() {
  using S = kernel::EpilogueShape<P>;
  using L = typename P::AtomT::Layout;
  constexpr bool kPairs = kernel::c_pairs_along_n<L>();
  // MFMA: registers r, r + 1 (r even) are rows row, row + 1 of one column, rounded together and
  // staged as two 16-bit stores (the kernel's kRowPairs).
  constexpr bool kRowPairs = !kPairs && kernel::c_pairs_along_m<L>();
  if (!S::kPackedFits) return "the packed staging does not fit: the tile would fall back to fp32";
  const int stage_elems = S::kPackedBytes / 2;
  std::vector<int> stage(static_cast<size_t>(stage_elems), -1);
  for (int warp = 0; warp < P::kWarps; ++warp) {
    const int wm0 = (warp % P::kWarpsM) * P::WTM, wn0 = (warp / P::kWarpsM) * P::WTN;
    // The kernel's loop order: atom column j, leader register r0 (whose column's scale and bias
    // it reads), atom row i, the registers r0 leads. What is staged records the column whose
    // factors were applied (the leader's), so a wrong leader shows as a wrong staged element.
    for (int j = 0; j < P::kAtomsN; ++j)
      for (int r0 = 0; r0 < L::kCElems; r0 += kPairs ? 2 : 1) {
        if (kernel::c_col_leader<L>(r0) != r0) continue;
        for (int i = 0; i < P::kAtomsM; ++i)
        for (int r = 0; r < L::kCElems; r += kPairs || kRowPairs ? 2 : 1) {
          if (kernel::c_col_leader<L>(r) != r0) continue;
          std::vector<int> bank_used(32, -1);
          for (int lane = 0; lane < P::kWaveSize; ++lane) {
            const int row = wm0 + i * P::AtomT::kM + L::c_row(lane, r);
            const int col = wn0 + j * P::AtomT::kN + L::c_col(lane, r);
            const int factors_col = wn0 + j * P::AtomT::kN + L::c_col(lane, r0);
            const int at = S::packed_index(row, col);
            if (at < 0 || at + (kPairs ? 1 : 0) >= stage_elems) return "staging index out of range";
            for (int e = 0; e < (kPairs ? 2 : 1); ++e) {
              if (stage[static_cast<size_t>(at + e)] != -1) return "two accumulators, one slot";
              stage[static_cast<size_t>(at + e)] = row * P::BN + factors_col + e;
            }
            if (kRowPairs) {  // register r + 1: the pair's high half, one row down
              if (L::c_row(lane, r + 1) != L::c_row(lane, r) + 1 ||
                  L::c_col(lane, r + 1) != L::c_col(lane, r))
                return "register r + 1 is not the next row of register r's column";
              const int at1 = S::packed_index(row + 1, col);
              if (at1 < 0 || at1 >= stage_elems) return "staging index out of range";
              if (stage[static_cast<size_t>(at1)] != -1) return "two accumulators, one slot";
              stage[static_cast<size_t>(at1)] = (row + 1) * P::BN + factors_col;
            }
            if (kPairs) {
              if (at % 2 != 0) return "a pair store that is not 4-byte aligned";
              const int lane32 = lane % 32, bank = (at / 2) % 32;  // one warp of the atom group
              if (lane32 == 0) bank_used.assign(32, -1);
              if (bank_used[static_cast<size_t>(bank)] != -1)
                return "pair stores of lanes " + std::to_string(bank_used[static_cast<size_t>(bank)]) +
                       " and " + std::to_string(lane32) + " share bank " + std::to_string(bank);
              bank_used[static_cast<size_t>(bank)] = lane32;
            }
          }
        }
      }
  }
  std::vector<int> stored(static_cast<size_t>(P::BM * P::BN), 0);
  for (int idx = 0; idx < P::BM * S::kPackedChunksPerRow; ++idx) {
    const int row = S::packed_store_row(idx), col0 = S::packed_store_col(idx);
    if ((S::packed_index(row, col0) * 2) % 16 != 0) return "a stored chunk not 16-byte aligned";
    for (int e = 0; e < 8; ++e) {
      const int col = col0 + e;
      if (stage[static_cast<size_t>(S::packed_index(row, col))] != row * P::BN + col)
        return "store of (" + std::to_string(row) + ", " + std::to_string(col) +
               ") reads the wrong staged element";
      ++stored[static_cast<size_t>(row * P::BN + col)];
    }
  }
  for (int v : stored)
    if (v != 1) return "an element stored " + std::to_string(v) + " times";
  return "";
}

// The packed epilogue reads a column's scale and bias once, at the column's leader register, and
// applies them to the registers it leads: a leader comes first, and every register it leads holds
// the leader's column in every lane. The counts are the reads per atom and lane.
template <class L>
std::string check_leaders(int expected_leaders) {
  const int step = kernel::c_pairs_along_n<L>() ? 2 : 1;
  int leaders = 0;
  for (int r = 0; r < L::kCElems; r += step) {
    const int r0 = kernel::c_col_leader<L>(r);
    if (r0 > r || r0 % step != 0) return "register " + std::to_string(r) + ": bad leader";
    if (r0 == r) ++leaders;
    for (int l = 0; l < L::kLanes; ++l)
      for (int e = 0; e < step; ++e)
        if (L::c_col(l, r0 + e) != L::c_col(l, r + e))
          return "lane " + std::to_string(l) + " register " + std::to_string(r + e) +
                 " is not in its leader's column";
  }
  if (leaders != expected_leaders)
    return std::to_string(leaders) + " leaders, expected " + std::to_string(expected_leaders);
  return "";
}

TEST(EpilogueShape, ColumnLeadersHoldTheirColumnsInEveryLane) {
  using namespace vaeconv::layout;
  EXPECT_EQ(check_leaders<Mfma32x32x16Bf16>(1), "");  // a lane holds one column
  EXPECT_EQ(check_leaders<Mfma16x16x32Bf16>(1), "");
  EXPECT_EQ(check_leaders<Mfma32x32x64Fp8>(1), "");
  EXPECT_EQ(check_leaders<MmaM16N16K16Bf16>(2), "");  // two n8 halves, rows g and g + 8
  EXPECT_EQ(check_leaders<MmaM16N16K32Fp8>(2), "");
  EXPECT_EQ((check_leaders<WgmmaM64<96, 2>>(12)), "");  // one pair per 8 columns
  EXPECT_EQ((check_leaders<WgmmaM64<96, 1>>(12)), "");
  // A register whose column differs from register 0's in one lane only gets its own leader.
  struct Skewed : Mfma16x16x32Bf16 {
    VAECONV_HD static constexpr int c_col(int l, int r) { return l % 16 + (r == 3 && l == 17); }
  };
  EXPECT_EQ(kernel::c_col_leader<Skewed>(3), 3);
  EXPECT_EQ(check_leaders<Skewed>(2), "");
}

// Every shipped tile takes the packed staging (kPackedFits), and its index rules hold; a tile
// that silently lost it would fall back to the fp32 slabs and only run slower.
TEST(EpilogueShape, PackedStagingFitsAndCoversEveryShippedTileOnce) {
  using namespace vaeconv::layout;
  using kernel::TileShape;
  static_assert(kernel::c_pairs_along_n<WgmmaM64<96, 2>>() &&
                    kernel::c_pairs_along_n<MmaM16N16K16Bf16>() &&
                    kernel::c_pairs_along_n<MmaM16N16K32Fp8>(),
                "NVIDIA accumulators hold adjacent column pairs");
  static_assert(!kernel::c_pairs_along_n<Mfma32x32x16Bf16>() &&
                    !kernel::c_pairs_along_n<Mfma16x16x32Bf16>(),
                "an MFMA lane holds one column");
  static_assert(kernel::c_pairs_along_m<Mfma32x32x16Bf16>() &&
                    kernel::c_pairs_along_m<Mfma16x16x32Bf16>() &&
                    kernel::c_pairs_along_m<Mfma32x32x64Fp8>() &&
                    kernel::c_pairs_along_m<Mfma32x32x32Fp8>() &&
                    !kernel::c_pairs_along_m<MmaM16N16K16Bf16>() &&
                    !kernel::c_pairs_along_m<WgmmaM64<96, 2>>(),
                "an MFMA lane's registers r, r + 1 are adjacent rows of its column");
  // AMD: wide bf16 / fp8, narrow, tiny (2 stages).
  using AmdWide = PolicyOf<TileShape<128, 96, 32, 4, 1, 2>, 64, Mfma32x32x16Bf16>;
  using AmdWideFp8 = PolicyOf<TileShape<128, 96, 64, 4, 1, 2>, 64, Mfma32x32x64Fp8>;
  using AmdNarrow = PolicyOf<TileShape<128, 32, 32, 4, 1, 2>, 64, Mfma32x32x16Bf16>;
  using AmdTiny = PolicyOf<TileShape<128, 16, 32, 4, 1, 2>, 64, Mfma16x16x32Bf16>;
  EXPECT_EQ(replay_packed<AmdWide>(), "");
  EXPECT_EQ(replay_packed<AmdWideFp8>(), "");
  EXPECT_EQ(replay_packed<AmdNarrow>(), "");
  EXPECT_EQ(replay_packed<AmdTiny>(), "");
  // NVIDIA: the persistent bf16 wgmma tile (above its copies ahead), the fp8 wgmma tile, the
  // mma.sync element-wise, narrow and tiny tiles.
  using Bf16Wide = kernel::TilePolicy<TileShape<128, 96, 64, 2, 1, 4, 2>, ArchOf<32>,
                                      LdsAtomOf<WgmmaM64<96, 2>, false>>;
  using Fp8Wide = kernel::TilePolicy<TileShape<64, 96, 64, 1, 1, 4, 3>, ArchOf<32>,
                                     LdsAtomOf<WgmmaM64<96, 1>, true>>;
  using NvEl = PolicyOf<TileShape<64, 96, 32, 2, 2, 2, 4>, 32, MmaM16N16K16Bf16>;
  using NvElFp8 = PolicyOf<TileShape<192, 96, 64, 2, 2, 4>, 32, MmaM16N16K32Fp8>;
  using NvNarrow = PolicyOf<TileShape<128, 32, 32, 4, 1, 3>, 32, MmaM16N16K16Bf16>;
  using NvTiny = PolicyOf<TileShape<128, 16, 32, 4, 1, 3>, 32, MmaM16N16K16Bf16>;
  EXPECT_TRUE(kernel::EpilogueShape<Bf16Wide>::kFitsAboveAhead);
  EXPECT_EQ(replay_packed<Bf16Wide>(), "");
  EXPECT_EQ(replay_packed<Fp8Wide>(), "");
  EXPECT_EQ(replay_packed<NvEl>(), "");
  EXPECT_EQ(replay_packed<NvElFp8>(), "");
  EXPECT_EQ(replay_packed<NvNarrow>(), "");
  EXPECT_EQ(replay_packed<NvTiny>(), "");
  EXPECT_EQ((kernel::EpilogueShape<Bf16Wide>::kPackedRowElems), 104);
}

TEST(EpilogueShape, ScatterAndStoreCoverEveryShippedTileOnce) {
  using namespace vaeconv::layout;
  using kernel::TileShape;
  // AMD wide tiles, 96 wide since session 4: three slabs of 32 columns.
  using AmdWide = PolicyOf<TileShape<128, 96, 32, 4, 1, 2>, 64, Mfma32x32x16Bf16>;
  using AmdWideFp8 = PolicyOf<TileShape<128, 96, 64, 4, 1, 2>, 64, Mfma32x32x64Fp8>;
  EXPECT_EQ(kernel::EpilogueShape<AmdWide>::kSlabs, 3);
  EXPECT_EQ(replay_epilogue<AmdWide>(), "");
  EXPECT_EQ(replay_epilogue<AmdWideFp8>(), "");
  EXPECT_EQ((replay_epilogue<PolicyOf<TileShape<128, 128, 32, 2, 2, 2>, 64, Mfma32x32x16Bf16>>()),
            "");  // the 128-wide tile it replaced: four slabs
  EXPECT_EQ((replay_epilogue<PolicyOf<TileShape<128, 32, 32, 4, 1, 2>, 64, Mfma32x32x16Bf16>>()),
            "");
  EXPECT_EQ((replay_epilogue<PolicyOf<TileShape<128, 16, 32, 4, 1, 2>, 64, Mfma16x16x32Bf16>>()),
            "");
  // NVIDIA: the wgmma wide tiles (warpgroups), the mma.sync element-wise tile (two slabs), the
  // 128 x 48 sweep candidate that exposed the old slab bug (now three slabs of 16).
  EXPECT_EQ((replay_epilogue<PolicyOf<TileShape<128, 96, 64, 2, 1, 4>, 32, WgmmaM64<96, 2>>>()),
            "");
  EXPECT_EQ((replay_epilogue<PolicyOf<TileShape<64, 96, 64, 1, 1, 4>, 32, WgmmaM64<96, 1>>>()),
            "");
  EXPECT_EQ((replay_epilogue<PolicyOf<TileShape<64, 96, 32, 2, 2, 2>, 32, MmaM16N16K16Bf16>>()),
            "");
  EXPECT_EQ((replay_epilogue<PolicyOf<TileShape<128, 48, 32, 4, 1, 2>, 32, MmaM16N16K16Bf16>>()),
            "");
}

// A two-buffer tile (TwoBufferTileShape): its 16 KiB pipeline (the B buffers padded to whole copy
// passes, 128 rows) holds no fp32 slab of all 128 rows, so each slab is staged in row groups; the
// portable twin (cp.async: four buffers of BN rows, 16-wide mma.sync atoms) stages in the same
// slabs and groups.
TEST(EpilogueShape, TwoBufferTilesStageInRowGroups) {
  using namespace vaeconv::layout;
  using kernel::TwoBufferTileShape;
  using Shape = TwoBufferTileShape<128, 96, 16, 2, 1, 4>;
  using Amd = PolicyOf<Shape, 64, Mfma32x32x16Bf16>;
  using Twin = PolicyOf<Shape, 32, MmaM16N16K16Bf16>;
  static_assert(Amd::kLdsBuffers == 2 && Amd::kLdsRowsB == 128 &&
                    Amd::kPipelineBytes == 2 * (128 + 128) * 32,
                "");
  static_assert(Twin::kLdsBuffers == 4 && Twin::kPipelineBytes == 4 * (128 + 96) * 32, "");
  using EA = kernel::EpilogueShape<Amd>;
  using ET = kernel::EpilogueShape<Twin>;
  EXPECT_EQ(EA::kSlabCols, 96);  // four passes of 96 columns x 32 rows (12.5 KiB)
  EXPECT_EQ(EA::kSlabRows, 32);
  EXPECT_EQ(EA::kRowGroups, 4);
  EXPECT_LE(EA::kBytes, Amd::kPipelineBytes);
  EXPECT_EQ(EA::kKernelBytes, Amd::kPipelineBytes);
  EXPECT_EQ(ET::kSlabCols, EA::kSlabCols);
  EXPECT_EQ(ET::kSlabRows, EA::kSlabRows);
  EXPECT_EQ(ET::kBytes, EA::kBytes);
  EXPECT_EQ(replay_epilogue<Amd>(), "");
  EXPECT_EQ(replay_epilogue<Twin>(), "");
  // The shipped gfx942 tiles: fp8 (same rows), both few-rounds partners (a slab of all rows fits).
  using AmdFp8 = PolicyOf<TwoBufferTileShape<128, 96, 32, 2, 1, 4>, 64, Mfma32x32x32Fp8>;
  EXPECT_EQ(kernel::EpilogueShape<AmdFp8>::kRowGroups, 4);
  EXPECT_EQ(replay_epilogue<AmdFp8>(), "");
  using Few = PolicyOf<TwoBufferTileShape<128, 96, 32, 4, 1, 3>, 64, Mfma32x32x16Bf16>;
  EXPECT_EQ(kernel::EpilogueShape<Few>::kRowGroups, 1);
  EXPECT_EQ(kernel::EpilogueShape<Few>::kSlabCols, 32);
  EXPECT_EQ(replay_epilogue<Few>(), "");
  // negative control: a row group that did not start at its own rows would stage an element
  // outside the group (the replay names it), here shown by the index rule itself.
  EXPECT_NE(EA::stage_index(40, 0, 0, 1), EA::stage_index(40, 0, 0, 0));
  EXPECT_FALSE(EA::atom_in_group(32, 0));
  EXPECT_TRUE(EA::atom_in_group(32, 1));
}

// The persistent conv kernel overlaps a tile's epilogue with the next tile's first copies only
// when the staging fits above the buffers of the K tiles copied ahead (ConvKernel).
TEST(EpilogueShape, StagingAboveTheCopiesAhead) {
  using namespace vaeconv::layout;
  using kernel::TileShape;
  // NVIDIA bf16 wide wgmma 128 x 96 x 64, 4 stages, one batch in flight: two 28 KiB buffers
  // ahead, 51.2 KB of staging in the other two.
  using Bf16Wide = kernel::TilePolicy<TileShape<128, 96, 64, 2, 1, 4, 2>, ArchOf<32>,
                                      LdsAtomOf<WgmmaM64<96, 2>, false>>;
  static_assert(Bf16Wide::kBatchesInFlight == 1 && Bf16Wide::kAheadBytes == 2 * 28672, "");
  EXPECT_TRUE(kernel::EpilogueShape<Bf16Wide>::kFitsAboveAhead);
  // FP8 wide (promoting: no batch in flight, three 10 KiB buffers ahead of one): 25.6 KB of
  // staging does not fit in 10 KiB.
  using Fp8Wide = kernel::TilePolicy<TileShape<64, 96, 64, 1, 1, 4, 3>, ArchOf<32>,
                                     LdsAtomOf<WgmmaM64<96, 1>, true>>;
  static_assert(Fp8Wide::kBatchesInFlight == 0 && Fp8Wide::kAheadBytes == 3 * 10240, "");
  EXPECT_FALSE(kernel::EpilogueShape<Fp8Wide>::kFitsAboveAhead);
  // AMD wide (2 stages, one buffer ahead): three 18.4 KB slabs, 14 KiB free: no overlap.
  EXPECT_FALSE((kernel::EpilogueShape<
                PolicyOf<TileShape<128, 96, 32, 4, 1, 2>, 64, Mfma32x32x16Bf16>>::kFitsAboveAhead));
}

}  // namespace
}  // namespace vaeconv
