// vaeconv/conv/conv_desc.hpp — what one convolution is, independent of how it is computed.
//
// A ConvDesc describes a 3D convolution over NDHWC tensors (a 2D conv is T = 1 with kt = 1):
//
//   x  : [N, T, H, W, Cin]        the input as stored (before any pad or upsample)
//   x' : x upsampled by `upsample` in H and W (nearest-exact), then zero-padded by `pad`
//   y  : [N, To, Ho, Wo, Cout]    y[n,t,h,w,co] = bias[co] + sum_{kt,kh,kw,ci}
//                                   x'[n, t*st + kt, h*sh + kh, w*sw + kw, ci] * w[co,ci,kt,kh,kw]
//
// The three conv kinds of the Qwen-Image / Wan VAE are factories below; the CPU reference
// computes any ConvDesc, the GPU kernels accept the subset validate_for_kernels() admits.
// Sizes are int64 so that products never wrap before validation has looked at them.
#pragma once
#include <cstdint>
#include <string>

#include "vaeconv/core/dtype.hpp"
#include "vaeconv/core/status.hpp"

namespace vaeconv {

enum class ConvKind : int {
  kCausal3x3x3 = 0,  // QwenImageCausalConv3d: 3x3x3, stride 1, pad H/W 1, time pad (2 front, 0 back)
  kDownsample = 1,   // ZeroPad2d((0,1,0,1)) then 3x3 stride 2, pad 0 (per frame)
  kUpsample = 2,     // nearest-exact x2 in H and W, then 3x3 stride 1, pad 1 (per frame)
  kTemporal = 3,     // WanResample's time_conv: (3,1,1) over T, causal; stride 1 (upsample3d,
                     // Cout = 2C stored as two frames) or 2 (downsample3d, one cached frame)
};

inline const char* to_string(ConvKind k) {
  switch (k) {
    case ConvKind::kCausal3x3x3: return "causal3x3x3";
    case ConvKind::kDownsample: return "downsample";
    case ConvKind::kUpsample: return "upsample";
    case ConvKind::kTemporal: return "temporal3x1x1";
  }
  return "unknown";
}

enum class UpsampleMode : int { kNone = 0, kNearestExact = 1 };

// Zero padding in elements, per side, applied after the upsample.
struct Padding {
  int t_front = 0, t_back = 0;
  int h_top = 0, h_bottom = 0;
  int w_left = 0, w_right = 0;
};

// Element strides of an NDHWC tensor. Dense NDHWC is c = 1, w = C, h = W*C, t = H*W*C, n = T*H*W*C.
struct Strides5 {
  int64_t n = 0, t = 0, h = 0, w = 0, c = 0;
  static Strides5 dense(int64_t T, int64_t H, int64_t W, int64_t C) {
    return {T * H * W * C, H * W * C, W * C, C, 1};
  }
};

struct ConvDesc {
  ConvKind kind = ConvKind::kCausal3x3x3;
  int64_t n = 1, t = 1, h = 1, w = 1;  // input sizes, as stored
  int64_t cin = 1, cout = 1;
  int kt = 3, kh = 3, kw = 3;          // kernel taps
  int stride_t = 1, stride_h = 1, stride_w = 1;
  Padding pad;
  int upsample = 1;                    // factor in H and W (1 = none)
  UpsampleMode upsample_mode = UpsampleMode::kNone;
  DType in_dtype = DType::kBF16, weight_dtype = DType::kBF16, out_dtype = DType::kBF16;
  Strides5 in_strides, out_strides;    // filled densely by the factories
  // The streaming cache of a chunked video conv (Wan / Qwen-Image feat_cache): cache_frames
  // (0..2) frames, a separate NDHWC tensor [N, cache_frames, H, W, Cin] with cache_strides, that
  // stand in front of x's T frames. The conv is the one over cat(cache, x) along T, which
  // pad.t_front then pads (causal: 2 - cache_frames, so T_out = T); nothing is concatenated.
  int cache_frames = 0;
  Strides5 cache_strides;
  // Wan's upsample3d: the conv's Cout = 2C channels are two frames per time step. y is stored as
  // [N, 2 T_out, H, W, C]: conv channel s C + c of time t is frame 2 t + s, channel c
  // (diffusers reshapes (b, 2, c, t, h, w) and stacks the halves along T). out_strides are the
  // stored tensor's (out_frames_stored, out_channels_stored).
  bool interleave_halves = false;

