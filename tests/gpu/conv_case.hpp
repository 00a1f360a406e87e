// conv_case.hpp — one GPU conv checked against the CPU reference, element by element.
//
// Random bf16 input, weights (scaled 1/sqrt(K)), fp32 bias and bf16 residual; the output is
// poisoned with NaN before the run; every output element is compared with the reference; the
// elements between strided pixels and the guard bands around the output must stay untouched.
#pragma once
#include "gpu_test_util.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/reference/conv_reference.hpp"
#include "vaeconv_kernels.hpp"

namespace vaeconv::test {

struct CaseOptions {
  bool bias = true;
  bool residual = false;
  bool residual_in_place = false;  // residual == y
  uint32_t seed = 1;
};

struct CaseResult {
  Status status;
  CompareResult cmp;
  int64_t gaps_touched = 0;
  bool guards_ok = true;
};

inline int64_t span_elems(const Strides5& s, int64_t n, int64_t t, int64_t h, int64_t w,
                          int64_t c) {
  return (n - 1) * s.n + (t - 1) * s.t + (h - 1) * s.h + (w - 1) * s.w + c;
}

// A view into wider NHWC tensors: each input pixel padded by in_pad extra channels, each output
// pixel by out_pad (a multiple of the 16-byte chunk's elements where Cin fills chunks).
inline ConvDesc with_padded_strides(ConvDesc d, int64_t in_pad, int64_t out_pad) {
  d.in_strides.w = d.cin + in_pad;
  d.in_strides.h = d.in_strides.w * d.w;
  d.in_strides.t = d.in_strides.h * d.h;
  d.in_strides.n = d.in_strides.t * d.t;
  d.out_strides.w = d.cout + out_pad;
  d.out_strides.h = d.out_strides.w * d.out_w();
  d.out_strides.t = d.out_strides.h * d.out_h();
  d.out_strides.n = d.out_strides.t * d.out_t();
  return d;
}

// The offsets of d's output elements in its output span, in (n, t, h, w, c) order.
inline std::vector<int64_t> output_offsets(const ConvDesc& d) {
  std::vector<int64_t> v;
  v.reserve(size_t(d.out_elements()));
  const Strides5& s = d.out_strides;
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t t = 0; t < d.out_t(); ++t)
      for (int64_t h = 0; h < d.out_h(); ++h)
        for (int64_t w = 0; w < d.out_w(); ++w)
          for (int64_t c = 0; c < d.cout; ++c) v.push_back(n * s.n + t * s.t + h * s.h + w * s.w + c);
  return v;
}

// Elements of a span outside `offsets` whose bits differ from `init` (written between pixels).
template <class T>
int64_t gaps_touched(const std::vector<T>& got, const std::vector<T>& init,
                     const std::vector<int64_t>& offsets) {
  std::vector<uint8_t> is_valid(got.size(), 0);
  for (int64_t i : offsets) is_valid[size_t(i)] = 1;
  int64_t n = 0;
  for (size_t i = 0; i < got.size(); ++i) n += !is_valid[i] && got[i] != init[i];
  return n;
}

