// test_api_gpu.cpp — the C ABI and the C++ API agree bit for bit, refusals come back with a
// message, and concurrent calls from several host threads on their own streams stay correct.
#include <gtest/gtest.h>

#include <thread>

#include "conv_case.hpp"
#include "vaeconv_c.h"

namespace vaeconv::test {
namespace {

struct Problem {
  ConvDesc d;
  std::vector<uint16_t> x, w_bits, y_cpp;
  std::vector<float> bias;
  PackedWeightsHost packed;
};

Problem make_problem(const ConvDesc& d, uint32_t seed) {
  Problem p;
  p.d = d;
  std::mt19937 rng(seed);
  std::vector<float> xf, wf;
  random_bf16(rng, size_t(d.in_elements()), -1.f, 1.f, &p.x, &xf);
  const float ws = 1.f / std::sqrt(float(d.gemm_k()));
  random_bf16(rng, size_t(d.cout * d.cin * d.taps()), -ws, ws, &p.w_bits, &wf);
  p.bias.resize(size_t(d.cout));
  for (auto& b : p.bias) b = 0.1f * float(rng() % 11);
  EXPECT_TRUE(pack_weights_bf16(d, p.w_bits.data(), int64_t(p.w_bits.size()), &p.packed).ok());
  return p;
}

// Runs the C++ entry on `stream`; returns the output bits.
std::vector<uint16_t> run_cpp(const Problem& p, hipStream_t stream) {
  GuardedBuffer x(p.x.size() * 2), y(size_t(p.d.out_elements()) * 2),
      w(p.packed.bf16.size() * 2), b(p.bias.size() * 4);
  x.upload(p.x.data(), p.x.size() * 2);
  w.upload(p.packed.bf16.data(), p.packed.bf16.size() * 2);
  b.upload(p.bias.data(), p.bias.size() * 4);
  (void)hipMemset(y.ptr(), 0xFF, y.bytes());
  ConvArgs a;
  a.x = x.ptr();
  a.weights = {w.ptr(), p.packed.info};
  a.bias = static_cast<const float*>(b.ptr());
  a.y = y.ptr();
  std::vector<uint16_t> out(size_t(p.d.out_elements()));
  if (!precompiled::conv_forward(p.d, a, stream).ok()) return {};
  (void)hipStreamSynchronize(stream);
  y.download(out.data(), out.size() * 2);
  return out;
}

TEST(CAbi, MatchesCppApiBitForBit) {
  VAECONV_REQUIRE_GPU();
  const Problem p = make_problem(ConvDesc::upsample2x(1, 1, 19, 23, 64, 32), 11);
  const std::vector<uint16_t> ref = run_cpp(p, nullptr);
  ASSERT_FALSE(ref.empty());

  vaeconv_conv_shape shape{VAECONV_UPSAMPLE, 1, 1, 19, 23, 64, 32};
  char msg[256];
  vaeconv_weights* w = nullptr;
  ASSERT_EQ(vaeconv_weights_create_bf16(&shape, p.w_bits.data(), int64_t(p.w_bits.size()), nullptr,
                                        &w, msg, sizeof msg),
            VAECONV_OK)
      << msg;
  GuardedBuffer x(p.x.size() * 2), y(ref.size() * 2), b(p.bias.size() * 4);
  x.upload(p.x.data(), p.x.size() * 2);
  b.upload(p.bias.data(), p.bias.size() * 4);
  (void)hipMemset(y.ptr(), 0xFF, y.bytes());
  ASSERT_EQ(vaeconv_conv_bf16(&shape, x.ptr(), w, static_cast<const float*>(b.ptr()), nullptr,
                              y.ptr(), nullptr, msg, sizeof msg),
            VAECONV_OK)
      << msg;
  VAECONV_HIP_CHECK(hipDeviceSynchronize());
  std::vector<uint16_t> got(ref.size());
  y.download(got.data(), got.size() * 2);
  EXPECT_EQ(got, ref);
  EXPECT_TRUE(y.guards_intact());

  // Refusals carry a code and a message.
  EXPECT_EQ(vaeconv_conv_bf16(&shape, nullptr, w, nullptr, nullptr, y.ptr(), nullptr, msg, sizeof msg),
            VAECONV_INVALID_ARGUMENT);
  EXPECT_NE(std::string(msg).find("null"), std::string::npos) << msg;
  EXPECT_EQ(vaeconv_conv_bf16(&shape, static_cast<char*>(x.ptr()) + 2, w, nullptr, nullptr,
                              y.ptr(), nullptr, msg, sizeof msg),
            VAECONV_MISALIGNED);
  EXPECT_EQ(vaeconv_conv_bf16(&shape, x.ptr(), w, nullptr, nullptr, x.ptr(), nullptr, msg, sizeof msg),
            VAECONV_OVERLAP);
  vaeconv_conv_shape other = shape;
  other.cout = 48;  // weights packed for Cout 32
  EXPECT_EQ(vaeconv_conv_bf16(&other, x.ptr(), w, nullptr, nullptr, y.ptr(), nullptr, msg, sizeof msg),
            VAECONV_INVALID_ARGUMENT);
  other = shape;
  other.kind = 7;
  EXPECT_EQ(vaeconv_conv_bf16(&other, x.ptr(), w, nullptr, nullptr, y.ptr(), nullptr, msg, sizeof msg),
            VAECONV_INVALID_ARGUMENT);
  std::vector<uint16_t> after(ref.size());
  y.download(after.data(), after.size() * 2);
  EXPECT_EQ(after, ref) << "a refused call wrote to the output";
  vaeconv_weights_destroy(w);
}

TEST(Concurrency, HostThreadsOnTheirOwnStreams) {
  VAECONV_REQUIRE_GPU();
  const Problem p = make_problem(ConvDesc::causal3x3x3(1, 1, 64, 48, 96, 96), 21);
  const std::vector<uint16_t> ref = run_cpp(p, nullptr);
  ASSERT_FALSE(ref.empty());
  constexpr int kThreads = 4, kRepeats = 8;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      hipStream_t s;
      if (hipStreamCreate(&s) != hipSuccess) {
        mismatches[size_t(t)] = -1;
        return;
      }
      for (int r = 0; r < kRepeats; ++r)
        if (run_cpp(p, s) != ref) ++mismatches[size_t(t)];
      (void)hipStreamDestroy(s);
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
}

}  // namespace
}  // namespace vaeconv::test
