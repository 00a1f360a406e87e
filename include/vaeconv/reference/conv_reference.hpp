// vaeconv/reference/conv_reference.hpp — the CPU reference convolution (host only, C++17).
//
// conv_reference() computes any ConvDesc that validate() admits, straight from the formula in
// conv_desc.hpp:
//
//   y[n,t,h,w,co] = bias[co] + residual[n,t,h,w,co]
//                 + sum_{kt,kh,kw,ci} x'[n, t*st + kt, h*sh + kh, w*sw + kw, ci] * w[co,ci,kt,kh,kw]
//
// where x' is x upsampled (nearest-exact, integer factor u: source index = dst / u) and then
// zero-padded. Padded taps are skipped, never multiplied by zero.
//
// Operands are floats that the caller has already rounded to bf16 / fp8 values; the result is
// written as float (the caller rounds it to the output dtype if it wants to).
//
// Accumulation order and precision (fixed, independent of the thread count):
//   for each output element, taps are visited in (kt, kh, kw) order, skipping taps that land
//   in the padding; for one tap the Cin products are summed in fp32 in ascending ci order,
//   starting from 0.0f; that per-tap fp32 partial sum is added to a double accumulator. Finally
//   bias and residual are added in double and the result is rounded once to float.
//   The error is therefore ~Cin * 2^-24 relative to sum |x*w| (fp32 over one tap), not
//   taps * Cin. The host compiler may contract a*b+c into an FMA where the target has one
//   (e.g. -march=native with -ffp-contract=fast); that changes the last bits between builds,
//   never between thread counts.
//
// Every output element is computed by exactly one thread with the same instruction sequence
// whatever the thread count, so threads = 1 and threads = k give bit-identical results.
//
// Performance: weights are repacked to [cout-chunk][tap][cin][kCoutBlock] (cout padded with zeros
// to a multiple of kCoutBlock), and a micro-kernel accumulates kPixBlock output pixels x
// kCoutBlock channels in registers with the innermost operation over contiguous couts (GCC/clang
// 4-lane vector extensions; plain loops under nvcc's front end). Output rows (n, t, h) are handed
// to std::threads dynamically. Measured (-O3 -march=x86-64-v2, SSE only): ~32 GFLOP/s per core,
// 1328x1328 96->96 3x3 (146 GMAC) in 4.6 s on 2 cores.
//
// residual may alias y exactly (residual == y, same strides): each element is read before it
// is written, by the same thread.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/core/status.hpp"

