// The per-call host path allocates nothing: conv_forward runs validate_for_kernels (and through it
// ConvDesc::validate) on every call, so their success paths must not build strings or containers
// (a refusal may: its message is built only then). The rest of a call's host work — the dispatch
// and each launch's grid and limits — needs the kernel headers, i.e. a GPU compiler (it still runs
// without a GPU): tests/launch_path/test_launch_path_alloc.cpp. Counting: tests/hot_path.hpp.
#include <gtest/gtest.h>

#include "hot_path.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/vae_shapes.hpp"

namespace vaeconv::test {
namespace {

TEST(HotPath, CountingWorks) {  // negative control: the counter sees a string being built
  EXPECT_GT(allocations_in([] { volatile auto s = ConvDesc::causal3x3x3(1, 1, 8, 8, 8, 8).to_string(); (void)s; }), 0);
  EXPECT_GT(allocations_in([] { (void)validate_for_kernels(ConvDesc::causal3x3x3(1, 1, 8, 8, 8, 8), ConvArgs{}); }), 0);
}

TEST(HotPath, ValidCallsAllocateNothing) {
  for (const auto& s : kVaeShapes) {
    for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
      const ConvDesc d = s.desc(t);
      PackedWeightsInfo w;
      const ConvArgs a = args_for(d, &w);
      ASSERT_TRUE(validate_for_kernels(d, a).ok()) << s.id << ": " << validate_for_kernels(d, a).to_string();
      EXPECT_EQ(allocations_in([&] { (void)validate_for_kernels(d, a); }), 0) << s.id;
    }
  }
}

}  // namespace
}  // namespace vaeconv::test
