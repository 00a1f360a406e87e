// vendor_common.hpp — what the vendor baselines share (cudnn_baseline.cpp, miopen_baseline.cpp):
// the conv the vendor library runs for a vaeconv problem, the kernels an engine runs beside it
// (ZeroPad2d((0,1,0,1)), nearest-exact x2, an fp32 bias add), median event timing and the
// comparison of two bf16 outputs. Written with hip* names; vaeconv/arch/runtime.hpp maps them to
// CUDA on NVIDIA, so both baselines run the same pad, upsample and bias code.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/core/numerics_bf16.hpp"

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

}  // namespace vaeconv_bench::vendor
