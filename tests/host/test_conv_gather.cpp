// The kernels' address math on the host: ConvGather / WeightGather / block_coord / make_params
// against the ConvDesc definition, for each conv kind, on small sizes that put every output
// pixel at some border, for every thread role and every K tile.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/kernel/conv_gather.hpp"

namespace vaeconv {
namespace {

using kernel::BlockCoord;
using kernel::ConvParams;

struct Expected {
  bool valid;
  int64_t offset;  // element offset into x (absolute)
};

// Straight from conv_desc.hpp's formula: the input element multiplying packed column k.
Expected expected(const ConvDesc& d, const PackedWeightsInfo& w, int64_t n, int64_t ot, int64_t oh,
                  int64_t ow, int64_t k) {
  if (k >= w.k) return {false, 0};
  const int64_t tap = k / d.cin, c = k % d.cin;
  const int64_t kt = w.kt_base + tap / 9, kh = (tap / 3) % 3, kw = tap % 3;
  const int64_t it = ot * d.stride_t + kt - d.pad.t_front;
  const int64_t ih_u = oh * d.stride_h + kh - d.pad.h_top;
  const int64_t iw_u = ow * d.stride_w + kw - d.pad.w_left;
  if (it < 0 || it >= d.t || ih_u < 0 || ih_u >= d.up_h() || iw_u < 0 || iw_u >= d.up_w())
    return {false, 0};
  const int64_t ih = ih_u / d.upsample, iw = iw_u / d.upsample;
  const Strides5& s = d.in_strides;
  return {true, n * s.n + it * s.t + ih * s.h + iw * s.w + c};
}

// The copy roles of a block tile: kThreads threads, each one 16-byte chunk column of kRows rows.
template <int BM, int BK, int kThreads, int kElemBytes>
struct Roles {
  static constexpr int kChunkElems = 16 / kElemBytes;
  static constexpr int kChunks = BK / kChunkElems, kRowStep = kThreads / kChunks;
  static constexpr int kRows = BM / kRowStep;
};

// One position of the walk below: block (bx, by), thread tid's copy role, K tile kt.
struct Visit {
  int bx, by, tid, row0, chunk, kt;
  BlockCoord b;
  int64_t base;  // element offset of the block's input view
};

// Walks d as the kernel does — every block, every thread's ConvGather, every K tile — and calls
// check(p, w, visit, gather) at each K tile before the gather advances; stops at the first fatal
// failure. kFarSteps: the element-wise kernel's gather (ConvKernel sets it without the vector
// gather).
// kLaneCursor: the vector gather with the per-thread K cursor (LaneConvGather: what an atom with
// kLaneKCursor, the wgmma one, gets) instead of the block-uniform one. Both read the rows and
// check at()/valid() through GatherRows' math form at their own cursor.
// kMaskRows: the tile cursor's row test for loads that read folded offsets only (AMD: a mask), or
// (false) the flag and a select (cp.async).
template <class Geo, int BM, int BN, int BK, int kThreads, int kElemBytes, bool kFarSteps = false,
          bool kLaneCursor = false, bool kMaskRows = true, class Check>
void walk_gathers(const ConvDesc& d, Check&& check) {
  using R = Roles<BM, BK, kThreads, kElemBytes>;
  PackedWeightsInfo w;  // the direct form's packing (these geometries: 3 x 3 taps)
  ASSERT_TRUE(detail::packed_info_as(d, /*phases=*/false, &w).ok());
  ConvArgs a;
  a.weights.info = w;
  const ConvParams p = make_params(d, a, BM, BN);
  ASSERT_EQ(p.frame_pixels, d.out_h() * d.out_w());
  const int k_tiles = (p.k + BK - 1) / BK;
  for (int by = 0; by < d.n * d.out_t(); ++by)
    for (int bx = 0; bx < p.m_blocks * p.n_tiles; ++bx) {
      const BlockCoord b = kernel::block_coord(p, bx, by, BM, BN);
      const int64_t base = kernel::input_view_offset(p, b);
      for (int tid = 0; tid < kThreads; ++tid) {
        const int chunk = tid % R::kChunks, row0 = tid / R::kChunks;
        kernel::ConvGather<Geo, R::kRows, R::kRowStep, BK, kElemBytes, kFarSteps, kLaneCursor,
                           kMaskRows>
            g;
        g.init(p, b, row0, chunk);
        for (int kt = 0; kt < k_tiles; ++kt) {
          check(p, w, Visit{bx, by, tid, row0, chunk, kt, b, base}, g);
          if (::testing::Test::HasFatalFailure()) return;
          g.advance(p);
        }
      }
    }
}

template <class Geo, int BM, int BN, int BK, int kThreads, int kElemBytes, bool kLaneCursor,
          bool kMaskRows = true>
void check_gather_cursor(const ConvDesc& d) {
  using R = Roles<BM, BK, kThreads, kElemBytes>;
  int64_t checked = 0, valid_seen = 0;
  walk_gathers<Geo, BM, BN, BK, kThreads, kElemBytes, false, kLaneCursor, kMaskRows>(
      d, [&](const ConvParams& p, const PackedWeightsInfo& w, const Visit& v, const auto& g) {
        for (int i = 0; i < R::kRows; ++i) {
          const int m = v.b.m0 + v.row0 + i * R::kRowStep;
          const int64_t k = int64_t(v.kt) * BK + v.chunk * R::kChunkElems;
          Expected e{false, 0};
          if (m < p.frame_pixels) e = expected(d, w, v.b.n, v.b.ot, m / p.wo, m % p.wo, k);
          ASSERT_EQ(g.exists(i), g.valid(p, i)) << "cached validity after advance";
          if (e.valid) {
            ASSERT_EQ(g.offset(i), g.at(p, i)) << "cached offset after advance";
          } else if constexpr (kernel::OffsetFoldsRange<std::decay_t<decltype(g)>>::value) {
            // the block-uniform cursor folds a missing row into an out-of-range offset (AMD's
            // buffer load reads zeros there without the flag)
            ASSERT_GE(g.offset(i), kernel::kFoldedOutOfRange)
                << d.to_string() << " block " << v.bx << "," << v.by << " tid " << v.tid
                << " row " << i << " k " << k;
          }
          ASSERT_EQ(g.valid(p, i), e.valid)
              << d.to_string() << " block " << v.bx << "," << v.by << " tid " << v.tid << " row "
              << i << " k " << k;
          if (e.valid) {
            ASSERT_EQ(g.at(p, i) % 16, 0u) << "16-byte chunks stay aligned";
            ASSERT_EQ(v.base + g.at(p, i) / kElemBytes, e.offset)
                << d.to_string() << " m " << m << " k " << k;
            ASSERT_LT(g.at(p, i), p.x_view_bytes) << "offset inside the frame's view";
            ++valid_seen;
          }
          ++checked;
        }
      });
  EXPECT_GT(valid_seen, 0);
  EXPECT_GT(checked, valid_seen) << "borders must produce padding taps";
}

// Both K cursors of the vector gather: the block-uniform one, in both row tests (AMD's mask,
// cp.async's flag and select), and the per-thread one (wgmma).
template <class Geo, int BM, int BN, int BK, int kThreads, int kElemBytes = 2>
void check_gather(ConvDesc d) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  check_gather_cursor<Geo, BM, BN, BK, kThreads, kElemBytes, false>(d);
  check_gather_cursor<Geo, BM, BN, BK, kThreads, kElemBytes, false, /*kMaskRows=*/false>(d);
  check_gather_cursor<Geo, BM, BN, BK, kThreads, kElemBytes, true>(d);
}

TEST(ConvGather, CausalT1EveryBorder) {
  check_gather<kernel::CausalGeometry, 32, 32, 32, 64>(ConvDesc::causal3x3x3(2, 1, 5, 7, 16, 8));
  check_gather<kernel::CausalGeometry, 16, 32, 32, 32>(ConvDesc::causal3x3x3(1, 1, 1, 1, 8, 8));
  check_gather<kernel::CausalGeometry, 32, 16, 16, 64>(ConvDesc::causal3x3x3(1, 1, 3, 11, 24, 8));
}

TEST(ConvGather, ManyTilesPerTap) {
  // Cin = 96 and 192 with BK = 32: the cached offsets step within a tap 2 and 5 times.
  check_gather<kernel::CausalGeometry, 32, 32, 32, 64>(ConvDesc::causal3x3x3(1, 1, 4, 5, 96, 8));
  check_gather<kernel::UpsampleGeometry, 32, 32, 32, 64>(ConvDesc::upsample2x(1, 1, 2, 3, 192, 8));
  check_gather<kernel::DownsampleGeometry, 32, 32, 64, 64, 1>(ConvDesc::downsample(1, 1, 5, 4, 384, 8));
  check_gather<kernel::CausalGeometry, 32, 32, 32, 64>(ConvDesc::causal3x3x3(1, 3, 3, 3, 64, 8));
}

TEST(ConvGather, CausalVideoLooksBackOnly) {
  check_gather<kernel::CausalGeometry, 32, 32, 32, 64>(ConvDesc::causal3x3x3(2, 4, 3, 5, 8, 8));
  check_gather<kernel::CausalGeometry, 16, 32, 64, 64>(ConvDesc::causal3x3x3(1, 3, 4, 4, 16, 16));
}

TEST(ConvGather, DownsamplePadsBottomRightOnly) {
  check_gather<kernel::DownsampleGeometry, 32, 32, 32, 64>(ConvDesc::downsample(2, 1, 7, 8, 16, 8));
  check_gather<kernel::DownsampleGeometry, 16, 32, 32, 32>(ConvDesc::downsample(1, 2, 2, 3, 8, 8));
}

TEST(ConvGather, UpsampleReadsTheSource) {
  check_gather<kernel::UpsampleGeometry, 32, 32, 32, 64>(ConvDesc::upsample2x(2, 1, 3, 4, 16, 8));
  check_gather<kernel::UpsampleGeometry, 16, 32, 16, 32>(ConvDesc::upsample2x(1, 1, 1, 1, 8, 8));
}

TEST(ConvGather, Fp8ChunksOfSixteen) {
  check_gather<kernel::CausalGeometry, 32, 32, 64, 64, 1>(ConvDesc::causal3x3x3(2, 1, 5, 7, 32, 8));
  check_gather<kernel::CausalGeometry, 32, 32, 64, 64, 1>(ConvDesc::causal3x3x3(1, 3, 3, 4, 16, 8));
  check_gather<kernel::DownsampleGeometry, 32, 32, 64, 64, 1>(ConvDesc::downsample(1, 1, 7, 6, 48, 8));
  check_gather<kernel::UpsampleGeometry, 16, 32, 32, 32, 1>(ConvDesc::upsample2x(1, 1, 3, 2, 16, 8));
}

// The vector gather's K tiles against Cin, on every geometry: tiles inside one tap (Cin % BK ==
// 0, the wide VAE layers: Cin 96 / 192 / 384 over BK 16 / 32 / 64) and tiles that reach into
// one or more further taps (Cin 96 with BK 64, Cin 48, Cin 16 with BK 32 / 64, Cin 8 with BK 64).
TEST(ConvGather, WholeAndSplitKTiles) {
  using kernel::CausalGeometry;
  using kernel::DownsampleGeometry;
  using kernel::UpsampleGeometry;
  check_gather<CausalGeometry, 32, 32, 16, 32>(ConvDesc::causal3x3x3(1, 1, 3, 5, 96, 8));
  check_gather<CausalGeometry, 32, 32, 32, 64>(ConvDesc::causal3x3x3(1, 2, 3, 4, 192, 8));
  check_gather<CausalGeometry, 32, 32, 64, 64, 1>(ConvDesc::causal3x3x3(1, 1, 3, 3, 384, 8));
  check_gather<CausalGeometry, 32, 32, 64, 64, 1>(ConvDesc::causal3x3x3(1, 2, 4, 3, 96, 8));
  check_gather<CausalGeometry, 32, 32, 64, 64>(ConvDesc::causal3x3x3(1, 1, 4, 3, 96, 8));
  check_gather<CausalGeometry, 32, 32, 32, 64>(ConvDesc::causal3x3x3(1, 2, 3, 4, 48, 8));
  check_gather<CausalGeometry, 32, 32, 64, 64>(ConvDesc::causal3x3x3(1, 1, 3, 4, 8, 8));
  check_gather<CausalGeometry, 32, 32, 64, 64, 1>(ConvDesc::causal3x3x3(1, 2, 3, 3, 16, 8));
  check_gather<DownsampleGeometry, 32, 32, 32, 64>(ConvDesc::downsample(1, 1, 6, 7, 96, 8));
  check_gather<DownsampleGeometry, 32, 32, 64, 64, 1>(ConvDesc::downsample(1, 1, 5, 6, 96, 8));
  check_gather<DownsampleGeometry, 32, 32, 32, 64>(ConvDesc::downsample(1, 1, 5, 4, 48, 8));
  check_gather<UpsampleGeometry, 32, 32, 32, 64>(ConvDesc::upsample2x(1, 1, 3, 2, 96, 8));
  check_gather<UpsampleGeometry, 32, 32, 64, 64, 1>(ConvDesc::upsample2x(1, 1, 2, 3, 96, 8));
  check_gather<UpsampleGeometry, 32, 32, 64, 64>(ConvDesc::upsample2x(1, 1, 2, 2, 24, 8));
}

// What makes the vector gather's carry uniform: every thread of a block holds the same tile
// cursor, the K tile's first column (k0 = kt * BK, its tap and channel by the definition), and
// its own chunk only as the fixed channel offset lane_c.
template <class Geo, int BM, int BK, int kThreads, int kElemBytes = 2>
void check_tile_cursor(ConvDesc d) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  using R = Roles<BM, BK, kThreads, kElemBytes>;
  int64_t checked = 0;
  walk_gathers<Geo, BM, 32, BK, kThreads, kElemBytes>(
      d, [&](const ConvParams& p, const PackedWeightsInfo&, const Visit& v, const auto& g) {
        const int k0 = v.kt * BK;
        const kernel::TapCursor want = kernel::TapCursor::of(k0, p.cin);
        ASSERT_EQ(g.k0, k0);
        ASSERT_EQ(g.lane_c, v.chunk * R::kChunkElems);
        ASSERT_TRUE(g.tile.c == want.c && g.tile.kw() == want.kw && g.tile.kh() == want.kh &&
                    g.tile.kt == want.kt && g.tile.s == want.kh * 3 + want.kw)
            << d.to_string() << " tid " << v.tid << " K tile " << v.kt << ": tile cursor c "
            << g.tile.c << " s " << g.tile.s << " kt " << g.tile.kt;
        ++checked;
      });
  EXPECT_GT(checked, 0);
}

