// The tap-reduce scheme on the host (kernel/tap_reduce.hpp): its gathers fill each block's A and
// B tiles exactly as the kernel's copy roles would, the GEMM runs in double, and the reduce reads
// the partials through HaloPatch's index helpers, as the kernel's epilogue does. The result must
// be the reference conv for every output element, with every element written by exactly one
// block. Small patches put many blocks and every border in play; the shipped 16 x 16 patch runs
// too. Also: the dispatch rule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/kernel/tap_reduce.hpp"
#include "vaeconv/kernel/dispatch.hpp"
#include "vaeconv/kernel/tile_table.hpp"
#include "vaeconv/reference/conv_reference.hpp"

namespace vaeconv {
namespace {

using kernel::ConvParams;

template <class Patch, int BN, int BK, int kThreads, int kElemBytes>
void check_tap_reduce(ConvDesc d, uint32_t seed) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  constexpr int BM = Patch::kPixels;
  constexpr int kChunkElems = 16 / kElemBytes, kChunks = BK / kChunkElems;
  constexpr int kRowStep = kThreads / kChunks;
  constexpr int kRowsA = BM / kRowStep, kRowsB = (BN + kRowStep - 1) / kRowStep;
  static_assert(BM % kRowStep == 0, "A rows split evenly");
  ASSERT_LE(9 * d.cout, BN);
  ASSERT_EQ(d.cin % kChunkElems, 0);
  PackedWeightsInfo info;
  ASSERT_TRUE(packed_info_for(d, &info).ok());
  ConvArgs args;
  args.weights.info = info;
  ConvParams p = make_params(d, args, BM, BN);
  p.patch_cols = Patch::patches(p.wo, Patch::kOutCols);
  p.m_blocks = Patch::patches(p.ho, Patch::kOutRows) * p.patch_cols;
  p.n_tiles = 1;

  // Random input (strided layout as in memory), PyTorch weights and their packed rows.
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t x_elems = detail::tensor_span_bytes(d.in_strides, d.n, d.t, d.h, d.w, d.cin,
                                                     d.in_dtype) / int64_t(size_of(d.in_dtype));
  std::vector<float> x(static_cast<size_t>(x_elems));
  for (float& v : x) v = u(rng);
  std::vector<float> w(static_cast<size_t>(d.cout * d.cin * 27));
  for (float& v : w) v = u(rng);
  std::vector<float> packed(static_cast<size_t>(info.cout * info.k_pad), 0.f);
  for (int64_t co = 0; co < d.cout; ++co)
    detail::packed_row(d, info, w.data(), co, packed.data() + co * info.k_pad);
  ConvDesc dense = d;
  dense.out_strides = Strides5::dense(d.out_t(), d.out_h(), d.out_w(), d.cout);
  std::vector<float> want(static_cast<size_t>(d.n * d.out_t() * d.out_h() * d.out_w() * d.cout));
  ASSERT_TRUE(reference::conv_reference(dense, x.data(), w.data(), nullptr, nullptr, want.data(), 1).ok());

