// The CPU reference convolution against a naive double-precision loop written here, straight
// from the formula in conv_desc.hpp (upsample nearest-exact: src = dst / u, then zero pad, then
// strided conv), every output element compared; the T = 1 degeneration of the causal conv; the
// output sizes of the VAE kinds; refusals; thread-count independence.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/reference/conv_reference.hpp"

namespace vaeconv {
namespace {

// Elements an NDHWC tensor with strides s spans (the last element + 1).
int64_t span(const Strides5& s, int64_t n, int64_t t, int64_t h, int64_t w, int64_t c) {
  return (n - 1) * s.n + (t - 1) * s.t + (h - 1) * s.h + (w - 1) * s.w + c;
}

// Uniform in [-1, -0.05] u [0.05, 1]: never zero, so a skipped or doubled term always shows.
std::vector<float> random_nonzero(std::mt19937& rng, int64_t count) {
  std::uniform_real_distribution<float> mag(0.05f, 1.0f);
  std::bernoulli_distribution neg(0.5);
  std::vector<float> v(static_cast<size_t>(count));
  for (auto& e : v) e = neg(rng) ? -mag(rng) : mag(rng);
  return v;
}

// Naive reference: y in double plus, per element, the sum of |terms| (for the error bound).
struct Naive {
  std::vector<double> y, abs_sum;  // dense [N][To][Ho][Wo][Cout]
};

Naive naive_conv(const ConvDesc& d, const float* x, const float* w, const float* bias,
                 const float* residual) {
  const int64_t To = d.out_t(), Ho = d.out_h(), Wo = d.out_w();
  const int64_t Hu = d.h * d.upsample, Wu = d.w * d.upsample;  // upsampled sizes
  Naive r;
  r.y.assign(static_cast<size_t>(d.n * To * Ho * Wo * d.cout), 0.0);
  r.abs_sum.assign(r.y.size(), 0.0);
  size_t i = 0;
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t t = 0; t < To; ++t)
      for (int64_t h = 0; h < Ho; ++h)
        for (int64_t wo = 0; wo < Wo; ++wo)
          for (int64_t co = 0; co < d.cout; ++co, ++i) {
            double acc = 0.0, mag = 0.0;
            if (bias) {
              acc += bias[co];
              mag += std::fabs(bias[co]);
            }
            if (residual) {
              const double rv = residual[n * d.out_strides.n + t * d.out_strides.t +
                                         h * d.out_strides.h + wo * d.out_strides.w + co];
              acc += rv;
              mag += std::fabs(rv);
            }
            for (int64_t a = 0; a < d.kt; ++a)
              for (int64_t b = 0; b < d.kh; ++b)
                for (int64_t c = 0; c < d.kw; ++c) {
                  // Coordinates in x' (upsampled, then padded).
                  const int64_t tp = t * d.stride_t + a, hp = h * d.stride_h + b,
                                wp = wo * d.stride_w + c;
                  // Undo the padding; outside the upsampled tensor x' is zero.
                  const int64_t tu = tp - d.pad.t_front, hu = hp - d.pad.h_top,
                                wu = wp - d.pad.w_left;
                  if (tu < 0 || tu >= d.t || hu < 0 || hu >= Hu || wu < 0 || wu >= Wu) continue;
                  // Undo nearest-exact upsampling.
                  const int64_t hs = hu / d.upsample, ws = wu / d.upsample;
                  for (int64_t ci = 0; ci < d.cin; ++ci) {
                    const double xv = x[n * d.in_strides.n + tu * d.in_strides.t +
                                        hs * d.in_strides.h + ws * d.in_strides.w + ci];
                    const double wv =
                        w[(((co * d.cin + ci) * d.kt + a) * d.kh + b) * d.kw + c];
                    acc += xv * wv;
                    mag += std::fabs(xv * wv);
                  }
                }
            r.y[i] = acc;
            r.abs_sum[i] = mag;
          }
  return r;
}

struct RefCase {
  bool bias = true;
  bool residual = false;
  bool residual_in_place = false;  // residual == y
  int threads = 2;
  uint32_t seed = 7;
};

constexpr float kSentinel = 1234.5f;  // what the output holds where the conv must not write

// Runs conv_reference and the naive loop on random data; checks every output element to a
// relative 1e-5 of sum |terms| and that elements between strided pixels are untouched.
void check_against_naive(const ConvDesc& d, const RefCase& o) {
  SCOPED_TRACE(d.to_string() + " bias=" + std::to_string(o.bias) +
               " residual=" + std::to_string(o.residual) +
               " in_place=" + std::to_string(o.residual_in_place));
  ASSERT_TRUE(d.validate().ok()) << d.validate().to_string();
  std::mt19937 rng(o.seed);
  const int64_t To = d.out_t(), Ho = d.out_h(), Wo = d.out_w();
  const int64_t x_n = span(d.in_strides, d.n, d.t, d.h, d.w, d.cin);
  const int64_t y_n = span(d.out_strides, d.n, To, Ho, Wo, d.cout);
  const std::vector<float> x = random_nonzero(rng, x_n);
  const std::vector<float> w = random_nonzero(rng, d.cout * d.cin * d.taps());
  const std::vector<float> bias = random_nonzero(rng, d.cout);
  const bool has_res = o.residual || o.residual_in_place;
  std::vector<float> res = has_res ? random_nonzero(rng, y_n) : std::vector<float>();

  std::vector<float> y(static_cast<size_t>(y_n), kSentinel);
  if (o.residual_in_place) y = res;
  const Naive ref = naive_conv(d, x.data(), w.data(), o.bias ? bias.data() : nullptr,
                               has_res ? res.data() : nullptr);
  const float* res_ptr = o.residual_in_place ? y.data() : (o.residual ? res.data() : nullptr);
  const Status s = reference::conv_reference(d, x.data(), w.data(),
                                             o.bias ? bias.data() : nullptr, res_ptr, y.data(),
                                             o.threads);
  ASSERT_TRUE(s.ok()) << s.to_string();

  std::vector<char> written(static_cast<size_t>(y_n), 0);
  int64_t bad = 0;
  size_t i = 0;
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t t = 0; t < To; ++t)
      for (int64_t h = 0; h < Ho; ++h)
        for (int64_t wo = 0; wo < Wo; ++wo)
          for (int64_t co = 0; co < d.cout; ++co, ++i) {
            const int64_t off = n * d.out_strides.n + t * d.out_strides.t +
                                h * d.out_strides.h + wo * d.out_strides.w + co;
            written[static_cast<size_t>(off)] = 1;
            const double got = y[static_cast<size_t>(off)];
            const double tol = 1e-5 * ref.abs_sum[i] + 1e-30;
            if (!(std::fabs(got - ref.y[i]) <= tol) && bad++ < 10)
              ADD_FAILURE() << "y[n=" << n << ",t=" << t << ",h=" << h << ",w=" << wo
                            << ",c=" << co << "] = " << got << ", naive " << ref.y[i]
                            << " (tol " << tol << ")";
          }
  EXPECT_EQ(bad, 0) << "mismatching elements";
  ASSERT_EQ(i, static_cast<size_t>(d.out_elements()));
  if (!o.residual_in_place) {
    int64_t touched = 0;
    for (int64_t k = 0; k < y_n; ++k)
      if (!written[static_cast<size_t>(k)] && y[static_cast<size_t>(k)] != kSentinel) ++touched;
    EXPECT_EQ(touched, 0) << "elements between strided pixels were written";
  }
}

