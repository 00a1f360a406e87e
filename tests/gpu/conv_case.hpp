// conv_case.hpp — one GPU conv checked against the CPU reference, element by element, for either
// operand type (run_conv_case<DType>), and the kernel it aims at checked through which_kernel.
//
// Per case: random bf16 input, weights (scaled 1/sqrt(K)), fp32 bias and bf16 residual; the
// output is poisoned with NaN before the run; every output element is compared with the
// reference; the bytes between strided output pixels and the guard bands around the buffers must
// stay untouched.
//   BF16: the reference is the CPU conv of the bf16 operands; |y - ref| <= 2e-2 + 2e-2 |ref| for
//     every element and a relative L2 error < 1e-2.
//   FP8: the activations are quantized on the device (checked bit for bit against the host
//     quantizer, bytes and scale), the weights per output channel by the packing; the reference
//     is the CPU conv of the DEQUANTIZED operands (packed_reference.hpp: the packed weights'
//     values), element-wise with rtol = atol = 2e-2 (fp8 outputs: the reference rounded to e4m3,
//     one e4m3 step, plus the accumulation's bound per element), and the mean relative error
//     must be < 2e-2 (the seed's FP8 bar). The error against the unquantized bf16 conv is
//     reported.
#pragma once
#include <algorithm>
#include <cstdio>
#include <ostream>

#include "gpu_test_util.hpp"
#include "kernel_aim.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/reference/conv_reference.hpp"
#include "vaeconv/reference/packed_reference.hpp"
#include "vaeconv_kernels.hpp"

namespace vaeconv {
// Readable test parameters in gtest's output.
inline void PrintTo(const VaeShape& s, std::ostream* os) { *os << s.id; }
}  // namespace vaeconv

