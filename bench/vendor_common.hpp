// vendor_common.hpp — what the vendor baselines share (cudnn_baseline.cpp, miopen_baseline.cpp):
// the conv the vendor library runs for a vaeconv problem, the kernels an engine runs beside it
// (ZeroPad2d((0,1,0,1)), nearest-exact x2, an fp32 bias add), median event timing and the
// comparison of two bf16 outputs, and the check-and-time sequence around the vendor's own calls
// (ShapeRun). Written with hip* names; vaeconv/arch/runtime.hpp maps them to
// CUDA on NVIDIA, so both baselines run the same pad, upsample and bias code.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "profile_bracket.hpp"
#include "vendor_baseline.hpp"

namespace vaeconv_bench::vendor {

constexpr int kWarmup = 3;

// The conv the vendor library runs: its input (after pad / upsample), padding and stride.
struct VendorConv {
  int frames, h, w, cin, cout;  // the problem's input frames and sizes
  int ch, cw, pad, stride;      // the vendor conv's input size, padding, stride
  bool has_prep;                // a pad / upsample kernel runs first
  explicit VendorConv(const vaeconv::ConvDesc& d)
      : frames(int(d.n * d.t)), h(int(d.h)), w(int(d.w)), cin(int(d.cin)), cout(int(d.cout)),
        ch(h), cw(w), pad(1), stride(1), has_prep(d.kind != vaeconv::ConvKind::kCausal3x3x3) {
    if (d.kind == vaeconv::ConvKind::kDownsample) { ch = h + 1; cw = w + 1; pad = 0; stride = 2; }
    if (d.kind == vaeconv::ConvKind::kUpsample) { ch = 2 * h; cw = 2 * w; }
  }
  size_t prep_bytes() const { return size_t(frames) * ch * cw * cin * 2; }
};

// --- The pad / upsample / bias kernels an engine runs beside the vendor conv ---------------------
// Vec = uint4 (8 bf16 channels) when C % 8 == 0, else uint16_t (one channel); cv = C / lanes.

template <class Vec>
__global__ void pad_br_kernel(const Vec* __restrict__ x, Vec* __restrict__ y, int64_t frames, int h,
                              int w, int cv) {
  const int64_t total = frames * int64_t(h + 1) * (w + 1) * cv;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % cv, p = i / cv;
    const int64_t ow = p % (w + 1), oh = (p / (w + 1)) % (h + 1), f = p / (int64_t(w + 1) * (h + 1));
    Vec v{};
    if (oh < h && ow < w) v = x[((f * h + oh) * w + ow) * cv + c];
    y[i] = v;
  }
}

template <class Vec>
__global__ void upsample2x_kernel(const Vec* __restrict__ x, Vec* __restrict__ y, int64_t frames,
                                  int h, int w, int cv) {
  // nearest-exact at scale 2: src = floor((dst + 0.5) / 2) = dst / 2.
  const int64_t total = frames * int64_t(2 * h) * (2 * w) * cv;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % cv, p = i / cv;
    const int64_t ow = p % (2 * w), oh = (p / (2 * w)) % (2 * h), f = p / (int64_t(2 * w) * (2 * h));
    y[i] = x[((f * h + oh / 2) * w + ow / 2) * cv + c];
  }
}

// y[pixel][c] += b[c] for the kLanes channels of each Vec (C % kLanes == 0, so they share a pixel).
template <class Vec>
__global__ void bias_add_kernel(Vec* __restrict__ y, const float* __restrict__ b, int64_t total,
                                int c) {
  constexpr int kLanes = int(sizeof(Vec) / 2);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    Vec v = y[i];
    uint16_t* e = reinterpret_cast<uint16_t*>(&v);
    const int c0 = int((i * kLanes) % c);
    for (int j = 0; j < kLanes; ++j)
      e[j] = vaeconv::float_to_bf16(vaeconv::bf16_to_float(e[j]) + b[c0 + j]);
    y[i] = v;
  }
}

inline unsigned grid_for(int64_t n) {
  return unsigned(std::min<int64_t>((n + 255) / 256, int64_t(132) * 16));
}

