// vaeconv_bench — times the shipped BF16 and FP8 kernels on the 18 Qwen-Image VAE shapes, and the
// platform's vendor library (cuDNN on NVIDIA, MIOpen on AMD) on the same problems in the same process.
//
//   vaeconv_bench                 all 18 seed shapes
//   vaeconv_bench --shape ID      one shape (an id of kVaeShapes)
//   vaeconv_bench --iters N       timed runs per shape and variant (default 20, median reported)
//   vaeconv_bench --json FILE     also write every number to FILE (scripts/plot_bench.py reads it)
//   vaeconv_bench --no-vendor     vaeconv only
//   vaeconv_bench --no-fp8        BF16 only (by default each shape also runs in FP8)
//   vaeconv_bench --fp8-only      FP8 only, no vendor (an FP8 tile sweep: half the device time)
//   vaeconv_bench --peak-tflops X / --mem-tbps X   the ceilings the fractions are taken of
//   vaeconv_bench --list          the seed shapes as JSON lines, no GPU needed (read by
//                                 bench/torch_conv_crosscheck.py); --help this usage
//   vaeconv_bench --video         the video rows instead (video_shapes.hpp: Wan's dominant cached
//                                 causal convs against cuDNN's cat + pad + conv3d; --shape takes
//                                 their ids, --list lists them; bench/video_bench.cpp)
//   vaeconv_bench --profile       NVIDIA: after each row's checks and timing, one more call of each
//                                 conv it timed (vaeconv BF16 / FP8, each cuDNN engine) between
//                                 cudaProfilerStart/Stop, a labelled line before and after each,
//                                 for Nsight Compute's --profile-from-start off (bench/profile.sh
//                                 vendor mode, bench/profile_bracket.hpp); exit 1 if one failed
//
// Method (the device's METHOD.md): random bf16 data, warm-up first, event-timed runs, median;
// inputs rotate over enough copies that each run reads memory not left in L2; before a shape is
// timed, a sample of output pixels (every channel) is checked against a direct CPU dot product, so
// a fast wrong kernel never reports a time. The vendor library then runs the same problem (same
// input buffers, same bf16 weights, the same bias rounded to bf16) and its whole output tensor is
// compared with vaeconv's: a second, independent check (bench/vendor_baseline.hpp says what cuDNN
// runs and how it is timed).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_check.hpp"  // CHECK_HIP, check_pixels, time_median_us, compare_full
#include "vendor_baseline.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/reference/packed_reference.hpp"
#include "bench_conv_entry.hpp"  // the timed conv: the library's, or a sweep candidate's
#include "vaeconv_kernels.hpp"
#include "video_shapes.hpp"

