// test_cached_conv_gpu.cpp — the causal conv of a video chunk with its cached frames read in
// place (ConvDesc::cache_frames, ConvArgs::cache; kernel/cached_frames.hpp) against the CPU
// reference (conv_reference_cached), bf16 and fp8, with the outputs poisoned and every element
// checked; a chunked decode (1 + 4 + 4 frames) whose caches come from the previous call
// (write_stream_cache) against the reference of the whole clip; and WanResample's (3, 1, 1)
// temporal conv (ConvDesc::temporal3x1x1): stride 1 with its Cout = 2C halves stored as two
// frames each, stride 2 with one cached frame.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "vaeconv/api/kernel_plan.hpp"
#include "vaeconv/api/stream_cache.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/core/numerics_fp8.hpp"
#include "vaeconv/reference/conv_reference.hpp"
#include "vaeconv_kernels.hpp"

namespace vaeconv::test {
namespace {

// Operands as the device sees them (bf16 bits or e4m3fn bytes) and as the reference does.
struct Operand {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

// x and the cache share one fp8 scale (the cache is x's earlier frames): quantized together.
void make_operands(DType dt, std::mt19937& rng, size_t nx, size_t nc, Operand* x, Operand* c,
                   float* x_scale) {
  std::vector<uint16_t> bits;
  std::vector<float> vals;
  random_bf16(rng, nx + nc, -1.f, 1.f, &bits, &vals);
  *x_scale = 1.f;
  if (dt == DType::kFP8E4M3) {
    float amax = 0.f;
    for (float v : vals) amax = std::fmax(amax, std::fabs(v));
    *x_scale = fp8_scale_for_amax(amax);
  }
  auto fill = [&](Operand* o, size_t begin, size_t count) {
    o->values.resize(count);
    o->bytes.resize(count * size_of(dt));
    for (size_t i = 0; i < count; ++i) {
      if (dt == DType::kFP8E4M3) {
        const uint8_t q = quantize_e4m3fn(vals[begin + i], *x_scale);
        o->bytes[i] = q;
        o->values[i] = e4m3fn_to_float(q) * *x_scale;
      } else {
        std::memcpy(&o->bytes[2 * i], &bits[begin + i], 2);
        o->values[i] = vals[begin + i];
      }
    }
  };
  fill(x, 0, nx);
  fill(c, nx, nc);
}

// The weights as packed, back in PyTorch layout [Cout][Cin][kt][kh][kw] (fp8: dequantized), zero
// where the packing holds no tap.
std::vector<float> unpacked_weights(const ConvDesc& d, const PackedWeightsHost& pk) {
  const PackedWeightsInfo& i = pk.info;
  const int64_t spatial = d.kh * d.kw;
  std::vector<float> w(size_t(d.cout * d.cin * d.taps()), 0.f);
  for (int64_t co = 0; co < i.cout; ++co)
    for (int64_t k = 0; k < i.k; ++k) {
      const int64_t tap = k / i.cin, ci = k % i.cin;
      const int64_t kt = i.kt_base + tap / spatial, s = tap % spatial;
      const size_t at = size_t(((co * d.cin + ci) * d.kt + kt) * spatial + s);
      const size_t src = size_t(co * i.k_pad + k);
      w[at] = i.dtype == DType::kFP8E4M3 ? e4m3fn_to_float(pk.fp8[src]) * pk.scales[size_t(co)]
                                         : bf16_to_float(pk.bf16[src]);
    }
  return w;
}

struct Case {
  int64_t n, t, h, w, cin, cout;
  int cache;
  DType dt;
  bool residual;
};

std::string name(const Case& c) {
  return "N" + std::to_string(c.n) + " T" + std::to_string(c.t) + " cache" +
         std::to_string(c.cache) + " " + std::to_string(c.h) + "x" + std::to_string(c.w) + " " +
         std::to_string(c.cin) + "->" + std::to_string(c.cout) + " " + to_string(c.dt) +
         (c.residual ? " +residual" : "");
}

// Runs d (bf16 or fp8 operands, its cache if any) on the device and checks every element of the
// poisoned output against the reference.
void run_desc(const ConvDesc& d, bool residual, uint32_t seed) {
  SCOPED_TRACE(d.to_string() + (residual ? " +residual" : ""));
  struct {
    int64_t n, cin, cout, h, w;
    int cache;
    DType dt;
    bool residual;
  } k{d.n, d.cin, d.cout, d.h, d.w, d.cache_frames, d.in_dtype, residual};
  KernelPlan plan;
  ASSERT_TRUE(which_kernel(d, &plan).ok());
  if (k.cache > 0 || d.kind == ConvKind::kTemporal) {
    EXPECT_EQ(plan.family(), "implicit_gemm") << "the cached / temporal gather";
  }
  std::mt19937 rng(seed);
  Operand x, cache;
  float x_scale = 1.f;
  const size_t n_cache = size_t(k.n * k.cache * k.h * k.w * k.cin);
  make_operands(k.dt, rng, size_t(d.in_elements()), n_cache, &x, &cache, &x_scale);
  std::vector<uint16_t> w_bits;
  std::vector<float> w_vals, bias(size_t(k.cout));
  const float ws = 1.f / std::sqrt(float(d.gemm_k()));
  random_bf16(rng, size_t(k.cout * k.cin * d.taps()), -ws, ws, &w_bits, &w_vals);
  for (float& b : bias) b = 0.05f * float(int(rng() % 21) - 10);
  PackedWeightsHost pk;
  ASSERT_TRUE((k.dt == DType::kFP8E4M3 ? pack_weights_fp8(d, w_vals.data(), &pk)
                                        : pack_weights_bf16(d, w_vals.data(), &pk))
                  .ok());
  std::vector<uint16_t> res_bits;
  std::vector<float> res_vals;
  if (k.residual) random_bf16(rng, size_t(d.out_elements()), -1.f, 1.f, &res_bits, &res_vals);

  std::vector<float> ref(size_t(d.out_elements()));
  const std::vector<float> w_ref = unpacked_weights(d, pk);
  ASSERT_TRUE(reference::conv_reference_cached(d, k.cache ? cache.values.data() : nullptr,
                                               x.values.data(), w_ref.data(), bias.data(),
                                               k.residual ? res_vals.data() : nullptr, ref.data())
                  .ok());

  GuardedBuffer dx(x.bytes.size()), dc(cache.bytes.size() + 16), dw(pk.byte_size()),
      db(bias.size() * 4), dy(ref.size() * 2), dr(k.residual ? ref.size() * 2 : 16),
      dxs(4), dws(pk.scales.size() * 4 + 16);
  ASSERT_TRUE(dx.ok() && dc.ok() && dw.ok() && db.ok() && dy.ok() && dr.ok());
  dx.upload(x.bytes.data(), x.bytes.size());
  if (k.cache) dc.upload(cache.bytes.data(), cache.bytes.size());
  dw.upload(pk.bytes(), pk.byte_size());
  db.upload(bias.data(), bias.size() * 4);
  if (k.residual) dr.upload(res_bits.data(), res_bits.size() * 2);
  std::vector<uint16_t> poison(ref.size(), kPoisonBf16);
  dy.upload(poison.data(), poison.size() * 2);
  ConvArgs a;
  a.x = dx.ptr();
  a.cache = k.cache ? dc.ptr() : nullptr;
  a.weights = {dw.ptr(), pk.info};
  a.bias = static_cast<const float*>(db.ptr());
  a.residual = k.residual ? dr.ptr() : nullptr;
  a.y = dy.ptr();
  if (k.dt == DType::kFP8E4M3) {
    dxs.upload(&x_scale, 4);
    dws.upload(pk.scales.data(), pk.scales.size() * 4);
    a.x_scale = static_cast<const float*>(dxs.ptr());
    a.weights.scales = static_cast<const float*>(dws.ptr());
  }
  const Status st = precompiled::conv_forward(d, a, nullptr);
  ASSERT_TRUE(st.ok()) << st.to_string();
  VAECONV_HIP_CHECK(hipDeviceSynchronize());
  std::vector<uint16_t> got(ref.size());
  dy.download(got.data(), got.size() * 2);
  const CompareResult r = compare_bf16(got, ref);
  EXPECT_EQ(r.checked, int64_t(ref.size()));
  EXPECT_EQ(r.bad, 0) << r.first_bad << " (max abs err " << r.max_abs_err << ")";
  EXPECT_TRUE(dy.guards_intact() && dc.guards_intact()) << "a write outside y (or into the cache)";
  if (k.cache) {  // the conv never writes the cache
    std::vector<uint8_t> after(cache.bytes.size());
    dc.download(after.data(), after.size());
    EXPECT_EQ(after, cache.bytes);
  }
}

void run_case(const Case& k, uint32_t seed) {
  SCOPED_TRACE(name(k));
  run_desc(ConvDesc::causal3x3x3_cached(k.n, k.t, k.h, k.w, k.cin, k.cout, k.cache, k.dt),
           k.residual, seed);
}

// T_in -> T_out of the issue: 1 -> 1 (first chunk), 3 -> 1, 4 -> 2, 6 -> 4 (cache 2), and one
// frame of cache; N 1 and 2; odd sizes; Cin not a multiple of BK; Cout tiny (the RGB layer) to
// wide; residuals.
TEST(CachedConvGpu, Bf16AgainstReference) {
  VAECONV_REQUIRE_GPU();
  const std::vector<Case> cases = {
      {1, 1, 9, 13, 32, 40, 0, DType::kBF16, false},   // 1 -> 1, no cache
      {1, 1, 9, 13, 32, 40, 2, DType::kBF16, false},   // 3 -> 1
      {2, 2, 7, 11, 48, 96, 2, DType::kBF16, true},    // 4 -> 2
      {1, 4, 11, 9, 96, 96, 2, DType::kBF16, false},   // 6 -> 4
      {2, 4, 5, 17, 24, 3, 2, DType::kBF16, true},     // 6 -> 4, Cout 3
      {1, 3, 6, 7, 16, 20, 1, DType::kBF16, false},    // one cached frame
      {2, 1, 13, 5, 64, 136, 1, DType::kBF16, true},
  };
  uint32_t seed = 100;
  for (const Case& c : cases) run_case(c, seed++);
}

TEST(CachedConvGpu, Fp8AgainstReference) {
  VAECONV_REQUIRE_GPU();
  const std::vector<Case> cases = {
      {1, 1, 9, 13, 32, 40, 0, DType::kFP8E4M3, false},
      {1, 1, 9, 13, 32, 40, 2, DType::kFP8E4M3, false},
      {2, 2, 7, 11, 48, 96, 2, DType::kFP8E4M3, true},
      {1, 4, 11, 9, 96, 96, 2, DType::kFP8E4M3, false},
      {2, 4, 5, 17, 32, 3, 2, DType::kFP8E4M3, true},
      {1, 3, 6, 7, 16, 24, 1, DType::kFP8E4M3, false},
  };
  uint32_t seed = 200;
  for (const Case& c : cases) run_case(c, seed++);
}

// WanResample's time_conv: stride 1 (upsample3d: Cout = 2C, each half stored as its own frame;
// "Rep" first chunk without a cache, then two cached frames) and stride 2 (downsample3d: one
// cached frame, no pad), odd T, N 1 and 2, residuals, bf16 and fp8.
TEST(TemporalConvGpu, AgainstReference) {
  VAECONV_REQUIRE_GPU();
  uint32_t seed = 300;
  for (DType dt : {DType::kBF16, DType::kFP8E4M3}) {
    run_desc(ConvDesc::temporal3x1x1(1, 1, 9, 13, 32, 64, 1, 0, dt), false, seed++);
    run_desc(ConvDesc::temporal3x1x1(2, 3, 7, 11, 48, 96, 1, 2, dt), true, seed++);
    run_desc(ConvDesc::temporal3x1x1(1, 4, 11, 9, 96, 192, 1, 2, dt), false, seed++);
    run_desc(ConvDesc::temporal3x1x1(1, 2, 5, 6, 32, 40, 1, 1, dt), false, seed++);
    run_desc(ConvDesc::temporal3x1x1(1, 4, 9, 13, 64, 64, 2, 1, dt), false, seed++);
    run_desc(ConvDesc::temporal3x1x1(2, 5, 7, 5, 32, 48, 2, 1, dt), true, seed++);
    run_desc(ConvDesc::temporal3x1x1(1, 3, 6, 7, 96, 96, 2, 0, dt), false, seed++);
  }
}

// The cached causal and temporal convs of 192 and 384 channels against the reference: partial
// pixel tiles (143-pixel frames), two Cout tiles at 384, odd T, residuals. On sm_90a the cached
// convs run the 192-wide tile of their operand type (tile_table.hpp's WideCout192Shape /
// WideCout192ShapeFp8; dispatch.hpp's takes_wide_cout192), the temporal convs keep theirs:
// asserted here through which_kernel
// (without a GPU too), so that the reference runs check the kernels the plans name.
TEST(CachedConvGpu, WideCout192Tile) {
  std::vector<ConvDesc> descs;
  for (DType dt : {DType::kBF16, DType::kFP8E4M3}) {
    descs.push_back(ConvDesc::causal3x3x3_cached(1, 2, 11, 13, 192, 192, 2, dt));
    descs.push_back(ConvDesc::causal3x3x3_cached(2, 2, 5, 7, 384, 384, 2, dt));
    descs.push_back(ConvDesc::causal3x3x3_cached(1, 3, 9, 5, 192, 384, 1, dt));
    descs.push_back(ConvDesc::temporal3x1x1(1, 3, 11, 13, 192, 384, 1, 2, dt));  // halves of 192
    descs.push_back(ConvDesc::temporal3x1x1(1, 5, 9, 13, 384, 384, 2, 1, dt));
  }
  for (const ConvDesc& d : descs) {  // the plans, without a GPU too
    KernelPlan plan;
    ASSERT_TRUE(which_kernel(d, &plan).ok());
#if defined(VAECONV_NVIDIA_WGMMA)
    const bool expected = d.kind == ConvKind::kCausal3x3x3;
#else
    const bool expected = false;
#endif
    EXPECT_EQ(plan.choice.tile == kernel::TileId::kWideCout192, expected)
        << plan.name() << " for " << d.to_string();
  }
  VAECONV_REQUIRE_GPU();
  uint32_t seed = 400;
  for (const ConvDesc& d : descs) {
    run_desc(d, seed % 2 == 1, seed);
    ++seed;
  }
}

// The tail rule (kernel/tail_split.hpp) on the cached conv: two frames of 97 x 101 pixels behind
// two cached ones, 384 channels, a residual: on the sm_90a build the bf16 192-wide launch covers
// the first 66 pixel blocks of 128 of each frame and the wide tile the rest (asserted through
// which_kernel, without a GPU too); e4m3 and the other builds run one launch.
TEST(CachedConvGpu, TailSplit) {
  for (DType dt : {DType::kBF16, DType::kFP8E4M3}) {
    const ConvDesc d = ConvDesc::causal3x3x3_cached(1, 2, 97, 101, 64, 384, 2, dt);
    KernelPlan plan;
    ASSERT_TRUE(which_kernel(d, &plan).ok());
#if defined(VAECONV_NVIDIA_WGMMA)
    const int expected = dt == DType::kBF16 ? 66 * 128 : 0;
#else
    const int expected = 0;
#endif
    EXPECT_EQ(plan.choice.tail_begin, expected) << plan.name() << " for " << d.to_string();
  }
  VAECONV_REQUIRE_GPU();
  run_desc(ConvDesc::causal3x3x3_cached(1, 2, 97, 101, 64, 384, 2, DType::kBF16), true, 500);
  run_desc(ConvDesc::causal3x3x3_cached(1, 2, 97, 101, 64, 384, 2, DType::kFP8E4M3), true, 501);
}

// A clip of 9 frames decoded in chunks of 1, 4 and 4 frames: each chunk's cache is what
// write_stream_cache left after the previous call, and the three outputs together are the
// causal conv of the whole clip.
TEST(CachedConvGpu, ChunkedClipEqualsWholeClip) {
  VAECONV_REQUIRE_GPU();
  const int64_t n = 2, t_all = 9, h = 7, w = 10, cin = 32, cout = 48;
  std::mt19937 rng(7);
  std::vector<uint16_t> x_bits, w_bits;
  std::vector<float> x_vals, w_vals;
  random_bf16(rng, size_t(n * t_all * h * w * cin), -1.f, 1.f, &x_bits, &x_vals);
  random_bf16(rng, size_t(cout * cin * 27), -0.1f, 0.1f, &w_bits, &w_vals);
  const ConvDesc whole = ConvDesc::causal3x3x3(n, t_all, h, w, cin, cout);
  std::vector<float> ref(size_t(whole.out_elements()));
  ASSERT_TRUE(reference::conv_reference(whole, x_vals.data(), w_vals.data(), nullptr, nullptr,
                                        ref.data())
                  .ok());
  const size_t frame = size_t(h * w * cin), out_frame = size_t(h * w * cout);
  GuardedBuffer cache_a(n * 2 * frame * 2), cache_b(n * 2 * frame * 2);
  ASSERT_TRUE(cache_a.ok() && cache_b.ok());
  const void* cache = nullptr;
  int cache_frames = 0;
  int64_t t0 = 0;
  int chunk_no = 0;
  std::vector<uint16_t> got(ref.size(), kPoisonBf16);
  for (int64_t t : {1, 4, 4}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk_no));
    const ConvDesc d = ConvDesc::causal3x3x3_cached(n, t, h, w, cin, cout, cache_frames);
    std::vector<uint16_t> xc(size_t(n * t) * frame);
    for (int64_t b = 0; b < n; ++b)
      std::memcpy(&xc[size_t(b * t) * frame], &x_bits[size_t(b * t_all + t0) * frame],
                  size_t(t) * frame * 2);
    PackedWeightsHost pk;
    ASSERT_TRUE(pack_weights_bf16(d, w_vals.data(), &pk).ok());
    GuardedBuffer dx(xc.size() * 2), dw(pk.byte_size()), dy(size_t(d.out_elements()) * 2);
    dx.upload(xc.data(), xc.size() * 2);
    dw.upload(pk.bytes(), pk.byte_size());
    std::vector<uint16_t> poison(size_t(d.out_elements()), kPoisonBf16), y(poison.size());
    dy.upload(poison.data(), poison.size() * 2);
    ConvArgs a;
    a.x = dx.ptr();
    a.cache = cache;
    a.weights = {dw.ptr(), pk.info};
    a.y = dy.ptr();
    const Status st = precompiled::conv_forward(d, a, nullptr);
    ASSERT_TRUE(st.ok()) << st.to_string();
    // The next cache, into the other buffer (the conv above still reads this one's).
    GuardedBuffer& next = chunk_no % 2 ? cache_a : cache_b;
    const int frames = stream_cache_frames(d);
    const Status sc = write_stream_cache(d, cache, dx.ptr(), next.ptr(),
                                         Strides5::dense(frames, h, w, cin), nullptr);
    ASSERT_TRUE(sc.ok()) << sc.to_string();
    VAECONV_HIP_CHECK(hipDeviceSynchronize());
    dy.download(y.data(), y.size() * 2);
    for (int64_t b = 0; b < n; ++b)
      std::memcpy(&got[size_t(b * t_all + t0) * out_frame], &y[size_t(b * t) * out_frame],
                  size_t(t) * out_frame * 2);
    cache = next.ptr();
    cache_frames = frames;
    t0 += t;
    ++chunk_no;
  }
  const CompareResult r = compare_bf16(got, ref);
  EXPECT_EQ(r.checked, int64_t(ref.size()));
  EXPECT_EQ(r.bad, 0) << r.first_bad << " (max abs err " << r.max_abs_err << ")";
}

}  // namespace
}  // namespace vaeconv::test
