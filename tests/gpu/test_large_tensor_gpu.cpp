// test_large_tensor_gpu.cpp — tensors past 2^31 elements (video): 64-bit frame bases.
//
// A causal 3x3x3 conv over 9 frames of 4096x4096x16 (2.4e9 elements, 4.8 GB), run twice on the
// same input: Cout = 16 (the implicit GEMM; its output is past 2^31 elements too) and Cout = 3
// (the tap-reduce kernel). Then a T = 1 conv over a batch of three 4096x2560x96 images (3.0e9
// elements in and out, 6 GB each): the halo kernel where it is built (sm_90a), else the implicit
// GEMM. And an upsample conv of a video whose output is past 2^31 elements (its own test below).
// Every output element is checked to be written (the output is poisoned
// with NaN first), and sampled pixels — borders of the last frames and random pixels whose input
// element offset is past 2^31 (output offset, for the Cin = 3 batch) — are compared, all channels, with a direct double-precision dot
// product. A full reference would
// take ~2 TFLOP on the CPU; the sample is what makes this test affordable.
#include <gtest/gtest.h>

#include <array>
#include <thread>

#include "gpu_test_util.hpp"
#include "kernel_aim.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/reference/pixel_reference.hpp"
#include "vaeconv_kernels.hpp"

namespace vaeconv::test {
namespace {

uint16_t hashed_bf16(uint64_t i) {
  uint64_t z = i * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float v = float(int64_t(z % 2001) - 1000) / 1000.f;  // [-1, 1]
  return float_to_bf16(v);
}

// Deterministic weights (scaled to keep sums of hundreds of products small) and bias.
std::vector<float> hashed_weights(size_t n) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = bf16_to_float(hashed_bf16(i + 7)) * 0.05f;
  return w;
}
std::vector<float> hashed_bias(size_t n) {
  std::vector<float> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = 0.25f * bf16_to_float(hashed_bf16(i + 99));
  return b;
}

// Packs w, runs d on the device input xd into a NaN-poisoned output, downloads it to *y and
// checks that every element was written.
void run_on_device(const ConvDesc& d, const std::vector<float>& w, const std::vector<float>& bias,
                   const void* xd, std::vector<uint16_t>* y) {
  const size_t y_n = size_t(d.out_elements());
  PackedWeightsHost packed;
  ASSERT_TRUE(pack_weights_bf16(d, w.data(), &packed).ok());
  void *yd = nullptr, *wd = nullptr, *bd = nullptr;
  VAECONV_HIP_CHECK(hipMalloc(&yd, y_n * 2));
  VAECONV_HIP_CHECK(hipMalloc(&wd, packed.byte_size()));
  VAECONV_HIP_CHECK(hipMalloc(&bd, bias.size() * 4));
  VAECONV_HIP_CHECK(hipMemcpy(wd, packed.bytes(), packed.byte_size(), hipMemcpyHostToDevice));
  VAECONV_HIP_CHECK(hipMemcpy(bd, bias.data(), bias.size() * 4, hipMemcpyHostToDevice));
  VAECONV_HIP_CHECK(hipMemset(yd, 0xFF, y_n * 2));  // 0xFFFF: a bf16 NaN

  ConvArgs a;
  a.x = xd;
  a.weights = {wd, packed.info};
  a.bias = static_cast<const float*>(bd);
  a.y = yd;
  const Status s = precompiled::conv_forward(d, a, nullptr);
  ASSERT_TRUE(s.ok()) << s.to_string();
  VAECONV_HIP_CHECK(hipDeviceSynchronize());
  y->resize(y_n);
  VAECONV_HIP_CHECK(hipMemcpy(y->data(), yd, y_n * 2, hipMemcpyDeviceToHost));
  (void)hipFree(yd);
  (void)hipFree(wd);
  (void)hipFree(bd);

  size_t unwritten = 0;
  for (size_t i = 0; i < y_n; ++i) unwritten += ((*y)[i] & 0x7F80) == 0x7F80 && ((*y)[i] & 0x7F);
  EXPECT_EQ(unwritten, 0u) << "output elements left NaN (unwritten)";
}

// One sampled output against its double-precision reference (rtol = atol = 2e-2); the first
// five misses are reported.
void check_sample(double got, double want, const std::array<int64_t, 3>& pix, int64_t co,
                  int64_t* checked, int64_t* bad) {
  ++*checked;
  if (std::fabs(got - want) <= 2e-2 + 2e-2 * std::fabs(want)) return;  // NaN fails
  if (*bad < 5)
    ADD_FAILURE() << "pixel (frame " << pix[0] << ", h " << pix[1] << ", w " << pix[2] << ") c "
                  << co << ": got " << got << ", want " << want;
  ++*bad;
}

// The operands as the sampled reference (reference/pixel_reference.hpp) reads them: the bf16
// input, and the float weights rounded to bf16 as the packing rounds them.
auto x_value(const std::vector<uint16_t>& x) {
  return [&x](int64_t i) { return bf16_to_float(x[size_t(i)]); };
}
auto w_value(const ConvDesc& d, const std::vector<float>& w) {
  return [&d, &w](int64_t co, int64_t ci, int kt, int kh, int kw) {
    const int64_t i = (((co * d.cin + ci) * d.kt + kt) * d.kh + kh) * d.kw + kw;
    return bf16_to_float(float_to_bf16(w[size_t(i)]));
  };
}

// Runs the causal conv d on the uploaded input (host copy x, device copy xd) and checks it as
// described above. far_input: the sample must reach input offsets past 2^31 (else output ones).
void run_and_check(const ConvDesc& d, const std::vector<uint16_t>& x, const void* xd,
                   bool far_input = true) {
  const size_t y_n = size_t(d.out_elements());
  const std::vector<float> w = hashed_weights(size_t(d.cout * d.cin * 27));
  const std::vector<float> bias = hashed_bias(size_t(d.cout));
  std::vector<uint16_t> y;
  run_on_device(d, w, bias, xd, &y);
  if (::testing::Test::HasFatalFailure()) return;

  // Sampled pixels: corners and edges of the last two frames, plus random far pixels. A frame
  // f = n * T + t is time slice t of batch item n; the causal taps stay inside item n.
  const int64_t H = d.h, W = d.w, C = d.cin, F = d.n * d.t;
  std::vector<std::array<int64_t, 3>> pix;  // (f, h, w)
  for (int64_t f : {F - 2, F - 1})
    for (int64_t h : {int64_t(0), H / 2, H - 1})
      for (int64_t ww : {int64_t(0), W / 3, W - 1}) pix.push_back({f, h, ww});
  std::mt19937_64 rng(5);
  // Half the random pixels go to the last frame (past 2^31 input elements where the input is
  // that large; the Cin = 3 batch's is not, its output is), half anywhere.
  for (int i = 0; i < 400; ++i)
    pix.push_back({i % 2 ? F - 1 : int64_t(rng() % F), int64_t(rng() % H), int64_t(rng() % W)});
  int64_t checked = 0, bad = 0, past_2_31 = 0, out_past_2_31 = 0;
  std::vector<double> want;
  for (const auto& p : pix) {
    const int64_t out_off = ((p[0] * H + p[1]) * W + p[2]) * d.cout;
    past_2_31 += ((p[0] * H + p[1]) * W + p[2]) * C > (int64_t(1) << 31);  // input offset
    out_past_2_31 += out_off > (int64_t(1) << 31);
    reference::output_pixel(d, x_value(x), w_value(d, w), bias.data(), (p[0] * H + p[1]) * W + p[2],
                            &want);
    for (int64_t co = 0; co < d.cout; ++co)
      check_sample(bf16_to_float(y[size_t(out_off + co)]), want[size_t(co)], p, co, &checked, &bad);
  }
  EXPECT_EQ(bad, 0) << "of " << checked << " sampled outputs";
  if (far_input) EXPECT_GT(past_2_31, 100) << "the sample must read input past 2^31 elements";
  else EXPECT_GT(out_past_2_31, 100) << "the sample must write output past 2^31 elements";
  std::printf("[ vaeconv  ] %s: %zu outputs all written, %lld sampled outputs checked\n",
              d.to_string().c_str(), y_n, static_cast<long long>(checked));
}

// Random bf16 input of d, on the host (x) and the device (*xd).
void upload_input(const ConvDesc& d, std::vector<uint16_t>& x, void** xd) {
  const size_t x_n = size_t(d.in_elements());
  x.resize(x_n);
  std::vector<std::thread> pool;
  const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < nt; ++t)
    pool.emplace_back([&, t] {
      for (size_t i = t; i < x_n; i += nt) x[i] = hashed_bf16(i);
    });
  for (auto& th : pool) th.join();
  VAECONV_HIP_CHECK(hipMalloc(xd, x_n * 2));
  VAECONV_HIP_CHECK(hipMemcpy(*xd, x.data(), x_n * 2, hipMemcpyHostToDevice));
}

