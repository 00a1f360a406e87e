// vaeconv_bench — times the shipped BF16 kernels on the 18 Qwen-Image VAE shapes.
//
//   vaeconv_bench                 all 18 seed shapes
//   vaeconv_bench --shape ID      one shape (an id of kVaeShapes)
//   vaeconv_bench --iters N       timed runs per shape (default 20, median reported)
//
// Method (the device's METHOD.md): random bf16 data, warm-up first, event-timed runs, median;
// inputs rotate over enough copies that each run reads memory not left in L2; before a shape is
// timed, a sample of output pixels (every channel) is checked against a direct CPU dot product, so
// a fast wrong kernel never reports a time. The vendor-library comparison is issue 5's work.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv_kernels.hpp"

namespace {

#define CHECK_HIP(expr)                                                              \
  do {                                                                               \
    const hipError_t e_ = (expr);                                                    \
    if (e_ != hipSuccess) {                                                          \
      std::fprintf(stderr, "%s failed: %s\n", #expr, hipGetErrorString(e_));         \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

struct Result {
  const vaeconv::VaeShape* shape;
  double median_us = 0, tflops = 0;
  int64_t sampled = 0, sample_bad = 0;
  std::string error;
};

// One output pixel, every channel, straight from the ConvDesc formula (packed-weight order).
void reference_pixel(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& x,
                     const vaeconv::PackedWeightsHost& w, const std::vector<float>& bias,
                     int64_t m, std::vector<double>* out) {
  const int64_t wo = d.out_w(), ho = d.out_h(), to = d.out_t();
  const int64_t ow = m % wo, oh = (m / wo) % ho, ot = (m / (wo * ho)) % to, n = m / (wo * ho * to);
  out->assign(size_t(d.cout), 0.0);
  for (int64_t co = 0; co < d.cout; ++co) {
    double acc = bias[size_t(co)];
    for (int64_t k = 0; k < w.info.k; ++k) {
      const int64_t tap = k / d.cin, c = k % d.cin;
      const int64_t kt = w.info.kt_base + tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
      const int64_t it = ot + kt - d.pad.t_front;
      const int64_t ih = oh * d.stride_h + kh - d.pad.h_top, iw = ow * d.stride_w + kw - d.pad.w_left;
      if (it < 0 || it >= d.t || ih < 0 || ih >= d.up_h() || iw < 0 || iw >= d.up_w()) continue;
      const int64_t xi = n * d.in_strides.n + it * d.in_strides.t + (ih / d.upsample) * d.in_strides.h +
                         (iw / d.upsample) * d.in_strides.w + c;
      acc += double(vaeconv::bf16_to_float(x[size_t(xi)])) *
             vaeconv::bf16_to_float(w.data[size_t(co * w.info.k_pad + k)]);
    }
    (*out)[size_t(co)] = acc;
  }
}

Result bench_shape(const vaeconv::VaeShape& s, int iters) {
  Result r;
  r.shape = &s;
  const vaeconv::ConvDesc d = s.desc();
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<uint16_t> x(static_cast<size_t>(d.in_elements()));
  for (auto& v : x) v = vaeconv::float_to_bf16(u(rng));
  std::vector<float> w_torch(static_cast<size_t>(d.cout * d.cin * d.taps()));
  const float ws = 1.7f / std::sqrt(float(d.gemm_k()));
  for (auto& v : w_torch) v = ws * u(rng);
  std::vector<float> bias(static_cast<size_t>(d.cout));
  for (auto& v : bias) v = 0.5f * u(rng);
  vaeconv::PackedWeightsHost packed;
  vaeconv::Status st = vaeconv::pack_weights_bf16(d, w_torch.data(), &packed);
  if (!st.ok()) {
    r.error = st.to_string();
    return r;
  }
  // Rotate inputs over >= 256 MB so that L2 (50-60 MB) never holds the next run's input.
  const size_t x_bytes = x.size() * 2, y_bytes = size_t(d.out_elements()) * 2;
  const int copies = int(std::max<size_t>(1, std::min<size_t>(16, (size_t(256) << 20) / (x_bytes + y_bytes))));
  std::vector<void*> xs(static_cast<size_t>(copies)), ys(static_cast<size_t>(copies));
  for (int i = 0; i < copies; ++i) {
    CHECK_HIP(hipMalloc(&xs[size_t(i)], x_bytes));
    CHECK_HIP(hipMalloc(&ys[size_t(i)], y_bytes));
    CHECK_HIP(hipMemcpy(xs[size_t(i)], x.data(), x_bytes, hipMemcpyHostToDevice));
  }
  void *wd = nullptr, *bd = nullptr;
  CHECK_HIP(hipMalloc(&wd, packed.data.size() * 2));
  CHECK_HIP(hipMalloc(&bd, bias.size() * 4));
  CHECK_HIP(hipMemcpy(wd, packed.data.data(), packed.data.size() * 2, hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(bd, bias.data(), bias.size() * 4, hipMemcpyHostToDevice));
  hipStream_t stream;
  CHECK_HIP(hipStreamCreate(&stream));
  auto args = [&](int i) {
    vaeconv::ConvArgs a;
    a.x = xs[size_t(i)];
    a.weights = {wd, packed.info};
    a.bias = static_cast<const float*>(bd);
    a.y = ys[size_t(i)];
    return a;
  };

  // Correctness first: poison, run once, compare sampled pixels.
  CHECK_HIP(hipMemset(ys[0], 0xFF, y_bytes));
  st = vaeconv::precompiled::conv_forward(d, args(0), stream);
  if (!st.ok()) {
    r.error = st.to_string();
    return r;
  }
  CHECK_HIP(hipStreamSynchronize(stream));
  std::vector<uint16_t> y(static_cast<size_t>(d.out_elements()));
  CHECK_HIP(hipMemcpy(y.data(), ys[0], y_bytes, hipMemcpyDeviceToHost));
  std::vector<double> ref;
  std::uniform_int_distribution<int64_t> pick(0, d.gemm_m() - 1);
  for (int i = 0; i < 64; ++i) {
    const int64_t m = i < 2 ? (i == 0 ? 0 : d.gemm_m() - 1) : pick(rng);
    reference_pixel(d, x, packed, bias, m, &ref);
    for (int64_t c = 0; c < d.cout; ++c) {
      const double g = vaeconv::bf16_to_float(y[size_t(m * d.cout + c)]), e = ref[size_t(c)];
      ++r.sampled;
      if (!(std::fabs(g - e) <= 2e-2 + 2e-2 * std::fabs(e))) ++r.sample_bad;
    }
  }
  if (r.sample_bad) {
    r.error = "sampled check failed";
    return r;
  }

  // Timing.
  for (int i = 0; i < 3; ++i) (void)vaeconv::precompiled::conv_forward(d, args(i % copies), stream);
  hipEvent_t e0, e1;
  CHECK_HIP(hipEventCreate(&e0));
  CHECK_HIP(hipEventCreate(&e1));
  std::vector<float> ms(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    CHECK_HIP(hipEventRecord(e0, stream));
    (void)vaeconv::precompiled::conv_forward(d, args(i % copies), stream);
    CHECK_HIP(hipEventRecord(e1, stream));
    CHECK_HIP(hipEventSynchronize(e1));
    CHECK_HIP(hipEventElapsedTime(&ms[size_t(i)], e0, e1));
  }
  std::sort(ms.begin(), ms.end());
  r.median_us = 1e3 * ms[ms.size() / 2];
  r.tflops = d.flops() / (r.median_us * 1e-6) / 1e12;
  for (int i = 0; i < copies; ++i) {
    (void)hipFree(xs[size_t(i)]);
    (void)hipFree(ys[size_t(i)]);
  }
  (void)hipFree(wd);
  (void)hipFree(bd);
  (void)hipEventDestroy(e0);
  (void)hipEventDestroy(e1);
  (void)hipStreamDestroy(stream);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--shape ID] [--iters N]\n", argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices == 0) {
    std::printf("vaeconv_bench: no GPU found\n");
    return 1;
  }
  hipDeviceProp_t prop;
  CHECK_HIP(hipGetDeviceProperties(&prop, 0));
  std::printf("vaeconv_bench on %s, median of %d runs\n\n", prop.name, iters);
  std::printf("%-28s %-10s %9s %6s %11s %8s %s\n", "id", "kind", "Cin->Cout", "HxW", "time(us)",
              "TFLOP/s", "sampled check");
  double weighted_1024 = 0, weighted_1328 = 0;
  int failures = 0, ran = 0;
  for (const auto& s : vaeconv::kVaeShapes) {
    if (!only.empty() && only != s.id) continue;
    ++ran;
    const Result r = bench_shape(s, iters);
    char cc[32], hw[32];
    std::snprintf(cc, sizeof cc, "%d->%d", s.cin, s.cout);
    std::snprintf(hw, sizeof hw, "%dx%d", s.h, s.w);
    if (!r.error.empty()) {
      ++failures;
      std::printf("%-28s %-10s %9s %6s  FAILED: %s (%lld of %lld sampled outputs bad)\n", s.id,
                  vaeconv::to_string(s.kind), cc, hw, r.error.c_str(),
                  static_cast<long long>(r.sample_bad), static_cast<long long>(r.sampled));
      continue;
    }
    std::printf("%-28s %-10s %9s %6s %11.1f %8.1f ok (%lld outputs)\n", s.id, vaeconv::to_string(s.kind),
                cc, hw, r.median_us, r.tflops, static_cast<long long>(r.sampled));
    (s.resolution == 1024 ? weighted_1024 : weighted_1328) += s.calls * r.median_us;
  }
  if (only.empty()) {
    std::printf("\nweighted, one 1024^2 encode+decode (58 calls): %.2f ms\n", weighted_1024 / 1e3);
    std::printf("weighted, hot 1328^2 rows (28 calls):            %.2f ms\n", weighted_1328 / 1e3);
  }
  if (ran == 0) {
    std::fprintf(stderr, "no shape named %s\n", only.c_str());
    return 2;
  }
  return failures ? 1 : 0;
}
