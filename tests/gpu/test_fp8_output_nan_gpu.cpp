// test_fp8_output_nan_gpu.cpp — an FP8-output conv never loses a NaN (label gpu).
//
// The FP8-output epilogue stores a NaN result as its architecture's kFp8NanCode (conv/fp8_scale.hpp:
// 0x7F on NVIDIA and gfx950, the FNUZ NaN 0x80 on gfx942) and +-Inf as +-448 (satfinite). Per
// case (FP8 operands, FP8 output; one per kernel family that can write an FP8 output):
//   * activations: bf16 values quantized on the host (the library's quantizer rule), then e4m3fn
//     NaN bytes (0x7F, 0xFF: an outside tensor's) planted at a few elements, corners included,
//     and the tensor sent through sanitize_fp8_for_target on the device (gfx942: NaN -> 0x80);
//   * weights: random, packed (pack_weights_fp8); the reference uses the packer's own values;
//   * residual (bf16; most cases): random, with NaN, +Inf and -Inf at elements whose window holds
//     no NaN input;
//   * the output is poisoned with 0xFF (not the NaN code on any target) and every element is
//     checked: exactly the NaN code where the window touches a NaN input (every channel) or the
//     residual is NaN; 0x7E / 0xFE where the residual is +-Inf; everywhere else a non-NaN code,
//     never -0, within one e4m3 rounding (plus the accumulation's bound) of the CPU conv of the
//     dequantized operands.
// Chained: the FP8 output of the first case is the next conv's activation as stored (no
// sanitize: a library tensor), with its y_scale as x_scale; that conv's output is the NaN code
// exactly at the pixels whose window touches a NaN of the first output. And the quantizer's rule:
// a bf16 NaN quantized on the device gives a NaN scale, and the FP8 output is the NaN code
// everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "vaeconv/api/fp8_sanitize.hpp"
#include "vaeconv/arch/fp8_fnuz.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/core/numerics_fp8.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/reference/conv_reference.hpp"
#include "vaeconv_kernels.hpp"