// Every (bias, residual) combination.
void check_all_epilogues(const ConvDesc& d, uint32_t seed) {
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < 2; ++r) {
      RefCase o;
      o.bias = b != 0;
      o.residual = r != 0;
      o.seed = seed++;
      check_against_naive(d, o);
    }
}

// Pads every stride of a dense NDHWC layout: pixel stride C + extra_c, row and frame strides
// with extra pixels / rows, batch stride with an extra frame.
Strides5 padded_strides(int64_t T, int64_t H, int64_t W, int64_t C, int64_t extra_c) {
  Strides5 s;
  s.c = 1;
  s.w = C + extra_c;
  s.h = (W + 1) * s.w;
  s.t = (H + 2) * s.h;
  s.n = (T + 1) * s.t;
  return s;
}

// ---- vs the naive loop ---------------------------------------------------------------------

TEST(ReferenceVsNaive, Causal3x3x3) {
  uint32_t seed = 100;
  for (int64_t t : {1, 3, 4}) {
    check_all_epilogues(ConvDesc::causal3x3x3(2, t, 5, 7, 3, 5), seed);
    seed += 10;
  }
  check_all_epilogues(ConvDesc::causal3x3x3(1, 1, 1, 1, 2, 3), seed + 1);
  check_all_epilogues(ConvDesc::causal3x3x3(1, 2, 3, 1, 4, 9), seed + 2);
  // Full 4-pixel blocks, several cout chunks with a partial last one, Cin not a multiple of 8.
  check_all_epilogues(ConvDesc::causal3x3x3(1, 3, 6, 13, 19, 21), seed + 3);
  check_all_epilogues(ConvDesc::causal3x3x3(2, 1, 4, 9, 16, 16), seed + 4);
}

