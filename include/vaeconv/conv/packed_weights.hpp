// vaeconv/conv/packed_weights.hpp — weights in the layout the kernels read, packed once.
//
// PyTorch stores conv weights [Cout][Cin][kt][kh][kw] (Conv3d) or [Cout][Cin][kh][kw] (Conv2d).
// The kernels read B^T of the implicit GEMM: row n = output channel, K = ((kt*3 + kh)*3 + kw)*Cin + c
// (channels innermost, like the activations), each row zero-padded to a multiple of 128 bytes
// (k_pad = round_up(K, 64) bf16 or round_up(K, 128) fp8 elements), so every K tile of every
// shipped BK (at most 128 bytes of a row) is in bounds.
//
// Causal 3x3x3 weights: for T = 1 the causal time pad (2, 0) leaves only slice kt = 2 facing real
// data, so a T = 1 packing keeps that slice alone (9 taps: the 2D conv); a T > 1 packing keeps all
// 27 taps. The packing records which, and the launch refuses a mismatch.
//
// Packing is a host function on an explicit object: nothing is cached behind a pointer.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/upsample_phases.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"

namespace vaeconv {

inline constexpr int64_t kPackRowBytes = 128;  // a packed row's bytes are a multiple of this
// The packed K of a row of elem_bytes-wide elements is a multiple of this many elements.
inline constexpr int64_t pack_k_multiple(int64_t elem_bytes) { return kPackRowBytes / elem_bytes; }

struct PackedWeightsInfo {
  ConvKind kind = ConvKind::kCausal3x3x3;
  DType dtype = DType::kBF16;
  int64_t cout = 0, cin = 0;
  int taps_t = 1;    // time taps packed: 1 (T = 1 slice, or a 2D conv) or 3
  int kt_base = 0;   // first packed time tap: 2 for the causal T = 1 slice
  int64_t k = 0;     // taps_t * 9 * cin (4 * cin for an upsample conv packed in phases)
  int64_t k_pad = 0; // row stride in elements
  int phases = 1;    // 4: an upsample conv's four phases, [phase][cout][k_pad] (upsample_phases.hpp)
  int64_t rows() const { return int64_t(phases) * cout; }  // packed rows, [phase][cout]
  int64_t bytes() const { return rows() * k_pad * int64_t(size_of(dtype)); }
  int64_t scale_count() const { return dtype == DType::kFP8E4M3 ? rows() : 0; }  // one per row
};

struct PackedWeightsHost {
  PackedWeightsInfo info;
  std::vector<uint16_t> bf16;  // bf16 bits, [phases][cout][k_pad] (bf16 weights)
  std::vector<uint8_t> fp8;    // e4m3fn bytes, [phases][cout][k_pad] (fp8 weights)
  std::vector<float> scales;   // fp8: one per packed row, [phases][cout]: weight = e4m3fn * scale