namespace vaeconv::test {
namespace {

// The NaN code this device's FP8 outputs carry, and how its kernels read an FP8 byte.
bool device_reads_fnuz() {
  bool fnuz = false;
  return detail::current_device_reads_fnuz(&fnuz).ok() && fnuz;
}
uint8_t device_nan_code() { return device_reads_fnuz() ? arch::kFp8NanCodeFnuz : arch::kFp8NanCodeE4m3fn; }
bool reads_as_nan(uint8_t b, bool fnuz) { return fnuz ? b == 0x80 : e4m3fn_is_nan(b); }

const char* family_of(const ConvDesc& d) {
  switch (kernel::shipped_family(d)) {
    case kernel::FamilyId::kTapReduce: return "tap_reduce";
    case kernel::FamilyId::kHalo: return "halo";
    case kernel::FamilyId::kTapRow: return "tap_row";
    default: return "implicit_gemm";
  }
}

// For every output element, whether its window reads an input element with mask != 0: the CPU
// conv of the mask with all-ones weights (padded taps are skipped, so only real taps count).
std::vector<bool> touched_outputs(const ConvDesc& d, const std::vector<float>& in_mask) {
  ConvDesc dr = d;
  dr.set_dtypes(DType::kBF16);
  const std::vector<float> ones(size_t(d.cout * d.cin * d.taps()), 1.f);
  std::vector<float> out(size_t(d.out_elements()), 0.f);
  const Status s = reference::conv_reference(dr, in_mask.data(), ones.data(), nullptr, nullptr, out.data());
  EXPECT_TRUE(s.ok()) << s.to_string();
  std::vector<bool> t(out.size());
  for (size_t i = 0; i < out.size(); ++i) t[i] = out[i] > 0.f;
  return t;
}

// A conv on the device: FP8 activation bytes xq (device, with its scale), packed FP8 weights, an
// optional bf16 residual; returns the FP8 output bytes (poisoned with 0xFF before the run).
struct DeviceConv {
  ConvDesc d;
  PackedWeightsHost packed;
  std::vector<float> bias;
};
Status run_fp8_out(const DeviceConv& c, const void* xq_dev, const float* x_scale_dev, const float* y_scale_dev,
                   const std::vector<uint16_t>* residual, std::vector<uint8_t>* y, bool* guards_ok) {
  const size_t y_n = size_t(c.d.out_elements());
  GuardedBuffer w_dev(c.packed.byte_size()), ws_dev(c.packed.scales.size() * 4), b_dev(c.bias.size() * 4),
      r_dev(residual ? y_n * 2 : 16), y_dev(y_n);
  for (const GuardedBuffer* b : {&w_dev, &ws_dev, &b_dev, &r_dev, &y_dev})
    if (!b->ok()) return Status(StatusCode::kRuntimeError, "hipMalloc failed");
  w_dev.upload(c.packed.bytes(), c.packed.byte_size());
  ws_dev.upload(c.packed.scales.data(), c.packed.scales.size() * 4);
  b_dev.upload(c.bias.data(), c.bias.size() * 4);
  if (residual) r_dev.upload(residual->data(), y_n * 2);
  const std::vector<uint8_t> poison(y_n, 0xFF);
  y_dev.upload(poison.data(), y_n);
  ConvArgs a;
  a.x = xq_dev;
  a.x_scale = x_scale_dev;
  a.weights = {w_dev.ptr(), c.packed.info, static_cast<const float*>(ws_dev.ptr())};
  a.bias = static_cast<const float*>(b_dev.ptr());
  a.residual = residual ? r_dev.ptr() : nullptr;
  a.y = y_dev.ptr();
  a.y_scale = y_scale_dev;
  VAECONV_RETURN_IF_ERROR(precompiled::conv_forward(c.d, a, nullptr));
  const hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) return Status(StatusCode::kRuntimeError, hipGetErrorString(e));
  y->assign(y_n, 0);
  y_dev.download(y->data(), y_n);
  *guards_ok = y_dev.guards_intact();
  return Status::Ok();
}

struct NanCase {
  const char* name;
  ConvDesc desc;  // bf16 as the factory gives it; FP8 operands and output are set here
  bool residual;
};

std::vector<NanCase> nan_cases() {
  return {
      {"implicit_gemm_wide_t3", ConvDesc::causal3x3x3(1, 3, 12, 20, 64, 64), true},
      {"halo_t1", ConvDesc::causal3x3x3(1, 1, 20, 24, 64, 64), true},
      {"narrow_cout32", ConvDesc::causal3x3x3(1, 2, 10, 12, 32, 32), false},
      {"tiny_cout12_elementwise_store", ConvDesc::causal3x3x3(2, 2, 9, 11, 16, 12), true},
      {"tap_reduce_cout3", ConvDesc::causal3x3x3(1, 2, 16, 16, 32, 3), true},
      {"tap_row_cin3", ConvDesc::causal3x3x3(1, 1, 16, 16, 3, 64), false},
      {"downsample", ConvDesc::downsample(1, 2, 16, 18, 32, 64), true},
  };
}

// What one case found, element by element.
struct NanCheck {
  int64_t checked = 0, want_nan = 0, nan_missing = 0, nan_extra = 0, sat_bad = 0, value_bad = 0, neg_zero = 0;
  std::string first;
};

class Fp8OutputNanGpu : public ::testing::TestWithParam<NanCase> {};

TEST_P(Fp8OutputNanGpu, NanAtTouchedPixelsAndSatfiniteInf) {
  const NanCase& nc = GetParam();
  ConvDesc d = nc.desc;
  d.set_dtypes(DType::kFP8E4M3);
  d.out_dtype = DType::kFP8E4M3;
  VAECONV_REQUIRE_GPU();
  const bool fnuz = device_reads_fnuz();
  const uint8_t code = device_nan_code();
  std::mt19937 rng(0xC0DEu + uint32_t(d.cout * 7 + d.cin));
  const int64_t x_n = d.n * d.t * d.h * d.w * d.cin, y_n = d.out_elements();

  // Activations: quantized on the host (the quantizer's rule), then NaN bytes planted.
  std::vector<uint16_t> x_bits;
  std::vector<float> x_f;
  random_bf16(rng, size_t(x_n), -1.f, 1.f, &x_bits, &x_f);
  std::vector<uint8_t> xq(static_cast<size_t>(x_n));
  const float x_scale = quantize_fp8_host(x_bits.data(), x_n, xq.data());
  std::vector<float> x_deq(static_cast<size_t>(x_n)), nan_mask(size_t(x_n), 0.f);
  for (size_t i = 0; i < xq.size(); ++i) x_deq[i] = e4m3fn_to_float(xq[i]) * x_scale;
  // The first and last elements (corner pixels), and three random ones.
  std::vector<int64_t> nan_at = {0, x_n - 1};
  std::uniform_int_distribution<int64_t> any_x(0, x_n - 1);
  for (int i = 0; i < 3; ++i) nan_at.push_back(any_x(rng));
  for (size_t i = 0; i < nan_at.size(); ++i) {
    xq[size_t(nan_at[i])] = i % 2 ? 0xFF : 0x7F;
    nan_mask[size_t(nan_at[i])] = 1.f;
    x_deq[size_t(nan_at[i])] = 0.f;  // the reference of the untouched outputs does not read it
  }
  const std::vector<bool> touched = touched_outputs(d, nan_mask);

  DeviceConv c{d, {}, std::vector<float>(size_t(d.cout))};
  std::vector<float> w_f(size_t(d.cout * d.cin * d.taps()));
  const float wr = 1.7f / std::sqrt(float(d.gemm_k()));
  std::uniform_real_distribution<float> uw(-wr, wr), ub(-0.5f, 0.5f);
  for (float& v : w_f) v = uw(rng);
  for (float& v : c.bias) v = ub(rng);
  ASSERT_TRUE(pack_weights_fp8(d, w_f.data(), &c.packed).ok());
  // The packer's values (one phase: row co of the packing is channel co, scale scales[co]).
  std::vector<float> w_deq(w_f.size()), w_abs(w_f.size());
  const int64_t per_co = d.cin * d.taps();
  for (size_t i = 0; i < w_f.size(); ++i) {
    const float s = c.packed.scales[i / size_t(per_co)];
    w_deq[i] = e4m3fn_to_float(quantize_e4m3fn(w_f[i], s)) * s;
    w_abs[i] = std::fabs(w_deq[i]);
  }

  // Residual: random, with NaN / +Inf / -Inf at untouched outputs.
  std::vector<uint16_t> r_bits;
  std::vector<float> r_f;
  std::vector<int> special(size_t(y_n), 0);  // 1 NaN, 2 +Inf, 3 -Inf
  if (nc.residual) {
    random_bf16(rng, size_t(y_n), -1.f, 1.f, &r_bits, &r_f);
    std::uniform_int_distribution<int64_t> any_y(0, y_n - 1);
    int placed = 0;
    for (int tries = 0; placed < 6 && tries < 10000; ++tries) {
      const int64_t i = any_y(rng);
      if (touched[size_t(i)] || special[size_t(i)]) continue;
      const int kind = 1 + placed % 3;
      special[size_t(i)] = kind;
      r_bits[size_t(i)] = kind == 1 ? uint16_t(0x7FC0) : kind == 2 ? uint16_t(0x7F80) : uint16_t(0xFF80);
      r_f[size_t(i)] = bf16_to_float(r_bits[size_t(i)]);
      ++placed;
    }
    ASSERT_EQ(placed, 6) << "premise: untouched outputs for the residual's NaN / Inf";
  }

  // References: the conv of the dequantized operands (+ bias + residual), and of their magnitudes
  // (the accumulation's bound).
  ConvDesc dr = d;
  dr.set_dtypes(DType::kBF16);
  std::vector<float> ref(static_cast<size_t>(y_n)), x_abs(x_deq.size()), sum_abs(static_cast<size_t>(y_n));
  for (size_t i = 0; i < x_abs.size(); ++i) x_abs[i] = std::fabs(x_deq[i]);
  ASSERT_TRUE(reference::conv_reference(dr, x_deq.data(), w_deq.data(), c.bias.data(), nc.residual ? r_f.data() : nullptr,
                                        ref.data()).ok());
  ASSERT_TRUE(reference::conv_reference(dr, x_abs.data(), w_abs.data(), nullptr, nullptr, sum_abs.data()).ok());
  float amax = 0.f;
  for (size_t i = 0; i < ref.size(); ++i)
    if (std::isfinite(ref[i]) && !touched[i]) amax = std::max(amax, std::fabs(ref[i]));
  const float y_scale = fp8_scale_for_amax(amax);

  // Device: x bytes as an outside tensor (sanitized), scales, the conv.
  GuardedBuffer xq_dev(static_cast<size_t>(x_n)), scales(256);
  ASSERT_TRUE(xq_dev.ok() && scales.ok());
  xq_dev.upload(xq.data(), size_t(x_n));
  ASSERT_TRUE(sanitize_fp8_for_target(xq_dev.ptr(), x_n, nullptr).ok());
  const float sc[2] = {x_scale, y_scale};
  scales.upload(sc, sizeof sc);
  const float* sdev = static_cast<const float*>(scales.ptr());
  std::vector<uint8_t> y;
  bool guards_ok = false;
  const Status st = run_fp8_out(c, xq_dev.ptr(), sdev, sdev + 1, nc.residual ? &r_bits : nullptr, &y, &guards_ok);
  ASSERT_TRUE(st.ok()) << st.to_string() << " for " << d.to_string();

  NanCheck k;
  for (int64_t i = 0; i < y_n; ++i) {
    const uint8_t b = y[size_t(i)];
    const bool want_nan = touched[size_t(i)] || special[size_t(i)] == 1;
    ++k.checked;
    k.want_nan += want_nan;
    auto note = [&](const char* what) {
      if (k.first.empty())
        k.first = std::string(what) + " at " + std::to_string(i) + ": byte " + std::to_string(b) + ", reference " +
                  std::to_string(ref[size_t(i)]);
    };
    if (want_nan) {
      if (b != code) {
        ++k.nan_missing;
        note("NaN lost");
      }
      continue;
    }
    if (reads_as_nan(b, fnuz) || b == 0xFF || b == 0x7F) {  // any NaN code, of either form
      ++k.nan_extra;
      note("NaN where none belongs");
      continue;
    }
    if (b == 0x80) {
      ++k.neg_zero;
      note("-0 stored");
    }
    if (special[size_t(i)] >= 2) {
      if (b != (special[size_t(i)] == 2 ? 0x7E : 0xFE)) {
        ++k.sat_bad;
        note("Inf did not saturate to +-448");
      }
      continue;
    }
    const double got = double(e4m3fn_to_float(b)) * y_scale, want = ref[size_t(i)];
    // One e4m3 rounding (half a step: 2^-4 relative, 2^-10 of y_scale among the subnormals) and
    // the accumulation's bound (2^-11 of sum |x * w|, conv_case.hpp), with a margin of two.
    const double tol = 2.0 * (std::ldexp(std::fabs(want), -4) + std::ldexp(double(y_scale), -10) +
                              std::ldexp(double(sum_abs[size_t(i)]), -11));
    if (!(std::fabs(got - want) <= tol)) {
      ++k.value_bad;
      note("value");
    }
  }
  std::printf("[ vaeconv  ] %s (%s, device NaN code 0x%02X): %lld elements, %lld NaN expected\n", d.to_string().c_str(),
              family_of(d), unsigned(code), static_cast<long long>(k.checked), static_cast<long long>(k.want_nan));
  EXPECT_EQ(k.checked, y_n);
  EXPECT_GT(k.want_nan, 0) << "premise: some outputs read a NaN";
  EXPECT_LT(k.want_nan, y_n / 2) << "premise: most outputs read none";
  EXPECT_EQ(k.nan_missing, 0) << k.first;
  EXPECT_EQ(k.nan_extra, 0) << k.first;
  EXPECT_EQ(k.sat_bad, 0) << k.first;
  EXPECT_EQ(k.neg_zero, 0) << k.first;
  EXPECT_EQ(k.value_bad, 0) << k.first;
  EXPECT_TRUE(guards_ok) << "a guard band around the output was written";
}

INSTANTIATE_TEST_SUITE_P(Families, Fp8OutputNanGpu, ::testing::ValuesIn(nan_cases()),
                         [](const ::testing::TestParamInfo<NanCase>& i) { return std::string(i.param.name); });

// The next conv reads the FP8 output as stored (a library tensor: no sanitize) with its y_scale as
// x_scale: its output is the NaN code exactly at the pixels whose window touches a NaN of the first
// output, every channel, and nowhere else.
TEST(Fp8OutputNanChainGpu, NextConvReadsTheStoredNan) {
  ConvDesc d = ConvDesc::causal3x3x3(1, 3, 12, 20, 64, 64);
  d.set_dtypes(DType::kFP8E4M3);
  d.out_dtype = DType::kFP8E4M3;
  VAECONV_REQUIRE_GPU();
  const bool fnuz = device_reads_fnuz();
  const uint8_t code = device_nan_code();
  std::mt19937 rng(77);
  const int64_t x_n = d.n * d.t * d.h * d.w * d.cin, y_n = d.out_elements();
  ASSERT_EQ(x_n, y_n) << "premise: the conv maps the tensor to its own shape";
  std::vector<uint16_t> x_bits;
  std::vector<float> x_f;
  random_bf16(rng, size_t(x_n), -1.f, 1.f, &x_bits, &x_f);
  std::vector<uint8_t> xq(static_cast<size_t>(x_n));
  const float x_scale = quantize_fp8_host(x_bits.data(), x_n, xq.data());
  xq[size_t(x_n / 2 + 5 * d.cin + 5)] = 0x7F;  // one NaN element in the middle frame
  std::vector<float> mask0(size_t(x_n), 0.f);
  mask0[size_t(x_n / 2 + 5 * d.cin + 5)] = 1.f;
  const std::vector<bool> want1 = touched_outputs(d, mask0);
  DeviceConv c{d, {}, std::vector<float>(size_t(d.cout), 0.25f)};
  std::vector<float> w_f(size_t(d.cout * d.cin * d.taps()));
  std::uniform_real_distribution<float> uw(-0.05f, 0.05f);
  for (float& v : w_f) v = uw(rng);
  ASSERT_TRUE(pack_weights_fp8(d, w_f.data(), &c.packed).ok());

  GuardedBuffer x1(static_cast<size_t>(x_n)), x2(static_cast<size_t>(y_n)), scales(256);
  ASSERT_TRUE(x1.ok() && x2.ok() && scales.ok());
  x1.upload(xq.data(), size_t(x_n));
  ASSERT_TRUE(sanitize_fp8_for_target(x1.ptr(), x_n, nullptr).ok());
  const float sc[2] = {x_scale, 0.02f};  // y_scale of both convs (outputs of order 1 fit)
  scales.upload(sc, sizeof sc);
  const float* sdev = static_cast<const float*>(scales.ptr());
  std::vector<uint8_t> y1, y2;
  bool g1 = false, g2 = false;
  Status st = run_fp8_out(c, x1.ptr(), sdev, sdev + 1, nullptr, &y1, &g1);
  ASSERT_TRUE(st.ok()) << st.to_string();
  x2.upload(y1.data(), y1.size());  // the stored bytes, as the next conv would read them in place
  st = run_fp8_out(c, x2.ptr(), sdev + 1, sdev + 1, nullptr, &y2, &g2);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_TRUE(g1 && g2);

  std::vector<float> mask1(size_t(y_n), 0.f);
  int64_t nan1 = 0, first_wrong = 0;
  for (int64_t i = 0; i < y_n; ++i) {
    mask1[size_t(i)] = y1[size_t(i)] == code ? 1.f : 0.f;
    nan1 += y1[size_t(i)] == code;
    first_wrong += (y1[size_t(i)] == code) != want1[size_t(i)];
  }
  EXPECT_EQ(first_wrong, 0) << "the first output's NaN are the pixels around the NaN input, all channels";
  EXPECT_EQ(nan1 % d.cout, 0);
  const std::vector<bool> want = touched_outputs(d, mask1);
  int64_t missing = 0, extra = 0, want_n = 0;
  for (int64_t i = 0; i < y_n; ++i) {
    const uint8_t b = y2[size_t(i)];
    want_n += want[size_t(i)];
    if (want[size_t(i)]) missing += b != code;
    else extra += reads_as_nan(b, fnuz) || b == 0xFF || b == 0x7F;
  }
  std::printf("[ vaeconv  ] chain %s: first output %lld NaN, second %lld expected (code 0x%02X)\n", d.to_string().c_str(),
              static_cast<long long>(nan1), static_cast<long long>(want_n), unsigned(code));
  EXPECT_GT(want_n, nan1) << "premise: the NaN spreads";
  EXPECT_EQ(missing, 0) << "the second conv lost a NaN of the first one's output";
  EXPECT_EQ(extra, 0);
}

// The quantizer's rule: a bf16 NaN quantized on the device gives a NaN scale (its bytes 0x00), and
// an FP8-output conv reading it stores the NaN code in every element.
TEST(Fp8OutputNanChainGpu, QuantizerNanScaleGivesNanCodeEverywhere) {
  ConvDesc d = ConvDesc::causal3x3x3(1, 2, 8, 16, 32, 64);
  d.set_dtypes(DType::kFP8E4M3);
  d.out_dtype = DType::kFP8E4M3;
  VAECONV_REQUIRE_GPU();
  const uint8_t code = device_nan_code();
  std::mt19937 rng(5);
  const int64_t x_n = d.n * d.t * d.h * d.w * d.cin, y_n = d.out_elements();
  std::vector<uint16_t> x_bits;
  std::vector<float> x_f;
  random_bf16(rng, size_t(x_n), -1.f, 1.f, &x_bits, &x_f);
  x_bits[size_t(x_n / 3)] = 0x7FC0;
  DeviceConv c{d, {}, std::vector<float>(size_t(d.cout), 0.f)};
  std::vector<float> w_f(size_t(d.cout * d.cin * d.taps()));
  std::uniform_real_distribution<float> uw(-0.05f, 0.05f);
  for (float& v : w_f) v = uw(rng);
  ASSERT_TRUE(pack_weights_fp8(d, w_f.data(), &c.packed).ok());
  const size_t ws = precompiled::quantize_fp8_workspace_bytes(x_n);
  ASSERT_GT(ws, 0u);
  GuardedBuffer xb(size_t(x_n) * 2), xq(static_cast<size_t>(x_n)), wsb(ws), scales(256);
  ASSERT_TRUE(xb.ok() && xq.ok() && wsb.ok() && scales.ok());
  xb.upload(x_bits.data(), size_t(x_n) * 2);
  float* sdev = static_cast<float*>(scales.ptr());
  const float y_scale = 0.01f;
  (void)hipMemcpy(sdev + 1, &y_scale, 4, hipMemcpyHostToDevice);
  ASSERT_TRUE(precompiled::quantize_fp8(xb.ptr(), x_n, xq.ptr(), sdev, wsb.ptr(), ws, nullptr).ok());
  std::vector<uint8_t> y;
  bool g = false;
  const Status st = run_fp8_out(c, xq.ptr(), sdev, sdev + 1, nullptr, &y, &g);
  ASSERT_TRUE(st.ok()) << st.to_string();
  float x_scale = 0.f;
  (void)hipMemcpy(&x_scale, sdev, 4, hipMemcpyDeviceToHost);
  EXPECT_TRUE(std::isnan(x_scale)) << "a NaN input makes the quantizer's scale NaN";
  int64_t not_nan = 0;
  for (uint8_t b : y) not_nan += b != code;
  EXPECT_EQ(not_nan, 0) << "of " << y_n << " output elements";
  EXPECT_TRUE(g);
}

}  // namespace
}  // namespace vaeconv::test
