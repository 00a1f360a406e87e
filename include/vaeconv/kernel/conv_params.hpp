// vaeconv/kernel/conv_params.hpp — the plain-data view of one conv launch, built on the host.
//
// Index widths: a block never leaves one output frame (n, t), so everything inside a frame is
// addressed with 32-bit offsets from a frame base that is formed in 64 bits. validate_for_kernels()
// guarantees the frame-local spans fit: that is how tensors past 2^31 elements stay correct.
#pragma once
#include <cstdint>

namespace vaeconv::kernel {

struct ConvParams {
  const void* x = nullptr;        // input  [N, T, H, W, Cin]   (in_* strides, elements)
  const void* w = nullptr;        // packed weights [Cout][k_pad], K = (kt, kh, kw, cin)
  const float* bias = nullptr;    // [Cout] or null
  const void* residual = nullptr; // like y, or null
  void* y = nullptr;              // output [N, To, Ho, Wo, Cout] (out_* strides, elements)
  // FP8 only (null for bf16): y = acc * x_scale[0] * w_scale[n] (+ bias, + residual); an fp8
  // output stores e4m3fn(y / y_scale[0]). Scales live on the device: no host round trip.
  const float* x_scale = nullptr;
  const float* w_scale = nullptr;
  const float* y_scale = nullptr;
  bool y_fp8 = false;

  int h = 0, w_ = 0, t = 0;       // input sizes (source sizes for the upsample conv)
  int cin = 0, cout = 0;
  int ho = 0, wo = 0, to = 0;
  int frame_pixels = 0;           // ho * wo: the M extent of one frame

  int64_t in_sn = 0, in_st = 0;   // 64-bit: frame bases
  int in_sh = 0, in_sw = 0;       // 32-bit: offsets inside a frame
  int64_t out_sn = 0, out_st = 0;
  int out_sh = 0, out_sw = 0;

  int k = 0;                      // GEMM K = taps * cin
  int k_pad = 0;                  // packed weight row stride (a multiple of 128 bytes)
  int taps_t = 1;                 // time taps in the packed weights (1, or 3 for T > 1 causal)
  int kt_base = 0;                // time tap of the first packed slice (2 for the T = 1 slice)
  int pad_t = 0;                  // time padding in front (2 for causal, 0 otherwise)
  int stride_t = 1;               // TemporalGeometry: output frame ot reads from frame ot * stride_t

  int m_blocks = 0;               // blocks along one frame's pixels
  int m_begin = 0;                // the first of them starts at this pixel (a tail launch's split)
  int n_tiles = 0;                // blocks along Cout
  int tiles = 0;                  // block tiles in all (m_blocks * n_tiles * frames)
  int patch_cols = 0;             // tap-reduce kernel: output patches along a frame's width
  uint32_t x_view_bytes = 0;      // bytes addressable from a frame's input base
  uint32_t w_view_bytes = 0;      // bytes of the packed weights
  int tap_h0 = 0, tap_w0 = 0;     // UpsamplePhaseGeometry: the phase's tap window (conv_gather.hpp)
  // CachedCausalGeometry (cached_frames.hpp): the cached frames in front of x, a separate tensor
  // with x's in-frame strides; its frame base per batch is 64-bit, offsets inside 32-bit.
  const void* cache = nullptr;
  int cache_frames = 0;
  int64_t cache_sn = 0;
  int cache_st = 0;
  uint32_t cache_view_bytes = 0;  // bytes addressable from a batch's cache base
};

}  // namespace vaeconv::kernel
