// tests/host/test_upsample_phases.cpp — the upsample conv as four phase convs
// (conv/upsample_phases.hpp), on the host: the combined-weight packing, the phase's tap window
// cursor, and the whole path the kernels take — every phase's gather (UpsamplePhaseGeometry's
// ConvGather at()/valid(), as the kernel's copy threads walk it), its packed weights and its
// output view (apply_upsample_phase) — against the CPU reference of the direct form (nearest x2,
// then the 3 x 3 conv). Values are multiples of 1/8, so every sum is exact in bf16 and float.
// Negative controls: a phase run with the other phase's tap window, or without its output shift.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/upsample_phases.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/reference/conv_reference.hpp"

namespace vaeconv {
namespace {

using kernel::ConvParams;

TEST(UpsamplePhases, TapTables) {
  // Phase 0 reads source rows a - 1 (tap 0) and a (taps 1, 2); phase 1 rows a (taps 0, 1) and
  // a + 1 (tap 2): window tap d of phase p combines the 3 x 3 taps whose upsampled row maps there.
  for (int p = 0; p < 2; ++p)
    for (int kh = 0; kh < 3; ++kh) {
      // Output row 2a + p, tap kh: upsampled row 2a + p + kh - 1, source row a + (p + kh - 1) / 2
      // (floor), i.e. window tap d = source row - (a - 1 + p).
      const int src = (p + kh - 1 + 2) / 2 - 1;  // floor((p + kh - 1) / 2)
      const int d = src - (p - 1);
      ASSERT_TRUE(d == 0 || d == 1);
      EXPECT_LE(phase_tap_first(p, d), kh);
      EXPECT_GE(phase_tap_last(p, d), kh);
    }
  EXPECT_EQ(phase_tap_last(0, 0) + 1, phase_tap_first(0, 1));
  EXPECT_EQ(phase_tap_last(1, 0) + 1, phase_tap_first(1, 1));
}

TEST(UpsamplePhases, WindowCursorWalksTheWindow) {
  for (int cin : {8, 24}) {
    for (int h0 = 0; h0 < 2; ++h0)
      for (int w0 = 0; w0 < 2; ++w0) {
        auto step = kernel::TapWindowCursor<2>::of(0, cin, h0, w0);
        for (int k = 0; k < 4 * cin; ++k) {
          const auto at = kernel::TapWindowCursor<2>::of(k, cin, h0, w0);
          const int tap = k / cin;
          ASSERT_EQ(at.kh, h0 + tap / 2);
          ASSERT_EQ(at.kw, w0 + tap % 2);
          ASSERT_EQ(at.c, k % cin);
          ASSERT_EQ(step.kh, at.kh);
          ASSERT_EQ(step.kw, at.kw);
          ASSERT_EQ(step.c, at.c);
          ++step.c;
          step.carry(cin);
        }
        EXPECT_EQ(step.kt, 1) << "past the window: the next time tap";
      }
  }
}

enum class Break { kNothing, kOtherWindow, kNoShift };

// Runs the four phases of upsample2x(N, T, H, W, Cin, Cout) + a residual the way the kernels do
// (the vector gather when Cin is a multiple of 8, the element-wise ChunkTaps otherwise) and
// returns the number of output elements that differ from the direct conv (or are not written
// exactly once).
int run_phases(int n, int t, int h, int w, int cin, int cout, Break brk, unsigned seed) {
  const ConvDesc d = ConvDesc::upsample2x(n, t, h, w, cin, cout);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8);
  std::vector<float> x(size_t(d.in_elements())), wt(size_t(cout * cin * 9)),
      res(size_t(d.out_elements()));
  for (auto& v : x) v = float(small(rng)) / 8.f;
  for (auto& v : wt) v = float(small(rng)) / 8.f;
  for (auto& v : res) v = float(small(rng)) / 8.f;
  std::vector<float> ref(size_t(d.out_elements()));
  EXPECT_TRUE(
      reference::conv_reference(d, x.data(), wt.data(), nullptr, res.data(), ref.data()).ok());

