/* vaeconv_c.h — the C ABI of libvaeconv_kernels, for engines that do not compile templates.
 *
 * Tensors are dense NDHWC (N, T, H, W, C) on the device, bf16 or FP8 (e4m3fn); bias is fp32
 * [Cout]. Every call
 * returns a vaeconv_status_code and, when `msg` is not NULL, writes a NUL-terminated message.
 * Weights are packed and uploaded once (vaeconv_weights_create_bf16); calls never allocate,
 * never synchronize, and may run concurrently from several host threads.
 */
#ifndef VAECONV_C_H_
#define VAECONV_C_H_
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  VAECONV_OK = 0,
  VAECONV_INVALID_ARGUMENT = 1,
  VAECONV_UNSUPPORTED = 2,
  VAECONV_MISALIGNED = 3,
  VAECONV_OVERLAP = 4,
  VAECONV_OVERFLOW = 5,
  VAECONV_RUNTIME_ERROR = 6
} vaeconv_status_code;

typedef enum {
  VAECONV_CAUSAL_3X3X3 = 0, /* QwenImageCausalConv3d; T = 1 runs the kt = 2 weight slice */
  VAECONV_DOWNSAMPLE = 1,   /* ZeroPad2d((0,1,0,1)) + 3x3 stride 2, pad folded into the loader */
  VAECONV_UPSAMPLE = 2,     /* nearest-exact x2 + 3x3 pad 1; h, w are the source sizes */
  VAECONV_TEMPORAL_3X1X1 = 3 /* WanResample's time_conv: weights [Cout][Cin][3][1][1]; run by
                                vaeconv_conv_temporal */
} vaeconv_conv_kind;

typedef struct {
  int32_t kind; /* vaeconv_conv_kind */
  int64_t n, t, h, w, cin, cout;
} vaeconv_conv_shape;

typedef struct vaeconv_weights vaeconv_weights; /* opaque: packed weights on the device */

/* Packs PyTorch-layout bf16 weights ([Cout][Cin][3][3][3] causal, [Cout][Cin][3][3] otherwise,
 * `count` elements, host memory) for `shape` and uploads them. `stream` is a hipStream_t /
 * cudaStream_t (NULL = default stream). */
int vaeconv_weights_create_bf16(const vaeconv_conv_shape* shape, const uint16_t* weights,
                                int64_t count, void* stream, vaeconv_weights** out, char* msg,
                                size_t msg_len);
void vaeconv_weights_destroy(vaeconv_weights* weights);

/* y = conv(x) + bias + residual, bf16 out. bias and residual may be NULL; residual may equal y. */
int vaeconv_conv_bf16(const vaeconv_conv_shape* shape, const void* x,
                      const vaeconv_weights* weights, const float* bias, const void* residual,
                      void* y, void* stream, char* msg, size_t msg_len);

/* FP8 (OCP e4m3fn). Weights are quantized per output channel at creation (from bf16). */
int vaeconv_weights_create_fp8(const vaeconv_conv_shape* shape, const uint16_t* weights,
                               int64_t count, void* stream, vaeconv_weights** out, char* msg,
                               size_t msg_len);

/* Workspace bytes for vaeconv_quantize_fp8 of n elements (0 on failure). */
size_t vaeconv_quantize_fp8_workspace_bytes(int64_t n);

/* y_fp8 = e4m3fn(x / scale), scale = max|x| / 448 written to scale[0] (device); no host sync. */
int vaeconv_quantize_fp8(const void* x_bf16, int64_t n, void* y_fp8, float* scale,
                         void* workspace, size_t workspace_bytes, void* stream, char* msg,
                         size_t msg_len);

/* Makes n e4m3fn bytes at x (device, 16-byte aligned) from outside the library readable by the
 * current device's FP8 convs, in place: on gfx942 -0 (0x80) -> +0 and NaN (0x7F/0xFF) -> its
 * FNUZ NaN 0x80; elsewhere the bytes are left as they are. Bytes from vaeconv_quantize_fp8 or an
 * FP8-output conv need no pass. */
int vaeconv_sanitize_fp8_for_target(void* x, int64_t n, void* stream, char* msg, size_t msg_len);

/* FP8 conv: x holds e4m3fn bytes with per-tensor scale x_scale (device). y is bf16, or e4m3fn at
 * y_scale (device) when y_scale is not NULL. bias, residual (bf16) may be NULL. */