  const void* bytes() const {
    return info.dtype == DType::kFP8E4M3 ? static_cast<const void*>(fp8.data())
                                         : static_cast<const void*>(bf16.data());
  }
  size_t byte_size() const {
    return info.dtype == DType::kFP8E4M3 ? fp8.size() : bf16.size() * sizeof(uint16_t);
  }
};

namespace detail {
inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
}  // namespace detail

namespace detail {
// The packing of `d`, in phases (an upsample conv only) or not.
inline Status packed_info_as(const ConvDesc& d, bool phases, PackedWeightsInfo* info) {
  VAECONV_RETURN_IF_ERROR(d.validate());
  const bool temporal = d.kind == ConvKind::kTemporal;  // (3, 1, 1): one spatial tap
  if (temporal ? (d.kt != 3 || d.kh != 1 || d.kw != 1) : (d.kh != 3 || d.kw != 3))
    return Status(StatusCode::kUnsupported,
                  std::string("packing needs ") + (temporal ? "3x1x1 taps" : "3x3 spatial taps") +
                      ": " + d.to_string());
  PackedWeightsInfo i;
  i.kind = d.kind;
  i.dtype = d.weight_dtype;
  i.cout = d.cout;
  i.cin = d.cin;
  if (temporal) {
    i.taps_t = 3;
    i.kt_base = 0;
  } else if (d.kind == ConvKind::kCausal3x3x3) {
    if (d.kt != 3) return Status(StatusCode::kUnsupported, "causal conv needs kt = 3");
    // T = 1 without a cache: only slice kt = 2 faces data (ConvDesc::gemm_taps).
    const bool one_slice = d.t == 1 && d.cache_frames == 0;
    i.taps_t = one_slice ? 1 : 3;
    i.kt_base = one_slice ? 2 : 0;
  } else {
    if (d.kt != 1) return Status(StatusCode::kUnsupported, "2D convs need kt = 1");
    i.taps_t = 1;
    i.kt_base = 0;
  }
  i.k = int64_t(i.taps_t) * d.kh * d.kw * d.cin;
  if (phases) {
    if (d.kind != ConvKind::kUpsample)
      return Status(StatusCode::kUnsupported, "only the upsample conv packs in phases");
    i.phases = kUpsamplePhases;
    i.k = 4 * d.cin;
  }
  i.k_pad = detail::round_up(i.k, pack_k_multiple(int64_t(size_of(i.dtype))));
  *info = i;
  return Status::Ok();
}
}  // namespace detail

// The packing a conv needs (independent of the weight values).
inline Status packed_info_for(const ConvDesc& d, PackedWeightsInfo* info) {
  return detail::packed_info_as(d, upsample_in_phases(d), info);
}

namespace detail {
// Gathers output channel co's packed row: row[k] = w at the PyTorch index of packed column k.
inline void packed_row(const ConvDesc& d, const PackedWeightsInfo& info, const float* w,
                       int64_t co, float* row) {
  const int src_kt = d.kt, nh = d.kh, nw = d.kw;  // PyTorch's [Cout][Cin][kt][kh][kw]
  for (int kt = 0; kt < info.taps_t; ++kt)
    for (int kh = 0; kh < nh; ++kh)
      for (int kw = 0; kw < nw; ++kw)
        for (int64_t ci = 0; ci < info.cin; ++ci) {
          const int64_t src =
              (((co * info.cin + ci) * src_kt + (info.kt_base + kt)) * nh + kh) * nw + kw;
          row[((int64_t(kt) * nh + kh) * nw + kw) * info.cin + ci] = w[src];
        }
}

// Phase `phase`'s row of output channel co (upsample_phases.hpp): row[(dh * 2 + dw) * cin + c]
// = the fp32 sum of w[co][c][kh][kw] over the 3 x 3 taps that window tap (dh, dw) combines.
inline void packed_phase_row(const PackedWeightsInfo& info, const float* w, int phase, int64_t co,
                             float* row) {
  const int p = phase / 2, q = phase % 2;
  for (int dh = 0; dh < 2; ++dh)
    for (int dw = 0; dw < 2; ++dw)
      for (int64_t ci = 0; ci < info.cin; ++ci) {
        float sum = 0.f;
        for (int kh = phase_tap_first(p, dh); kh <= phase_tap_last(p, dh); ++kh)
          for (int kw = phase_tap_first(q, dw); kw <= phase_tap_last(q, dw); ++kw)
            sum += w[((co * info.cin + ci) * 3 + kh) * 3 + kw];
        row[(dh * 2 + dw) * info.cin + ci] = sum;
      }
}

// Packed row r's values before rounding: row r = phase * Cout + co (phases: one, or an upsample
// conv's four), a direct-form row or a phase's combined row.
inline void source_row(const ConvDesc& d, const PackedWeightsInfo& info, const float* w, int64_t r,
                       float* row) {
  if (info.phases == 1) packed_row(d, info, w, r, row);
  else packed_phase_row(info, w, int(r / info.cout), r % info.cout, row);
}

inline Status begin_packing(const ConvDesc& d, const float* w, PackedWeightsHost* out, DType want,
                            const char* who, bool phases) {
  if (w == nullptr || out == nullptr)
    return Status(StatusCode::kInvalidArgument, std::string(who) + ": null pointer");
  if (d.weight_dtype != want)
    return Status(StatusCode::kUnsupported,
                  std::string(who) + ": the conv's weights are not " + to_string(want));
  *out = PackedWeightsHost{};
  return packed_info_as(d, phases, &out->info);
}

// pack_weights_bf16 below, in phases (an upsample conv) or not.
inline Status pack_weights_bf16_as(const ConvDesc& d, const float* w, bool phases,
                                   PackedWeightsHost* out) {
  VAECONV_RETURN_IF_ERROR(begin_packing(d, w, out, DType::kBF16, "pack_weights_bf16", phases));
  const PackedWeightsInfo& info = out->info;
  out->bf16.assign(size_t(info.rows() * info.k_pad), uint16_t(0));
  std::vector<float> row(size_t(info.k));
  for (int64_t r = 0; r < info.rows(); ++r) {
    source_row(d, info, w, r, row.data());
    for (int64_t k = 0; k < info.k; ++k)
      out->bf16[size_t(r * info.k_pad + k)] = float_to_bf16(row[size_t(k)]);
  }
  return Status::Ok();
}
}  // namespace detail

// Packs PyTorch-layout weights given as floats (already bf16-representable or not: they are
// rounded to bf16 here). `w` is [Cout][Cin][3][3][3] for the causal conv, [Cout][Cin][3][3] else.
// An upsample conv that this build runs in phases (upsample_in_phases) is packed in phases.
inline Status pack_weights_bf16(const ConvDesc& d, const float* w, PackedWeightsHost* out) {
  return detail::pack_weights_bf16_as(d, w, upsample_in_phases(d), out);
}

namespace detail {
// pack_weights_fp8 below, in phases (an upsample conv) or not.
inline Status pack_weights_fp8_as(const ConvDesc& d, const float* w, bool phases,
                                  PackedWeightsHost* out) {
  VAECONV_RETURN_IF_ERROR(begin_packing(d, w, out, DType::kFP8E4M3, "pack_weights_fp8", phases));
  const PackedWeightsInfo& info = out->info;
  out->fp8.assign(size_t(info.rows() * info.k_pad), uint8_t(0));
  out->scales.assign(size_t(info.rows()), 1.f);
  std::vector<float> row(size_t(info.k));
  for (int64_t r = 0; r < info.rows(); ++r) {
    source_row(d, info, w, r, row.data());
    float amax = 0.f;
    for (int64_t k = 0; k < info.k; ++k) {
      const float v = row[size_t(k)];
      if (!std::isfinite(v))
        return Status(StatusCode::kInvalidArgument,
                      "pack_weights_fp8: packed row " + std::to_string(r) + " (output channel " +
                          std::to_string(r % info.cout) + "), column " + std::to_string(k) +
                          " is " + (v != v ? "NaN" : "infinite") +
                          ": FP8 weights have no code for it");
      if (std::fabs(v) > amax) amax = std::fabs(v);
    }
    const float scale = fp8_scale_for_amax(amax);
    out->scales[size_t(r)] = scale;
    for (int64_t k = 0; k < info.k; ++k)
      out->fp8[size_t(r * info.k_pad + k)] = quantize_e4m3fn(row[size_t(k)], scale);
  }
  return Status::Ok();
}
}  // namespace detail

// Quantizes PyTorch-layout float weights to e4m3fn with one scale per packed row (per output
// channel, and per phase for an upsample conv packed in phases): scale = amax / 448 over the
// row (1 for an all-zero row), byte = e4m3fn(w / scale), saturating, -0 stored as +0 (so the bytes
// hold no 0x80 and no NaN code: conv/fp8_scale.hpp). A NaN or infinite weight (or phase sum) is
// refused with kInvalidArgument naming its row and column. An upsample conv is packed in phases: each combined weight (the fp32 sum
// of the 3 x 3 taps it stands for) is quantized, against its phase's own scale.
inline Status pack_weights_fp8(const ConvDesc& d, const float* w, PackedWeightsHost* out) {
  return detail::pack_weights_fp8_as(d, w, upsample_in_phases(d), out);
}

// The same from bf16 bits (what a bf16 PyTorch tensor holds).
inline Status pack_weights_bf16(const ConvDesc& d, const uint16_t* w_bits, int64_t count,
                                PackedWeightsHost* out) {
  if (w_bits == nullptr) return Status(StatusCode::kInvalidArgument, "pack_weights_bf16: null");
  const int64_t expect = d.cout * d.cin * d.taps();
  if (count != expect)
    return Status(StatusCode::kInvalidArgument,
                  "pack_weights_bf16: got " + std::to_string(count) + " weights, expected " +
                      std::to_string(expect));
  std::vector<float> f(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) f[size_t(i)] = bf16_to_float(w_bits[i]);
  return pack_weights_bf16(d, f.data(), out);
}

}  // namespace vaeconv
