// kernel_aim.hpp — the kernel a GPU test aims at, asserted through vaeconv::which_kernel.
//
// A case written for one kernel (the halo, tap-row or tap-reduce kernel, the implicit GEMM's
// element-wise gather, the upsample conv in phases) must run that kernel, or it tests something
// else without a sound. expect_kernel() is host code: the suite runs it with or without a GPU.
#pragma once
#include <gtest/gtest.h>

#include "vaeconv/api/kernel_plan.hpp"

namespace vaeconv::test {

// What which_kernel must report for a case on this build. The halo kernel exists where the wide
// tile is the wgmma atom (VAECONV_NVIDIA_WGMMA, sm_90a) and, bf16, on the NVIDIA mma.sync build
// (the halo kernel on fragment atoms, kernel::kHaloFragmentKernel); elsewhere its cases run the
// implicit GEMM, and that is asserted instead. The tap-row kernel exists on every GPU build (the
// wgmma one on sm_90a, the one on fragment atoms elsewhere: kernel::kTapRowKernel). (These are the
// primary set's plans, which which_kernel(d) reports; gfx950's set, whose bf16 halo kernel takes
// the 96-wide tile's convs, is asserted by test_amd_tables_gpu.cpp.)
struct Aim {
  const char* family = nullptr;  // KernelPlan::family(); nullptr: the case aims at no kernel
  int vector = -1;               // implicit GEMM: 1 the 16-byte gather, 0 element-wise; -1 either
  bool phases = false;           // an upsample conv as four phase launches
};
inline Aim aim_implicit_gemm(bool vector) { return {"implicit_gemm", vector ? 1 : 0, false}; }
inline Aim aim_elementwise() { return aim_implicit_gemm(false); }
inline Aim aim_upsample_phases(bool vector) { return {"implicit_gemm", vector ? 1 : 0, true}; }
inline Aim aim_tap_reduce() { return {"tap_reduce"}; }
#if defined(VAECONV_NVIDIA_WGMMA)
inline Aim aim_halo(DType = DType::kBF16) { return {"halo"}; }
#else
// Its Cin fill 16-byte chunks: the implicit GEMM's 16-byte gather where the halo kernel is not built.
inline Aim aim_halo(DType dtype = DType::kBF16) {
  if (kernel::kHaloFragmentKernel && dtype == DType::kBF16) return {"halo"};
  return aim_implicit_gemm(true);
}
#endif
static_assert(kernel::kTapRowKernel, "the GPU suite's builds have the tap-row kernel");

// Whether this build's tables are sm_90a's (the wgmma atom): the only ones with the 192-wide,
// causal and tail tiles among the builds that run this suite.
#if defined(VAECONV_NVIDIA_WGMMA)
inline constexpr bool kWgmmaTables = true;
#else
inline constexpr bool kWgmmaTables = false;
#endif
inline Aim aim_tap_row() { return {"tap_row"}; }

// The plan which_kernel reports for d, its status asserted (host code).
inline KernelPlan plan_of(const ConvDesc& d) {
  KernelPlan p;
  const Status s = which_kernel(d, &p);
  EXPECT_TRUE(s.ok()) << s.to_string() << " for " << d.to_string();
  return p;
}

// Asserts that a plan is the implicit GEMM's 16-byte gather on Shape's tile, field by field.
template <class Shape>
inline void expect_plan_shape(const KernelPlan& p) {
  EXPECT_EQ(p.choice.family, KernelChoice::Family::kImplicitGemm) << p.name();
  EXPECT_TRUE(p.choice.vector) << p.name();
  EXPECT_EQ(p.bm, Shape::BM) << p.name();
  EXPECT_EQ(p.bn, Shape::BN) << p.name();
  EXPECT_EQ(p.bk, Shape::BK) << p.name();
  EXPECT_EQ(p.warps_m, Shape::kWarpsM) << p.name();
  EXPECT_EQ(p.warps_n, Shape::kWarpsN) << p.name();
  EXPECT_EQ(p.stages, Shape::kStages) << p.name();
  EXPECT_EQ(p.min_blocks, Shape::kMinBlocks) << p.name();
}

// Asserts that which_kernel picks the kernel `aim` names for d (host code: runs without a GPU).
inline void expect_kernel(const ConvDesc& d, const Aim& aim) {
  if (aim.family == nullptr) return;
  KernelPlan plan;
  const Status s = which_kernel(d, &plan);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(plan.family(), aim.family) << "which_kernel: " << plan.name() << " for " << d.to_string();
  if (plan.choice.family == KernelChoice::Family::kImplicitGemm) {
    if (aim.vector >= 0)
      EXPECT_EQ(plan.choice.vector, aim.vector == 1) << "gather of " << plan.name();
    EXPECT_EQ(plan.choice.upsample_phases, aim.phases) << "upsample phases of " << plan.name();
  }
}

}  // namespace vaeconv::test
