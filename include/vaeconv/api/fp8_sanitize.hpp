// vaeconv/api/fp8_sanitize.hpp — an FP8 tensor from outside the library, made readable by the
// current device's conv kernels, once per tensor, in place:
//
//   vaeconv::sanitize_fp8_for_target(x_fp8, n, stream);   // then conv_forward reads x_fp8
//
// gfx942's MFMAs read e4m3fn bytes as e4m3fnuz (arch/fp8_fnuz.hpp), which is exact (x 4 per
// product, applied by the epilogue) for every code except 0x80 (-0, FNUZ NaN) and the NaNs
// 0x7F / 0xFF (FNUZ +-240). The library's own producers never emit those three (conv/fp8_scale.hpp);
// bytes from anywhere else may. On gfx942 this pass rewrites them (e4m3fn_bytes_for_fnuz):
//   0x80 -> 0x00 (the same +-0 product), 0x7F / 0xFF -> 0x80 (FNUZ NaN: a NaN stays NaN in
//   every output that reads it, as on the other targets).
// The result is the gfx942 operand form of the tensor, not e4m3fn any more (0x80 now means NaN):
// sanitize right before the convs that read it, and ONCE: the pass is not idempotent on gfx942 (a
// second pass reads the form's NaN 0x80 as e4m3fn -0 and turns it into 0x00, losing the NaN).
// For the same reason an FP8-output conv's bytes on gfx942, which are already in this form (its
// NaN is 0x80: conv/fp8_scale.hpp, Arch::kFp8NanCode), must not go through it. On gfx950 and
// NVIDIA (native e4m3fn) the pass validates its arguments and returns without touching the
// bytes, so the tensor keeps its e4m3fn meaning there and the pass costs nothing.
//
// The contract of conv_forward (README, FP8): on gfx942, FP8 activation and weight bytes that did
// not come from the library's quantizer, weight packer or an FP8-output conv must go through this
// pass exactly once; otherwise a -0 reads as NaN and a NaN as +-240. The decision and its cost (one read and
// one write of the tensor at HBM bandwidth, against the per-K-tile rewrite it replaces):
// docs/perf-notes.md.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "vaeconv/api/device_arch.hpp"
#include "vaeconv/arch/fp8_fnuz.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_args.hpp"  // detail::aligned
#include "vaeconv/core/status.hpp"

namespace vaeconv {

// Whether a device of this AMD architecture name reads FP8 operands as e4m3fnuz (gfx942).
inline bool amd_reads_fp8_as_fnuz(const std::string& gcn_arch_name) {
  return device_arch::amd_processor(gcn_arch_name) == "gfx942";
}

namespace detail {

template <class Byte = uint8_t>  // a template: a header may define it in many TUs
__global__ void sanitize_fp8_fnuz_kernel(Byte* x, int64_t n) {
  // 16 bytes per step; x is 16-byte aligned (checked by the caller).
  const int64_t vec = n / 16;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vec; i += stride) {
    uint4 v = reinterpret_cast<const uint4*>(x)[i];
    v.x = arch::e4m3fn_bytes_for_fnuz(v.x);
    v.y = arch::e4m3fn_bytes_for_fnuz(v.y);
    v.z = arch::e4m3fn_bytes_for_fnuz(v.z);
    v.w = arch::e4m3fn_bytes_for_fnuz(v.w);
    reinterpret_cast<uint4*>(x)[i] = v;
  }
  for (int64_t i = vec * 16 + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = Byte(arch::e4m3fn_bytes_for_fnuz(uint32_t(x[i])));
}

inline Status check_sanitize_args(const void* x, int64_t n) {
  if (x == nullptr) return Status(StatusCode::kInvalidArgument, "sanitize_fp8_for_target: x is null");
  if (n < 1) return Status(StatusCode::kInvalidArgument, "sanitize_fp8_for_target: n must be >= 1");
  if (!aligned(x, 16))
    return Status(StatusCode::kMisaligned, "sanitize_fp8_for_target: x must be 16-byte aligned");
  return Status::Ok();
}

// The gfx942 rewrite itself, on any device (the GPU tests run it on NVIDIA against the host
// reference; sanitize_fp8_for_target launches it only where the device reads FNUZ).
inline Status sanitize_fp8_fnuz(void* x, int64_t n, hipStream_t stream) {
  VAECONV_RETURN_IF_ERROR(check_sanitize_args(x, n));
  const int64_t blocks64 = (n / 16 + 255) / 256;
  const unsigned blocks = unsigned(blocks64 < 1 ? 1 : (blocks64 > 65535 ? 65535 : blocks64));
  sanitize_fp8_fnuz_kernel<uint8_t><<<blocks, 256, 0, stream>>>(static_cast<uint8_t*>(x), n);
  const hipError_t e = hipGetLastError();
  if (e != hipSuccess) return Status(StatusCode::kRuntimeError, hipGetErrorString(e));
  return Status::Ok();
}

// Whether the current device reads FP8 as FNUZ, cached per device id (0 unknown, 1 no, 2 yes).
inline std::atomic<uint8_t> g_fp8_fnuz[64] = {};
inline Status current_device_reads_fnuz(bool* fnuz) {
#if defined(VAECONV_BACKEND_HIP)
  int device = 0;
  hipError_t e = hipGetDevice(&device);
  if (e != hipSuccess)
    return Status(StatusCode::kRuntimeError, std::string("no current device: ") + hipGetErrorString(e));
  const bool cached = device >= 0 && device < 64;
  const uint8_t c = cached ? g_fp8_fnuz[device].load(std::memory_order_relaxed) : uint8_t(0);
  if (c != 0) {
    *fnuz = c == 2;
    return Status::Ok();
  }
  hipDeviceProp_t prop;
  e = hipGetDeviceProperties(&prop, device);
  if (e != hipSuccess)
    return Status(StatusCode::kRuntimeError,
                  std::string("reading the device's architecture failed: ") + hipGetErrorString(e));
  *fnuz = amd_reads_fp8_as_fnuz(prop.gcnArchName);
  if (cached) g_fp8_fnuz[device].store(*fnuz ? 2 : 1, std::memory_order_relaxed);
#else
  *fnuz = false;  // NVIDIA reads e4m3fn natively
#endif
  return Status::Ok();
}

}  // namespace detail

// Makes the n FP8 (e4m3fn) bytes at x (device memory, 16-byte aligned) readable by the current
// device's convs, in place, on `stream`: the gfx942 rewrite above on gfx942, nothing elsewhere.
inline Status sanitize_fp8_for_target(void* x_fp8, int64_t n, hipStream_t stream) {
  VAECONV_RETURN_IF_ERROR(detail::check_sanitize_args(x_fp8, n));
  VAECONV_RETURN_IF_ERROR(check_device_arch(DType::kFP8E4M3));
  bool fnuz = false;
  VAECONV_RETURN_IF_ERROR(detail::current_device_reads_fnuz(&fnuz));
  return fnuz ? detail::sanitize_fp8_fnuz(x_fp8, n, stream) : Status::Ok();
}

}  // namespace vaeconv
