// test_amd_tables_gpu.cpp — the AMD table sets' own tiles on the portable twin (label gpu).
//
// Each AMD target has its own table set (kernel/tile_table.hpp): gfx942's fits its 64 KiB of LDS
// (on AMD, the primary set), gfx950's replaces the wide tiles by ones sized to its 160 KiB. The
// NVIDIA mma.sync build (cuda-mma preset), whose primary set is NVIDIA's own tiles, instantiates
// both sets' own tile policies on the mma.sync atom (TableSet::kGfx950: its wide tiles;
// kGfx942Twin: gfx942's wide and tap-reduce tiles): this suite runs them there, through
// precompiled::conv_forward_table_set, against the CPU reference (conv_case.hpp), over every
// seed shape whose plan under the set differs from the primary set's
// (the shapes the set's own tiles serve), over extra cases of those tiles (partial tiles,
// residuals, video, strided views, downsample, upsample phases) and over the shared case table's
// (conv_cases.hpp) that the set's own tiles serve. Each case asserts, without a GPU too, that
// which_kernel gives it the set's own tile (the cdna shape, field by field): where the set has
// two wide tiles of one operand type (kernel/tile_rounds.hpp, the round rule: gfx942 bf16 and fp8),
// the one the rule names for the case's grid, and the seed shapes run both
// (AmdTables.RoundRule checks the choice on every seed shape, the primary set's too). A build without a
// set skips its cases (the NVIDIA wgmma build has neither; AMD has no gfx942 twin, gfx942's set
// being its primary one, which the seed suite runs); on AMD the gfx950 set runs on a gfx950
// device only.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "conv_case.hpp"
#include "conv_cases.hpp"
#include "vaeconv/api/device_arch.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/tile_rounds.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv::test {
namespace {

using kernel::TableSet;

// An AMD table set other than the build's primary one, and its own tiles' shapes.
struct AmdSet {
  TableSet set;
  const char* name;  // the target, in test names
};
std::vector<AmdSet> amd_sets() {
  std::vector<AmdSet> v;
  // if constexpr: under a plain if, nvcc may report the statement unreachable on a build without.
  if constexpr (kernel::kGfx950Tables) v.push_back({TableSet::kGfx950, "gfx950"});
  if constexpr (kernel::kGfx942TwinTables) v.push_back({TableSet::kGfx942Twin, "gfx942"});
  return v;
}
bool built(TableSet s) {
  return s == TableSet::kGfx950 ? kernel::kGfx950Tables : kernel::kGfx942TwinTables;
}

struct Tile {
  int bm, bn, bk, warps_m, warps_n, stages, slices_k;
};
template <class Shape>
constexpr Tile tile_of() {
  return {Shape::BM,      Shape::BN,      Shape::BK,      Shape::kWarpsM,
          Shape::kWarpsN, Shape::kStages, Shape::kSlicesK};
}
bool same_tile(const KernelPlan& p, const Tile& w) {
  return p.bm == w.bm && p.bn == w.bn && p.bk == w.bk && p.warps_m == w.warps_m &&
         p.warps_n == w.warps_n && p.stages == w.stages && p.slices_k == w.slices_k;
}

// A set's wide tiles of one operand type: the wide tile and, where the set has one, its
// few-rounds partner, with their LDS and the target constants the round rule reads.
struct WideTiles {
  Tile wide, few;
  bool has_few = false;
  int wide_lds = 0, few_lds = 0;
  kernel::RoundTarget target{0, 0};
};
template <class Wide, class Few>
WideTiles pair_of(int elem_bytes, kernel::RoundTarget t) {
  return {tile_of<Wide>(), tile_of<Few>(), true, kernel::pipeline_lds_bytes<Wide>(elem_bytes),
          kernel::pipeline_lds_bytes<Few>(elem_bytes), t};
}
// gfx942's (the AMD primary set and the NVIDIA twin) or gfx950's (one wide tile per type).
template <DType kType>
WideTiles wide_tiles(TableSet s) {
  namespace c = kernel::cdna;
  const bool fp8 = kType == DType::kFP8E4M3;
  WideTiles t;
  if (s == TableSet::kGfx950) {
    t.wide = fp8 ? tile_of<c::Gfx950WideShapeFp8>() : tile_of<c::Gfx950WideShape>();
    return t;
  }
  if (fp8) return pair_of<c::WideShapeFp8, c::WideFewRoundsShapeFp8>(1, kernel::kRoundTargetGfx942);
  return pair_of<c::WideShape, c::WideFewRoundsShape>(2, kernel::kRoundTargetGfx942);
}
// The tile the round rule names for an implicit-GEMM wide plan (its grid: plan.tiles blocks per
// launch, one grid for both tiles of a set).
template <DType kType>
Tile rule_tile(TableSet s, const KernelPlan& p) {
  const WideTiles t = wide_tiles<kType>(s);
  if (!t.has_few) return t.wide;
  return kernel::wide_saves_a_round(t.target, p.tiles, t.wide_lds, p.tiles, t.few_lds) ? t.wide
                                                                                        : t.few;
}

// gfx950's 192-wide tile where its set has one and the plan is a wide vector implicit GEMM that
// takes_wide_cout192 gives it (the same rule as sm_90a's).
template <DType kType>
bool cout192_tile(TableSet s, const ConvDesc& d, const KernelPlan& p, Tile* t) {
  namespace c = kernel::cdna;
  if (s != TableSet::kGfx950 || p.family() != "implicit_gemm" || !p.choice.vector ||
      kernel::choose_tile(d.cout) != kernel::TileId::kWide ||
      !kernel::takes_wide_cout192(d, p.choice.upsample_phases))
    return false;
  *t = kType == DType::kFP8E4M3 ? tile_of<c::Gfx950WideCout192ShapeFp8>()
                                : tile_of<c::Gfx950WideCout192Shape>();
  return true;
}

// The blocks of a plan's conv on tile t, counted from the descriptor (one launch: an upsample
// conv's phase runs on the source frame, a temporal conv's half on half of Cout).
int64_t blocks_on(const ConvDesc& d, bool upsample_phases, const Tile& t) {
  const int64_t pixels = upsample_phases ? d.h * d.w : d.out_h() * d.out_w();
  return (pixels + t.bm - 1) / t.bm * ((d.out_channels_stored() + t.bn - 1) / t.bn) * d.n *
         d.out_t();
}

// Whether conv d's K tiles (one launch's: an upsample conv's phase has 4 Cin) split evenly over
// tile t's groups of warps (a sliced-K tile's condition: kernel/sliced_k.hpp).
bool k_tiles_split_evenly(const ConvDesc& d, bool upsample_phases, const Tile& t) {
  const int64_t k = upsample_phases ? 4 * d.cin : d.gemm_k();
  return (k + t.bk - 1) / t.bk % t.slices_k == 0;
}

// Whether a set plans gfx942's tables: its twin (cuda-mma), or AMD's primary set.
bool plans_gfx942(TableSet s) {
#if defined(VAECONV_BACKEND_HIP)
  if (s == TableSet::kPrimary) return true;
#endif
  return s == TableSet::kGfx942Twin;
}

// A set's small-grid tile where the tile the conv would otherwise take (gfx950: its 192-wide or
// its wide tile; gfx942: its wide tile or the few-rounds partner, one grid) leaves each CU at
// most the set's few blocks (gfx950: one of the MI355X's 256; gfx942: two of the MI300X's 304;
// tile_rounds.hpp's small-grid rule; not the temporal convs: dispatch.hpp's
// small_grid_takes_kind) and the conv's K tiles split evenly over the tile's groups of warps
// (a sliced-K tile: kernel/sliced_k.hpp).
template <DType kType>
bool small_grid_tile(TableSet s, const ConvDesc& d, const KernelPlan& p, const Tile& would,
                     Tile* t) {
  namespace c = kernel::cdna;
  const bool gfx950 = s == TableSet::kGfx950, fp8 = kType == DType::kFP8E4M3;
  if ((!gfx950 && !plans_gfx942(s)) || p.family() != "implicit_gemm" || !p.choice.vector ||
      kernel::choose_tile(d.cout) != kernel::TileId::kWide ||
      !kernel::small_grid_takes_kind(d.kind) ||
      !kernel::grid_leaves_few_blocks_per_unit(
          gfx950 ? kernel::kRoundTargetGfx950 : kernel::kRoundTargetGfx942,
          blocks_on(d, p.choice.upsample_phases, would), gfx950 ? 1 : 2))
    return false;
  const Tile small = gfx950 ? (fp8 ? tile_of<c::Gfx950SmallGridShapeFp8>()
                                   : tile_of<c::Gfx950SmallGridShape>())
                            : (fp8 ? tile_of<c::SmallGridShapeFp8>()
                                   : tile_of<c::SmallGridShape>());
  if (!k_tiles_split_evenly(d, p.choice.upsample_phases, small)) return false;
  *t = small;
  return true;
}

// A set's sliced narrow tile (both targets: tile_table.hpp) for a narrow conv of the 16-byte
// gather whose K tiles split evenly over its groups (not the temporal convs).
template <DType kType>
bool narrow_sliced_tile(TableSet s, const ConvDesc& d, const KernelPlan& p, Tile* t) {
  namespace c = kernel::cdna;
  const bool gfx950 = s == TableSet::kGfx950, fp8 = kType == DType::kFP8E4M3;
  if ((!gfx950 && !plans_gfx942(s)) || p.family() != "implicit_gemm" || !p.choice.vector ||
      kernel::choose_tile(d.cout) != kernel::TileId::kNarrow ||
      !kernel::small_grid_takes_kind(d.kind))
    return false;
  const Tile n = gfx950 ? (fp8 ? tile_of<c::Gfx950NarrowSlicedShapeFp8>()
                               : tile_of<c::Gfx950NarrowSlicedShape>())
                        : (fp8 ? tile_of<c::NarrowSlicedShapeFp8>()
                               : tile_of<c::NarrowSlicedShape>());
  if (!k_tiles_split_evenly(d, p.choice.upsample_phases, n)) return false;
  *t = n;
  return true;
}

// The set's tile of a plan: gfx950's small-grid or 192-wide tile, the round rule's wide tile
// (implicit GEMM) or the cdna tap-reduce tile (the gfx942 twin's; gfx950's set keeps the primary
// set's, so no case of it plans one).
template <DType kType>
Tile own_tile(TableSet s, const ConvDesc& d, const KernelPlan& p, bool tap_reduce) {
  namespace c = kernel::cdna;
  const bool fp8 = kType == DType::kFP8E4M3;
  if (tap_reduce) return fp8 ? tile_of<c::TapReduceShapeFp8>() : tile_of<c::TapReduceShape>();
  Tile t, small;
  if (narrow_sliced_tile<kType>(s, d, p, &t)) return t;
  // a narrow conv whose K tiles do not split over the set's sliced narrow tile: the set's narrow
  // tile (AMD: gfx942's, which gfx950's set shares; a served case on AMD where gfx942's sliced
  // tile splits them and gfx950's does not)
  if (kernel::choose_tile(d.cout) == kernel::TileId::kNarrow)
    return fp8 ? tile_of<kernel::NarrowShapeFp8>() : tile_of<kernel::NarrowShape>();
  if (!cout192_tile<kType>(s, d, p, &t)) t = rule_tile<kType>(s, p);
  return small_grid_tile<kType>(s, d, p, t, &small) ? small : t;
}

// gfx950's bf16 halo kernel: the causal T = 1 convs without a cache whose Cin fills the halo's
// 16-channel K steps up to its 96 channels, where the implicit GEMM would take the set's wide
// tile (not the 192-wide tile, not the small-grid one: kHaloOnWideTileOnly; a small grid whose K
// tiles do not split evenly over the small-grid tile's groups keeps the wide tile, so the halo
// kernel).
template <DType kType>
bool gfx950_halo_case(TableSet s, const ConvDesc& d) {
  namespace c = kernel::cdna;
  if (s != TableSet::kGfx950 || kType != DType::kBF16 || d.kind != ConvKind::kCausal3x3x3 ||
      d.t != 1 || d.cache_frames != 0 || d.cin % 16 != 0 ||
      d.cin > kernel::HaloFragmentBf16::kMaxCin ||
      kernel::choose_tile(d.cout) != kernel::TileId::kWide ||
      kernel::takes_wide_cout192(d, false))
    return false;
  const bool even = k_tiles_split_evenly(d, false, tile_of<c::Gfx950SmallGridShape>());
  const int64_t wide_blocks = blocks_on(d, false, tile_of<c::Gfx950WideShape>());
  return !even || !kernel::grid_leaves_one_block_per_unit(kernel::kRoundTargetGfx950, wide_blocks);
}

// The plans of d (its dtypes set) under the set and the primary set.
struct TwoPlans {
  Status status;
  KernelPlan own, primary;
};
TwoPlans plans_of(const ConvDesc& d, TableSet s) {
  TwoPlans p;
  p.status = which_kernel(d, &p.own, s);
  if (p.status.ok()) p.status = which_kernel(d, &p.primary, TableSet::kPrimary);
  return p;
}
bool served(const ConvDesc& d, TableSet s) {
  const TwoPlans p = plans_of(d, s);
  return p.status.ok() && p.own.name() != p.primary.name();
}

// The whole check of one case on set s: its plan (host code), then the GPU run.
template <DType kType>
void check_set_case(TableSet s, const ConvDesc& factory_desc, CaseOptions o) {
  if (!built(s)) GTEST_SKIP() << "this build has no such table set";
  o.table_set = int(s);
  const ConvDesc d = case_desc(factory_desc, kType, o);
  const TwoPlans p = plans_of(d, s);
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  EXPECT_NE(p.own.name(), p.primary.name()) << "not a case of the set's own tiles";
  ASSERT_EQ(p.own.table_set, s);
  const bool tap_reduce = p.own.family() == "tap_reduce", halo = p.own.family() == "halo";
  ASSERT_TRUE(tap_reduce || halo || p.own.family() == "implicit_gemm") << p.own.name();
  EXPECT_EQ(halo, gfx950_halo_case<kType>(s, d)) << "which_kernel: " << p.own.name();
  const Tile w = halo ? tile_of<kernel::cdna::Gfx950HaloShape>()
                      : own_tile<kType>(s, d, p.own, tap_reduce);
  ASSERT_TRUE(same_tile(p.own, w))
      << "which_kernel: " << p.own.name() << ", the set's tile is " << w.bm << "x" << w.bn
      << "x" << w.bk << " w" << w.warps_m << "x" << w.warps_n << " s" << w.stages;
  VAECONV_REQUIRE_GPU();
#if defined(VAECONV_BACKEND_HIP)
  TableSet device_set = TableSet::kPrimary;
  ASSERT_TRUE(check_device_arch(d.in_dtype, &device_set).ok());
  if (device_set != s)
    GTEST_SKIP() << "on AMD a table set runs on its own target's devices (the seed suite runs "
                    "the device's own set)";
#endif
  expect_case_ok<kType>(d, run_conv_case<kType>(d, o));
}

// --- Seed shapes --------------------------------------------------------------------------------
struct SeedParam {
  AmdSet set;
  VaeShape shape;
};
void PrintTo(const SeedParam& p, std::ostream* os) { *os << p.set.name << " " << p.shape.id; }
std::string seed_name(const ::testing::TestParamInfo<SeedParam>& i) {
  return std::string(i.param.set.name) + "_" + i.param.shape.id;
}

// A seed shape is served by a set's own tiles where its plan differs from the primary's.
template <DType kType>
std::vector<SeedParam> served_seed_shapes(const AmdSet& set) {
  std::vector<SeedParam> v;
  for (const VaeShape& s : kVaeShapes)
    if (served(case_desc(s.desc(), kType, CaseOptions{}), set.set)) v.push_back({set, s});
  return v;
}
template <DType kType>
std::vector<SeedParam> seed_params() {
  std::vector<SeedParam> v;
  for (const AmdSet& set : amd_sets())
    for (const SeedParam& p : served_seed_shapes<kType>(set)) v.push_back(p);
  return v;
}

template <DType kType>
uint32_t seed_of(const SeedParam& p) {
  const uint32_t base = kType == DType::kFP8E4M3 ? 4000u : 3000u;
  return base + (p.set.set == TableSet::kGfx942Twin ? 500u : 0u) +
         uint32_t(p.shape.cin * 7 + p.shape.cout * 13 + p.shape.h);
}

// The param lists must not come out empty by a dispatch change without a sound.
TEST(AmdTables, ServeSeedShapes) {
  if (amd_sets().empty()) GTEST_SKIP() << "this build has no AMD table set of its own";
  for (const AmdSet& set : amd_sets()) {
    EXPECT_GE(served_seed_shapes<DType::kBF16>(set).size(), 4u) << set.name;
    EXPECT_GE(served_seed_shapes<DType::kFP8E4M3>(set).size(), 4u) << set.name;
  }
}

// The round rule on every seed shape of every gfx942 / gfx950 set the build plans (AMD: the
// primary set is gfx942's; cuda-mma: the twins): each 96-wide vector implicit GEMM gets the tile
// the rule names for its grid, and each set with two wide tiles gives some seed shape each;
// the grids that leave each CU few blocks get the set's small-grid tile, two seed shapes or more;
// gfx950's Cout % 192 convs get its 192-wide tile (takes_wide_cout192), four seed shapes or more,
// and the bf16 convs of its halo kernel (gfx950_halo_case) that kernel, one seed shape or more.
TEST(AmdTables, RoundRule) {
  std::vector<std::pair<TableSet, const char*>> sets;
#if defined(VAECONV_BACKEND_HIP)
  sets.push_back({TableSet::kPrimary, "gfx942"});
#endif
  for (const AmdSet& s : amd_sets()) sets.push_back({s.set, s.name});
  if (sets.empty()) GTEST_SKIP() << "this build plans no gfx942 or gfx950 set";
  int few_of_set = 0;  // either operand type's seed shapes on the few-rounds tile
  auto check = [&](auto type_tag, TableSet set, const char* name) {
    constexpr DType kType = decltype(type_tag)::value;
    const WideTiles t = wide_tiles<kType>(set);
    int wide = 0, few = 0, cout192 = 0, small = 0, halo = 0;
    for (const VaeShape& sh : kVaeShapes) {
      const ConvDesc d = case_desc(sh.desc(), kType, CaseOptions{});
      KernelPlan p;
      ASSERT_TRUE(which_kernel(d, &p, set).ok()) << name << " " << sh.id;
      // the small-grid tile (both targets) or gfx950's 192-wide tile, not the round rule's
      Tile t192, tsmall;
      const bool is192 = cout192_tile<kType>(set, d, p, &t192);
      if (small_grid_tile<kType>(set, d, p, is192 ? t192 : t.wide, &tsmall)) {
        EXPECT_TRUE(same_tile(p, tsmall)) << name << " " << sh.id << ": " << p.name();
        ++small;
        continue;
      }
      if (is192) {
        EXPECT_TRUE(same_tile(p, t192)) << name << " " << sh.id << ": " << p.name();
        ++cout192;
        continue;
      }
      if (gfx950_halo_case<kType>(set, d)) {
        EXPECT_EQ(p.family(), "halo") << name << " " << sh.id << ": " << p.name();
        ++halo;
        continue;
      }
      if (p.family() != "implicit_gemm" || p.bn != 96 || !p.choice.vector) continue;
      const Tile want = rule_tile<kType>(set, p);
      EXPECT_TRUE(same_tile(p, want)) << name << " " << sh.id << ": " << p.name() << " on "
                                      << p.tiles << " blocks";
      (same_tile(p, t.wide) ? wide : few) += 1;
    }
    EXPECT_GE(wide, 1) << name;
    few_of_set += t.has_few ? few : 0;
    EXPECT_GE(small, 2) << name << ": the small-grid tile";
    if (set == TableSet::kGfx950) {
      EXPECT_GE(cout192, 4) << name << ": the 192-wide tile";
      if (kType == DType::kBF16) EXPECT_GE(halo, 1) << name << ": the halo kernel";
    }
  };
  for (const auto& [set, name] : sets) {
    few_of_set = 0;
    check(std::integral_constant<DType, DType::kBF16>{}, set, name);
    check(std::integral_constant<DType, DType::kFP8E4M3>{}, set, name);
    // gfx942's few-rounds tile: the seed grids it won (two blocks or fewer per CU) take the
    // sliced small-grid tile where their K tiles split evenly; dec_conv_in's do not (bf16 9 K
    // tiles of 16, fp8 5 of 32) and keep it, where no halo kernel takes the bf16 one first (the
    // twin's bf16 list has NVIDIA's)
    if (wide_tiles<DType::kBF16>(set).has_few)
      EXPECT_GE(few_of_set, 1) << name << ": no seed shape takes the few-rounds tile";
  }
}

class AmdTablesSeedBf16 : public ::testing::TestWithParam<SeedParam> {};
TEST_P(AmdTablesSeedBf16, MatchesReference) {
  CaseOptions o;
  o.seed = seed_of<DType::kBF16>(GetParam());
  check_set_case<DType::kBF16>(GetParam().set.set, GetParam().shape.desc(), o);
}
INSTANTIATE_TEST_SUITE_P(Seed, AmdTablesSeedBf16, ::testing::ValuesIn(seed_params<DType::kBF16>()),
                         seed_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AmdTablesSeedBf16);

class AmdTablesSeedFp8 : public ::testing::TestWithParam<SeedParam> {};
TEST_P(AmdTablesSeedFp8, MatchesDequantizedReference) {
  CaseOptions o;
  o.seed = seed_of<DType::kFP8E4M3>(GetParam());
  check_set_case<DType::kFP8E4M3>(GetParam().set.set, GetParam().shape.desc(), o);
}
INSTANTIATE_TEST_SUITE_P(Seed, AmdTablesSeedFp8, ::testing::ValuesIn(seed_params<DType::kFP8E4M3>()),
                         seed_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AmdTablesSeedFp8);

// --- Extra cases --------------------------------------------------------------------------------
struct ExtraParam {
  AmdSet set;
  std::string name;
  ConvDesc desc;  // as the factories give it (bf16)
  CaseOptions opt;
};
void PrintTo(const ExtraParam& p, std::ostream* os) { *os << p.set.name << " " << p.name; }
std::string extra_name(const ::testing::TestParamInfo<ExtraParam>& i) {
  return std::string(i.param.set.name) + "_" + i.param.name;
}

// The wide tiles' own cases, both operand types (Cin > 96 or T > 1 where the bf16 halo kernel
// would take a T = 1 Cin <= 96 conv on the mma.sync build).
std::vector<ConvCase> wide_cases() {
  CaseOptions plain, res, inplace;
  res.residual = true;
  inplace.residual_in_place = true;
  const Aim none{};
  return {
      // A grid gfx942's bf16 wide tile finishes in fewer rounds than its few-rounds partner (626
      // blocks of 128 rows); the smaller bf16 cases below take the partner there.
      {"causal_t2_wide_grid", ConvDesc::causal3x3x3(1, 2, 200, 200, 96, 96), plain, none},
      // Partial tiles of 128 and 256 rows: 37 x 53 = 1961 pixels per frame, two frames.
      {"causal_video_t2_partial_res", ConvDesc::causal3x3x3(1, 2, 37, 53, 96, 192), res, none},
      {"causal_cin192_odd_inplace", ConvDesc::causal3x3x3(1, 1, 45, 77, 192, 96), inplace, none},
      {"causal_n2_cin384", ConvDesc::causal3x3x3(2, 1, 19, 23, 384, 96), plain, none},
      {"causal_strided_cin192",
       with_padded_strides(ConvDesc::causal3x3x3(1, 1, 21, 18, 192, 96), 16, 8), res, none},
      {"down_n2_odd", ConvDesc::downsample(2, 1, 77, 131, 96, 96), plain, none},
      {"up_residual", ConvDesc::upsample2x(1, 1, 20, 12, 384, 192), res, none},
      {"up_video_t2_inplace", ConvDesc::upsample2x(1, 2, 17, 9, 192, 96), inplace, none},
  };
}

// Per set: the wide cases, then the shared table's cases (conv_cases.hpp, "table_" names) that
// the set's own tiles serve.
template <DType kType>
std::vector<ExtraParam> extra_params() {
  std::vector<ExtraParam> v;
  for (const AmdSet& set : amd_sets()) {
    for (const ConvCase& c : wide_cases()) v.push_back({set, c.name, c.desc, c.opt});
    for (const ConvCase& c : extra_cases(kType))
      if (served(case_desc(c.desc, kType, c.opt), set.set))
        v.push_back({set, std::string("table_") + c.name, c.desc, c.opt});
  }
  return v;
}

class AmdTablesExtraBf16 : public ::testing::TestWithParam<ExtraParam> {};
TEST_P(AmdTablesExtraBf16, MatchesReference) {
  check_set_case<DType::kBF16>(GetParam().set.set, GetParam().desc, GetParam().opt);
}
INSTANTIATE_TEST_SUITE_P(Cases, AmdTablesExtraBf16,
                         ::testing::ValuesIn(extra_params<DType::kBF16>()), extra_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AmdTablesExtraBf16);

class AmdTablesExtraFp8 : public ::testing::TestWithParam<ExtraParam> {};
TEST_P(AmdTablesExtraFp8, MatchesDequantizedReference) {
  check_set_case<DType::kFP8E4M3>(GetParam().set.set, GetParam().desc, GetParam().opt);
}
INSTANTIATE_TEST_SUITE_P(Cases, AmdTablesExtraFp8,
                         ::testing::ValuesIn(extra_params<DType::kFP8E4M3>()), extra_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AmdTablesExtraFp8);

}  // namespace
}  // namespace vaeconv::test