TEST(ConvGather, TileCursorIsBlockUniform) {
  check_tile_cursor<kernel::CausalGeometry, 32, 32, 64>(ConvDesc::causal3x3x3(1, 2, 3, 3, 96, 8));
  check_tile_cursor<kernel::CausalGeometry, 32, 64, 64, 1>(ConvDesc::causal3x3x3(1, 2, 3, 3, 96, 8));
  check_tile_cursor<kernel::CausalGeometry, 32, 32, 64>(ConvDesc::causal3x3x3(1, 2, 3, 3, 16, 8));
  check_tile_cursor<kernel::DownsampleGeometry, 32, 64, 64>(ConvDesc::downsample(1, 1, 4, 4, 8, 8));
}

// Both K cursors read one row state (kernel::GatherRows): for every block and thread role they
// decode the same rows and frame constants, and the tile cursor's row bases sit lane_c elements
// past the per-thread cursor's (whose tap delta carries the channel instead).
template <class Geo, int BM, int BK, int kThreads, int kElemBytes = 2>
void check_shared_rows(ConvDesc d) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  using R = Roles<BM, BK, kThreads, kElemBytes>;
  int64_t checked = 0, rows_in_frame = 0;
  walk_gathers<Geo, BM, 32, BK, kThreads, kElemBytes, false, /*kLaneCursor=*/true>(
      d, [&](const ConvParams& p, const PackedWeightsInfo&, const Visit& v, const auto& lane) {
        if (v.kt != 0) return;  // the row state is decoded once per block
        kernel::TileConvGather<Geo, R::kRows, R::kRowStep, BK, kElemBytes> tile;
        tile.init(p, v.b, v.row0, v.chunk);
        ASSERT_EQ(tile.it_rel0, lane.it_rel0);
        ASSERT_EQ(tile.h_up, lane.h_up);
        ASSERT_EQ(tile.w_up, lane.w_up);
        ASSERT_EQ(tile.t_rel_end, lane.t_rel_end);
        for (int i = 0; i < R::kRows; ++i) {
          const std::string where = d.to_string() + " block " + std::to_string(v.bx) + "," +
                                    std::to_string(v.by) + " tid " + std::to_string(v.tid) +
                                    " row " + std::to_string(i);
          ASSERT_EQ(tile.row_ok[i], lane.row_ok[i]) << where;
          ASSERT_EQ(tile.ih0[i], lane.ih0[i]) << where;
          ASSERT_EQ(tile.iw0[i], lane.iw0[i]) << where;
          ASSERT_EQ(tile.taps_in_frame[i], lane.taps_in_frame[i]) << where;
          ASSERT_EQ(tile.taps_in_frame[i], lane.frame_taps(i)) << where;
          ASSERT_EQ(tile.row_base_[i], lane.row_base_[i] + uint32_t(tile.lane_c)) << where;
          rows_in_frame += lane.row_ok[i];
          ++checked;
        }
      });
  EXPECT_GT(rows_in_frame, 0);
  EXPECT_GT(checked, rows_in_frame) << "some rows past the frame";
}

