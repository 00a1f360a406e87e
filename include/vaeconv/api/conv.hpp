// vaeconv/api/conv.hpp — run a conv on a stream (header-only; needs a HIP or CUDA compiler).
//
//   vaeconv::ConvDesc d = vaeconv::ConvDesc::causal3x3x3(1, 1, 128, 128, 384, 384);
//   vaeconv::DeviceWeights w;  w.upload(packed, stream);          // once
//   vaeconv::ConvArgs a{x, w.view(), bias, /*residual=*/nullptr, y};
//   vaeconv::Status s = vaeconv::conv_forward(d, a, stream);      // every call
//
// conv_forward validates (validate_for_kernels), picks the kernel and tile (use_tap_reduce,
// use_halo_kernel, use_tap_row_kernel, choose_tile) and launches. It allocates nothing, never
// synchronizes, and keeps no state: it is safe from several host threads.
#pragma once
#include <cstdint>
#include <string>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/launch_limits.hpp"
#include "vaeconv/kernel/conv_kernel.hpp"
#include "vaeconv/kernel/halo_conv_kernel.hpp"
#include "vaeconv/kernel/tap_reduce_kernel.hpp"
#include "vaeconv/kernel/tap_row_conv_kernel.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv {
namespace detail {

// Launches one kernel instance with its LDS; no static state is kept so threads stay safe.
// persistent: the kernel loops over its grid's tiles, so the grid is cut to the blocks that are
// resident at once (the device's multiprocessors times the kernel's occupancy, both asked of the
// runtime per call: host queries, no device synchronization).
template <class Policy, int kSmemBytes, class Fn>
inline Status launch(Fn* fn, dim3 grid, const kernel::ConvParams& p, hipStream_t stream,
                     bool persistent = false) {
  constexpr bool kDynamic = !Policy::ArchT::kStaticLds;
  constexpr int kDynamicBytes = kDynamic ? kSmemBytes : 0;
  const auto failed = [](const char* what, hipError_t e) {
    return Status(StatusCode::kRuntimeError, std::string(what) + hipGetErrorString(e));
  };
  if constexpr (kDynamic && kSmemBytes > 48 * 1024) {
    // Raising the limit is idempotent and cheap.
    hipError_t e = hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                       hipFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    if (e != hipSuccess) return failed("", e);
  }
  if (persistent) {
    int device = 0, sms = 0, per_sm = 0;
    hipError_t e = hipGetDevice(&device);
    if (e == hipSuccess)
      e = hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, device);
    if (e == hipSuccess)
      e = hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, Policy::kThreads,
                                                       kDynamicBytes);
    if (e != hipSuccess) return failed("occupancy query failed: ", e);
    const int64_t resident = int64_t(sms) * per_sm;
    if (resident > 0 && resident < int64_t(grid.x)) grid.x = unsigned(resident);
    if (grid.x > kMaxPersistentGrid) grid.x = kMaxPersistentGrid;  // see launch_tile
  }
  fn<<<grid, dim3(Policy::kThreads, 1, 1), kDynamicBytes, stream>>>(p);
  const hipError_t e = hipGetLastError();
  if (e != hipSuccess) return failed("launch failed: ", e);
  return Status::Ok();
}

// The conv kernel: one tile per block, or a persistent grid when the kernel overlaps a tile's
// epilogue with the next tile's copies (ConvKernel::kOverlapEpilogue). Limits: launch_limits.hpp.
// phase >= 0: that output phase of an upsample conv packed in phases (apply_upsample_phase).
template <class Policy, class Geo, bool kVector>
inline Status launch_tile(const ConvDesc& d, const ConvArgs& a, hipStream_t stream,
                          int phase = -1) {
  using Kernel = kernel::ConvKernel<Policy, Geo, kVector>;
  kernel::ConvParams p = make_params(d, a, Policy::BM, Policy::BN);
  if (phase >= 0) apply_upsample_phase(d, a.weights.info, phase, Policy::BM, &p);
  const int64_t tiles = int64_t(p.m_blocks) * p.n_tiles * int64_t(d.n * d.out_t());
  const std::string what = " block tiles of " + std::to_string(Policy::BM) + " pixels x " +
                           std::to_string(Policy::BN) + " channels";
  VAECONV_RETURN_IF_ERROR(check_tile_grid(tiles, Policy::kThreads, Kernel::kOverlapEpilogue, what));
  p.tiles = int(tiles);
  return launch<Policy, Kernel::kSmemBytes>(&kernel::conv_kernel<Policy, Geo, kVector>,
                                            dim3(unsigned(tiles), 1, 1), p, stream,
                                            Kernel::kOverlapEpilogue);
}

