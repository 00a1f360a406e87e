// test_quantize_args.cpp — quantize_fp8's argument checks (conv/quantize_args.hpp), on the host
// with fake addresses: each refusal names the argument at fault.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "vaeconv/conv/quantize_args.hpp"

namespace {

using namespace vaeconv;

const void* at(uintptr_t a) { return reinterpret_cast<const void*>(a); }
const float* fat(uintptr_t a) { return reinterpret_cast<const float*>(a); }
constexpr uintptr_t kX = 0x10000000, kY = 0x20000000, kScale = 0x30000000, kWs = 0x40000000;
constexpr int64_t kN = 4096;
constexpr size_t kWsBytes = 4096;

Status check(uintptr_t x, int64_t n, uintptr_t y, uintptr_t scale, uintptr_t ws,
             size_t ws_bytes = kWsBytes) {
  return check_quantize_fp8_args(x ? at(x) : nullptr, n, y ? at(y) : nullptr,
                                 scale ? fat(scale) : nullptr, ws ? at(ws) : nullptr, ws_bytes);
}

void expect_refused(const Status& s, StatusCode code, const std::string& message) {
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_EQ(s.message(), message);
}

TEST(QuantizeArgs, AcceptsAWellFormedCall) {
  EXPECT_TRUE(check(kX, kN, kY, kScale, kWs).ok());
  EXPECT_TRUE(check(kX, 1, kY, kScale, kWs).ok());  // one element
  // y right after x's 2n bytes.
  EXPECT_TRUE(check(kX, kN, kX + 2 * kN, kScale, kWs).ok());
}

TEST(QuantizeArgs, EachRefusalNamesItsArgument) {
  expect_refused(check(0, kN, kY, kScale, kWs), StatusCode::kInvalidArgument, "quantize_fp8: x is null");
  expect_refused(check(kX, kN, 0, kScale, kWs), StatusCode::kInvalidArgument, "quantize_fp8: y is null");
  expect_refused(check(kX, kN, kY, 0, kWs), StatusCode::kInvalidArgument,
                 "quantize_fp8: scale is null");
  expect_refused(check(kX, kN, kY, kScale, 0), StatusCode::kInvalidArgument,
                 "quantize_fp8: workspace is null");
  expect_refused(check(kX, 0, kY, kScale, kWs), StatusCode::kInvalidArgument,
                 "quantize_fp8: n must be in [1, 2^62), got 0");
  expect_refused(check(kX, INT64_MAX, kY, kScale, kWs), StatusCode::kInvalidArgument,
                 "quantize_fp8: n must be in [1, 2^62), got " + std::to_string(INT64_MAX));
  expect_refused(check(kX + 8, kN, kY, kScale, kWs), StatusCode::kMisaligned,
                 "quantize_fp8: x must be 16-byte aligned");
  expect_refused(check(kX, kN, kY + 4, kScale, kWs), StatusCode::kMisaligned,
                 "quantize_fp8: y must be 8-byte aligned");
  expect_refused(check(kX, kN, kY, kScale + 2, kWs), StatusCode::kMisaligned,
                 "quantize_fp8: scale must be 4-byte aligned");
  expect_refused(check(kX, kN, kY, kScale, kWs + 128), StatusCode::kMisaligned,
                 "quantize_fp8: workspace must be 256-byte aligned");
}

TEST(QuantizeArgs, OverlapsNameBothArguments) {
  // y inside x's 2n bytes (its last 8), the scale on y's last element, the workspace over x.
  expect_refused(check(kX, kN, kX + 2 * kN - 8, kScale, kWs), StatusCode::kOverlap,
                 "quantize_fp8: x overlaps y");
  expect_refused(check(kX, kN, kY, kY + kN - 4, kWs), StatusCode::kOverlap,
                 "quantize_fp8: y overlaps scale");
  expect_refused(check(kX, kN, kY, kScale, kX), StatusCode::kOverlap,
                 "quantize_fp8: x overlaps workspace");
  expect_refused(check(kX, kN, kY, kWs + kWsBytes - 4, kWs), StatusCode::kOverlap,
                 "quantize_fp8: scale overlaps workspace");
}

}  // namespace