  std::vector<double> got(want.size(), 0.0);
  std::vector<int> writes(want.size(), 0);
  const int k_tiles = (p.taps_t * p.cin + BK - 1) / BK;
  std::vector<double> a(static_cast<size_t>(BM * BK)), b(static_cast<size_t>(BN * BK));
  std::vector<double> part(static_cast<size_t>(BM * BN));
  std::vector<int> a_set(static_cast<size_t>(BM * BK)), b_set(static_cast<size_t>(BN * BK));
  int64_t valid_a = 0, zero_a = 0;
  for (int by = 0; by < d.n * d.out_t(); ++by)
    for (int bx = 0; bx < p.m_blocks; ++bx) {
      const kernel::BlockCoord pc = kernel::tile_coord<kernel::TapReduceTiling<Patch>, BM, BN>(
          p, by * p.m_blocks + bx);
      const int64_t base = kernel::input_view_offset(p, pc);
      // One gather pair per copy role, as in the kernel.
      std::vector<kernel::HaloGather<Patch, kRowsA, kRowStep, BK, kElemBytes>> ga(kThreads);
      std::vector<kernel::TapColumnGather<Patch, kRowsB, kRowStep, BK, kElemBytes>> gb(kThreads);
      for (int tid = 0; tid < kThreads; ++tid) {
        ga[size_t(tid)].init(p, pc, tid / kChunks, tid % kChunks);
        gb[size_t(tid)].init(p, tid / kChunks, tid % kChunks);
      }
      std::fill(part.begin(), part.end(), 0.0);
      for (int kt = 0; kt < k_tiles; ++kt) {
        std::fill(a_set.begin(), a_set.end(), 0);
        std::fill(b_set.begin(), b_set.end(), 0);
        for (int tid = 0; tid < kThreads; ++tid) {
          const int chunk = tid % kChunks, row0 = tid / kChunks;
          auto& g = ga[size_t(tid)];
          for (int i = 0; i < kRowsA; ++i) {
            const int m = row0 + i * kRowStep;
            ASSERT_EQ(g.exists(i), g.valid(p, pc, m)) << "cached validity after advance";
            if (g.exists(i)) {
              ASSERT_EQ(g.offset(i), g.at(p, pc, m)) << "cached offset after advance";
              ASSERT_EQ(g.offset(i) % 16, 0u) << "16-byte chunks stay aligned";
              ASSERT_LE(g.offset(i) + 16, p.x_view_bytes) << "inside the frame's view";
              ++valid_a;
            } else {
              ++zero_a;
            }
            for (int e = 0; e < kChunkElems; ++e) {
              const size_t at = size_t(m) * BK + chunk * kChunkElems + e;
              a[at] = g.exists(i) ? x[size_t(base + g.offset(i) / kElemBytes + e)] : 0.0;
              ++a_set[at];
            }
          }
          auto& h = gb[size_t(tid)];
          for (int i = 0; i < kRowsB; ++i) {
            const int n = row0 + i * kRowStep;
            if (n >= BN) continue;  // kGuardB: surplus threads copy nothing
            if (h.valid(p, i)) {
              ASSERT_LE(h.at(p, i) + 16, uint32_t(info.bytes()));
            }
            for (int e = 0; e < kChunkElems; ++e) {
              const size_t at = size_t(n) * BK + chunk * kChunkElems + e;
              b[at] = h.valid(p, i) ? packed[size_t(h.at(p, i) / kElemBytes + e)] : 0.0;
              ++b_set[at];
            }
          }
          g.advance(p);
          h.advance(p);
        }
        for (int v : a_set) ASSERT_EQ(v, 1) << "every A element copied once per K tile";
        for (int v : b_set) ASSERT_EQ(v, 1) << "every B element copied once per K tile";
        for (int m = 0; m < BM; ++m)
          for (int n = 0; n < BN; ++n) {
            double s = 0;
            for (int k = 0; k < BK; ++k) s += a[size_t(m) * BK + k] * b[size_t(n) * BK + k];
            part[size_t(m) * BN + n] += s;
          }
      }
      // The epilogue's reduce.
      for (int r = 0; r < Patch::kOutRows; ++r)
        for (int c = 0; c < Patch::kOutCols; ++c)
          for (int co = 0; co < d.cout; ++co) {
            const int oh = pc.oh0 + r, ow = pc.ow0 + c;
            if (oh >= p.ho || ow >= p.wo) continue;
            double v = 0;
            for (int kh = 0; kh < 3; ++kh)
              for (int kw = 0; kw < 3; ++kw)
                v += part[size_t(Patch::halo_row(r, c, kh, kw)) * BN +
                          Patch::column(kh * 3 + kw, co, p.cout)];
            const size_t o = size_t((((pc.n * d.out_t() + pc.ot) * d.out_h() + oh) *
                                         d.out_w() + ow) * d.cout + co);
            got[o] = v;
            ++writes[o];
          }
    }
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(writes[i], 1) << "output element " << i << " written by exactly one block";
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::fabs(want[i])))
        << d.to_string() << " element " << i;
  }
  EXPECT_GT(valid_a, 0);
  EXPECT_GT(zero_a, 0) << "halo borders must produce padding";
}

// A 6 x 8 halo (4 x 6 outputs, BM = 48): many blocks, partial patches at the right and bottom.
using SmallPatch = kernel::HaloPatch<6, 8>;

TEST(TapReduce, ImageEveryBorder) {
  check_tap_reduce<SmallPatch, 32, 32, 48, 2>(ConvDesc::causal3x3x3(2, 1, 9, 13, 16, 3), 1);
  check_tap_reduce<SmallPatch, 32, 32, 48, 2>(ConvDesc::causal3x3x3(1, 1, 1, 1, 8, 3), 2);
  check_tap_reduce<SmallPatch, 32, 32, 48, 2>(ConvDesc::causal3x3x3(1, 1, 5, 7, 24, 1), 3);
  check_tap_reduce<SmallPatch, 32, 16, 48, 2>(ConvDesc::causal3x3x3(1, 1, 4, 11, 40, 2), 4);
}

