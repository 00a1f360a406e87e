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
      e = hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, Policy::kBlockThreads,
                                                       kDynamicBytes);
    if (e != hipSuccess) return failed("occupancy query failed: ", e);
    const int64_t resident = int64_t(sms) * per_sm;
    if (resident > 0 && resident < int64_t(grid.x)) grid.x = unsigned(resident);
    if (grid.x > kMaxPersistentGrid) grid.x = kMaxPersistentGrid;  // see Launcher::run
  }
  fn<<<grid, dim3(Policy::kBlockThreads, 1, 1), kDynamicBytes, stream>>>(p);
  const hipError_t e = hipGetLastError();
  if (e != hipSuccess) return failed("launch failed: ", e);
  return Status::Ok();
}

// conv_forward's visitor: launches a kernel instance on its grid (block_grid; limits:
// launch_limits.hpp), one tile per block, or a persistent grid of the resident blocks when the
// kernel overlaps a tile's epilogue with the next tile's copies (Kernel::kPersistent).
struct Launcher {
  const ConvDesc& d;
  const ConvArgs& a;
  hipStream_t stream;
  template <class Kernel>
  Status run(const kernel::LaunchPart& part) {
    using Policy = typename Kernel::PolicyT;
    kernel::ConvParams p;
    VAECONV_RETURN_IF_ERROR(launch_grid<Kernel>(d, a, part, &p));  // host work, no allocation
    return launch<Policy, Kernel::kSmemBytes>(kernel::kernel_entry(static_cast<Kernel*>(nullptr)),
                                              dim3(unsigned(p.tiles), 1, 1), p, stream,
                                              Kernel::kPersistent);
  }
};

}  // namespace detail

namespace detail {
template <class Tables>
inline Status launch_with(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  Launcher launcher{d, a, stream};
  return visit_kernel<Tables>(d, choose_kernel<Tables>(d, a.weights.info), launcher);
}
}  // namespace detail

// conv_forward with the policies of a table set (kernel::ShippedTiles; a tuning sweep's bench
// translation unit passes its own: bench/sweep_candidate.cpp), whatever the device's target.
template <class Tables>
inline Status conv_forward_with(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  // The arguments first (host checks: a wrong call is named as such on any machine), then the
  // device: one these kernels are built for.
  VAECONV_RETURN_IF_ERROR(validate_for_kernels(d, a));
  VAECONV_RETURN_IF_ERROR(check_device_arch(d.in_dtype));
  return detail::launch_with<Tables>(d, a, stream);
}

// The library's tables of the device's target (AMD: gfx942's or gfx950's, from its architecture
// name, cached per device by check_device_arch).
inline Status conv_forward(const ConvDesc& d, const ConvArgs& a, hipStream_t stream) {
  VAECONV_RETURN_IF_ERROR(validate_for_kernels(d, a));
  kernel::TableSet tables = kernel::TableSet::kPrimary;
  VAECONV_RETURN_IF_ERROR(check_device_arch(d.in_dtype, &tables));
  return kernel::visit_table_set(tables, [&](auto set) {
    return detail::launch_with<decltype(set)>(d, a, stream);
  });
}

}  // namespace vaeconv