namespace vaeconv::test {

struct CaseOptions {
  bool bias = true;
  bool residual = false;
  bool residual_in_place = false;  // residual == y (a bf16 output)
  bool fp8_out = false;            // FP8 operands only: an e4m3fn output with a per-tensor scale
  uint32_t seed = 1;
  // >= 0: run with that table set (kernel::TableSet, precompiled::conv_forward_table_set)
  // instead of the device's (test_amd_tables_gpu.cpp: the AMD sets' tiles on NVIDIA).
  int table_set = -1;
};

struct CaseResult {
  Status status;
  CompareResult cmp;             // vs the reference (FP8: the conv of the dequantized operands)
  double mean_rel = 0;           // mean |y - ref| / mean |ref|
  double mean_rel_vs_bf16 = 0;   // FP8: against the unquantized bf16 conv (reported, not checked)
  int64_t quant_mismatch = 0;    // FP8: device quantizer vs host quantizer (bytes + scale)
  int64_t gaps_touched = 0;      // bytes between strided output pixels that were written
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

// Bytes of a span outside the elements at `offsets` (elem_bytes each) whose value differs from
// `init` (written between pixels).
inline int64_t gaps_touched(const std::vector<uint8_t>& got, const std::vector<uint8_t>& init,
                            const std::vector<int64_t>& offsets, int elem_bytes) {
  std::vector<uint8_t> is_valid(got.size(), 0);
  for (int64_t i : offsets)
    for (int b = 0; b < elem_bytes; ++b) is_valid[size_t(i * elem_bytes + b)] = 1;
  int64_t n = 0;
  for (size_t i = 0; i < got.size(); ++i) n += !is_valid[i] && got[i] != init[i];
  return n;
}

// The conv a case runs: d with operands of type `type` (bf16 output unless fp8_out).
inline ConvDesc case_desc(ConvDesc d, DType type, const CaseOptions& o) {
  d.set_dtypes(type);
  if (o.fp8_out) d.out_dtype = DType::kFP8E4M3;
  return d;
}

// Runs d (operands of type kType, as case_desc gives it) on the device and checks it against the
// CPU (see the file comment); the gtest verdict is expect_case_ok's.
template <DType kType>
CaseResult run_conv_case(const ConvDesc& d, const CaseOptions& o) {
  static_assert(kType == DType::kBF16 || kType == DType::kFP8E4M3, "bf16 or fp8 operands");
  CaseResult r;
  const bool fp8 = d.in_dtype == DType::kFP8E4M3;  // == kType, checked below
  const bool fp8_out = d.out_dtype == DType::kFP8E4M3;
  const bool has_res = o.residual || o.residual_in_place;
  if (d.in_dtype != kType || fp8_out != o.fp8_out || (fp8_out && !fp8) ||
      (fp8_out && o.residual_in_place)) {
    r.status = Status(StatusCode::kInvalidArgument,
                      "run_conv_case: the desc's dtypes disagree with the case (case_desc makes "
                      "them); an in-place residual needs a bf16 output");
    return r;
  }
  std::mt19937 rng(o.seed);
  const int64_t x_n = span_elems(d.in_strides, d.n, d.t, d.h, d.w, d.cin);
  const int64_t y_n = span_elems(d.out_strides, d.n, d.out_t(), d.out_h(), d.out_w(), d.cout);
  const std::vector<int64_t> offsets = output_offsets(d);
  std::vector<uint16_t> x_bits, w_bits, r_bits;
  std::vector<float> x_f, w_f, r_f;
  random_bf16(rng, size_t(x_n), -1.f, 1.f, &x_bits, &x_f);
  const float ws = 1.f / std::sqrt(float(d.gemm_k()));
  random_bf16(rng, size_t(d.cout * d.cin * d.taps()), -ws * 1.7f, ws * 1.7f, &w_bits, &w_f);
  std::vector<float> bias(static_cast<size_t>(d.cout));
  std::uniform_real_distribution<float> ub(-0.5f, 0.5f);
  for (auto& b : bias) b = ub(rng);
  if (has_res) random_bf16(rng, size_t(y_n), -1.f, 1.f, &r_bits, &r_f);
  const float* bias_f = o.bias ? bias.data() : nullptr;
  const float* res_f = has_res ? r_f.data() : nullptr;

  // References: `ref` is what the output is checked against; `ref_bf16`, the unquantized conv,
  // is reported beside it for FP8 (for BF16 they are one).
  ConvDesc d_ref = d;
  d_ref.set_dtypes(DType::kBF16);
  std::vector<float> ref(static_cast<size_t>(y_n), 0.f), ref_bf16;
  r.status = reference::conv_reference(d_ref, x_f.data(), w_f.data(), bias_f, res_f, ref.data());
  if (!r.status.ok()) return r;
  PackedWeightsHost packed;
  std::vector<uint8_t> xq_host;
  std::vector<float> x_deq;
  float x_scale_host = 0.f;
  if (fp8) {
    ref_bf16.swap(ref);
    ref.assign(static_cast<size_t>(y_n), 0.f);
    xq_host.resize(static_cast<size_t>(x_n));
    x_scale_host = quantize_fp8_host(x_bits.data(), x_n, xq_host.data());
    r.status = pack_weights_fp8(d, w_f.data(), &packed);
    if (!r.status.ok()) return r;
    x_deq.resize(static_cast<size_t>(x_n));
    for (size_t i = 0; i < x_deq.size(); ++i) x_deq[i] = e4m3fn_to_float(xq_host[i]) * x_scale_host;
    const auto value = [&](int64_t row, int64_t k) {
      return e4m3fn_to_float(packed.fp8[size_t(row * packed.info.k_pad + k)]) *
             packed.scales[size_t(row)];
    };
    r.status = reference::conv_reference_packed(d_ref, packed.info, value, x_deq.data(), bias_f,
                                                res_f, ref.data());
  } else {
    r.status = pack_weights_bf16(d, w_f.data(), &packed);
  }
  if (!r.status.ok()) return r;

  // Device buffers. FP8: x is quantized on the device into xq; scales holds x's scale and y's.
  const int y_elem = fp8_out ? 1 : 2;
  const size_t ws_bytes = fp8 ? precompiled::quantize_fp8_workspace_bytes(x_n) : 1;
  GuardedBuffer x_dev(size_t(x_n) * 2), xq_dev(fp8 ? size_t(x_n) : 1), q_ws(ws_bytes), scales(256),
      w_dev(packed.byte_size()), w_scales(fp8 ? packed.scales.size() * 4 : 4),
      b_dev(bias.size() * 4), r_dev(size_t(o.residual ? y_n : 1) * 2),
      y_dev(size_t(y_n) * size_t(y_elem));
  for (const GuardedBuffer* b : {&x_dev, &xq_dev, &q_ws, &scales, &w_dev, &w_scales, &b_dev, &r_dev, &y_dev})
    if (!b->ok()) {
      r.status = Status(StatusCode::kRuntimeError, "hipMalloc failed");
      return r;
    }
  x_dev.upload(x_bits.data(), x_bits.size() * 2);
  w_dev.upload(packed.bytes(), packed.byte_size());
  if (fp8) w_scales.upload(packed.scales.data(), packed.scales.size() * 4);
  b_dev.upload(bias.data(), bias.size() * 4);
  if (o.residual) r_dev.upload(r_bits.data(), r_bits.size() * 2);
  // Poison: bf16 0x7FC1 and e4m3fn 0xFF are NaN; an in-place residual starts as the residual.
  std::vector<uint8_t> y_init(y_dev.bytes(), 0xFF);
  if (o.residual_in_place) {
    std::memcpy(y_init.data(), r_bits.data(), y_init.size());
  } else if (!fp8_out) {
    for (size_t i = 0; i < y_init.size(); i += 2) std::memcpy(&y_init[i], &kPoisonBf16, 2);
  }
  y_dev.upload(y_init.data(), y_init.size());
  float* scale_dev = static_cast<float*>(scales.ptr());

  ConvArgs a;
  a.x = x_dev.ptr();
  a.weights = {w_dev.ptr(), packed.info};
  float y_scale = 1.f;
  if (fp8) {
    r.status = precompiled::quantize_fp8(x_dev.ptr(), x_n, xq_dev.ptr(), scale_dev, q_ws.ptr(),
                                         ws_bytes, nullptr);
    if (!r.status.ok()) return r;
    // The fp8 output's scale: from the reference's range, as a calibrated engine would set it.
    float y_amax = 0.f;
    for (float v : ref) y_amax = std::max(y_amax, std::fabs(v));
    y_scale = fp8_scale_for_amax(y_amax);
    (void)hipMemcpy(scale_dev + 1, &y_scale, 4, hipMemcpyHostToDevice);
    a.x = xq_dev.ptr();
    a.x_scale = scale_dev;
    a.weights = {w_dev.ptr(), packed.info, static_cast<const float*>(w_scales.ptr())};
    a.y_scale = fp8_out ? scale_dev + 1 : nullptr;
  }
  a.bias = o.bias ? static_cast<const float*>(b_dev.ptr()) : nullptr;
  a.residual = o.residual_in_place ? y_dev.ptr() : (o.residual ? r_dev.ptr() : nullptr);
  a.y = y_dev.ptr();
  r.status = o.table_set < 0 ? precompiled::conv_forward(d, a, nullptr)
                             : precompiled::conv_forward_table_set(
                                   d, a, kernel::TableSet(o.table_set), nullptr);
  if (!r.status.ok()) return r;
  const hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) {
    r.status = Status(StatusCode::kRuntimeError, hipGetErrorString(e));
    return r;
  }

