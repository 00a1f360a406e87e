// The causal conv of a video chunk with cached frames (ConvDesc::cache_frames, ConvArgs::cache):
// the CPU reference against cat(cache, x) + causal pad, the kernels' cached gather
// (kernel/cached_frames.hpp) against the definition for every block, thread role and K tile, and
// every refusal of validate_for_kernels for the cache.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "host/cached_frames_checks.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/kernel/cached_frames.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/reference/conv_reference.hpp"

namespace vaeconv {
namespace {

using cached_frames_checks::addr;
using cached_frames_checks::random_values;

// The cached conv is the causal conv over cat(cache, x) with 2 - cache_frames frames of front
// pad: bit for bit (the same taps, in the same order).
TEST(CachedConvReference, EqualsCatThenCausalPad) {
  const int64_t n = 2, h = 3, w = 5, cin = 8, cout = 9;
  for (int c = 0; c <= 2; ++c)
    for (int64_t t : {1, 2, 4}) {
      const ConvDesc d = ConvDesc::causal3x3x3_cached(n, t, h, w, cin, cout, c);
      ASSERT_TRUE(d.validate().ok()) << d.validate().to_string();
      ASSERT_EQ(d.out_t(), t);
      const auto x = random_values(size_t(d.in_elements()), 1 + uint32_t(t));
      const auto cache = random_values(size_t(n * c * h * w * cin), 7 + uint32_t(c));
      const auto wt = random_values(size_t(cout * cin * 27), 3);
      const auto bias = random_values(size_t(cout), 5);
      // cat(cache, x) along T, and the causal conv over it with the front pad the cache leaves.
      ConvDesc cat = ConvDesc::causal3x3x3(n, c + t, h, w, cin, cout);
      cat.pad.t_front = 2 - c;
      cat.set_dense_strides();
      ASSERT_EQ(cat.out_t(), t);
      std::vector<float> xc(size_t(cat.in_elements()));
      const size_t frame = size_t(h * w * cin);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t f = 0; f < c + t; ++f) {
          const float* src = f < c ? &cache[size_t(b * c + f) * frame]
                                   : &x[size_t(b * t + f - c) * frame];
          std::memcpy(&xc[size_t(b * (c + t) + f) * frame], src, frame * sizeof(float));
        }
      std::vector<float> y(size_t(d.out_elements()), -7.f), y_cat(y.size(), 7.f);
      ASSERT_TRUE(reference::conv_reference_cached(d, c ? cache.data() : nullptr, x.data(),
                                                   wt.data(), bias.data(), nullptr, y.data(), 2)
                      .ok());
      ASSERT_TRUE(reference::conv_reference(cat, xc.data(), wt.data(), bias.data(), nullptr,
                                            y_cat.data(), 1)
                      .ok());
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_EQ(y[i], y_cat[i]) << "cache " << c << " T " << t << " element " << i;
    }
}

TEST(CachedConvReference, RefusesAMismatchedCache) {
  const ConvDesc d = ConvDesc::causal3x3x3_cached(1, 2, 3, 3, 8, 8, 2);
  std::vector<float> x(size_t(d.in_elements())), w(8 * 8 * 27), y(size_t(d.out_elements()));
  EXPECT_EQ(reference::conv_reference_cached(d, nullptr, x.data(), w.data(), nullptr, nullptr,
                                             y.data())
                .code(),
            StatusCode::kInvalidArgument);
}

// The cached gather in both of the tile cursor's row tests (kernel::TileConvGather's kMaskRows):
// AMD's mask and cp.async's flag and select.
template <int kRows, int kRowStep, int BK, int kElemBytes>
using CachedGatherMasked = kernel::CachedConvGather<kRows, kRowStep, BK, kElemBytes, true>;
template <int kRows, int kRowStep, int BK, int kElemBytes>
using CachedGatherSelected = kernel::CachedConvGather<kRows, kRowStep, BK, kElemBytes, false>;

// Walks the cached gather as the kernel does and checks each row's source, offset and validity
// against frame j = ot + kt - pad_t + cache_frames of cat(cache, x), in both row forms.
template <int BM, int BK, int kThreads, int kElemBytes>
void check_cached_gather(ConvDesc d, Strides5 cache_strides) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  d.cache_strides = cache_strides;
  ASSERT_TRUE(d.validate().ok()) << d.validate().to_string();
  PackedWeightsInfo w;
  ASSERT_TRUE(packed_info_for(d, &w).ok());
  ASSERT_EQ(w.taps_t, d.t == 1 && d.cache_frames == 0 ? 1 : 3)
      << "a cached conv packs every time tap, T = 1 included";
  ConvArgs a;
  a.weights.info = w;
  a.cache = reinterpret_cast<const void*>(uintptr_t(0x1000));
  const kernel::ConvParams p = make_params(d, a, BM, 32);
  const auto x_base = [&](const kernel::BlockCoord& b) { return kernel::input_view_offset(p, b); };
  const auto expect = [&](const kernel::BlockCoord& b, int64_t m, int64_t k) {
    const int64_t tap = k / d.cin, c = k % d.cin;
    const int64_t tt = w.kt_base + tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
    const int64_t j = b.ot + tt - d.pad.t_front;  // frame of cat(cache, x)
    const int64_t ih = m / p.wo + kh - 1, iw = m % p.wo + kw - 1;
    return cached_frames_checks::cat_row(d, b.n, j, ih >= 0 && ih < d.h && iw >= 0 && iw < d.w,
                                         ih * d.in_strides.h + iw * d.in_strides.w + c);
  };
  cached_frames_checks::check_gather_walk<CachedGatherMasked, BM, BK, kThreads, kElemBytes>(
      d, w, p, x_base, expect);
  cached_frames_checks::check_gather_walk<CachedGatherSelected, BM, BK, kThreads, kElemBytes>(
      d, w, p, x_base, expect);
}

