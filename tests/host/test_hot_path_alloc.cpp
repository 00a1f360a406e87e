// The per-call host path allocates nothing: conv_forward runs validate_for_kernels (and through it
// ConvDesc::validate) on every call, so their success paths must not build
// strings or containers (a refusal may: its message is built only then). Counted by replacing the
// global operator new in this test binary; the count is per thread and only read inside a scope.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/vae_shapes.hpp"

namespace {
thread_local int64_t g_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  ++g_allocations;
  const std::size_t al = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace vaeconv {
namespace {

void* addr(uintptr_t a) { return reinterpret_cast<void*>(a); }

// Allocations made by f on this thread.
template <class F>
int64_t allocations_in(F&& f) {
  const int64_t before = g_allocations;
  f();
  return g_allocations - before;
}

ConvArgs args_for(const ConvDesc& d, PackedWeightsInfo* w) {
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

TEST(HotPath, CountingWorks) {  // negative control: the counter sees a string being built
  EXPECT_GT(allocations_in([] { volatile auto s = ConvDesc::causal3x3x3(1, 1, 8, 8, 8, 8).to_string(); (void)s; }), 0);
  EXPECT_GT(allocations_in([] { (void)validate_for_kernels(ConvDesc::causal3x3x3(1, 1, 8, 8, 8, 8), ConvArgs{}); }), 0);
}

TEST(HotPath, ValidCallsAllocateNothing) {
  for (const auto& s : kVaeShapes) {
    for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
      const ConvDesc d = s.desc(t);
      PackedWeightsInfo w;
      const ConvArgs a = args_for(d, &w);
      ASSERT_TRUE(validate_for_kernels(d, a).ok()) << s.id << ": " << validate_for_kernels(d, a).to_string();
      EXPECT_EQ(allocations_in([&] { (void)validate_for_kernels(d, a); }), 0) << s.id;
    }
  }
}

}  // namespace
}  // namespace vaeconv