  if (fp8) {  // the quantizer, bit for bit
    std::vector<uint8_t> xq(static_cast<size_t>(x_n));
    xq_dev.download(xq.data(), xq.size());
    float x_scale_dev = 0.f;
    (void)hipMemcpy(&x_scale_dev, scale_dev, 4, hipMemcpyDeviceToHost);
    for (size_t i = 0; i < xq.size(); ++i) r.quant_mismatch += xq[i] != xq_host[i];
    if (std::memcmp(&x_scale_dev, &x_scale_host, 4) != 0) ++r.quant_mismatch;
  }

  // The output's elements (at `offsets`), as bf16: bf16 directly, fp8 dequantized with y_scale;
  // the bytes between them must have kept their init.
  std::vector<uint8_t> y_bytes(y_dev.bytes());
  y_dev.download(y_bytes.data(), y_bytes.size());
  r.guards_ok = y_dev.guards_intact() && xq_dev.guards_intact();
  r.gaps_touched = gaps_touched(y_bytes, y_init, offsets, y_elem);
  std::vector<uint16_t> got;
  std::vector<float> want, want_bf16;
  got.reserve(offsets.size());
  want.reserve(offsets.size());
  for (int64_t i : offsets) {
    uint16_t bits;
    if (fp8_out) bits = float_to_bf16(e4m3fn_to_float(y_bytes[size_t(i)]) * y_scale);
    else std::memcpy(&bits, y_bytes.data() + size_t(i) * 2, 2);
    got.push_back(bits);
    want.push_back(ref[size_t(i)]);
    if (fp8) want_bf16.push_back(ref_bf16[size_t(i)]);
  }
  if (fp8_out) {
    // The reference is then the reference output rounded to e4m3fn at y_scale: the kernel must
    // land on the same code, or (accumulation order at a rounding boundary) on its neighbour.
    for (float& v : want) v = e4m3fn_to_float(quantize_e4m3fn(v, y_scale)) * y_scale;
    // Plus the accumulation's own bound: e4m3 wgmma adds into D with about 14 mantissa bits
    // (DeepSeek-V3 report, 3.3.2), so each of a promoted K interval's additions (128 K elements
    // at most: four k32 steps) may be off by 2^-13 of that interval's sum of |x * w|; over K, an
    // output may be off by up to 2^-11 * sum |x * w| (the conv of |x| and |w|, per element).
    // One element of a K = 864 case was off by 1.7e-4 for a sum of about 12 (bound 0.006).
    std::vector<float> x_abs(x_deq.size()), sum_abs(static_cast<size_t>(y_n));
    for (size_t i = 0; i < x_abs.size(); ++i) x_abs[i] = std::fabs(x_deq[i]);
    const auto abs_value = [&](int64_t row, int64_t k) {
      return std::fabs(e4m3fn_to_float(packed.fp8[size_t(row * packed.info.k_pad + k)]) *
                       packed.scales[size_t(row)]);
    };
    r.status = reference::conv_reference_packed(d_ref, packed.info, abs_value, x_abs.data(),
                                                nullptr, nullptr, sum_abs.data());
    if (!r.status.ok()) return r;
    std::vector<float> bound;
    for (int64_t i : offsets) bound.push_back(std::ldexp(sum_abs[size_t(i)], -11));
    r.cmp = compare_bf16(got, want, 0.13, 2e-2 * y_scale, &bound);  // an e4m3 step <= 1/8 rel.
  } else {
    r.cmp = compare_bf16(got, want);
  }
  if (!fp8) want_bf16 = want;
  double num = 0, den = 0, num_b = 0, den_b = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = bf16_to_float(got[i]);
    num += std::fabs(g - want[i]);
    den += std::fabs(want[i]);
    num_b += std::fabs(g - want_bf16[i]);
    den_b += std::fabs(want_bf16[i]);
  }
  r.mean_rel = den > 0 ? num / den : num;
  r.mean_rel_vs_bf16 = den_b > 0 ? num_b / den_b : num_b;
  return r;
}

