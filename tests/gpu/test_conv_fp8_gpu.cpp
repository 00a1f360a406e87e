// test_conv_fp8_gpu.cpp — the FP8 kernels and the device quantizer (label gpu).
//
// Per case: random bf16 activations are quantized on the device (checked bit for bit against the
// host quantizer, bytes and scale), weights are quantized per output channel by the packing, the
// output is poisoned, and every element is compared with the CPU conv of the DEQUANTIZED fp8
// operands: element-wise with rtol = atol = 2e-2 (fp8 outputs: the reference rounded to e4m3,
// one e4m3 step, plus the accumulation's bound per element, see run_fp8_case), and the mean
// relative error must be < 2e-2 (the seed's FP8 bar). The quantization error against the
// unquantized bf16 conv is reported.
#include <gtest/gtest.h>

#include "conv_case.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/vae_shapes.hpp"

namespace vaeconv {
inline void PrintTo(const VaeShape& s, std::ostream* os) { *os << s.id; }
}  // namespace vaeconv

namespace vaeconv::test {
namespace {

struct Fp8Options {
  bool bias = true;
  bool residual = false;
  bool fp8_out = false;
  uint32_t seed = 7;
};

struct Fp8Result {
  Status status;
  CompareResult cmp;          // vs the conv of the dequantized operands
  double mean_rel = 0;        // mean |y - ref| / mean |ref|
  double mean_rel_vs_bf16 = 0;
  int64_t quant_mismatch = 0; // device quantizer vs host quantizer (bytes + scale)
  int64_t gaps_touched = 0;   // bytes between strided output pixels that were written
  bool guards_ok = true;
};

// The byte offsets of the two bytes of each bf16 element at `offsets`.
std::vector<int64_t> byte_offsets(const std::vector<int64_t>& offsets) {
  std::vector<int64_t> v;
  v.reserve(offsets.size() * 2);
  for (int64_t i : offsets) {
    v.push_back(2 * i);
    v.push_back(2 * i + 1);
  }
  return v;
}

// Packed fp8 weight (row, k) as the value it stands for (|value| with `abs`).
float dequantized(const PackedWeightsHost& p, int64_t row, int64_t k, bool abs) {
  const float v = e4m3fn_to_float(p.fp8[size_t(row * p.info.k_pad + k)]) * p.scales[size_t(row)];
  return abs ? std::fabs(v) : v;
}

// The 5D/4D PyTorch-layout weight that the packed fp8 bytes and scales stand for (direct form).
std::vector<float> dequantized_torch_weights(const ConvDesc& d, const PackedWeightsHost& p, bool abs) {
  const int src_kt = d.kind == ConvKind::kCausal3x3x3 ? 3 : 1;
  std::vector<float> w(size_t(d.cout * d.cin * src_kt * 9), 0.f);  // unpacked slices face padding
  for (int64_t co = 0; co < d.cout; ++co)
    for (int64_t k = 0; k < p.info.k; ++k) {
      const int64_t tap = k / d.cin, ci = k % d.cin;
      const int64_t kt = p.info.kt_base + tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
      w[size_t((((co * d.cin + ci) * src_kt + kt) * 3 + kh) * 3 + kw)] = dequantized(p, co, k, abs);
    }
  return w;
}

// The CPU conv with the packed fp8 weights' values (d's dtypes bf16, x dense). An upsample conv
// packed in phases (upsample_phases.hpp) is run as the kernels see it, written independently of
// their code: phase (p, q) is the T = 1 causal 3 x 3 conv of the source frames (as images) whose
// only nonzero taps are the 2 x 2 window at (p, q), holding the phase's combined weights, and
// its output pixel (a, b) is y's (2a + p, 2b + q).
Status reference_with_packed(const ConvDesc& d, const PackedWeightsHost& p, const float* x,
                             const float* bias, const float* residual, bool abs, float* y) {
  if (p.info.phases == 1) {
    const std::vector<float> w = dequantized_torch_weights(d, p, abs);
    return reference::conv_reference(d, x, w.data(), bias, residual, y);
  }
  if (d.in_strides.w != d.cin || d.in_strides.h != d.cin * d.w || d.out_strides.w != d.cout ||
      d.out_strides.h != d.cout * d.out_w())
    return Status(StatusCode::kUnsupported, "the phase reference below takes dense tensors");
  const int64_t frames = d.n * d.t, ho = d.out_h(), wo = d.out_w();
  ConvDesc dp = ConvDesc::causal3x3x3(frames, 1, d.h, d.w, d.cin, d.cout);
  dp.set_dtypes(DType::kBF16);
  std::vector<float> w(size_t(d.cout * d.cin * 27)), yp(size_t(dp.out_elements()));
  for (int ph = 0; ph < 4; ++ph) {
    const int pr = ph / 2, pc = ph % 2;
    std::fill(w.begin(), w.end(), 0.f);
    for (int64_t co = 0; co < d.cout; ++co)
      for (int64_t k = 0; k < p.info.k; ++k) {
        const int64_t tap = k / d.cin, ci = k % d.cin, kh = pr + tap / 2, kw = pc + tap % 2;
        w[size_t((((co * d.cin + ci) * 3 + 2) * 3 + kh) * 3 + kw)] =
            dequantized(p, ph * d.cout + co, k, abs);
      }
    VAECONV_RETURN_IF_ERROR(reference::conv_reference(dp, x, w.data(), bias, nullptr, yp.data()));
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t a = 0; a < d.h; ++a)
        for (int64_t b = 0; b < d.w; ++b)
          for (int64_t co = 0; co < d.cout; ++co) {
            const int64_t o = ((f * ho + 2 * a + pr) * wo + 2 * b + pc) * d.cout + co;
            y[o] = yp[size_t(((f * d.h + a) * d.w + b) * d.cout + co)] + (residual ? residual[o] : 0.f);
          }
  }
  return Status::Ok();
}

Fp8Result run_fp8_case(ConvDesc d, const Fp8Options& o) {
  Fp8Result r;
  d.set_dtypes(DType::kFP8E4M3);
  if (o.fp8_out) d.out_dtype = DType::kFP8E4M3;
  std::mt19937 rng(o.seed);
  // Spans of the (possibly strided) input and output views; the output's elements lie at `offsets`.
  const int64_t x_n = span_elems(d.in_strides, d.n, d.t, d.h, d.w, d.cin);
  const int64_t y_n = span_elems(d.out_strides, d.n, d.out_t(), d.out_h(), d.out_w(), d.cout);
  const std::vector<int64_t> offsets = output_offsets(d);
  std::vector<uint16_t> x_bits, r_bits;
  std::vector<float> x_f, r_f, w_f;
  random_bf16(rng, static_cast<size_t>(x_n), -1.f, 1.f, &x_bits, &x_f);
  {
    std::vector<uint16_t> unused;
    const float ws = 1.f / std::sqrt(float(d.gemm_k()));
    random_bf16(rng, size_t(d.cout * d.cin * d.taps()), -1.7f * ws, 1.7f * ws, &unused, &w_f);
  }
  std::vector<float> bias(static_cast<size_t>(d.cout));
  std::uniform_real_distribution<float> ub(-0.5f, 0.5f);
  for (auto& b : bias) b = ub(rng);
  if (o.residual) random_bf16(rng, static_cast<size_t>(y_n), -1.f, 1.f, &r_bits, &r_f);

  // Host quantization (the reference for the device quantizer) and weight packing.
  std::vector<uint8_t> xq_host(static_cast<size_t>(x_n));
  const float x_scale_host = quantize_fp8_host(x_bits.data(), x_n, xq_host.data());
  PackedWeightsHost packed;
  r.status = pack_weights_fp8(d, w_f.data(), &packed);
  if (!r.status.ok()) return r;

  // References: the conv of the dequantized operands, and the unquantized bf16 conv.
  std::vector<float> x_deq(static_cast<size_t>(x_n));
  for (int64_t i = 0; i < x_n; ++i) x_deq[static_cast<size_t>(i)] = e4m3fn_to_float(xq_host[static_cast<size_t>(i)]) * x_scale_host;
  std::vector<float> ref(static_cast<size_t>(y_n)), ref_bf16(static_cast<size_t>(y_n));
  ConvDesc d_ref = d;
  d_ref.set_dtypes(DType::kBF16);
  r.status = reference_with_packed(d_ref, packed, x_deq.data(), o.bias ? bias.data() : nullptr,
                                   o.residual ? r_f.data() : nullptr, /*abs=*/false, ref.data());
  if (!r.status.ok()) return r;
  std::vector<float> w_bf16(w_f.size());
  for (size_t i = 0; i < w_f.size(); ++i) w_bf16[i] = bf16_to_float(float_to_bf16(w_f[i]));
  r.status = reference::conv_reference(d_ref, x_f.data(), w_bf16.data(), o.bias ? bias.data() : nullptr,
                                       o.residual ? r_f.data() : nullptr, ref_bf16.data());
  if (!r.status.ok()) return r;

  // Device: quantize x, run the conv.
  const size_t ws_bytes = precompiled::quantize_fp8_workspace_bytes(x_n);
  GuardedBuffer x_dev(static_cast<size_t>(x_n) * 2), xq_dev(static_cast<size_t>(x_n)), ws(ws_bytes), scales(256),
      w_dev(packed.byte_size()), ws_dev(packed.scales.size() * 4), b_dev(bias.size() * 4),
      r_dev(static_cast<size_t>(o.residual ? y_n : 1) * 2), y_dev(static_cast<size_t>(y_n) * (o.fp8_out ? 1 : 2));
  x_dev.upload(x_bits.data(), x_bits.size() * 2);
  w_dev.upload(packed.bytes(), packed.byte_size());
  ws_dev.upload(packed.scales.data(), packed.scales.size() * 4);
  b_dev.upload(bias.data(), bias.size() * 4);
  if (o.residual) r_dev.upload(r_bits.data(), r_bits.size() * 2);
  // Poison: bf16 0xFFFF and e4m3fn 0xFF are NaN; the bytes between strided pixels must keep it.
  const std::vector<uint8_t> y_init(y_dev.bytes(), 0xFF);
  y_dev.upload(y_init.data(), y_init.size());
  float* scale_dev = static_cast<float*>(scales.ptr());
  r.status = precompiled::quantize_fp8(x_dev.ptr(), x_n, xq_dev.ptr(), scale_dev, ws.ptr(),
                                       ws_bytes, nullptr);
  if (!r.status.ok()) return r;
  // The fp8 output's scale: from the reference's range, as a calibrated engine would set it.
  float y_amax = 0.f;
  for (float v : ref) y_amax = std::max(y_amax, std::fabs(v));
  const float y_scale = fp8_scale_for_amax(y_amax);
  (void)hipMemcpy(scale_dev + 1, &y_scale, 4, hipMemcpyHostToDevice);

  ConvArgs a;
  a.x = xq_dev.ptr();
  a.x_scale = scale_dev;
  a.weights = {w_dev.ptr(), packed.info, static_cast<const float*>(ws_dev.ptr())};
  a.bias = o.bias ? static_cast<const float*>(b_dev.ptr()) : nullptr;
  a.residual = o.residual ? r_dev.ptr() : nullptr;
  a.y = y_dev.ptr();
  a.y_scale = o.fp8_out ? scale_dev + 1 : nullptr;
  r.status = precompiled::conv_forward(d, a, nullptr);
  if (!r.status.ok()) return r;
  const hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) {
    r.status = Status(StatusCode::kRuntimeError, hipGetErrorString(e));
    return r;
  }

