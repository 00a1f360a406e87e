// The (3, 1, 1) temporal conv of WanResample (ConvDesc::temporal3x1x1): the CPU reference against
// diffusers' computation (cat(cache, x), pad, conv, then upsample3d's interleave of the two
// halves), the kernels' gather (kernel/temporal_gather.hpp) against the definition for every
// block, thread role and K tile, the packing and the refusals.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "host/cached_frames_checks.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/temporal_gather.hpp"
#include "vaeconv/reference/conv_reference.hpp"

namespace vaeconv {
namespace {

using cached_frames_checks::addr;
using cached_frames_checks::random_values;

// diffusers: y = conv3d(pad(cat(cache, x))) with Cout channels per frame; upsample3d then stores
// channel s C + c of frame t as frame 2 t + s, channel c.
TEST(TemporalConvReference, EqualsCatPadConvThenInterleave) {
  const int64_t n = 2, h = 3, w = 4, cin = 8;
  struct Case { int stride, cache; int64_t t, cout; };
  for (const Case& k : {Case{1, 0, 1, 12}, Case{1, 2, 3, 12}, Case{1, 1, 2, 6}, Case{2, 1, 4, 8},
                        Case{2, 1, 5, 8}, Case{2, 0, 3, 8}}) {
    const ConvDesc d =
        ConvDesc::temporal3x1x1(n, k.t, h, w, cin, k.cout, k.stride, k.cache);
    ASSERT_TRUE(d.validate().ok()) << d.validate().to_string();
    ASSERT_TRUE(detail::is_canonical(d)) << d.to_string();
    ConvDesc plain = d;  // the conv over cat(cache, x) as diffusers runs it, no interleave
    plain.t = k.cache + k.t;
    plain.cache_frames = 0;
    plain.interleave_halves = false;
    plain.set_dense_strides();
    ASSERT_EQ(plain.out_t(), d.out_t());
    const auto x = random_values(size_t(d.in_elements()), 3 + uint32_t(k.t));
    const auto cache = random_values(size_t(n * k.cache * h * w * cin), 9);
    const auto wt = random_values(size_t(k.cout * cin * 3), 4);
    const auto bias = random_values(size_t(k.cout), 6);
    std::vector<float> xc(size_t(plain.in_elements()));
    const size_t frame = size_t(h * w * cin);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t f = 0; f < plain.t; ++f)
        std::memcpy(&xc[size_t(b * plain.t + f) * frame],
                    f < k.cache ? &cache[size_t(b * k.cache + f) * frame]
                                : &x[size_t(b * k.t + f - k.cache) * frame],
                    frame * sizeof(float));
    std::vector<float> y(size_t(d.out_elements()), -9.f), yp(y.size(), 9.f);
    ASSERT_TRUE(reference::conv_reference_cached(d, k.cache ? cache.data() : nullptr, x.data(),
                                                 wt.data(), bias.data(), nullptr, y.data(), 2)
                    .ok());
    ASSERT_TRUE(reference::conv_reference(plain, xc.data(), wt.data(), bias.data(), nullptr,
                                          yp.data(), 1)
                    .ok());
    const int64_t to = d.out_t(), pix = h * w, half = k.cout / 2;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t t = 0; t < to; ++t)
        for (int64_t p = 0; p < pix; ++p)
          for (int64_t co = 0; co < k.cout; ++co) {
            const float want = yp[size_t(((b * to + t) * pix + p) * k.cout + co)];
            const size_t at =
                k.stride == 1
                    ? size_t(((b * 2 * to + 2 * t + co / half) * pix + p) * half + co % half)
                    : size_t(((b * to + t) * pix + p) * k.cout + co);
            ASSERT_EQ(y[at], want) << d.to_string() << " t " << t << " co " << co;
          }
  }
}