inline CaseResult run_conv_case(const ConvDesc& d, const CaseOptions& o) {
  CaseResult res;
  std::mt19937 rng(o.seed);
  const int64_t x_n = span_elems(d.in_strides, d.n, d.t, d.h, d.w, d.cin);
  const int64_t y_n = span_elems(d.out_strides, d.n, d.out_t(), d.out_h(), d.out_w(), d.cout);
  const int64_t w_n = d.cout * d.cin * d.taps();

  std::vector<uint16_t> x_bits, r_bits, w_bits;
  std::vector<float> x_f, r_f, w_f;
  random_bf16(rng, size_t(x_n), -1.f, 1.f, &x_bits, &x_f);
  const float ws = 1.f / std::sqrt(float(d.gemm_k()));
  random_bf16(rng, size_t(w_n), -ws * 1.7f, ws * 1.7f, &w_bits, &w_f);
  std::vector<float> bias(static_cast<size_t>(d.cout));
  std::uniform_real_distribution<float> ub(-0.5f, 0.5f);
  for (auto& b : bias) b = ub(rng);
  const bool has_res = o.residual || o.residual_in_place;
  if (has_res) random_bf16(rng, size_t(y_n), -1.f, 1.f, &r_bits, &r_f);

  // Reference.
  std::vector<float> y_ref(static_cast<size_t>(y_n), 0.f);
  res.status = reference::conv_reference(d, x_f.data(), w_f.data(), o.bias ? bias.data() : nullptr,
                                         has_res ? r_f.data() : nullptr, y_ref.data());
  if (!res.status.ok()) return res;

  // Device side.
  PackedWeightsHost packed;
  res.status = pack_weights_bf16(d, w_f.data(), &packed);
  if (!res.status.ok()) return res;
  GuardedBuffer x_dev(size_t(x_n) * 2), y_dev(size_t(y_n) * 2), w_dev(packed.bf16.size() * 2),
      b_dev(bias.size() * 4), r_dev(size_t(has_res ? y_n : 1) * 2);
  if (!x_dev.ok() || !y_dev.ok() || !w_dev.ok() || !b_dev.ok() || !r_dev.ok()) {
    res.status = Status(StatusCode::kRuntimeError, "hipMalloc failed");
    return res;
  }
  x_dev.upload(x_bits.data(), x_bits.size() * 2);
  w_dev.upload(packed.bf16.data(), packed.bf16.size() * 2);
  b_dev.upload(bias.data(), bias.size() * 4);
  std::vector<uint16_t> y_init(static_cast<size_t>(y_n), kPoisonBf16);
  if (o.residual_in_place) y_init = r_bits;
  y_dev.upload(y_init.data(), y_init.size() * 2);
  if (o.residual) r_dev.upload(r_bits.data(), r_bits.size() * 2);

  ConvArgs a;
  a.x = x_dev.ptr();
  a.weights = {w_dev.ptr(), packed.info};
  a.bias = o.bias ? static_cast<const float*>(b_dev.ptr()) : nullptr;
  a.residual = o.residual_in_place ? y_dev.ptr() : (o.residual ? r_dev.ptr() : nullptr);
  a.y = y_dev.ptr();
  res.status = precompiled::conv_forward(d, a, nullptr);
  if (!res.status.ok()) return res;
  const hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) {
    res.status = Status(StatusCode::kRuntimeError, hipGetErrorString(e));
    return res;
  }
  std::vector<uint16_t> y_bits(static_cast<size_t>(y_n));
  y_dev.download(y_bits.data(), y_bits.size() * 2);
  res.guards_ok = y_dev.guards_intact();

  // Gather the valid output elements (strides may leave gaps), check gaps kept their init.
  const std::vector<int64_t> offsets = output_offsets(d);
  std::vector<uint16_t> got;
  std::vector<float> want;
  got.reserve(offsets.size());
  want.reserve(offsets.size());
  for (int64_t i : offsets) {
    got.push_back(y_bits[size_t(i)]);
    want.push_back(y_ref[size_t(i)]);
  }
  res.gaps_touched = gaps_touched(y_bits, y_init, offsets);
  res.cmp = compare_bf16(got, want);
  return res;
}

// gtest assertions on a finished case, with the numbers in the log.
inline void expect_case_ok(const ConvDesc& d, const CaseResult& r) {
  ASSERT_TRUE(r.status.ok()) << r.status.to_string() << " for " << d.to_string();
  EXPECT_EQ(r.cmp.bad, 0) << r.cmp.bad << " of " << r.cmp.checked << " elements outside "
                          << "rtol=atol=2e-2 (" << r.cmp.nan << " NaN); first: " << r.cmp.first_bad
                          << " for " << d.to_string();
  EXPECT_EQ(r.cmp.checked, d.out_elements());
  EXPECT_LT(r.cmp.rel_l2, 1e-2) << "relative L2 error";
  EXPECT_EQ(r.gaps_touched, 0) << "elements between strided output pixels were written";
  EXPECT_TRUE(r.guards_ok) << "a guard band around the output was written";
  std::printf("[ vaeconv  ] %s: %lld elements, rel L2 %.3e, max abs err %.3e\n",
              d.to_string().c_str(), static_cast<long long>(r.cmp.checked), r.cmp.rel_l2,
              r.cmp.max_abs_err);
}

}  // namespace vaeconv::test