  // Quantizer, bit for bit.
  std::vector<uint8_t> xq(static_cast<size_t>(x_n));
  xq_dev.download(xq.data(), xq.size());
  float x_scale_dev = 0.f;
  (void)hipMemcpy(&x_scale_dev, scale_dev, 4, hipMemcpyDeviceToHost);
  for (int64_t i = 0; i < x_n; ++i) r.quant_mismatch += xq[static_cast<size_t>(i)] != xq_host[static_cast<size_t>(i)];
  if (std::memcmp(&x_scale_dev, &x_scale_host, 4) != 0) ++r.quant_mismatch;

  // Output: bf16 directly, or fp8 dequantized with y_scale (tolerance widened by its rounding);
  // got / want hold the output's elements (at `offsets`), in order.
  std::vector<uint8_t> y_bytes(y_dev.bytes());
  y_dev.download(y_bytes.data(), y_bytes.size());
  r.gaps_touched = gaps_touched(y_bytes, y_init, o.fp8_out ? offsets : byte_offsets(offsets));
  std::vector<uint16_t> got;
  std::vector<float> want, want_bf16;
  for (int64_t i : offsets) {
    uint16_t bits;
    std::memcpy(&bits, y_bytes.data() + size_t(i) * 2, 2);
    if (o.fp8_out) bits = float_to_bf16(e4m3fn_to_float(y_bytes[size_t(i)]) * y_scale);
    got.push_back(bits);
    want.push_back(ref[size_t(i)]);
    want_bf16.push_back(ref_bf16[size_t(i)]);
  }
  if (o.fp8_out) {
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
    r.status = reference_with_packed(d_ref, packed, x_abs.data(), nullptr, nullptr, /*abs=*/true,
                                     sum_abs.data());
    if (!r.status.ok()) return r;
    std::vector<float> bound;
    for (int64_t i : offsets) bound.push_back(std::ldexp(sum_abs[size_t(i)], -11));
    r.cmp = compare_bf16(got, want, 0.13, 2e-2 * y_scale, &bound);  // an e4m3 step <= 1/8 rel.
  } else {
    r.cmp = compare_bf16(got, want);
  }
  r.guards_ok = y_dev.guards_intact() && xq_dev.guards_intact();
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

void expect_fp8_ok(const ConvDesc& d, const Fp8Result& r) {
  ASSERT_TRUE(r.status.ok()) << r.status.to_string() << " for " << d.to_string();
  EXPECT_EQ(r.quant_mismatch, 0) << "device quantizer differs from the host quantizer";
  EXPECT_EQ(r.cmp.bad, 0) << r.cmp.bad << " of " << r.cmp.checked << " elements out of tolerance ("
                          << r.cmp.nan << " NaN); first: " << r.cmp.first_bad;
  EXPECT_EQ(r.cmp.checked, d.out_elements());
  EXPECT_LT(r.mean_rel, 2e-2) << "mean relative error vs the dequantized reference";
  EXPECT_EQ(r.gaps_touched, 0) << "bytes between strided output pixels were written";
  EXPECT_TRUE(r.guards_ok) << "a guard band was written";
  std::printf("[ vaeconv  ] fp8 %s: %lld elements, mean rel err %.3e (vs bf16 conv %.3e), rel L2 %.3e\n",
              d.to_string().c_str(), static_cast<long long>(r.cmp.checked), r.mean_rel,
              r.mean_rel_vs_bf16, r.cmp.rel_l2);
}

class VaeShapeFp8 : public ::testing::TestWithParam<VaeShape> {};

TEST_P(VaeShapeFp8, MatchesDequantizedReference) {
  VAECONV_REQUIRE_GPU();
  const VaeShape& s = GetParam();
  Fp8Options o;
  o.seed = 500u + uint32_t(s.cin * 3 + s.cout + s.h);
  const ConvDesc d = s.desc(DType::kFP8E4M3);
  expect_fp8_ok(d, run_fp8_case(d, o));
}

INSTANTIATE_TEST_SUITE_P(Seed, VaeShapeFp8, ::testing::ValuesIn(kVaeShapes),
                         [](const ::testing::TestParamInfo<VaeShape>& i) {
                           return std::string(i.param.id);
                         });

struct Fp8Extra {
  const char* name;
  ConvDesc desc;
  Fp8Options opt;
};
void PrintTo(const Fp8Extra& e, std::ostream* os) { *os << e.name; }

std::vector<Fp8Extra> fp8_extra_cases() {
  Fp8Options plain, res, out8, nobias;
  res.residual = true;
  out8.fp8_out = true;
  out8.residual = true;
  nobias.bias = false;
  return {
      {"causal_n2_odd", ConvDesc::causal3x3x3(2, 1, 77, 131, 64, 96), plain},
      {"causal_1x1", ConvDesc::causal3x3x3(1, 1, 1, 1, 32, 64), nobias},
      {"causal_video_t3", ConvDesc::causal3x3x3(1, 3, 13, 17, 32, 48), res},
      {"causal_cin3", ConvDesc::causal3x3x3(1, 1, 37, 53, 3, 96), plain},
      // The e4m3 tap-row kernel where it is built (sm_90a): two images, two Cout tiles and a
      // residual; an fp8 output.
      {"taprow_n2_cout192_res", ConvDesc::causal3x3x3(2, 1, 45, 19, 3, 192), res},
      {"taprow_fp8_out", ConvDesc::causal3x3x3(1, 1, 33, 70, 3, 96), out8},
      {"taprow_cout40_res", ConvDesc::causal3x3x3(1, 1, 37, 29, 3, 40), res},
      {"taprow_n2_cout99_plain", ConvDesc::causal3x3x3(2, 1, 19, 45, 3, 99), plain},
      {"causal_cin24_scalar", ConvDesc::causal3x3x3(1, 1, 9, 11, 24, 32), plain},
      {"causal_cin16_cout3", ConvDesc::causal3x3x3(1, 1, 30, 31, 16, 3), res},
      {"tapreduce_video_t2", ConvDesc::causal3x3x3(1, 2, 19, 23, 32, 3), res},
      {"tapreduce_fp8_out", ConvDesc::causal3x3x3(2, 1, 20, 30, 48, 3), out8},
      {"tapreduce_persistent_video_n2", ConvDesc::causal3x3x3(2, 2, 130, 200, 48, 3), res},
      // Views into wider tensors (padded pixels in and out): the tap-row kernel's element loads
      // at an input pixel stride of 8 and 4 bytes, the e4m3 halo kernel, the tap-reduce kernel,
      // the implicit GEMM of a video with 1-byte outputs.
      {"taprow_strided_res", with_padded_strides(ConvDesc::causal3x3x3(2, 1, 9, 70, 3, 96), 5, 8), res},
      {"taprow_strided_fp8_out", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 33, 40, 3, 96), 1, 16), out8},
      {"halo_strided_res", with_padded_strides(ConvDesc::causal3x3x3(1, 1, 37, 29, 96, 96), 16, 8), res},
      {"tapreduce_strided_res", with_padded_strides(ConvDesc::causal3x3x3(1, 2, 17, 30, 64, 3), 16, 5), res},
      {"causal_video_strided_fp8_out", with_padded_strides(ConvDesc::causal3x3x3(1, 3, 13, 17, 32, 64), 16, 8), out8},
      {"causal_fp8_out", ConvDesc::causal3x3x3(1, 1, 40, 24, 96, 96), out8},
      {"down_odd_fp8_out", ConvDesc::downsample(2, 1, 33, 21, 64, 64), out8},
      {"down_n2_odd", ConvDesc::downsample(2, 1, 77, 131, 96, 96), res},
      {"up_odd", ConvDesc::upsample2x(1, 1, 39, 65, 96, 48), plain},
      {"up_1x1_fp8_out", ConvDesc::upsample2x(1, 1, 1, 1, 64, 32), out8},
      // The upsample in phases with 1-byte outputs (doubled strides, shifted bases), a residual,
      // two images of two frames; and the element-wise gather (Cin not a multiple of 16).
      {"up_video_n2_res_fp8_out", ConvDesc::upsample2x(2, 2, 13, 17, 96, 96), out8},
      {"up_cin24_elementwise_res", ConvDesc::upsample2x(1, 1, 9, 11, 24, 96), res},
      // T = 1 causal convs with Cin a multiple of 32 up to 96: the e4m3 halo kernel's layers
      // where it is built (NVIDIA sm_90a, tile_table.hpp), the implicit GEMM elsewhere: partial
      // patches on both edges, two images, several Cout tiles.
      {"halo_shape_cin96_res", ConvDesc::causal3x3x3(1, 1, 37, 29, 96, 96), res},
      {"halo_shape_cin32_n2_cout192", ConvDesc::causal3x3x3(2, 1, 17, 23, 32, 192), plain},
      {"halo_shape_cin64_cout288", ConvDesc::causal3x3x3(1, 1, 21, 45, 64, 288), nobias},
  };
}