TEST(CachedConvGather, EveryBlockThreadAndKTile) {
  for (int c = 0; c <= 2; ++c)
    for (int64_t t : {1, 2, 4}) {
      const ConvDesc d = ConvDesc::causal3x3x3_cached(2, t, 3, 5, 24, 8, c);
      check_cached_gather<32, 32, 64, 2>(d, d.cache_strides);
      check_cached_gather<32, 64, 64, 1>(ConvDesc::causal3x3x3_cached(1, t, 4, 3, 48, 8, c),
                                         ConvDesc::causal3x3x3_cached(1, t, 4, 3, 48, 8, c)
                                             .cache_strides);
    }
}

// The gather's K tiles against Cin: whole tiles inside a tap (Cin % BK == 0: one block-uniform
// tap per tile) and tiles that reach one or more further taps (Cin 96 / 48 with BK 64, Cin 16
// with BK 32 and 64), where a lane's tap may be cached and another's not.
TEST(CachedConvGather, WholeAndSplitKTiles) {
  for (int c = 0; c <= 2; ++c) {
    const ConvDesc d64 = ConvDesc::causal3x3x3_cached(1, 2, 3, 4, 64, 8, c);
    check_cached_gather<32, 32, 64, 2>(d64, d64.cache_strides);    // 2 tiles per tap
    const ConvDesc d96 = ConvDesc::causal3x3x3_cached(1, 2, 3, 3, 96, 8, c);
    check_cached_gather<32, 32, 64, 2>(d96, d96.cache_strides);    // 3 tiles per tap
    check_cached_gather<32, 64, 64, 1>(d96, d96.cache_strides);    // 1.5 taps per tile
    const ConvDesc d128 = ConvDesc::causal3x3x3_cached(1, 1, 3, 3, 128, 8, c);
    check_cached_gather<32, 64, 64, 1>(d128, d128.cache_strides);  // 2 tiles per tap
    const ConvDesc d16 = ConvDesc::causal3x3x3_cached(1, 2, 3, 4, 16, 8, c);
    check_cached_gather<32, 64, 64, 1>(d16, d16.cache_strides);    // 4 taps per tile
    check_cached_gather<32, 64, 128, 2>(ConvDesc::causal3x3x3_cached(1, 1, 3, 3, 8, 8, c),
                                        ConvDesc::causal3x3x3_cached(1, 1, 3, 3, 8, 8, c)
                                            .cache_strides);  // 8 taps per tile
  }
}

