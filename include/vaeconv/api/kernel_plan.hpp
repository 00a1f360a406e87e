// vaeconv/api/kernel_plan.hpp — which kernel conv_forward runs for a conv, and its launch shape.
//
// choose_kernel() walks the candidate list of the build's architecture and the conv's operand
// type (kernel/dispatch.hpp: the first family whose can_implement(desc) holds); visit_kernel()
// maps its answer to the kernel instance of a table set (kernel/tile_table.hpp). conv_forward (api/conv.hpp) launches what they pick; which_kernel() reports it — tile,
// grid, K tiles, LDS — as plain numbers. Host code: no device call, no kernel instantiated here
// (only the kernels' compile-time shapes are read), so a tool that only plans stays cheap to build.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/launch_limits.hpp"
#include "vaeconv/conv/upsample_phases.hpp"
#include "vaeconv/kernel/conv_kernel.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/epilogue_shape.hpp"
#include "vaeconv/kernel/halo_conv_kernel.hpp"
#include "vaeconv/kernel/halo_fragment_kernel.hpp"
#include "vaeconv/kernel/tap_reduce_kernel.hpp"
#include "vaeconv/kernel/tap_row_conv_kernel.hpp"
#include "vaeconv/kernel/tap_row_fragment_kernel.hpp"
#include "vaeconv/kernel/tail_split.hpp"
#include "vaeconv/kernel/tile_rounds.hpp"
#include "vaeconv/kernel/tile_table.hpp"
#include "vaeconv/kernel/warp_specialized_conv_kernel.hpp"

namespace vaeconv {

// Which kernel conv_forward runs for a conv: the dispatch rule's answer (detail::choose_kernel),
// before any template is picked.
struct KernelChoice {
  // The families of kernel/dispatch.hpp (kernel::FamilyId, same values).
  enum class Family : int { kImplicitGemm = 0, kTapReduce = 1, kHalo = 2, kTapRow = 3 };
  Family family = Family::kImplicitGemm;
  // The implicit GEMM's tile: by Cout (kernel/dispatch.hpp's choose_tile), then, for the wide
  // tile and a table with a 192-wide tile of the conv's operand type, by geometry and Cout % 192
  // (takes_wide_cout192), else, for a table with a causal tile of that type, by geometry
  // (takes_wide_causal), else, for a table with a few-rounds partner, by the round rule
  // (kernel/tile_rounds.hpp).
  kernel::TileId tile = kernel::TileId::kWide;
  bool vector = true;            // the implicit GEMM's 16-byte gather (else element-wise)
  bool upsample_phases = false;  // an upsample conv as four 2 x 2 phase launches
  // > 0: the tail rule's split (kernel/tail_split.hpp): the tile runs pixels [0, tail_begin) of
  // every frame, the table's tail tile the rest, in a second launch (each phase's, where phased).
  int tail_begin = 0;
};

static_assert(int(KernelChoice::Family::kImplicitGemm) == int(kernel::FamilyId::kImplicitGemm) &&
                  int(KernelChoice::Family::kTapReduce) == int(kernel::FamilyId::kTapReduce) &&
                  int(KernelChoice::Family::kHalo) == int(kernel::FamilyId::kHalo) &&
                  int(KernelChoice::Family::kTapRow) == int(kernel::FamilyId::kTapRow),
              "one numbering of the families");

// The kernel instance and launch shape of a conv (which_kernel): what the benchmark and the
// performance model need to know without a GPU.
struct KernelPlan {
  KernelChoice choice;
  DType dtype = DType::kBF16;
  int bm = 0, bn = 0, bk = 0, warps_m = 0, warps_n = 0, stages = 0, min_blocks = 0;
  // LDS buffers where copies are staged in registers (AMD): stages, or 2 (TwoBufferTileShape)
  int lds_stages = 0;
  int threads = 0, wave_size = 0;  // per block; lanes of one atom group
  int slices_k = 1;  // groups of warps that split K (SlicedKTileShape), threads / slices each
  // Geometry<stride, pad, up, taps> of the implicit GEMM's gather; all 0 for the other families.
  int geo_stride = 0, geo_pad = 0, geo_up = 0, geo_taps = 0;
  int launches = 0;     // kernel launches per conv (4 for an upsample conv in phases)
  int64_t tiles = 0;    // blocks per launch (before a persistent launch cuts the grid)
  int k_tiles = 0;      // main-loop K tiles per block
  int lds_bytes = 0;    // LDS / shared memory per block
  int patch_rows = 0, patch_cols = 0;  // the output patch of the tap-reduce and halo kernels
  // The tail launch of a conv the tail rule splits (choice.tail_begin > 0; the fields above are
  // the head launch's, whose tiles cover pixels [0, tail_begin) of every frame): its tile and
  // blocks (0 where the conv runs in one launch per phase).
  int tail_bm = 0, tail_bn = 0;
  int64_t tail_tiles = 0;
  kernel::TableSet table_set = kernel::TableSet::kPrimary;  // the tables it was planned from
  std::string target() const { return kernel::table_set_name(table_set); }  // "gfx942", ...
  std::string family() const {  // the family's name() (kernel/dispatch.hpp)
    using namespace kernel;
    return family_name(FamilyId(choice.family),
                       CandidateList<ImplicitGemmFamily, TapReduceFamily, HaloFamilyOf<0>,
                                     TapRowFamily>{});
  }
  // e.g. "implicit_gemm bf16 128x96x32 w4x1 s2 causal vector" (" s3 b2": two LDS buffers;
  // " k2": K split over two groups of warps)
  std::string name() const {
    std::string s = family() + (dtype == DType::kFP8E4M3 ? " fp8 " : " bf16 ") +
                    std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) +
                    " w" + std::to_string(warps_m) + "x" + std::to_string(warps_n) + " s" +
                    std::to_string(stages);
    if (lds_stages != stages) s += " b" + std::to_string(lds_stages);
    if (slices_k != 1) s += " k" + std::to_string(slices_k);
    if (choice.tail_begin > 0)
      s += " tail " + std::to_string(tail_bm) + "x" + std::to_string(tail_bn) + "@" +
           std::to_string(choice.tail_begin);
    if (choice.family == KernelChoice::Family::kImplicitGemm) {
      const int g = geo_stride * 1000 + geo_pad * 100 + geo_up * 10 + geo_taps;
      s += g == 1113 ? " causal" : g == 2013 ? " downsample" : g == 1123 ? " upsample"
                                              : g == 1112 ? " upsample_phase" : " ?";
      s += choice.vector ? " vector" : " scalar";
    }
    return s;
  }
};