TEST(ReferenceVsNaive, Downsample) {
  uint32_t seed = 200;
  const int64_t sizes[][2] = {{7, 9}, {8, 6}, {2, 2}, {2, 3}, {3, 2}, {9, 17}};
  for (const auto& hw : sizes) {
    check_all_epilogues(ConvDesc::downsample(2, 1, hw[0], hw[1], 3, 5), seed);
    seed += 10;
  }
  check_all_epilogues(ConvDesc::downsample(1, 2, 11, 10, 17, 12), seed);
}

TEST(ReferenceVsNaive, Upsample) {
  uint32_t seed = 300;
  const int64_t sizes[][2] = {{1, 1}, {3, 5}, {2, 4}, {1, 6}};
  for (const auto& hw : sizes) {
    check_all_epilogues(ConvDesc::upsample2x(2, 1, hw[0], hw[1], 3, 5), seed);
    seed += 10;
  }
  check_all_epilogues(ConvDesc::upsample2x(1, 2, 3, 7, 12, 17), seed);
}

TEST(ReferenceVsNaive, PaddedStridesAreHonoured) {
  uint32_t seed = 400;
  auto pad_both = [](ConvDesc d, int64_t extra_in, int64_t extra_out) {
    d.in_strides = padded_strides(d.t, d.h, d.w, d.cin, extra_in);
    d.out_strides = padded_strides(d.out_t(), d.out_h(), d.out_w(), d.cout, extra_out);
    return d;
  };
  check_all_epilogues(pad_both(ConvDesc::causal3x3x3(2, 3, 5, 6, 3, 5), 8, 3), seed);
  check_all_epilogues(pad_both(ConvDesc::downsample(2, 1, 7, 9, 3, 5), 8, 8), seed + 10);
  check_all_epilogues(pad_both(ConvDesc::upsample2x(2, 1, 3, 5, 3, 5), 8, 1), seed + 20);
  check_all_epilogues(pad_both(ConvDesc::causal3x3x3(1, 1, 4, 9, 11, 13), 5, 0), seed + 30);
  // Only the pixel stride padded (in_strides.w = Cin + 8), everything else consistent.
  ConvDesc d = ConvDesc::causal3x3x3(2, 2, 4, 5, 3, 5);
  d.in_strides.w = d.cin + 8;
  d.in_strides.h = d.w * d.in_strides.w;
  d.in_strides.t = d.h * d.in_strides.h;
  d.in_strides.n = d.t * d.in_strides.t;
  check_all_epilogues(d, seed + 40);
}

TEST(ReferenceVsNaive, ResidualInPlace) {
  RefCase o;
  o.residual_in_place = true;
  o.seed = 500;
  check_against_naive(ConvDesc::causal3x3x3(2, 3, 5, 7, 6, 10), o);
  check_against_naive(ConvDesc::downsample(1, 1, 7, 9, 3, 5), o);
  ConvDesc d = ConvDesc::upsample2x(1, 1, 3, 5, 4, 9);
  d.out_strides = padded_strides(d.out_t(), d.out_h(), d.out_w(), d.cout, 2);
  check_against_naive(d, o);
}