TEST(ConvGather, BothCursorsShareTheRows) {
  check_shared_rows<kernel::CausalGeometry, 32, 32, 64>(ConvDesc::causal3x3x3(1, 2, 3, 5, 96, 8));
  check_shared_rows<kernel::DownsampleGeometry, 32, 64, 64, 1>(ConvDesc::downsample(1, 1, 5, 7, 48, 8));
  check_shared_rows<kernel::UpsampleGeometry, 16, 32, 32>(ConvDesc::upsample2x(1, 1, 3, 2, 16, 8));
}

TEST(ConvGather, StridedInput) {
  ConvDesc d = ConvDesc::causal3x3x3(2, 2, 4, 5, 16, 8);
  d.in_strides = {4 * 2 * 4 * 5 * 32, 2 * 4 * 5 * 32, 5 * 32 + 8, 32, 1};  // padded pixels, rows, frames
  ASSERT_TRUE(d.validate().ok()) << d.validate().to_string();
  check_gather<kernel::CausalGeometry, 32, 32, 32, 64>(d);
}

// The element-wise gather (Cin not a multiple of the chunk): every element of every row, for every
// thread role and K tile, against the formula.
template <class Geo, int BM, int BK, int kThreads, int kElemBytes = 2>
void check_element_gather(ConvDesc d) {
  if (kElemBytes == 1) d.set_dtypes(DType::kFP8E4M3);
  using R = Roles<BM, BK, kThreads, kElemBytes>;
  ASSERT_NE(d.cin % R::kChunkElems, 0) << "a case for the element-wise gather";
  int64_t valid_seen = 0, checked = 0;
  walk_gathers<Geo, BM, 32, BK, kThreads, kElemBytes, /*kFarSteps=*/true>(
      d, [&](const ConvParams& p, const PackedWeightsInfo& w, const Visit& v, const auto& g) {
        kernel::ChunkTaps<Geo, R::kChunkElems> taps;
        taps.locate(p, g);
        for (int i = 0; i < R::kRows; ++i)
          for (int e = 0; e < R::kChunkElems; ++e) {
            const int m = v.b.m0 + v.row0 + i * R::kRowStep;
            const int64_t k = int64_t(v.kt) * BK + v.chunk * R::kChunkElems + e;
            Expected x{false, 0};
            if (m < p.frame_pixels) x = expected(d, w, v.b.n, v.b.ot, m / p.wo, m % p.wo, k);
            ASSERT_EQ(taps.valid(taps.row_mask(g, i), e), x.valid)
                << d.to_string() << " m " << m << " k " << k;
            if (x.valid) {
              ASSERT_EQ(v.base + taps.at(p, g, i, e), x.offset)
                  << d.to_string() << " m " << m << " k " << k;
              ASSERT_LT(taps.at(p, g, i, e) * uint32_t(kElemBytes), p.x_view_bytes);
              ++valid_seen;
            }
            ++checked;
          }
      });
  EXPECT_GT(valid_seen, 0);
  EXPECT_GT(checked, valid_seen) << "borders must produce padding taps";
}

