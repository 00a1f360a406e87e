// test_harness_reference.cpp — the references the GPU cases and the benchmark check against,
// checked on the host (no GPU needed; label gpu with the rest of the suite that relies on them):
// the per-pixel reference (reference/pixel_reference.hpp) against the full one
// (conv_reference.hpp), and the conv of packed weights (reference/packed_reference.hpp), direct
// form and phases, per pixel and whole.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "conv_case.hpp"

namespace vaeconv::test {
namespace {

// Random bf16 operands of d (input span of its view, PyTorch-layout weights, bias).
struct Operands {
  std::vector<float> x, w, bias;
};
Operands random_operands(const ConvDesc& d, uint32_t seed) {
  std::mt19937 rng(seed);
  Operands o;
  std::vector<uint16_t> bits;
  random_bf16(rng, size_t(span_elems(d.in_strides, d.n, d.t, d.h, d.w, d.cin)), -1.f, 1.f, &bits, &o.x);
  random_bf16(rng, size_t(d.cout * d.cin * d.taps()), -0.3f, 0.3f, &bits, &o.w);
  random_bf16(rng, size_t(d.cout), -0.5f, 0.5f, &bits, &o.bias);
  return o;
}

// The double-precision pixel against the fp32-per-tap full reference: they differ by the full
// one's fp32 rounding of each tap's Cin products (Cin * 2^-24 of sum |x * w|, far below 1e-4).
void expect_pixels_match(const ConvDesc& d, const std::vector<float>& full,
                         const std::function<void(int64_t, std::vector<double>*)>& pixel) {
  std::vector<double> px;
  int64_t bad = 0;
  const Strides5& s = d.out_strides;
  for (int64_t m = 0; m < d.gemm_m(); ++m) {
    pixel(m, &px);
    const int64_t ow = m % d.out_w(), oh = (m / d.out_w()) % d.out_h();
    const int64_t ot = (m / (d.out_w() * d.out_h())) % d.out_t(), n = m / (d.out_w() * d.out_h() * d.out_t());
    for (int64_t co = 0; co < d.cout; ++co) {
      const double want = full[size_t(n * s.n + ot * s.t + oh * s.h + ow * s.w + co)];
      if (!(std::fabs(px[size_t(co)] - want) <= 1e-4) && bad++ < 5)
        ADD_FAILURE() << d.to_string() << " pixel " << m << " channel " << co << ": "
                      << px[size_t(co)] << " vs " << want;
    }
  }
  EXPECT_EQ(bad, 0);
}

std::vector<ConvDesc> reference_descs() {
  return {ConvDesc::causal3x3x3(2, 3, 5, 7, 5, 9), ConvDesc::causal3x3x3(1, 1, 6, 5, 8, 3),
          with_padded_strides(ConvDesc::causal3x3x3(1, 2, 4, 6, 3, 5), 2, 3),
          ConvDesc::downsample(2, 1, 7, 6, 4, 6), ConvDesc::upsample2x(1, 2, 3, 4, 5, 7),
          with_padded_strides(ConvDesc::upsample2x(2, 1, 3, 2, 4, 3), 1, 2)};
}

TEST(HarnessReference, PixelMatchesFullReference) {
  uint32_t seed = 3;
  for (const ConvDesc& d : reference_descs()) {
    const Operands o = random_operands(d, seed++);
    std::vector<float> full(size_t(span_elems(d.out_strides, d.n, d.out_t(), d.out_h(), d.out_w(), d.cout)));
    ASSERT_TRUE(reference::conv_reference(d, o.x.data(), o.w.data(), o.bias.data(), nullptr, full.data()).ok());
    const auto x = [&](int64_t i) { return o.x[size_t(i)]; };
    const auto w = [&](int64_t co, int64_t ci, int kt, int kh, int kw) {
      return o.w[size_t((((co * d.cin + ci) * d.kt + kt) * d.kh + kh) * d.kw + kw)];
    };
    expect_pixels_match(d, full, [&](int64_t m, std::vector<double>* px) {
      reference::output_pixel(d, x, w, o.bias.data(), m, px);
    });
  }
}

// The packed weights read back (direct form: every conv; phases: the upsample convs) give the conv
// of the weights packed: the direct form bit for bit, the phases within their combined weights'
// one bf16 rounding (upsample_phases.hpp: |c - sum w| <= 2^-9 sum |w|, so an output is off by at
// most 2^-9 of the conv of |x| and |w|); each per pixel as whole.
TEST(HarnessReference, PackedWeightsStandForTheirConv) {
  uint32_t seed = 11;
  for (const ConvDesc& d : reference_descs()) {
    const Operands o = random_operands(d, seed++);
    const size_t y_n = size_t(span_elems(d.out_strides, d.n, d.out_t(), d.out_h(), d.out_w(), d.cout));
    std::vector<float> full(y_n), packed_full(y_n), sum_abs(y_n);
    ASSERT_TRUE(reference::conv_reference(d, o.x.data(), o.w.data(), o.bias.data(), nullptr, full.data()).ok());
    Operands a = o;
    for (std::vector<float>* v : {&a.x, &a.w})
      for (float& e : *v) e = std::fabs(e);
    ASSERT_TRUE(reference::conv_reference(d, a.x.data(), a.w.data(), nullptr, nullptr, sum_abs.data()).ok());
    for (bool phases : {false, true}) {
      if (phases && d.kind != ConvKind::kUpsample) continue;
      PackedWeightsHost p;
      ASSERT_TRUE(detail::pack_weights_bf16_as(d, o.w.data(), phases, &p).ok());
      const auto value = [&](int64_t row, int64_t k) { return bf16_to_float(p.bf16[size_t(row * p.info.k_pad + k)]); };
      std::fill(packed_full.begin(), packed_full.end(), 0.f);
      ASSERT_TRUE(reference::conv_reference_packed(d, p.info, value, o.x.data(), o.bias.data(), nullptr,
                                                   packed_full.data()).ok());
      const std::vector<int64_t> offsets = output_offsets(d);
      int64_t differ = 0;
      for (int64_t i : offsets)
        differ += phases ? !(std::fabs(packed_full[size_t(i)] - full[size_t(i)]) <=
                             std::ldexp(sum_abs[size_t(i)], -9) + 1e-5)
                         : packed_full[size_t(i)] != full[size_t(i)];
      EXPECT_EQ(differ, 0) << d.to_string() << (phases ? " in phases" : " direct");
      const auto x = [&](int64_t i) { return o.x[size_t(i)]; };
      expect_pixels_match(d, packed_full, [&](int64_t m, std::vector<double>* px) {
        reference::packed_output_pixel(d, p.info, x, value, o.bias.data(), m, px);
      });
    }
  }
}

// Negative control: a phase read from the wrong packed rows is caught by the comparison above.
TEST(HarnessReference, WrongPhaseRowsAreCaught) {
  const ConvDesc d = ConvDesc::upsample2x(1, 1, 3, 4, 5, 7);
  const Operands o = random_operands(d, 5);
  PackedWeightsHost p;
  ASSERT_TRUE(detail::pack_weights_bf16_as(d, o.w.data(), /*phases=*/true, &p).ok());
  std::vector<float> full(size_t(d.out_elements())), swapped(full.size());
  ASSERT_TRUE(reference::conv_reference(d, o.x.data(), o.w.data(), nullptr, nullptr, full.data()).ok());
  const auto rotated = [&](int64_t row, int64_t k) {  // phase (p, q) reads phase (p, q) + 1's rows
    const int64_t r = (row + d.cout) % p.info.rows();
    return bf16_to_float(p.bf16[size_t(r * p.info.k_pad + k)]);
  };
  ASSERT_TRUE(reference::conv_reference_packed(d, p.info, rotated, o.x.data(), nullptr, nullptr,
                                               swapped.data()).ok());
  int64_t differ = 0;
  for (size_t i = 0; i < full.size(); ++i) differ += !(std::fabs(swapped[i] - full[i]) <= 2e-2);
  EXPECT_GT(differ, int64_t(full.size()) / 2);
}

// A cached conv (frames from a second tensor) is outside the per-pixel reference: NaN, never a
// plausible number that a check could pass against.
TEST(HarnessReference, CachedConvPixelIsNaN) {
  const ConvDesc d = ConvDesc::causal3x3x3_cached(1, 2, 3, 3, 8, 4, 2);
  std::vector<double> px;
  reference::output_pixel(d, [](int64_t) { return 1.f; },
                          [](int64_t, int64_t, int, int, int) { return 1.f; }, nullptr, 0, &px);
  ASSERT_EQ(px.size(), size_t(d.cout));
  for (double v : px) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace vaeconv::test
