// video_vendor_run.hpp — what both cuDNN paths of the video rows do around their conv3d
// (video_vendor.hpp): the engine's cat and pad, the buffers, and the check-and-time sequence of
// vendor_common.hpp's ShapeRun with the video input (two tensors, cache and x, per rotated copy).
//
// The engine's copies, each one pass: cat = two device-to-device copies (N = 1: the cache's frames,
// then x's, into one [T_in, H, W, C] tensor); pad = one kernel writing every element of the
// [T_in + front, H + 2, W + 2, C] input of the conv (zeros in the causal front frames and the
// spatial border). PyTorch's F.pad fills the whole output and then copies the interior (two
// passes), so this engine is, if anything, faster than diffusers' own.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vendor_common.hpp"

namespace vaeconv_bench::vendor {

// y[t][h][w] = x[t - front][h - 1][w - 1] inside, 0 in the front frames and the border; Vec = 8
// bf16 channels (C % 8 == 0, which the cached conv requires).
template <class Vec>
__global__ void causal_pad3d_kernel(const Vec* __restrict__ x, Vec* __restrict__ y, int tp, int front, int h,
                                    int w, int cv) {
  const int64_t total = int64_t(tp) * (h + 2) * (w + 2) * cv;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % cv, p = i / cv;
    const int64_t ow = p % (w + 2), oh = (p / (w + 2)) % (h + 2), ot = p / (int64_t(w + 2) * (h + 2));
    const int64_t it = ot - front, ih = oh - 1, iw = ow - 1;
    Vec v{};
    if (it >= 0 && ih >= 0 && ih < h && iw >= 0 && iw < w) v = x[((it * h + ih) * w + iw) * cv + c];
    y[i] = v;
  }
}

class VideoRun {
 public:
  VideoRun(const vaeconv::ConvDesc& d, const std::vector<void*>& caches, const std::vector<void*>& xs,
           const std::vector<void*>& ys, int iters, hipStream_t stream)
      : d(d), tp(int(d.in_frames() + d.pad.t_front)), hp(int(d.h + 2)), wp(int(d.w + 2)),
        y_bytes(size_t(d.out_elements()) * 2), y_elems(d.out_elements()), caches_(caches), xs_(xs), ys_(ys),
        iters_(iters), stream_(stream) {}
  VideoRun(const VideoRun&) = delete;
  VideoRun& operator=(const VideoRun&) = delete;
  ~VideoRun() {
    for (void* p : padded) (void)hipFree(p);
    for (void* p : {w, cat_, pad_, static_cast<void*>(bias_f32)})
      if (p) (void)hipFree(p);
  }

  const vaeconv::ConvDesc& d;
  const int tp, hp, wp;             // the conv3d's (padded) input: [tp][hp][wp][C]
  void* w = nullptr;                // bf16 [Cout][3][3][3][Cin]
  float* bias_f32 = nullptr;        // fp32 [Cout]
  std::vector<void*> padded;        // ready padded inputs, one per rotated copy ("conv alone")
  const size_t y_bytes;
  const int64_t y_elems;
  const char* profile_label = nullptr;  // the path's --profile label ("cudnn legacy", ...); null: none

  // Empty when the problem is one this run takes, else why not.
  std::string unsupported() const {
    if (d.kind != vaeconv::ConvKind::kCausal3x3x3 || d.cache_frames < 1 || d.n != 1 || d.cin % 8)
      return "the video baseline runs the cached causal conv with N = 1 and C % 8 == 0";
    if (caches_.empty() || caches_.size() != xs_.size() || ys_.empty()) return "no buffers";
    return {};
  }

  std::string upload(const std::vector<uint16_t>& w_ktrsc, const std::vector<float>& bias) {
    VENDOR_TRY_RT(hipMalloc(&w, w_ktrsc.size() * 2));
    VENDOR_TRY_RT(hipMalloc(reinterpret_cast<void**>(&bias_f32), bias.size() * 4));
    VENDOR_TRY_RT(hipMemcpy(w, w_ktrsc.data(), w_ktrsc.size() * 2, hipMemcpyHostToDevice));
    VENDOR_TRY_RT(hipMemcpy(bias_f32, bias.data(), bias.size() * 4, hipMemcpyHostToDevice));
    return {};
  }

  // The engine's intermediate tensors, and one ready padded input per rotated copy.
  std::string prepare_inputs() {
    VENDOR_TRY_RT(hipMalloc(&cat_, size_t(d.in_frames() * frame_elems()) * 2));
    VENDOR_TRY_RT(hipMalloc(&pad_, padded_bytes()));
    for (size_t i = 0; i < xs_.size(); ++i) {
      void* p = nullptr;
      VENDOR_TRY_RT(hipMalloc(&p, padded_bytes()));
      padded.push_back(p);
      VENDOR_TRY(cat_pad(i, p));
    }
    VENDOR_TRY_RT(hipStreamSynchronize(stream_));
    return {};
  }