TEST(ChunkTaps, ElementWiseEveryBorder) {
  check_element_gather<kernel::CausalGeometry, 32, 32, 64>(ConvDesc::causal3x3x3(2, 1, 5, 7, 3, 8));
  check_element_gather<kernel::CausalGeometry, 32, 32, 64>(ConvDesc::causal3x3x3(1, 3, 4, 3, 3, 8));
  check_element_gather<kernel::CausalGeometry, 16, 16, 32>(ConvDesc::causal3x3x3(1, 2, 3, 5, 5, 8));
  check_element_gather<kernel::DownsampleGeometry, 32, 32, 64>(ConvDesc::downsample(1, 1, 7, 6, 3, 8));
  check_element_gather<kernel::UpsampleGeometry, 32, 32, 64>(ConvDesc::upsample2x(2, 1, 3, 4, 5, 8));
  check_element_gather<kernel::CausalGeometry, 32, 64, 64, 1>(ConvDesc::causal3x3x3(1, 1, 5, 6, 3, 8));
  check_element_gather<kernel::UpsampleGeometry, 32, 64, 64, 1>(ConvDesc::upsample2x(1, 2, 3, 2, 24, 8));
}

// A sliced-K block's groups start their cursors at their share of K (kernel/sliced_k.hpp):
// skip(n) must reach the position of n advance() calls, in every cached form, and the cursor
// must walk on from there as one that advanced. Every split point of every block and thread.
template <class Geo, int BM, int BN, int BK, int kThreads, int kElemBytes, bool kMaskRows>
void check_skip(const ConvDesc& d) {
  using R = Roles<BM, BK, kThreads, kElemBytes>;
  PackedWeightsInfo w;
  ASSERT_TRUE(detail::packed_info_as(d, /*phases=*/false, &w).ok());
  ConvArgs a;
  a.weights.info = w;
  const ConvParams p = make_params(d, a, BM, BN);
  const int k_tiles = (p.k + BK - 1) / BK;
  using G = kernel::TileConvGather<Geo, R::kRows, R::kRowStep, BK, kElemBytes, kernel::XFrames,
                                   kMaskRows>;
  int64_t compared = 0;
  for (int by = 0; by < d.n * d.out_t(); ++by)
    for (int bx = 0; bx < p.m_blocks * p.n_tiles; ++bx) {
      const BlockCoord b = kernel::block_coord(p, bx, by, BM, BN);
      for (int tid = 0; tid < kThreads; ++tid) {
        const int chunk = tid % R::kChunks, row0 = tid / R::kChunks;
        G stepped;
        stepped.init(p, b, row0, chunk);
        kernel::FoldedWeightGather<2, R::kRowStep, BK, kElemBytes> wb_stepped;
        wb_stepped.init(p, b, row0, chunk, BN);
        for (int n = 0; n < k_tiles; ++n) {
          G skipped;
          skipped.init(p, b, row0, chunk);
          skipped.skip(p, n);
          kernel::FoldedWeightGather<2, R::kRowStep, BK, kElemBytes> wb;
          wb.init(p, b, row0, chunk, BN);
          wb.skip(n);
          for (int step = 0; step < 2 && n + step < k_tiles; ++step) {
            G ahead = stepped;
            for (int s = 0; s < step; ++s) ahead.advance(p);
            if (step > 0) skipped.advance(p);
            for (int i = 0; i < R::kRows; ++i) {
              ASSERT_EQ(skipped.exists(i), ahead.exists(i))
                  << d.to_string() << " skip " << n << " +" << step << " tid " << tid;
              // a missing row's offset is folded: at least kFoldedOutOfRange (the same-tap steps
              // move it on, a refresh sets it), a present row's the same bytes
              if (ahead.exists(i))
                ASSERT_EQ(skipped.offset(i), ahead.offset(i))
                    << d.to_string() << " skip " << n << " +" << step << " tid " << tid;
              else
                ASSERT_GE(skipped.offset(i), kernel::kFoldedOutOfRange)
                    << d.to_string() << " skip " << n << " +" << step << " tid " << tid;
              ASSERT_EQ(skipped.k(), ahead.k());
              ++compared;
            }
          }
          for (int i = 0; i < 2; ++i)
            ASSERT_EQ(wb.offset(i), wb_stepped.offset(i)) << "B skip " << n;
          stepped.advance(p);
          wb_stepped.advance();
        }
      }
    }
  EXPECT_GT(compared, 0);
}

