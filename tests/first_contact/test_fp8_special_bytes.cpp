// test_fp8_special_bytes.cpp — e4m3fn inputs holding -0 (0x80) and NaN (0x7F, 0xFF), through
// conv_forward: an FP8 activation tensor and packed weights from outside the library (the
// library's own quantizer and packer never emit those codes: conv/fp8_scale.hpp).
//
// gfx942's MFMAs read bytes as e4m3fnuz, where 0x80 is NaN and 0x7F / 0xFF are +-240, and the
// kernels feed them the bytes as they are (arch/fp8_fnuz.hpp). The contract (README, FP8): such
// tensors go through sanitize_fp8_for_target once before the conv (on gfx942: -0 -> +0, NaN ->
// FNUZ NaN; elsewhere nothing). With it, on every target:
//   * -0 behaves as 0: an output none of whose products involves a NaN is the exact conv;
//   * NaN stays NaN: an output that multiplies a NaN operand is NaN. A NaN input pixel poisons
//     every output whose 3x3x3 causal window covers it (all channels); a NaN weight poisons its
//     whole output channel. Weight NaNs are placed at the centre tap (kt 2, kh 1, kw 1), which no
//     output ever reads from the padding: a NaN weight at a padded tap would meet the kernels'
//     zero fill (0 * NaN = NaN) where the CPU reference skips the tap, and that case is outside
//     the contract.
// Without the pass (RawBytes*): a device that reads e4m3fn natively (gfx950, NVIDIA sm_89+) still
// meets the contract; gfx942 must not (a -0 byte reads as NaN there: more NaN outputs than the
// rule's), which checks on the first MI300X that the hardware reads FNUZ as the library assumes.
//
// Data are chosen so that every output without a NaN is computed EXACTLY by any accumulation
// order (x in {+-0, +-0.5, +-1, +-2} * x_scale 1/2, weights in {+-0, +-0.25, +-0.5, +-1, +-1.75}
// packed with a per-channel scale of exactly 2^-8, bias a multiple of 1/4: every product, partial
// sum and result is a multiple of 1/16 far below 2^20, and the raw e4m3 sums, in units of the
// smallest product, stay below 2^12 per 128 K, so even the FP8 tensor cores' reduced-precision
// interval sums are exact). The output is then one bf16 rounding of an exact value: it must
// equal the reference rounded to bf16. The output is poisoned with +Inf (not NaN: NaN is a
// result here), so an unwritten element fails both ways.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fp8_conv_run.hpp"
#include "vaeconv/reference/conv_reference.hpp"

