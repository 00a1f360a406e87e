// test_gfx950_tables_gpu.cpp — the gfx950 table set's tiles on the portable twin (label gpu).
//
// The gfx950 set (kernel/tile_table.hpp: Gfx950Tiles) replaces the wide tiles by ones sized to
// gfx950's LDS; on AMD they run on gfx950 devices only. The NVIDIA mma.sync build (cuda-mma
// preset) instantiates the same tile policies on the mma.sync atom: this suite runs them there,
// through precompiled::conv_forward_table_set, against the CPU reference (conv_case.hpp), over
// every seed shape whose gfx950 plan differs from the primary set's (the shapes the gfx950 wide
// tiles serve), and over extra cases of those tiles (partial tiles, residuals, video, strided
// views, downsample, upsample phases). Each case asserts, without a GPU too, that which_kernel
// gives it the gfx950 set's wide tile. A build without the set (the NVIDIA wgmma build) skips
// the suite; on AMD it runs on a gfx950 device only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conv_case.hpp"
#include "vaeconv/api/device_arch.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv::test {
namespace {

using kernel::TableSet;

template <DType kType>
constexpr int kGfx950WideBM = kType == DType::kFP8E4M3 ? kernel::cdna::Gfx950WideShapeFp8::BM
                                                       : kernel::cdna::Gfx950WideShape::BM;

// The plans of d (its dtypes set) under the gfx950 set and the primary set.
struct TwoPlans {
  Status status;
  KernelPlan gfx950, primary;
};
inline TwoPlans plans_of(const ConvDesc& d) {
  TwoPlans p;
  p.status = which_kernel(d, &p.gfx950, TableSet::kGfx950);
  if (p.status.ok()) p.status = which_kernel(d, &p.primary, TableSet::kPrimary);
  return p;
}

// A seed shape is served by the gfx950 set's own tiles where its plan differs from the primary's.
template <DType kType>
std::vector<VaeShape> served_seed_shapes() {
  std::vector<VaeShape> v;
  // if constexpr: under a plain if, nvcc reports the loop unreachable on the wgmma build.
  if constexpr (kernel::kGfx950Tables) {
    for (const VaeShape& s : kVaeShapes) {
      const TwoPlans p = plans_of(case_desc(s.desc(), kType, CaseOptions{}));
      if (p.status.ok() && p.gfx950.name() != p.primary.name()) v.push_back(s);
    }
  }
  return v;
}

// The whole check of one case on the gfx950 set: its plan (host code), then the GPU run.
template <DType kType>
void check_gfx950_case(const ConvDesc& factory_desc, CaseOptions o) {
  if (!kernel::kGfx950Tables)
    GTEST_SKIP() << "this build has no gfx950 table set (the NVIDIA wgmma build)";
  o.table_set = int(TableSet::kGfx950);
  const ConvDesc d = case_desc(factory_desc, kType, o);
  const TwoPlans p = plans_of(d);
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  EXPECT_NE(p.gfx950.name(), p.primary.name()) << "not a case of the gfx950 set's own tiles";
  ASSERT_EQ(p.gfx950.family(), "implicit_gemm") << p.gfx950.name();
  ASSERT_EQ(p.gfx950.bm, kGfx950WideBM<kType>) << "which_kernel: " << p.gfx950.name();
  VAECONV_REQUIRE_GPU();
#if defined(VAECONV_BACKEND_HIP)
  TableSet device_set = TableSet::kPrimary;
  ASSERT_TRUE(check_device_arch(d.in_dtype, &device_set).ok());
  if (device_set != TableSet::kGfx950)
    GTEST_SKIP() << "the gfx950 table set runs on a gfx950 device only (the seed suite runs the "
                    "device's own set)";
#endif
  expect_case_ok<kType>(d, run_conv_case<kType>(d, o));
}

// The param lists must not come out empty by a dispatch change without a sound.
TEST(Gfx950Tables, ServeSeedShapes) {
  if (!kernel::kGfx950Tables)
    GTEST_SKIP() << "this build has no gfx950 table set (the NVIDIA wgmma build)";
  EXPECT_GE(served_seed_shapes<DType::kBF16>().size(), 4u);
  EXPECT_GE(served_seed_shapes<DType::kFP8E4M3>().size(), 4u);
}

class Gfx950SeedBf16 : public ::testing::TestWithParam<VaeShape> {};
TEST_P(Gfx950SeedBf16, MatchesReference) {
  const VaeShape& s = GetParam();
  CaseOptions o;
  o.seed = 3000u + uint32_t(s.cin * 7 + s.cout * 13 + s.h);
  check_gfx950_case<DType::kBF16>(s.desc(), o);
}
INSTANTIATE_TEST_SUITE_P(Seed, Gfx950SeedBf16, ::testing::ValuesIn(served_seed_shapes<DType::kBF16>()),
                         shape_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Gfx950SeedBf16);

class Gfx950SeedFp8 : public ::testing::TestWithParam<VaeShape> {};
TEST_P(Gfx950SeedFp8, MatchesDequantizedReference) {
  const VaeShape& s = GetParam();
  CaseOptions o;
  o.seed = 4000u + uint32_t(s.cin * 7 + s.cout * 13 + s.h);
  check_gfx950_case<DType::kFP8E4M3>(s.desc(), o);
}
INSTANTIATE_TEST_SUITE_P(Seed, Gfx950SeedFp8, ::testing::ValuesIn(served_seed_shapes<DType::kFP8E4M3>()),
                         shape_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Gfx950SeedFp8);

// Extra cases of the wide tiles, both operand types (Cin > 96 or T > 1 where the bf16 halo kernel
// would take a T = 1 Cin <= 96 conv on the mma.sync build).
std::vector<ConvCase> extra_cases() {
  CaseOptions plain, res, inplace;
  res.residual = true;
  inplace.residual_in_place = true;
  const Aim none{};
  return {
      // Partial 256-row tiles: 37 x 53 = 1961 pixels per frame, two frames.
      {"causal_video_t2_partial_res", ConvDesc::causal3x3x3(1, 2, 37, 53, 96, 192), res, none},
      {"causal_cin192_odd_inplace", ConvDesc::causal3x3x3(1, 1, 45, 77, 192, 96), inplace, none},
      {"causal_n2_cin384", ConvDesc::causal3x3x3(2, 1, 19, 23, 384, 96), plain, none},
      {"causal_strided_cin192",
       with_padded_strides(ConvDesc::causal3x3x3(1, 1, 21, 18, 192, 96), 16, 8), res, none},
      {"down_n2_odd", ConvDesc::downsample(2, 1, 77, 131, 96, 96), plain, none},
      {"up_residual", ConvDesc::upsample2x(1, 1, 20, 12, 384, 192), res, none},
      {"up_video_t2_inplace", ConvDesc::upsample2x(1, 2, 17, 9, 192, 96), inplace, none},
  };
}

class Gfx950ExtraBf16 : public ::testing::TestWithParam<ConvCase> {};
TEST_P(Gfx950ExtraBf16, MatchesReference) {
  check_gfx950_case<DType::kBF16>(GetParam().desc, GetParam().opt);
}
INSTANTIATE_TEST_SUITE_P(Cases, Gfx950ExtraBf16, ::testing::ValuesIn(extra_cases()), case_name);

class Gfx950ExtraFp8 : public ::testing::TestWithParam<ConvCase> {};
TEST_P(Gfx950ExtraFp8, MatchesDequantizedReference) {
  check_gfx950_case<DType::kFP8E4M3>(GetParam().desc, GetParam().opt);
}
INSTANTIATE_TEST_SUITE_P(Cases, Gfx950ExtraFp8, ::testing::ValuesIn(extra_cases()), case_name);

}  // namespace
}  // namespace vaeconv::test