inline std::string runtime_err(const char* what, hipError_t e) {
  return std::string(what) + ": " + hipGetErrorString(e);
}

#define VENDOR_TRY_RT(expr)                                                  \
  do {                                                                       \
    const hipError_t e_ = (expr);                                            \
    if (e_ != hipSuccess) return ::vaeconv_bench::vendor::runtime_err(#expr, e_); \
  } while (0)
#define VENDOR_TRY(expr)                                                     \
  do {                                                                       \
    std::string m_ = (expr);                                                 \
    if (!m_.empty()) return m_;                                              \
  } while (0)

// The engine's pad (downsample) or nearest-exact x2 (upsample) of x into y (c.prep_bytes()).
inline std::string run_prep(const VendorConv& c, vaeconv::ConvKind kind, const void* x, void* y,
                            hipStream_t stream) {
  if (!c.has_prep) return {};
  const bool vec8 = c.cin % 8 == 0;
  const int cv = vec8 ? c.cin / 8 : c.cin;
  const int64_t n = int64_t(c.prep_bytes()) / (vec8 ? 16 : 2);
  if (kind == vaeconv::ConvKind::kDownsample) {
    if (vec8)
      pad_br_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const uint4*>(x),
                                                      static_cast<uint4*>(y), c.frames, c.h, c.w, cv);
    else
      pad_br_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const uint16_t*>(x),
                                                      static_cast<uint16_t*>(y), c.frames, c.h, c.w, cv);
  } else {
    if (vec8)
      upsample2x_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const uint4*>(x),
                                                          static_cast<uint4*>(y), c.frames, c.h, c.w, cv);
    else
      upsample2x_kernel<<<grid_for(n), 256, 0, stream>>>(
          static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), c.frames, c.h, c.w, cv);
  }
  VENDOR_TRY_RT(hipGetLastError());
  return {};
}

// y[pixel][co] += bias[co] (fp32 bias, bf16 y; what PyTorch's add_ after a vendor conv does).
inline std::string add_bias(void* y, const float* bias, int64_t y_elems, int cout,
                            hipStream_t stream) {
  if (cout % 8 == 0)
    bias_add_kernel<<<grid_for(y_elems / 8), 256, 0, stream>>>(static_cast<uint4*>(y), bias,
                                                              y_elems / 8, cout);
  else
    bias_add_kernel<<<grid_for(y_elems), 256, 0, stream>>>(static_cast<uint16_t*>(y), bias,
                                                          y_elems, cout);
  VENDOR_TRY_RT(hipGetLastError());
  return {};
}

// Two events for timing, released on every return path.
struct Events {
  hipEvent_t e0 = nullptr, e1 = nullptr;
  std::string create() {
    VENDOR_TRY_RT(hipEventCreate(&e0));
    VENDOR_TRY_RT(hipEventCreate(&e1));
    return {};
  }
  ~Events() {
    if (e0) (void)hipEventDestroy(e0);
    if (e1) (void)hipEventDestroy(e1);
  }
};

// Median of `iters` event-timed runs of run(i) after kWarmup untimed ones.
template <class F>
std::string time_median(const F& run, int iters, hipStream_t s, const Events& ev, double* us) {
  for (int i = 0; i < kWarmup; ++i) VENDOR_TRY(run(i));
  VENDOR_TRY_RT(hipStreamSynchronize(s));
  std::vector<float> ms(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    VENDOR_TRY_RT(hipEventRecord(ev.e0, s));
    VENDOR_TRY(run(i));
    VENDOR_TRY_RT(hipEventRecord(ev.e1, s));
    VENDOR_TRY_RT(hipEventSynchronize(ev.e1));
    VENDOR_TRY_RT(hipEventElapsedTime(&ms[size_t(i)], ev.e0, ev.e1));
  }
  std::sort(ms.begin(), ms.end());
  *us = 1e3 * ms[ms.size() / 2];
  return {};
}

