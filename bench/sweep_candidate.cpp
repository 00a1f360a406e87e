// sweep_candidate.cpp — a tuning sweep's candidate policy, compiled into the bench alone.
//
// bench/sweep.sh configures a build whose cache variable VAECONV_SWEEP_CANDIDATE holds this
// translation unit's definitions (bench/CMakeLists.txt gives them to this file and no other):
//   VAECONV_CANDIDATE_{BM,BN,BK,WM,WN,ST,MB}  the kernel::TileShape: BM x BN x BK, warpsM x warpsN,
//                               stages, min blocks (separate macros: nvcc splits -D values at
//                               commas)
//   VAECONV_CANDIDATE_ROLE      the table entry it replaces (Role below)
//   VAECONV_CANDIDATE_MMA       1: a wide candidate on the fragment atom (mma.sync), not wgmma
//   VAECONV_CANDIDATE_WS        N > 0: the shape warp-specialized with N bytes of epilogue staging
//                               (kernel::WarpSpecializedTileShape; wgmma wide candidates)
//   VAECONV_CANDIDATE_PW, _PR   its producer warpgroups and their registers (0: no split)
//   VAECONV_CANDIDATE_SLICES    N >= 2: the shape sliced over K into N groups of warps
//                               (kernel::SlicedKTileShape; the narrow sliced-K candidates)
//   VAECONV_CANDIDATE_HALO_CIN  the channels a halo candidate's halo holds (default 96); the
//                               dispatch then sends it every T = 1 causal Cin up to that
//   VAECONV_CANDIDATE_L1        1: a wide, 192-wide, narrow-wgmma or tail candidate's copies
//                               allocate in L1 as well as L2 (cp.async.ca; NVIDIA only), through
//                               L1CachingArch below, an overlay of the bench, not the library
// The library and its headers stay the shipped ones: the candidate is a type, CandidateTiles (the
// shipped kernel::Tiles with that entry replaced), and the bench's timed conv runs the library's
// dispatch over it (conv_forward_with, bench_conv_entry.hpp). Patches of the halo-policy kernels
// are BM / 8 rows of 8 pixels, the tap-reduce halo BM / 16 rows of 16.
#include <type_traits>

#include "bench_conv_entry.hpp"
#include "vaeconv/api/conv.hpp"

#if !defined(VAECONV_CANDIDATE_BM) || !defined(VAECONV_CANDIDATE_ROLE)
#error "a sweep candidate needs VAECONV_CANDIDATE_{BM,BN,BK,WM,WN,ST,MB} and _ROLE (bench/sweep.sh)"
#endif
#if !defined(VAECONV_CANDIDATE_MMA)
#define VAECONV_CANDIDATE_MMA 0
#endif
#if !defined(VAECONV_CANDIDATE_PW)
#define VAECONV_CANDIDATE_PW 1
#endif
#if !defined(VAECONV_CANDIDATE_PR)
#define VAECONV_CANDIDATE_PR 0
#endif
#if !defined(VAECONV_CANDIDATE_WS)
#define VAECONV_CANDIDATE_WS 0
#endif
#if !defined(VAECONV_CANDIDATE_SLICES)
#define VAECONV_CANDIDATE_SLICES 1
#endif
#if !defined(VAECONV_CANDIDATE_HALO_CIN)
#define VAECONV_CANDIDATE_HALO_CIN 96
#endif
#if !defined(VAECONV_CANDIDATE_L1)
#define VAECONV_CANDIDATE_L1 0
#endif

