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

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/upsample_phases.hpp"
#include "vaeconv/kernel/conv_kernel.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/halo_conv_kernel.hpp"
#include "vaeconv/kernel/tap_reduce_kernel.hpp"
#include "vaeconv/kernel/tap_row_conv_kernel.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv {

// Which kernel conv_forward runs for a conv: the dispatch rule's answer (detail::choose_kernel),
// before any template is picked.
struct KernelChoice {
  // The families of kernel/dispatch.hpp (kernel::FamilyId, same values).
  enum class Family : int { kImplicitGemm = 0, kTapReduce = 1, kHalo = 2, kTapRow = 3 };
  Family family = Family::kImplicitGemm;
  kernel::TileId tile = kernel::TileId::kWide;  // the implicit GEMM's tile
  bool vector = true;            // the implicit GEMM's 16-byte gather (else element-wise)
  bool upsample_phases = false;  // an upsample conv as four 2 x 2 phase launches
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
  int threads = 0, wave_size = 0;  // per block; lanes of one atom group
  // Geometry<stride, pad, up, taps> of the implicit GEMM's gather; all 0 for the other families.
  int geo_stride = 0, geo_pad = 0, geo_up = 0, geo_taps = 0;
  int launches = 0;     // kernel launches per conv (4 for an upsample conv in phases)
  int64_t tiles = 0;    // blocks per launch (before a persistent launch cuts the grid)
  int k_tiles = 0;      // main-loop K tiles per block
  int lds_bytes = 0;    // LDS / shared memory per block
  int patch_rows = 0, patch_cols = 0;  // the output patch of the tap-reduce and halo kernels
  std::string family() const {  // the family's name() (kernel/dispatch.hpp)
    using namespace kernel;
    return family_name(FamilyId(choice.family),
                       CandidateList<ImplicitGemmFamily, TapReduceFamily, HaloFamilyOf<0>,
                                     TapRowFamily>{});
  }
  // e.g. "implicit_gemm bf16 128x96x32 w4x1 s2 causal vector"
  std::string name() const {
    std::string s = family() + (dtype == DType::kFP8E4M3 ? " fp8 " : " bf16 ") +
                    std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) +
                    " w" + std::to_string(warps_m) + "x" + std::to_string(warps_n) + " s" +
                    std::to_string(stages);
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

// The grids of the kernel families (shared by the launches and which_kernel's plan): the block
// tiles of one launch; *p is the kernel's parameters.
template <class Policy>
inline int64_t tile_grid(const ConvDesc& d, const ConvArgs& a, int phase, kernel::ConvParams* p) {
  *p = make_params(d, a, Policy::BM, Policy::BN);
  if (phase >= 0) apply_upsample_phase(d, a.weights.info, phase, Policy::BM, p);
  return int64_t(p->m_blocks) * p->n_tiles * int64_t(d.n * d.out_t());
}
template <class Policy>
inline int64_t tap_reduce_grid(const ConvDesc& d, const ConvArgs& a, kernel::ConvParams* p) {
  using Patch = kernel::TapReduceHalo<Policy::BM>;
  *p = make_params(d, a, Policy::BM, Policy::BN);
  p->patch_cols = Patch::patches(p->wo, Patch::kOutCols);
  p->m_blocks = Patch::patches(p->ho, Patch::kOutRows) * p->patch_cols;
  p->n_tiles = 1;
  return int64_t(p->m_blocks) * int64_t(d.n * d.out_t());
}
template <class Policy>
inline int64_t patch_grid(const ConvDesc& d, const ConvArgs& a, kernel::ConvParams* p) {
  using Halo = typename Policy::Halo;
  *p = make_params(d, a, Policy::BM, Policy::BN);
  p->patch_cols = int((p->wo + Halo::kCols - 1) / Halo::kCols);
  p->m_blocks = int((p->ho + Halo::kRows - 1) / Halo::kRows) * p->patch_cols;  // patches per frame
  return int64_t(p->m_blocks) * p->n_tiles * int64_t(d.n * d.out_t());
}

// The dispatch, in one place: conv_forward launches and which_kernel reports its answer, the
// first family of the candidate list (kernel/dispatch.hpp) that can implement the conv; for the
// implicit GEMM its tile, its gather, and the upsample conv in phases (upsample_phases.hpp).
// Tables: the table set whose policies run (kernel::ShippedTiles, or a sweep's): its
// kHaloMaxCin caps the halo family.
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
  if (c.family == KernelChoice::Family::kImplicitGemm) {
    c.tile = kernel::choose_tile(d.cout);
    c.vector = kernel::ImplicitGemmFamily::vector_gather(d);
    c.upsample_phases = d.kind == ConvKind::kUpsample && w.phases == kUpsamplePhases;
  }
  return c;
}

// Calls the visitor with the kernel instance of a choice: v.tap_reduce<Policy>(),
// v.halo<Policy>(), v.tap_row<Policy>(), or v.tile<Policy, Geometry, kVector>(phase) once per
// launch (phase -1 unless the upsample conv runs in phases).
template <class Policy, bool kVector, class V>
inline Status visit_geometry(const ConvDesc& d, const KernelChoice& c, V& v) {
  static_assert(Policy::kChunkElems == 16 / Policy::kElemBytes, "choose_kernel's chunk");
  switch (d.kind) {
    case ConvKind::kCausal3x3x3:
      return v.template tile<Policy, kernel::CausalGeometry, kVector>(-1);
    case ConvKind::kDownsample:
      return v.template tile<Policy, kernel::DownsampleGeometry, kVector>(-1);
    case ConvKind::kUpsample:
      // Only the four 2 x 2 phase convs are built (upsample_phases.hpp); validate_for_kernels
      // refuses weights packed in the direct form.
      if (!c.upsample_phases)
        return Status(StatusCode::kInvalidArgument,
                      "upsample weights packed in the direct form: the kernels run the upsample "
                      "conv in phases (pack_weights packs it so)");
      for (int phase = 0; phase < kUpsamplePhases; ++phase)
        VAECONV_RETURN_IF_ERROR(
            (v.template tile<Policy, kernel::UpsamplePhaseGeometry, kVector>(phase)));
      return Status::Ok();
  }
  return Status(StatusCode::kUnsupported, "unknown conv kind");
}

