// test_device_arch.cpp — the run-time architecture decision of api/device_arch.hpp: which AMD
// architecture names and which NVIDIA compute capabilities (against which built architecture
// lists) conv_forward and the C ABI admit, per operand type, and that each refusal is
// kUnsupported with a message naming the device's architecture.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "vaeconv/api/device_arch.hpp"

namespace vaeconv::device_arch {
namespace {

bool contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

// --- AMD -----------------------------------------------------------------------------------------
TEST(DeviceArchAmd, ProcessorIsTheTextBeforeTheFeatures) {
  EXPECT_EQ(amd_processor("gfx942:sramecc+:xnack-"), "gfx942");
  EXPECT_EQ(amd_processor("gfx950"), "gfx950");
  EXPECT_EQ(amd_processor(""), "");
  EXPECT_EQ(amd_processor(":xnack-"), "");
}

TEST(DeviceArchAmd, Gfx942AndGfx950AreAdmittedWithAnyFeatures) {
  for (const char* name : {"gfx942", "gfx942:sramecc+:xnack-", "gfx942:sramecc-:xnack+",
                           "gfx942:xnack-", "gfx950", "gfx950:sramecc+:xnack-"}) {
    for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
      const Status s = amd_arch_status(name, t);
      EXPECT_TRUE(s.ok()) << name << " " << to_string(t) << ": " << s.to_string();
    }
  }
}

TEST(DeviceArchAmd, EveryOtherNameIsRefusedByName) {
  // Other CDNA generations, RDNA, a generic target, near misses of the supported names, empty.
  const std::vector<std::string> refused = {
      "gfx90a", "gfx90a:sramecc+:xnack-", "gfx908", "gfx940", "gfx941", "gfx1201", "gfx1100",
      "gfx9-4-generic", "gfx9-generic", "gfx9420", "gfx94", "gfx95", "Gfx942", " gfx942",
      "gfx942 ", "sm_90"};
  for (const std::string& name : refused) {
    for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
      const Status s = amd_arch_status(name, t, 3);
      EXPECT_EQ(s.code(), StatusCode::kUnsupported) << "'" << name << "' " << to_string(t);
      EXPECT_TRUE(contains(s, "'" + name + "'")) << s.to_string();
      EXPECT_TRUE(contains(s, "device 3")) << s.to_string();
      EXPECT_TRUE(contains(s, "gfx942") && contains(s, "gfx950")) << s.to_string();
    }
  }
  const Status empty = amd_arch_status("", DType::kBF16);
  EXPECT_EQ(empty.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(empty, "empty architecture name")) << empty.to_string();
}

// Each AMD target runs its own tile table set (kernel/table_set.hpp), whatever its features.
TEST(DeviceArchAmd, TableSetIsTheTargets) {
  for (const char* name : {"gfx950", "gfx950:sramecc+:xnack-", "gfx950:xnack+"})
    EXPECT_EQ(amd_table_set(name), TableSet::kGfx950) << name;
  for (const char* name : {"gfx942", "gfx942:sramecc+:xnack-", "gfx942:xnack+"})
    EXPECT_EQ(amd_table_set(name), TableSet::kGfx942) << name;
  EXPECT_NE(TableSet::kGfx942, TableSet::kGfx950);
  EXPECT_EQ(TableSet::kGfx942, TableSet::kPrimary);  // which_kernel's default plans gfx942
}

// --- NVIDIA --------------------------------------------------------------------------------------
TEST(DeviceArchNvidia, CodeArchIsTheHighestBuiltNotAboveTheDevice) {
  const int fat[] = {800, 900};
  EXPECT_EQ(nvidia_code_arch(800, fat, 2), 800);
  EXPECT_EQ(nvidia_code_arch(860, fat, 2), 800);
  EXPECT_EQ(nvidia_code_arch(890, fat, 2), 800);
  EXPECT_EQ(nvidia_code_arch(900, fat, 2), 900);
  EXPECT_EQ(nvidia_code_arch(1000, fat, 2), 900);
  EXPECT_EQ(nvidia_code_arch(750, fat, 2), 0);
  const int unordered[] = {900, 890, 800};
  EXPECT_EQ(nvidia_code_arch(890, unordered, 3), 890);
  EXPECT_EQ(nvidia_code_arch(870, nullptr, 0), 870);  // list unknown: the device's own
}

