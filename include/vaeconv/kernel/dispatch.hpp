// vaeconv/kernel/dispatch.hpp — the kernel families and, per architecture and operand type, the
// ordered list of candidates a conv is offered to.
//
// A family answers can_implement(desc) (can its kernel run this conv?) and name() (what
// KernelPlan::family() prints). The dispatch walks the candidate list of the build's
// architecture and the conv's operand type and takes the first family that can implement the
// conv; the implicit GEMM, last in every list, takes every conv the kernels accept. Host code,
// tested on the host; api/kernel_plan.hpp's choose_kernel walks the list, visit_kernel maps the
// family to its kernel instance (the policies of kernel/tile_table.hpp).
//
// A new family (a geometry or loader the implicit GEMM's gathers do not cover) is a struct here,
// placed in the lists where it should win, and its kernel instance in visit_kernel.
#pragma once
#include <cstdint>

#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/core/dtype.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv::kernel {

enum class FamilyId : int { kImplicitGemm = 0, kTapReduce = 1, kHalo = 2, kTapRow = 3 };

// The implicit GEMM's tile by Cout (tile_table.hpp's wide, narrow and tiny tiles).
inline TileId choose_tile(int64_t cout) {
  if (cout <= 16) return TileId::kTiny;
  return cout <= 32 ? TileId::kNarrow : TileId::kWide;
}

// Whether a wide-tile conv of the implicit GEMM's 16-byte gather takes the table's 192-wide tile
// (tile_table.hpp's WideCout192, where the table of its operand type has one): a conv whose every
// launch's Cout (out_channels_stored: one phase or half) is a multiple of 192, so the tile computes
// no padding column (a 96-channel layer would pad half of it), of the geometries a GPU has
// checked against the reference and timed on it, none slower than on the 96-wide tile
// (docs/performance.md, docs/video.md, docs/perf-notes.md): the causal conv, with a
// cache or without (T = 1 and T > 1), and the downsample conv, bf16 and e4m3; the upsample phases
// in e4m3 (bf16 timed neutral there). The temporal convs keep the 96-wide tile (checked on it, not
// timed: their K is 3 Cin, a short loop for a one-block-per-SM tile), and the kernels the rule
// never chooses are not built. The gfx950 table's 192-wide tile follows the same rule (the CDNA
// model finds it faster on those convs and slower on no chosen one; the bf16 upsample phases
// would gain there too, but a second rule per target is not worth their one call).
inline bool takes_wide_cout192(const ConvDesc& d, bool upsample_phases) {
  if (d.out_channels_stored() % 192 != 0) return false;
  if (d.kind == ConvKind::kCausal3x3x3 || d.kind == ConvKind::kDownsample) return true;
  return upsample_phases && d.in_dtype == DType::kFP8E4M3;
}

// Whether a wide-tile conv of the implicit GEMM's 16-byte gather that takes_wide_cout192 leaves
// takes the table's causal tile (tile_table.hpp's WideCausal, where the table of its operand type
// has one: sm_90a bf16): the causal conv, with a cache or without (T = 1 and T > 1), the
// geometries a GPU has checked against the reference and timed on that tile, faster than on the
// wide tile on the 96-channel cached conv (docs/video.md). The downsample conv and the upsample
// phases keep the wide tile (slower on the causal tile), and so do the temporal convs (not timed
// on it); the kernels the rule never chooses are not built.
inline bool takes_wide_causal(const ConvDesc& d) { return d.kind == ConvKind::kCausal3x3x3; }

// The conv kinds the small-grid rule (tile_rounds.hpp) may give a table's small-grid tile: all
// but the temporal convs, which keep the wide tile as they do on sm_90a's 192-wide rule (and
// gfx950's e4m3 temporal kernel on the small-grid tile would hold one wave per SIMD: the
// resource report's floor is two).
inline bool small_grid_takes_kind(ConvKind k) { return k != ConvKind::kTemporal; }

// The tap-reduce kernel (tap_reduce_kernel.hpp): causal convs with Cout <= 3 whose Cin fills
// whole 16-byte chunks.
struct TapReduceFamily {
  static constexpr FamilyId kId = FamilyId::kTapReduce;
  static constexpr const char* name() { return "tap_reduce"; }
  static bool can_implement(const ConvDesc& d) {
    return d.kind == ConvKind::kCausal3x3x3 && d.cache_frames == 0 &&
           d.cout <= kTapReduceMaxCout &&
           d.cin % (16 / int64_t(size_of(d.in_dtype))) == 0;
  }
};

// The halo kernel (halo_conv_kernel.hpp, the wgmma atom): the causal T = 1 convs of the wide tile
// whose Cin is a multiple of the atom's K step (bf16 16, e4m3 32) and at most kMaxCin, the
// channels its halo holds (96 for both operand types as shipped; a sweep's table may hold more
// or fewer).
template <int kMaxCin>
struct HaloFamilyOf {
  static constexpr FamilyId kId = FamilyId::kHalo;
  static constexpr const char* name() { return "halo"; }
  static bool can_implement(const ConvDesc& d) {
    const int64_t k_step = 32 / int64_t(size_of(d.in_dtype));  // the wgmma K step: 32 bytes
    return d.kind == ConvKind::kCausal3x3x3 && d.t == 1 && d.cache_frames == 0 &&
           d.cin % k_step == 0 &&
           d.cin <= kMaxCin && choose_tile(d.cout) == TileId::kWide;
  }
};