TEST(LargeTensor, CausalVideoPast2To31Elements) {
  const ConvDesc d = ConvDesc::causal3x3x3(1, 9, 4096, 4096, 16, 16);
  const ConvDesc d3 = ConvDesc::causal3x3x3(1, 9, 4096, 4096, 16, 3);
  expect_kernel(d, aim_implicit_gemm(true));
  expect_kernel(d3, aim_tap_reduce());
  VAECONV_REQUIRE_GPU();
  ASSERT_GT(d.in_elements(), int64_t(1) << 31);
  std::vector<uint16_t> x;
  void* xd = nullptr;
  upload_input(d, x, &xd);
  if (HasFatalFailure()) return;
  // Cout = 16: the implicit GEMM (output past 2^31 too); Cout = 3: the tap-reduce kernel.
  run_and_check(d, x, xd);
  run_and_check(d3, x, xd);
  (void)hipFree(xd);
}

// The upsample conv of a video (T = 5 frames of 1024^2 to 2048^2, 32 -> 128 channels): the input
// is small, the output 2.7e9 elements (5.4 GB), so the output offsets carry past 2^31. Its four
// phase convs (upsample_phases.hpp) each write every second pixel of every second row from a
// shifted base. Every output element is checked to be written; sampled pixels — the corners and
// edges of the last frame, whose output offsets are past 2^31, and random ones — against the
// nearest x2 upsample followed by the 3 x 3 conv, in double precision.
TEST(LargeTensor, UpsampleVideoOutputPast2To31Elements) {
  const ConvDesc d = ConvDesc::upsample2x(1, 5, 1024, 1024, 32, 128);
  expect_kernel(d, aim_upsample_phases(true));
  VAECONV_REQUIRE_GPU();
  ASSERT_GT(d.out_elements(), int64_t(1) << 31);
  std::vector<uint16_t> x;
  void* xd = nullptr;
  upload_input(d, x, &xd);
  if (HasFatalFailure()) return;
  const size_t y_n = size_t(d.out_elements());
  const std::vector<float> w = hashed_weights(size_t(d.cout * d.cin * 9));
  const std::vector<float> bias = hashed_bias(size_t(d.cout));
  std::vector<uint16_t> y;
  run_on_device(d, w, bias, xd, &y);
  (void)hipFree(xd);
  if (HasFatalFailure()) return;

  const int64_t HO = d.out_h(), WO = d.out_w(), F = d.t;
  std::vector<std::array<int64_t, 3>> pix;  // (frame, oh, ow)
  for (int64_t oh : {int64_t(0), int64_t(1), HO / 2 + 1, HO - 2, HO - 1})
    for (int64_t ow : {int64_t(0), int64_t(1), WO / 3, WO - 2, WO - 1}) pix.push_back({F - 1, oh, ow});
  std::mt19937_64 rng(9);
  for (int i = 0; i < 300; ++i)
    pix.push_back({i % 2 ? F - 1 : int64_t(rng() % F), int64_t(rng() % HO), int64_t(rng() % WO)});
  int64_t checked = 0, bad = 0, past_2_31 = 0;
  std::vector<double> want;
  for (const auto& p : pix) {
    const int64_t out_off = ((p[0] * HO + p[1]) * WO + p[2]) * d.cout;
    past_2_31 += out_off > (int64_t(1) << 31);
    reference::output_pixel(d, x_value(x), w_value(d, w), bias.data(),
                            (p[0] * HO + p[1]) * WO + p[2], &want);
    for (int64_t co = 0; co < d.cout; ++co)
      check_sample(bf16_to_float(y[size_t(out_off + co)]), want[size_t(co)], p, co, &checked, &bad);
  }
  EXPECT_EQ(bad, 0) << "of " << checked << " sampled outputs";
  EXPECT_GT(past_2_31, 100) << "the sample must write output past 2^31 elements";
  std::printf("[ vaeconv  ] %s: %zu outputs all written, %lld sampled outputs checked\n",
              d.to_string().c_str(), y_n, static_cast<long long>(checked));
}