namespace {

using vaeconv_bench::compare_full;
using vaeconv_bench::kCrossRelL2Tol;
using vaeconv_bench::time_median_us;

// Ceilings the fractions are taken of (override with --peak-tflops / --mem-tbps).
// Source: ../shared/anchors/README.md, "Ceilings on the same card" (H200, 2026-12-02): a
// register-only microbenchmark (mma_peak.cu) of warp-level mma.sync bf16 m16n8k16 reached
// ~645 TFLOP/s — the instruction vaeconv's NVIDIA path uses — and a device-to-device copy ~4.3 TB/s
// (bytes read + bytes written).
constexpr double kMmaSyncBf16PeakTflops = 645.0;
constexpr double kHbmCopyTBps = 4.3;

struct Options {
  std::string only, json;
  int iters = 20;
  bool vendor = true;
  bool fp8 = true;
  bool bf16 = true;  // --fp8-only: false
  bool video = false;  // --video (or --shape naming a video row): the video rows
  bool profile = false;  // --profile: profiler brackets after each row's timing (profile_bracket.hpp)
  double peak_tflops = kMmaSyncBf16PeakTflops, mem_tbps = kHbmCopyTBps;
};

struct Result {
  const vaeconv::VaeShape* shape = nullptr;
  double median_us = 0, tflops = 0;
  double bytes = 0, mem_floor_us = 0, compute_floor_us = 0;
  int64_t sampled = 0, sample_bad = 0;
  std::string error;  // vaeconv failed (then nothing else is reported for the shape)
  // Vendor.
  vaeconv_bench::VendorResult vendor;
  bool compared = false;
  double max_abs = 0, rel_l2 = 0;
  int64_t nonfinite = 0;
  bool cross_ok = true;
  // FP8 (e4m3fn operands quantized on the device, bf16 output), on the same shape.
  struct Fp8 {
    bool ran = false;
    std::string error;
    double us = 0, tflops = 0;
    int64_t sampled = 0, bad = 0;
  } fp8;
};

// Checks 64 output pixels (the first, the last, 62 random), every channel, at rtol = atol = 2e-2,
// against the conv of the packed weights' values (reference/packed_reference.hpp): xval(i) is
// input element i's value, wval(r, k) packed weight (r, k)'s.
template <class XVal, class WVal>
void sampled_check(const vaeconv::ConvDesc& d, const vaeconv::PackedWeightsInfo& info, XVal xval,
                   WVal wval, const std::vector<float>& bias, const std::vector<uint16_t>& y,
                   std::mt19937& rng, int64_t* sampled, int64_t* bad) {
  std::uniform_int_distribution<int64_t> pick(0, d.gemm_m() - 1);
  std::vector<int64_t> pixels(64);
  for (int i = 0; i < 64; ++i) pixels[size_t(i)] = i < 2 ? (i == 0 ? 0 : d.gemm_m() - 1) : pick(rng);
  vaeconv_bench::check_pixels(d, info, xval, wval, bias, y, pixels, sampled, bad);
}

// The FP8 conv of the same shape and data: activations quantized by quantize_fp8 (outside the
// timed region, as a previous layer's epilogue would produce them), weights per channel once.
Result::Fp8 bench_fp8(const vaeconv::VaeShape& s, const Options& o, const std::vector<uint16_t>& x,
                      const std::vector<float>& w_torch, const std::vector<float>& bias,
                      const void* bias_dev, const std::vector<void*>& xs_bf16, hipStream_t stream,
                      std::mt19937& rng) {
  Result::Fp8 r;
  r.ran = true;
  const vaeconv::ConvDesc d = s.desc(vaeconv::DType::kFP8E4M3);
  vaeconv::PackedWeightsHost packed;
  vaeconv::Status st = vaeconv::pack_weights_fp8(d, w_torch.data(), &packed);
  const int64_t n = d.in_elements();
  const size_t ws_bytes = vaeconv::precompiled::quantize_fp8_workspace_bytes(n);
  if (!st.ok() || ws_bytes == 0) {
    r.error = st.ok() ? "quantize_fp8_workspace_bytes failed" : st.to_string();
    return r;
  }
  const size_t copies = xs_bf16.size(), y_bytes = size_t(d.out_elements()) * 2;
  std::vector<void*> x8(copies), y(copies);
  void *scales = nullptr, *ws = nullptr, *wd = nullptr, *wsc = nullptr;
  for (size_t i = 0; i < copies; ++i) {
    CHECK_HIP(hipMalloc(&x8[i], size_t(n)));
    CHECK_HIP(hipMalloc(&y[i], y_bytes));
  }
  CHECK_HIP(hipMalloc(&scales, copies * sizeof(float)));
  CHECK_HIP(hipMalloc(&ws, ws_bytes));
  CHECK_HIP(hipMalloc(&wd, packed.byte_size()));
  CHECK_HIP(hipMalloc(&wsc, packed.scales.size() * sizeof(float)));
  CHECK_HIP(hipMemcpy(wd, packed.bytes(), packed.byte_size(), hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(wsc, packed.scales.data(), packed.scales.size() * 4, hipMemcpyHostToDevice));
  float* scale = static_cast<float*>(scales);
  for (size_t i = 0; i < copies && r.error.empty(); ++i) {
    st = vaeconv::precompiled::quantize_fp8(xs_bf16[i], n, x8[i], scale + i, ws, ws_bytes, stream);
    if (!st.ok()) r.error = st.to_string();
  }
  auto args = [&](size_t i) {
    vaeconv::ConvArgs a;
    a.x = x8[i];
    a.x_scale = scale + i;
    a.weights = {wd, packed.info, static_cast<const float*>(wsc)};
    a.bias = static_cast<const float*>(bias_dev);
    a.y = y[i];
    return a;
  };
  if (r.error.empty()) {
    CHECK_HIP(hipMemset(y[0], 0xFF, y_bytes));
    st = vaeconv::bench::conv_forward(d, args(0), stream);
    if (!st.ok()) r.error = st.to_string();
  }
  if (r.error.empty()) {
    // The sampled check uses the dequantized operands: the host quantizer's bytes and scale.
    std::vector<uint8_t> xq(static_cast<size_t>(n));
    const float xs = vaeconv::quantize_fp8_host(x.data(), n, xq.data());
    std::vector<uint16_t> out(static_cast<size_t>(d.out_elements()));
    CHECK_HIP(hipStreamSynchronize(stream));
    CHECK_HIP(hipMemcpy(out.data(), y[0], y_bytes, hipMemcpyDeviceToHost));
    sampled_check(
        d, packed.info, [&](int64_t i) { return vaeconv::e4m3fn_to_float(xq[size_t(i)]) * xs; },
        [&](int64_t row, int64_t k) {
          return vaeconv::e4m3fn_to_float(packed.fp8[size_t(row * packed.info.k_pad + k)]) *
                 packed.scales[size_t(row)];
        },
        bias, out, rng, &r.sampled, &r.bad);
    if (r.bad) r.error = "sampled check failed";
  }
  if (r.error.empty()) {
    r.us = time_median_us(o.iters, stream, [&](int i) {
      (void)vaeconv::bench::conv_forward(d, args(size_t(i) % copies), stream);
    });
    r.tflops = d.flops() / (r.us * 1e-6) / 1e12;
    vaeconv_bench::profile_bracket("vaeconv fp8", d.to_string(), [&] {
      return vaeconv_bench::error_of(vaeconv::bench::conv_forward(d, args(0), stream));
    });
  }
  for (size_t i = 0; i < copies; ++i) {
    (void)hipFree(x8[i]);
    (void)hipFree(y[i]);
  }
  (void)hipFree(scales);
  (void)hipFree(ws);
  (void)hipFree(wd);
  (void)hipFree(wsc);
  return r;
}

Result bench_shape(const vaeconv::VaeShape& s, const Options& o) {
  Result r;
  r.shape = &s;
  const int iters = o.iters;
  const vaeconv::ConvDesc d = s.desc();
  // Bytes that must move once: input (as stored), weights (unpadded bf16), fp32 bias, output.
  r.bytes = double(d.in_elements()) * 2 + double(d.cout) * double(d.gemm_k()) * 2 + double(d.cout) * 4 +
            double(d.out_elements()) * 2;
  r.mem_floor_us = r.bytes / (o.mem_tbps * 1e12) * 1e6;
  r.compute_floor_us = d.flops() / (o.peak_tflops * 1e12) * 1e6;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<uint16_t> x(static_cast<size_t>(d.in_elements()));
  for (auto& v : x) v = vaeconv::float_to_bf16(u(rng));
  std::vector<float> w_torch(static_cast<size_t>(d.cout * d.cin * d.taps()));
  const float ws = 1.7f / std::sqrt(float(d.gemm_k()));
  for (auto& v : w_torch) v = ws * u(rng);
  // The bias is bf16-representable so that a vendor's bf16 bias equals vaeconv's fp32 one.
  std::vector<float> bias(static_cast<size_t>(d.cout));
  for (auto& v : bias) v = vaeconv::bf16_to_float(vaeconv::float_to_bf16(0.5f * u(rng)));
  vaeconv::PackedWeightsHost packed;
  vaeconv::Status st = vaeconv::pack_weights_bf16(d, w_torch.data(), &packed);
  if (!st.ok()) {
    r.error = st.to_string();
    return r;
  }
  // The direct form's bf16 weights, [Cout][K] with K = (kt, kh, kw, c): what the sampled check
  // and the vendor multiply by. The same as the packing, except for an upsample conv that this
  // build packs in phases (conv/upsample_phases.hpp: combined weights, K = 4 Cin).
  vaeconv::PackedWeightsHost direct_packing;
  if (packed.info.phases != 1) {
    st = vaeconv::detail::pack_weights_bf16_as(d, w_torch.data(), /*phases=*/false, &direct_packing);
    if (!st.ok()) {
      r.error = st.to_string();
      return r;
    }
  }
  const vaeconv::PackedWeightsHost& direct = packed.info.phases == 1 ? packed : direct_packing;
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
  CHECK_HIP(hipMalloc(&wd, packed.bf16.size() * 2));
  CHECK_HIP(hipMalloc(&bd, bias.size() * 4));
  CHECK_HIP(hipMemcpy(wd, packed.bf16.data(), packed.bf16.size() * 2, hipMemcpyHostToDevice));
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
  auto release = [&]() {
    for (int i = 0; i < copies; ++i) {
      (void)hipFree(xs[size_t(i)]);
      (void)hipFree(ys[size_t(i)]);
    }
    (void)hipFree(wd);
    (void)hipFree(bd);
    (void)hipStreamDestroy(stream);
  };

  // Correctness first: poison, run once, compare sampled pixels. A failure skips vaeconv's timing
  // (the vendor still runs, for its numbers). --fp8-only skips the BF16 run altogether.
  std::vector<uint16_t> y(static_cast<size_t>(d.out_elements()));
  if (o.bf16) {
    CHECK_HIP(hipMemset(ys[0], 0xFF, y_bytes));
    st = vaeconv::bench::conv_forward(d, args(0), stream);
    if (!st.ok()) r.error = st.to_string();
  }
  if (o.bf16 && r.error.empty()) {
    CHECK_HIP(hipStreamSynchronize(stream));
    CHECK_HIP(hipMemcpy(y.data(), ys[0], y_bytes, hipMemcpyDeviceToHost));
    sampled_check(
        d, direct.info, [&](int64_t i) { return vaeconv::bf16_to_float(x[size_t(i)]); },
        [&](int64_t co, int64_t k) {
          return vaeconv::bf16_to_float(direct.bf16[size_t(co * direct.info.k_pad + k)]);
        },
        bias, y, rng, &r.sampled, &r.sample_bad);
    if (r.sample_bad) r.error = "sampled check failed";
#if defined(VAECONV_EXPERIMENT)
    r.error.clear();  // an experiment build leaves a stage out on purpose (see main())
#endif
  }

  // Timing.
  if (o.bf16 && r.error.empty()) {
    r.median_us = time_median_us(iters, stream, [&](int i) {
      (void)vaeconv::bench::conv_forward(d, args(i % copies), stream);
    });
    r.tflops = d.flops() / (r.median_us * 1e-6) / 1e12;
    vaeconv_bench::profile_bracket("vaeconv bf16", d.to_string(), [&] {
      return vaeconv_bench::error_of(vaeconv::bench::conv_forward(d, args(0), stream));
    });
  }
  if (o.fp8) r.fp8 = bench_fp8(s, o, x, w_torch, bias, bd, xs, stream, rng);

  // The vendor library on the same buffers, then the whole output against vaeconv's.
  if (o.vendor) {
    std::vector<uint16_t> w_krsc(size_t(d.cout * direct.info.k));
    for (int64_t co = 0; co < d.cout; ++co)
      std::copy_n(direct.bf16.begin() + co * direct.info.k_pad, direct.info.k,
                  w_krsc.begin() + co * direct.info.k);
    std::vector<uint16_t> yv;
    r.vendor = vaeconv_bench::vendor_bench(d, w_krsc, bias, xs, ys, iters, stream, &yv);
    if (r.vendor.ran && r.error.empty()) compare_full(y, yv, &r);
  }
  release();
  return r;
}

// --- Output -------------------------------------------------------------------------------------

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}

struct Totals {
  double vaeconv = 0, conv = 0, pipeline = 0, fp8 = 0;
  double legacy = 0, graph = 0;  // cuDNN's two paths' pipelines (0 where a path did not run)
  double cudnn_fp8 = 0;          // cuDNN's FP8 graph pipelines
  bool cudnn_fp8_complete = true;
  int calls = 0, vendor_calls = 0;
  bool complete = true;      // every shape of the set ran on both sides
  bool fp8_complete = true;  // every shape's FP8 conv ran
};

void write_json(const std::string& path, const Options& o, const std::string& device,
                const std::string& vendor_name, bool vendor_on, const std::vector<Result>& rs,
                const Totals& t1024, const Totals& t1328) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "{\n \"device\": \"%s\",\n \"vendor\": \"%s\",\n \"vendor_enabled\": %s,\n",
               json_escape(device).c_str(), json_escape(vendor_name).c_str(), vendor_on ? "true" : "false");
  std::fprintf(f, " \"iters\": %d,\n \"peak_tflops\": %.1f,\n \"peak_source\": \"%s\",\n \"mem_tbps\": %.2f,\n",
               o.iters, o.peak_tflops,
               "mma.sync bf16 m16n8k16 register-only microbenchmark on the H200, shared/anchors/README.md",
               o.mem_tbps);
  std::fprintf(f, " \"ratio\": \"vaeconv time / vendor time (< 1: vaeconv faster)\",\n \"rows\": [\n");
  for (size_t i = 0; i < rs.size(); ++i) {
    const Result& r = rs[i];
    const vaeconv::VaeShape& s = *r.shape;
    const vaeconv::ConvDesc d = s.desc();
    std::fprintf(f,
                 "  {\"id\": \"%s\", \"kind\": \"%s\", \"cin\": %d, \"cout\": %d, \"h\": %d, \"w\": %d, "
                 "\"out_h\": %lld, \"out_w\": %lld, \"calls\": %d, \"resolution\": %d, \"gflop\": %.4f, "
                 "\"bytes\": %.0f, \"mem_floor_us\": %.2f, \"compute_floor_us\": %.2f,\n",
                 s.id, vaeconv::to_string(s.kind), s.cin, s.cout, s.h, s.w, static_cast<long long>(d.out_h()),
                 static_cast<long long>(d.out_w()), s.calls, s.resolution, d.flops() / 1e9, r.bytes,
                 r.mem_floor_us, r.compute_floor_us);
    std::fprintf(f, "   \"vaeconv\": {\"ok\": %s, \"error\": \"%s\", \"us\": %.2f, \"tflops\": %.2f, "
                    "\"frac_peak\": %.4f, \"frac_mem_floor\": %.4f, \"sampled\": %lld, \"sampled_bad\": %lld},\n",
                 r.error.empty() ? "true" : "false", json_escape(r.error).c_str(), r.median_us, r.tflops,
                 r.error.empty() ? r.tflops / o.peak_tflops : 0.0,
                 r.error.empty() && r.median_us > 0 ? r.mem_floor_us / r.median_us : 0.0,
                 static_cast<long long>(r.sampled), static_cast<long long>(r.sample_bad));
    const auto& v = r.vendor;
    std::fprintf(f, "   \"vendor\": {\"ran\": %s, \"error\": \"%s\", \"algo\": \"%s\", \"bias\": \"%s\", "
                    "\"bias_notes\": \"%s\", \"workspace_bytes\": %lld, \"conv_nobias_us\": %.2f, "
                    "\"conv_addtensor_us\": %.2f, \"conv_biaskernel_us\": %.2f, \"conv_fused_us\": %.2f, "
                    "\"conv_us\": %.2f, \"pipeline_us\": %.2f, \"conv_tflops\": %.2f, \"pipeline_tflops\": %.2f},\n",
                 v.ran ? "true" : "false", json_escape(v.error).c_str(), json_escape(v.algo).c_str(),
                 json_escape(v.bias_mode).c_str(), json_escape(v.bias_notes).c_str(),
                 static_cast<long long>(v.workspace_bytes), v.conv_nobias_us, v.conv_addtensor_us,
                 v.conv_biaskernel_us, v.conv_fused_us, v.conv_us, v.pipeline_us, v.ran ? d.flops() / (v.conv_us * 1e-6) / 1e12 : 0.0,
                 v.ran ? d.flops() / (v.pipeline_us * 1e-6) / 1e12 : 0.0);
    // cuDNN's two paths (legacy API, graph API) beside each other; vendor_best_us is the faster
    // engine time (the headline ratio's denominator; bench/torch_conv_crosscheck.py adds PyTorch's).
    auto path = [&](const char* name, const vaeconv_bench::VendorPath& p) {
      std::fprintf(f, "   \"%s\": {\"ran\": %s, \"error\": \"%s\", \"algo\": \"%s\", \"bias\": \"%s\", "
                      "\"bias_notes\": \"%s\", \"workspace_bytes\": %lld, \"conv_nobias_us\": %.2f, "
                      "\"conv_us\": %.2f, \"pipeline_us\": %.2f},\n",
                   name, p.ran ? "true" : "false", json_escape(p.error).c_str(), json_escape(p.algo).c_str(),
                   json_escape(p.bias_mode).c_str(), json_escape(p.bias_notes).c_str(),
                   static_cast<long long>(p.workspace_bytes), p.conv_nobias_us, p.conv_us, p.pipeline_us);
    };
    if (!v.best.empty()) {
      path("vendor_legacy", v.legacy);
      path("vendor_graph", v.graph);
      path("vendor_fp8", v.fp8);  // cuDNN's FP8 conv, beside vaeconv's FP8 (not in vendor_best)
    }
    std::fprintf(f, "   \"legacy_us\": %.2f, \"graph_us\": %.2f, \"vendor_best_us\": %.2f, "
                    "\"vendor_best_conv_us\": %.2f, \"vendor_best\": \"%s\", \"cudnn_fp8_us\": %.2f,\n",
                 v.legacy.ran ? v.legacy.pipeline_us : 0.0, v.graph.ran ? v.graph.pipeline_us : 0.0,
                 v.ran ? v.pipeline_us : 0.0, v.ran ? v.conv_us : 0.0, json_escape(v.best).c_str(),
                 v.fp8.ran ? v.fp8.pipeline_us : 0.0);
    const bool both = v.ran && r.error.empty();
    const auto& q = r.fp8;
    std::fprintf(f, "   \"fp8\": {\"ran\": %s, \"ok\": %s, \"error\": \"%s\", \"us\": %.2f, "
                    "\"tflops\": %.2f, \"sampled\": %lld, \"sampled_bad\": %lld, \"vs_bf16\": %.4f},\n",
                 q.ran ? "true" : "false", q.ran && q.error.empty() ? "true" : "false",
                 json_escape(q.error).c_str(), q.us, q.tflops, static_cast<long long>(q.sampled),
                 static_cast<long long>(q.bad),
                 q.ran && q.error.empty() && r.error.empty() ? q.us / r.median_us : 0.0);
    std::fprintf(f, "   \"ratio_vs_conv\": %.4f, \"ratio_vs_pipeline\": %.4f,\n",
                 both ? r.median_us / v.conv_us : 0.0, both ? r.median_us / v.pipeline_us : 0.0);
    std::fprintf(f, "   \"compare\": {\"done\": %s, \"ok\": %s, \"max_abs\": %.6g, \"rel_l2\": %.6g, "
                    "\"nonfinite\": %lld, \"tol_rel_l2\": %g}}%s\n",
                 r.compared ? "true" : "false", r.cross_ok ? "true" : "false", r.max_abs, r.rel_l2,
                 static_cast<long long>(r.nonfinite), kCrossRelL2Tol, i + 1 < rs.size() ? "," : "");
  }
  std::fprintf(f, " ],\n \"totals\": {\n");
  auto tot = [&](const char* name, const Totals& t, const char* sep) {
    std::fprintf(f, "  \"%s\": {\"calls\": %d, \"complete\": %s, \"vaeconv_ms\": %.4f, \"vendor_conv_ms\": %.4f, "
                    "\"vendor_pipeline_ms\": %.4f, \"ratio_vs_conv\": %.4f, \"ratio_vs_pipeline\": %.4f, "
                    "\"fp8_complete\": %s, \"vaeconv_fp8_ms\": %.4f, \"fp8_vs_bf16\": %.4f, "
                    "\"legacy_pipeline_ms\": %.4f, \"graph_pipeline_ms\": %.4f, \"cudnn_fp8_pipeline_ms\": %.4f, "
                    "\"cudnn_fp8_complete\": %s}%s\n",
                 name, t.calls, t.complete ? "true" : "false", t.vaeconv / 1e3, t.conv / 1e3, t.pipeline / 1e3,
                 t.conv > 0 ? t.vaeconv / t.conv : 0.0, t.pipeline > 0 ? t.vaeconv / t.pipeline : 0.0,
                 t.fp8_complete ? "true" : "false", t.fp8 / 1e3, t.vaeconv > 0 ? t.fp8 / t.vaeconv : 0.0,
                 t.legacy / 1e3, t.graph / 1e3, t.cudnn_fp8 / 1e3, t.cudnn_fp8_complete ? "true" : "false", sep);
  };
  tot("set_1024_58_calls", t1024, ",");
  tot("hot_1328_28_calls", t1328, "");
  std::fprintf(f, " }\n}\n");
  std::fclose(f);
}