// The gather walked as the kernel walks it, against frame j = ot * S + kt - pad_front of
// cat(cache, x).
template <int BM, int BK, int kThreads, int kElemBytes>
void check_temporal_gather(ConvDesc d) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  ASSERT_TRUE(d.validate().ok()) << d.validate().to_string();
  PackedWeightsInfo w;
  ASSERT_TRUE(packed_info_for(d, &w).ok());
  ASSERT_EQ(w.k, 3 * d.cin);
  ConvArgs a;
  a.weights.info = w;
  if (d.cache_frames) a.cache = reinterpret_cast<const void*>(uintptr_t(0x1000));
  const kernel::ConvParams p = make_params(d, a, BM, 32);
  cached_frames_checks::check_gather_walk<kernel::TemporalGather, BM, BK, kThreads, kElemBytes>(
      d, w, p,
      [&](const kernel::BlockCoord& b) {
        return int64_t(b.n) * p.in_sn + int64_t(kernel::temporal_view_frame(p, b)) * p.in_st;
      },
      [&](const kernel::BlockCoord& b, int64_t m, int64_t k) {
        const int64_t tt = k / d.cin, c = k % d.cin;
        const int64_t j = b.ot * d.stride_t + tt - d.pad.t_front;  // frame of cat(cache, x)
        // A 3x1x1 tap reads the output pixel's own position: always inside the frame.
        return cached_frames_checks::cat_row(
            d, b.n, j, true, (m / d.w) * d.in_strides.h + (m % d.w) * d.in_strides.w + c);
      });
}

TEST(TemporalConvGather, EveryBlockThreadAndKTile) {
  for (int c = 0; c <= 2; ++c)
    for (int64_t t : {1, 2, 5}) {
      check_temporal_gather<32, 32, 64, 2>(ConvDesc::temporal3x1x1(2, t, 3, 5, 24, 16, 1, c));
      check_temporal_gather<32, 64, 64, 1>(ConvDesc::temporal3x1x1(1, t, 4, 3, 48, 16, 1, c));
    }
  for (int c = 0; c <= 1; ++c)
    for (int64_t t : {3, 4, 7}) {
      check_temporal_gather<32, 32, 64, 2>(ConvDesc::temporal3x1x1(2, t, 3, 5, 24, 16, 2, c));
      check_temporal_gather<16, 64, 64, 1>(ConvDesc::temporal3x1x1(1, t, 2, 9, 32, 16, 2, c));
    }
}

// Packed column k = kt * Cin + ci holds PyTorch's w[co][ci][kt][0][0].
// copy_a_either on buffer views (AMD), emulated per wave (cached_frames_checks.hpp): the temporal
// conv's lanes take their time tap from their chunk, so a K tile of Cin 96 with BK 64 holds lanes
// of two taps: the waves at the cache/x boundary read both views, the others one.
template <int BM, int BK, int kThreads, int kElemBytes>
cached_frames_checks::EitherCopyCounts temporal_either_copy(ConvDesc d) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  EXPECT_TRUE(d.validate().ok()) << d.validate().to_string();
  PackedWeightsInfo w;
  EXPECT_TRUE(packed_info_for(d, &w).ok());
  ConvArgs a;
  a.weights.info = w;
  if (d.cache_frames) a.cache = reinterpret_cast<const void*>(uintptr_t(0x1000));
  const kernel::ConvParams p = make_params(d, a, BM, 32);
  return cached_frames_checks::check_either_copy<kernel::TemporalGather, BM, BK, kThreads,
                                                 kElemBytes>(
      d, p, [&](const kernel::BlockCoord& b) {
        return int64_t(b.n) * p.in_sn + int64_t(kernel::temporal_view_frame(p, b)) * p.in_st;
      });
}

TEST(TemporalConvEitherCopy, OneViewPerWaveWhereTheLanesAgree) {
  int64_t mixed = 0;
  for (int stride : {1, 2})
    for (int c = 0; c <= (stride == 1 ? 2 : 1); ++c)
      for (int64_t t : {3, 4, 7}) {
        const ConvDesc d = ConvDesc::temporal3x1x1(2, t, 3, 5, 96, 16, stride, c);
        const auto fp8 = temporal_either_copy<64, 64, 128, 1>(d);
        EXPECT_EQ(fp8.wrong_rows, 0) << d.to_string();
        EXPECT_GT(fp8.one_view_waves, 0);
        mixed += fp8.mixed_waves;
        const auto bf16 = temporal_either_copy<64, 32, 128, 2>(d);
        EXPECT_EQ(bf16.wrong_rows, 0) << d.to_string();
        EXPECT_EQ(bf16.mixed_waves, 0) << "Cin % BK == 0: every K tile lies in one tap";
        EXPECT_GT(fp8.rows + bf16.rows, 0);
      }
  EXPECT_GT(mixed, 0) << "no K tile straddled the cache/x boundary: the mixed path is untested";
}

