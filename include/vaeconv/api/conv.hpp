// vaeconv/api/conv.hpp — run a conv on a stream (header-only; needs a HIP or CUDA compiler).
//
//   vaeconv::ConvDesc d = vaeconv::ConvDesc::causal3x3x3(1, 1, 128, 128, 384, 384);
//   vaeconv::DeviceWeights w;  w.upload(packed, stream);          // once
//   vaeconv::ConvArgs a{x, w.view(), bias, /*residual=*/nullptr, y};
//   vaeconv::Status s = vaeconv::conv_forward(d, a, stream);      // every call
//
// conv_forward validates (validate_for_kernels), picks the kernel and tile (choose_kernel,
// api/kernel_plan.hpp: the first family of kernel/dispatch.hpp's candidate list that can
// implement the conv) and launches; which_kernel(desc, &plan) there reports that choice without a device. It allocates
// nothing, never synchronizes, and keeps no state: it is safe from several host threads.
#pragma once
#include <cstdint>
#include <string>

#include "vaeconv/api/device_arch.hpp"
#include "vaeconv/api/kernel_plan.hpp"
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
  kernel::ConvParams p;
  const int64_t tiles = tile_grid<Policy>(d, a, phase, &p);
  const std::string what = " block tiles of " + std::to_string(Policy::BM) + " pixels x " +
                           std::to_string(Policy::BN) + " channels";
  VAECONV_RETURN_IF_ERROR(check_tile_grid(tiles, Policy::kThreads, Kernel::kOverlapEpilogue, what));
  p.tiles = int(tiles);
  return launch<Policy, Kernel::kSmemBytes>(&kernel::conv_kernel<Policy, Geo, kVector>,
                                            dim3(unsigned(tiles), 1, 1), p, stream,
                                            Kernel::kOverlapEpilogue);
}

// The tap-reduce kernel: one block per output patch of a frame.
template <class Policy>
inline Status launch_tap_reduce(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  using Patch = kernel::TapReduceHalo<Policy::BM>;
  using Kernel = kernel::TapReduceKernel<Policy, Patch>;
  static_assert(Kernel::kMaxCout >= kernel::kTapReduceMaxCout,
                "the tile holds the nine taps of every Cout the tap-reduce family takes");
  kernel::ConvParams p;
  const int64_t tiles = tap_reduce_grid<Policy>(d, a, &p);
  VAECONV_RETURN_IF_ERROR(
      check_tile_grid(tiles, Policy::kThreads, /*persistent=*/false, " tap-reduce patches"));
  p.tiles = int(tiles);
  return launch<Policy, Kernel::kSmemBytes>(&kernel::tap_reduce_kernel<Policy, Patch>,
                                            dim3(unsigned(tiles), 1, 1), p, stream);
}

// The halo kernels (halo_conv_kernel.hpp, tap_row_conv_kernel.hpp): one block per (output patch,
// Cout tile) of a frame.
template <class Policy, class Kernel, class Fn>
inline Status launch_patches(Fn* fn, const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  kernel::ConvParams p;
  const int64_t tiles = patch_grid<Policy>(d, a, &p);
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

// conv_forward's visitor: launches the instance.
struct Launcher {
  const ConvDesc& d;
  const ConvArgs& a;
  hipStream_t stream;
  template <class Policy>
  Status tap_reduce() { return launch_tap_reduce<Policy>(d, a, stream); }
  template <class Policy>
  Status halo() { return launch_halo<Policy>(d, a, stream); }
  template <class Policy>
  Status tap_row() { return launch_tap_row<Policy>(d, a, stream); }
  template <class Policy, class Geo, bool kVector>
  Status tile(int phase) { return launch_tile<Policy, Geo, kVector>(d, a, stream, phase); }
};

}  // namespace detail

// conv_forward with the policies of a table set (kernel::ShippedTiles; a tuning sweep's bench
// translation unit passes its own: bench/sweep_candidate.cpp).
template <class Tables>
inline Status conv_forward_with(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  // The arguments first (host checks: a wrong call is named as such on any machine), then the
  // device: one these kernels are built for.
  VAECONV_RETURN_IF_ERROR(validate_for_kernels(d, a));
  VAECONV_RETURN_IF_ERROR(check_device_arch(d.in_dtype));
  detail::Launcher launcher{d, a, stream};
  return detail::visit_kernel<Tables>(d, detail::choose_kernel<Tables>(d, a.weights.info),
                                      launcher);
}

inline Status conv_forward(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  return conv_forward_with<kernel::ShippedTiles>(d, a, stream);
}

}  // namespace vaeconv