// A general descriptor beyond the three kinds: upsample 3, time stride 2, uneven pads and taps.
TEST(ReferenceVsNaive, GeneralDescriptor) {
  ConvDesc d;
  d.kind = ConvKind::kCausal3x3x3;
  d.n = 2; d.t = 5; d.h = 3; d.w = 4; d.cin = 5; d.cout = 7;
  d.kt = 2; d.kh = 4; d.kw = 3;
  d.stride_t = 2; d.stride_h = 3; d.stride_w = 2;
  d.pad = {1, 2, 0, 3, 2, 1};
  d.upsample = 3;
  d.upsample_mode = UpsampleMode::kNearestExact;
  d.set_dense_strides();
  check_all_epilogues(d, 600);
}

// ---- T = 1 degeneration ------------------------------------------------------------------------

// causal3x3x3 at T = 1 with the 5D weight equals the 2D 3x3 conv (kt = 1, no time pad) with the
// kt = 2 slice: element for element, and in fact bit for bit (same taps in the same order).
TEST(ReferenceCausalT1, EqualsSliced2DConv) {
  std::mt19937 rng(700);
  const int64_t shapes[][5] = {{1, 5, 7, 3, 5}, {2, 4, 9, 16, 13}, {1, 1, 1, 2, 2},
                               {2, 6, 3, 9, 8}};
  for (const auto& s : shapes) {
    const ConvDesc d3 = ConvDesc::causal3x3x3(s[0], 1, s[1], s[2], s[3], s[4]);
    ConvDesc d2 = d3;
    d2.kt = 1;
    d2.pad.t_front = 0;
    d2.pad.t_back = 0;
    d2.set_dense_strides();
    SCOPED_TRACE(d3.to_string());
    ASSERT_EQ(d2.out_elements(), d3.out_elements());
    const std::vector<float> x = random_nonzero(rng, d3.in_elements());
    const std::vector<float> w5 = random_nonzero(rng, d3.cout * d3.cin * 27);
    const std::vector<float> bias = random_nonzero(rng, d3.cout);
    const std::vector<float> w4 = reference::slice_causal_weight_t1(w5.data(), d3.cout, d3.cin);
    ASSERT_EQ(w4.size(), static_cast<size_t>(d3.cout * d3.cin * 9));
    for (int64_t oc = 0; oc < d3.cout * d3.cin; ++oc)
      for (int k = 0; k < 9; ++k)
        ASSERT_EQ(w4[static_cast<size_t>(oc * 9 + k)], w5[static_cast<size_t>(oc * 27 + 18 + k)]);

    std::vector<float> y3(static_cast<size_t>(d3.out_elements()), kSentinel), y2 = y3;
    ASSERT_TRUE(reference::conv_reference(d3, x.data(), w5.data(), bias.data(), nullptr,
                                          y3.data(), 2).ok());
    ASSERT_TRUE(reference::conv_reference(d2, x.data(), w4.data(), bias.data(), nullptr,
                                          y2.data(), 2).ok());
    int64_t bad = 0;
    for (size_t i = 0; i < y3.size(); ++i)
      if (std::memcmp(&y3[i], &y2[i], sizeof(float)) != 0 && bad++ < 10)
        ADD_FAILURE() << "element " << i << ": 5D " << y3[i] << " vs sliced 2D " << y2[i];
    EXPECT_EQ(bad, 0);
    // And the 2D conv itself agrees with the naive loop.
    check_against_naive(d2, RefCase{});
  }
}

// ---- Output sizes of the VAE kinds ---------------------------------------------------------------

TEST(ReferenceShapes, DownsampleAndUpsampleSizes) {
  // ZeroPad2d (0,1,0,1) then k3 s2: 1024 -> 1025 -> 512; 7 -> 8 -> 3.
  const ConvDesc a = ConvDesc::downsample(1, 1, 1024, 7, 4, 4);
  EXPECT_EQ(a.out_h(), 512);
  EXPECT_EQ(a.out_w(), 3);
  const ConvDesc b = ConvDesc::downsample(1, 1, 7, 1024, 4, 4);
  EXPECT_EQ(b.out_h(), 3);
  EXPECT_EQ(b.out_w(), 512);
  EXPECT_EQ(ConvDesc::downsample(1, 1, 2, 2, 1, 1).out_h(), 1);
  for (int64_t h : {1, 3, 5, 64}) {
    const ConvDesc u = ConvDesc::upsample2x(1, 1, h, h + 1, 4, 4);
    EXPECT_EQ(u.out_h(), 2 * h);
    EXPECT_EQ(u.out_w(), 2 * (h + 1));
  }
  // The reference writes exactly those shapes: a thin 1024-row downsample, checked fully.
  check_against_naive(ConvDesc::downsample(1, 1, 1024, 3, 2, 3), RefCase{});
}

