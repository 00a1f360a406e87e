// vaeconv/kernel/rms_norm_params.hpp — the RMS norm of channels-last activations: its parameter
// block, its argument checks and its lane plan. Host code, no GPU compiler needed (host-tested).
//
//   y[p][c] = bf16( x[p][c] / max(||x[p]||_2, 1e-12) * sqrt(C) * gamma[c] + bias[c] )
//   and, with silu, y = bf16( v * sigmoid(v) ) of that fp32 value v.
//
// This is diffusers' QwenImageRMS_norm / WanRMS_norm (F.normalize over the channels, times
// dim ** 0.5, gamma and bias) in one pass, fp32 inside and one rounding, optionally with the SiLU
// that follows it in the residual blocks. x and y are bf16 [P pixels][C channels], C innermost
// (an NDHWC / NHWC tensor has P = N*T*H*W); gamma and bias are fp32 [C].
//
// The lane plan: a group of G lanes (a power of two <= 32, aligned, so that a 32-lane warp and a
// 64-lane wave hold whole groups) owns one pixel; each lane reads whole 16-byte chunks of 8
// channels, lane l the chunks l, l + G, l + 2 G, ... A group keeps up to kRmsNormChunksPerLane
// chunks per lane in registers, reads x once and sums the squares with a butterfly of G/2 .. 1
// lane shuffles; past 32 x 4 chunks (C > 1024) a group of 32 lanes streams: it reads x twice.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include "vaeconv/core/status.hpp"

namespace vaeconv {

struct RmsNormArgs {
  const void* x = nullptr;      // bf16 [pixels][channels], 16-byte aligned
  void* y = nullptr;            // bf16 [pixels][channels], 16-byte aligned; may be x (in place)
  const float* gamma = nullptr; // fp32 [channels], 16-byte aligned
  const float* bias = nullptr;  // fp32 [channels], 16-byte aligned, or null (no bias)
  int64_t pixels = 0;
  int64_t channels = 0;
  bool silu = false;            // y = v * sigmoid(v) of the normalised value v
};

namespace kernel {

constexpr float kRmsNormEps = 1e-12f;  // F.normalize's default eps
constexpr int kRmsNormThreads = 256;
constexpr int kRmsNormChunksPerLane = 4;
constexpr int kRmsNormMaxGroup = 32;  // a whole group inside a 32-lane warp and a 64-lane wave
constexpr int kRmsNormChunkChannels = 8;  // 16 bytes of bf16

// What one launch runs: G lanes per pixel, and chunks per lane held in registers (0: streaming).
struct RmsNormPlan {
  int group = 1;
  int chunks_per_lane = kRmsNormChunksPerLane;
};

// The plan for C channels (a multiple of 8, checked by check_rms_norm_args).
inline RmsNormPlan plan_rms_norm(int64_t channels) {
  const int64_t chunks = channels / kRmsNormChunkChannels;
  const int64_t lanes = (chunks + kRmsNormChunksPerLane - 1) / kRmsNormChunksPerLane;
  int group = 1;
  while (group < lanes && group < kRmsNormMaxGroup) group *= 2;
  if (group >= lanes) return {group, kRmsNormChunksPerLane};
  return {kRmsNormMaxGroup, 0};
}

// The parameter block every kernel of the family takes (plain data).
struct RmsNormParams {
  const void* x;
  void* y;
  const float* gamma;
  const float* bias;  // null: no bias
  int64_t pixels;
  int64_t chunks;     // channels / 8
  float sqrt_c;
  int silu;
};

}  // namespace kernel

namespace detail {

inline bool rms_aligned(const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
inline bool rms_overlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
  const uintptr_t pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

}  // namespace detail

// Every refusal of rms_norm names the argument and its value.
inline Status check_rms_norm_args(const RmsNormArgs& a) {
  const auto bad = [](StatusCode c, const std::string& m) { return Status(c, "rms_norm: " + m); };
  if (a.x == nullptr) return bad(StatusCode::kInvalidArgument, "x is null");
  if (a.y == nullptr) return bad(StatusCode::kInvalidArgument, "y is null");
  if (a.gamma == nullptr) return bad(StatusCode::kInvalidArgument, "gamma is null");
  if (a.pixels < 1)
    return bad(StatusCode::kInvalidArgument,
               "pixels must be >= 1, got " + std::to_string(a.pixels));
  if (a.channels < 1)
    return bad(StatusCode::kInvalidArgument,
               "channels must be >= 1, got " + std::to_string(a.channels));
  if (a.channels % kernel::kRmsNormChunkChannels != 0)
    return bad(StatusCode::kUnsupported,
               "channels C = " + std::to_string(a.channels) +
                   " is not a multiple of 8 (the kernel reads 16-byte vectors of 8 bf16)");
  // Bytes of x must fit int64 (pixel offsets are 64-bit: tensors past 2^31 elements are fine).
  if (a.pixels > std::numeric_limits<int64_t>::max() / 2 / a.channels)
    return bad(StatusCode::kOverflow, std::to_string(a.pixels) + " pixels x " +
                                          std::to_string(a.channels) +
                                          " channels overflow a 64-bit byte count");
  if (!detail::rms_aligned(a.x, 16)) return bad(StatusCode::kMisaligned, "x must be 16-byte aligned");
  if (!detail::rms_aligned(a.y, 16)) return bad(StatusCode::kMisaligned, "y must be 16-byte aligned");
  if (!detail::rms_aligned(a.gamma, 16))
    return bad(StatusCode::kMisaligned, "gamma must be 16-byte aligned");
  if (a.bias != nullptr && !detail::rms_aligned(a.bias, 16))
    return bad(StatusCode::kMisaligned, "bias must be 16-byte aligned");
  const uint64_t bytes = uint64_t(a.pixels) * uint64_t(a.channels) * 2;
  const uint64_t param_bytes = uint64_t(a.channels) * 4;
  if (a.y != a.x && detail::rms_overlap(a.y, bytes, a.x, bytes))
    return bad(StatusCode::kOverlap, "y overlaps x without being x (in place is y == x)");
  if (detail::rms_overlap(a.y, bytes, a.gamma, param_bytes))
    return bad(StatusCode::kOverlap, "y overlaps gamma");
  if (a.bias != nullptr && detail::rms_overlap(a.y, bytes, a.bias, param_bytes))
    return bad(StatusCode::kOverlap, "y overlaps bias");
  return Status::Ok();
}

}  // namespace vaeconv
