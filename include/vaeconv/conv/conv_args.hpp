// vaeconv/conv/conv_args.hpp — the buffers of one conv call, and everything the kernels refuse.
//
// validate_for_kernels() is the contract of every GPU entry point: it returns a Status naming the
// offending value for null or misaligned pointers, unsupported sizes or dtypes, overlapping
// buffers and sizes whose products overflow the kernels' index types. make_params() turns an
// admitted call into the kernel's plain-data parameters. Both are host code, tested on the host.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/kernel/conv_params.hpp"

namespace vaeconv {

// Packed weights that live on the device (see DeviceWeights in api/device_weights.hpp).
struct WeightsView {
  const void* data = nullptr;
  PackedWeightsInfo info;
  const float* scales = nullptr;   // fp8: per packed row, [phases][Cout] (info.scale_count()),
                                   // the dequant scales (device)
};

struct ConvArgs {
  const void* x = nullptr;         // input, desc.in_strides
  WeightsView weights;             // packed for this desc
  const float* bias = nullptr;     // [Cout] fp32, optional
  const void* residual = nullptr;  // bf16 like the output (desc.out_strides), optional; may be y
  void* y = nullptr;               // output, desc.out_strides
  // FP8 operands: x holds e4m3fn bytes and x_scale (device, one float) its per-tensor scale, as
  // quantize_fp8 writes it. An fp8 output (desc.out_dtype) needs y_scale (device, one float).
  const float* x_scale = nullptr;
  const float* y_scale = nullptr;
  // The cached frames of a chunked causal conv (desc.cache_frames > 0): [N, cache_frames, H, W,
  // Cin] with desc.cache_strides, x's dtype (an fp8 cache shares x_scale). Read in place; the
  // next chunk's cache is the last two frames of cat(cache, x) (api/stream_cache.hpp writes it).
  const void* cache = nullptr;
};

namespace detail {

// Bytes spanned by an NDHWC tensor with these strides (last element's end).
inline int64_t tensor_span_bytes(const Strides5& s, int64_t n, int64_t t, int64_t h, int64_t w,
                                 int64_t c, DType dt) {
  const int64_t last = (n - 1) * s.n + (t - 1) * s.t + (h - 1) * s.h + (w - 1) * s.w + (c - 1);
  return (last + 1) * int64_t(size_of(dt));
}

inline bool ranges_overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + uint64_t(b_bytes) && pb < pa + uint64_t(a_bytes);
}

inline bool aligned(const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

// The conv kinds' exact geometry: the kernels fold these and nothing else into their gather.
inline bool is_canonical(const ConvDesc& d) {
  if (d.kind == ConvKind::kTemporal)  // ConvDesc::temporal3x1x1
    return d.kt == 3 && d.kh == 1 && d.kw == 1 && (d.stride_t == 1 || d.stride_t == 2) &&
           d.stride_h == 1 && d.stride_w == 1 &&
           d.pad.t_front + d.cache_frames == (d.stride_t == 1 ? 2 : 1) && d.pad.t_back == 0 &&
           d.pad.h_top == 0 && d.pad.h_bottom == 0 && d.pad.w_left == 0 && d.pad.w_right == 0 &&
           d.upsample == 1 && d.interleave_halves == (d.stride_t == 1);
  if (d.interleave_halves) return false;
  const ConvDesc c = ConvDesc::vae_conv(d.kind, d.n, d.t, d.h, d.w, d.cin, d.cout);
  return d.kt == c.kt && d.kh == c.kh && d.kw == c.kw && d.stride_t == c.stride_t &&
         d.stride_h == c.stride_h && d.stride_w == c.stride_w && d.pad.t_front + d.cache_frames == c.pad.t_front &&
         d.pad.t_back == c.pad.t_back && d.pad.h_top == c.pad.h_top &&
         d.pad.h_bottom == c.pad.h_bottom && d.pad.w_left == c.pad.w_left &&
         d.pad.w_right == c.pad.w_right && d.upsample == c.upsample &&
         d.upsample_mode == c.upsample_mode;
}

constexpr int64_t kInt31 = std::numeric_limits<int32_t>::max();

// The cached frames (desc.cache_frames, args.cache): read by the 16-byte gather in place, with
// x's in-frame strides (one 32-bit offset per row serves both tensors); never written by the conv.
inline Status validate_cache(const ConvDesc& d, const ConvArgs& a) {
  if (d.cache_frames == 0) {
    if (a.cache != nullptr) return invalid("a cache pointer was given but desc.cache_frames is 0");
    return Status::Ok();
  }
  if (a.cache == nullptr)
    return invalid("desc.cache_frames = " + std::to_string(d.cache_frames) +
                   " but the cache pointer is null");
  const int64_t chunk = 16 / int64_t(size_of(d.in_dtype));
  if (d.cin % chunk != 0)
    return unsupported("a cached conv needs Cin a multiple of " + std::to_string(chunk) +
                       " (the 16-byte gather); Cin = " + std::to_string(d.cin));
  if (!aligned(a.cache, 16)) return Status(StatusCode::kMisaligned, "cache must be 16-byte aligned");
  const Strides5& c = d.cache_strides;
  if (c.h != d.in_strides.h || c.w != d.in_strides.w)
    return unsupported("the cache's H and W strides (" + std::to_string(c.h) + ", " +
                       std::to_string(c.w) + ") must equal x's (" + std::to_string(d.in_strides.h) +
                       ", " + std::to_string(d.in_strides.w) + ")");
  if (c.n % chunk || c.t % chunk)
    return Status(StatusCode::kMisaligned, "cache strides must be multiples of " +
                                               std::to_string(chunk) + " elements");
  const int64_t esz = int64_t(size_of(d.in_dtype));
  if ((int64_t(d.cache_frames) * c.t + d.h * c.h) * esz > kInt31 || c.t > kInt31)
    return overflow("one batch's cache view exceeds 2^31 bytes");
  return Status::Ok();
}

}  // namespace detail

// The most frames (N * T_out) one call takes: the kernels decode a tile's frame as an int.
inline constexpr int64_t kMaxKernelFrames = detail::kInt31;

namespace detail {
// The fields in which weights packed as `got` differ from what the conv needs (`want`), each named
// with both values: e.g. "dtype fp8_e4m3 where this conv needs bf16".
inline std::string packed_weights_difference(const PackedWeightsInfo& got,
                                             const PackedWeightsInfo& want) {
  std::string out;
  auto field = [&out](const char* name, const std::string& g, const std::string& w) {
    if (g == w) return;
    out += (out.empty() ? "" : ", ") + std::string(name) + " " + g + " where this conv needs " + w;
  };
  const auto n = [](int64_t v) { return std::to_string(v); };
  field("kind", to_string(got.kind), to_string(want.kind));
  field("dtype", to_string(got.dtype), to_string(want.dtype));
  field("Cout", n(got.cout), n(want.cout));
  field("Cin", n(got.cin), n(want.cin));
  field("time taps", n(got.taps_t), n(want.taps_t));
  field("first time tap", n(got.kt_base), n(want.kt_base));
  field("K", n(got.k), n(want.k));
  field("row stride", n(got.k_pad), n(want.k_pad));
  field("phases", n(got.phases), n(want.phases));
  return out;
}
}  // namespace detail

inline Status validate_for_kernels(const ConvDesc& d, const ConvArgs& a) {
  using detail::invalid;
  using detail::overflow;
  using detail::unsupported;
  VAECONV_RETURN_IF_ERROR(d.validate());
  // Built only on a refusal: a valid call allocates nothing (conv_forward runs this every call).
  const auto what = [&d] { return " (" + d.to_string() + ")"; };
  if (!detail::is_canonical(d))
    return unsupported("the kernels run the three VAE conv kinds exactly as their ConvDesc "
                       "factories define them (taps, stride, pad, upsample)" + what());
  const bool fp8 = d.in_dtype == DType::kFP8E4M3;
  const bool y_fp8 = d.out_dtype == DType::kFP8E4M3;
  if (y_fp8 && !fp8) return unsupported("an fp8 output needs fp8 operands" + what());
  VAECONV_RETURN_IF_ERROR(detail::validate_cache(d, a));
  if (d.kind == ConvKind::kTemporal && d.cin % (16 / int64_t(size_of(d.in_dtype))) != 0)
    return unsupported("the temporal conv needs Cin a multiple of " +
                       std::to_string(16 / size_of(d.in_dtype)) + " (its 16-byte gather)" + what());

  // Pointers.
  if (a.x == nullptr) return invalid("input pointer x is null");
  if (a.y == nullptr) return invalid("output pointer y is null");
  if (a.weights.data == nullptr) return invalid("packed weights pointer is null");
  // Each misaligned pointer is named (the first one found, in argument order).
  const auto misaligned = [](const char* name, int bytes) {
    return Status(StatusCode::kMisaligned,
                  std::string(name) + " must be " + std::to_string(bytes) + "-byte aligned");
  };
  if (!detail::aligned(a.x, 16)) return misaligned("x", 16);
  if (!detail::aligned(a.weights.data, 16)) return misaligned("packed weights", 16);
  if (a.residual && !detail::aligned(a.residual, 16)) return misaligned("residual", 16);
  if (!detail::aligned(a.y, 16)) return misaligned("y", 16);
  if (a.bias && !detail::aligned(a.bias, 4)) return misaligned("bias", 4);
  if (fp8) {
    if (a.x_scale == nullptr) return invalid("fp8 input needs x_scale (device, one float)");
    if (a.weights.scales == nullptr) return invalid("fp8 weights need their per-channel scales");
    if (!detail::aligned(a.x_scale, 4)) return misaligned("x_scale", 4);
    if (!detail::aligned(a.weights.scales, 4)) return misaligned("weight scales", 4);
  }
  if (y_fp8 && a.y_scale == nullptr) return invalid("fp8 output needs y_scale (device, one float)");
  if (a.y_scale && !detail::aligned(a.y_scale, 4))
    return Status(StatusCode::kMisaligned, "y_scale must be 4-byte aligned");
  // Vector (16-byte) access needs every pixel to start on a 16-byte boundary.
  const int64_t chunk_in = 16 / int64_t(size_of(d.in_dtype));
  if (d.cin % chunk_in == 0 && (d.in_strides.n % chunk_in || d.in_strides.t % chunk_in ||
                                d.in_strides.h % chunk_in || d.in_strides.w % chunk_in))
    return Status(StatusCode::kMisaligned,
                  "input strides must be multiples of " + std::to_string(chunk_in) +
                      " elements when Cin is" + what());
  if (d.out_channels_stored() % 8 == 0 &&
      (d.out_strides.n % 8 || d.out_strides.t % 8 || d.out_strides.h % 8 ||
                          d.out_strides.w % 8))
    return Status(StatusCode::kMisaligned,
                  "output strides must be multiples of 8 elements when Cout % 8 == 0" + what());

  // Weights must be the packing of this conv.
  PackedWeightsInfo want;
  VAECONV_RETURN_IF_ERROR(packed_info_for(d, &want));
  const PackedWeightsInfo& got = a.weights.info;
  if (got.kind != want.kind || got.dtype != want.dtype || got.cout != want.cout ||
      got.cin != want.cin || got.taps_t != want.taps_t || got.kt_base != want.kt_base ||
      got.k != want.k || got.k_pad != want.k_pad || got.phases != want.phases)
    return invalid("the packed weights were packed for another conv: " +
                   detail::packed_weights_difference(got, want) + " (repack with this version)");
  // Scales belong to fp8 operands; the kernels of a bf16 conv would read weight scales that its
  // weights do not have.
  if (!fp8 && (a.x_scale || a.weights.scales))
    return invalid("x_scale and weight scales are for fp8 operands; a bf16 conv takes neither");

  // Index widths: 64-bit frame bases, 32-bit offsets inside a frame's view. Every kernel numbers
  // its tiles frame by frame on a 1D grid and decodes the frame n * T_out + t_out from the int
  // tile index (kernel/conv_gather.hpp: frame_coord), so the frames must fit an int (and T, T_out
  // ConvParams' ints); the grid's own limits (tiles per launch, HIP's 32-bit thread count) depend
  // on the tile chosen and are checked at launch (conv/launch_limits.hpp).
  const int64_t esz = int64_t(size_of(d.in_dtype));
  if (d.out_h() * d.out_w() > detail::kInt31) return overflow("an output frame has > 2^31 pixels" + what());
  if (d.n * d.out_t() > kMaxKernelFrames)
    return overflow("N * T_out = " + std::to_string(d.n * d.out_t()) +
                    " frames: the kernels' frame index (an int) takes at most 2^31 - 1" + what());
  if (int64_t(want.taps_t) * d.in_strides.t * esz > detail::kInt31 ||
      d.in_strides.h * d.h * esz > detail::kInt31)
    return overflow("one input frame's view exceeds 2^31 bytes" + what());
  if (d.out_strides.h * d.out_h() > detail::kInt31 || d.out_strides.w * d.out_w() > detail::kInt31)
    return overflow("one output frame exceeds 2^31 elements" + what());
  if (want.bytes() > detail::kInt31) return overflow("packed weights exceed 2^31 bytes" + what());
  if (d.up_h() > (1 << 29) || d.up_w() > (1 << 29)) return overflow("H or W too large" + what());

  // Overlap: the output may be the residual (in-place add, same strides) but nothing else.
  const int64_t x_bytes = detail::tensor_span_bytes(d.in_strides, d.n, d.t, d.h, d.w, d.cin, d.in_dtype);
  const int64_t y_bytes = detail::tensor_span_bytes(d.out_strides, d.n, d.out_frames_stored(),
                                                    d.out_h(), d.out_w(), d.out_channels_stored(),
                                                    d.out_dtype);
  if (detail::ranges_overlap(a.y, y_bytes, a.x, x_bytes))
    return Status(StatusCode::kOverlap, "output y overlaps input x");
  if (a.cache && detail::ranges_overlap(a.y, y_bytes, a.cache,
                                        detail::tensor_span_bytes(d.cache_strides, d.n,
                                                                  d.cache_frames, d.h, d.w, d.cin,
                                                                  d.in_dtype)))
    return Status(StatusCode::kOverlap, "output y overlaps the cache");
  if (detail::ranges_overlap(a.y, y_bytes, a.weights.data, got.bytes()))
    return Status(StatusCode::kOverlap, "output y overlaps the packed weights");
  if (a.bias && detail::ranges_overlap(a.y, y_bytes, a.bias, d.cout * 4))
    return Status(StatusCode::kOverlap, "output y overlaps bias");
  if (a.weights.scales &&
      detail::ranges_overlap(a.y, y_bytes, a.weights.scales, a.weights.info.scale_count() * 4))
    return Status(StatusCode::kOverlap, "output y overlaps the weight scales");
  if (a.x_scale && detail::ranges_overlap(a.y, y_bytes, a.x_scale, 4))
    return Status(StatusCode::kOverlap, "output y overlaps x_scale");
  if (a.y_scale && detail::ranges_overlap(a.y, y_bytes, a.y_scale, 4))
    return Status(StatusCode::kOverlap, "output y overlaps y_scale");
  // The residual is bf16 whatever the output type: its span is the bf16 one.
  const int64_t r_bytes = detail::tensor_span_bytes(d.out_strides, d.n, d.out_frames_stored(),
                                                    d.out_h(), d.out_w(), d.out_channels_stored(),
                                                    DType::kBF16);
  if (a.residual && y_fp8 && a.residual == a.y)
    return Status(StatusCode::kOverlap, "an fp8 output cannot be its own (bf16) residual");
  if (a.residual && a.residual != a.y && detail::ranges_overlap(a.y, y_bytes, a.residual, r_bytes))
    return Status(StatusCode::kOverlap,
                  "residual partially overlaps output y (only residual == y is allowed)");
  return Status::Ok();
}

// Kernel parameters of an admitted call; bm/bn are the chosen tile's block sizes.
inline kernel::ConvParams make_params(const ConvDesc& d, const ConvArgs& a, int bm, int bn) {
  kernel::ConvParams p;
  p.x = a.x;
  p.w = a.weights.data;
  p.bias = a.bias;
  p.residual = a.residual;
  p.y = a.y;
  p.x_scale = a.x_scale;
  p.w_scale = a.weights.scales;
  p.y_scale = a.y_scale;
  p.y_fp8 = d.out_dtype == DType::kFP8E4M3;
  p.h = int(d.h); p.w_ = int(d.w); p.t = int(d.t);
  p.cin = int(d.cin); p.cout = int(d.out_channels_stored());  // interleaved: one half
  p.ho = int(d.out_h()); p.wo = int(d.out_w()); p.to = int(d.out_t());
  p.frame_pixels = p.ho * p.wo;
  p.in_sn = d.in_strides.n; p.in_st = d.in_strides.t;
  p.in_sh = int(d.in_strides.h); p.in_sw = int(d.in_strides.w);
  p.out_sn = d.out_strides.n;
  p.out_st = d.interleave_halves ? 2 * d.out_strides.t : d.out_strides.t;  // a half's frames
  p.stride_t = d.stride_t;
  p.out_sh = int(d.out_strides.h); p.out_sw = int(d.out_strides.w);
  p.k = int(a.weights.info.k);
  p.k_pad = int(a.weights.info.k_pad);
  p.taps_t = a.weights.info.taps_t;
  p.kt_base = a.weights.info.kt_base;
  // Time pad in front of x's frame 0: a cached conv's cached frames stand there (the cached
  // gather reads them; kernel/cached_frames.hpp), so x's frame it is ot + kt - 2 either way.
  p.pad_t = d.pad.t_front + d.cache_frames;
  p.m_blocks = int((p.frame_pixels + bm - 1) / bm);
  p.n_tiles = int((p.cout + bn - 1) / bn);
  // A frame's view reaches taps_t time slices (fewer at the end of the tensor).
  const int64_t view = int64_t(p.taps_t) * d.in_strides.t * int64_t(size_of(d.in_dtype));
  p.x_view_bytes = uint32_t(view < detail::kInt31 ? view : detail::kInt31);
  if (d.cache_frames > 0) {  // validate_cache bounds the view
    p.cache = a.cache;
    p.cache_frames = d.cache_frames;
    p.cache_sn = d.cache_strides.n;
    p.cache_st = int(d.cache_strides.t);
    p.cache_view_bytes = uint32_t((int64_t(d.cache_frames) * d.cache_strides.t +
                                   d.h * d.cache_strides.h) * int64_t(size_of(d.in_dtype)));
  }
  p.w_view_bytes = uint32_t(a.weights.info.bytes());
  return p;
}

// The parameters of output phase `phase` (0..3: (p, q) = (phase / 2, phase % 2)) of an upsample
// conv packed in phases (upsample_phases.hpp), from make_params' direct-form ones: the GEMM runs
// over the H x W source pixels with the phase's 2 x 2 tap window (tap_h0, tap_w0) and weights;
// source pixel (a, b) is output pixel (2a + p, 2b + q), so y (and the residual, which has y's
// strides) start at that phase's first pixel and step two pixels at a time.
inline void apply_upsample_phase(const ConvDesc& d, const PackedWeightsInfo& w, int phase, int bm,
                                 kernel::ConvParams* p) {
  if (d.interleave_halves) {  // the temporal conv's half `phase`: its Cout / 2 rows and frames
    const int64_t half = d.out_channels_stored();
    p->y = static_cast<char*>(p->y) + phase * d.out_strides.t * int64_t(size_of(d.out_dtype));
    if (p->residual)  // bf16, y's strides
      p->residual = static_cast<const char*>(p->residual) + phase * d.out_strides.t * 2;
    p->w = static_cast<const char*>(p->w) + phase * half * w.k_pad * int64_t(size_of(w.dtype));
    p->w_view_bytes = uint32_t(w.bytes() / 2);
    if (p->w_scale) p->w_scale += phase * half;
    if (p->bias) p->bias += phase * half;
    return;
  }
  const int ph = phase / 2, pw = phase % 2;
  p->ho = int(d.h);
  p->wo = int(d.w);
  p->frame_pixels = p->ho * p->wo;
  p->m_blocks = int((p->frame_pixels + bm - 1) / bm);
  const int64_t shift = int64_t(ph) * d.out_strides.h + int64_t(pw) * d.out_strides.w;  // elements
  p->y = static_cast<char*>(p->y) + shift * int64_t(size_of(d.out_dtype));
  if (p->residual) p->residual = static_cast<const char*>(p->residual) + shift * 2;  // bf16
  p->out_sh *= 2;
  p->out_sw *= 2;
  p->tap_h0 = ph;
  p->tap_w0 = pw;
  const int64_t phase_bytes = w.bytes() / w.phases;
  p->w = static_cast<const char*>(p->w) + phase * phase_bytes;
  p->w_view_bytes = uint32_t(phase_bytes);
  if (p->w_scale) p->w_scale += phase * w.cout;  // fp8: the phase's rows' scales
}

}  // namespace vaeconv
