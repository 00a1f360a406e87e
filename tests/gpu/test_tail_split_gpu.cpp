// test_tail_split_gpu.cpp — which convs the tail rule splits (kernel/tail_split.hpp: the 192-wide
// tile's short last round on the wide tile, in a second launch), asserted through which_kernel
// (label gpu; the plans are host code and run without a GPU), and the split convs against the
// CPU reference.
//
// On the sm_90a build (VAECONV_NVIDIA_WGMMA) the bf16 table has a tail tile for its 192-wide tile
// (the wide tile, 128 x 96) and 132 nominal SMs: a conv on the 192-wide tile whose last round is
// short runs the head launch over pixels [0, tail_begin) of every frame and the tail launch over
// the rest. e4m3 and every other build (the mma.sync twin, AMD) have no tail tile: one launch.
// The cached conv's split case is CachedConvGpu.TailSplit (its own harness); the rule's
// arithmetic alone is tests/host/test_tail_split.cpp.
#include <gtest/gtest.h>

#include "conv_case.hpp"
#include "vaeconv/api/kernel_plan.hpp"
#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/kernel/tail_split.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv::test {
namespace {

constexpr bool kHasTail = kWgmmaTables;

#if defined(VAECONV_NVIDIA_WGMMA)
// The rule over table T's 192-wide tile and tail tile.
template <class T>
int split_of(const ConvDesc& d, int frames, int frame_pixels) {
  return kernel::tail_split_pixels(T::kTailUnits, frames, frame_pixels, int(d.cout),
                                   {T::WideCout192::BM, T::WideCout192::BN,
                                    T::WideCout192::kMinBlocks},
                                   {T::WideCout192Tail::BM, T::WideCout192Tail::BN,
                                    T::WideCout192Tail::kMinBlocks});
}
#endif

// The split the plan must report for d: the rule over the bf16 table's tiles where the build has
// a tail tile and d takes the bf16 192-wide tile, else none.
int expected_split(const ConvDesc& d, const KernelPlan& p, int frames, int frame_pixels) {
#if defined(VAECONV_NVIDIA_WGMMA)
  if (p.choice.tile != kernel::TileId::kWideCout192) return 0;
  if (p.dtype != DType::kBF16) return 0;
  return split_of<kernel::Tiles<DType::kBF16>>(d, frames, frame_pixels);
#else
  (void)d; (void)p; (void)frames; (void)frame_pixels;
  return 0;
#endif
}

// The pixels of one launch's output frame: an upsample conv's phase frame (the source's size,
// upsample_phases.hpp) where it runs in phases, else the output frame.
int launch_frame_pixels(const ConvDesc& d, const KernelPlan& p) {
  if (p.choice.upsample_phases) return int((d.out_h() / 2) * (d.out_w() / 2));
  return int(d.out_h() * d.out_w());
}

// Asserts a plan's tail fields against the split it must have; returns whether it is split.
bool expect_tail(const ConvDesc& d, const KernelPlan& p, int split) {
  EXPECT_EQ(p.choice.tail_begin, split) << p.name() << " for " << d.to_string();
  if (split == 0) {
    EXPECT_EQ(p.tail_tiles, 0) << p.name();
    return false;
  }
#if defined(VAECONV_NVIDIA_WGMMA)
  using T = kernel::Tiles<DType::kBF16>;
  EXPECT_EQ(p.dtype, DType::kBF16) << p.name();
  EXPECT_EQ(p.bm, T::WideCout192::BM) << p.name();
  EXPECT_EQ(p.bn, T::WideCout192::BN) << p.name();
  EXPECT_EQ(p.tail_bm, T::WideCout192Tail::BM) << p.name();
  EXPECT_EQ(p.tail_bn, T::WideCout192Tail::BN) << p.name();
  EXPECT_EQ(p.launches, p.choice.upsample_phases ? 8 : 2) << p.name();
  EXPECT_GT(p.tail_tiles, 0) << p.name();
#endif
  return true;
}

// Among the seed shapes only the 166² bottleneck (432 blocks on 132 SMs) splits, in bf16, at 198
// pixel blocks of 128.
TEST(TailSplit, SeedShapes) {
  int split = 0;
  for (const VaeShape& s : kVaeShapes) {
    for (DType dt : {DType::kBF16, DType::kFP8E4M3}) {
      const ConvDesc d = s.desc(dt);
      const KernelPlan p = plan_of(d);
      const int want = expected_split(d, p, int(d.n * d.out_t()), launch_frame_pixels(d, p));
      if (expect_tail(d, p, want)) {
        ++split;
        EXPECT_STREQ(s.id, "dec_bottleneck_1328") << p.name();
        EXPECT_EQ(want, 198 * 128) << s.id;
      }
    }
  }
  EXPECT_EQ(split, kHasTail ? 1 : 0);
}

// Split convs against the reference: the causal conv (T = 1 and T > 1) and the downsample conv,
// one and several frames, a residual, a partial last pixel block in the tail; each one split on
// the sm_90a build (asserted), so the head launch's blocks end at the split and the tail's start
// there. The same convs in e4m3 run in one launch (asserted) against the reference.
template <DType kType>
void split_cases_against_reference(uint32_t seed) {
  using D = ConvDesc;
  struct Case {
    ConvDesc d;
    bool residual;
  };
  const Case cases[] = {
      {D::causal3x3x3(1, 1, 97, 101, 128, 384), true},           // 154 blocks: split at 66 x 128
      {D::causal3x3x3(1, 3, 97, 101, 32, 384), false},           // T = 3, three frames
      {D::downsample(1, 1, 194, 202, 192, 384), false},          // 97 x 101 output pixels
  };
  for (const Case& c : cases) {
    CaseOptions o;
    o.residual = c.residual;
    o.seed = seed++;
    const ConvDesc d = case_desc(c.d, kType, o);
    const KernelPlan p = plan_of(d);
    const int want = expected_split(d, p, int(d.n * d.out_t()), launch_frame_pixels(d, p));
    EXPECT_EQ(want > 0, kHasTail && kType == DType::kBF16)
        << d.to_string() << ": the case must split where it can";
    expect_tail(d, p, want);
    if (::testing::Test::HasFailure()) return;
    VAECONV_REQUIRE_GPU();
    expect_case_ok<kType>(d, run_conv_case<kType>(d, o));
  }
}

TEST(TailSplit, Bf16AgainstReference) { split_cases_against_reference<DType::kBF16>(4100); }
TEST(TailSplit, Fp8OneLaunchAgainstReference) {
  split_cases_against_reference<DType::kFP8E4M3>(4200);
}

}  // namespace
}  // namespace vaeconv::test