TEST(TemporalConvPacking, TimeTapsThenChannels) {
  const ConvDesc d = ConvDesc::temporal3x1x1(1, 2, 4, 4, 16, 8, 1, 2);
  const auto w = random_values(size_t(8 * 16 * 3), 2);
  PackedWeightsHost pk;
  ASSERT_TRUE(pack_weights_bf16(d, w.data(), &pk).ok());
  ASSERT_EQ(pk.info.k, 48);
  for (int64_t co = 0; co < 8; ++co)
    for (int64_t kt = 0; kt < 3; ++kt)
      for (int64_t ci = 0; ci < 16; ++ci)
        ASSERT_EQ(pk.bf16[size_t(co * pk.info.k_pad + kt * 16 + ci)],
                  float_to_bf16(w[size_t((co * 16 + ci) * 3 + kt)]));
}

Status call(const ConvDesc& d, const void* cache) {
  ConvArgs a;
  if (Status s = cached_frames_checks::fake_args(d, cache, &a); !s.ok()) return s;
  return validate_for_kernels(d, a);
}

TEST(TemporalConvArgs, AcceptsAndRefuses) {
  EXPECT_TRUE(call(ConvDesc::temporal3x1x1(1, 4, 16, 16, 96, 192, 1, 2), addr(0x60000000)).ok());
  EXPECT_TRUE(call(ConvDesc::temporal3x1x1(1, 4, 16, 16, 96, 192, 1, 0), nullptr).ok());
  EXPECT_TRUE(call(ConvDesc::temporal3x1x1(2, 5, 16, 16, 96, 96, 2, 1), addr(0x60000000)).ok());
  // Cin = 3: the temporal gather is the 16-byte one.
  EXPECT_EQ(call(ConvDesc::temporal3x1x1(1, 4, 16, 16, 3, 16, 1, 0), nullptr).code(),
            StatusCode::kUnsupported);
  // Two cached frames in front of a stride-2 conv: not downsample3d's (pad would be -1).
  EXPECT_EQ(ConvDesc::temporal3x1x1(1, 4, 16, 16, 32, 32, 2, 2).validate().code(),
            StatusCode::kInvalidArgument);
  ConvDesc odd = ConvDesc::temporal3x1x1(1, 4, 8, 8, 32, 32, 1, 0);
  odd.cout = 33;
  odd.set_dense_strides();
  EXPECT_EQ(odd.validate().code(), StatusCode::kInvalidArgument) << "interleaved halves, odd Cout";
  ConvDesc s3 = ConvDesc::temporal3x1x1(1, 7, 8, 8, 32, 32, 2, 0);
  s3.stride_t = 3;
  s3.set_dense_strides();
  EXPECT_EQ(call(s3, nullptr).code(), StatusCode::kUnsupported) << "time stride 3";
  ConvDesc flat = ConvDesc::temporal3x1x1(1, 4, 8, 8, 32, 32, 1, 0);
  flat.interleave_halves = false;  // stride 1 is upsample3d's: always interleaved
  flat.set_dense_strides();
  EXPECT_EQ(call(flat, nullptr).code(), StatusCode::kUnsupported);
  // The output written over the cache.
  EXPECT_EQ(call(ConvDesc::temporal3x1x1(1, 4, 16, 16, 96, 192, 1, 2), addr(cached_frames_checks::kFakeY + 64))
                .code(),
            StatusCode::kOverlap);
}

TEST(TemporalConvDispatch, TheImplicitGemmOnly) {
  const ConvDesc d = ConvDesc::temporal3x1x1(1, 4, 16, 16, 96, 3, 2, 1);
  EXPECT_FALSE(kernel::TapReduceFamily::can_implement(d));
  EXPECT_FALSE(kernel::HaloFamilyOf<96>::can_implement(d));
  EXPECT_FALSE(kernel::TapRowFamily::can_implement(d));
  EXPECT_EQ(kernel::shipped_family(d), kernel::FamilyId::kImplicitGemm);
}

}  // namespace
}  // namespace vaeconv