// A T = 1 conv over a batch of images, past 2^31 elements in its output (and its input, with
// far_input), on the kernel `aim` names: uploaded and checked as run_and_check says.
void check_image_batch(const ConvDesc& d, const Aim& aim, bool far_input) {
  expect_kernel(d, aim);
  VAECONV_REQUIRE_GPU();
  ASSERT_GT(d.out_elements(), int64_t(1) << 31);
  if (far_input) ASSERT_GT(d.in_elements(), int64_t(1) << 31);
  std::vector<uint16_t> x;
  void* xd = nullptr;
  upload_input(d, x, &xd);
  if (::testing::Test::HasFatalFailure()) return;
  run_and_check(d, x, xd, far_input);
  (void)hipFree(xd);
}

// T = 1 and 96 channels: the 1024^2 decoder layer's kernel (the halo kernel on sm_90a), with
// the batch carrying the offsets past 2^31 (each image's view stays under 2^31 bytes).
TEST(LargeTensor, BatchOfImagesPast2To31Elements) {
  check_image_batch(ConvDesc::causal3x3x3(3, 1, 4096, 2560, 96, 96), aim_halo(), /*far_input=*/true);
}

// Cin = 3 (the VAE's first layer: the tap-row kernel on sm_90a, else the element-wise gather):
// a batch of three 4096 x 2560 images whose 96-channel output is 3.0e9 elements.
TEST(LargeTensor, Cin3BatchOutputPast2To31Elements) {
  check_image_batch(ConvDesc::causal3x3x3(3, 1, 4096, 2560, 3, 96), aim_tap_row(), /*far_input=*/false);
}

}  // namespace
}  // namespace vaeconv::test
