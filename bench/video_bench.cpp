// video_bench.cpp — vaeconv_bench --video: the video rows of video_shapes.hpp, vaeconv's cached
// causal conv against cuDNN's conv3d (video_vendor.hpp), in the image rows' method:
//
// random bf16 data (cache and x as two device tensors, as diffusers holds them), warm-up, the median
// of event-timed runs, inputs rotated over >= 256 MB of copies; all buffers allocated once per row.
// Before a row is timed, vaeconv's output (poisoned first) is checked at 64 sampled pixels, every
// channel: in each output frame the four corners and the four edge midpoints (the spatial padding;
// frame 0 reads both cached frames, the last only x's), the rest random, against the per-pixel CPU
// reference of the same conv on cat(cache, x) (reference/packed_reference.hpp, with the packed
// weights' values); then cuDNN runs the same problem (same buffers, weights and bias) and its whole
// output is compared with vaeconv's. FP8: cat(cache, x) quantized with one scale (as the PyTorch
// op quantizes them), the cache and x then read in place from that tensor's two parts; checked the
// same way against the dequantized operands. With --profile (profile_bracket.hpp), after a row's
// timing vaeconv's BF16 and FP8 convs and each cuDNN path's engine run once more inside a profiler
// bracket each.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_check.hpp"  // CHECK_HIP, check_pixels, time_median_us, compare_full
#include "bench_conv_entry.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"
#include "vaeconv/reference/packed_reference.hpp"
#include "vaeconv_kernels.hpp"
#include "video_shapes.hpp"
#include "video_vendor.hpp"

namespace vaeconv_bench {
namespace {

using vaeconv::ConvDesc;


constexpr int kSampledPixels = 64;

struct VideoResult {
  const VideoShape* shape = nullptr;
  std::string error;  // vaeconv's BF16 conv failed or was wrong (then it reports no time)
  double us = 0, tflops = 0;
  int64_t sampled = 0, bad = 0;
  struct Fp8 {
    bool ran = false;
    std::string error;
    double us = 0, tflops = 0;
    int64_t sampled = 0, bad = 0;
  } fp8;
  VendorResult vendor;
  bool compared = false, cross_ok = true;
  double max_abs = 0, rel_l2 = 0;
  int64_t nonfinite = 0;
};

// Uniform [-1, 1) from a xorshift state: the 96-channel row has 230 M input values.
struct FastRandom {
  uint64_t s;
  float next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return float((s * 2685821657736338717ull) >> 40) * (2.f / 16777216.f) - 1.f;
  }
};

// The conv of d on cat(cache, x) as one tensor, what the per-pixel reference reads: T_in frames,
// the front pad only what the cache did not fill; the same output pixels as d.
ConvDesc cat_form(const ConvDesc& d) {
  ConvDesc r = d;
  r.t = d.in_frames();
  r.cache_frames = 0;
  r.pad.t_front = 2 - d.cache_frames;
  r.set_dense_strides();
  return r;
}

// The sampled output pixels (GEMM rows): per output frame the corners and edge midpoints, then
// random ones up to kSampledPixels.
std::vector<int64_t> sample_pixels(const ConvDesc& d, std::mt19937& rng) {
  const int64_t ho = d.out_h(), wo = d.out_w();
  const int64_t spots[8][2] = {{0, 0},          {0, wo - 1},      {ho - 1, 0}, {ho - 1, wo - 1},
                               {0, wo / 2},     {ho - 1, wo / 2}, {ho / 2, 0}, {ho / 2, wo - 1}};
  std::vector<int64_t> m;
  for (int64_t t = 0; t < d.out_t(); ++t)
    for (const auto& hw : spots) m.push_back((t * ho + hw[0]) * wo + hw[1]);
  std::uniform_int_distribution<int64_t> pick(0, d.gemm_m() - 1);
  while (int(m.size()) < kSampledPixels) m.push_back(pick(rng));
  return m;
}

// Every channel of the sampled pixels at rtol = atol = 2e-2 against the reference of the packed
// weights' values: xval(i) is element i of cat(cache, x), wval(r, k) packed weight (r, k)'s.
template <class XVal, class WVal>
void sampled_check(const ConvDesc& d, const vaeconv::PackedWeightsInfo& info, XVal xval, WVal wval,
                   const std::vector<float>& bias, const std::vector<uint16_t>& y,
                   const std::vector<int64_t>& pixels, int64_t* sampled, int64_t* bad) {
  check_pixels(cat_form(d), info, xval, wval, bias, y, pixels, sampled, bad);
}

// One row's host data and device buffers, released on every return path.
struct RowData {
  ConvDesc d;
  int64_t cache_elems = 0, x_elems = 0;
  std::vector<uint16_t> cat;  // cat(cache, x) on the host: the cache's frames, then x's
  std::vector<float> w_torch, bias;
  std::vector<void*> caches, xs, ys, extra;
  hipStream_t stream = nullptr;
  ~RowData() {
    for (const auto* v : {&caches, &xs, &ys, &extra})
      for (void* p : *v) (void)hipFree(p);
    if (stream) (void)hipStreamDestroy(stream);
  }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    CHECK_HIP(hipMalloc(&p, bytes));
    extra.push_back(p);
    return p;
  }
};