  // --- The three VAE conv kinds ------------------------------------------------------------
  // Causal 3x3x3 over [N, T, H, W, C]. For T = 1 only the kt = 2 weight slice sees data.
  static ConvDesc causal3x3x3(int64_t n, int64_t t, int64_t h, int64_t w, int64_t cin,
                              int64_t cout, DType dt = DType::kBF16) {
    return vae_conv(ConvKind::kCausal3x3x3, n, t, h, w, cin, cout, dt);
  }
  // ZeroPad2d((0,1,0,1)) + Conv2d(k=3, s=2, p=0), per frame of [N, T, H, W, C].
  static ConvDesc downsample(int64_t n, int64_t t, int64_t h, int64_t w, int64_t cin,
                             int64_t cout, DType dt = DType::kBF16) {
    return vae_conv(ConvKind::kDownsample, n, t, h, w, cin, cout, dt);
  }
  // The causal 3x3x3 conv of a video chunk: t new frames after cache_frames (0..2) cached ones
  // (ConvArgs::cache); the zero front pad is only what the cache does not fill (2 - cache_frames).
  static ConvDesc causal3x3x3_cached(int64_t n, int64_t t, int64_t h, int64_t w, int64_t cin,
                                     int64_t cout, int cache_frames, DType dt = DType::kBF16) {
    ConvDesc d = causal3x3x3(n, t, h, w, cin, cout, dt);
    d.cache_frames = cache_frames;
    d.pad.t_front = 2 - cache_frames;
    d.set_dense_strides();
    return d;
  }
  // WanResample's time_conv, a (3, 1, 1) causal conv over T with cache_frames cached frames in
  // front: stride 1 (upsample3d: front pad 2 - cache_frames, Cout = 2C interleaved into frames)
  // or stride 2 (downsample3d: front pad 1 - cache_frames, diffusers passes one cached frame).
  static ConvDesc temporal3x1x1(int64_t n, int64_t t, int64_t h, int64_t w, int64_t cin,
                                int64_t cout, int stride_t, int cache_frames,
                                DType dt = DType::kBF16) {
    ConvDesc d = vae_conv(ConvKind::kTemporal, n, t, h, w, cin, cout, dt);
    d.stride_t = stride_t;
    d.cache_frames = cache_frames;
    d.pad.t_front = (stride_t == 1 ? 2 : 1) - cache_frames;
    d.interleave_halves = stride_t == 1;
    d.set_dense_strides();
    return d;
  }
  // Upsample(nearest-exact, x2) + Conv2d(k=3, s=1, p=1), per frame; h, w are the source sizes.
  static ConvDesc upsample2x(int64_t n, int64_t t, int64_t h, int64_t w, int64_t cin,
                             int64_t cout, DType dt = DType::kBF16) {
    return vae_conv(ConvKind::kUpsample, n, t, h, w, cin, cout, dt);
  }
  // The conv of kind `kind` as the VAE runs it (the factories above): 3 x 3 spatial taps, and
  // per kind its time taps, stride, padding and upsample; dense tensors.
  static ConvDesc vae_conv(ConvKind kind, int64_t n, int64_t t, int64_t h, int64_t w, int64_t cin,
                           int64_t cout, DType dt = DType::kBF16) {
    ConvDesc d;
    d.kind = kind;
    d.n = n; d.t = t; d.h = h; d.w = w; d.cin = cin; d.cout = cout;
    d.kt = kind == ConvKind::kCausal3x3x3 ? 3 : 1;
    d.kh = 3; d.kw = 3;
    switch (kind) {
      case ConvKind::kCausal3x3x3: d.pad = {2, 0, 1, 1, 1, 1}; break;
      case ConvKind::kDownsample:
        d.stride_h = d.stride_w = 2;
        d.pad = {0, 0, 0, 1, 0, 1};
        break;
      case ConvKind::kUpsample:
        d.pad = {0, 0, 1, 1, 1, 1};
        d.upsample = 2;
        d.upsample_mode = UpsampleMode::kNearestExact;
        break;
      case ConvKind::kTemporal:  // temporal3x1x1's stride-1 form, without a cache
        d.kt = 3;
        d.kh = d.kw = 1;
        d.pad = {2, 0, 0, 0, 0, 0};
        d.interleave_halves = true;
        break;
    }
    d.set_dtypes(dt);
    d.set_dense_strides();
    return d;
  }

  // --- Derived sizes ----------------------------------------------------------------------------
  int64_t up_h() const { return h * upsample; }
  int64_t up_w() const { return w * upsample; }
  int64_t in_frames() const { return cache_frames + t; }  // the time axis of cat(cache, x)
  int64_t out_t() const { return (in_frames() + pad.t_front + pad.t_back - kt) / stride_t + 1; }
  int64_t out_h() const { return (up_h() + pad.h_top + pad.h_bottom - kh) / stride_h + 1; }
  int64_t out_w() const { return (up_w() + pad.w_left + pad.w_right - kw) / stride_w + 1; }
  int taps() const { return kt * kh * kw; }
  // The stored output (interleave_halves: two frames of Cout / 2 channels per conv frame).
  int64_t out_frames_stored() const { return interleave_halves ? 2 * out_t() : out_t(); }
  int64_t out_channels_stored() const { return interleave_halves ? cout / 2 : cout; }

  // Taps the GEMM runs: at T = 1 without a cache the causal conv's time pad leaves only slice
  // kt = 2 facing data, so it is the 2D 3x3 conv (9 taps); otherwise every tap.
  int gemm_taps() const {
    return (kind == ConvKind::kCausal3x3x3 && t == 1 && cache_frames == 0) ? kh * kw : taps();
  }
  // The implicit GEMM: M output pixels, N output channels, K = gemm_taps * Cin.
  int64_t gemm_m() const { return n * out_t() * out_h() * out_w(); }
  int64_t gemm_n() const { return cout; }
  int64_t gemm_k() const { return int64_t(gemm_taps()) * cin; }
  double flops() const { return 2.0 * double(gemm_m()) * double(gemm_n()) * double(gemm_k()); }

  int64_t in_elements() const { return n * t * h * w * cin; }
  int64_t out_elements() const { return gemm_m() * cout; }

  void set_dtypes(DType dt) {
    in_dtype = dt;
    weight_dtype = dt;
    out_dtype = DType::kBF16;  // FP8 convs write bf16 unless asked otherwise
  }
  void set_dense_strides() {
    in_strides = Strides5::dense(t, h, w, cin);
    out_strides = Strides5::dense(out_frames_stored(), out_h(), out_w(), out_channels_stored());
    cache_strides = Strides5::dense(cache_frames, h, w, cin);
  }

  std::string to_string() const;

  // Checks that the descriptor is a well-formed convolution (any the CPU reference can run).
  Status validate() const;
};

}  // namespace vaeconv

#include "vaeconv/conv/conv_desc_validate.hpp"