// gtest assertions on a finished case, with the numbers in the log.
template <DType kType>
void expect_case_ok(const ConvDesc& d, const CaseResult& r) {
  ASSERT_TRUE(r.status.ok()) << r.status.to_string() << " for " << d.to_string();
  EXPECT_EQ(r.quant_mismatch, 0) << "device quantizer differs from the host quantizer";
  EXPECT_EQ(r.cmp.bad, 0) << r.cmp.bad << " of " << r.cmp.checked << " elements out of tolerance ("
                          << r.cmp.nan << " NaN); first: " << r.cmp.first_bad << " for "
                          << d.to_string();
  EXPECT_EQ(r.cmp.checked, d.out_elements());
  if constexpr (kType == DType::kFP8E4M3)
    EXPECT_LT(r.mean_rel, 2e-2) << "mean relative error vs the dequantized reference";
  else
    EXPECT_LT(r.cmp.rel_l2, 1e-2) << "relative L2 error";
  EXPECT_EQ(r.gaps_touched, 0) << "bytes between strided output pixels were written";
  EXPECT_TRUE(r.guards_ok) << "a guard band was written";
  if constexpr (kType == DType::kFP8E4M3)
    std::printf("[ vaeconv  ] fp8 %s: %lld elements, mean rel err %.3e (vs bf16 conv %.3e), rel L2 %.3e\n",
                d.to_string().c_str(), static_cast<long long>(r.cmp.checked), r.mean_rel,
                r.mean_rel_vs_bf16, r.cmp.rel_l2);
  else
    std::printf("[ vaeconv  ] %s: %lld elements, rel L2 %.3e, max abs err %.3e\n",
                d.to_string().c_str(), static_cast<long long>(r.cmp.checked), r.cmp.rel_l2,
                r.cmp.max_abs_err);
}

// --- A listed case ------------------------------------------------------------------------------
struct ConvCase {
  const char* name;
  ConvDesc desc;  // as the factories give it (bf16); case_desc sets the case's dtypes
  CaseOptions opt;
  Aim aim;
};
inline void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }  // the run prints the conv
inline std::string case_name(const ::testing::TestParamInfo<ConvCase>& i) { return i.param.name; }
inline std::string shape_name(const ::testing::TestParamInfo<VaeShape>& i) { return i.param.id; }

// The whole check of one case: the kernel it aims at (without a GPU too), then the GPU run.
template <DType kType>
void check_case(const ConvDesc& factory_desc, const CaseOptions& o, const Aim& aim) {
  const ConvDesc d = case_desc(factory_desc, kType, o);
  expect_kernel(d, aim);
  if (::testing::Test::HasFatalFailure()) return;
  VAECONV_REQUIRE_GPU();
  expect_case_ok<kType>(d, run_conv_case<kType>(d, o));
}

}  // namespace vaeconv::test