namespace detail {

// The grid of a launch, one function for every family (shared by the launches and
// which_kernel's plan): per frame m_blocks pixel blocks (kernel/block_tiling.hpp: runs of BM
// pixels, or patches) times n_tiles Cout tiles, over N * T_out frames; *p is the kernel's
// parameters. part.phase >= 0: that output phase of an upsample conv packed in phases (or half
// of a temporal conv's interleaved output); a pixel range in part: the runs of BM pixels of that
// range of every frame (the tail rule's two launches; the caller keeps it inside the frame).
template <class Policy, class Tiling>
inline int64_t block_grid(const ConvDesc& d, const ConvArgs& a, const kernel::LaunchPart& part,
                          kernel::ConvParams* p) {
  *p = make_params(d, a, Policy::BM, Policy::BN);
  if (part.phase >= 0) apply_upsample_phase(d, a.weights.info, part.phase, Policy::BM, p);
  if constexpr (Tiling::kPatches) {
    p->patch_cols = int((p->wo + Tiling::kCols - 1) / Tiling::kCols);
    p->m_blocks = int((p->ho + Tiling::kRows - 1) / Tiling::kRows) * p->patch_cols;
  } else if (!part.whole_frames()) {
    const int end = part.m_end > 0 ? part.m_end : p->frame_pixels;
    p->m_begin = part.m_begin;
    p->m_blocks = (end - part.m_begin + Policy::BM - 1) / Policy::BM;
  }
  return int64_t(p->m_blocks) * p->n_tiles * int64_t(d.n * d.out_t());
}

// The launch limits (conv/launch_limits.hpp) for a grid of `tiles` block tiles of Kernel. Runs
// on every launch: the message naming the kernel's tile is built only on a refusal.
template <class Kernel>
inline Status check_launch_grid(int64_t tiles) {
  using Policy = typename Kernel::PolicyT;
  if (check_tile_grid(tiles, Policy::kBlockThreads, Kernel::kPersistent, std::string()).ok())
    return Status::Ok();
  return check_tile_grid(tiles, Policy::kBlockThreads, Kernel::kPersistent,
                         " block tiles of " + std::to_string(Policy::BM) + " pixels x " +
                             std::to_string(Policy::BN) + " channels");
}

// The host side of one launch of Kernel (conv_forward's Launcher, api/conv.hpp): its parameters
// and grid (block_grid, p->tiles), checked against the launch limits. Allocates nothing on
// success (tests/host/test_hot_path_alloc.cpp).
template <class Kernel>
inline Status launch_grid(const ConvDesc& d, const ConvArgs& a, const kernel::LaunchPart& part,
                          kernel::ConvParams* p) {
  using Policy = typename Kernel::PolicyT;
  const int64_t tiles = block_grid<Policy, typename Kernel::Tiling>(d, a, part, p);
  VAECONV_RETURN_IF_ERROR(check_launch_grid<Kernel>(tiles));
  if constexpr (Policy::kSlicesK > 1) {
    // A sliced-K block's groups run the same trips (kernel/sliced_k.hpp): the small-grid rule
    // gives it only convs whose K tiles split evenly; a table that sends another is refused.
    if (Kernel::k_tiles_total(*p) % Policy::kSlicesK != 0)
      return Status(StatusCode::kUnsupported,
                    "a sliced-K tile needs K tiles that split evenly over its " +
                        std::to_string(Policy::kSlicesK) + " groups of warps (" +
                        std::to_string(Kernel::k_tiles_total(*p)) + " K tiles)");
  }
  p->tiles = int(tiles);
  return Status::Ok();
}

// The blocks of one launch of an implicit-GEMM tile on conv d, as the tile rules below count them
// before choosing: the launch's own grid (block_grid; an upsample conv's phases share one grid,
// phase 0's), from the descriptor and the packed weights' info alone (no buffers). Host
// arithmetic only, no allocation (the launch path runs it).
template <class Policy>
inline int64_t rule_grid_blocks(const ConvDesc& d, const PackedWeightsInfo& w,
                                bool upsample_phases) {
  using Tiling = typename kernel::ConvKernel<Policy, kernel::CausalGeometry, true>::Tiling;
  ConvArgs a;
  a.weights.info = w;
  kernel::ConvParams p;
  return block_grid<Policy, Tiling>(d, a, kernel::phase_part(upsample_phases ? 0 : -1), &p);
}

// Whether conv d's K tiles split evenly over a tile's groups of warps (a SlicedKTileShape,
// kernel/sliced_k.hpp: its groups must run the same trips; true for a tile that is not sliced),
// from the descriptor and the packed weights' info alone, like rule_grid_blocks.
template <class Policy>
inline bool k_tiles_split_evenly(const ConvDesc& d, const PackedWeightsInfo& w,
                                 bool upsample_phases) {
  using Kernel = kernel::ConvKernel<Policy, kernel::CausalGeometry, true>;
  ConvArgs a;
  a.weights.info = w;
  kernel::ConvParams p;
  (void)block_grid<Policy, typename Kernel::Tiling>(
      d, a, kernel::phase_part(upsample_phases ? 0 : -1), &p);
  return Kernel::k_tiles_total(p) % Policy::kSlicesK == 0;
}

// The round rule (kernel/tile_rounds.hpp) of a table T with a few-rounds partner of its wide tile
// (T::WideFewRounds not void): the partner where the wide tile's grid needs no fewer rounds over
// the target's CUs (rule_grid_blocks).
template <class T>
inline kernel::TileId wide_tile_by_rounds(const ConvDesc& d, const PackedWeightsInfo& w,
                                          bool upsample_phases) {
  using Few = typename T::WideFewRounds;
  if constexpr (std::is_void_v<Few>) {
    (void)d; (void)w; (void)upsample_phases;
    return kernel::TileId::kWide;
  } else {
    using Wide = typename T::Wide;
    using Tiling = typename kernel::ConvKernel<Wide, kernel::CausalGeometry, true>::Tiling;
    static_assert(std::is_same_v<Tiling, typename kernel::ConvKernel<
                                             Few, kernel::CausalGeometry, true>::Tiling>,
                  "both tiles run the implicit GEMM's tiling");
    // The rule counts a block's LDS as its pipeline's on the table's target (the host tests'
    // pipeline_lds_bytes: the shape's LDS buffers, which a portable twin's plan reads too): the
    // epilogue must stage inside it.
    constexpr int kWideLds = kernel::pipeline_lds_bytes<Wide>(Wide::kElemBytes);
    constexpr int kFewLds = kernel::pipeline_lds_bytes<Few>(Few::kElemBytes);
    static_assert(kernel::EpilogueShape<Wide>::kBytes <= kWideLds &&
                      kernel::EpilogueShape<Few>::kBytes <= kFewLds,
                  "the round rule's tiles stage their epilogue inside the pipeline's LDS");
    static_assert((Wide::kPipelineBytes == kWideLds || !Wide::kRegisterStaged) &&
                      (Few::kPipelineBytes == kFewLds || !Few::kRegisterStaged),
                  "one count of a tile's LDS where copies stage in registers");
    const int64_t wide_blocks = rule_grid_blocks<Wide>(d, w, upsample_phases);
    const int64_t few_blocks = rule_grid_blocks<Few>(d, w, upsample_phases);
    return kernel::wide_saves_a_round(T::kRoundTarget, wide_blocks, kWideLds, few_blocks, kFewLds)
               ? kernel::TileId::kWide
               : kernel::TileId::kWideFewRounds;
  }
}

// The small-grid rule (kernel/tile_rounds.hpp) of a table T with a small-grid tile
// (T::WideSmallGrid not void): the tile `chosen` (the wide tile, its few-rounds partner or the
// 192-wide tile) unless its grid leaves each of the target's units at most
// T::kSmallGridBlocksPerUnit blocks (rule_grid_blocks), then the small-grid tile.
template <class T>
inline kernel::TileId tile_by_small_grid(const ConvDesc& d, const PackedWeightsInfo& w,
                                         bool upsample_phases, kernel::TileId chosen) {
  if constexpr (std::is_void_v<typename T::WideSmallGrid>) {
    (void)d; (void)w; (void)upsample_phases;
    return chosen;
  } else {
    if (!kernel::small_grid_takes_kind(d.kind)) return chosen;
    using Tiling =
        typename kernel::ConvKernel<typename T::Wide, kernel::CausalGeometry, true>::Tiling;
    static_assert(std::is_same_v<Tiling, typename kernel::ConvKernel<typename T::WideSmallGrid,
                                                                     kernel::CausalGeometry,
                                                                     true>::Tiling>,
                  "the tiles run the implicit GEMM's tiling");
    int64_t blocks = 0;
    if (chosen == kernel::TileId::kWideCout192) {
      if constexpr (!std::is_void_v<typename T::WideCout192>)
        blocks = rule_grid_blocks<typename T::WideCout192>(d, w, upsample_phases);
    } else if (chosen == kernel::TileId::kWideFewRounds) {
      if constexpr (!std::is_void_v<typename T::WideFewRounds>)
        blocks = rule_grid_blocks<typename T::WideFewRounds>(d, w, upsample_phases);
    } else if (chosen == kernel::TileId::kWide) {
      blocks = rule_grid_blocks<typename T::Wide>(d, w, upsample_phases);
    } else {
      return chosen;
    }
    if (!kernel::grid_leaves_few_blocks_per_unit(T::kSmallGridTarget, blocks,
                                                 T::kSmallGridBlocksPerUnit))
      return chosen;
    // A sliced-K small-grid tile takes only the convs whose K tiles split evenly over its
    // groups (kernel/sliced_k.hpp); the others keep the tile they had.
    return k_tiles_split_evenly<typename T::WideSmallGrid>(d, w, upsample_phases)
               ? kernel::TileId::kWideSmallGrid
               : chosen;
  }
}

// The narrow tile's sliced-K form (T::NarrowSliced not void: the AMD sets) for a
// narrow conv of the 16-byte gather whose K tiles split evenly over its groups of warps
// (kernel/sliced_k.hpp; not the temporal convs, whose kernels it does not build), else the
// narrow tile.
template <class T>
inline kernel::TileId narrow_tile_by_split(const ConvDesc& d, const PackedWeightsInfo& w,
                                           bool upsample_phases) {
  using Sliced = typename T::NarrowSliced;
  if constexpr (std::is_void_v<Sliced>) {
    (void)d; (void)w; (void)upsample_phases;
    return kernel::TileId::kNarrow;
  } else {
    return kernel::small_grid_takes_kind(d.kind) &&
                   k_tiles_split_evenly<Sliced>(d, w, upsample_phases)
               ? kernel::TileId::kNarrowSliced
               : kernel::TileId::kNarrow;
  }
}

// A table's narrow tile of the element-wise gather: T::NarrowElementwise where the set has one
// (sm_90a bf16, whose narrow tile is the wgmma atom), else the narrow tile.
template <class T, class = void>
struct NarrowElementwiseOf {
  using type = typename T::Narrow;
};
template <class T>
struct NarrowElementwiseOf<T, std::void_t<typename T::NarrowElementwise>> {
  using type = typename T::NarrowElementwise;
};

// A table's tail tile for the 192-wide tile's short last round (kernel/tail_split.hpp) and the
// rule's nominal units: WideCout192Tail and kTailUnits where the set has them (sm_90a bf16), else
// void (the 192-wide tile always runs in one launch).
template <class T, class = void>
struct WideCout192TailOf {
  using type = void;
};
template <class T>
struct WideCout192TailOf<T, std::void_t<typename T::WideCout192Tail>> {
  using type = typename T::WideCout192Tail;
};

// The tail rule for a conv on the 192-wide tile of table T: the pixels of every frame the tile
// keeps (KernelChoice::tail_begin; 0: no split, or no tail tile in T). Each tile's resident
// blocks per unit are its launch bounds' (kMinBlocks); the grid is phase 0's where phased, which
// every phase shares (rule_grid_blocks).
template <class T>
inline int wide_cout192_tail_begin(const ConvDesc& d, const PackedWeightsInfo& w,
                                   bool upsample_phases) {
  using Tail = typename WideCout192TailOf<T>::type;
  if constexpr (std::is_void_v<Tail>) {
    (void)d; (void)w; (void)upsample_phases;
    return 0;
  } else {
    using Head = typename T::WideCout192;
    using Tiling = typename kernel::ConvKernel<Head, kernel::CausalGeometry, true>::Tiling;
    static_assert(!Tiling::kPatches, "the tail rule splits runs of pixels");
    ConvArgs a;
    a.weights.info = w;
    kernel::ConvParams p;
    (void)block_grid<Head, Tiling>(d, a, kernel::phase_part(upsample_phases ? 0 : -1), &p);
    return kernel::tail_split_pixels(T::kTailUnits, d.n * d.out_t(), p.frame_pixels, p.cout,
                                     {Head::BM, Head::BN, Head::kMinBlocks},
                                     {Tail::BM, Tail::BN, Tail::kMinBlocks});
  }
}

// The implicit GEMM's tile, gather and phases for d in a table set.
template <class Tables>
inline KernelChoice implicit_gemm_choice(const ConvDesc& d, const PackedWeightsInfo& w) {
  constexpr DType kBf16 = DType::kBF16, kFp8 = DType::kFP8E4M3;
  KernelChoice c;
  c.family = KernelChoice::Family::kImplicitGemm;
  c.tile = kernel::choose_tile(d.cout);
  c.vector = kernel::ImplicitGemmFamily::vector_gather(d);
  c.upsample_phases = d.kind == ConvKind::kUpsample && w.phases == kUpsamplePhases;
  // The 192-wide tile where the table of the operand type has one
  // (kernel::takes_wide_cout192); the element-wise gather keeps one wide tile.
  const bool cout192 =
      d.in_dtype == kFp8
          ? !std::is_void_v<typename Tables::template For<kFp8>::WideCout192>
          : !std::is_void_v<typename Tables::template For<kBf16>::WideCout192>;
  // The causal tile where the table of the operand type has one (kernel::takes_wide_causal).
  const bool causal =
      d.in_dtype == kFp8
          ? !std::is_void_v<typename Tables::template For<kFp8>::WideCausal>
          : !std::is_void_v<typename Tables::template For<kBf16>::WideCausal>;
  if (cout192 && c.tile == kernel::TileId::kWide && c.vector &&
      kernel::takes_wide_cout192(d, c.upsample_phases))
    c.tile = kernel::TileId::kWideCout192;
  else if (causal && c.tile == kernel::TileId::kWide && c.vector && kernel::takes_wide_causal(d))
    c.tile = kernel::TileId::kWideCausal;
  else if (c.tile == kernel::TileId::kWide && c.vector)
    c.tile = d.in_dtype == kFp8
                 ? wide_tile_by_rounds<typename Tables::template For<kFp8>>(d, w,
                                                                            c.upsample_phases)
                 : wide_tile_by_rounds<typename Tables::template For<kBf16>>(d, w,
                                                                             c.upsample_phases);
  // A narrow conv whose K tiles split evenly takes the sliced narrow tile where the table has one.
  if (c.tile == kernel::TileId::kNarrow && c.vector)
    c.tile = d.in_dtype == kFp8
                 ? narrow_tile_by_split<typename Tables::template For<kFp8>>(d, w,
                                                                             c.upsample_phases)
                 : narrow_tile_by_split<typename Tables::template For<kBf16>>(d, w,
                                                                              c.upsample_phases);
  // A grid that leaves each unit one block takes the small-grid tile where the table has one.
  if (c.vector)
    c.tile = d.in_dtype == kFp8
                 ? tile_by_small_grid<typename Tables::template For<kFp8>>(
                       d, w, c.upsample_phases, c.tile)
                 : tile_by_small_grid<typename Tables::template For<kBf16>>(
                       d, w, c.upsample_phases, c.tile);
  // The 192-wide tile's short last round on the table's tail tile, where it has one.
  if (c.tile == kernel::TileId::kWideCout192)
    c.tail_begin =
        d.in_dtype == kFp8
            ? wide_cout192_tail_begin<typename Tables::template For<kFp8>>(d, w, c.upsample_phases)
            : wide_cout192_tail_begin<typename Tables::template For<kBf16>>(d, w,
                                                                            c.upsample_phases);
  return c;
}

// A table's kHaloOnWideTileOnly (false where it has none): its halo kernel takes only the convs
// whose implicit GEMM would take the wide tile.
template <class T, class = void>
struct HaloOnWideTileOnly : std::false_type {};
template <class T>
struct HaloOnWideTileOnly<T, std::enable_if_t<T::kHaloOnWideTileOnly>> : std::true_type {};

// The dispatch, in one place: conv_forward launches and which_kernel reports its answer, the
// first family of the candidate list (kernel/dispatch.hpp) that can implement the conv; for the
// implicit GEMM its tile (by Cout, then the round rule where the table has two wide tiles), its
// gather, and the upsample conv in phases (upsample_phases.hpp). Tables: the table set whose
// policies run (kernel::ShippedTiles, or a sweep's): its kHaloMaxCin caps the halo family, and a
// set whose halo kernel takes only the wide tile's convs (kHaloOnWideTileOnly: gfx950's) hands
// the convs of its other tiles (192-wide, small-grid) to the implicit GEMM.
template <class Tables = kernel::ShippedTiles>
inline KernelChoice choose_kernel(const ConvDesc& d, const PackedWeightsInfo& w) {
  using kernel::Candidates;
  constexpr DType kBf16 = DType::kBF16, kFp8 = DType::kFP8E4M3;
  KernelChoice c;
  c.family = KernelChoice::Family(
      d.in_dtype == kFp8
          ? kernel::first_candidate(
                d, typename Candidates<kFp8, Tables::template For<kFp8>::kHaloMaxCin>::List{})
          : kernel::first_candidate(
                d, typename Candidates<kBf16, Tables::template For<kBf16>::kHaloMaxCin>::List{}));
  if (c.family == KernelChoice::Family::kHalo) {
    const bool wide_only =
        d.in_dtype == kFp8 ? HaloOnWideTileOnly<typename Tables::template For<kFp8>>::value
                           : HaloOnWideTileOnly<typename Tables::template For<kBf16>>::value;
    if (wide_only) {
      const KernelChoice g = implicit_gemm_choice<Tables>(d, w);
      if (g.tile != kernel::TileId::kWide) return g;
    }
    return c;
  }
  if (c.family == KernelChoice::Family::kImplicitGemm) return implicit_gemm_choice<Tables>(d, w);
  return c;
}

// The geometries a policy's kernels are built for (visit_geometry's kBuild): a tile that a rule
// gives only some convs (the 192-wide and the small-grid tiles) builds only theirs; a conv of
// another geometry reaching it is refused (the rules never send one).
enum BuildGeometries : unsigned {
  kBuildCausal = 1u,          // the causal conv without a cache
  kBuildCached = 2u,          // the causal conv with cached frames (16-byte gather)
  kBuildDownsample = 4u,
  kBuildTemporal = 8u,        // the (3,1,1) time convs (16-byte gather)
  kBuildUpsamplePhases = 16u,
  kBuildAll = 31u
};
// The small-grid tile's kinds: kernel::small_grid_takes_kind's (every kind but the temporal convs).
constexpr unsigned kSmallGridBuild =
    kBuildCausal | kBuildCached | kBuildDownsample | kBuildUpsamplePhases;

// visit_geometry's refusal of a conv kind its tile does not build, its message built only when
// returned (the launch path allocates nothing).
inline Status tile_kind_not_built() {
  return Status(StatusCode::kUnsupported,
                "this tile's kernels are not built for this conv kind (the dispatch's rules give "
                "the tile only the kinds it builds)");
}

// Calls the visitor with the kernel instance of a choice, v.run<Kernel>(part), once per launch
// (part.phase -1 unless the upsample conv runs in phases or the temporal conv in halves), among
// the geometries kBuild builds; `pixels`: the range of every frame the launches cover (the tail
// rule's head or tail; whole frames by default).
template <class Policy, bool kVector, unsigned kBuild = kBuildAll, class V>
inline Status visit_geometry(const ConvDesc& d, const KernelChoice& c, V& v,
                             const kernel::LaunchPart& pixels = kernel::LaunchPart{}) {
  const auto part = [&](int phase) {
    return kernel::LaunchPart{phase, pixels.m_begin, pixels.m_end};
  };
  static_assert(Policy::kChunkElems == 16 / Policy::kElemBytes, "choose_kernel's chunk");
  switch (d.kind) {
    case ConvKind::kCausal3x3x3:
      if (d.cache_frames > 0) {  // validate_cache: only the 16-byte gather reads a cache
        if constexpr (kVector && (kBuild & kBuildCached) != 0)
          return v.template run<
              kernel::ImplicitGemmKernel<Policy, kernel::CachedCausalGeometry, true>>(part(-1));
        else if constexpr (kVector)
          return tile_kind_not_built();
        return Status(StatusCode::kUnsupported, "a cached conv needs the 16-byte gather");
      }
      if constexpr ((kBuild & kBuildCausal) != 0)
        return v.template run<
            kernel::ImplicitGemmKernel<Policy, kernel::CausalGeometry, kVector>>(part(-1));
      return tile_kind_not_built();
    case ConvKind::kDownsample:
      if constexpr ((kBuild & kBuildDownsample) != 0)
        return v.template run<
            kernel::ImplicitGemmKernel<Policy, kernel::DownsampleGeometry, kVector>>(part(-1));
      return tile_kind_not_built();
    case ConvKind::kTemporal:  // temporal_gather.hpp; interleaved halves: one launch per half
      if constexpr (kVector && (kBuild & kBuildTemporal) != 0) {
        using K = kernel::ImplicitGemmKernel<Policy, kernel::TemporalGeometry, true>;
        if (!d.interleave_halves) return v.template run<K>(part(-1));
        for (int half = 0; half < 2; ++half) VAECONV_RETURN_IF_ERROR(v.template run<K>(part(half)));
        return Status::Ok();
      } else if constexpr (kVector) {
        return tile_kind_not_built();
      }
      return Status(StatusCode::kUnsupported, "the temporal conv needs the 16-byte gather");
    case ConvKind::kUpsample:
      // Only the four 2 x 2 phase convs are built (upsample_phases.hpp); validate_for_kernels
      // refuses weights packed in the direct form.
      if (!c.upsample_phases)
        return Status(StatusCode::kInvalidArgument,
                      "upsample weights packed in the direct form: the kernels run the upsample "
                      "conv in phases (pack_weights packs it so)");
      if constexpr ((kBuild & kBuildUpsamplePhases) != 0) {
        for (int phase = 0; phase < kUpsamplePhases; ++phase)
          VAECONV_RETURN_IF_ERROR(
              (v.template run<
                  kernel::ImplicitGemmKernel<Policy, kernel::UpsamplePhaseGeometry, kVector>>(
                  part(phase))));
        return Status::Ok();
      }
      return tile_kind_not_built();
  }
  return Status(StatusCode::kUnsupported, "unknown conv kind");
}

template <class Policy, class ElementPolicy = Policy, class V>
inline Status visit_either(const ConvDesc& d, const KernelChoice& c, V& v) {
  if (c.vector) return visit_geometry<Policy, true>(d, c, v);
  return visit_geometry<ElementPolicy, false>(d, c, v);
}

// Whether a table has a halo kernel (its Halo policy): the fragment-atom halo kernel's sets.
template <class T, class = void>
struct HasHalo : std::false_type {};
template <class T>
struct HasHalo<T, std::void_t<typename T::Halo>> : std::true_type {};

// Whether a table has a tap-row kernel (its TapRow policy): every GPU build's.
template <class T, class = void>
struct HasTapRow : std::false_type {};
template <class T>
struct HasTapRow<T, std::void_t<typename T::TapRow>> : std::true_type {};

template <class Tables, DType kType, class V>
inline Status visit_kernel(const ConvDesc& d, const KernelChoice& c, V& v) {
  using T = typename Tables::template For<kType>;
  using F = KernelChoice::Family;
  switch (c.family) {
    case F::kTapReduce: {
      using Policy = typename T::TapReduce;
      using Kernel = kernel::TapReduceKernel<Policy, kernel::TapReduceHalo<Policy::BM>>;
      static_assert(Kernel::kMaxCout >= kernel::kTapReduceMaxCout,
                    "the tile holds the nine taps of every Cout the tap-reduce family takes");
      return v.template run<Kernel>(kernel::phase_part(-1));
    }
    case F::kHalo:
      if constexpr (kernel::kHaloKernel)
        return v.template run<kernel::HaloConvKernel<typename T::Halo>>(kernel::phase_part(-1));
      else if constexpr (HasHalo<T>::value && kType == DType::kBF16)
        return v.template run<kernel::HaloFragmentConvKernel<typename T::Halo>>(
            kernel::phase_part(-1));
      break;
    case F::kTapRow:
      if constexpr (HasTapRow<T>::value) {
        using Policy = typename T::TapRow;
        if constexpr (Policy::kAtomReadsLds)
          return v.template run<kernel::TapRowConvKernel<Policy>>(kernel::phase_part(-1));
        else
          return v.template run<kernel::TapRowFragmentConvKernel<Policy>>(kernel::phase_part(-1));
      }
      break;
    case F::kImplicitGemm:
      switch (c.tile) {
        case kernel::TileId::kTiny: return visit_either<typename T::Tiny>(d, c, v);
        case kernel::TileId::kNarrow:
          return visit_either<typename T::Narrow, typename NarrowElementwiseOf<T>::type>(d, c, v);
        case kernel::TileId::kNarrowSliced:  // narrow_tile_by_split: its kinds, vector gathers
          if constexpr (!std::is_void_v<typename T::NarrowSliced>)
            return visit_geometry<typename T::NarrowSliced, true, kSmallGridBuild>(d, c, v);
          break;
        case kernel::TileId::kWide:
          return visit_either<typename T::Wide, typename T::WideElementwise>(d, c, v);
        case kernel::TileId::kWideFewRounds:  // the round rule gives it to vector gathers only
          if constexpr (!std::is_void_v<typename T::WideFewRounds>)
            return visit_geometry<typename T::WideFewRounds, true>(d, c, v);
          break;
        case kernel::TileId::kWideSmallGrid:  // the small-grid rule: its kinds, vector gathers
          if constexpr (!std::is_void_v<typename T::WideSmallGrid>)
            return visit_geometry<typename T::WideSmallGrid, true, kSmallGridBuild>(d, c, v);
          break;
        case kernel::TileId::kWideCout192:  // only the kernels takes_wide_cout192 can choose
          if constexpr (!std::is_void_v<typename T::WideCout192>) {
            if (!kernel::takes_wide_cout192(d, c.upsample_phases))
              return Status(StatusCode::kUnsupported,
                            "the 192-wide tile runs only the causal (cached or not) and downsample "
                            "convs, and the e4m3 upsample phases, whose Cout is a multiple of 192 "
                            "(kernel::takes_wide_cout192)");
            constexpr unsigned kBuild =
                kBuildCausal | kBuildCached | kBuildDownsample |
                (kType == DType::kFP8E4M3 ? unsigned(kBuildUpsamplePhases) : 0u);
            // The tail rule's two launches (choose_kernel sets tail_begin only where the table
            // has a tail tile): the head over pixels [0, tail_begin) of every frame, the tail
            // tile over the rest.
            using Tail = typename WideCout192TailOf<T>::type;
            if constexpr (!std::is_void_v<Tail>) {
              if (c.tail_begin > 0) {
                VAECONV_RETURN_IF_ERROR((visit_geometry<typename T::WideCout192, true, kBuild>(
                    d, c, v, kernel::LaunchPart{-1, 0, c.tail_begin})));
                return visit_geometry<Tail, true, kBuild>(
                    d, c, v, kernel::LaunchPart{-1, c.tail_begin, 0});
              }
            }
            return visit_geometry<typename T::WideCout192, true, kBuild>(d, c, v);
          }
          break;
        case kernel::TileId::kWideCausal:  // only the kernels takes_wide_causal can choose
          if constexpr (!std::is_void_v<typename T::WideCausal>) {
            if (!kernel::takes_wide_causal(d))
              return Status(StatusCode::kUnsupported,
                            "the causal tile runs only the causal convs, cached or not "
                            "(kernel::takes_wide_causal)");
            return visit_geometry<typename T::WideCausal, true, kBuildCausal | kBuildCached>(
                d, c, v);
          }
          break;
      }
      break;
  }
  return Status(StatusCode::kUnsupported, "no kernel of this build for the chosen family");
}

template <class Tables = kernel::ShippedTiles, class V>
inline Status visit_kernel(const ConvDesc& d, const KernelChoice& c, V& v) {
  if (d.in_dtype == DType::kFP8E4M3) return visit_kernel<Tables, DType::kFP8E4M3>(d, c, v);
  return visit_kernel<Tables, DType::kBF16>(d, c, v);
}

// which_kernel's visitor: fills the plan from the instance's compile-time shape and the same
// grid functions the launches use. It never touches a device or a pointer.
struct Planner {
  const ConvDesc& d;
  const ConvArgs& a;  // no buffers: only the packed weights' info is read
  KernelPlan* plan;
  // Every phase's grid is the source frame's (apply_upsample_phase): phase 0's, which moves no
  // pointer, stands for all four.
  template <class Kernel>
  Status run(const kernel::LaunchPart& part) {
    using Policy = typename Kernel::PolicyT;
    using Tiling = typename Kernel::Tiling;
    using Geo = typename Kernel::Geometry;
    kernel::ConvParams p;
    KernelPlan& q = *plan;
    kernel::LaunchPart first = part;
    first.phase = part.phase < 0 ? -1 : 0;
    const int64_t tiles = block_grid<Policy, Tiling>(d, a, first, &p);
    q.launches += 1;
    if (part.m_begin > 0) {  // the tail rule's second launch (one per phase where phased)
      q.tail_bm = Policy::BM;
      q.tail_bn = Policy::BN;
      q.tail_tiles = tiles;
      return Status::Ok();
    }
    q.tiles = tiles;
    q.k_tiles = Kernel::k_tiles(p);
    q.dtype = d.in_dtype;
    q.bm = Policy::BM; q.bn = Policy::BN; q.bk = Policy::BK;
    q.warps_m = Policy::kWarpsM; q.warps_n = Policy::kWarpsN; q.stages = Policy::kStages;
    q.lds_stages = Policy::kLdsStages;
    q.min_blocks = Policy::kMinBlocks; q.threads = Policy::kBlockThreads;
    q.slices_k = Policy::kSlicesK;
    q.wave_size = Policy::kWaveSize;
    q.lds_bytes = Kernel::kSmemBytes;
    q.patch_rows = Tiling::kRows;
    q.patch_cols = Tiling::kCols;
    if constexpr (!std::is_void_v<Geo>) {
      q.geo_stride = Geo::kStride; q.geo_pad = Geo::kPad;
      q.geo_up = Geo::kUp; q.geo_taps = Geo::kTaps;
    }
    return Status::Ok();
  }
};

}  // namespace detail