// Relative L2 distance of two bf16 outputs; false when either holds a non-finite value.
inline bool rel_l2(const std::vector<uint16_t>& got, const std::vector<uint16_t>& ref, double* rel) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    const double a = vaeconv::bf16_to_float(got[i]), b = vaeconv::bf16_to_float(ref[i]);
    if (!std::isfinite(a) || !std::isfinite(b)) return false;
    num += (a - b) * (a - b);
    den += b * b;
  }
  *rel = got.size() != ref.size() ? INFINITY : den > 0 ? std::sqrt(num / den) : 0.0;
  return true;
}

// Empty when the vendor's output dimensions (N, C, H, W) are vaeconv's, else what differs.
inline std::string output_size_mismatch(const char* vendor, const vaeconv::ConvDesc& d,
                                        const VendorConv& vc, int on, int oc, int oh, int ow) {
  if (on == vc.frames && oc == vc.cout && oh == d.out_h() && ow == d.out_w()) return {};
  return std::string(vendor) + "'s output " + std::to_string(on) + "x" + std::to_string(oc) + "x" +
         std::to_string(oh) + "x" + std::to_string(ow) + " (NCHW) differs from vaeconv's " +
         std::to_string(vc.frames) + "x" + std::to_string(vc.cout) + "x" + std::to_string(d.out_h()) +
         "x" + std::to_string(d.out_w());
}

// vendor_bench's result (or one path's, R = VendorPath) around a baseline's run_shape (run(&r)
// fills r and returns an error or ""): after an error the sticky runtime error is cleared and the
// device drained, so the next shape starts clean.
template <class R = VendorResult, class Run>
R vendor_result(const Run& run) {
  R r;
  r.error = run(&r);
  if (!r.error.empty()) {
    r.ran = false;
    (void)hipGetLastError();
    (void)hipDeviceSynchronize();
  }
  return r;
}

// --- What a vendor path does around its own conv and bias calls --------------------------------
// One shape's device buffers (released on every return path) and the steps both baselines take
// with them, so that cuDNN and MIOpen are set up, checked and timed the same way:
//   upload()          the bf16 KRSC weights, and the bias as bf16 (the vendor's bias op) and fp32
//                     (the plain kernel);
//   prepare_inputs()  the pre-padded / pre-upsampled copies of xs the conv alone is timed on
//                     (rotated like vaeconv's inputs: >= 256 MB in all, at most 16 copies), and
//                     the pipeline's intermediate buffer; conv_in is then those copies, else xs;
//   check_time_fetch() after the vendor has chosen its algorithm (on conv_in[0], ys[0]); with
//                     --profile and a profile_label, it then runs the engine once more inside a
//                     profiler bracket (profile_bracket.hpp).
class ShapeRun {
 public:
  ShapeRun(const vaeconv::ConvDesc& d, const std::vector<void*>& xs, const std::vector<void*>& ys,
           int iters, hipStream_t stream)
      : vc(d), conv_in(xs), y_bytes(size_t(d.out_elements()) * 2), y_elems(d.out_elements()),
        kind_(d.kind), xs_(xs), ys_(ys), iters_(iters), stream_(stream) {}
  ShapeRun(const ShapeRun&) = delete;
  ShapeRun& operator=(const ShapeRun&) = delete;
  ~ShapeRun() {
    for (void* p : xp_) (void)hipFree(p);
    for (void* p : {w, b, tmp_, static_cast<void*>(bias_f32)})
      if (p) (void)hipFree(p);
  }

  const VendorConv vc;
  void *w = nullptr, *b = nullptr;  // bf16 weights [Cout][3][3][Cin], bf16 bias [Cout]
  float* bias_f32 = nullptr;        // fp32 bias [Cout]
  std::vector<void*> conv_in;       // the vendor conv's inputs
  const size_t y_bytes;
  const int64_t y_elems;
  const char* profile_label = nullptr;  // the path's --profile label ("cudnn legacy", ...); null: none