TEST(ConvGather, SkipReachesTheAdvancedPosition) {
  using kernel::CausalGeometry;
  using kernel::DownsampleGeometry;
  using kernel::UpsampleGeometry;
  // whole tiles per tap (Cin % BK == 0), tiles that straddle taps, borders, video frames
  check_skip<CausalGeometry, 32, 32, 32, 64, 2, true>(ConvDesc::causal3x3x3(1, 1, 3, 5, 96, 8));
  check_skip<CausalGeometry, 32, 32, 32, 64, 2, false>(ConvDesc::causal3x3x3(1, 1, 3, 5, 96, 8));
  check_skip<CausalGeometry, 32, 32, 64, 64, 2, true>(ConvDesc::causal3x3x3(1, 2, 3, 4, 48, 8));
  check_skip<CausalGeometry, 32, 32, 64, 64, 1, true>(ConvDesc::causal3x3x3(1, 1, 4, 3, 384, 8));
  check_skip<DownsampleGeometry, 32, 32, 32, 64, 2, true>(ConvDesc::downsample(1, 1, 6, 7, 96, 8));
  check_skip<UpsampleGeometry, 32, 32, 64, 64, 2, false>(ConvDesc::upsample2x(1, 1, 2, 2, 24, 8));
}

TEST(WeightGather, RowsAndTail) {
  const ConvDesc d = ConvDesc::causal3x3x3(1, 1, 4, 4, 16, 40);
  PackedWeightsInfo w;
  ASSERT_TRUE(packed_info_for(d, &w).ok());
  ConvArgs a;
  a.weights.info = w;
  const ConvParams p = make_params(d, a, 32, 32);
  ASSERT_EQ(p.n_tiles, 2);
  const BlockCoord b = kernel::block_coord(p, 1, 0, 32, 32);  // second Cout tile
  kernel::WeightGather<2, 16, 32, 2> g;
  g.init(b, 3, 1);
  EXPECT_TRUE(g.valid(p, 0));   // n = 32 + 3
  EXPECT_FALSE(g.valid(p, 1));  // n = 32 + 19 >= 40
  EXPECT_EQ(g.at(p, 0), uint32_t((35 * w.k_pad + 8) * 2));
  g.advance();
  EXPECT_EQ(g.at(p, 0), uint32_t((35 * w.k_pad + 40) * 2));
  // The implicit GEMM's form keeps the offset, stepped per K tile, and folds a row past Cout or
  // past the block's rows into an out-of-range offset (every step of K keeps it there).
  for (int rows : {32, 19, 3}) {
    kernel::FoldedWeightGather<2, 16, 32, 2> f;
    f.init(p, b, 3, 1, rows);
    for (int kt = 0; kt < w.k_pad / 32; ++kt) {
      if (rows > 3) EXPECT_EQ(f.offset(0), f.at(p, 0)) << "kt " << kt;
      else EXPECT_GE(f.offset(0), kernel::kFoldedOutOfRange) << "row 3 past 3 rows, kt " << kt;
      EXPECT_GE(f.offset(1), kernel::kFoldedOutOfRange) << "n 51 >= Cout 40, kt " << kt;
      f.advance();
    }
  }
}