// The tap-reduce kernel: one block per output patch of a frame, or a persistent grid
// (kernel::kTapReducePersistent, tap_reduce_kernel.hpp).
template <class Policy>
inline Status launch_tap_reduce(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  using Patch = kernel::TapReduceHalo<Policy::BM>;
  constexpr bool kPersistent = kernel::kTapReducePersistent;
  using Kernel = kernel::TapReduceKernel<Policy, Patch, kPersistent>;
  static_assert(Kernel::kMaxCout >= kernel::kTapReduceMaxCout,
                "the tile holds the nine taps of every Cout that use_tap_reduce() sends to it");
  kernel::ConvParams p = make_params(d, a, Policy::BM, Policy::BN);
  p.patch_cols = Patch::patches(p.wo, Patch::kOutCols);
  p.m_blocks = Patch::patches(p.ho, Patch::kOutRows) * p.patch_cols;
  p.n_tiles = 1;
  const int64_t tiles = int64_t(p.m_blocks) * int64_t(d.n * d.out_t());
  VAECONV_RETURN_IF_ERROR(check_tile_grid(tiles, Policy::kThreads, kPersistent, " tap-reduce patches"));
  p.tiles = int(tiles);
  return launch<Policy, Kernel::kSmemBytes>(&kernel::tap_reduce_kernel<Policy, Patch, kPersistent>,
                                            dim3(unsigned(tiles), 1, 1), p, stream, kPersistent);
}

// The halo kernels (halo_conv_kernel.hpp, tap_row_conv_kernel.hpp): one block per (output patch,
// Cout tile) of a frame.
template <class Policy, class Kernel, class Fn>
inline Status launch_patches(Fn* fn, const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  using Halo = typename Policy::Halo;
  kernel::ConvParams p = make_params(d, a, Policy::BM, Policy::BN);
  p.patch_cols = int((p.wo + Halo::kCols - 1) / Halo::kCols);
  p.m_blocks = int((p.ho + Halo::kRows - 1) / Halo::kRows) * p.patch_cols;  // patches per frame
  const int64_t tiles = int64_t(p.m_blocks) * p.n_tiles * int64_t(d.n * d.out_t());
  VAECONV_RETURN_IF_ERROR(
      check_tile_grid(tiles, Policy::kThreads, /*persistent=*/false, " halo tiles"));
  p.tiles = int(tiles);
  return launch<Policy, Kernel::kSmemBytes>(fn, dim3(unsigned(tiles), 1, 1), p, stream);
}
template <class Policy>
inline Status launch_halo(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  return launch_patches<Policy, kernel::HaloConvKernel<Policy>>(&kernel::halo_conv_kernel<Policy>,
                                                                d, a, stream);
}
template <class Policy>
inline Status launch_tap_row(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  return launch_patches<Policy, kernel::TapRowConvKernel<Policy>>(
      &kernel::tap_row_conv_kernel<Policy>, d, a, stream);
}

// kVector: 16-byte chunks never straddle a tap when Cin is a multiple of a chunk's elements;
// otherwise the element-wise gather.
template <class Policy, bool kVector>
inline Status launch_policy(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  switch (d.kind) {
    case ConvKind::kCausal3x3x3:
      return launch_tile<Policy, kernel::CausalGeometry, kVector>(d, a, stream);
    case ConvKind::kDownsample:
      return launch_tile<Policy, kernel::DownsampleGeometry, kVector>(d, a, stream);
    case ConvKind::kUpsample:
      if constexpr (kUpsamplePhasesBuilt) {
        if (a.weights.info.phases == kUpsamplePhases) {  // upsample_phases.hpp: four 2 x 2 convs
          for (int phase = 0; phase < kUpsamplePhases; ++phase)
            VAECONV_RETURN_IF_ERROR(
                (launch_tile<Policy, kernel::UpsamplePhaseGeometry, kVector>(d, a, stream, phase)));
          return Status::Ok();
        }
      }
      return launch_tile<Policy, kernel::UpsampleGeometry, kVector>(d, a, stream);
  }
  return Status(StatusCode::kUnsupported, "unknown conv kind");
}

template <class Policy, class ElementPolicy = Policy>
inline Status launch_either(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  if (d.cin % Policy::kChunkElems == 0) return launch_policy<Policy, true>(d, a, stream);
  return launch_policy<ElementPolicy, false>(d, a, stream);
}

template <DType kType>
inline Status launch_type(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  using T = kernel::Tiles<kType>;
  if (kernel::use_tap_reduce(d)) return launch_tap_reduce<typename T::TapReduce>(d, a, stream);
  if constexpr (kernel::kHaloKernel) {
    if (kernel::use_halo_kernel(d)) return launch_halo<typename T::Halo>(d, a, stream);
    if (kernel::use_tap_row_kernel(d)) return launch_tap_row<typename T::TapRow>(d, a, stream);
  }
  switch (kernel::choose_tile(d.cout)) {
    case kernel::TileId::kTiny: return launch_either<typename T::Tiny>(d, a, stream);
    case kernel::TileId::kNarrow: return launch_either<typename T::Narrow>(d, a, stream);
    case kernel::TileId::kWide:
      return launch_either<typename T::Wide, typename T::WideElementwise>(d, a, stream);
  }
  return Status(StatusCode::kUnsupported, "no tile");
}

}  // namespace detail

inline Status conv_forward(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  VAECONV_RETURN_IF_ERROR(validate_for_kernels(d, a));
  if (d.in_dtype == DType::kFP8E4M3) return detail::launch_type<DType::kFP8E4M3>(d, a, stream);
  return detail::launch_type<DType::kBF16>(d, a, stream);
}

}  // namespace vaeconv