namespace vaeconv {
namespace reference {

namespace detail {

constexpr int kCoutBlock = 8;  // output channels per register block (2 SSE / 1 AVX vector)
constexpr int kPixBlock = 4;   // output pixels per register block

// out[p][c] = sum_ci xp[p][ci] * w[ci][c], summed in fp32, ascending ci, from 0.0f.
// w points at [cin][kCoutBlock] contiguous floats, 16-byte aligned.
//
// With GCC/clang (not nvcc's front end) the sums are written with 4-lane vector extensions: the
// PB x kCoutBlock accumulators stay in registers at -O2 and -O3 alike (plain loops get the ci loop
// vectorized with transposes at -O3, 3x slower). Otherwise plain loops over contiguous couts.
// Both forms do the same per-lane operations in the same order (a separate multiply and add;
// a host compiler allowed to contract them into an FMA gives last-bit differences between
// builds, never between thread counts).
template <int PB>
inline void micro_kernel(const float* const* xp, const float* w, int64_t cin,
                         float (*out)[kCoutBlock]);

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
typedef float ref_v4f __attribute__((vector_size(16)));
static_assert(kCoutBlock == 8, "the vector micro-kernels hold 8 couts as two 4-lane vectors");

template <>
inline void micro_kernel<1>(const float* const* xp, const float* w, int64_t cin,
                            float (*out)[kCoutBlock]) {
  ref_v4f a0 = {0.f, 0.f, 0.f, 0.f}, b0 = a0;
  const float* x0 = xp[0];
  const ref_v4f* wv = reinterpret_cast<const ref_v4f*>(w);
  for (int64_t ci = 0; ci < cin; ++ci) {
    const ref_v4f w0 = wv[2 * ci], w1 = wv[2 * ci + 1];
    const float s0 = x0[ci];
    const ref_v4f v0 = {s0, s0, s0, s0};
    a0 += v0 * w0;
    b0 += v0 * w1;
  }
  for (int c = 0; c < 4; ++c) {
    out[0][c] = a0[c];
    out[0][4 + c] = b0[c];
  }
}

template <>
inline void micro_kernel<4>(const float* const* xp, const float* w, int64_t cin,
                            float (*out)[kCoutBlock]) {
  ref_v4f a0 = {0.f, 0.f, 0.f, 0.f}, b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
  const float *x0 = xp[0], *x1 = xp[1], *x2 = xp[2], *x3 = xp[3];
  const ref_v4f* wv = reinterpret_cast<const ref_v4f*>(w);
  for (int64_t ci = 0; ci < cin; ++ci) {
    const ref_v4f w0 = wv[2 * ci], w1 = wv[2 * ci + 1];
    const float s0 = x0[ci], s1 = x1[ci], s2 = x2[ci], s3 = x3[ci];
    const ref_v4f v0 = {s0, s0, s0, s0}, v1 = {s1, s1, s1, s1}, v2 = {s2, s2, s2, s2},
                  v3 = {s3, s3, s3, s3};
    a0 += v0 * w0;
    b0 += v0 * w1;
    a1 += v1 * w0;
    b1 += v1 * w1;
    a2 += v2 * w0;
    b2 += v2 * w1;
    a3 += v3 * w0;
    b3 += v3 * w1;
  }
  for (int c = 0; c < 4; ++c) {
    out[0][c] = a0[c];
    out[0][4 + c] = b0[c];
    out[1][c] = a1[c];
    out[1][4 + c] = b1[c];
    out[2][c] = a2[c];
    out[2][4 + c] = b2[c];
    out[3][c] = a3[c];
    out[3][4 + c] = b3[c];
  }
}
#else
template <>
inline void micro_kernel<1>(const float* const* xp, const float* w, int64_t cin,
                            float (*out)[kCoutBlock]) {
  float a0[kCoutBlock] = {};
  const float* x0 = xp[0];
  for (int64_t ci = 0; ci < cin; ++ci) {
    const float* wr = w + ci * kCoutBlock;
    const float v0 = x0[ci];
    for (int c = 0; c < kCoutBlock; ++c) a0[c] += v0 * wr[c];
  }
  for (int c = 0; c < kCoutBlock; ++c) out[0][c] = a0[c];
}

template <>
inline void micro_kernel<4>(const float* const* xp, const float* w, int64_t cin,
                            float (*out)[kCoutBlock]) {
  float a0[kCoutBlock] = {}, a1[kCoutBlock] = {}, a2[kCoutBlock] = {}, a3[kCoutBlock] = {};
  const float *x0 = xp[0], *x1 = xp[1], *x2 = xp[2], *x3 = xp[3];
  for (int64_t ci = 0; ci < cin; ++ci) {
    const float* wr = w + ci * kCoutBlock;
    const float v0 = x0[ci], v1 = x1[ci], v2 = x2[ci], v3 = x3[ci];
    for (int c = 0; c < kCoutBlock; ++c) {
      const float wc = wr[c];
      a0[c] += v0 * wc;
      a1[c] += v1 * wc;
      a2[c] += v2 * wc;
      a3[c] += v3 * wc;
    }
  }
  for (int c = 0; c < kCoutBlock; ++c) {
    out[0][c] = a0[c];
    out[1][c] = a1[c];
    out[2][c] = a2[c];
    out[3][c] = a3[c];
  }
}
#endif

// The valid taps of one output row (n, t, h): the input row each (kt, kh) reads, or skipped.
struct RowTap {
  int tap_th;          // kt * kh_count + kh
  const float* x_row;  // start of input row (n, t_src, h_src), channel 0 of w = 0
  int64_t sw;          // its pixel stride (x's, or the cache's)
};

struct RefContext {
  const ConvDesc* d;
  const float* x;
  const float* cache;  // d.cache_frames frames in front of x (d.cache_strides), or null
  const float* wpk;  // [chunk][tap][cin][kCoutBlock]
  const float* bias;
  const float* residual;
  float* y;
  int64_t n_chunks;
  int64_t up_w;
  int64_t wo_count;
};

// Computes every output element of row (n, to, ho).
inline void compute_row(const RefContext& c, int64_t n, int64_t to, int64_t ho,
                        std::vector<RowTap>* taps_buf) {
  const ConvDesc& d = *c.d;
  const int64_t u = d.upsample;
  const int taps = d.taps();
  const int64_t cin = d.cin, cout = d.cout;

  // Valid (kt, kh) pairs of this row, in (kt, kh) order.
  std::vector<RowTap>& row_taps = *taps_buf;
  row_taps.clear();
  for (int kt = 0; kt < d.kt; ++kt) {
    // Frame ts of cat(cache, x): the cached frames first.
    const int64_t ts = to * d.stride_t + kt - d.pad.t_front;
    if (ts < 0 || ts >= d.in_frames()) continue;
    const bool cached = ts < d.cache_frames;
    const Strides5& s = cached ? d.cache_strides : d.in_strides;
    const float* frame = cached ? c.cache + n * s.n + ts * s.t
                                : c.x + n * s.n + (ts - d.cache_frames) * s.t;
    for (int kh = 0; kh < d.kh; ++kh) {
      const int64_t hp = ho * d.stride_h + kh - d.pad.h_top;
      if (hp < 0 || hp >= d.up_h()) continue;
      const int64_t hs = hp / u;
      row_taps.push_back(RowTap{kt * d.kh + kh, frame + hs * s.h, s.w});
    }
  }

  const int64_t chunk_stride = int64_t(taps) * cin * kCoutBlock;
  for (int64_t wo0 = 0; wo0 < c.wo_count; wo0 += kPixBlock) {
    const int np = int(std::min<int64_t>(kPixBlock, c.wo_count - wo0));
    for (int64_t ch = 0; ch < c.n_chunks; ++ch) {
      double dacc[kPixBlock][kCoutBlock];
      for (int p = 0; p < kPixBlock; ++p)
        for (int k = 0; k < kCoutBlock; ++k) dacc[p][k] = 0.0;
      const float* wchunk = c.wpk + ch * chunk_stride;
      for (const RowTap& rt : row_taps) {
        for (int kw = 0; kw < d.kw; ++kw) {
          const int tap = rt.tap_th * d.kw + kw;
          const float* wt = wchunk + int64_t(tap) * cin * kCoutBlock;
          const float* xp[kPixBlock];
          bool valid[kPixBlock];
          int n_valid = 0;
          for (int p = 0; p < np; ++p) {
            const int64_t wp = (wo0 + p) * d.stride_w + kw - d.pad.w_left;
            valid[p] = wp >= 0 && wp < c.up_w;
            xp[p] = valid[p] ? rt.x_row + (wp / u) * rt.sw : nullptr;
            n_valid += valid[p] ? 1 : 0;
          }
          float part[kPixBlock][kCoutBlock];
          if (n_valid == kPixBlock) {
            micro_kernel<kPixBlock>(xp, wt, cin, part);
            for (int p = 0; p < kPixBlock; ++p)
              for (int k = 0; k < kCoutBlock; ++k) dacc[p][k] += double(part[p][k]);
          } else {
            // Row ends and padded columns: the same per-pixel sum, one pixel at a time.
            for (int p = 0; p < np; ++p) {
              if (!valid[p]) continue;
              micro_kernel<1>(&xp[p], wt, cin, &part[p]);
              for (int k = 0; k < kCoutBlock; ++k) dacc[p][k] += double(part[p][k]);
            }
          }
        }
      }
      // Epilogue: bias, residual, round once to float.
      const int64_t co0 = ch * kCoutBlock;
      const int nc = int(std::min<int64_t>(kCoutBlock, cout - co0));
      for (int p = 0; p < np; ++p) {
        const int64_t pix =
            n * d.out_strides.n + ho * d.out_strides.h + (wo0 + p) * d.out_strides.w;
        for (int k = 0; k < nc; ++k) {
          // Channel co of frame to; interleaved halves: channel co % C of frame 2 to + co / C.
          const int64_t co = co0 + k, half = d.out_channels_stored();
          const int64_t off = pix + (d.interleave_halves
                                         ? (2 * to + co / half) * d.out_strides.t + co % half
                                         : to * d.out_strides.t + co);
          double v = dacc[p][k];
          if (c.bias) v += double(c.bias[co]);
          if (c.residual) v += double(c.residual[off]);
          c.y[off] = float(v);
        }
      }
    }
  }
}

}  // namespace detail

// y = conv(x, w) + bias + residual for any valid ConvDesc (see the file comment).
//   x        : input, NDHWC with d.in_strides (element strides, channel stride 1)
//   w        : PyTorch layout [Cout][Cin][kt][kh][kw], dense
//   bias     : fp32 [Cout] or nullptr
//   residual : the output's shape with d.out_strides, or nullptr; may equal y
//   y        : output, written with d.out_strides (elements between strided pixels untouched)
//   threads  : worker threads; 0 = std::thread::hardware_concurrency()
//   cache    : d.cache_frames frames in front of x (d.cache_strides): the conv of cat(cache, x)
inline Status conv_reference_cached(const ConvDesc& d, const float* cache, const float* x,
                                    const float* w, const float* bias, const float* residual,
                                    float* y, int threads = 0) {
  VAECONV_RETURN_IF_ERROR(d.validate());
  if (x == nullptr || w == nullptr || y == nullptr)
    return Status(StatusCode::kInvalidArgument, "conv_reference: x, w and y must not be null");
  if ((cache == nullptr) != (d.cache_frames == 0))
    return Status(StatusCode::kInvalidArgument,
                  "conv_reference: a cache is given exactly when d.cache_frames > 0");
  if (threads < 0)
    return Status(StatusCode::kInvalidArgument, "conv_reference: threads must be >= 0");

  using detail::kCoutBlock;
  const int taps = d.taps();
  const int64_t cin = d.cin, cout = d.cout;
  const int64_t n_chunks = (cout + kCoutBlock - 1) / kCoutBlock;

  // Repack w[co][ci][tap] to wpk[chunk][tap][ci][kCoutBlock], zero-padding cout.
  std::vector<float> wpk(size_t(n_chunks) * size_t(taps) * size_t(cin) * kCoutBlock, 0.0f);
  for (int64_t co = 0; co < cout; ++co) {
    const int64_t ch = co / kCoutBlock, k = co % kCoutBlock;
    for (int64_t ci = 0; ci < cin; ++ci) {
      const float* src = w + (co * cin + ci) * taps;
      for (int tap = 0; tap < taps; ++tap)
        wpk[size_t(((ch * taps + tap) * cin + ci) * kCoutBlock + k)] = src[tap];
    }
  }

  detail::RefContext c;
  c.d = &d;
  c.x = x;
  c.cache = cache;
  c.wpk = wpk.data();
  c.bias = bias;
  c.residual = residual;
  c.y = y;
  c.n_chunks = n_chunks;
  c.up_w = d.up_w();
  c.wo_count = d.out_w();

  const int64_t to_count = d.out_t(), ho_count = d.out_h();
  const int64_t rows = d.n * to_count * ho_count;
  int64_t nt = threads > 0 ? threads : int64_t(std::thread::hardware_concurrency());
  nt = std::max<int64_t>(1, std::min(nt, rows));

  std::atomic<int64_t> next{0};
  auto worker = [&]() {
    std::vector<detail::RowTap> buf;
    buf.reserve(size_t(d.kt) * size_t(d.kh));
    for (;;) {
      const int64_t r = next.fetch_add(1, std::memory_order_relaxed);
      if (r >= rows) break;
      const int64_t ho = r % ho_count;
      const int64_t to = (r / ho_count) % to_count;
      const int64_t n = r / (ho_count * to_count);
      detail::compute_row(c, n, to, ho, &buf);
    }
  };
  if (nt == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(size_t(nt - 1));
    for (int64_t i = 0; i + 1 < nt; ++i) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
  }
  return Status::Ok();
}

inline Status conv_reference(const ConvDesc& d, const float* x, const float* w, const float* bias,
                             const float* residual, float* y, int threads = 0) {
  return conv_reference_cached(d, nullptr, x, w, bias, residual, y, threads);
}

// The T = 1 degeneration of the causal 3x3x3 conv: with 2 frames of front padding only the
// kt = 2 slice of the weight faces data. Returns w5d[:, :, 2, :, :] as a dense
// [Cout][Cin][3][3] weight (from a dense [Cout][Cin][3][3][3] one).
inline std::vector<float> slice_causal_weight_t1(const float* w5d, int64_t cout, int64_t cin) {
  std::vector<float> out(size_t(cout) * size_t(cin) * 9);
  for (int64_t oc = 0; oc < cout * cin; ++oc)
    for (int k = 0; k < 9; ++k) out[size_t(oc * 9 + k)] = w5d[oc * 27 + 2 * 9 + k];
  return out;
}

}  // namespace reference
}  // namespace vaeconv