namespace vaeconv::test {
namespace {

constexpr uint16_t kPoisonInf = 0x7F80;  // bf16 +Inf

struct Pixel {
  int64_t t, h, w, c;
};

// sanitize: the tensors go through sanitize_fp8_for_target (the contract); otherwise raw bytes.
void check_special_bytes(int64_t t_frames, int64_t h, int64_t w, uint32_t seed, bool sanitize) {
  VAECONV_REQUIRE_GPU();
  ConvDesc d = ConvDesc::causal3x3x3(1, t_frames, h, w, 32, 32, DType::kFP8E4M3);
  print_device(((sanitize ? "-0 and NaN inputs, sanitized, " : "-0 and NaN inputs, raw bytes, ") +
                d.to_string()).c_str());
  std::mt19937 rng(seed);

  // x: e4m3fn bytes, a third of them -0, and NaNs at known pixels (a corner, the middle, the
  // opposite corner, over the frames present).
  const std::vector<uint8_t> x_codes = {0x80, 0x80, 0x80, 0x00, 0x30, 0xB0, 0x38, 0xB8, 0x40, 0xC0};
  std::vector<uint8_t> x = random_codes(rng, size_t(d.in_elements()), x_codes);
  const std::vector<Pixel> nan_px = {{0, 0, 0, 5}, {(t_frames - 1) / 2, h / 2, w / 2, 0},
                                     {t_frames - 1, h - 1, w - 1, 31}};
  const auto x_index = [&](int64_t t, int64_t hh, int64_t ww, int64_t c) {
    return size_t(((t * h + hh) * w + ww) * d.cin + c);
  };
  for (size_t i = 0; i < nan_px.size(); ++i)
    x[x_index(nan_px[i].t, nan_px[i].h, nan_px[i].w, nan_px[i].c)] = i % 2 ? 0xFF : 0x7F;
  const float x_scale = 0.5f;
  std::vector<float> x_f(x.size());
  for (size_t i = 0; i < x.size(); ++i) x_f[i] = e4m3fn_to_float(x[i]) * x_scale;

  // Weights [Cout][Cin][3][3][3]: a quarter -0, channel amax forced to 1.75 (scale 2^-8), NaN at
  // the centre tap of two channels (one +NaN -> 0x7F, one -NaN -> 0xFF).
  const float wvals[] = {-0.f, -0.f, 0.25f, -0.25f, 0.5f, -0.5f, 1.f, -1.f, 1.75f, -1.75f, 0.f};
  std::uniform_int_distribution<int> pick(0, int(sizeof wvals / sizeof wvals[0]) - 1);
  std::vector<float> wt(size_t(d.cout * d.cin * 27));
  for (auto& v : wt) v = wvals[pick(rng)];
  const auto w_index = [&](int64_t co, int64_t ci, int kt, int kh, int kw) {
    return size_t((((co * d.cin + ci) * 3 + kt) * 3 + kh) * 3 + kw);
  };
  for (int64_t co = 0; co < d.cout; ++co) wt[w_index(co, 1, 2, 0, 0)] = 1.75f;
  const int64_t nan_co[2] = {3, 17};
  wt[w_index(nan_co[0], 7, 2, 1, 1)] = std::numeric_limits<float>::quiet_NaN();
  wt[w_index(nan_co[1], 20, 2, 1, 1)] = -std::numeric_limits<float>::quiet_NaN();

  // The library's packer refuses NaN and stores -0 as +0, so these packed weights are made the way
  // an outside tool would: the library's packing of the finite weights (NaN taps as 0), then the
  // NaN codes written at their packed columns and every packed +0 of a -0 weight rewritten to 0x80.
  PackedWeightsHost packed;
  {
    std::vector<float> finite = wt;
    for (auto& v : finite) v = std::isnan(v) ? 0.f : v;
    ASSERT_TRUE(pack_weights_fp8(d, finite.data(), &packed).ok());
  }
  const int kt_first = t_frames > 1 ? 0 : 2;
  int64_t want_neg0 = 0, got_neg0 = 0, got_7f = 0, got_ff = 0;
  for (int64_t co = 0; co < d.cout; ++co)
    for (int64_t ci = 0; ci < d.cin; ++ci)
      for (int kt = kt_first; kt < 3; ++kt)
        for (int k = 0; k < 9; ++k) {
          const float v = wt[w_index(co, ci, kt, k / 3, k % 3)];
          uint8_t& b = packed.fp8[size_t(co * packed.info.k_pad + ((kt - kt_first) * 9 + k) * d.cin + ci)];
          if (std::isnan(v)) {
            ASSERT_EQ(b, 0x00);
            b = std::signbit(v) ? 0xFF : 0x7F;
          } else if (v == 0.f && std::signbit(v)) {
            ASSERT_EQ(b, 0x00) << "the packer stores -0 as +0";
            b = 0x80;
            ++want_neg0;
          }
        }
  // The premise: scales exactly 2^-8, and the packed bytes hold the -0 and NaN codes (the packed
  // taps: all 27 for T > 1, the kt = 2 slice at T = 1).
  for (float s : packed.scales) ASSERT_EQ(s, std::ldexp(1.f, -8)) << "a channel's scale is not 2^-8";
  for (uint8_t b : packed.fp8) {
    got_neg0 += b == 0x80;
    got_7f += b == 0x7F;
    got_ff += b == 0xFF;
  }
  ASSERT_EQ(got_neg0, want_neg0) << "packed -0 bytes";
  ASSERT_GT(got_neg0, 0);
  ASSERT_EQ(got_7f, 1) << "packed 0x7F bytes";
  ASSERT_EQ(got_ff, 1) << "packed 0xFF bytes";

  std::vector<float> bias(size_t(d.cout));
  std::uniform_int_distribution<int> qb(-4, 4);
  for (auto& b : bias) b = float(qb(rng)) / 4.f;

  ConvDesc d_ref = d;
  d_ref.set_dtypes(DType::kBF16);
  std::vector<float> ref(size_t(d.out_elements()));
  ASSERT_TRUE(reference::conv_reference(d_ref, x_f.data(), wt.data(), bias.data(), nullptr, ref.data()).ok());

  const Fp8ConvRun run = run_fp8_conv(d, x, x_scale, packed, &bias, nullptr, kPoisonInf, sanitize);
  ASSERT_TRUE(run.status.ok()) << run.status.to_string() << " for " << d.to_string();
  EXPECT_TRUE(run.guards_ok) << "a guard band around the output was written";

  int64_t checked = 0, nan_expected = 0, bad = 0, ref_disagrees = 0;
  std::string first;
  for (int64_t t = 0; t < d.out_t(); ++t)
    for (int64_t oh = 0; oh < h; ++oh)
      for (int64_t ow = 0; ow < w; ++ow)
        for (int64_t co = 0; co < d.cout; ++co) {
          bool want_nan = co == nan_co[0] || co == nan_co[1];
          for (const Pixel& p : nan_px)
            want_nan |= p.t <= t && p.t >= t - 2 && std::llabs(p.h - oh) <= 1 && std::llabs(p.w - ow) <= 1;
          const size_t o = size_t(((t * h + oh) * w + ow) * d.cout + co);
          ref_disagrees += std::isnan(ref[o]) != want_nan;  // the reference must agree with the rule
          const float got = bf16_to_float(run.y[o]);
          const float want = bf16_to_float(float_to_bf16(ref[o]));
          const bool ok = want_nan ? std::isnan(got) : got == want;  // +0 == -0
          ++checked;
          nan_expected += want_nan;
          if (!ok) {
            if (first.empty())
              first = "(t " + std::to_string(t) + ", h " + std::to_string(oh) + ", w " +
                      std::to_string(ow) + ", c " + std::to_string(co) + "): got " +
                      std::to_string(got) + ", want " + (want_nan ? "NaN" : std::to_string(want));
            ++bad;
          }
        }
  EXPECT_EQ(ref_disagrees, 0) << "test premise: the CPU reference's NaNs are not the rule's";
  bool fnuz = false;
  ASSERT_TRUE(detail::current_device_reads_fnuz(&fnuz).ok());
  EXPECT_EQ(checked, d.out_elements());
  EXPECT_GT(nan_expected, 0);
  EXPECT_LT(nan_expected, checked);
  if (sanitize || !fnuz) {
    EXPECT_EQ(bad, 0) << bad << " of " << checked << " outputs wrong (" << nan_expected
                      << " should be NaN); first: " << first;
  } else {
    // gfx942 without the pass: the -0 bytes (a third of x, and weights in every channel) read as
    // FNUZ NaN, so outputs the rule says are finite come out NaN. If this fails, the hardware does
    // not read e4m3fn bytes as the library assumes (arch/fp8_fnuz.hpp): stop and look.
    int64_t extra_nan = 0;
    for (size_t o = 0; o < run.y.size(); ++o) extra_nan += std::isnan(bf16_to_float(run.y[o])) && !std::isnan(ref[o]);
    EXPECT_GT(extra_nan, 0) << "gfx942 read raw -0 bytes without NaN: the FNUZ premise is wrong";
  }
  std::printf("[ vaeconv  ] %s, %s: %lld outputs, %lld NaN by the rule, %lld differ from the rule\n",
              fnuz ? "FNUZ device (gfx942)" : "e4m3fn device", sanitize ? "sanitized" : "raw bytes",
              static_cast<long long>(checked), static_cast<long long>(nan_expected),
              static_cast<long long>(bad));
}

// T > 1: the implicit GEMM with the temporal taps (window over three frames).
TEST(FirstContactFp8SpecialBytes, CausalVideo) { check_special_bytes(3, 10, 12, 41, true); }
// T = 1: the kernels of single frames (on sm_90a the e4m3 halo kernel).
TEST(FirstContactFp8SpecialBytes, CausalImage) { check_special_bytes(1, 12, 20, 42, true); }
// The same bytes without the pass: the contract on e4m3fn devices, a loud difference on gfx942.
TEST(FirstContactFp8SpecialBytes, RawBytesCausalVideo) { check_special_bytes(3, 10, 12, 41, false); }
TEST(FirstContactFp8SpecialBytes, RawBytesCausalImage) { check_special_bytes(1, 12, 20, 42, false); }

}  // namespace
}  // namespace vaeconv::test