TEST(CachedConvGather, CacheWithItsOwnFrameStrides) {
  // A cache cut from a larger buffer: padded batch and frame strides, x's in-frame strides.
  ConvDesc d = ConvDesc::causal3x3x3_cached(2, 2, 3, 4, 16, 8, 2);
  Strides5 s = d.cache_strides;
  s.t += 64;
  s.n = 5 * s.t;
  check_cached_gather<32, 32, 64, 2>(d, s);
}

// copy_a_either on buffer views (AMD), emulated per wave (cached_frames_checks.hpp): a wave whose
// lanes all read one view takes one load per row from it, a wave of both views both loads OR-ed;
// every row's 16 bytes equal the view's bytes at the gather's offset. Cin 96 with BK 64 (1.5 taps
// per tile) has waves of both views at the cache/x boundary, Cin 96 with BK 32 none.
template <int BM, int BK, int kThreads, int kElemBytes>
cached_frames_checks::EitherCopyCounts either_copy(ConvDesc d, bool lie = false) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  EXPECT_TRUE(d.validate().ok()) << d.validate().to_string();
  PackedWeightsInfo w;
  EXPECT_TRUE(packed_info_for(d, &w).ok());
  ConvArgs a;
  a.weights.info = w;
  a.cache = reinterpret_cast<const void*>(uintptr_t(0x1000));
  const kernel::ConvParams p = make_params(d, a, BM, 32);
  return cached_frames_checks::check_either_copy<CachedGatherMasked, BM, BK, kThreads,
                                                 kElemBytes>(
      d, p, [&](const kernel::BlockCoord& b) { return kernel::input_view_offset(p, b); }, lie);
}

TEST(CachedConvEitherCopy, OneViewPerWaveWhereTheLanesAgree) {
  int64_t mixed_fp8 = 0;
  for (int c = 1; c <= 2; ++c)
    for (int64_t t : {1, 2, 4}) {
      const ConvDesc d = ConvDesc::causal3x3x3_cached(2, t, 3, 5, 96, 8, c);
      const auto fp8 = either_copy<64, 64, 128, 1>(d);  // 1.5 taps per K tile
      EXPECT_EQ(fp8.wrong_rows, 0) << d.to_string();
      EXPECT_GT(fp8.one_view_waves, 0);
      mixed_fp8 += fp8.mixed_waves;
      const auto bf16 = either_copy<64, 32, 128, 2>(d);  // 3 K tiles per tap
      EXPECT_EQ(bf16.wrong_rows, 0) << d.to_string();
      EXPECT_GT(bf16.one_view_waves, 0);
      EXPECT_EQ(bf16.mixed_waves, 0) << "Cin % BK == 0: every K tile lies in one tap";
      EXPECT_GT(fp8.rows + bf16.rows, 0);
    }
  EXPECT_GT(mixed_fp8, 0) << "no K tile straddled the cache/x boundary: the mixed path is untested";
  // Negative control: a vote that claims agreement where the lanes disagree reads wrong rows.
  const auto lie = either_copy<64, 64, 128, 1>(ConvDesc::causal3x3x3_cached(1, 2, 3, 5, 96, 8, 2),
                                               /*lie=*/true);
  EXPECT_GT(lie.mixed_waves, 0);
  EXPECT_GT(lie.wrong_rows, 0);
}

struct Call {
  ConvDesc d = ConvDesc::causal3x3x3_cached(1, 4, 16, 16, 32, 64, 2);
  ConvArgs a;
  Call() { EXPECT_TRUE(cached_frames_checks::fake_args(d, addr(0x60000000), &a).ok()); }
  Status status() const { return validate_for_kernels(d, a); }
};

