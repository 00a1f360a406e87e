// test_device_arch_gpu.cpp — the run-time architecture check (api/device_arch.hpp) on a real
// device (label gpu): this build's own device is admitted for both operand types, the decision
// agrees with the pure host function fed the device's own properties, and concurrent first calls
// from several host threads agree.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "gpu_test_util.hpp"
#include "vaeconv/api/device_arch.hpp"

namespace vaeconv::test {
namespace {

// The device's architecture as the pure decision sees it, and that decision.
Status expected_status(DType t) {
  int device = 0;
  if (hipGetDevice(&device) != hipSuccess) return Status(StatusCode::kRuntimeError, "hipGetDevice");
  hipDeviceProp_t prop;
  if (hipGetDeviceProperties(&prop, device) != hipSuccess)
    return Status(StatusCode::kRuntimeError, "hipGetDeviceProperties");
#if defined(VAECONV_BACKEND_HIP)
  return device_arch::amd_arch_status(prop.gcnArchName, t, device);
#else
  return device_arch::nvidia_arch_status(prop.major, prop.minor, t, device_arch::detail::kBuiltArchs,
                                         device_arch::detail::kBuiltArchCount, device);
#endif
}

TEST(DeviceArchGpu, ThisDeviceAsTheHostDecisionSays) {
  VAECONV_REQUIRE_GPU();
  for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
    const Status want = expected_status(t);
    ASSERT_NE(want.code(), StatusCode::kRuntimeError) << want.to_string();
    // Twice: the first call looks up and caches, the second reads the cache.
    for (int call = 0; call < 2; ++call) {
      const Status got = check_device_arch(t);
      EXPECT_EQ(got.code(), want.code()) << to_string(t) << " call " << call << ": "
                                         << got.to_string() << " vs " << want.to_string();
      EXPECT_EQ(got.message(), want.message());
    }
  }
}

// The suite's devices (the H200: sm_90 with sm_90a code) run both operand types.
TEST(DeviceArchGpu, SuiteDeviceIsAdmitted) {
  VAECONV_REQUIRE_GPU();
  EXPECT_TRUE(check_device_arch(DType::kBF16).ok()) << check_device_arch(DType::kBF16).to_string();
  EXPECT_TRUE(check_device_arch(DType::kFP8E4M3).ok())
      << check_device_arch(DType::kFP8E4M3).to_string();
}

TEST(DeviceArchGpu, ConcurrentCallsAgree) {
  VAECONV_REQUIRE_GPU();
  const Status want = expected_status(DType::kFP8E4M3);
  std::vector<std::thread> threads;
  std::vector<int> codes(16, -1);
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&codes, i] {
      codes[size_t(i)] = int(check_device_arch(i % 2 ? DType::kFP8E4M3 : DType::kBF16).code());
    });
  for (auto& th : threads) th.join();
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(codes[size_t(i)], int(i % 2 ? want.code() : expected_status(DType::kBF16).code()))
        << "thread " << i;
}

}  // namespace
}  // namespace vaeconv::test
