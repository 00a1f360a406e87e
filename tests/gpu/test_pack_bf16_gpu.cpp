// The epilogue's rounding (arch::Current::pack_bf16x2) against the shared integer RNE
// (float_to_bf16, which the CPU reference uses): every non-NaN input must give the same bits, a NaN
// must stay a NaN. Inputs: the special values, every rounding tie and its neighbours around a
// spread of exponents (subnormals and the overflow edge included), and random bit patterns.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu_test_util.hpp"
#include "vaeconv/arch/arch.hpp"
#include "vaeconv/core/numerics_bf16.hpp"

namespace vaeconv::test {
namespace {

__global__ void pack_kernel(const uint32_t* in, uint32_t* out, int pairs) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < pairs)
    out[i] = arch::Current::pack_bf16x2(detail::bits_as_float(in[2 * i]),
                                        detail::bits_as_float(in[2 * i + 1]));
}

bool is_nan16(uint16_t b) { return (b & 0x7F80u) == 0x7F80u && (b & 0x007Fu) != 0; }

TEST(PackBf16Gpu, MatchesTheIntegerRoundingBitForBit) {
  VAECONV_REQUIRE_GPU();
  std::vector<uint32_t> in = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,  // +-0, +-Inf
                              0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x7FBFFFFFu,  // NaNs
                              0x7F7FFFFFu, 0x7F7F8000u, 0x7F7F7FFFu, 0xFF7FFFFFu,  // overflow edge
                              0x00000001u, 0x00008000u, 0x00018000u, 0x007FFFFFu,  // subnormals
                              0x3F800000u, 0xBF808000u, 0x3F818000u, 0x3F807FFFu};
  // Ties (low half 0x8000), one below and one above, for both parities of the kept bit.
  for (uint32_t e = 0; e < 255; e += 7)
    for (uint32_t kept : {0x00u, 0x01u, 0x7Eu, 0x7Fu})
      for (uint32_t low : {0x7FFFu, 0x8000u, 0x8001u})
        for (uint32_t sign : {0u, 0x80000000u}) in.push_back(sign | (e << 23) | (kept << 16) | low);
  std::mt19937 rng(20261202);
  while (in.size() < (1u << 20)) in.push_back(rng());
  if (in.size() % 2) in.push_back(0x3F800000u);
  const int pairs = int(in.size() / 2);

  GuardedBuffer d_in(in.size() * 4), d_out(size_t(pairs) * 4);
  ASSERT_TRUE(d_in.ok() && d_out.ok());
  VAECONV_HIP_CHECK(hipMemcpy(d_in.ptr(), in.data(), in.size() * 4, hipMemcpyHostToDevice));
  VAECONV_HIP_CHECK(hipMemset(d_out.ptr(), 0xFF, size_t(pairs) * 4));
  pack_kernel<<<(pairs + 255) / 256, 256>>>(static_cast<const uint32_t*>(d_in.ptr()),
                                            static_cast<uint32_t*>(d_out.ptr()), pairs);
  VAECONV_HIP_CHECK(hipGetLastError());
  VAECONV_HIP_CHECK(hipDeviceSynchronize());
  std::vector<uint32_t> out(static_cast<size_t>(pairs));
  VAECONV_HIP_CHECK(hipMemcpy(out.data(), d_out.ptr(), out.size() * 4, hipMemcpyDeviceToHost));
  EXPECT_TRUE(d_out.guards_intact());

  size_t bad = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t got = uint16_t(out[i / 2] >> (16 * (i % 2)));
    const float f = detail::bits_as_float(in[i]);
    const uint16_t want = float_to_bf16(f);
    const bool ok = is_nan16(want) ? is_nan16(got) : got == want;
    if (!ok && bad++ < 8)
      ADD_FAILURE() << "input 0x" << std::hex << in[i] << ": got 0x" << got << ", want 0x" << want;
  }
  EXPECT_EQ(bad, 0u) << "of " << in.size() << " inputs";
}

}  // namespace
}  // namespace vaeconv::test