// The FP8 cached conv of the same row: cat(cache, x) quantized once per copy outside the timed
// region (quantize_fp8, one scale), the cache and x its two parts; weights per channel.
VideoResult::Fp8 bench_fp8(RowData& rd, const VideoShape& s, const VideoOptions& o,
                           const std::vector<int64_t>& pixels, const float* bias_dev) {
  VideoResult::Fp8 r;
  r.ran = true;
  const ConvDesc d = s.desc(vaeconv::DType::kFP8E4M3);
  vaeconv::PackedWeightsHost packed;
  vaeconv::Status st = vaeconv::pack_weights_fp8(d, rd.w_torch.data(), &packed);
  const int64_t n = rd.cache_elems + rd.x_elems;
  const size_t ws_bytes = vaeconv::precompiled::quantize_fp8_workspace_bytes(n);
  if (!st.ok() || ws_bytes == 0) {
    r.error = st.ok() ? "quantize_fp8_workspace_bytes failed" : st.to_string();
    return r;
  }
  const size_t copies = rd.xs.size();
  void* cat_dev = rd.alloc(size_t(n) * 2);
  void* ws = rd.alloc(ws_bytes);
  float* scales = static_cast<float*>(rd.alloc(copies * sizeof(float)));
  void* wd = rd.alloc(packed.byte_size());
  float* wsc = static_cast<float*>(rd.alloc(packed.scales.size() * sizeof(float)));
  CHECK_HIP(hipMemcpy(cat_dev, rd.cat.data(), size_t(n) * 2, hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(wd, packed.bytes(), packed.byte_size(), hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(wsc, packed.scales.data(), packed.scales.size() * 4, hipMemcpyHostToDevice));
  std::vector<char*> x8(copies);
  for (size_t i = 0; i < copies && r.error.empty(); ++i) {
    x8[i] = static_cast<char*>(rd.alloc(size_t(n)));
    st = vaeconv::precompiled::quantize_fp8(cat_dev, n, x8[i], scales + i, ws, ws_bytes, rd.stream);
    if (!st.ok()) r.error = st.to_string();
  }
  auto args = [&](size_t i) {
    vaeconv::ConvArgs a;
    a.cache = x8[i];
    a.x = x8[i] + rd.cache_elems;
    a.x_scale = scales + i;
    a.weights = {wd, packed.info, wsc};
    a.bias = bias_dev;
    a.y = rd.ys[i];
    return a;
  };
  const size_t y_bytes = size_t(d.out_elements()) * 2;
  if (r.error.empty()) {
    CHECK_HIP(hipMemset(rd.ys[0], 0xFF, y_bytes));
    st = vaeconv::bench::conv_forward(d, args(0), rd.stream);
    if (!st.ok()) r.error = st.to_string();
  }
  if (r.error.empty()) {
    std::vector<uint8_t> xq(static_cast<size_t>(n));
    const float xs = vaeconv::quantize_fp8_host(rd.cat.data(), n, xq.data());
    std::vector<uint16_t> out(static_cast<size_t>(d.out_elements()));
    CHECK_HIP(hipStreamSynchronize(rd.stream));
    CHECK_HIP(hipMemcpy(out.data(), rd.ys[0], y_bytes, hipMemcpyDeviceToHost));
    sampled_check(
        d, packed.info, [&](int64_t i) { return vaeconv::e4m3fn_to_float(xq[size_t(i)]) * xs; },
        [&](int64_t row, int64_t k) {
          return vaeconv::e4m3fn_to_float(packed.fp8[size_t(row * packed.info.k_pad + k)]) * packed.scales[size_t(row)];
        },
        rd.bias, out, pixels, &r.sampled, &r.bad);
    if (r.bad) r.error = "sampled check failed";
  }
  if (r.error.empty()) {
    r.us = time_median_us(o.iters, rd.stream,
                     [&](int i) { (void)vaeconv::bench::conv_forward(d, args(size_t(i) % copies), rd.stream); });
    r.tflops = d.flops() / (r.us * 1e-6) / 1e12;
    profile_bracket("vaeconv fp8", d.to_string(), [&] {
      return error_of(vaeconv::bench::conv_forward(d, args(0), rd.stream));
    });
  }
  return r;
}

VideoResult bench_shape(const VideoShape& s, const VideoOptions& o) {
  VideoResult r;
  r.shape = &s;
  RowData rd;
  rd.d = s.desc();
  const ConvDesc& d = rd.d;
  rd.cache_elems = int64_t(d.cache_frames) * d.h * d.w * d.cin;
  rd.x_elems = d.in_elements();
  FastRandom g{0x9E3779B97F4A7C15ull ^ uint64_t(s.c)};
  rd.cat.resize(size_t(rd.cache_elems + rd.x_elems));
  for (auto& v : rd.cat) v = vaeconv::float_to_bf16(g.next());
  rd.w_torch.resize(size_t(d.cout * d.cin * d.taps()));
  const float wscale = 1.7f / std::sqrt(float(d.gemm_k()));
  for (auto& v : rd.w_torch) v = wscale * g.next();
  rd.bias.resize(size_t(d.cout));  // bf16-representable: cuDNN's bias equals vaeconv's
  for (auto& v : rd.bias) v = vaeconv::bf16_to_float(vaeconv::float_to_bf16(0.5f * g.next()));
  vaeconv::PackedWeightsHost packed;
  const vaeconv::Status pst = vaeconv::pack_weights_bf16(d, rd.w_torch.data(), &packed);
  if (!pst.ok()) {
    r.error = pst.to_string();
    return r;
  }
  std::mt19937 rng(42);
  const std::vector<int64_t> pixels = sample_pixels(d, rng);

  const size_t c_bytes = size_t(rd.cache_elems) * 2, x_bytes = size_t(rd.x_elems) * 2,
               y_bytes = size_t(d.out_elements()) * 2;
  const size_t copies = std::max<size_t>(1, std::min<size_t>(16, (size_t(256) << 20) / (c_bytes + x_bytes + y_bytes)));
  for (size_t i = 0; i < copies; ++i) {
    for (auto* v : {&rd.caches, &rd.xs, &rd.ys}) v->push_back(nullptr);
    CHECK_HIP(hipMalloc(&rd.caches[i], c_bytes));
    CHECK_HIP(hipMalloc(&rd.xs[i], x_bytes));
    CHECK_HIP(hipMalloc(&rd.ys[i], y_bytes));
    CHECK_HIP(hipMemcpy(rd.caches[i], rd.cat.data(), c_bytes, hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy(rd.xs[i], rd.cat.data() + rd.cache_elems, x_bytes, hipMemcpyHostToDevice));
  }
  void* wd = rd.alloc(packed.bf16.size() * 2);
  void* bd = rd.alloc(rd.bias.size() * 4);
  CHECK_HIP(hipMemcpy(wd, packed.bf16.data(), packed.bf16.size() * 2, hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(bd, rd.bias.data(), rd.bias.size() * 4, hipMemcpyHostToDevice));
  CHECK_HIP(hipStreamCreate(&rd.stream));
  auto args = [&](size_t i) {
    vaeconv::ConvArgs a;
    a.cache = rd.caches[i];
    a.x = rd.xs[i];
    a.weights = {wd, packed.info};
    a.bias = static_cast<const float*>(bd);
    a.y = rd.ys[i];
    return a;
  };

  std::vector<uint16_t> y(static_cast<size_t>(d.out_elements()));
  if (o.bf16) {
    CHECK_HIP(hipMemset(rd.ys[0], 0xFF, y_bytes));
    const vaeconv::Status st = vaeconv::bench::conv_forward(d, args(0), rd.stream);
    if (!st.ok()) r.error = st.to_string();
    if (r.error.empty()) {
      CHECK_HIP(hipStreamSynchronize(rd.stream));
      CHECK_HIP(hipMemcpy(y.data(), rd.ys[0], y_bytes, hipMemcpyDeviceToHost));
      sampled_check(
          d, packed.info, [&](int64_t i) { return vaeconv::bf16_to_float(rd.cat[size_t(i)]); },
          [&](int64_t co, int64_t k) {
            return vaeconv::bf16_to_float(packed.bf16[size_t(co * packed.info.k_pad + k)]);
          },
          rd.bias, y, pixels, &r.sampled, &r.bad);
      if (r.bad) r.error = "sampled check failed";
#if defined(VAECONV_EXPERIMENT)
      r.error.clear();  // an experiment build leaves a stage out on purpose
#endif
    }
    if (r.error.empty()) {
      r.us = time_median_us(o.iters, rd.stream,
                       [&](int i) { (void)vaeconv::bench::conv_forward(d, args(size_t(i) % copies), rd.stream); });
      r.tflops = d.flops() / (r.us * 1e-6) / 1e12;
      profile_bracket("vaeconv bf16", d.to_string(), [&] {
        return error_of(vaeconv::bench::conv_forward(d, args(0), rd.stream));
      });
    }
  }
  if (o.fp8) r.fp8 = bench_fp8(rd, s, o, pixels, static_cast<const float*>(bd));
  if (o.vendor) {
    const int64_t k = packed.info.k;  // 27 Cin: the rows are [kt][kh][kw][ci], KTRSC
    std::vector<uint16_t> w_ktrsc(size_t(d.cout * k));
    for (int64_t co = 0; co < d.cout; ++co)
      std::copy_n(packed.bf16.begin() + co * packed.info.k_pad, k, w_ktrsc.begin() + co * k);
    std::vector<uint16_t> yv;
    r.vendor = video_vendor_bench(d, w_ktrsc, rd.bias, rd.caches, rd.xs, rd.ys, o.iters, rd.stream, &yv);
    if (r.vendor.ran && o.bf16 && r.error.empty()) compare_full(y, yv, &r);
  }
  return r;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

bool vaeconv_ok(const VideoResult& r, const VideoOptions& o) { return o.bf16 && r.error.empty(); }

void write_json(const std::string& path, const VideoOptions& o, const char* device, const std::string& vendor_name,
                const std::vector<VideoResult>& rs) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "{\n \"device\": \"%s\",\n \"vendor\": \"%s\",\n \"vendor_enabled\": %s,\n \"set\": \"video\",\n",
               json_escape(device).c_str(), json_escape(vendor_name).c_str(), o.vendor ? "true" : "false");
  std::fprintf(f, " \"iters\": %d,\n \"peak_tflops\": %.1f,\n \"mem_tbps\": %.2f,\n", o.iters, o.peak_tflops,
               o.mem_tbps);
  std::fprintf(f, " \"ratio\": \"vaeconv time / vendor time; pipeline = cat + pad + conv3d + bias (engine), conv = "
                  "conv3d + bias on a ready padded input\",\n \"rows\": [\n");
  for (size_t i = 0; i < rs.size(); ++i) {
    const VideoResult& r = rs[i];
    const VideoShape& s = *r.shape;
    const ConvDesc d = s.desc();
    const bool ok = vaeconv_ok(r, o);
    const double bytes = double(d.cache_frames * d.h * d.w * d.cin + d.in_elements()) * 2 +
                         double(d.cout * d.gemm_k()) * 2 + double(d.cout) * 4 + double(d.out_elements()) * 2;
    std::fprintf(f,
                 "  {\"id\": \"%s\", \"kind\": \"causal3x3x3\", \"cin\": %lld, \"cout\": %lld, \"h\": %lld, \"w\": %lld, "
                 "\"t\": %lld, \"cache_frames\": %d, \"t_out\": %lld, \"out_h\": %lld, \"out_w\": %lld, \"calls\": 1, "
                 "\"resolution\": 0, \"gflop\": %.4f, \"bytes\": %.0f, \"mem_floor_us\": %.2f, \"compute_floor_us\": %.2f,\n",
                 s.id, static_cast<long long>(d.cin), static_cast<long long>(d.cout), static_cast<long long>(d.h),
                 static_cast<long long>(d.w), static_cast<long long>(d.t), d.cache_frames,
                 static_cast<long long>(d.out_t()), static_cast<long long>(d.out_h()), static_cast<long long>(d.out_w()),
                 d.flops() / 1e9, bytes, bytes / (o.mem_tbps * 1e12) * 1e6, d.flops() / (o.peak_tflops * 1e12) * 1e6);
    std::fprintf(f, "   \"vaeconv\": {\"ok\": %s, \"error\": \"%s\", \"us\": %.2f, \"tflops\": %.2f, \"frac_peak\": %.4f, "
                    "\"sampled\": %lld, \"sampled_bad\": %lld},\n",
                 ok ? "true" : "false", json_escape(o.bf16 ? r.error : "not run (--fp8-only)").c_str(), r.us, r.tflops,
                 ok ? r.tflops / o.peak_tflops : 0.0, static_cast<long long>(r.sampled),
                 static_cast<long long>(r.bad));
    auto path = [&](const char* name, const VendorPath& p) {
      std::fprintf(f, "   \"%s\": {\"ran\": %s, \"error\": \"%s\", \"algo\": \"%s\", \"bias\": \"%s\", "
                      "\"bias_notes\": \"%s\", \"workspace_bytes\": %lld, \"conv_nobias_us\": %.2f, "
                      "\"conv_us\": %.2f, \"pipeline_us\": %.2f},\n",
                   name, p.ran ? "true" : "false", json_escape(p.error).c_str(), json_escape(p.algo).c_str(),
                   json_escape(p.bias_mode).c_str(), json_escape(p.bias_notes).c_str(),
                   static_cast<long long>(p.workspace_bytes), p.conv_nobias_us, p.conv_us, p.pipeline_us);
    };
    const VendorResult& v = r.vendor;
    path("vendor", v);
    path("vendor_legacy", v.legacy);
    path("vendor_graph", v.graph);
    std::fprintf(f, "   \"legacy_us\": %.2f, \"graph_us\": %.2f, \"vendor_best_us\": %.2f, \"vendor_best_conv_us\": %.2f, "
                    "\"vendor_best\": \"%s\",\n",
                 v.legacy.ran ? v.legacy.pipeline_us : 0.0, v.graph.ran ? v.graph.pipeline_us : 0.0,
                 v.ran ? v.pipeline_us : 0.0, v.ran ? v.conv_us : 0.0, json_escape(v.best).c_str());
    const auto& q = r.fp8;
    const bool q_ok = q.ran && q.error.empty();
    std::fprintf(f, "   \"fp8\": {\"ran\": %s, \"ok\": %s, \"error\": \"%s\", \"us\": %.2f, \"tflops\": %.2f, "
                    "\"sampled\": %lld, \"sampled_bad\": %lld, \"vs_bf16\": %.4f},\n",
                 q.ran ? "true" : "false", q_ok ? "true" : "false", json_escape(q.error).c_str(), q.us, q.tflops,
                 static_cast<long long>(q.sampled), static_cast<long long>(q.bad), q_ok && ok ? q.us / r.us : 0.0);
    const bool both = v.ran && ok;
    const double r_pipe = both ? r.us / v.pipeline_us : 0.0, r_conv = both ? r.us / v.conv_us : 0.0;
    std::fprintf(f, "   \"ratio_vs_conv\": %.4f, \"ratio_vs_pipeline\": %.4f,\n", r_conv, r_pipe);
    std::fprintf(f, "   \"targets\": {\"ratio_vs_pipeline_le_0.6\": %s, \"frac_peak_ge_0.7\": %s},\n",
                 both && r_pipe <= 0.6 ? "true" : "false", ok && r.tflops >= 0.7 * o.peak_tflops ? "true" : "false");
    std::fprintf(f, "   \"compare\": {\"done\": %s, \"ok\": %s, \"max_abs\": %.6g, \"rel_l2\": %.6g, \"nonfinite\": %lld, "
                    "\"tol_rel_l2\": %g}}%s\n",
                 r.compared ? "true" : "false", r.cross_ok ? "true" : "false", r.max_abs, r.rel_l2,
                 static_cast<long long>(r.nonfinite), kCrossRelL2Tol, i + 1 < rs.size() ? "," : "");
  }
  std::fprintf(f, " ]\n}\n");
  std::fclose(f);
}

}  // namespace

int list_video_shapes() {
  for (const VideoShape& s : kVideoShapes) {
    const ConvDesc d = s.desc();
    std::printf("{\"id\": \"%s\", \"kind\": \"causal3x3x3\", \"cin\": %d, \"cout\": %d, \"h\": %d, \"w\": %d, "
                "\"t\": %d, \"cache_frames\": %d, \"t_out\": %lld, \"out_h\": %lld, \"out_w\": %lld, \"calls\": 1, "
                "\"resolution\": 0, \"gflop\": %.4f, \"where\": \"%s\"}\n",
                s.id, s.c, s.c, s.h, s.w, s.t, s.cache_frames, static_cast<long long>(d.out_t()),
                static_cast<long long>(d.out_h()), static_cast<long long>(d.out_w()), d.flops() / 1e9, s.where);
  }
  return 0;
}

int run_video_bench(const VideoOptions& o) {
  hipDeviceProp_t prop;
  CHECK_HIP(hipGetDeviceProperties(&prop, 0));
  std::string vendor_name;
  (void)vendor_available(&vendor_name);
  std::printf("video rows (issue 27): vaeconv's cached causal conv (cache read in place) against cuDNN conv3d on "
              "NDHWC bf16; engine = cat + pad + conv3d + bias as diffusers runs it, conv = conv3d + bias on a "
              "ready padded input (per row the faster of cuDNN's legacy and graph APIs); ratio = vaeconv / cuDNN\n\n");
  std::printf("%-27s %8s %9s %6s | %9s %6s %5s |", "id", "C->C", "HxW", "T", "vaeconv", "TFLOP/s", "%pk");
  if (o.vendor) std::printf(" %9s %9s %9s | %6s %6s |", "engine", "conv", "nobias", "r.eng", "r.conv");
  if (o.fp8) std::printf(" %9s %8s |", "fp8", "fp8/bf16");
  std::printf(" check\n");
  std::vector<VideoResult> results;
  int failures = 0;
  for (const VideoShape& s : kVideoShapes) {
    if (!o.only.empty() && o.only != s.id) continue;
    profile_state().row = s.id;
    VideoResult r = bench_shape(s, o);
    const bool ok = vaeconv_ok(r, o);
    char cc[24], hw[24], tt[24];
    std::snprintf(cc, sizeof cc, "%d->%d", s.c, s.c);
    std::snprintf(hw, sizeof hw, "%dx%d", s.h, s.w);
    std::snprintf(tt, sizeof tt, "%d+%d>%d", s.cache_frames, s.t, s.t);
    if (ok)
      std::printf("%-27s %8s %9s %6s | %9.1f %6.1f %4.0f%% |", s.id, cc, hw, tt, r.us, r.tflops,
                  100 * r.tflops / o.peak_tflops);
    else
      std::printf("%-27s %8s %9s %6s | %9s %6s %5s |", s.id, cc, hw, tt, o.bf16 ? "FAILED" : "-", "", "");
    if (o.bf16 && !r.error.empty()) ++failures;
    const VendorResult& v = r.vendor;
    if (o.vendor) {
      if (v.ran && ok)
        std::printf(" %9.1f %9.1f %9.1f | %6.2f %6.2f |", v.pipeline_us, v.conv_us, v.conv_nobias_us,
                    r.us / v.pipeline_us, r.us / v.conv_us);
      else if (v.ran)
        std::printf(" %9.1f %9.1f %9.1f | %6s %6s |", v.pipeline_us, v.conv_us, v.conv_nobias_us, "", "");
      else
        std::printf(" %9s %9s %9s | %6s %6s |", "n/a", "n/a", "n/a", "", "");
    }
    if (o.fp8) {
      if (r.fp8.ran && r.fp8.error.empty()) {
        std::printf(" %9.1f %8.2f |", r.fp8.us, ok ? r.fp8.us / r.us : 0.0);
      } else {
        std::printf(" %9s %8s |", "FAILED", "");
        ++failures;
      }
    }
    if (!o.bf16) std::printf(" fp8 only");
    else if (ok) std::printf(" ok (%lld sampled)", static_cast<long long>(r.sampled));
    else
      std::printf(" FAILED: %s (%lld of %lld sampled outputs bad)", r.error.c_str(), static_cast<long long>(r.bad),
                  static_cast<long long>(r.sampled));
    if (r.compared) {
      std::printf(", vs cuDNN %s (rel L2 %.2e)", r.cross_ok ? "ok" : "MISMATCH", r.rel_l2);
      if (!r.cross_ok) ++failures;
    }
    if (r.fp8.ran && !r.fp8.error.empty())
      std::printf("; fp8 FAILED: %s (%lld of %lld sampled outputs bad)", r.fp8.error.c_str(),
                  static_cast<long long>(r.fp8.bad), static_cast<long long>(r.fp8.sampled));
    std::printf("\n");
    std::fflush(stdout);
    results.push_back(std::move(r));
  }
  if (results.empty()) {
    std::fprintf(stderr, "no video row named %s\n", o.only.c_str());
    return 2;
  }
  if (o.vendor) {
    std::printf("\ncuDNN per row (engine / conv alone / conv without bias, us) and issue 27's targets "
                "(vaeconv <= 0.6 x engine, >= 70 %% of %.0f TFLOP/s)\n", o.peak_tflops);
    for (const VideoResult& r : results) {
      const VendorResult& v = r.vendor;
      if (!v.ran) {
        std::printf("%-27s cuDNN failed: %s\n", r.shape->id, v.error.c_str());
        continue;
      }
      for (const VendorPath* p : {&v.legacy, &v.graph}) {
        const char* name = p == &v.legacy ? "legacy API" : "graph API ";
        if (p->ran)
          std::printf("%-27s %s: %.1f / %.1f / %.1f%s; %s; bias: %s\n", r.shape->id, name, p->pipeline_us, p->conv_us,
                      p->conv_nobias_us, (v.best == "legacy") == (p == &v.legacy) ? " (the faster)" : "",
                      p->algo.c_str(), p->bias_mode.c_str());
        else
          std::printf("%-27s %s: failed: %s\n", r.shape->id, name, p->error.c_str());
      }
      if (vaeconv_ok(r, o))
        std::printf("%-27s targets: ratio %.3f (%s), %.0f %% of peak (%s)\n", r.shape->id, r.us / v.pipeline_us,
                    r.us / v.pipeline_us <= 0.6 ? "met" : "not met", 100 * r.tflops / o.peak_tflops,
                    r.tflops >= 0.7 * o.peak_tflops ? "met" : "not met");
    }
  }
  if (!o.json.empty()) {
    write_json(o.json, o, prop.name, vendor_name, results);
    std::printf("wrote %s\n", o.json.c_str());
  }
  if (profile_state().on)
    std::printf("profile brackets: %d, %d failed\n", profile_state().brackets, profile_state().failed);
  return failures ? 1 : 0;
}

}  // namespace vaeconv_bench