// The tap cursor both gathers walk K with: of(k) and stepping one element at a time with carry()
// or carry_any() agree on every K index, for channel counts below, at and above a chunk.
TEST(TapCursor, OfAgreesWithStepping) {
  for (int cin : {3, 5, 8, 16, 96}) {
    kernel::TapCursor step, one;  // one: the element-wise gather's carry_any()
    for (int k = 0; k < 27 * cin; ++k) {
      const kernel::TapCursor at = kernel::TapCursor::of(k, cin);
      ASSERT_TRUE(one.c == at.c && one.kw == at.kw && one.kh == at.kh && one.kt == at.kt)
          << "carry_any: cin " << cin << " k " << k;
      ASSERT_EQ(at.c, step.c) << "cin " << cin << " k " << k;
      ASSERT_EQ(at.kw, step.kw) << "cin " << cin << " k " << k;
      ASSERT_EQ(at.kh, step.kh) << "cin " << cin << " k " << k;
      ASSERT_EQ(at.kt, step.kt) << "cin " << cin << " k " << k;
      ASSERT_EQ(((at.kt * 3 + at.kh) * 3 + at.kw) * cin + at.c, k);
      ++step.c;
      step.carry(cin);
      ++one.c;
      one.carry_any(cin);
    }
    EXPECT_EQ(step.kt, 3);  // 27 taps later: the first element past the causal kernel
  }
}