// The shipped build (sm_90a: __CUDA_ARCH_LIST__ = 900).
TEST(DeviceArchNvidia, Sm90BuildOnItsDevice) {
  const int built[] = {900};
  for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
    EXPECT_TRUE(nvidia_arch_status(9, 0, t, built, 1).ok()) << to_string(t);
    EXPECT_TRUE(nvidia_arch_status(9, 0, t, nullptr, 0).ok()) << to_string(t);
  }
  // An sm_86 device has no code in an sm_90 build.
  const Status s = nvidia_arch_status(8, 6, DType::kBF16, built, 1, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(s, "device 1") && contains(s, "8.6") && contains(s, "no code it can run") &&
              contains(s, "built for sm_90"))
      << s.to_string();
}

TEST(DeviceArchNvidia, Sm80RunsBf16AndRefusesFp8) {
  const int sm80[] = {800};
  EXPECT_TRUE(nvidia_arch_status(8, 0, DType::kBF16, sm80, 1).ok());
  EXPECT_TRUE(nvidia_arch_status(8, 0, DType::kBF16, nullptr, 0).ok());
  for (size_t n : {size_t(0), size_t(1)}) {
    const Status s = nvidia_arch_status(8, 0, DType::kFP8E4M3, sm80, n);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported);
    EXPECT_TRUE(contains(s, "compute capability 8.0 (sm_80)") && contains(s, "FP8") &&
                contains(s, "sm_89 or later"))
        << s.to_string();
  }
}

TEST(DeviceArchNvidia, Sm89RunsFp8OnlyWithCodeBuiltForIt) {
  const int sm89[] = {890}, fat[] = {800, 900}, fat89[] = {800, 890, 900};
  for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
    EXPECT_TRUE(nvidia_arch_status(8, 9, t, sm89, 1).ok()) << to_string(t);
    EXPECT_TRUE(nvidia_arch_status(8, 9, t, fat89, 3).ok()) << to_string(t);
    EXPECT_TRUE(nvidia_arch_status(8, 9, t, nullptr, 0).ok()) << to_string(t);
  }
  // The "80;90a" fat binary on sm_89 runs its sm_80 code: bf16 yes, FP8 refused, naming why.
  EXPECT_TRUE(nvidia_arch_status(8, 9, DType::kBF16, fat, 2).ok());
  const Status s = nvidia_arch_status(8, 9, DType::kFP8E4M3, fat, 2);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(s, "8.9") && contains(s, "runs is sm_80") &&
              contains(s, "built for sm_80, sm_90"))
      << s.to_string();
  // The same fat binary on sm_90 runs its sm_90 code: both.
  for (DType t : {DType::kBF16, DType::kFP8E4M3})
    EXPECT_TRUE(nvidia_arch_status(9, 0, t, fat, 2).ok()) << to_string(t);
  // Code built for sm_80 only (or JIT from its PTX) on an sm_90 device: bf16 only.
  const int sm80[] = {800};
  EXPECT_TRUE(nvidia_arch_status(9, 0, DType::kBF16, sm80, 1).ok());
  EXPECT_EQ(nvidia_arch_status(9, 0, DType::kFP8E4M3, sm80, 1).code(), StatusCode::kUnsupported);
}

TEST(DeviceArchNvidia, BelowSm80IsRefused) {
  const int built[] = {750, 800};
  for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
    const std::pair<int, int> old[] = {{7, 5}, {7, 0}, {6, 1}};
    for (const auto& cc : old) {
      const Status s = nvidia_arch_status(cc.first, cc.second, t, built, 2);
      EXPECT_EQ(s.code(), StatusCode::kUnsupported) << cc.first << "." << cc.second;
      EXPECT_TRUE(contains(s, std::to_string(cc.first) + "." + std::to_string(cc.second)))
          << s.to_string();
    }
  }
}

// Support and status agree everywhere on a grid of capabilities and lists.
TEST(DeviceArchNvidia, SupportMatchesStatus) {
  const std::vector<std::vector<int>> lists = {{}, {800}, {890}, {900}, {800, 900}, {800, 890, 900}};
  for (const auto& l : lists)
    for (int major = 6; major <= 12; ++major)
      for (int minor = 0; minor <= 9; ++minor)
        for (DType t : {DType::kBF16, DType::kFP8E4M3}) {
          const Support sup = nvidia_support(major, minor, l.data(), l.size());
          const Status s = nvidia_arch_status(major, minor, t, l.data(), l.size());
          EXPECT_EQ(sup.allows(t), s.ok()) << major << "." << minor;
          const int dev = nvidia_arch(major, minor);
          const int code = nvidia_code_arch(dev, l.data(), l.size());
          const int need = t == DType::kFP8E4M3 ? kNvidiaMinFp8Arch : kNvidiaMinArch;
          EXPECT_EQ(s.ok(), dev >= need && code >= need) << major << "." << minor;
          if (!s.ok()) {
            EXPECT_EQ(s.code(), StatusCode::kUnsupported);
          }
        }
}

}  // namespace
}  // namespace vaeconv::device_arch
