// vaeconv/api/quantize.hpp — bf16 activations to FP8 (e4m3fn) with a per-tensor scale, on the
// device, with no host synchronization:
//
//   size_t ws = vaeconv::quantize_fp8_workspace_bytes(n);     // once; allocate ws bytes once
//   vaeconv::quantize_fp8(x_bf16, n, y_fp8, scale_dev, ws_ptr, ws, stream);   // every call
//
// 1. amax = max |x| by the vendor's device reduce (rocPRIM / CUB, arch/device_reduce.hpp) into
//    the workspace; 2. one kernel turns amax into the scale (conv/fp8_scale.hpp), writes it to
//    scale_dev[0] and quantizes. The scale then feeds ConvArgs::x_scale of the next FP8 conv.
// The bytes never hold 0x80 (-0) or a NaN code, so every target's conv reads them as they are
// (gfx942 included: arch/fp8_fnuz.hpp). A NaN or Inf anywhere in x has no FP8 form: the scale is
// then NaN (and every byte 0x00), so every output of a conv that reads it is NaN.
#pragma once
#include <cstdint>

#include "vaeconv/arch/device_reduce.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/quantize_args.hpp"
#include "vaeconv/core/status.hpp"

namespace vaeconv {
namespace detail {

constexpr size_t kQuantizeHeader = 256;  // amax lives here; the reduce's storage follows

template <class Bits = uint16_t>  // a template: a header may define it in many TUs
__global__ void quantize_fp8_kernel(const Bits* x, uint8_t* y, int64_t n, const float* amax,
                                    float* scale_out) {
  const float scale = fp8_scale_for_amax(*amax);
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale_out = scale;
  // 8 elements per step: one 16-byte load, one 8-byte store.
  const int64_t vec = n / 8;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vec; i += stride) {
    const uint4 v = reinterpret_cast<const uint4*>(x)[i];
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    uint32_t q[2] = {0, 0};
VAECONV_UNROLL
    for (int e = 0; e < 8; ++e) {
      const uint16_t bits = uint16_t(w[e / 2] >> (16 * (e % 2)));
      q[e / 4] |= uint32_t(quantize_e4m3fn(bf16_to_float(bits), scale)) << (8 * (e % 4));
    }
    reinterpret_cast<uint2*>(y)[i] = make_uint2(q[0], q[1]);
  }
  for (int64_t i = vec * 8 + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = quantize_e4m3fn(bf16_to_float(x[i]), scale);
}

}  // namespace detail

// Workspace bytes quantize_fp8 needs for n elements (0 when the query itself fails).
inline size_t quantize_fp8_workspace_bytes(int64_t n) {
  if (n < 1) return 0;
  size_t temp = 0;
  if (arch::device_absmax_bf16(nullptr, temp, nullptr, nullptr, n, nullptr) != hipSuccess) return 0;
  return detail::kQuantizeHeader + temp;
}

inline Status quantize_fp8(const void* x_bf16, int64_t n, void* y_fp8, float* scale, void* workspace,
                           size_t workspace_bytes, hipStream_t stream) {
  VAECONV_RETURN_IF_ERROR(
      check_quantize_fp8_args(x_bf16, n, y_fp8, scale, workspace, workspace_bytes));
  size_t temp = 0;
  hipError_t e = arch::device_absmax_bf16(nullptr, temp, nullptr, nullptr, n, stream);
  if (e != hipSuccess) return Status(StatusCode::kRuntimeError, hipGetErrorString(e));
  if (workspace_bytes < detail::kQuantizeHeader + temp)
    return Status(StatusCode::kInvalidArgument,
                  "quantize_fp8: workspace of " + std::to_string(workspace_bytes) +
                      " bytes, needs " + std::to_string(detail::kQuantizeHeader + temp));
  float* amax = static_cast<float*>(workspace);
  void* temp_storage = static_cast<char*>(workspace) + detail::kQuantizeHeader;
  e = arch::device_absmax_bf16(temp_storage, temp, static_cast<const uint16_t*>(x_bf16), amax, n,
                               stream);
  if (e != hipSuccess) return Status(StatusCode::kRuntimeError, hipGetErrorString(e));
  const int64_t blocks64 = (n / 8 + 255) / 256;
  const unsigned blocks = unsigned(blocks64 < 1 ? 1 : (blocks64 > 65535 ? 65535 : blocks64));
  detail::quantize_fp8_kernel<uint16_t><<<blocks, 256, 0, stream>>>(static_cast<const uint16_t*>(x_bf16),
                                                          static_cast<uint8_t*>(y_fp8), n, amax,
                                                          scale);
  e = hipGetLastError();
  if (e != hipSuccess) return Status(StatusCode::kRuntimeError, hipGetErrorString(e));
  return Status::Ok();
}

}  // namespace vaeconv
