// hot_path.hpp — counts the allocations a piece of host code makes, for the hot-path tests
// (tests/host/test_hot_path_alloc.cpp: validation; tests/launch_path/: the dispatch and the
// launches' host work). Replaces the global operator new of the binary that includes it: include
// it in ONE translation unit of a test binary. The count is per thread and only read inside a
// scope (allocations_in).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "vaeconv/conv/conv_args.hpp"

namespace vaeconv::test {
inline thread_local int64_t g_allocations = 0;
}  // namespace vaeconv::test

// Host code only: a GPU compiler's device pass (the launch-path test is built by one) would
// compile these replacements for the device, which has no exceptions.
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
void* operator new(std::size_t n) {
  ++vaeconv::test::g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  ++vaeconv::test::g_allocations;
  const std::size_t al = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#endif

namespace vaeconv::test {

// Allocations made by f on this thread.
template <class F>
int64_t allocations_in(F&& f) {
  const int64_t before = g_allocations;
  f();
  return g_allocations - before;
}

// Arguments that pass validate_for_kernels for d: weights packed for it (*w), distinct aligned
// addresses that are never dereferenced.
inline ConvArgs args_for(const ConvDesc& d, PackedWeightsInfo* w) {
  const auto addr = [](uintptr_t a) { return reinterpret_cast<void*>(a); };
  EXPECT_TRUE(packed_info_for(d, w).ok());
  ConvArgs a;
  a.x = addr(0x100000000);
  a.weights = {addr(0x900000000), *w};
  a.bias = static_cast<const float*>(addr(0xa00000000));
  a.y = addr(0xb00000000);
  if (d.in_dtype == DType::kFP8E4M3) {
    a.x_scale = static_cast<const float*>(addr(0xc00000000));
    a.weights.scales = static_cast<const float*>(addr(0xd00000000));
  }
  return a;
}

}  // namespace vaeconv::test