// The kernel conv_forward runs for `d` with weights packed by this version (pack_weights), its
// grid and K tiles: host code, no device call. Refuses what conv_forward's validation of the
// description refuses. tables: the target's table set (kernel/table_set.hpp; AMD: kGfx942 or
// kGfx950, what conv_forward picks from the device's architecture name; NVIDIA: one set, and on
// the mma.sync build the AMD sets' portable twins, kGfx950 and kGfx942Twin).
inline Status which_kernel(const ConvDesc& d, KernelPlan* plan,
                           kernel::TableSet tables = kernel::TableSet::kPrimary) {
  if (plan == nullptr) return Status(StatusCode::kInvalidArgument, "which_kernel: plan is null");
  *plan = KernelPlan{};
  plan->table_set = tables;
  VAECONV_RETURN_IF_ERROR(d.validate());
  if (!detail::is_canonical(d))
    return Status(StatusCode::kUnsupported,
                  "the kernels run the three VAE conv kinds exactly as their ConvDesc factories "
                  "define them (" + d.to_string() + ")");
  ConvArgs a;
  VAECONV_RETURN_IF_ERROR(packed_info_for(d, &a.weights.info));
  detail::Planner planner{d, a, plan};
  return kernel::visit_any_table_set(tables, [&](auto set) {
    using Tables = decltype(set);
    plan->choice = detail::choose_kernel<Tables>(d, a.weights.info);
    return detail::visit_kernel<Tables>(d, plan->choice, planner);
  });
}

}  // namespace vaeconv
