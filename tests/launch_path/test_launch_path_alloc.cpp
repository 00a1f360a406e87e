// The launch path's host work allocates nothing: after validate_for_kernels (tests/host/
// test_hot_path_alloc.cpp) and the cached device check, conv_forward runs the dispatch of the
// device's table set (choose_kernel, visit_kernel) and, per launch, the Launcher's host work
// (launch_grid: the kernel's parameters, its grid, the launch limits; api/conv.hpp). Those need the
// kernel headers, so this binary is built by the GPU compiler, but it calls no runtime function:
// it runs without a GPU (label host). Not covered here: the cached device check (an atomic load)
// and the runtime's launch calls themselves. Counting: tests/hot_path.hpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hot_path.hpp"
#include "vaeconv/api/kernel_plan.hpp"
#include "vaeconv/conv/vae_shapes.hpp"

namespace vaeconv::test {
namespace {

// conv_forward's launches without the runtime: the Launcher's host work for every launch of the
// kernel the dispatch picks. refuse_grid: a grid past the launch limits instead (a refusal).
struct LaunchHostWork {
  const ConvDesc& d;
  const ConvArgs& a;
  bool refuse_grid = false;
  int launches = 0;
  template <class Kernel>
  Status run(const kernel::LaunchPart& part) {
    if (refuse_grid) return detail::check_launch_grid<Kernel>(int64_t(1) << 40);
    kernel::ConvParams p;
    VAECONV_RETURN_IF_ERROR(detail::launch_grid<Kernel>(d, a, part, &p));
    ++launches;
    return Status::Ok();
  }
};

// What conv_forward runs after validate_for_kernels and the device check.
Status dispatch_and_launch(const ConvDesc& d, const ConvArgs& a, kernel::TableSet set,
                           LaunchHostWork& v) {
  return kernel::visit_table_set(set, [&](auto tables) {
    using Tables = decltype(tables);
    return detail::visit_kernel<Tables>(d, detail::choose_kernel<Tables>(d, a.weights.info), v);
  });
}

// Negative control: a refused launch builds its message, naming the kernel's tile.
TEST(HotPath, LaunchRefusalIsCounted) {
  const ConvDesc d = kVaeShapes[1].desc(DType::kBF16);
  PackedWeightsInfo w;
  const ConvArgs a = args_for(d, &w);
  LaunchHostWork v{d, a, /*refuse_grid=*/true};
  Status s;
  EXPECT_GT(allocations_in([&] { s = dispatch_and_launch(d, a, kernel::TableSet::kPrimary, v); }), 0);
  EXPECT_EQ(s.code(), StatusCode::kOverflow);
  EXPECT_NE(s.message().find("block tiles of"), std::string::npos) << s.message();
}

// The dispatch and every launch's host work of each seed shape, both operand types, every table
// set of the build (AMD: gfx942's and gfx950's; NVIDIA: its one set twice), a video and the
// temporal convs.
TEST(HotPath, DispatchAndLaunchesAllocateNothing) {
  std::vector<ConvDesc> descs;
  for (const auto& s : kVaeShapes)
    for (DType t : {DType::kBF16, DType::kFP8E4M3}) descs.push_back(s.desc(t));
  descs.push_back(ConvDesc::causal3x3x3(2, 3, 40, 24, 96, 96));
  descs.push_back(ConvDesc::temporal3x1x1(1, 4, 16, 16, 96, 192, 1, 0));  // two launches
  descs.push_back(ConvDesc::temporal3x1x1(1, 5, 16, 16, 96, 96, 2, 0));
  int checked = 0;
  for (const ConvDesc& d : descs) {
    for (kernel::TableSet set : {kernel::TableSet::kGfx942, kernel::TableSet::kGfx950}) {
      PackedWeightsInfo w;
      const ConvArgs a = args_for(d, &w);
      ASSERT_TRUE(validate_for_kernels(d, a).ok()) << d.to_string();
      LaunchHostWork v{d, a};
      Status st;
      const int64_t n = allocations_in([&] { st = dispatch_and_launch(d, a, set, v); });
      ASSERT_TRUE(st.ok()) << d.to_string() << ": " << st.to_string();
      EXPECT_GE(v.launches, 1) << d.to_string();
      EXPECT_EQ(n, 0) << d.to_string() << " on " << kernel::table_set_name(set);
      ++checked;
    }
  }
  EXPECT_EQ(checked, int(2 * descs.size()));
}

}  // namespace
}  // namespace vaeconv::test
