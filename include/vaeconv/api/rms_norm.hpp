// vaeconv/api/rms_norm.hpp — diffusers' QwenImageRMS_norm / WanRMS_norm (+ the SiLU after it) on
// channels-last bf16 activations, in one pass (kernel/rms_norm_params.hpp: what it computes):
//
//   vaeconv::RmsNormArgs a;            // x, y (may be x), gamma, bias (or null), pixels, C, silu
//   vaeconv::Status s = vaeconv::rms_norm(a, stream);
//
// The arguments are checked first (check_rms_norm_args: nulls, C not a multiple of 8, sizes that
// overflow, misaligned or overlapping buffers, each named), then the device
// (check_device_arch); the call never allocates and never synchronizes.
#pragma once
#include <cmath>

#include "vaeconv/api/device_arch.hpp"
#include "vaeconv/arch/arch.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/rms_norm_kernel.hpp"
#include "vaeconv/kernel/rms_norm_params.hpp"

namespace vaeconv {
namespace detail {

template <int kGroup, int kChunksPerLane>
Status launch_rms_norm(const kernel::RmsNormParams& p, hipStream_t stream) {
  constexpr int64_t kPixelsPerBlock = kernel::kRmsNormThreads / kGroup;
  // The kernel walks the pixels with the grid's stride, so the grid may stop well short of them.
  constexpr int64_t kMaxBlocks = 65535;
  const int64_t needed = (p.pixels + kPixelsPerBlock - 1) / kPixelsPerBlock;
  const unsigned blocks = unsigned(needed < kMaxBlocks ? needed : kMaxBlocks);
  rms_norm_kernel<arch::Current, kGroup, kChunksPerLane>
      <<<blocks, kernel::kRmsNormThreads, 0, stream>>>(p);
  const hipError_t e = hipGetLastError();
  if (e != hipSuccess)
    return Status(StatusCode::kRuntimeError, std::string("rms_norm launch: ") + hipGetErrorString(e));
  return Status::Ok();
}

}  // namespace detail

inline Status rms_norm(const RmsNormArgs& a, hipStream_t stream) {
  VAECONV_RETURN_IF_ERROR(check_rms_norm_args(a));
  VAECONV_RETURN_IF_ERROR(check_device_arch(DType::kBF16));
  const kernel::RmsNormParams p{a.x,
                                a.y,
                                a.gamma,
                                a.bias,
                                a.pixels,
                                a.channels / kernel::kRmsNormChunkChannels,
                                float(std::sqrt(double(a.channels))),
                                a.silu ? 1 : 0};
  const kernel::RmsNormPlan plan = kernel::plan_rms_norm(a.channels);
  if (plan.chunks_per_lane == 0) return detail::launch_rms_norm<32, 0>(p, stream);
  constexpr int kPerLane = kernel::kRmsNormChunksPerLane;
  switch (plan.group) {
    case 1: return detail::launch_rms_norm<1, kPerLane>(p, stream);
    case 2: return detail::launch_rms_norm<2, kPerLane>(p, stream);
    case 4: return detail::launch_rms_norm<4, kPerLane>(p, stream);
    case 8: return detail::launch_rms_norm<8, kPerLane>(p, stream);
    case 16: return detail::launch_rms_norm<16, kPerLane>(p, stream);
    default: return detail::launch_rms_norm<32, kPerLane>(p, stream);
  }
}

}  // namespace vaeconv