int vaeconv_conv_fp8(const vaeconv_conv_shape* shape, const void* x, const float* x_scale,
                     const vaeconv_weights* weights, const float* bias, const void* residual,
                     void* y, const float* y_scale, void* stream, char* msg, size_t msg_len);

/* The causal conv of a video chunk (shape->kind VAECONV_CAUSAL_3X3X3, shape->t new frames) with
 * cache_frames (0..2) cached frames in front of x, read in place: cache is dense
 * [N, cache_frames, H, W, Cin] in x's dtype (NULL when cache_frames = 0), and the conv is the
 * causal conv of cat(cache, x) with 2 - cache_frames frames of zero front pad (T_out = t).
 * The operand type is the weights': bf16 (x_scale NULL) or fp8 (x_scale, device, shared by x and
 * the cache). The weights must hold every time tap: create them for a shape with t >= 2 (a
 * shape with t = 1 packs only the last tap, which only an uncached t = 1 conv reads). */
int vaeconv_conv_cached(const vaeconv_conv_shape* shape, int32_t cache_frames, const void* cache,
                        const void* x, const float* x_scale, const vaeconv_weights* weights,
                        const float* bias, const void* residual, void* y, void* stream, char* msg,
                        size_t msg_len);

/* The next chunk's cache after that conv: the last min(2, cache_frames + t) frames of
 * cat(cache, x), written densely to new_cache [N, frames, H, W, Cin] with device copies on
 * `stream` (no cat). elem_bytes: 2 (bf16) or 1 (fp8). new_cache may be cache itself when it has
 * room for the frames. */
int vaeconv_write_stream_cache(const vaeconv_conv_shape* shape, int32_t cache_frames,
                               const void* cache, const void* x, int32_t elem_bytes,
                               void* new_cache, void* stream, char* msg, size_t msg_len);

/* WanResample's time_conv (shape->kind VAECONV_TEMPORAL_3X1X1, shape->t new frames), a (3,1,1)
 * causal conv over T with cache_frames cached frames (dense [N, cache_frames, H, W, Cin], NULL
 * when 0) in front of x, read in place. stride_t 1 (upsample3d): front pad 2 - cache_frames, and
 * the Cout = 2C output channels are stored as two frames, y dense [N, 2 T, H, W, C] (conv channel
 * s C + c of time t at frame 2 t + s, channel c: diffusers' reshape + stack). stride_t 2
 * (downsample3d, cache_frames 1 as diffusers passes it, or 0): front pad 1 - cache_frames, y
 * dense [N, T_out, H, W, Cout]. The operand type is the weights' (x_scale as for
 * vaeconv_conv_cached); Cin a multiple of 8 (bf16) / 16 (fp8). */
int vaeconv_conv_temporal(const vaeconv_conv_shape* shape, int32_t stride_t, int32_t cache_frames,
                          const void* cache, const void* x, const float* x_scale,
                          const vaeconv_weights* weights, const float* bias, const void* residual,
                          void* y, void* stream, char* msg, size_t msg_len);

/* diffusers' QwenImageRMS_norm / WanRMS_norm over the channels of a channels-last bf16 tensor,
 * one pass: y[p][c] = bf16(x[p][c] / max(||x[p]||_2, 1e-12) * sqrt(C) * gamma[c] + bias[c]),
 * computed in fp32 and rounded once; silu != 0 applies v * sigmoid(v) to that fp32 value first.
 * x, y: bf16 [pixels][channels] (C innermost), 16-byte aligned; y may be x (in place), no other
 * overlap. gamma, bias: fp32 [channels] on the device, 16-byte aligned; bias may be NULL.
 * channels must be a multiple of 8 (refused otherwise, naming C). 64-bit offsets throughout. */
int vaeconv_rms_norm(const void* x, int64_t pixels, int64_t channels, const float* gamma,
                     const float* bias, int32_t silu, void* y, void* stream, char* msg,
                     size_t msg_len);

/* VAECONV_OK when the current device runs this build's kernels for the operand type (fp8 = 0:
 * bf16, 1: e4m3fn); VAECONV_UNSUPPORTED naming the device's architecture otherwise. Lets a caller
 * (the Python package's patch layer) choose its fallback before the first conv. */
int vaeconv_check_device(int fp8, char* msg, size_t msg_len);

const char* vaeconv_version(void);
const char* vaeconv_backend(void); /* "hip" or "cuda" */

#ifdef __cplusplus
}
#endif
#endif /* VAECONV_C_H_ */