  // The (input, output) pairs check_time_fetch passes to the conv (for cuDNN's variant packs).
  template <class F>
  std::string for_each_timed_pair(const F& f) const {
    const size_t runs = size_t(std::max(iters_, kWarmup));
    for (size_t i = 0; i < runs; ++i) {
      void* y = ys_[i % ys_.size()];
      VENDOR_TRY(f(static_cast<const void*>(padded[i % padded.size()]), y));
      VENDOR_TRY(f(static_cast<const void*>(pad_), y));
    }
    return {};
  }

  // As ShapeRun::check_time_fetch: each usable bias way's output checked against the reference
  // way's on padded[0]; then timed the conv alone, each way (conv alone + bias), and the engine
  // (cat + pad + conv + the fastest way); the engine's output on copy 0 goes to y_host. With
  // --profile and a profile_label, the engine then runs once more inside a profiler bracket.
  template <int kWays, class Conv, class ConvBias>
  std::string check_time_fetch(const ShapeRun::Ways<kWays>& ways, const Conv& conv, const ConvBias& conv_bias,
                               double (&way_us)[kWays], ShapeRun::Times* t, std::vector<uint16_t>* y_host) {
    auto fetch = [&](std::vector<uint16_t>* out) -> std::string {
      VENDOR_TRY_RT(hipStreamSynchronize(stream_));
      out->resize(size_t(y_elems));
      VENDOR_TRY_RT(hipMemcpy(out->data(), ys_[0], y_bytes, hipMemcpyDeviceToHost));
      return {};
    };
    auto output_of = [&](int way, std::vector<uint16_t>* out) -> std::string {
      VENDOR_TRY_RT(hipStreamSynchronize(stream_));
      VENDOR_TRY_RT(hipMemset(ys_[0], 0xFF, y_bytes));
      VENDOR_TRY(conv_bias(way, padded[0], ys_[0]));
      return fetch(out);
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
                    (e.empty() ? (finite ? std::string(buf) + " vs the plain kernel" : std::string("non-finite output"))
                               : e) +
                    "; ";
      }
      (void)hipGetLastError();
    }
    Events ev;
    VENDOR_TRY(ev.create());
    auto y_of = [&](int i) { return ys_[size_t(i) % ys_.size()]; };
    auto in_of = [&](int i) { return static_cast<const void*>(padded[size_t(i) % padded.size()]); };
    VENDOR_TRY(time_median([&](int i) { return conv(in_of(i), y_of(i)); }, iters_, stream_, ev, &t->conv_nobias_us));
    for (int way = 0; way < kWays; ++way) {
      way_us[way] = 0;
      if (!ways.usable[way]) continue;
      VENDOR_TRY(time_median([&](int i) { return conv_bias(way, in_of(i), y_of(i)); }, iters_, stream_, ev,
                             &way_us[way]));
      if (t->best_way < 0 || way_us[way] < way_us[t->best_way]) t->best_way = way;
    }
    auto engine = [&](int i) -> std::string {
      VENDOR_TRY(cat_pad(size_t(i) % xs_.size(), pad_));
      return conv_bias(t->best_way, pad_, y_of(i));
    };
    VENDOR_TRY(time_median(engine, iters_, stream_, ev, &t->pipeline_us));
    VENDOR_TRY_RT(hipStreamSynchronize(stream_));
    VENDOR_TRY_RT(hipMemset(ys_[0], 0xFF, y_bytes));
    VENDOR_TRY(engine(0));
    VENDOR_TRY(fetch(y_host));
    if (profile_label && profile_state().on)
      profile_bracket(profile_label, std::string("cat (2 copies) + pad kernel + conv3d + bias: ") +
                                         ways.names[t->best_way],
                      [&] { return engine(0); });
    return {};
  }

 private:
  int64_t frame_elems() const { return d.h * d.w * d.cin; }
  size_t padded_bytes() const { return size_t(tp) * hp * wp * size_t(d.cin) * 2; }

  // cat(cache_i, x_i) along T into cat_, then its causal + spatial pad into out.
  std::string cat_pad(size_t i, void* out) const {
    const size_t cache_bytes = size_t(d.cache_frames * frame_elems()) * 2;
    VENDOR_TRY_RT(hipMemcpyAsync(cat_, caches_[i], cache_bytes, hipMemcpyDeviceToDevice, stream_));
    VENDOR_TRY_RT(hipMemcpyAsync(static_cast<char*>(cat_) + cache_bytes, xs_[i], size_t(d.t * frame_elems()) * 2,
                                 hipMemcpyDeviceToDevice, stream_));
    const int cv = int(d.cin / 8);
    causal_pad3d_kernel<<<grid_for(int64_t(tp) * hp * wp * cv), 256, 0, stream_>>>(
        static_cast<const uint4*>(cat_), static_cast<uint4*>(out), tp, int(d.pad.t_front), int(d.h), int(d.w), cv);
    VENDOR_TRY_RT(hipGetLastError());
    return {};
  }

  const std::vector<void*>& caches_;
  const std::vector<void*>& xs_;
  const std::vector<void*>& ys_;
  const int iters_;
  const hipStream_t stream_;
  void* cat_ = nullptr;  // the engine's cat output [T_in][H][W][C]
  void* pad_ = nullptr;  // the engine's pad output, the conv's input [tp][hp][wp][C]
};

}  // namespace vaeconv_bench::vendor
