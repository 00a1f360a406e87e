// test_fp8_sanitize_gpu.cpp — sanitize_fp8_for_target (api/fp8_sanitize.hpp) and its C ABI on the
// device.
//
//   * The gfx942 rewrite kernel itself (detail::sanitize_fp8_fnuz), run on whatever device is
//     present, against the host reference (arch::e4m3fn_bytes_for_fnuz) byte for byte: all 256
//     codes at every position of a 16-byte vector, random bytes over lengths that exercise the
//     vector body and the scalar tail, guard bands intact; a second pass applies the map again
//     (not idempotent: the form's NaN 0x80 reads as e4m3fn -0 -> 0x00; the header says so).
//   * The public entry: on a device that reads e4m3fn natively (gfx950, NVIDIA) the bytes are left
//     exactly as they were (the tensor keeps its e4m3fn meaning, NaN and -0 included); on gfx942
//     they are the rewrite's. Refusals name what is wrong.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "vaeconv/api/fp8_sanitize.hpp"
#include "vaeconv_c.h"

namespace vaeconv::test {
namespace {

std::vector<uint8_t> host_sanitized(const std::vector<uint8_t>& x) {
  std::vector<uint8_t> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = uint8_t(arch::e4m3fn_bytes_for_fnuz(x[i]));
  return y;
}

// Test bytes: every code at every offset mod 16 (256 x 16 = 4096 bytes), then random bytes with
// the three special codes made frequent.
std::vector<uint8_t> test_bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> x(n);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> any(0, 255), special(0, 3);
  for (size_t i = 0; i < n; ++i) {
    if (i < 4096) {
      x[i] = uint8_t((i / 16 + 17 * (i % 16)) % 256);
    } else {
      const int s = special(rng);
      x[i] = s == 0 ? uint8_t(0x80) : s == 1 ? uint8_t(any(rng) % 2 ? 0x7F : 0xFF) : uint8_t(any(rng));
    }
  }
  return x;
}

bool device_reads_fnuz() {
  bool fnuz = false;
  return detail::current_device_reads_fnuz(&fnuz).ok() && fnuz;
}

TEST(Fp8Sanitize, RewriteKernelMatchesHostReference) {
  VAECONV_REQUIRE_GPU();
  for (size_t n : {size_t(1), size_t(15), size_t(16), size_t(4096), size_t(4096 + 33), size_t(1) << 20,
                   (size_t(1) << 22) + 7}) {
    const std::vector<uint8_t> x = test_bytes(n, uint32_t(n));
    const std::vector<uint8_t> want = host_sanitized(x);
    GuardedBuffer d(n);
    d.upload(x.data(), n);
    ASSERT_TRUE(detail::sanitize_fp8_fnuz(d.ptr(), int64_t(n), nullptr).ok());
    VAECONV_HIP_CHECK(hipDeviceSynchronize());
    std::vector<uint8_t> got(n, 0x55);
    d.download(got.data(), n);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; ++i)
      if (got[i] != want[i]) {
        if (first == n) first = i;
        ++bad;
      }
    EXPECT_EQ(bad, 0u) << "n " << n << ", first at " << first;
    EXPECT_TRUE(d.guards_intact()) << "n " << n;
    // A second pass is the map applied twice (the pass must run once per tensor: its NaN 0x80
    // reads as e4m3fn -0 and becomes 0x00), byte for byte.
    ASSERT_TRUE(detail::sanitize_fp8_fnuz(d.ptr(), int64_t(n), nullptr).ok());
    VAECONV_HIP_CHECK(hipDeviceSynchronize());
    d.download(got.data(), n);
    EXPECT_EQ(got, host_sanitized(want)) << "second pass, n " << n;
    EXPECT_TRUE(d.guards_intact()) << "second pass, n " << n;
    // The premise: the data held every special code and the pass changed them.
    size_t changed = 0;
    for (size_t i = 0; i < n; ++i) changed += x[i] != want[i];
    if (n >= 4096) EXPECT_GE(changed, 3u * 16u);
  }
}

TEST(Fp8Sanitize, PublicEntryRewritesOnlyWhereTheDeviceReadsFnuz) {
  VAECONV_REQUIRE_GPU();
  const size_t n = 4096 + 4099;
  const std::vector<uint8_t> x = test_bytes(n, 3);
  const bool fnuz = device_reads_fnuz();
  const std::vector<uint8_t> want = fnuz ? host_sanitized(x) : x;
  std::printf("[ vaeconv  ] this device reads FP8 as %s: the pass %s\n", fnuz ? "e4m3fnuz (gfx942)" : "e4m3fn",
              fnuz ? "rewrites 0x80 / 0x7F / 0xFF" : "leaves the bytes unchanged");
  for (int via_c = 0; via_c < 2; ++via_c) {
    GuardedBuffer d(n);
    d.upload(x.data(), n);
    if (via_c) {
      char msg[256] = {};
      ASSERT_EQ(vaeconv_sanitize_fp8_for_target(d.ptr(), int64_t(n), nullptr, msg, sizeof msg), VAECONV_OK) << msg;
    } else {
      const Status s = sanitize_fp8_for_target(d.ptr(), int64_t(n), nullptr);
      ASSERT_TRUE(s.ok()) << s.to_string();
    }
    VAECONV_HIP_CHECK(hipDeviceSynchronize());
    std::vector<uint8_t> got(n, 0x55);
    d.download(got.data(), n);
    EXPECT_EQ(got, want) << (via_c ? "C ABI" : "C++");
    EXPECT_TRUE(d.guards_intact());
  }
}

TEST(Fp8Sanitize, Refusals) {
  VAECONV_REQUIRE_GPU();
  GuardedBuffer d(64);
  char* p = static_cast<char*>(d.ptr());
  Status s = sanitize_fp8_for_target(nullptr, 16, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.to_string().find("null"), std::string::npos) << s.to_string();
  s = sanitize_fp8_for_target(p, 0, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.to_string().find("n must be"), std::string::npos) << s.to_string();
  s = sanitize_fp8_for_target(p + 8, 16, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kMisaligned);
  EXPECT_NE(s.to_string().find("16-byte"), std::string::npos) << s.to_string();
  EXPECT_EQ(detail::sanitize_fp8_fnuz(p + 1, 16, nullptr).code(), StatusCode::kMisaligned);
  char msg[256] = {};
  EXPECT_EQ(vaeconv_sanitize_fp8_for_target(p, -1, nullptr, msg, sizeof msg), VAECONV_INVALID_ARGUMENT);
  EXPECT_NE(std::string(msg).find("n must be"), std::string::npos) << msg;
}

// The architecture rule, decided from the name alone (what current_device_reads_fnuz caches).
TEST(Fp8Sanitize, FnuzArchitectureNames) {
  EXPECT_TRUE(amd_reads_fp8_as_fnuz("gfx942"));
  EXPECT_TRUE(amd_reads_fp8_as_fnuz("gfx942:sramecc+:xnack-"));
  EXPECT_FALSE(amd_reads_fp8_as_fnuz("gfx950:sramecc+:xnack-"));
  EXPECT_FALSE(amd_reads_fp8_as_fnuz("gfx9420"));
  EXPECT_FALSE(amd_reads_fp8_as_fnuz(""));
}

}  // namespace
}  // namespace vaeconv::test