TEST(CachedConvArgs, AcceptsAndRefuses) {
  {
    Call c;
    EXPECT_TRUE(c.status().ok()) << c.status().to_string();
  }
  {
    Call c;
    c.a.cache = nullptr;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find("cache pointer is null"), std::string::npos);
  }
  {
    Call c;  // a cache pointer without cached frames
    c.d = ConvDesc::causal3x3x3(1, 4, 16, 16, 32, 64);
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  }
  {
    Call c;
    c.a.cache = addr(0x60000008);
    EXPECT_EQ(c.status().code(), StatusCode::kMisaligned);
  }
  {
    Call c;  // the cache's rows laid out unlike x's
    c.d.cache_strides.h += 8;
    c.d.cache_strides.t = c.d.cache_strides.h * 16;
    c.d.cache_strides.n = c.d.cache_strides.t * 2;
    EXPECT_EQ(c.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(c.status().message().find("H and W strides"), std::string::npos);
  }
  {
    Call c;  // frame stride not a multiple of the 16-byte chunk
    c.d.cache_strides.t += 4;
    c.d.cache_strides.n = c.d.cache_strides.t * 2;
    EXPECT_EQ(c.status().code(), StatusCode::kMisaligned);
  }
  {
    Call c;  // the output written over the cache
    c.a.cache = addr(cached_frames_checks::kFakeY + 4096);
    EXPECT_EQ(c.status().code(), StatusCode::kOverlap);
  }
  {
    Call c;  // three cached frames: the window looks back two
    c.d.cache_frames = 3;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  }
  {
    Call c;  // the front pad must be what the cache leaves (2 - cache_frames)
    c.d.pad.t_front = 2;
    c.d.set_dense_strides();
    EXPECT_EQ(c.status().code(), StatusCode::kUnsupported);
  }
  {
    Call c;  // Cin = 3: the element-wise gather reads no cache
    c.d = ConvDesc::causal3x3x3_cached(1, 4, 16, 16, 3, 64, 2);
    PackedWeightsInfo w;
    ASSERT_TRUE(packed_info_for(c.d, &w).ok());
    c.a.weights.info = w;
    EXPECT_EQ(c.status().code(), StatusCode::kUnsupported);
  }
  {
    ConvDesc d = ConvDesc::downsample(1, 1, 16, 16, 32, 32);
    d.cache_frames = 1;
    EXPECT_EQ(d.validate().code(), StatusCode::kInvalidArgument);
  }
}

// The tap-reduce, halo and tap-row families read no cache: a cached conv is the implicit GEMM's
// (its cached geometry), whatever Cout or T.
TEST(CachedConvDispatch, OnlyTheImplicitGemmReadsACache) {
  for (int64_t cout : {3, 96})
    for (int64_t t : {1, 4}) {
      const ConvDesc d = ConvDesc::causal3x3x3_cached(1, t, 32, 32, 96, cout, 2);
      EXPECT_FALSE(kernel::TapReduceFamily::can_implement(d)) << d.to_string();
      EXPECT_FALSE(kernel::HaloFamilyOf<96>::can_implement(d)) << d.to_string();
      EXPECT_FALSE(kernel::TapRowFamily::can_implement(d)) << d.to_string();
      EXPECT_EQ(kernel::shipped_family(d), kernel::FamilyId::kImplicitGemm) << d.to_string();
    }
  // Without a cache the T = 1 conv keeps its families (the negative control).
  EXPECT_TRUE(kernel::TapReduceFamily::can_implement(ConvDesc::causal3x3x3(1, 1, 32, 32, 96, 3)));
  EXPECT_TRUE(kernel::HaloFamilyOf<96>::can_implement(ConvDesc::causal3x3x3(1, 1, 32, 32, 96, 96)));
}

}  // namespace
}  // namespace vaeconv