// Steps of many elements at once (the element-wise gather advances BK = 32 or 64 over Cin = 3: a
// carry across ten or more taps, which carry_any() takes with one division): the cursor still
// agrees with of() after every step, for the whole grid and for each upsample phase's window.
template <int kWindow>
void check_long_steps(int kh0, int kw0) {
  using Cursor = kernel::TapWindowCursor<kWindow>;
  for (int cin : {1, 3, 5, 16})
    for (int step : {1, 2, 7, 32, 64, 100}) {
      Cursor cur = Cursor::of(0, cin, kh0, kw0);
      for (int k = step; k < 3 * kWindow * kWindow * cin + step; k += step) {
        cur.c += step;
        cur.carry_any(cin);
        const Cursor at = Cursor::of(k, cin, kh0, kw0);
        const std::string where = "window " + std::to_string(kWindow) + " origin " +
                                  std::to_string(kh0) + "," + std::to_string(kw0) + " cin " +
                                  std::to_string(cin) + " step " + std::to_string(step) +
                                  " k " + std::to_string(k);
        ASSERT_EQ(cur.c, at.c) << where;
        ASSERT_EQ(cur.kw, at.kw) << where;
        ASSERT_EQ(cur.kh, at.kh) << where;
        ASSERT_EQ(cur.kt, at.kt) << where;
      }
    }
}

