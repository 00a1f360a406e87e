// test_tail_split.cpp — the tail rule (kernel/tail_split.hpp), host arithmetic: where a grid's
// short last round moves to a smaller tile in a second launch, and that the two launches' blocks
// (kernel/block_tiling.hpp's tile_coord from m_begin) cover every pixel of every frame once.
// Which plans the sm_90a tables give (which_kernel): tests/gpu/test_tail_split_gpu.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "vaeconv/kernel/block_tiling.hpp"
#include "vaeconv/kernel/tail_split.hpp"

namespace vaeconv::kernel {
namespace {

constexpr TailRuleTile kHead{128, 192, 1};  // sm_90a's bf16 192-wide tile
constexpr TailRuleTile kTail{128, 96, 2};   // its tail tile, the wide one
constexpr int kUnits = 132;

// 384 -> 384 at 166 x 166: 432 blocks, three rounds of 132 and 36 left; the head keeps 198
// pixel blocks (396 = three whole rounds), the tail is 2212 pixels = 18 x 4 blocks of 128 x 96,
// one per SM on 72 SMs.
TEST(TailSplitRule, Bottleneck166) {
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 166 * 166, 384, kHead, kTail), 198 * 128);
  // Two frames: 864 blocks, 6 rounds and 72 left; the head would keep 198 blocks a frame, and the
  // tail's 2 x 72 blocks put two on some SMs, a head block's MACs: no split.
  EXPECT_EQ(tail_split_pixels(kUnits, 2, 166 * 166, 384, kHead, kTail), 0);
  // 384 -> 384 at 160 x 166 (26560 pixels): 208 x 2 = 416 blocks, 3 rounds and 20 left; the
  // head keeps 198 blocks, the tail 1216 pixels = 10 x 4 blocks.
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 160 * 166, 384, kHead, kTail), 198 * 128);
  // One pixel block past a round (134 blocks): the tail is its 5 pixels, 4 blocks of 128 x 96.
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 66 * 128 + 5, 384, kHead, kTail), 66 * 128);
}

// No split where the grid is whole rounds, one round or less, or where the tail would need more
// than one tail block per unit's resident slots or as many MACs per unit as a head block.
TEST(TailSplitRule, NoSplit) {
  // 384 -> 384 at 256²: 1024 blocks, 7 rounds and 100 left: the tail's 200 blocks of 128 x 96
  // take two per SM on some SMs, as many MACs as a head block: no gain.
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 256 * 256, 384, kHead, kTail), 0);
  // 384 -> 384 at 128²: 256 blocks, one round and 124 left (94 %).
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 128 * 128, 384, kHead, kTail), 0);
  // 192 -> 192 at 512²: 2048 blocks of one Cout tile, 15 rounds and 68 left: 136 tail blocks.
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 512 * 512, 192, kHead, kTail), 0);
  // Whole rounds: 132 x 2 blocks (2 Cout tiles, 132 pixel blocks of 128).
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 132 * 128, 384, kHead, kTail), 0);
  // One round or less.
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 64 * 128, 384, kHead, kTail), 0);
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 65 * 128 + 5, 384, kHead, kTail), 0);  // 132 blocks
  // A tail tile as big as the head's gains nothing.
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 166 * 166, 384, kHead, kHead), 0);
  // A 64 x 96 tail tile with three resident (the shape of e4m3's wide tile): 192 -> 192 at 512²
  // leaves 68 blocks, whose 272 tail blocks put three on some SMs, three quarters of a head
  // block: no split; the 166² bottleneck's 140 put at most two, half of one: a split.
  constexpr TailRuleTile kTailFp8{64, 96, 3};
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 512 * 512, 192, kHead, kTailFp8), 0);
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 166 * 166, 384, kHead, kTailFp8), 198 * 128);
  // Degenerate inputs.
  EXPECT_EQ(tail_split_pixels(0, 1, 166 * 166, 384, kHead, kTail), 0);
  EXPECT_EQ(tail_split_pixels(kUnits, 0, 166 * 166, 384, kHead, kTail), 0);
  EXPECT_EQ(tail_split_pixels(kUnits, 1, 0, 384, kHead, kTail), 0);
}

