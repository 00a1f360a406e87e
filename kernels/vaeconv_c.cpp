// vaeconv_c.cpp — the C ABI (vaeconv_c.h) over the C++ API.
//
// Every entry point that touches the device asks check_device_arch (api/device_arch.hpp) whether
// this library has correct kernels for the current device and operand type, after its arguments
// (a wrong call is named as such on any machine): the conv entries through conv_forward, the
// weights and quantize entries here, since they upload or launch without conv_forward.
#include "vaeconv_c.h"

#include <cstring>
#include <new>
#include <vector>

#include "vaeconv/api/device_arch.hpp"
#include "vaeconv/api/device_weights.hpp"
#include "vaeconv/api/fp8_sanitize.hpp"
#include "vaeconv/api/stream_cache.hpp"
#include "vaeconv/conv/quantize_args.hpp"
#include "rms_norm_entry.hpp"
#include "vaeconv_kernels.hpp"

struct vaeconv_weights {
  vaeconv::DeviceWeights device;
};

namespace {

int report(const vaeconv::Status& s, char* msg, size_t len) {
  if (msg && len > 0) {
    const std::string text = s.to_string();
    const size_t n = text.size() < len - 1 ? text.size() : len - 1;
    std::memcpy(msg, text.data(), n);
    msg[n] = '\0';
  }
  return static_cast<int>(s.code());
}

vaeconv::Status to_desc(const vaeconv_conv_shape* s, vaeconv::ConvDesc* d,
                        vaeconv::DType dt = vaeconv::DType::kBF16) {
  using vaeconv::ConvDesc;
  if (s == nullptr) return {vaeconv::StatusCode::kInvalidArgument, "shape is null"};
  switch (s->kind) {
    case VAECONV_CAUSAL_3X3X3: *d = ConvDesc::causal3x3x3(s->n, s->t, s->h, s->w, s->cin, s->cout, dt); break;
    case VAECONV_DOWNSAMPLE: *d = ConvDesc::downsample(s->n, s->t, s->h, s->w, s->cin, s->cout, dt); break;
    case VAECONV_UPSAMPLE: *d = ConvDesc::upsample2x(s->n, s->t, s->h, s->w, s->cin, s->cout, dt); break;
    case VAECONV_TEMPORAL_3X1X1:  // the packing is the same for both strides (stride 1 needs
                                  // an even Cout: its halves)
      *d = ConvDesc::temporal3x1x1(s->n, s->t, s->h, s->w, s->cin, s->cout, s->cout % 2 ? 2 : 1,
                                   0, dt);
      break;
    default:
      return {vaeconv::StatusCode::kInvalidArgument, "unknown conv kind " + std::to_string(s->kind)};
  }
  return d->validate();
}

int create_weights(const vaeconv_conv_shape* shape, const uint16_t* weights, int64_t count,
                   void* stream, vaeconv_weights** out, char* msg, size_t msg_len,
                   vaeconv::DType dt) {
  if (out == nullptr)
    return report({vaeconv::StatusCode::kInvalidArgument, "out is null"}, msg, msg_len);
  *out = nullptr;
  vaeconv::ConvDesc d;
  vaeconv::Status s = to_desc(shape, &d, dt);
  if (!s.ok()) return report(s, msg, msg_len);
  vaeconv::PackedWeightsHost host;
  if (dt == vaeconv::DType::kBF16) {
    s = vaeconv::pack_weights_bf16(d, weights, count, &host);
  } else {
    vaeconv::ConvDesc bf = d;
    bf.set_dtypes(vaeconv::DType::kBF16);
    vaeconv::PackedWeightsHost unused;
    s = vaeconv::pack_weights_bf16(bf, weights, count, &unused);  // validates count and pointer
    if (s.ok()) {
      std::vector<float> f(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) f[size_t(i)] = vaeconv::bf16_to_float(weights[i]);
      s = vaeconv::pack_weights_fp8(d, f.data(), &host);
    }
  }
  if (!s.ok()) return report(s, msg, msg_len);
  s = vaeconv::check_device_arch(dt);  // the arguments were checked first; now the device
  if (!s.ok()) return report(s, msg, msg_len);
  auto* w = new (std::nothrow) vaeconv_weights;
  if (w == nullptr) return report({vaeconv::StatusCode::kRuntimeError, "out of host memory"}, msg, msg_len);
  s = w->device.upload(host, static_cast<hipStream_t>(stream));
  if (!s.ok()) {
    delete w;
    return report(s, msg, msg_len);
  }
  *out = w;
  return report(s, msg, msg_len);
}

}  // namespace

extern "C" int vaeconv_weights_create_bf16(const vaeconv_conv_shape* shape, const uint16_t* weights,
                                           int64_t count, void* stream, vaeconv_weights** out,
                                           char* msg, size_t msg_len) {
  return create_weights(shape, weights, count, stream, out, msg, msg_len, vaeconv::DType::kBF16);
}