namespace vaeconv::bench {
namespace {

using namespace vaeconv::kernel;
template <bool kUse, class Candidate, class Shipped>
using Pick = std::conditional_t<kUse, Candidate, Shipped>;

enum class Role : int {  // bench/sweep.sh's flags: (none), fp8, tr, el, el8, halo, hf8, trw, c192,
                         // nsN, nw, tail
  kWideBf16 = 0, kWideFp8 = 1, kTapReduceBf16 = 2, kElementwiseBf16 = 3, kElementwiseFp8 = 4,
  kHaloBf16 = 5, kHaloFp8 = 6, kTapRowBf16 = 7, kWideCout192Bf16 = 8, kWideCout192Fp8 = 9,
  kNarrowSlicedBf16 = 10, kNarrowSlicedFp8 = 11, kNarrowWgmmaBf16 = 12, kTailBf16 = 13,
};
constexpr Role kRole = Role(VAECONV_CANDIDATE_ROLE);
using PlainShape = TileShape<VAECONV_CANDIDATE_BM, VAECONV_CANDIDATE_BN, VAECONV_CANDIDATE_BK,
                             VAECONV_CANDIDATE_WM, VAECONV_CANDIDATE_WN, VAECONV_CANDIDATE_ST,
                             VAECONV_CANDIDATE_MB>;
constexpr int kStagingWs = VAECONV_CANDIDATE_WS;
constexpr int kSlices = VAECONV_CANDIDATE_SLICES;
using Shape = Pick<(kStagingWs > 0),
                   WarpSpecializedTileShape<PlainShape, (kStagingWs > 0 ? kStagingWs : 1),
                                            VAECONV_CANDIDATE_PW, VAECONV_CANDIDATE_PR>,
                   Pick<(kSlices > 1), SlicedKTileShape<PlainShape, (kSlices > 1 ? kSlices : 2)>,
                        PlainShape>>;
constexpr int kHaloCin = VAECONV_CANDIDATE_HALO_CIN;

#if VAECONV_CANDIDATE_L1
#if !defined(VAECONV_BACKEND_CUDA)
#error "flag ca (cp.async.ca) is an NVIDIA candidate"
#endif
// The shipped architecture layer with one change: each 16-byte copy is cp.async.ca, which
// allocates the line in L1 too, where the library's .cg caches in L2 only. A conv re-reads its
// A rows at the next kw tap (one tap of K later), which L1 can serve when the rows fit beside the
// tile's LDS; whether that beats the L1 traffic it adds is what the sweep measures.
struct L1CachingArch : Arch {
  template <int N>
  VAECONV_DEVICE static void load(Slot<N>&, int, void* lds_dst, GlobalView v, uint32_t offset,
                                  bool valid) {
#if defined(__CUDA_ARCH__)
    const char* src = v.base + (valid ? offset : 0u);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(lds_dst)),
                 "l"(src), "r"(valid ? 16 : 0));
#else
    (void)lds_dst; (void)v; (void)offset; (void)valid;
#endif
  }
};
using CopyArch = L1CachingArch;
#else
using CopyArch = Arch;
#endif

#if defined(VAECONV_NVIDIA_WGMMA)
constexpr bool kWgmma = !VAECONV_CANDIDATE_MMA;
using WgmmaBf16 = Arch::AtomWgmmaBf16<Shape::WTN>;
using WgmmaFp8 = Arch::AtomWgmmaFp8<Shape::WTN>;
#else
constexpr bool kWgmma = false;
using WgmmaBf16 = Arch::AtomBf16;
using WgmmaFp8 = Arch::AtomFp8;
#endif
using WideBf16 = TilePolicy<Shape, CopyArch, Pick<kWgmma, WgmmaBf16, Arch::AtomBf16>>;
using WideFp8 = TilePolicy<Shape, CopyArch, Pick<kWgmma, WgmmaFp8, Arch::AtomFp8>>;