// The tap-row kernel (tap_row_conv_kernel.hpp: the wgmma atom; tap_row_fragment_kernel.hpp:
// MFMA and mma.sync): the causal T = 1 convs with Cin = 3 (the tap-row halo's kCin) of the wide
// tile.
static_assert(TapRowBf16::kCin == TapRowFp8::kCin &&
                  cdna::TapRowFragmentHaloBf16::kCin == TapRowBf16::kCin &&
                  cdna::TapRowFragmentHaloFp8::kCin == TapRowBf16::kCin,
              "one Cin for both operand types and every build");
struct TapRowFamily {
  static constexpr FamilyId kId = FamilyId::kTapRow;
  static constexpr const char* name() { return "tap_row"; }
  static bool can_implement(const ConvDesc& d) {
    return d.kind == ConvKind::kCausal3x3x3 && d.t == 1 && d.cache_frames == 0 &&
           d.cin == TapRowBf16::kCin &&
           choose_tile(d.cout) == TileId::kWide;
  }
};

// The implicit GEMM (conv_kernel.hpp): every conv the kernels accept; the tile by Cout
// (choose_tile), the 16-byte gather when Cin fills whole 16-byte chunks (a chunk never straddles
// a tap), else the element-wise one.
struct ImplicitGemmFamily {
  static constexpr FamilyId kId = FamilyId::kImplicitGemm;
  static constexpr const char* name() { return "implicit_gemm"; }
  static bool can_implement(const ConvDesc&) { return true; }
  static bool vector_gather(const ConvDesc& d) {
    return d.cin % (16 / int64_t(size_of(d.in_dtype))) == 0;
  }
};

template <class... Families>
struct CandidateList {};

// The candidate lists, first match wins. Where the wide tile is the wgmma atom (NVIDIA sm_90a)
// the halo and tap-row kernels are built and come before the implicit GEMM. On the other GPU
// builds (AMD; NVIDIA mma.sync) the tap-row kernel on fragment atoms (tap_row_fragment_kernel.hpp)
// is in both lists, and the bf16 list has the halo kernel on fragment atoms
// (halo_fragment_kernel.hpp) in the table sets that build it (NVIDIA mma.sync's own set;
// gfx950's, on AMD and as its portable twin). kHaloMaxCin: the halo family's cap (the table's
// kHaloMaxCin; 0 where the set has no halo kernel, e.g. gfx942's). A build without a GPU
// compiler (host tools) plans with the tap-reduce kernel and the implicit GEMM.
#if defined(VAECONV_WIDE_WGMMA) || defined(VAECONV_BACKEND_CUDA) || defined(VAECONV_BACKEND_HIP)
constexpr bool kTapRowKernel = true;  // the lists below hold TapRowFamily
#else
constexpr bool kTapRowKernel = false;
#endif
template <DType kType, int kHaloMaxCin>
struct Candidates {
#if defined(VAECONV_WIDE_WGMMA)
  using List =
      CandidateList<TapReduceFamily, HaloFamilyOf<kHaloMaxCin>, TapRowFamily, ImplicitGemmFamily>;
#elif defined(VAECONV_BACKEND_CUDA) || defined(VAECONV_BACKEND_HIP)
  using List = CandidateList<TapReduceFamily, TapRowFamily, ImplicitGemmFamily>;
#else
  using List = CandidateList<TapReduceFamily, ImplicitGemmFamily>;
#endif
};
#if !defined(VAECONV_WIDE_WGMMA) && (defined(VAECONV_BACKEND_CUDA) || defined(VAECONV_BACKEND_HIP))
template <int kHaloMaxCin>
struct Candidates<DType::kBF16, kHaloMaxCin> {
  using List = CandidateList<TapReduceFamily, HaloFamilyOf<kHaloMaxCin>, TapRowFamily,
                             ImplicitGemmFamily>;
};
#endif

// The first family of a list that can implement d.
template <class... Families>
inline FamilyId first_candidate(const ConvDesc& d, CandidateList<Families...>) {
  FamilyId id = FamilyId::kImplicitGemm;
  (void)((Families::can_implement(d) && (id = Families::kId, true)) || ...);  // first match
  return id;
}
template <class... Families>
inline const char* family_name(FamilyId id, CandidateList<Families...>) {
  const char* name = "?";
  (void)((Families::kId == id && (name = Families::name(), true)) || ...);
  return name;
}

// Which family the shipped lists give d in the build's primary table set (host tests;
// api/kernel_plan.hpp walks a table set's list).
inline FamilyId shipped_family(const ConvDesc& d) {
  if (d.in_dtype == DType::kFP8E4M3)
    return first_candidate(
        d, typename Candidates<DType::kFP8E4M3, HaloFp8::kMaxCin>::List{});
  return first_candidate(d, typename Candidates<DType::kBF16, kPrimaryHaloMaxCinBf16>::List{});
}

// The families' rules under the names the host tests use: whether the shipped dispatch sends d
// to that family on this build.
inline bool use_tap_reduce(const ConvDesc& d) { return shipped_family(d) == FamilyId::kTapReduce; }
inline bool use_halo_kernel(const ConvDesc& d) { return shipped_family(d) == FamilyId::kHalo; }
inline bool use_tap_row_kernel(const ConvDesc& d) { return shipped_family(d) == FamilyId::kTapRow; }

}  // namespace vaeconv::kernel
