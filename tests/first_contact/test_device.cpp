// test_device.cpp — which device the suite runs on, and whether this build's kernels are for it.
//
// The shipped AMD kernels are compiled for gfx942 (MI300X) and gfx950 (MI350X / MI355X) only; on
// any other AMD device nothing else in this suite would mean anything, so this test says so first.
// On NVIDIA the FP8 atoms (mma.sync e4m3) need sm_89 or later.
#include <gtest/gtest.h>

#include "first_contact_util.hpp"

namespace vaeconv::test {
namespace {

TEST(FirstContactDevice, IsATargetOfThisBuild) {
  VAECONV_REQUIRE_GPU();
  const DeviceIdentity id = device_identity();
  std::printf("[ vaeconv  ] device: %s, architecture %s\n", id.name.c_str(), id.arch.c_str());
  if (id.amd) {
    const std::string target = amd_target(id);
    EXPECT_TRUE(target == "gfx942" || target == "gfx950")
        << "device architecture " << id.arch << ": the kernels are built for gfx942 and gfx950 only";
  } else {
    EXPECT_GE(id.sm, 89) << "device " << id.arch << ": the FP8 atoms need sm_89 or later";
  }
}

}  // namespace
}  // namespace vaeconv::test