class ExtraFp8 : public ::testing::TestWithParam<Fp8Extra> {};

TEST_P(ExtraFp8, MatchesDequantizedReference) {
  VAECONV_REQUIRE_GPU();
  ConvDesc d = GetParam().desc;
  d.set_dtypes(DType::kFP8E4M3);
  if (GetParam().opt.fp8_out) d.out_dtype = DType::kFP8E4M3;
  expect_fp8_ok(d, run_fp8_case(GetParam().desc, GetParam().opt));
}

INSTANTIATE_TEST_SUITE_P(Cases, ExtraFp8, ::testing::ValuesIn(fp8_extra_cases()),
                         [](const ::testing::TestParamInfo<Fp8Extra>& i) {
                           return std::string(i.param.name);
                         });

// The quantizer on its own: saturation, -0 and tiny negatives stored as +0, a NaN or Inf making the
// scale NaN, odd lengths, refusals.
TEST(QuantizeFp8, SpecialValuesAndTails) {
  VAECONV_REQUIRE_GPU();
  std::vector<uint16_t> x = {float_to_bf16(1.f), float_to_bf16(-3.5f), float_to_bf16(-1e-9f),
                             float_to_bf16(-0.f), float_to_bf16(1e-6f), float_to_bf16(2.f),
                             float_to_bf16(-1e-6f), float_to_bf16(-2.f), float_to_bf16(0.25f)};
  const int64_t n = int64_t(x.size());  // 9: one vector step and a scalar tail
  std::vector<uint8_t> want(x.size());
  const float want_scale = quantize_fp8_host(x.data(), n, want.data());
  EXPECT_EQ(want_scale, 3.5f / 448.f);
  const size_t ws_bytes = precompiled::quantize_fp8_workspace_bytes(n);
  ASSERT_GT(ws_bytes, 0u);
  GuardedBuffer xd(x.size() * 2), yd(x.size()), ws(ws_bytes), sd(4);
  xd.upload(x.data(), x.size() * 2);
  float* scale = static_cast<float*>(sd.ptr());
  ASSERT_TRUE(precompiled::quantize_fp8(xd.ptr(), n, yd.ptr(), scale, ws.ptr(), ws_bytes, nullptr).ok());
  VAECONV_HIP_CHECK(hipDeviceSynchronize());
  std::vector<uint8_t> got(x.size());
  yd.download(got.data(), got.size());
  float s = 0;
  VAECONV_HIP_CHECK(hipMemcpy(&s, scale, 4, hipMemcpyDeviceToHost));
  EXPECT_EQ(got, want);
  EXPECT_EQ(s, want_scale);
  for (int i : {2, 3, 6}) EXPECT_EQ(got[size_t(i)], 0x00) << "element " << i << ": +0, never 0x80";
  // A NaN or an Inf anywhere (vector part or tail): scale NaN, every byte 0x00.
  for (const auto& [at, bits] : std::vector<std::pair<size_t, uint16_t>>{{2, 0x7FC0}, {8, 0xFFC0}, {5, 0xFF80}}) {
    std::vector<uint16_t> xs = x;
    xs[at] = bits;
    xd.upload(xs.data(), xs.size() * 2);
    ASSERT_TRUE(precompiled::quantize_fp8(xd.ptr(), n, yd.ptr(), scale, ws.ptr(), ws_bytes, nullptr).ok());
    VAECONV_HIP_CHECK(hipDeviceSynchronize());
    std::vector<uint8_t> gs(x.size(), 0x55);
    yd.download(gs.data(), gs.size());
    VAECONV_HIP_CHECK(hipMemcpy(&s, scale, 4, hipMemcpyDeviceToHost));
    EXPECT_TRUE(std::isnan(s)) << "element " << at << " = " << bits << ": scale " << s;
    EXPECT_EQ(gs, std::vector<uint8_t>(x.size(), 0x00)) << "element " << at;
  }
  xd.upload(x.data(), x.size() * 2);
  EXPECT_EQ(got[1], 0xFE) << "-amax maps to -448";
  EXPECT_TRUE(yd.guards_intact());
  // Refusals.
  EXPECT_EQ(precompiled::quantize_fp8(xd.ptr(), n, yd.ptr(), scale, ws.ptr(), 8, nullptr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(precompiled::quantize_fp8(nullptr, n, yd.ptr(), scale, ws.ptr(), ws_bytes, nullptr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(precompiled::quantize_fp8(xd.ptr(), n, xd.ptr(), scale, ws.ptr(), ws_bytes, nullptr).code(),
            StatusCode::kOverlap);
}

}  // namespace
}  // namespace vaeconv::test
