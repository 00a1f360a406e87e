// vaeconv/arch/device_reduce.hpp — the vendor's device-wide reduce, behind one function.
//
// The FP8 quantizer needs max|x| over a tensor without a host round trip: rocPRIM's device reduce
// on AMD, CUB's on NVIDIA. Both take caller-provided temporary storage; with temp == nullptr they
// only report the bytes they need.
#pragma once
#include <cstddef>
#include <cstdint>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/core/numerics_bf16.hpp"

#if defined(VAECONV_BACKEND_HIP)
#include <cstring>  // rocPRIM 7.2 uses memset without including it
#include <rocprim/device/device_reduce.hpp>
#include <rocprim/iterator/transform_iterator.hpp>
#elif defined(VAECONV_BACKEND_CUDA)
#include <cub/device/device_reduce.cuh>
#endif

namespace vaeconv::arch {

// |x| of a bf16 value; NaN counts as +Inf, so that a NaN anywhere makes the FP8 scale NaN
// (conv/fp8_scale.hpp: FP8 bytes carry no NaN, the scale does).
struct AbsBf16 {
  VAECONV_HD float operator()(uint16_t bits) const {
    const float v = bf16_to_float(bits);
    return v == v ? (v < 0.f ? -v : v) : ::vaeconv::detail::bits_as_float(0x7F800000u);
  }
};
struct MaxF32 {
  VAECONV_HD float operator()(float a, float b) const { return a > b ? a : b; }
};

// out[0] = max |x[i]| over n bf16 values (0 for n == 0).
inline hipError_t device_absmax_bf16(void* temp, size_t& temp_bytes, const uint16_t* x,
                                     float* out, int64_t n, hipStream_t stream) {
#if defined(VAECONV_BACKEND_HIP)
  return rocprim::reduce(temp, temp_bytes, rocprim::make_transform_iterator(x, AbsBf16{}), out,
                         0.f, size_t(n), MaxF32{}, stream);
#else
  return cub::DeviceReduce::TransformReduce(temp, temp_bytes, x, out, n, MaxF32{}, AbsBf16{}, 0.f,
                                            stream);
#endif
}

}  // namespace vaeconv::arch