template <class Policy, class ElementPolicy = Policy, class V>
inline Status visit_either(const ConvDesc& d, const KernelChoice& c, V& v) {
  if (c.vector) return visit_geometry<Policy, true>(d, c, v);
  return visit_geometry<ElementPolicy, false>(d, c, v);
}

template <class Tables, DType kType, class V>
inline Status visit_kernel(const ConvDesc& d, const KernelChoice& c, V& v) {
  using T = typename Tables::template For<kType>;
  using F = KernelChoice::Family;
  switch (c.family) {
    case F::kTapReduce: return v.template tap_reduce<typename T::TapReduce>();
    case F::kHalo:
      if constexpr (kernel::kHaloKernel) return v.template halo<typename T::Halo>();
      break;
    case F::kTapRow:
      if constexpr (kernel::kHaloKernel) return v.template tap_row<typename T::TapRow>();
      break;
    case F::kImplicitGemm:
      switch (c.tile) {
        case kernel::TileId::kTiny: return visit_either<typename T::Tiny>(d, c, v);
        case kernel::TileId::kNarrow: return visit_either<typename T::Narrow>(d, c, v);
        case kernel::TileId::kWide:
          return visit_either<typename T::Wide, typename T::WideElementwise>(d, c, v);
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
  template <class Policy, class Kernel>
  void shape(int64_t tiles, int k_tiles) {
    KernelPlan& q = *plan;
    q.dtype = d.in_dtype;
    q.bm = Policy::BM; q.bn = Policy::BN; q.bk = Policy::BK;
    q.warps_m = Policy::kWarpsM; q.warps_n = Policy::kWarpsN; q.stages = Policy::kStages;
    q.min_blocks = Policy::kMinBlocks; q.threads = Policy::kThreads;
    q.wave_size = Policy::kWaveSize;
    q.lds_bytes = Kernel::kSmemBytes;
    q.tiles = tiles;
    q.k_tiles = k_tiles;
    q.launches += 1;
  }
  template <class Policy>
  Status tap_reduce() {
    using Patch = kernel::TapReduceHalo<Policy::BM>;
    kernel::ConvParams p;
    const int64_t tiles = tap_reduce_grid<Policy>(d, a, &p);
    shape<Policy, kernel::TapReduceKernel<Policy, Patch>>(
        tiles, (p.taps_t * p.cin + Policy::BK - 1) / Policy::BK);  // tap_reduce_kernel.hpp
    plan->patch_rows = Patch::kOutRows;
    plan->patch_cols = Patch::kOutCols;
    return Status::Ok();
  }
  template <class Policy, class Kernel>
  Status patches(int k_tiles) {
    kernel::ConvParams p;
    const int64_t tiles = patch_grid<Policy>(d, a, &p);
    shape<Policy, Kernel>(tiles, k_tiles);
    plan->patch_rows = Policy::Halo::kRows;
    plan->patch_cols = Policy::Halo::kCols;
    return Status::Ok();
  }
  template <class Policy>
  Status halo() {
    return patches<Policy, kernel::HaloConvKernel<Policy>>(
        int((a.weights.info.k + Policy::BK - 1) / Policy::BK));  // halo_conv_kernel.hpp
  }
  template <class Policy>
  Status tap_row() {
    return patches<Policy, kernel::TapRowConvKernel<Policy>>(1);  // one block of K steps
  }
  template <class Policy, class Geo, bool kVector>
  Status tile(int phase) {
    // Every phase's grid is the source frame's (apply_upsample_phase): phase 0's, which moves
    // no pointer, stands for all four.
    kernel::ConvParams p;
    const int64_t tiles = tile_grid<Policy>(d, a, phase < 0 ? -1 : 0, &p);
    shape<Policy, kernel::ConvKernel<Policy, Geo, kVector>>(
        tiles, (p.k + Policy::BK - 1) / Policy::BK);  // conv_kernel.hpp
    plan->geo_stride = Geo::kStride; plan->geo_pad = Geo::kPad;
    plan->geo_up = Geo::kUp; plan->geo_taps = Geo::kTaps;
    return Status::Ok();
  }
};

}  // namespace detail

// The kernel conv_forward runs for `d` with weights packed by this version (pack_weights), its
// grid and K tiles: host code, no device call. Refuses what conv_forward's validation of the
// description refuses.
inline Status which_kernel(const ConvDesc& d, KernelPlan* plan) {
  if (plan == nullptr) return Status(StatusCode::kInvalidArgument, "which_kernel: plan is null");
  *plan = KernelPlan{};
  VAECONV_RETURN_IF_ERROR(d.validate());
  if (!detail::is_canonical(d))
    return Status(StatusCode::kUnsupported,
                  "the kernels run the three VAE conv kinds exactly as their ConvDesc factories "
                  "define them (" + d.to_string() + ")");
  ConvArgs a;
  VAECONV_RETURN_IF_ERROR(packed_info_for(d, &a.weights.info));
  plan->choice = detail::choose_kernel(d, a.weights.info);
  detail::Planner planner{d, a, plan};
  return detail::visit_kernel(d, plan->choice, planner);
}

}  // namespace vaeconv