extern "C" int vaeconv_weights_create_fp8(const vaeconv_conv_shape* shape, const uint16_t* weights,
                                          int64_t count, void* stream, vaeconv_weights** out,
                                          char* msg, size_t msg_len) {
  return create_weights(shape, weights, count, stream, out, msg, msg_len, vaeconv::DType::kFP8E4M3);
}

extern "C" void vaeconv_weights_destroy(vaeconv_weights* weights) { delete weights; }

extern "C" size_t vaeconv_quantize_fp8_workspace_bytes(int64_t n) {
  return vaeconv::precompiled::quantize_fp8_workspace_bytes(n);
}

extern "C" int vaeconv_quantize_fp8(const void* x_bf16, int64_t n, void* y_fp8, float* scale,
                                    void* workspace, size_t workspace_bytes, void* stream,
                                    char* msg, size_t msg_len) {
  // Arguments first, then the device (this file's order).
  const vaeconv::Status args =
      vaeconv::check_quantize_fp8_args(x_bf16, n, y_fp8, scale, workspace, workspace_bytes);
  if (!args.ok()) return report(args, msg, msg_len);
  const vaeconv::Status arch = vaeconv::check_device_arch(vaeconv::DType::kFP8E4M3);
  if (!arch.ok()) return report(arch, msg, msg_len);
  return report(vaeconv::precompiled::quantize_fp8(x_bf16, n, y_fp8, scale, workspace,
                                                   workspace_bytes, stream),
                msg, msg_len);
}

extern "C" int vaeconv_sanitize_fp8_for_target(void* x, int64_t n, void* stream, char* msg,
                                               size_t msg_len) {
  return report(vaeconv::sanitize_fp8_for_target(x, n, static_cast<hipStream_t>(stream)), msg,
                msg_len);
}

extern "C" int vaeconv_conv_fp8(const vaeconv_conv_shape* shape, const void* x, const float* x_scale,
                                const vaeconv_weights* weights, const float* bias,
                                const void* residual, void* y, const float* y_scale, void* stream,
                                char* msg, size_t msg_len) {
  vaeconv::ConvDesc d;  // conv_forward checks the device after the arguments
  vaeconv::Status s = to_desc(shape, &d, vaeconv::DType::kFP8E4M3);
  if (!s.ok()) return report(s, msg, msg_len);
  if (y_scale) d.out_dtype = vaeconv::DType::kFP8E4M3;
  if (weights == nullptr)
    return report({vaeconv::StatusCode::kInvalidArgument, "weights is null"}, msg, msg_len);
  vaeconv::ConvArgs args{x, weights->device.view(), bias, residual, y, x_scale, y_scale};
  return report(vaeconv::precompiled::conv_forward(d, args, stream), msg, msg_len);
}

extern "C" int vaeconv_conv_bf16(const vaeconv_conv_shape* shape, const void* x,
                                 const vaeconv_weights* weights, const float* bias,
                                 const void* residual, void* y, void* stream, char* msg,
                                 size_t msg_len) {
  vaeconv::ConvDesc d;  // conv_forward checks the device after the arguments
  vaeconv::Status s = to_desc(shape, &d);
  if (!s.ok()) return report(s, msg, msg_len);
  if (weights == nullptr)
    return report({vaeconv::StatusCode::kInvalidArgument, "weights is null"}, msg, msg_len);
  const vaeconv::ConvArgs args{x, weights->device.view(), bias, residual, y};
  return report(vaeconv::precompiled::conv_forward(d, args, stream), msg, msg_len);
}

namespace {
// The cached conv's description: the causal shape with cache_frames in front of x.
vaeconv::Status to_cached_desc(const vaeconv_conv_shape* shape, int32_t cache_frames,
                               vaeconv::DType dt, vaeconv::ConvDesc* d) {
  VAECONV_RETURN_IF_ERROR(to_desc(shape, d, dt));
  if (shape->kind != VAECONV_CAUSAL_3X3X3)
    return {vaeconv::StatusCode::kInvalidArgument, "a cached conv is VAECONV_CAUSAL_3X3X3"};
  if (cache_frames < 0 || cache_frames > 2)
    return {vaeconv::StatusCode::kInvalidArgument,
            "cache_frames must be 0, 1 or 2, not " + std::to_string(cache_frames)};
  *d = vaeconv::ConvDesc::causal3x3x3_cached(shape->n, shape->t, shape->h, shape->w, shape->cin,
                                             shape->cout, cache_frames, dt);
  return d->validate();
}
}  // namespace