  std::string upload(const std::vector<uint16_t>& w_krsc, const std::vector<float>& bias) {
    std::vector<uint16_t> b16(bias.size());
    for (size_t i = 0; i < bias.size(); ++i) b16[i] = vaeconv::float_to_bf16(bias[i]);
    VENDOR_TRY_RT(hipMalloc(&w, w_krsc.size() * 2));
    VENDOR_TRY_RT(hipMalloc(&b, b16.size() * 2));
    VENDOR_TRY_RT(hipMalloc(reinterpret_cast<void**>(&bias_f32), bias.size() * 4));
    VENDOR_TRY_RT(hipMemcpy(w, w_krsc.data(), w_krsc.size() * 2, hipMemcpyHostToDevice));
    VENDOR_TRY_RT(hipMemcpy(b, b16.data(), b16.size() * 2, hipMemcpyHostToDevice));
    VENDOR_TRY_RT(hipMemcpy(bias_f32, bias.data(), bias.size() * 4, hipMemcpyHostToDevice));
    return {};
  }

  std::string prepare_inputs() {
    if (!vc.has_prep) return {};
    const size_t prep_bytes = vc.prep_bytes();
    const size_t copies =
        std::max<size_t>(1, std::min<size_t>(16, (size_t(256) << 20) / (prep_bytes + y_bytes)));
    for (size_t i = 0; i < copies; ++i) {
      void* p = nullptr;
      VENDOR_TRY_RT(hipMalloc(&p, prep_bytes));
      xp_.push_back(p);
      VENDOR_TRY(prep(xs_[i % xs_.size()], p));
    }
    conv_in = xp_;
    VENDOR_TRY_RT(hipMalloc(&tmp_, prep_bytes));
    return {};
  }

  // The ways the vendor path adds the bias, by index: way ref is the plain kernel (the reference
  // every other way's output must match), names[way] names a way in the notes.
  template <int kWays>
  struct Ways {
    const char* const (&names)[kWays];
    bool (&usable)[kWays];
    int ref;
  };
  struct Times {
    double conv_nobias_us = 0, pipeline_us = 0;
    int best_way = -1;  // the fastest usable way
    std::string notes;  // ways not used, and why
  };

  // conv(x, y): the vendor conv alone; conv_bias(way, x, y): the conv with its bias added `way`.
  // Each way's output on conv_in[0] (y poisoned first) is checked against the reference way's, and
  // a way that fails or disagrees (rel L2 > 1e-2, or non-finite) is not used. Then the conv alone
  // and each usable way are timed (way_us[way], 0 when not used), the engine's pipeline (pad /
  // upsample, then the fastest way) too, and its output on xs[0] (poisoned first) goes to y_host.
  // The (input, output) pairs that check_time_fetch's loops pass to the vendor conv, f(x, y) for
  // each (a vendor that binds buffers ahead, like cuDNN's variant packs, makes them all at setup):
  // the conv-alone and per-way loops' conv_in and ys, the pipeline's pad / upsample output (down,
  // up; xs for the causal conv) and ys.
  template <class F>
  std::string for_each_timed_pair(const F& f) const {
    const size_t runs = size_t(std::max(iters_, kWarmup));
    for (size_t i = 0; i < runs; ++i) {
      void* y = ys_[i % ys_.size()];
      VENDOR_TRY(f(conv_in[i % conv_in.size()], y));
      if (vc.has_prep) VENDOR_TRY(f(static_cast<const void*>(tmp_), y));
      else VENDOR_TRY(f(xs_[i % xs_.size()], y));
    }
    return {};
  }