TEST(TapCursor, LongStepsAgreeWithOf) {
  check_long_steps<3>(0, 0);
  check_long_steps<2>(0, 0);
  check_long_steps<2>(0, 1);
  check_long_steps<2>(1, 0);
  check_long_steps<2>(1, 1);
}

// The vector gather's tile cursor steps through the same taps, in the same K order, as the
// per-thread cursor: the whole grid and each upsample phase's 2 x 2 window, three time taps.
template <int kWindow>
void check_tile_tap(int kh0, int kw0) {
  auto t = kernel::TileTap<kWindow>::first(kh0, kw0);
  for (int tap = 0; tap < 3 * kWindow * kWindow; ++tap) {
    const auto want = kernel::TapWindowCursor<kWindow>::of(tap, 1, kh0, kw0);
    ASSERT_TRUE(t.kh() == want.kh && t.kw() == want.kw && t.kt == want.kt &&
                t.s == want.kh * 3 + want.kw)
        << "window " << kWindow << " origin " << kh0 << "," << kw0 << " tap " << tap << ": s "
        << t.s << " kt " << t.kt;
    t.next_tap();
  }
  EXPECT_EQ(t.kt, 3);
  EXPECT_EQ(t.s, kh0 * 3 + kw0);
}

TEST(TileTap, StepsLikeTheTapCursor) {
  check_tile_tap<3>(0, 0);
  check_tile_tap<2>(0, 0);
  check_tile_tap<2>(0, 1);
  check_tile_tap<2>(1, 0);
  check_tile_tap<2>(1, 1);
}

}  // namespace
}  // namespace vaeconv