// Over a range of frame sizes, frame counts and Couts: wherever the rule splits, the split is a
// multiple of the head's BM inside the frame, the head's grid is whole rounds at most and one
// round more than before is not needed, and the tail fits one round of the tail's slots.
TEST(TailSplitRule, SplitsAreWholeRoundsAndOneTailRound) {
  int splits = 0;
  for (int64_t frames : {1, 2, 3, 5}) {
    for (int cout : {192, 384, 576}) {
      for (int side = 40; side <= 400; side += 7) {
        const int pixels = side * (side + 3);
        const int split = tail_split_pixels(kUnits, frames, pixels, cout, kHead, kTail);
        if (split == 0) continue;
        ++splits;
        const int64_t head_n = (cout + 191) / 192, tail_n = (cout + 95) / 96;
        ASSERT_EQ(split % kHead.bm, 0) << pixels;
        ASSERT_GT(split, 0);
        ASSERT_LT(split, pixels);
        const int64_t all = frames * ((pixels + 127) / 128) * head_n;
        const int64_t head = frames * (split / 128) * head_n;
        const int64_t rounds = (all + kUnits - 1) / kUnits;
        EXPECT_LE(head, (rounds - 1) * kUnits) << pixels << " " << frames << " " << cout;
        const int64_t tail = frames * ((pixels - split + 127) / 128) * tail_n;
        EXPECT_LE(tail, int64_t(kUnits) * kTail.resident) << pixels;
        const int64_t per_unit = (tail + kUnits - 1) / kUnits;
        EXPECT_LE(2 * per_unit * 128 * 96, 128 * 192) << pixels;
      }
    }
  }
  EXPECT_GT(splits, 10) << "the sweep above must reach the rule's split";
}

// The two launches' blocks (tile_coord from m_begin over each launch's m_blocks) cover every pixel
// of every frame once, for both BMs, and no block starts past the frame.
TEST(TailSplitRule, LaunchesCoverEveryPixelOnce) {
  const int frames = 3, pixels = 97 * 101, cout = 384;
  const int split = tail_split_pixels(kUnits, frames, pixels, cout, kHead, kTail);
  ASSERT_GT(split, 0);
  std::vector<int> seen(size_t(frames) * pixels * cout, 0);
  auto cover = [&](int bm, int bn, int m_begin, int m_end) {
    ConvParams p;
    p.to = 1;  // frames = n
    p.frame_pixels = pixels;
    p.m_begin = m_begin;
    p.m_blocks = (m_end - m_begin + bm - 1) / bm;
    p.n_tiles = (cout + bn - 1) / bn;
    const int tiles = p.m_blocks * p.n_tiles * frames;
    for (int t = 0; t < tiles; ++t) {
      const BlockCoord b = bm == 128 && bn == 192 ? tile_coord<LinearTiles, 128, 192>(p, t)
                                                   : tile_coord<LinearTiles, 128, 96>(p, t);
      ASSERT_LT(b.m0, m_end);
      ASSERT_GE(b.m0, m_begin);
      // A block covers rows [m0, min(m0 + bm, m_end of the frame)): the epilogue stops at the
      // frame's end; the head's blocks end at the split exactly (a multiple of its BM).
      for (int m = b.m0; m < b.m0 + bm && m < pixels; ++m)
        for (int c = b.n0; c < b.n0 + bn && c < cout; ++c)
          ++seen[(size_t(b.n) * pixels + m) * cout + c];
    }
  };
  cover(128, 192, 0, split);
  cover(128, 96, split, pixels);
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "element " << i;
}

}  // namespace
}  // namespace vaeconv::kernel