  template <int kWays, class Conv, class ConvBias>
  std::string check_time_fetch(const Ways<kWays>& ways, const Conv& conv, const ConvBias& conv_bias,
                               double (&way_us)[kWays], Times* t, std::vector<uint16_t>* y_host) {
    auto output_of = [&](int way, std::vector<uint16_t>* out) -> std::string {
      VENDOR_TRY_RT(hipStreamSynchronize(stream_));
      VENDOR_TRY_RT(hipMemset(ys_[0], 0xFF, y_bytes));
      VENDOR_TRY(conv_bias(way, conv_in[0], ys_[0]));
      VENDOR_TRY_RT(hipStreamSynchronize(stream_));
      out->resize(size_t(y_elems));
      VENDOR_TRY_RT(hipMemcpy(out->data(), ys_[0], y_bytes, hipMemcpyDeviceToHost));
      return {};
    };
    std::vector<uint16_t> ref, got;
    VENDOR_TRY(output_of(ways.ref, &ref));
    for (int way = 0; way < kWays; ++way) {
      if (way == ways.ref || !ways.usable[way]) continue;
      const std::string e = output_of(way, &got);
      double rel = 0;
      const bool finite = e.empty() && rel_l2(got, ref, &rel);
      if (!e.empty() || !finite || rel > 1e-2) {
        ways.usable[way] = false;
        char buf[64];
        std::snprintf(buf, sizeof buf, "rel L2 %.2e", rel);
        t->notes += std::string(ways.names[way]) + " not used: " +
                    (e.empty() ? (finite ? std::string(buf) + " vs the plain kernel"
                                         : std::string("non-finite output"))
                               : e) +
                    "; ";
      }
      (void)hipGetLastError();
    }

    // Timing: the conv alone, then each usable way with its bias.
    Events ev;
    VENDOR_TRY(ev.create());
    auto conv_alone = [&](int i) {
      return conv(conv_in[size_t(i) % conv_in.size()], ys_[size_t(i) % ys_.size()]);
    };
    VENDOR_TRY(time_median(conv_alone, iters_, stream_, ev, &t->conv_nobias_us));
    for (int way = 0; way < kWays; ++way) {
      way_us[way] = 0;
      if (!ways.usable[way]) continue;
      auto run = [&](int i) {
        return conv_bias(way, conv_in[size_t(i) % conv_in.size()], ys_[size_t(i) % ys_.size()]);
      };
      VENDOR_TRY(time_median(run, iters_, stream_, ev, &way_us[way]));
      if (t->best_way < 0 || way_us[way] < way_us[t->best_way]) t->best_way = way;
    }

    // What an engine runs: pad / upsample, then the conv with the fastest bias way.
    auto pipeline = [&](int i) -> std::string {
      void* y = ys_[size_t(i) % ys_.size()];
      const void* x = xs_[size_t(i) % xs_.size()];
      if (vc.has_prep) {
        VENDOR_TRY(prep(x, tmp_));
        x = tmp_;
      }
      return conv_bias(t->best_way, x, y);
    };
    if (vc.has_prep) VENDOR_TRY(time_median(pipeline, iters_, stream_, ev, &t->pipeline_us));
    else t->pipeline_us = way_us[t->best_way];

    // The output for the full comparison with vaeconv: poison, run the pipeline on xs[0], fetch.
    VENDOR_TRY_RT(hipStreamSynchronize(stream_));
    VENDOR_TRY_RT(hipMemset(ys_[0], 0xFF, y_bytes));
    VENDOR_TRY(pipeline(0));
    VENDOR_TRY_RT(hipStreamSynchronize(stream_));
    y_host->resize(size_t(y_elems));
    VENDOR_TRY_RT(hipMemcpy(y_host->data(), ys_[0], y_bytes, hipMemcpyDeviceToHost));

    // --profile: the engine once more, alone in the profiler's range.
    if (profile_label && profile_state().on) {
      const std::string prep = !vc.has_prep ? ""
                               : kind_ == vaeconv::ConvKind::kDownsample ? "pad kernel + "
                                                                         : "upsample kernel + ";
      profile_bracket(profile_label, prep + "conv + bias: " + ways.names[t->best_way],
                      [&] { return pipeline(0); });
    }
    return {};
  }

 private:
  std::string prep(const void* x, void* y) const { return run_prep(vc, kind_, x, y, stream_); }

  const vaeconv::ConvKind kind_;
  const std::vector<void*>& xs_;
  const std::vector<void*>& ys_;
  const int iters_;
  const hipStream_t stream_;
  std::vector<void*> xp_;  // pre-padded / pre-upsampled inputs (down, up)
  void* tmp_ = nullptr;    // the pipeline's pad / upsample output
};

}  // namespace vaeconv_bench::vendor
