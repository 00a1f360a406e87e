// vaeconv/core/config.hpp — compiler and backend detection shared by every header.
//
// The same headers are compiled three ways:
//   * by a plain C++ compiler (host tests, the CPU reference, weight packing): no device code;
//   * by clang/hipcc for AMD (HIP), where __HIP_DEVICE_COMPILE__ marks the device passes;
//   * by nvcc for NVIDIA (CUDA), where __CUDA_ARCH__ marks the device passes.
// VAECONV_HD marks functions usable on both sides (numerics, index helpers).
#pragma once

#if defined(__HIPCC__) || defined(__HIP__)
#define VAECONV_BACKEND_HIP 1
#elif defined(__CUDACC__)
#define VAECONV_BACKEND_CUDA 1
#endif

#if defined(VAECONV_BACKEND_HIP) || defined(VAECONV_BACKEND_CUDA)
#define VAECONV_HD __host__ __device__
#define VAECONV_DEVICE __device__
#define VAECONV_GPU_COMPILER 1
#else
#define VAECONV_HD
#define VAECONV_DEVICE
#endif

// Loop unrolling hint: clang (both HIP passes) and nvcc's device pass honour it; the host
// compiler behind nvcc, and plain host builds, would warn about it.
#if defined(VAECONV_BACKEND_HIP) || defined(__CUDA_ARCH__)
#define VAECONV_UNROLL _Pragma("unroll")
#define VAECONV_NO_UNROLL _Pragma("unroll 1")  // a rare path kept small: one copy of its body
#else
#define VAECONV_UNROLL
#define VAECONV_NO_UNROLL
#endif

// Device functions the compiler must inline: an outlined call costs a stack frame in scratch
// memory (the resource report checks for none).
#if defined(VAECONV_GPU_COMPILER)
#define VAECONV_FORCE_INLINE __forceinline__
#else
#define VAECONV_FORCE_INLINE inline
#endif

// A lambda the compiler must inline: an outlined one keeps its captures (the gather state, the
// staging registers) in scratch memory. clang takes the attribute on lambdas; nvcc inlines these.
#if defined(VAECONV_BACKEND_HIP)
#define VAECONV_FORCE_INLINE_LAMBDA __attribute__((always_inline))
#else
#define VAECONV_FORCE_INLINE_LAMBDA
#endif

#if (defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)
#define VAECONV_DEVICE_PASS 1
#endif

#define VAECONV_VERSION_MAJOR 0
#define VAECONV_VERSION_MINOR 1
#define VAECONV_VERSION_PATCH 0