extern "C" int vaeconv_conv_cached(const vaeconv_conv_shape* shape, int32_t cache_frames,
                                   const void* cache, const void* x, const float* x_scale,
                                   const vaeconv_weights* weights, const float* bias,
                                   const void* residual, void* y, void* stream, char* msg,
                                   size_t msg_len) {
  if (weights == nullptr)
    return report({vaeconv::StatusCode::kInvalidArgument, "weights is null"}, msg, msg_len);
  const vaeconv::WeightsView w = weights->device.view();
  vaeconv::ConvDesc d;  // conv_forward checks the device after the arguments
  const vaeconv::Status s = to_cached_desc(shape, cache_frames, w.info.dtype, &d);
  if (!s.ok()) return report(s, msg, msg_len);
  vaeconv::ConvArgs args{x, w, bias, residual, y, x_scale, nullptr};
  args.cache = cache;
  return report(vaeconv::precompiled::conv_forward(d, args, stream), msg, msg_len);
}

extern "C" int vaeconv_conv_temporal(const vaeconv_conv_shape* shape, int32_t stride_t,
                                     int32_t cache_frames, const void* cache, const void* x,
                                     const float* x_scale, const vaeconv_weights* weights,
                                     const float* bias, const void* residual, void* y,
                                     void* stream, char* msg, size_t msg_len) {
  if (shape == nullptr)
    return report({vaeconv::StatusCode::kInvalidArgument, "shape is null"}, msg, msg_len);
  if (weights == nullptr)
    return report({vaeconv::StatusCode::kInvalidArgument, "weights is null"}, msg, msg_len);
  if (shape->kind != VAECONV_TEMPORAL_3X1X1)
    return report({vaeconv::StatusCode::kInvalidArgument,
                   "vaeconv_conv_temporal runs shape kind VAECONV_TEMPORAL_3X1X1"},
                  msg, msg_len);
  if ((stride_t != 1 && stride_t != 2) || cache_frames < 0 || cache_frames > (stride_t == 1 ? 2 : 1))
    return report({vaeconv::StatusCode::kInvalidArgument,
                   "stride_t " + std::to_string(stride_t) + " with " +
                       std::to_string(cache_frames) +
                       " cached frames: stride 1 takes 0..2 cached frames, stride 2 0 or 1"},
                  msg, msg_len);
  const vaeconv::WeightsView w = weights->device.view();
  const vaeconv::ConvDesc d = vaeconv::ConvDesc::temporal3x1x1(
      shape->n, shape->t, shape->h, shape->w, shape->cin, shape->cout, stride_t, cache_frames,
      w.info.dtype);
  vaeconv::ConvArgs args{x, w, bias, residual, y, x_scale, nullptr};
  args.cache = cache;
  return report(vaeconv::precompiled::conv_forward(d, args, stream), msg, msg_len);
}

extern "C" int vaeconv_write_stream_cache(const vaeconv_conv_shape* shape, int32_t cache_frames,
                                          const void* cache, const void* x, int32_t elem_bytes,
                                          void* new_cache, void* stream, char* msg,
                                          size_t msg_len) {
  if (elem_bytes != 1 && elem_bytes != 2)
    return report({vaeconv::StatusCode::kInvalidArgument,
                   "elem_bytes must be 2 (bf16) or 1 (fp8), not " + std::to_string(elem_bytes)},
                  msg, msg_len);
  vaeconv::ConvDesc d;
  const vaeconv::Status s = to_cached_desc(
      shape, cache_frames, elem_bytes == 1 ? vaeconv::DType::kFP8E4M3 : vaeconv::DType::kBF16, &d);
  if (!s.ok()) return report(s, msg, msg_len);
  const int frames = vaeconv::stream_cache_frames(d);
  return report(vaeconv::write_stream_cache(
                    d, cache, x, new_cache,
                    vaeconv::Strides5::dense(frames, d.h, d.w, d.cin),
                    static_cast<hipStream_t>(stream)),
                msg, msg_len);
}

extern "C" int vaeconv_rms_norm(const void* x, int64_t pixels, int64_t channels,
                                const float* gamma, const float* bias, int32_t silu, void* y,
                                void* stream, char* msg, size_t msg_len) {
  vaeconv::RmsNormArgs a;
  a.x = x;
  a.y = y;
  a.gamma = gamma;
  a.bias = bias;
  a.pixels = pixels;
  a.channels = channels;
  a.silu = silu != 0;
  return report(vaeconv::precompiled::rms_norm(a, stream), msg, msg_len);
}

extern "C" int vaeconv_check_device(int fp8, char* msg, size_t msg_len) {
  return report(vaeconv::check_device_arch(fp8 ? vaeconv::DType::kFP8E4M3 : vaeconv::DType::kBF16),
                msg, msg_len);
}

extern "C" const char* vaeconv_version(void) { return "0.1.0"; }

extern "C" const char* vaeconv_backend(void) {
#if defined(VAECONV_BACKEND_HIP)
  return "hip";
#else
  return "cuda";
#endif
}