template <DType kType>
struct CandidateTable;
template <>
struct CandidateTable<DType::kBF16> : Tiles<DType::kBF16> {
  using Shipped = Tiles<DType::kBF16>;
  using Wide = Pick<kRole == Role::kWideBf16, WideBf16, Shipped::Wide>;
  // A wide candidate takes every wide vector row, the Cout % 192 == 0 ones too; a c192 one only
  // those (sm_90a).
  using WideCout192 =
      Pick<kRole == Role::kWideCout192Bf16, WideBf16,
           Pick<kRole == Role::kWideBf16, void, Shipped::WideCout192>>;
  // The causal tile's rows (sm_90a) go to a wide candidate too.
  using WideCausal = Pick<kRole == Role::kWideBf16, void, Shipped::WideCausal>;
  using WideElementwise = Pick<kRole == Role::kElementwiseBf16,
                               TilePolicy<Shape, Arch, Arch::AtomBf16>, Shipped::WideElementwise>;
  using TapReduce = Pick<kRole == Role::kTapReduceBf16, TilePolicy<Shape, Arch, Arch::AtomBf16>,
                         Shipped::TapReduce>;
  // The narrow tile's sliced-K form (void in the NVIDIA tables: an ns candidate adds one). An nw
  // candidate: the narrow tile on the wgmma atom (sm_90a's shipped narrow tile is one), which
  // takes every narrow conv of the 16-byte gather (the sliced-K form off).
  using NarrowSliced = Pick<kRole == Role::kNarrowSlicedBf16,
                            TilePolicy<Shape, Arch, Arch::AtomBf16>,
                            Pick<kRole == Role::kNarrowWgmmaBf16, void, Shipped::NarrowSliced>>;
  using Narrow = Pick<kRole == Role::kNarrowWgmmaBf16, WideBf16, Shipped::Narrow>;
#if defined(VAECONV_NVIDIA_WGMMA)
  // A tail candidate: the tail rule's tile behind the 192-wide one (kernel/tail_split.hpp), on the
  // wgmma atom, or sliced over K (nsN) on the mma.sync atom, whose gather the sliced kernel takes.
  using WideCout192Tail =
      Pick<kRole == Role::kTailBf16,
           Pick<(kSlices > 1), TilePolicy<Shape, Arch, Arch::AtomBf16>, WideBf16>,
           Shipped::WideCout192Tail>;
  using Halo = Pick<kRole == Role::kHaloBf16,
                    HaloPolicy<TilePolicy<Shape, Arch, WgmmaBf16, kBulkStoreHaloBf16>,
                               HaloTile<Shape::BM / 8, 8, kHaloCin, 2>>,
                    Shipped::Halo>;
  static constexpr int kHaloMaxCin = kRole == Role::kHaloBf16 ? kHaloCin : Shipped::kHaloMaxCin;
  using TapRow = Pick<kRole == Role::kTapRowBf16,
                      HaloPolicy<TilePolicy<Shape, Arch, WgmmaBf16>, TapRowHalo<Shape::BM / 8, 2>>,
                      Shipped::TapRow>;
#endif
};
template <>
struct CandidateTable<DType::kFP8E4M3> : Tiles<DType::kFP8E4M3> {
  using Shipped = Tiles<DType::kFP8E4M3>;
  using Wide = Pick<kRole == Role::kWideFp8, WideFp8, Shipped::Wide>;
  using WideCout192 = Pick<kRole == Role::kWideCout192Fp8, WideFp8, Shipped::WideCout192>;
  using WideElementwise = Pick<kRole == Role::kElementwiseFp8,
                               TilePolicy<Shape, Arch, Arch::AtomFp8>, Shipped::WideElementwise>;
  using NarrowSliced = Pick<kRole == Role::kNarrowSlicedFp8,
                            TilePolicy<Shape, Arch, Arch::AtomFp8>, Shipped::NarrowSliced>;
#if defined(VAECONV_NVIDIA_WGMMA)
  using Halo = Pick<kRole == Role::kHaloFp8,
                    HaloPolicy<TilePolicy<Shape, Arch, WgmmaFp8>, HaloTile<Shape::BM / 8, 8, 96, 1>>,
                    Shipped::Halo>;
#endif
};
struct CandidateTiles {
  template <DType kType>
  using For = CandidateTable<kType>;
};

}  // namespace

Status candidate_conv_forward(const ConvDesc& desc, const ConvArgs& args, void* stream) {
  return conv_forward_with<CandidateTiles>(desc, args, static_cast<hipStream_t>(stream));
}

}  // namespace vaeconv::bench
