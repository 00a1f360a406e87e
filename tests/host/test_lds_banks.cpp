// The LDS bank model (tests/lds/bank_model.hpp) on hand-computed patterns, and the conflict ways of
// every shipped AMD access (tests/lds/shipped_accesses.hpp) recorded as the current truth: a layout
// change that adds or removes a conflict fails here and is then re-recorded on purpose
// (bench/lds_bank_report.cpp regenerates docs/lds-banks.md from the same model).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "lds/bank_model.hpp"
#include "lds/shipped_accesses.hpp"

namespace vaeconv::lds {
namespace {

// Lane l at byte address stride * l (every lane active).
WaveAccess strided(Instr instr, int64_t stride) {
  WaveAccess a{instr};
  for (int l = 0; l < 64; ++l) a.addr[size_t(l)] = stride * l;
  return a;
}

std::vector<int> quad_lanes(std::initializer_list<int> first_lanes) {
  std::vector<int> v;
  for (int f : first_lanes)
    for (int i = 0; i < 4; ++i) v.push_back(f + i);
  return v;
}

TEST(LdsBankModel, PhaseTablesPartitionTheWave) {
  for (Target t : {Target::kGfx942, Target::kGfx950})
    for (Instr i : {Instr::kReadB128, Instr::kReadB64, Instr::kReadB32, Instr::kWriteB128,
                    Instr::kWriteB64, Instr::kWriteB32, Instr::kWriteB16}) {
      std::multiset<int> lanes;
      for (const auto& g : phases(t, i)) lanes.insert(g.begin(), g.end());
      EXPECT_EQ(lanes.size(), 64u) << target_name(t) << " " << instr_name(i);
      for (int l = 0; l < 64; ++l) EXPECT_EQ(lanes.count(l), 1u) << target_name(t) << " " << instr_name(i);
    }
}

// The documented groups, written out by hand (CK lds_bank_conflicts.rst for gfx942, the
// HipKittens MI355X measurement for gfx950).
TEST(LdsBankModel, ReadB128PhasesAreTheDocumentedOnes) {
  auto sorted = [](LaneGroups g) {
    for (auto& x : g) std::sort(x.begin(), x.end());
    std::sort(g.begin(), g.end());
    return g;
  };
  LaneGroups ck = {quad_lanes({0, 20}), quad_lanes({4, 16}), quad_lanes({8, 28}), quad_lanes({12, 24}),
                   quad_lanes({32, 52}), quad_lanes({36, 48}), quad_lanes({40, 60}), quad_lanes({44, 56})};
  EXPECT_EQ(sorted(phases(Target::kGfx942, Instr::kReadB128)), sorted(ck));
  LaneGroups hk = {quad_lanes({0, 12, 20, 24}), quad_lanes({4, 8, 16, 28}), quad_lanes({32, 44, 52, 56}),
                   quad_lanes({36, 40, 48, 60})};
  EXPECT_EQ(sorted(phases(Target::kGfx950, Instr::kReadB128)), sorted(hk));
  for (const auto& g : phases(Target::kGfx942, Instr::kWriteB128)) {
    ASSERT_EQ(g.size(), 8u);
    EXPECT_EQ(g.back() - g.front(), 7) << "8 consecutive lanes";
  }
}

TEST(LdsBankModel, HandComputedReadB128) {
  // Contiguous 16-byte chunks: each gfx942 group covers 32 distinct banks ({0-3} -> banks 0-15,
  // {20-23} -> 16-31), each gfx950 group 64: conflict-free, 8 and 4 cycles.
  const WaveAccess contiguous = strided(Instr::kReadB128, 16);
  EXPECT_EQ(cost(Target::kGfx942, contiguous).cycles, 8);
  EXPECT_EQ(cost(Target::kGfx942, contiguous).ways(), 1.0);
  EXPECT_EQ(cost(Target::kGfx950, contiguous).cycles, 4);
  EXPECT_EQ(cost(Target::kGfx950, contiguous).ways(), 1.0);
  // 32-byte stride: lane l starts at bank 8l % 32, so lanes 0-3 and 20-23 take the same 16 banks
  // twice: 2-way on gfx942. On gfx950 (bank 8l % 64) the 16 lanes of a group fill 8 start banks
  // twice: also 2-way.
  const WaveAccess stride32 = strided(Instr::kReadB128, 32);
  EXPECT_EQ(cost(Target::kGfx942, stride32).cycles, 16);
  EXPECT_EQ(cost(Target::kGfx942, stride32).ways(), 2.0);
  EXPECT_EQ(cost(Target::kGfx950, stride32).ways(), 2.0);
  // 64-byte stride (an unswizzled 64-byte-row tile read down a column): banks 16l % 32 take 2
  // values, each from 4 lanes of a group: 4-way on gfx942; on gfx950 16l % 64 takes 4 values, each
  // from 4 of the 16 lanes: 4-way.
  const WaveAccess stride64 = strided(Instr::kReadB128, 64);
  EXPECT_EQ(cost(Target::kGfx942, stride64).cycles, 32);
  EXPECT_EQ(cost(Target::kGfx942, stride64).ways(), 4.0);
  EXPECT_EQ(cost(Target::kGfx950, stride64).ways(), 4.0);
  // Every lane the same chunk: one dword per bank, a broadcast, no conflict.
  EXPECT_EQ(cost(Target::kGfx942, strided(Instr::kReadB128, 0)).ways(), 1.0);
}

TEST(LdsBankModel, HandComputedWritesAndNarrowAccesses) {
  // ds_write_b128, 8 consecutive lanes: contiguous conflict-free, 64-byte stride 4-way.
  EXPECT_EQ(cost(Target::kGfx942, strided(Instr::kWriteB128, 16)).ways(), 1.0);
  EXPECT_EQ(cost(Target::kGfx942, strided(Instr::kWriteB128, 64)).ways(), 4.0);
  EXPECT_EQ(cost(Target::kGfx942, strided(Instr::kWriteB128, 64)).cycles, 32);
  // 64-byte stride over 8 lanes on 64 banks: start banks 16l % 64, 4 values twice: 2-way.
  EXPECT_EQ(cost(Target::kGfx950, strided(Instr::kWriteB128, 64)).ways(), 2.0);
  // b32: consecutive dwords are conflict-free (2 half-waves on gfx942, one 64-lane read on
  // gfx950); every other dword is 2-way on both.
  EXPECT_EQ(cost(Target::kGfx942, strided(Instr::kReadB32, 4)).cycles, 2);
  EXPECT_EQ(cost(Target::kGfx950, strided(Instr::kReadB32, 4)).cycles, 1);
  EXPECT_EQ(cost(Target::kGfx942, strided(Instr::kReadB32, 8)).ways(), 2.0);
  EXPECT_EQ(cost(Target::kGfx950, strided(Instr::kReadB32, 8)).ways(), 2.0);
  // b16 writes of consecutive elements: two lanes per dword, no conflict.
  EXPECT_EQ(cost(Target::kGfx942, strided(Instr::kWriteB16, 2)).ways(), 1.0);
  // b64 reads down one bank pair: every lane of a phase on banks 0-1 (gfx942: 128-byte stride,
  // 16 lanes; gfx950: 256-byte stride, 32 lanes): 16- and 32-way.
  EXPECT_EQ(cost(Target::kGfx942, strided(Instr::kReadB64, 128)).ways(), 16.0);
  EXPECT_EQ(cost(Target::kGfx950, strided(Instr::kReadB64, 256)).ways(), 32.0);
  // Inactive lanes are not served; a wave with none costs nothing.
  WaveAccess none{Instr::kReadB128};
  EXPECT_EQ(cost(Target::kGfx942, none).cycles, 0);
  WaveAccess one = none;
  one.addr[17] = 4096;
  EXPECT_EQ(cost(Target::kGfx942, one).cycles, 1);
  // Misaligned addresses are refused, not costed.
  WaveAccess bad = strided(Instr::kReadB128, 16);
  bad.addr[3] = 8;
  EXPECT_THROW(cost(Target::kGfx942, bad), std::invalid_argument);
}

// Negative control: the shipped fragment reads without the XOR swizzle (plain 64-byte rows)
// conflict 4-way on gfx942, so the swizzle is what the zero below rests on.
TEST(LdsBankModel, UnswizzledFragmentReadsConflict) {
  using L = layout::Mfma32x32x16Bf16;
  WaveAccess plain{Instr::kReadB128}, swizzled{Instr::kReadB128};
  for (int l = 0; l < 64; ++l) {
    plain.addr[size_t(l)] = 64 * L::a_lds_row(l) + 16 * L::a_lds_chunk(l);
    swizzled.addr[size_t(l)] = kernel::SwizzledTile<4>::offset(L::a_lds_row(l), L::a_lds_chunk(l));
  }
  EXPECT_EQ(cost(Target::kGfx942, plain).ways(), 4.0);
  EXPECT_EQ(cost(Target::kGfx942, swizzled).ways(), 1.0);
  EXPECT_EQ(cost(Target::kGfx950, swizzled).ways(), 2.0) << "a 128-byte swizzle on 64 banks";
}

// The shipped accesses: every (layout, access, path) of the AMD table, with the ways the model
// computes today on gfx942 and gfx950. Regenerate with bench/lds_bank_report.cpp when a layout
// changes on purpose.
struct Expected {
  const char* layout;
  const char* access;
  const char* path;
  double gfx942, gfx950;
};
const Expected kExpected[] = {
    {"wide_bf16", "mfma_a_read", "mainloop", 1, 2},
    {"wide_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"wide_bf16", "stage_write", "mainloop", 1, 1},
    // (no packed epilogue: the 14 KiB pipeline of the one-buffer wide tile does not hold it)
    {"wide_bf16", "epilogue_write", "epilogue_fp32", 1, 1},
    // The 14 KiB wide tiles stage 96-column slabs in row groups of 32 (rows of 100 floats):
    // the store's 16-byte reads meet 4/3-way conflicts on gfx942 (32-column slabs had none).
    {"wide_bf16", "epilogue_read", "epilogue_fp32", 4.0 / 3, 2},
    // gfx942's small-grid tile: per group the 16-deep two-buffer tile (32-byte rows, 14 KiB),
    // the wide tile's rows before W24.
    {"small_grid_bf16", "mfma_a_read", "mainloop", 1, 2},
    {"small_grid_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"small_grid_bf16", "stage_write", "mainloop", 1, 1},
    {"small_grid_bf16", "epilogue_write", "epilogue_fp32", 1, 1},
    {"small_grid_bf16", "epilogue_read", "epilogue_fp32", 4.0 / 3, 2},
    {"wide_elementwise_bf16", "mfma_a_read", "mainloop", 1, 2},
    {"wide_elementwise_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"wide_elementwise_bf16", "stage_write", "mainloop", 1, 1},
    {"wide_elementwise_bf16", "epilogue_write", "epilogue_packed", 1, 1},
    {"wide_elementwise_bf16", "epilogue_read", "epilogue_packed", 2, 2},
    {"wide_elementwise_bf16", "epilogue_write", "epilogue_fp32", 1, 1},
    {"wide_elementwise_bf16", "epilogue_read", "epilogue_fp32", 1, 2},
    {"narrow_bf16", "mfma_a_read", "mainloop", 1, 2},
    {"narrow_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"narrow_bf16", "stage_write", "mainloop", 1, 1},
    {"narrow_bf16", "epilogue_write", "epilogue_packed", 1, 1},
    {"narrow_bf16", "epilogue_read", "epilogue_packed", 2, 3},
    {"narrow_bf16", "epilogue_write", "epilogue_fp32", 1, 1},
    {"narrow_bf16", "epilogue_read", "epilogue_fp32", 1, 2},
    {"tiny_bf16", "mfma_a_read", "mainloop", 1, 1},
    {"tiny_bf16", "mfma_b_read", "mainloop", 1, 1},
    {"tiny_bf16", "stage_write", "mainloop", 1, 1},
    {"tiny_bf16", "epilogue_write", "epilogue_packed", 1, 1},
    {"tiny_bf16", "epilogue_read", "epilogue_packed", 2, 2},
    {"tiny_bf16", "epilogue_write", "epilogue_fp32", 1, 1},
    {"tiny_bf16", "epilogue_read", "epilogue_fp32", 2, 2},
    {"tap_reduce_bf16", "mfma_a_read", "mainloop", 1, 2},
    {"tap_reduce_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"tap_reduce_bf16", "stage_write", "mainloop", 1, 1},
    {"tap_reduce_bf16", "epilogue_write", "tap_reduce", 1, 1},
    {"tap_reduce_bf16", "epilogue_read", "tap_reduce", 5.0 / 3, 1.5},
    // gfx942's fp8 wide tile on the 32x32x32 atom: 32-byte rows in three stages (21 KiB, no
    // packed epilogue, as wide_bf16), and its few-rounds partner, the 64-deep two-stage tile.
    {"wide_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"wide_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"wide_fp8", "stage_write", "mainloop", 1, 1},
    {"wide_fp8", "epilogue_write", "epilogue_fp32", 1, 1},
    {"wide_fp8", "epilogue_read", "epilogue_fp32", 4.0 / 3, 2},
    {"wide_few_rounds_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"wide_few_rounds_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"wide_few_rounds_fp8", "stage_write", "mainloop", 1, 1},
    {"wide_few_rounds_fp8", "epilogue_write", "epilogue_packed", 1, 1},
    {"wide_few_rounds_fp8", "epilogue_read", "epilogue_packed", 2, 2},
    {"wide_few_rounds_fp8", "epilogue_write", "epilogue_fp32", 1, 1},
    {"wide_few_rounds_fp8", "epilogue_read", "epilogue_fp32", 1, 2},
    {"wide_elementwise_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"wide_elementwise_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"wide_elementwise_fp8", "stage_write", "mainloop", 1, 1},
    {"wide_elementwise_fp8", "epilogue_write", "epilogue_packed", 1, 1},
    {"wide_elementwise_fp8", "epilogue_read", "epilogue_packed", 2, 2},
    {"wide_elementwise_fp8", "epilogue_write", "epilogue_fp32", 1, 1},
    {"wide_elementwise_fp8", "epilogue_read", "epilogue_fp32", 1, 2},
    {"narrow_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"narrow_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"narrow_fp8", "stage_write", "mainloop", 1, 1},
    {"narrow_fp8", "epilogue_write", "epilogue_packed", 1, 1},
    {"narrow_fp8", "epilogue_read", "epilogue_packed", 2, 3},
    {"narrow_fp8", "epilogue_write", "epilogue_fp32", 1, 1},
    {"narrow_fp8", "epilogue_read", "epilogue_fp32", 1, 2},
    {"tiny_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"tiny_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"tiny_fp8", "stage_write", "mainloop", 1, 1},
    {"tiny_fp8", "epilogue_write", "epilogue_packed", 1, 1},
    {"tiny_fp8", "epilogue_read", "epilogue_packed", 2, 3},
    {"tiny_fp8", "epilogue_write", "epilogue_fp32", 1, 1},
    {"tiny_fp8", "epilogue_read", "epilogue_fp32", 1, 2},
    {"tap_reduce_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"tap_reduce_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"tap_reduce_fp8", "stage_write", "mainloop", 1, 1},
    {"tap_reduce_fp8", "epilogue_write", "tap_reduce", 1, 1},
    {"tap_reduce_fp8", "epilogue_read", "tap_reduce", 5.0 / 3, 1.5},
    // The gfx950 table's wide tiles (256 x 96 in three stages of 64-byte rows: 66 KiB, which
    // holds the packed epilogue).
    {"gfx950_wide_bf16", "mfma_a_read", "mainloop", 1, 2},
    {"gfx950_wide_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"gfx950_wide_bf16", "stage_write", "mainloop", 1, 1},
    {"gfx950_wide_bf16", "epilogue_write", "epilogue_packed", 1, 1},
    {"gfx950_wide_bf16", "epilogue_read", "epilogue_packed", 2, 2},
    {"gfx950_wide_bf16", "epilogue_write", "epilogue_fp32", 1, 1},
    {"gfx950_wide_bf16", "epilogue_read", "epilogue_fp32", 1, 2},
    {"gfx950_wide_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"gfx950_wide_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"gfx950_wide_fp8", "stage_write", "mainloop", 1, 1},
    {"gfx950_wide_fp8", "epilogue_write", "epilogue_packed", 1, 1},
    {"gfx950_wide_fp8", "epilogue_read", "epilogue_packed", 2, 2},
    {"gfx950_wide_fp8", "epilogue_write", "epilogue_fp32", 1, 1},
    {"gfx950_wide_fp8", "epilogue_read", "epilogue_fp32", 1, 2},
    // gfx950's 192-wide tile (four 64 x 96 wave tiles of 128 x 192): conflict-free main loop on
    // gfx942's banks, the gfx950 fragment reads 2-way as the other wide tiles'; its 192-column
    // epilogue slabs read 5/3- (packed) and 4/3-way (fp32) on gfx942.
    {"gfx950_wide_cout192_bf16", "mfma_a_read", "mainloop", 1, 2},
    {"gfx950_wide_cout192_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"gfx950_wide_cout192_bf16", "stage_write", "mainloop", 1, 1},
    {"gfx950_wide_cout192_bf16", "epilogue_write", "epilogue_packed", 1, 1},
    {"gfx950_wide_cout192_bf16", "epilogue_read", "epilogue_packed", 5.0 / 3, 2},
    {"gfx950_wide_cout192_bf16", "epilogue_write", "epilogue_fp32", 1, 1},
    {"gfx950_wide_cout192_bf16", "epilogue_read", "epilogue_fp32", 4.0 / 3, 2},
    {"gfx950_wide_cout192_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"gfx950_wide_cout192_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"gfx950_wide_cout192_fp8", "stage_write", "mainloop", 1, 1},
    {"gfx950_wide_cout192_fp8", "epilogue_write", "epilogue_packed", 1, 1},
    {"gfx950_wide_cout192_fp8", "epilogue_read", "epilogue_packed", 5.0 / 3, 2},
    {"gfx950_wide_cout192_fp8", "epilogue_write", "epilogue_fp32", 1, 1},
    {"gfx950_wide_cout192_fp8", "epilogue_read", "epilogue_fp32", 4.0 / 3, 2},
    // gfx950's small-grid tiles (two LDS buffers, 64 x 96 wave tiles; 64-byte rows).
    {"gfx950_small_grid_bf16", "mfma_a_read", "mainloop", 1, 2},
    {"gfx950_small_grid_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"gfx950_small_grid_bf16", "stage_write", "mainloop", 1, 1},
    {"gfx950_small_grid_bf16", "epilogue_write", "epilogue_packed", 1, 1},
    {"gfx950_small_grid_bf16", "epilogue_read", "epilogue_packed", 2, 2},
    {"gfx950_small_grid_bf16", "epilogue_write", "epilogue_fp32", 1, 1},
    {"gfx950_small_grid_bf16", "epilogue_read", "epilogue_fp32", 1, 2},
    {"gfx950_small_grid_fp8", "mfma_a_read", "mainloop", 1, 2},
    {"gfx950_small_grid_fp8", "mfma_b_read", "mainloop", 1, 2},
    {"gfx950_small_grid_fp8", "stage_write", "mainloop", 1, 1},
    {"gfx950_small_grid_fp8", "epilogue_write", "epilogue_packed", 1, 1},
    {"gfx950_small_grid_fp8", "epilogue_read", "epilogue_packed", 2, 2},
    {"gfx950_small_grid_fp8", "epilogue_write", "epilogue_fp32", 1, 1},
    {"gfx950_small_grid_fp8", "epilogue_read", "epilogue_fp32", 1, 2},
    // gfx950's halo kernel: A read from the halo at each tap's shift (its row pitch of 10 pixels:
    // 3-way on gfx950's banks, 2-way on gfx942's, test_halo_fragment.cpp), B as the implicit
    // GEMM's 128 x 96 x 32 tiles.
    {"gfx950_halo_bf16", "mfma_a_read", "mainloop", 2, 3},
    {"gfx950_halo_bf16", "mfma_b_read", "mainloop", 1, 2},
    {"gfx950_halo_bf16", "stage_write", "mainloop", 1, 1},
};

TEST(LdsBankShipped, EveryAccessHasItsRecordedWays) {
  const std::vector<AccessSet> sets = shipped_cdna_accesses();
  ASSERT_EQ(sets.size(), sizeof(kExpected) / sizeof(kExpected[0])) << "an access was added or removed";
  for (const AccessSet& s : sets) {
    ASSERT_FALSE(s.instrs.empty()) << s.layout << " " << s.access;
    const Expected* e = nullptr;
    for (const Expected& x : kExpected)
      if (s.layout == x.layout && s.access == x.access && s.path == x.path) e = &x;
    ASSERT_NE(e, nullptr) << "no recorded ways for " << s.layout << " " << s.access << " " << s.path;
    EXPECT_NEAR(cost_of(Target::kGfx942, s).ways, e->gfx942, 1e-3) << s.layout << " " << s.access << " " << s.path;
    EXPECT_NEAR(cost_of(Target::kGfx950, s).ways, e->gfx950, 1e-3) << s.layout << " " << s.access << " " << s.path;
  }
}

// What the kernels' main loops rest on, stated on its own: on gfx942 every shipped stage write
// and fragment read is conflict-free (but the gfx950 halo kernel's halo reads, 2-way on gfx942's
// banks: a kernel only gfx950 runs).
TEST(LdsBankShipped, Gfx942MainLoopIsConflictFree) {
  for (const AccessSet& s : shipped_cdna_accesses())
    if (s.path == "mainloop" && s.layout != "gfx950_halo_bf16") {
      EXPECT_EQ(cost_of(Target::kGfx942, s).ways_max, 1.0) << s.layout << " " << s.access;
    }
}

// The accesses are the library's: the mainloop rows count the instructions block_gemm.hpp issues.
TEST(LdsBankShipped, InstructionCountsFollowThePolicies) {
  int seen = 0;
  for (const AccessSet& s : shipped_cdna_accesses()) {
    if (s.path != "mainloop") continue;
    const double n = cost_of(Target::kGfx942, s).instrs_per_wave;
    if (s.layout == "wide_bf16") {
      // BK 32 (64-byte rows), two waves of 64 x 96: mfma_a_read: kAtomsK (2) x kAtomsM (2);
      // mfma_b_read: kAtomsK (2) x kAtomsN (3); stage_write: 4 A rows per thread (32 per pass),
      // and B's 96 rows in three whole passes.
      const double want = s.access == "mfma_a_read" ? 4.0 : s.access == "mfma_b_read" ? 6.0 : 7.0;
      EXPECT_EQ(n, want) << s.layout << " " << s.access;
      ++seen;
    } else if (s.layout == "small_grid_bf16") {
      // BK 16 (32-byte rows), per group two waves of 64 x 96: mfma_a_read: kAtomsK (1) x
      // kAtomsM (2); mfma_b_read: kAtomsK (1) x kAtomsN (3); stage_write: 2 A rows per thread (64
      // per pass), and B's 96 rows in two passes, every wave writing both (rows 96-127 into the B
      // buffer's padding: TilePolicy::kLdsRowsB).
      const double want = s.access == "mfma_a_read" ? 2.0 : s.access == "mfma_b_read" ? 3.0 : 4.0;
      EXPECT_EQ(n, want) << s.layout << " " << s.access;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 6);
}

// Every staged row a thread writes (BlockGemm::flush_a / flush_b) lands inside its own stage's A
// or B buffer: the B buffers of register-staged tiles are padded to whole copy passes
// (TilePolicy::kLdsRowsB), so the rows past BN that are written unguarded stay in the padding and
// never reach the next buffer. Returns the number of B rows written into the padding.
template <class Shape, class L>
int expect_stage_writes_inside() {
  using P = CdnaPolicy<Shape, L>;
  using Tile = kernel::SwizzledTile<P::kChunksK>;
  static_assert(P::kRegisterStaged, "the AMD stand-in stages copies in registers");
  int padded = 0;
  for (int t = 0; t < P::kThreads; ++t) {
    const int row0 = t / P::kChunksK, chunk = t % P::kChunksK;
    for (int i = 0; i < P::kRowsPerThreadA; ++i) {
      const int off = Tile::offset(row0 + i * P::kRowsPerPassA, chunk);
      EXPECT_GE(off, 0);
      EXPECT_LE(off + 16, P::kTileBytesA) << "A row " << row0 + i * P::kRowsPerPassA;
    }
    for (int i = 0; i < P::kRowsPerThreadB; ++i) {
      const int row = row0 + i * P::kRowsPerPassA;
      if (P::kGuardFlushB && row >= P::BN) continue;  // flush_b skips it
      const int off = Tile::offset(row, chunk);
      EXPECT_GE(off, 0);
      EXPECT_LE(off + 16, P::kTileBytesB) << "B row " << row;
      if (row >= P::BN) ++padded;
    }
  }
  return padded;
}

TEST(LdsBankShipped, StageWritesStayInsideTheirBuffers) {
  using namespace kernel::cdna;
  using Bf16 = layout::Mfma32x32x16Bf16;
  using Bf16Narrow = layout::Mfma16x16x32Bf16;
  using Fp8 = layout::Mfma32x32x64Fp8;
  using Fp8K32 = layout::Mfma32x32x32Fp8;
  // BN 96 in passes of 64 rows: the second pass writes rows 96-127 into the padding (one chunk
  // per thread of its upper half: 32 rows x chunks per row).
  EXPECT_EQ((expect_stage_writes_inside<SmallGridShape, Bf16>()), 32 * 2);
  EXPECT_EQ((expect_stage_writes_inside<WideShape, Bf16>()), 0);  // passes of 32 rows: whole
  EXPECT_EQ((expect_stage_writes_inside<Gfx950WideShape, Bf16>()), 32 * 4);
  EXPECT_EQ((expect_stage_writes_inside<Gfx950WideShapeFp8, Fp8>()), 32 * 4);
  EXPECT_EQ((expect_stage_writes_inside<WideShapeFp8, Fp8K32>()), 32 * 2);
  EXPECT_EQ((expect_stage_writes_inside<WideFewRoundsShapeFp8, Fp8>()), 32 * 4);
  // Whole passes, or B narrower than one pass (kept at BN rows, guarded): nothing padded.
  EXPECT_EQ((expect_stage_writes_inside<Gfx950WideCout192Shape, Bf16>()), 0);
  EXPECT_EQ((expect_stage_writes_inside<Gfx950WideCout192ShapeFp8, Fp8>()), 0);
  EXPECT_EQ((expect_stage_writes_inside<Gfx950SmallGridShape, Bf16>()), 0);
  EXPECT_EQ((expect_stage_writes_inside<NarrowShape, Bf16>()), 0);
  EXPECT_EQ((expect_stage_writes_inside<TinyShape, Bf16Narrow>()), 0);
  EXPECT_EQ((expect_stage_writes_inside<TapReduceShape, Bf16>()), 0);
  EXPECT_EQ((expect_stage_writes_inside<NarrowShapeFp8, Fp8>()), 0);
  EXPECT_EQ((expect_stage_writes_inside<WideElementwiseShape, Bf16>()), 32 * 4);
}

}  // namespace
}  // namespace vaeconv::lds