TEST(TapReduce, VideoLooksBackOnly) {
  // T > 1: K = 3 time taps x Cin; chunks cross time taps inside a K tile when Cin < BK.
  check_tap_reduce<SmallPatch, 32, 32, 48, 2>(ConvDesc::causal3x3x3(2, 3, 5, 9, 16, 3), 5);
  check_tap_reduce<SmallPatch, 32, 32, 48, 2>(ConvDesc::causal3x3x3(1, 4, 7, 6, 8, 2), 6);
  check_tap_reduce<SmallPatch, 32, 32, 48, 2>(ConvDesc::causal3x3x3(1, 2, 3, 4, 96, 3), 7);
}

TEST(TapReduce, Fp8ChunksOfSixteen) {
  check_tap_reduce<SmallPatch, 32, 64, 48, 1>(ConvDesc::causal3x3x3(1, 1, 9, 10, 16, 3), 8);
  check_tap_reduce<SmallPatch, 32, 64, 48, 1>(ConvDesc::causal3x3x3(1, 3, 4, 5, 48, 3), 9);
}

TEST(TapReduce, StridedInput) {
  ConvDesc d = ConvDesc::causal3x3x3(2, 2, 5, 6, 16, 3);
  d.in_strides = {2 * 5 * (6 * 24 + 8) + 16, 5 * (6 * 24 + 8), 6 * 24 + 8, 24, 1};
  ASSERT_TRUE(d.validate().ok()) << d.validate().to_string();
  check_tap_reduce<SmallPatch, 32, 32, 48, 2>(d, 10);
}

TEST(TapReduce, ShippedPatchesAndRoles) {
  // The shipped halos with their copy roles: NVIDIA 16 x 16 with 4 warps of 32 (bf16 BK 32, fp8
  // BK 32), AMD 8 x 16 with 4 waves of 64 (bf16 BK 32, fp8 BK 64).
  using Nv = kernel::TapReducePatchNvidia;
  using Amd = kernel::TapReducePatchCdna;
  constexpr int BN = kernel::kTapReduceBN;
  check_tap_reduce<Nv, BN, 32, 128, 2>(ConvDesc::causal3x3x3(1, 1, 30, 17, 32, 3), 11);
  check_tap_reduce<Nv, BN, 32, 128, 1>(ConvDesc::causal3x3x3(1, 2, 15, 29, 48, 3), 12);
  check_tap_reduce<Amd, BN, 32, 256, 2>(ConvDesc::causal3x3x3(1, 2, 15, 29, 16, 3), 13);
  check_tap_reduce<Amd, BN, 64, 256, 1>(ConvDesc::causal3x3x3(1, 1, 16, 14, 96, 3), 14);
}

TEST(TapReduce, DispatchRule) {
  using kernel::use_tap_reduce;
  EXPECT_TRUE(use_tap_reduce(ConvDesc::causal3x3x3(1, 1, 1024, 1024, 96, 3)));  // dec_conv_out
  EXPECT_TRUE(use_tap_reduce(ConvDesc::causal3x3x3(1, 5, 64, 64, 96, 1)));
  EXPECT_FALSE(use_tap_reduce(ConvDesc::causal3x3x3(1, 1, 64, 64, 96, 4)));   // > 3 outputs
  EXPECT_FALSE(use_tap_reduce(ConvDesc::causal3x3x3(1, 1, 64, 64, 5, 3)));    // element-wise Cin
  EXPECT_FALSE(use_tap_reduce(ConvDesc::downsample(1, 1, 64, 64, 96, 3)));
  EXPECT_FALSE(use_tap_reduce(ConvDesc::upsample2x(1, 1, 64, 64, 96, 3)));
  ConvDesc fp8 = ConvDesc::causal3x3x3(1, 1, 64, 64, 24, 3);
  EXPECT_TRUE(use_tap_reduce(fp8));
  fp8.set_dtypes(DType::kFP8E4M3);
  EXPECT_FALSE(use_tap_reduce(fp8)) << "24 fp8 channels are not whole 16-byte chunks";
}

}  // namespace
}  // namespace vaeconv
