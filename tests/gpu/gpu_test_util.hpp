// gpu_test_util.hpp — device buffers with guard bands, random bf16 data, and the comparison the
// GPU suites share.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/core/numerics_bf16.hpp"

namespace vaeconv::test {

#define VAECONV_HIP_CHECK(expr)                                                 \
  do {                                                                          \
    const hipError_t e_ = (expr);                                               \
    ASSERT_EQ(e_, hipSuccess) << #expr << ": " << hipGetErrorString(e_);        \
  } while (0)

// Skips the calling test, with the reason, when no GPU can be used.
inline bool gpu_available(std::string* why) {
  int n = 0;
  const hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess) {
    *why = std::string("no GPU: hipGetDeviceCount failed: ") + hipGetErrorString(e);
    (void)hipGetLastError();
    return false;
  }
  if (n == 0) {
    *why = "no GPU: hipGetDeviceCount returned 0 devices";
    return false;
  }
  return true;
}
#define VAECONV_REQUIRE_GPU()                              \
  do {                                                     \
    std::string why_;                                      \
    if (!::vaeconv::test::gpu_available(&why_)) GTEST_SKIP() << why_; \
  } while (0)

constexpr uint8_t kGuardByte = 0xA5;
constexpr size_t kGuardBytes = 4096;

// A device allocation with guard bands on both sides; ptr() is 256-byte aligned.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes) : bytes_(bytes) {
    if (hipMalloc(&base_, bytes_ + 2 * kGuardBytes) != hipSuccess) base_ = nullptr;
    if (base_) (void)hipMemset(base_, kGuardByte, bytes_ + 2 * kGuardBytes);
  }
  ~GuardedBuffer() {
    if (base_) (void)hipFree(base_);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  bool ok() const { return base_ != nullptr; }
  void* ptr() const { return static_cast<char*>(base_) + kGuardBytes; }
  size_t bytes() const { return bytes_; }
  void upload(const void* src, size_t n) const {
    (void)hipMemcpy(ptr(), src, n, hipMemcpyHostToDevice);
  }
  void download(void* dst, size_t n) const {
    (void)hipMemcpy(dst, ptr(), n, hipMemcpyDeviceToHost);
  }
  // True when neither guard band was touched.
  bool guards_intact() const {
    std::vector<uint8_t> g(kGuardBytes);
    for (int side = 0; side < 2; ++side) {
      const char* src = static_cast<char*>(base_) + (side ? kGuardBytes + bytes_ : 0);
      if (hipMemcpy(g.data(), src, kGuardBytes, hipMemcpyDeviceToHost) != hipSuccess) return false;
      for (uint8_t b : g)
        if (b != kGuardByte) return false;
    }
    return true;
  }

 private:
  void* base_ = nullptr;
  size_t bytes_;
};

// Random bf16 values in [lo, hi], never all zeros; also returns their float values.
inline void random_bf16(std::mt19937& rng, size_t n, float lo, float hi,
                        std::vector<uint16_t>* bits, std::vector<float>* values) {
  std::uniform_real_distribution<float> u(lo, hi);
  bits->resize(n);
  values->resize(n);
  for (size_t i = 0; i < n; ++i) {
    (*bits)[i] = float_to_bf16(u(rng));
    (*values)[i] = bf16_to_float((*bits)[i]);
  }
}

// The seed's bar: |y - ref| <= atol + rtol * |ref| with rtol = atol = 2e-2, for every element.
struct CompareResult {
  int64_t checked = 0, bad = 0, nan = 0;
  double max_abs_err = 0, rel_l2 = 0;
  std::string first_bad;
};

// `extra_atol`, when given, adds a per-element absolute tolerance (one float per element).
inline CompareResult compare_bf16(const std::vector<uint16_t>& got, const std::vector<float>& ref,
                                  double rtol = 2e-2, double atol = 2e-2,
                                  const std::vector<float>* extra_atol = nullptr) {
  CompareResult r;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = bf16_to_float(got[i]), e = ref[i];
    ++r.checked;
    if (std::isnan(g)) {
      ++r.nan;
      ++r.bad;
      if (r.first_bad.empty()) r.first_bad = "index " + std::to_string(i) + " is NaN (unwritten?)";
      continue;
    }
    const double d = std::fabs(g - e);
    num += d * d;
    den += e * e;
    if (d > r.max_abs_err) r.max_abs_err = d;
    const double tol = atol + rtol * std::fabs(e) + (extra_atol ? double((*extra_atol)[i]) : 0.0);
    if (d > tol) {
      if (r.first_bad.empty())
        r.first_bad = "index " + std::to_string(i) + ": got " + std::to_string(g) + ", want " +
                      std::to_string(e);
      ++r.bad;
    }
  }
  r.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return r;
}

// A bf16 NaN: outputs are poisoned with it before each run.
constexpr uint16_t kPoisonBf16 = 0x7FC1;

}  // namespace vaeconv::test