// ---- Refusals -----------------------------------------------------------------------------------

TEST(ReferenceRefuses, InvalidDescriptorAndNullPointers) {
  ConvDesc d = ConvDesc::causal3x3x3(1, 1, 4, 4, 3, 5);
  const std::vector<float> x(static_cast<size_t>(d.in_elements()), 1.f);
  const std::vector<float> w(static_cast<size_t>(d.cout * d.cin * 27), 1.f);
  std::vector<float> y(static_cast<size_t>(d.out_elements()), kSentinel);

  ConvDesc bad = d;
  bad.cin = 0;
  Status s = reference::conv_reference(bad, x.data(), w.data(), nullptr, nullptr, y.data());
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);

  bad = ConvDesc::downsample(1, 1, 1, 4, 3, 5);  // padded height 2 < 3 taps
  EXPECT_FALSE(reference::conv_reference(bad, x.data(), w.data(), nullptr, nullptr, y.data()).ok());

  bad = d;
  bad.in_strides.c = 2;  // not NDHWC
  EXPECT_FALSE(reference::conv_reference(bad, x.data(), w.data(), nullptr, nullptr, y.data()).ok());

  EXPECT_FALSE(reference::conv_reference(d, nullptr, w.data(), nullptr, nullptr, y.data()).ok());
  EXPECT_FALSE(reference::conv_reference(d, x.data(), nullptr, nullptr, nullptr, y.data()).ok());
  EXPECT_FALSE(reference::conv_reference(d, x.data(), w.data(), nullptr, nullptr, nullptr).ok());
  EXPECT_FALSE(
      reference::conv_reference(d, x.data(), w.data(), nullptr, nullptr, y.data(), -1).ok());
  for (float v : y) ASSERT_EQ(v, kSentinel) << "a refused call wrote the output";

  EXPECT_TRUE(reference::conv_reference(d, x.data(), w.data(), nullptr, nullptr, y.data()).ok());
}

// ---- Thread-count independence -------------------------------------------------------------------

// Each output element is summed by one thread in a fixed order (taps in (kt,kh,kw) order, fp32
// over ci per tap, double across taps), so any thread count gives the same bits.
TEST(ReferenceThreads, BitIdenticalAcrossThreadCounts) {
  std::mt19937 rng(800);
  const ConvDesc descs[] = {ConvDesc::causal3x3x3(2, 2, 9, 11, 24, 20),
                            ConvDesc::downsample(1, 2, 13, 10, 16, 9),
                            ConvDesc::upsample2x(2, 1, 5, 7, 12, 16)};
  for (const ConvDesc& d : descs) {
    SCOPED_TRACE(d.to_string());
    const std::vector<float> x = random_nonzero(rng, d.in_elements());
    const std::vector<float> w = random_nonzero(rng, d.cout * d.cin * d.taps());
    const std::vector<float> bias = random_nonzero(rng, d.cout);
    const std::vector<float> res = random_nonzero(rng, d.out_elements());
    std::vector<float> y1(static_cast<size_t>(d.out_elements()), kSentinel), y4 = y1, y7 = y1,
        y0 = y1;
    ASSERT_TRUE(reference::conv_reference(d, x.data(), w.data(), bias.data(), res.data(),
                                          y1.data(), 1).ok());
    ASSERT_TRUE(reference::conv_reference(d, x.data(), w.data(), bias.data(), res.data(),
                                          y4.data(), 4).ok());
    ASSERT_TRUE(reference::conv_reference(d, x.data(), w.data(), bias.data(), res.data(),
                                          y7.data(), 7).ok());
    ASSERT_TRUE(reference::conv_reference(d, x.data(), w.data(), bias.data(), res.data(),
                                          y0.data(), 0).ok());
    EXPECT_EQ(std::memcmp(y1.data(), y4.data(), y1.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(y1.data(), y7.data(), y1.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(y1.data(), y0.data(), y1.size() * sizeof(float)), 0);
  }
}

}  // namespace
}  // namespace vaeconv