  PackedWeightsHost packed;
  EXPECT_TRUE(detail::pack_weights_bf16_as(d, wt.data(), /*phases=*/true, &packed).ok());
  EXPECT_EQ(packed.info.phases, kUpsamplePhases);
  EXPECT_EQ(packed.info.k, 4 * cin);
  EXPECT_EQ(int64_t(packed.bf16.size()) * 2, packed.info.bytes());

  constexpr int BM = 32, BN = 16, BK = 64;  // a small tile: several blocks per phase
  std::vector<float> y(size_t(d.out_elements()), 0.f);
  std::vector<int> writes(y.size(), 0);
  // Stand-ins for the device buffers: the views are offsets from their bases.
  std::vector<uint16_t> y_base(y.size()), r_base(y.size());
  ConvArgs a;
  a.weights.info = packed.info;
  a.weights.data = packed.bf16.data();
  a.y = y_base.data();
  a.residual = r_base.data();
  for (int phase = 0; phase < kUpsamplePhases; ++phase) {
    ConvParams p = make_params(d, a, BM, BN);
    apply_upsample_phase(d, packed.info, phase, BM, &p);
    if (brk == Break::kOtherWindow) std::swap(p.tap_h0, p.tap_w0);  // (0,1) <-> (1,0)
    if (brk == Break::kNoShift) {
      p.y = a.y;
    }
    const int64_t y_shift = (static_cast<const char*>(p.y) - static_cast<const char*>(a.y)) / 2;
    const int64_t r_shift =
        (static_cast<const char*>(p.residual) - static_cast<const char*>(a.residual)) / 2;
    // The epilogue's packed-rows store (pixel m at m * out_sw) must not apply to a phase's view.
    EXPECT_NE(int64_t(p.out_sh), int64_t(p.wo) * p.out_sw);
    const uint16_t* wp = reinterpret_cast<const uint16_t*>(p.w);
    EXPECT_EQ(int64_t(p.w_view_bytes), packed.info.cout * packed.info.k_pad * 2);
    const int k_tiles = (p.k + BK - 1) / BK;
    for (int frame = 0; frame < d.n * d.out_t(); ++frame)
      for (int m = 0; m < p.frame_pixels; ++m) {
        kernel::BlockCoord b = kernel::frame_coord(p, frame);
        b.m0 = m;  // one GEMM row per "block": the gather of row 0
        const int64_t base = kernel::input_view_offset(p, b);
        std::vector<double> acc(size_t(cout), 0.0);
        for (int chunk = 0; chunk < BK / 8; ++chunk) {
          // The vector gather, and the element-wise kernel's (kFarSteps) for Cin % 8 != 0.
          kernel::ConvGather<kernel::UpsamplePhaseGeometry, 1, 1, BK, 2> g;
          kernel::ConvGather<kernel::UpsamplePhaseGeometry, 1, 1, BK, 2, true> ge;
          g.init(p, b, 0, chunk);
          ge.init(p, b, 0, chunk);
          for (int kt = 0; kt < k_tiles; ++kt) {
            const int k = kt * BK + chunk * 8;  // the chunk's first packed column
            auto add = [&](int64_t xi, int e) {
              for (int co = 0; co < cout; ++co)
                acc[size_t(co)] += double(x[size_t(xi)]) *
                                   double(bf16_to_float(wp[size_t(co * p.k_pad + k + e)]));
            };
            if (cin % 8 == 0) {  // the vector gather: a chunk is 8 channels of one tap
              if (g.exists(0)) {
                EXPECT_EQ(g.offset(0), g.at(p, 0));
                for (int e = 0; e < 8; ++e) add(base + g.offset(0) / 2 + e, e);
              }
            } else {  // the element-wise gather: each element located on its own
              kernel::ChunkTaps<kernel::UpsamplePhaseGeometry, 8> taps;
              taps.locate(p, ge);
              const uint32_t mask = taps.row_mask(ge, 0);
              for (int e = 0; e < 8; ++e)
                if (taps.valid(mask, e)) add(base + taps.at(p, ge, 0, e), e);
            }
            g.advance(p);
            ge.advance(p);
          }
        }
        const int64_t frame_out = int64_t(b.n) * p.out_sn + int64_t(b.ot) * p.out_st;
        for (int co = 0; co < cout; ++co) {
          const int64_t off = y_shift + frame_out + int64_t(m / p.wo) * p.out_sh +
                              int64_t(m % p.wo) * p.out_sw + co;
          const int64_t roff = r_shift + frame_out + int64_t(m / p.wo) * p.out_sh +
                               int64_t(m % p.wo) * p.out_sw + co;
          if (off < 0 || off >= int64_t(y.size()) || roff < 0 || roff >= int64_t(y.size()))
            return -1;  // outside the output tensor
          y[size_t(off)] = float(acc[size_t(co)] + double(res[size_t(roff)]));
          ++writes[size_t(off)];
        }
      }
  }
  int bad = 0;
  for (size_t i = 0; i < y.size(); ++i) bad += writes[i] != 1 || y[i] != ref[i];
  return bad;
}

TEST(UpsamplePhases, FourPhasesAreTheDirectConv) {
  EXPECT_EQ(run_phases(1, 1, 5, 7, 16, 8, Break::kNothing, 1), 0);  // K = 64: one K tile
  EXPECT_EQ(run_phases(1, 1, 3, 9, 24, 4, Break::kNothing, 2), 0);  // K = 96: taps cross K tiles
  EXPECT_EQ(run_phases(1, 2, 4, 3, 8, 3, Break::kNothing, 3), 0);   // two frames, odd Cout
  EXPECT_EQ(run_phases(2, 1, 3, 5, 8, 12, Break::kNothing, 4), 0);  // two images
  EXPECT_EQ(run_phases(1, 1, 1, 1, 8, 8, Break::kNothing, 5), 0);   // a 1 x 1 source: all border
  EXPECT_EQ(run_phases(1, 1, 4, 6, 3, 8, Break::kNothing, 6), 0);   // Cin 3: element-wise gather
  EXPECT_EQ(run_phases(2, 1, 3, 4, 5, 3, Break::kNothing, 7), 0);   // Cin 5, two images
}

TEST(UpsamplePhases, NegativeControlsFail) {
  // The counts, not -1: the wrong outputs land inside the tensor.
  EXPECT_GT(run_phases(1, 1, 5, 7, 16, 8, Break::kOtherWindow, 8), 0);
  EXPECT_GT(run_phases(1, 1, 5, 7, 16, 8, Break::kNoShift, 9), 0);
  EXPECT_GT(run_phases(1, 1, 4, 6, 3, 8, Break::kOtherWindow, 10), 0);  // element-wise too
}

TEST(UpsamplePhases, PackingAndValidation) {
  const ConvDesc d = ConvDesc::upsample2x(1, 1, 4, 4, 8, 8);
  std::vector<float> wt(size_t(8 * 8 * 9), 0.25f);
  PackedWeightsHost ph, direct;
  ASSERT_TRUE(detail::pack_weights_bf16_as(d, wt.data(), true, &ph).ok());
  ASSERT_TRUE(detail::pack_weights_bf16_as(d, wt.data(), false, &direct).ok());
  EXPECT_EQ(direct.info.phases, 1);
  EXPECT_EQ(direct.info.k, 9 * 8);
  // Phase (1, 0), window tap (0, 1) combines kh 0..1, kw 1..2: four weights of 0.25.
  const int64_t k = (0 * 2 + 1) * 8 + 3;
  EXPECT_EQ(bf16_to_float(ph.bf16[size_t((2 * ph.info.cout + 5) * ph.info.k_pad + k)]), 1.f);
  // Only the upsample conv packs in phases; and this build's packing is what it runs.
  PackedWeightsHost bad;
  EXPECT_EQ(detail::pack_weights_bf16_as(ConvDesc::causal3x3x3(1, 1, 4, 4, 8, 8), wt.data(), true,
                                         &bad).code(),
            StatusCode::kUnsupported);
  EXPECT_FALSE(upsample_in_phases(ConvDesc::causal3x3x3(1, 1, 4, 4, 8, 8)));
  EXPECT_EQ(upsample_in_phases(ConvDesc::upsample2x(1, 1, 4, 4, 8, 8, DType::kFP8E4M3)),
            kUpsamplePhasesBuilt);
}

// FP8: each phase's combined weights are quantized against their own row's scale, [phase][cout].
TEST(UpsamplePhases, Fp8PackingQuantizesEachPhaseRow) {
  const ConvDesc d = ConvDesc::upsample2x(1, 1, 4, 4, 8, 3, DType::kFP8E4M3);
  std::vector<float> wt(size_t(3 * 8 * 9));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : wt) v = u(rng);
  for (int t = 0; t < 9; ++t) wt[size_t((1 * 8 + 2) * 9 + t)] = 4.f;  // channel 1's largest sums
  PackedWeightsHost p;
  ASSERT_TRUE(detail::pack_weights_fp8_as(d, wt.data(), true, &p).ok());
  ASSERT_EQ(p.info.phases, 4);
  ASSERT_EQ(p.info.k, 4 * 8);
  ASSERT_EQ(int64_t(p.scales.size()), p.info.scale_count());
  ASSERT_EQ(p.info.scale_count(), 4 * 3);
  ASSERT_EQ(int64_t(p.fp8.size()), 4 * 3 * p.info.k_pad);
  for (int ph = 0; ph < 4; ++ph)
    for (int64_t co = 0; co < 3; ++co) {
      const int64_t r = ph * 3 + co;
      std::vector<float> sums(size_t(p.info.k));
      float amax = 0.f;
      for (int64_t k = 0; k < p.info.k; ++k) {  // (dh, dw, c): the taps it combines, summed
        const int tap = int(k / 8), dh = tap / 2, dw = tap % 2;
        const int64_t c = k % 8;
        float sum = 0.f;
        for (int kh = phase_tap_first(ph / 2, dh); kh <= phase_tap_last(ph / 2, dh); ++kh)
          for (int kw = phase_tap_first(ph % 2, dw); kw <= phase_tap_last(ph % 2, dw); ++kw)
            sum += wt[size_t(((co * 8 + c) * 3 + kh) * 3 + kw)];
        sums[size_t(k)] = sum;
        amax = std::max(amax, std::fabs(sum));
      }
      ASSERT_EQ(p.scales[size_t(r)], fp8_scale_for_amax(amax)) << "phase " << ph << " co " << co;
      for (int64_t k = 0; k < p.info.k_pad; ++k)
        ASSERT_EQ(p.fp8[size_t(r * p.info.k_pad + k)],
                  k < p.info.k ? float_to_e4m3fn(sums[size_t(k)] / p.scales[size_t(r)]) : 0)
            << "phase " << ph << " co " << co << " k " << k;
    }
  // Phase (0, 0)'s window tap (1, 1) sums four taps of 4 for channel 1, input channel 2: the
  // row's largest magnitude (16), which maps to 448; phase (1, 1)'s tap (0, 0) likewise.
  EXPECT_EQ(p.scales[size_t(0 * 3 + 1)], fp8_scale_for_amax(16.f));
  EXPECT_EQ(p.fp8[size_t((0 * 3 + 1) * p.info.k_pad + 3 * 8 + 2)], 0x7E);
  EXPECT_EQ(p.fp8[size_t((3 * 3 + 1) * p.info.k_pad + 0 * 8 + 2)], 0x7E);
}

TEST(UpsamplePhases, WeightsPackedTheOtherWayAreRefused) {
  const ConvDesc d = ConvDesc::upsample2x(1, 1, 4, 4, 8, 8);
  std::vector<float> wt(size_t(8 * 8 * 9), 0.5f);
  PackedWeightsHost other;
  ASSERT_TRUE(detail::pack_weights_bf16_as(d, wt.data(), !upsample_in_phases(d), &other).ok());
  std::vector<uint16_t> x(size_t(d.in_elements()) + 64), y(size_t(d.out_elements()) + 64);
  ConvArgs a;
  a.x = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(x.data()) + 15) & ~uintptr_t(15));
  a.y = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(y.data()) + 15) & ~uintptr_t(15));
  a.weights = {other.bf16.data(), other.info};
  std::vector<uint16_t> wbuf(other.bf16.size() + 64);
  a.weights.data = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(wbuf.data()) + 15) & ~uintptr_t(15));
  const Status s = validate_for_kernels(d, a);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find("packed for another conv"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace vaeconv