// --list: one JSON object per line for each seed shape (no GPU needed).
int list_shapes() {
  for (const auto& s : vaeconv::kVaeShapes) {
    const vaeconv::ConvDesc d = s.desc();
    std::printf("{\"id\": \"%s\", \"kind\": \"%s\", \"cin\": %d, \"cout\": %d, \"h\": %d, \"w\": %d, "
                "\"t\": 1, \"out_h\": %lld, \"out_w\": %lld, \"calls\": %d, \"resolution\": %d, \"gflop\": %.4f}\n",
                s.id, vaeconv::to_string(s.kind), s.cin, s.cout, s.h, s.w, static_cast<long long>(d.out_h()),
                static_cast<long long>(d.out_w()), s.calls, s.resolution, d.flops() / 1e9);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool list = false;
#if defined(VAECONV_EXPERIMENT)
  std::printf("EXPERIMENT BUILD (bench/sweep.sh flags noepi/nomma/nocopy): a kernel stage is left "
              "out, outputs are wrong by design and not checked; times only locate the limit\n");
#endif
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) o.only = argv[++i];
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) o.iters = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) o.json = argv[++i];
    else if (!std::strcmp(argv[i], "--no-vendor")) o.vendor = false;
    else if (!std::strcmp(argv[i], "--no-fp8")) o.fp8 = false;
    else if (!std::strcmp(argv[i], "--fp8-only")) o.bf16 = false;
    else if (!std::strcmp(argv[i], "--peak-tflops") && i + 1 < argc) o.peak_tflops = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--mem-tbps") && i + 1 < argc) o.mem_tbps = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--list")) list = true;
    else if (!std::strcmp(argv[i], "--video")) o.video = true;
    else if (!std::strcmp(argv[i], "--profile")) o.profile = true;
    else {
      const bool help = !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
      std::fprintf(help ? stdout : stderr,
                   "usage: %s [--video] [--shape ID] [--iters N] [--json FILE] [--no-vendor] [--no-fp8] "
                   "[--fp8-only] [--peak-tflops X] [--mem-tbps X] [--profile] | [--video] --list | --help\n",
                   argv[0]);
      if (help) {
        std::printf("--video: the video rows (Wan's cached causal convs against cuDNN's cat + pad + conv3d):");
        for (const auto& v : vaeconv_bench::kVideoShapes) std::printf(" %s", v.id);
        std::printf("\n");
        std::printf("--profile: after each row's checks and timing, exactly one more call of each conv the row "
                    "timed (vaeconv bf16, vaeconv fp8, cudnn legacy, cudnn graph, cudnn fp8 graph: each cuDNN "
                    "path's engine) between cudaProfilerStart() and cudaProfilerStop(), for Nsight Compute's "
                    "--profile-from-start off; before and after each a line 'vaeconv_bench --profile: begin|end "
                    "ROW | LABEL | ...' on stdout. NVIDIA builds only; exit status 1 when a bracket failed. "
                    "bench/profile.sh runs it under ncu (VAECONV_PROFILE_VENDOR=1), bench/profile_table.py "
                    "tabulates the output%s\n",
                    vaeconv_bench::kProfileSupported ? "" : " (refused by this build: not NVIDIA)");
      }
      return help ? 0 : 2;
    }
  }
  if (vaeconv_bench::is_video_shape(o.only)) o.video = true;
  if (list) return o.video ? vaeconv_bench::list_video_shapes() : list_shapes();
  if (!o.bf16) {  // --fp8-only: no BF16 time, so nothing for the vendor or the JSON to sit beside
    if (!o.fp8 || !o.json.empty()) {
      std::fprintf(stderr, "--fp8-only takes neither --no-fp8 nor --json\n");
      return 2;
    }
    o.vendor = false;
  }
  if (!(o.peak_tflops > 0) || !(o.mem_tbps > 0)) {
    std::fprintf(stderr, "--peak-tflops and --mem-tbps must be positive\n");
    return 2;
  }
  if (o.profile && !vaeconv_bench::kProfileSupported) {
    std::fprintf(stderr, "--profile brackets calls with cudaProfilerStart/Stop for Nsight Compute: NVIDIA "
                         "builds only\n");
    return 2;
  }
  vaeconv_bench::profile_state().on = o.profile;
  int devices = 0;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices == 0) {
    std::printf("vaeconv_bench: no GPU found\n");
    return 1;
  }
  hipDeviceProp_t prop;
  CHECK_HIP(hipGetDeviceProperties(&prop, 0));
  std::string vendor_name;
  const bool vendor_ok = vaeconv_bench::vendor_available(&vendor_name);
  if (o.vendor && !vendor_ok) o.vendor = false;
  std::printf("vaeconv_bench on %s, median of %d runs\n", prop.name, o.iters);
  std::printf("vendor baseline: %s%s\n", vendor_name.c_str(),
              vendor_ok && !o.vendor ? (o.bf16 ? " (skipped: --no-vendor)" : " (skipped: --fp8-only)")
                                     : "");
  std::printf("peak = %.0f TFLOP/s (mma.sync bf16, measured, shared/anchors/README.md); memory floor = "
              "(input + weights + bias + output bytes) / %.1f TB/s\n",
              o.peak_tflops, o.mem_tbps);
  if (o.video) {
    vaeconv_bench::VideoOptions vo;
    vo.only = o.only;
    vo.json = o.json;
    vo.iters = o.iters;
    vo.vendor = o.vendor;
    vo.fp8 = o.fp8;
    vo.bf16 = o.bf16;
    vo.peak_tflops = o.peak_tflops;
    vo.mem_tbps = o.mem_tbps;
    const int rc = vaeconv_bench::run_video_bench(vo);
    return rc == 0 && vaeconv_bench::profile_state().failed ? 1 : rc;
  }
  if (o.vendor)
    std::printf("ratio = vaeconv time / vendor time (< 1: vaeconv faster); v.nobias = vendor conv "
                "alone; v.conv = + bias (fastest way, see below), on a pre-padded/pre-upsampled input; v.eng = + the "
                "separate pad/upsample kernel (what an engine runs)%s\n",
#if defined(VAECONV_BENCH_CUDNN)
                "; vendor = per shape the faster of cuDNN's legacy API and its graph API (autotuned)"
#else
                ""
#endif
    );
  std::printf("\n%-26s %-11s %9s %9s | %9s %6s %5s %5s |", "id", "kind", "Cin->Cout", "HxW", "vaeconv", "TFLOP/s",
              "%pk", "%mem");
  if (o.vendor) std::printf(" %9s %9s %9s | %6s %6s |", "v.nobias", "v.conv", "v.eng", "r.conv", "r.eng");
  if (o.fp8) std::printf(" %9s %8s |", "fp8", "fp8/bf16");
  std::printf(" check\n");

  std::vector<Result> results;
  Totals t1024, t1328;
  int failures = 0, ran = 0;
  for (const auto& s : vaeconv::kVaeShapes) {
    if (!o.only.empty() && o.only != s.id) continue;
    ++ran;
    vaeconv_bench::profile_state().row = s.id;
    Result r = bench_shape(s, o);
    char cc[32], hw[32];
    std::snprintf(cc, sizeof cc, "%d->%d", s.cin, s.cout);
    std::snprintf(hw, sizeof hw, "%dx%d", s.h, s.w);
    Totals& t = s.resolution == 1024 ? t1024 : t1328;
    t.calls += s.calls;
    const bool ok = r.error.empty();
    if (ok && !o.bf16) {
      std::printf("%-26s %-11s %9s %9s | %9s %6s %5s %5s |", s.id, vaeconv::to_string(s.kind), cc, hw, "-", "",
                  "", "");
    } else if (ok) {
      std::printf("%-26s %-11s %9s %9s | %9.1f %6.1f %4.0f%% %4.0f%% |", s.id, vaeconv::to_string(s.kind), cc, hw,
                  r.median_us, r.tflops, 100 * r.tflops / o.peak_tflops, 100 * r.mem_floor_us / r.median_us);
      t.vaeconv += s.calls * r.median_us;
    } else {
      ++failures;
      t.complete = false;
      std::printf("%-26s %-11s %9s %9s | %9s %6s %5s %5s |", s.id, vaeconv::to_string(s.kind), cc, hw, "FAILED", "",
                  "", "");
    }
    if (o.vendor) {
      const auto& v = r.vendor;
      if (v.ran) {
        if (ok)
          std::printf(" %9.1f %9.1f %9.1f | %6.2f %6.2f |", v.conv_nobias_us, v.conv_us, v.pipeline_us,
                      r.median_us / v.conv_us, r.median_us / v.pipeline_us);
        else
          std::printf(" %9.1f %9.1f %9.1f | %6s %6s |", v.conv_nobias_us, v.conv_us, v.pipeline_us, "", "");
        t.conv += s.calls * v.conv_us;
        t.pipeline += s.calls * v.pipeline_us;
        t.vendor_calls += s.calls;
        if (v.legacy.ran) t.legacy += s.calls * v.legacy.pipeline_us;
        if (v.graph.ran) t.graph += s.calls * v.graph.pipeline_us;
        if (v.fp8.ran) t.cudnn_fp8 += s.calls * v.fp8.pipeline_us;
        else t.cudnn_fp8_complete = false;
      } else {
        std::printf(" %9s %9s %9s | %6s %6s |", "n/a", "n/a", "n/a", "", "");
        t.complete = false;
      }
    }
    if (o.fp8) {
      if (r.fp8.ran && r.fp8.error.empty()) {
        std::printf(" %9.1f %8.2f |", r.fp8.us, ok && o.bf16 ? r.fp8.us / r.median_us : 0.0);
        t.fp8 += s.calls * r.fp8.us;
      } else {
        std::printf(" %9s %8s |", "FAILED", "");
        t.fp8_complete = false;
        ++failures;
      }
    }
    if (ok && !o.bf16) {
      std::printf(" fp8 only");
    } else if (ok) {
#if defined(VAECONV_EXPERIMENT)
      std::printf(" UNCHECKED experiment (%lld of %lld sampled outputs wrong)",
                  static_cast<long long>(r.sample_bad), static_cast<long long>(r.sampled));
#else
      std::printf(" ok (%lld sampled)", static_cast<long long>(r.sampled));
#endif
    } else {
      std::printf(" FAILED: %s (%lld of %lld sampled outputs bad)", r.error.c_str(),
                  static_cast<long long>(r.sample_bad), static_cast<long long>(r.sampled));
    }
    if (r.compared) {
      std::printf(", vs vendor %s", r.cross_ok ? "ok" : "MISMATCH");
      if (!r.cross_ok) ++failures;
    }
    if (r.fp8.ran && !r.fp8.error.empty())
      std::printf("; fp8 FAILED: %s (%lld of %lld sampled outputs bad)", r.fp8.error.c_str(),
                  static_cast<long long>(r.fp8.bad), static_cast<long long>(r.fp8.sampled));
    std::printf("\n");
    std::fflush(stdout);
    results.push_back(r);
  }
  if (ran == 0) {
    std::fprintf(stderr, "no shape named %s\n", o.only.c_str());
    return 2;
  }

  if (o.vendor) {
    std::printf("\nvendor details and full-tensor comparison (vaeconv vs vendor output, rel L2 = "
                "||a-b||/||b||, tolerance %.0e)\n", kCrossRelL2Tol);
    std::printf("%-26s %-38s %9s %10s %9s | %9s %9s %9s | %s\n", "id", "vendor algorithm", "workspace",
                "max|diff|", "rel L2", "+AddTens", "+kernel", "fused", "bias way timed (fastest)");
    for (const Result& r : results) {
      const auto& v = r.vendor;
      if (!v.ran) {
        std::printf("%-26s vendor failed: %s\n", r.shape->id, v.error.c_str());
        continue;
      }
      char wsb[32], cmp[64];
      std::snprintf(wsb, sizeof wsb, "%.1f MB", double(v.workspace_bytes) / 1e6);
      if (r.compared) std::snprintf(cmp, sizeof cmp, "%10.3g %9.2e", r.max_abs, r.rel_l2);
      else std::snprintf(cmp, sizeof cmp, "%10s %9s", "-", "-");
      auto us = [](double t) {
        char b[32];
        if (t > 0) std::snprintf(b, sizeof b, "%9.1f", t);
        else std::snprintf(b, sizeof b, "%9s", "n/a");
        return std::string(b);
      };
      std::printf("%-26s %-38s %9s %s | %s %s %s | %s%s%s\n", r.shape->id, v.algo.c_str(), wsb, cmp,
                  us(v.conv_addtensor_us).c_str(), us(v.conv_biaskernel_us).c_str(), us(v.conv_fused_us).c_str(),
                  v.bias_mode.c_str(), r.nonfinite ? "  NON-FINITE VALUES" : "",
                  v.bias_notes.empty() ? "" : ("  [" + v.bias_notes + "]").c_str());
      // cuDNN: both paths' engine times, and what each ran or why it did not.
      for (const auto* p : {&v.legacy, &v.graph, &v.fp8}) {
        if (v.best.empty()) break;
        const char* name = p == &v.legacy ? "legacy API" : p == &v.graph ? "graph API " : "fp8 graph ";
        const bool best = p != &v.fp8 && (v.best == "legacy") == (p == &v.legacy);
        if (p->ran)
          std::printf("%-26s   %s: engine %.1f us, conv %.1f us%s; %s\n", "", name, p->pipeline_us, p->conv_us,
                      best ? " (the faster)" : "", p->algo.c_str());
        else
          std::printf("%-26s   %s: failed: %s\n", "", name, p->error.c_str());
      }
    }
  }

  if (o.only.empty()) {
    auto line = [&](const char* what, const Totals& t) {
      if (o.bf16) std::printf("weighted, %s: vaeconv %.2f ms", what, t.vaeconv / 1e3);
      else std::printf("weighted, %s: vaeconv bf16 not run (--fp8-only)", what);
      if (o.vendor && t.vendor_calls) {
        std::printf(", vendor conv %.2f ms, vendor + pad/upsample %.2f ms; ratio %.3f (conv), %.3f (engine)",
                    t.conv / 1e3, t.pipeline / 1e3, t.vaeconv / t.conv, t.vaeconv / t.pipeline);
        if (t.legacy > 0 || t.graph > 0)
          std::printf("\n  cuDNN engine by path: legacy API %.2f ms, graph API %.2f ms, faster per shape %.2f ms; "
                      "cuDNN fp8 graph %.2f ms%s",
                      t.legacy / 1e3, t.graph / 1e3, t.pipeline / 1e3, t.cudnn_fp8 / 1e3,
                      t.cudnn_fp8_complete ? "" : " [INCOMPLETE]");
      }
      if (!t.complete) std::printf("  [INCOMPLETE: some shapes failed or have no vendor time]");
      if (o.fp8)
        std::printf("\n  fp8: %.2f ms, %.3f x vaeconv bf16%s", t.fp8 / 1e3,
                    t.vaeconv > 0 ? t.fp8 / t.vaeconv : 0.0,  // 0 when bf16 did not run
                    t.fp8_complete ? "" : "  [INCOMPLETE: some FP8 shapes failed]");
      std::printf("\n");
    };
    std::printf("\n");
    line("one 1024^2 encode+decode (58 calls)", t1024);
    line("hot 1328^2 rows (28 calls)         ", t1328);
  }
  if (!o.json.empty()) {
    write_json(o.json, o, prop.name, vendor_name, o.vendor, results, t1024, t1328);
    std::printf("wrote %s\n", o.json.c_str());
  }
  if (o.profile) {
    const auto& p = vaeconv_bench::profile_state();
    std::printf("profile brackets: %d, %d failed\n", p.brackets, p.failed);
    if (p.failed) ++failures;
  }
  return failures ? 1 : 0;
}
