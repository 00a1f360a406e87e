// test_tile_rounds.cpp — the round rule (kernel/tile_rounds.hpp): which of gfx942's two bf16 wide
// tiles a grid gets, on the tiles' sizes alone (host code); and gfx950's small-grid rule. The GPU-compiled side, that
// which_kernel makes the same choice for every seed shape, is in tests/gpu/test_amd_tables_gpu.cpp
// (AmdTables.Gfx942RoundRule, which runs without a GPU).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/tile_rounds.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv {
namespace {

using kernel::grid_rounds;
using kernel::kRoundTargetGfx942;
using kernel::resident_blocks;
using kernel::wide_saves_a_round;
namespace cdna = kernel::cdna;

constexpr int kWideLds = kernel::pipeline_lds_bytes<cdna::WideShape>(2);
constexpr int kFewLds = kernel::pipeline_lds_bytes<cdna::WideFewRoundsShape>(2);

bool wide_on_gfx942(int64_t blocks) {
  return wide_saves_a_round(kRoundTargetGfx942, blocks, kWideLds, blocks, kFewLds);
}

TEST(TileRounds, Gfx942WideTilesResidency) {
  // One buffer of 128 A rows and 96 B rows, 64 bytes each (two waves copy 32 rows a pass: B's
  // 96 rows are three whole passes), two tiles ahead in registers:
  EXPECT_EQ(kWideLds, 14336);
  // Two buffers of 128 A rows and 128 B rows (four waves copy 64 rows a pass: BN 96 padded to
  // two whole passes), two tiles ahead:
  EXPECT_EQ(kFewLds, 32768);
  EXPECT_EQ(kernel::staged_lds_rows_b<cdna::WideShape>(2), 96);
  // A B tile narrower than one pass keeps its rows: 128 x 32 x 32, four waves (64 rows a pass).
  EXPECT_EQ((kernel::staged_lds_rows_b<kernel::TileShape<128, 32, 32, 4, 1, 2>>(2)), 32);
  EXPECT_EQ(resident_blocks(kRoundTargetGfx942, kWideLds), 4);
  EXPECT_EQ(resident_blocks(kRoundTargetGfx942, kFewLds), 2);
  // Same block shape: one grid for both, so the rule compares residency alone.
  static_assert(cdna::WideShape::BM == cdna::WideFewRoundsShape::BM &&
                cdna::WideShape::BN == cdna::WideFewRoundsShape::BN, "one grid");
}

TEST(TileRounds, RoundsAreCeilOfSlots) {
  EXPECT_EQ(grid_rounds(kRoundTargetGfx942, 1, 3), 1);
  EXPECT_EQ(grid_rounds(kRoundTargetGfx942, 912, 3), 1);
  EXPECT_EQ(grid_rounds(kRoundTargetGfx942, 913, 3), 2);
  EXPECT_EQ(grid_rounds(kRoundTargetGfx942, 608, 2), 1);
  EXPECT_EQ(grid_rounds(kRoundTargetGfx942, 609, 2), 2);
  EXPECT_EQ(resident_blocks(kRoundTargetGfx942, 70000), 1);  // a launch always runs
}

// At the edges of the rounds: 304 CUs x 4 = 1216 slots per round for the wide tile, x 2 = 608
// for the few-rounds one.
TEST(TileRounds, Gfx942EdgesOfTheRounds) {
  EXPECT_FALSE(wide_on_gfx942(1));
  EXPECT_FALSE(wide_on_gfx942(512));
  EXPECT_FALSE(wide_on_gfx942(608));   // 1 round either way
  EXPECT_TRUE(wide_on_gfx942(609));    // 1 against 2
  EXPECT_TRUE(wide_on_gfx942(1216));   // 1 against 2
  EXPECT_TRUE(wide_on_gfx942(1217));   // 2 against 3
  // Twice the slots: from one round of the few-rounds tile on, ceil(b / 1216) < ceil(b / 608).
  for (int64_t b = 609; b <= 20000; ++b) ASSERT_TRUE(wide_on_gfx942(b)) << b << " blocks";
  EXPECT_TRUE(wide_on_gfx942(8192));   // 7 against 14
}

// The seed shapes' choice (the 128 x 96 grid of each launch; an upsample conv's phases run over
// the source pixels), against the per-shape predictions of docs/perf-notes.md (issue 25, W6 and W15).
// A seed conv's blocks per launch on a bm x bn tile (an upsample conv's phase runs on the
// source frame).
int64_t grid_of(const VaeShape& s, int bm, int bn) {
  const ConvDesc d = s.desc();
  const int64_t pixels = d.kind == ConvKind::kUpsample ? d.h * d.w : d.out_h() * d.out_w();
  return (pixels + bm - 1) / bm * ((d.cout + bn - 1) / bn) * d.n * d.out_t();
}
int64_t grid_128x96(const VaeShape& s) { return grid_of(s, 128, 96); }

TEST(TileRounds, Gfx942SeedShapes) {
  int wide = 0, few = 0;
  for (const VaeShape& s : kVaeShapes) {
    if (s.cout < 96) continue;  // narrow, tiny and tap-reduce tiles
    const std::string id = s.id;
    const bool few_expected = id == "enc_e3_mid__dec_mid_d0" || id == "dec_conv_in" ||
                              id == "enc_e2_downsample_spatial" || id == "dec_d0_upsample";
    EXPECT_EQ(wide_on_gfx942(grid_128x96(s)), !few_expected) << id << ": " << grid_128x96(s)
                                                             << " blocks";
    (few_expected ? few : wide) += 1;
  }
  EXPECT_EQ(wide, 12);  // enc_conv_in counted too (its element-wise gather has one wide tile)
  EXPECT_EQ(few, 4);
}

// gfx942's fp8 pair (128x96x32 s4 on the 32x32x32 atom, 128x96x64 s3; two LDS buffers each) has
// the bf16 pair's residency and block shape, so the rule gives every grid the same choice as above.
TEST(TileRounds, Gfx942Fp8PairHasTheBf16PairsResidency) {
  const int wide_fp8 = kernel::pipeline_lds_bytes<cdna::WideShapeFp8>(1);
  EXPECT_EQ(wide_fp8, 16384);  // 32-byte rows: B's 96 rows padded to two passes of 64, two buffers
  EXPECT_EQ(resident_blocks(kRoundTargetGfx942, wide_fp8),
            resident_blocks(kRoundTargetGfx942, kWideLds));
  EXPECT_EQ(kernel::pipeline_lds_bytes<cdna::WideFewRoundsShapeFp8>(1), kFewLds);
  static_assert(cdna::WideShapeFp8::BM == cdna::WideShape::BM && cdna::WideShapeFp8::BN == cdna::WideShape::BN &&
                    cdna::WideFewRoundsShapeFp8::BM == cdna::WideShape::BM &&
                    cdna::WideFewRoundsShapeFp8::BN == cdna::WideShape::BN,
                "one grid for the four wide tiles");
}

// The small-grid rule (gfx950): a grid of at most one block per unit on the tile the conv would
// take. Its edges on the MI355X's 256 CUs, and the seed shapes it moves: the wide (256 x 96) or
// 192-wide (128 x 192, Cout % 192 == 0: kernel::takes_wide_cout192) grid of each seed conv.
TEST(TileRounds, Gfx950SmallGridEdges) {
  using kernel::grid_leaves_one_block_per_unit;
  using kernel::kRoundTargetGfx950;
  EXPECT_TRUE(grid_leaves_one_block_per_unit(kRoundTargetGfx950, 1));
  EXPECT_TRUE(grid_leaves_one_block_per_unit(kRoundTargetGfx950, 256));
  EXPECT_FALSE(grid_leaves_one_block_per_unit(kRoundTargetGfx950, 257));
  EXPECT_FALSE(grid_leaves_one_block_per_unit(kRoundTargetGfx950, 4096));
  EXPECT_FALSE(kernel::small_grid_takes_kind(ConvKind::kTemporal));
  for (ConvKind k : {ConvKind::kCausal3x3x3, ConvKind::kDownsample, ConvKind::kUpsample})
    EXPECT_TRUE(kernel::small_grid_takes_kind(k));
  // the small-grid tile has twice the blocks of the 256-row wide tile and four resident
  static_assert(cdna::Gfx950SmallGridShape::BM * 2 == cdna::Gfx950WideShape::BM &&
                    cdna::Gfx950SmallGridShape::BN == cdna::Gfx950WideShape::BN,
                "twice the blocks of the wide tile");
  EXPECT_EQ(kernel::pipeline_lds_bytes<cdna::Gfx950SmallGridShape>(2), 28672);
  EXPECT_EQ(kernel::pipeline_lds_bytes<cdna::Gfx950SmallGridShapeFp8>(1), 28672);
}

TEST(TileRounds, Gfx950SmallGridSeedShapes) {
  int small = 0;
  for (const VaeShape& s : kVaeShapes) {
    if (s.cout < 96) continue;  // narrow, tiny and tap-reduce tiles
    const ConvDesc d = s.desc();
    const bool c192 = kernel::takes_wide_cout192(d, d.kind == ConvKind::kUpsample);
    const int64_t blocks =
        c192 ? grid_of(s, cdna::Gfx950WideCout192Shape::BM, cdna::Gfx950WideCout192Shape::BN)
             : grid_of(s, cdna::Gfx950WideShape::BM, cdna::Gfx950WideShape::BN);
    const std::string id = s.id;
    const bool expected = id == "enc_e3_mid__dec_mid_d0" || id == "dec_conv_in" ||
                          id == "enc_e2_downsample_spatial" || id == "dec_d0_upsample";
    EXPECT_EQ(kernel::grid_leaves_one_block_per_unit(kernel::kRoundTargetGfx950, blocks), expected)
        << id << ": " << blocks << " blocks";
    small += expected;
    // The small-grid tile splits K over its groups of warps (kernel/sliced_k.hpp): it takes the
    // grids whose K tiles split evenly (api/kernel_plan.hpp); dec_conv_in's 5 (Cin 16) do not,
    // and it keeps its 192-wide tile.
    if (expected) {
      using Small = cdna::Gfx950SmallGridShape;
      static_assert(Small::kSlicesK == 2 && cdna::Gfx950SmallGridShapeFp8::kSlicesK == 2,
                    "two groups of warps");
      const int64_t k = d.kind == ConvKind::kUpsample ? 4 * d.cin : d.gemm_k();
      const bool even = (k + Small::BK - 1) / Small::BK % Small::kSlicesK == 0 &&
                        (k + cdna::Gfx950SmallGridShapeFp8::BK - 1) /
                                cdna::Gfx950SmallGridShapeFp8::BK % 2 == 0;
      EXPECT_EQ(even, id != "dec_conv_in") << id << ": K " << k;
    }
  }
  EXPECT_EQ(small, 4);
}

// gfx942's small-grid rule: grids that give each of the MI300X's 304 CUs at most two blocks of the
// 128 x 96 wide tiles (its few-rounds partner's two resident blocks, a partial round) take the
// sliced-K small-grid tile, whose 28-32 KiB blocks keep two resident per CU; of the seed shapes,
// the 128² 384-channel convs and the first upsample conv (dec_conv_in's 9 K tiles of 16 do not
// split evenly over two groups).
TEST(TileRounds, Gfx942SmallGridSeedShapes) {
  using kernel::grid_leaves_few_blocks_per_unit;
  EXPECT_TRUE(grid_leaves_few_blocks_per_unit(kRoundTargetGfx942, 608, 2));
  EXPECT_FALSE(grid_leaves_few_blocks_per_unit(kRoundTargetGfx942, 609, 2));
  using Small = cdna::SmallGridShape;
  using SmallFp8 = cdna::SmallGridShapeFp8;
  static_assert(Small::kSlicesK == 2 && SmallFp8::kSlicesK == 2, "two groups of warps");
  static_assert(Small::BM == cdna::WideShape::BM && Small::BN == cdna::WideShape::BN &&
                    SmallFp8::BM == cdna::WideShapeFp8::BM,
                "one grid with the wide tiles");
  EXPECT_EQ(resident_blocks(kRoundTargetGfx942, 2 * kernel::pipeline_lds_bytes<Small>(2)), 2);
  EXPECT_EQ(resident_blocks(kRoundTargetGfx942, 2 * kernel::pipeline_lds_bytes<SmallFp8>(1)), 2);
  int small = 0;
  for (const VaeShape& s : kVaeShapes) {
    if (s.cout < 96) continue;
    const ConvDesc d = s.desc();
    const int64_t blocks = grid_of(s, Small::BM, Small::BN);
    const int64_t k = d.kind == ConvKind::kUpsample ? 4 * d.cin : d.gemm_k();
    const bool takes = grid_leaves_few_blocks_per_unit(kRoundTargetGfx942, blocks, 2) &&
                       (k + Small::BK - 1) / Small::BK % 2 == 0;
    const std::string id = s.id;
    EXPECT_EQ(takes, id == "enc_e3_mid__dec_mid_d0" || id == "enc_e2_downsample_spatial" ||
                         id == "dec_d0_upsample")
        << id << ": " << blocks << " blocks, K " << k;
    small += takes;
  }
  EXPECT_EQ(small, 3);
}

// The narrow convs' sliced-K tiles (both targets) take the narrow convs whose K tiles split evenly
// over their groups: the encoder's 384 -> 32 conv (108 K tiles of 32 bf16, 54 of 64 e4m3) on
// gfx942's three groups and gfx950's six; a 96-channel input's 27 do not split in six.
TEST(TileRounds, NarrowSlicedSplits) {
  auto splits = [](int64_t k, int bk, int slices) { return (k + bk - 1) / bk % slices == 0; };
  const ConvDesc out = ConvDesc::causal3x3x3(1, 1, 128, 128, 384, 32);
  for (int s : {cdna::NarrowSlicedShape::kSlicesK, cdna::Gfx950NarrowSlicedShape::kSlicesK}) {
    EXPECT_TRUE(splits(out.gemm_k(), 32, s)) << s;
    EXPECT_TRUE(splits(out.gemm_k(), 64, s)) << s;
  }
  static_assert(cdna::NarrowSlicedShape::BK == 32 && cdna::NarrowSlicedShapeFp8::BK == 64 &&
                    cdna::Gfx950NarrowSlicedShape::BK == 32 &&
                    cdna::Gfx950NarrowSlicedShapeFp8::BK == 64 &&
                    cdna::NarrowSlicedShape::BN == 32 && cdna::Gfx950NarrowSlicedShape::BN == 32,
                "the narrow tiles' K steps and width");
  EXPECT_FALSE(splits(ConvDesc::causal3x3x3(1, 1, 64, 64, 96, 32).gemm_k(), 32,
                      cdna::Gfx950NarrowSlicedShape::kSlicesK));
  // gfx942's holds two blocks per CU in its 64 KiB; gfx950's 48 KiB three in its 160
  EXPECT_EQ(resident_blocks(kRoundTargetGfx942,
                            3 * kernel::pipeline_lds_bytes<cdna::NarrowSlicedShape>(2)), 2);
  EXPECT_EQ(resident_blocks(kernel::kRoundTargetGfx950,
                            6 * kernel::pipeline_lds_bytes<cdna::Gfx950NarrowSlicedShape>(2)), 3);
}

}  // namespace
}  // namespace vaeconv
