// The seed's shape table: sums and semantics the seed states, checked against kVaeShapes.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "vaeconv/conv/vae_shapes.hpp"

namespace vaeconv {
namespace {

TEST(VaeShapes, EighteenUniqueIds) {
  std::set<std::string> ids;
  for (const auto& s : kVaeShapes) ids.insert(s.id);
  EXPECT_EQ(ids.size(), 18u);
}

TEST(VaeShapes, CallCountsMatchTheSeed) {
  int causal_1024 = 0, down = 0, up = 0, hot_1328 = 0;
  int causal_rows = 0, down_rows = 0, up_rows = 0;
  for (const auto& s : kVaeShapes) {
    if (s.kind == ConvKind::kCausal3x3x3) ++causal_rows;
    if (s.kind == ConvKind::kDownsample) ++down_rows;
    if (s.kind == ConvKind::kUpsample) ++up_rows;
    if (s.resolution == 1328) {
      hot_1328 += s.calls;
      continue;
    }
    if (s.kind == ConvKind::kCausal3x3x3) causal_1024 += s.calls;
    if (s.kind == ConvKind::kDownsample) down += s.calls;
    if (s.kind == ConvKind::kUpsample) up += s.calls;
  }
  EXPECT_EQ(causal_rows, 12);
  EXPECT_EQ(down_rows, 3);
  EXPECT_EQ(up_rows, 3);
  EXPECT_EQ(causal_1024, 52) << "all CausalConv3d 3x3x3 calls of one 1024^2 encode+decode";
  EXPECT_EQ(causal_1024 + down + up, 58) << "the 58-call set of the anchors";
  EXPECT_EQ(hot_1328, 28) << "the hot 1328^2 rows";
}

TEST(VaeShapes, HottestRowsAndOutputSizes) {
  for (const auto& s : kVaeShapes) {
    const ConvDesc d = s.desc();
    ASSERT_TRUE(d.validate().ok()) << s.id << ": " << d.validate().to_string();
    EXPECT_EQ(d.out_t(), 1) << s.id;
    switch (s.kind) {
      case ConvKind::kCausal3x3x3:
        EXPECT_EQ(d.out_h(), s.h) << s.id;
        EXPECT_EQ(d.out_w(), s.w) << s.id;
        break;
      case ConvKind::kDownsample:  // (1, C, 1025, 1025) -> 512 for H = 1024
        EXPECT_EQ(d.out_h(), s.h / 2) << s.id;
        EXPECT_EQ(d.out_w(), s.w / 2) << s.id;
        EXPECT_EQ(s.cin, s.cout) << s.id;
        break;
      case ConvKind::kUpsample:  // output at the doubled size, Cout = Cin / 2
        EXPECT_EQ(d.out_h(), 2 * s.h) << s.id;
        EXPECT_EQ(s.cout * 2, s.cin) << s.id;
        break;
      case ConvKind::kTemporal:  // no seed shape is one
        ADD_FAILURE() << s.id << " is a temporal conv";
        break;
    }
  }
  // The seed's hottest rows: 384->384 at 128^2 and 166^2 run 18 times each.
  EXPECT_EQ(kVaeShapes[6].calls, 18);
  EXPECT_EQ(kVaeShapes[10].calls, 18);
  EXPECT_EQ(kVaeShapes[10].h, 166);
}

TEST(VaeShapes, WeightedFlopsMatchTheAnchors) {
  // anchors/README.md: the 58-call 1024^2 set is 6.67 TFLOP of useful work.
  double flops = 0;
  for (const auto& s : kVaeShapes)
    if (s.resolution == 1024) flops += s.calls * s.desc().flops();
  EXPECT_NEAR(flops / 1e12, 6.67, 0.01);
}

}  // namespace
}  // namespace vaeconv
