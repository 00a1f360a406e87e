// vaeconv/api/device_arch.hpp — refuse, before any launch, a device this build has no correct
// kernels for.
//
// The architecture layer makes a device pass for an unsupported target a compile error (AMD:
// arch/cdna.hpp) or a trap (NVIDIA FP8 below sm_89: arch/nvidia.hpp). This is the run-time half:
// conv_forward and the C ABI ask check_device_arch() whether the current device is one the
// kernels were built for, and refuse any other with kUnsupported and a message naming the
// device's architecture:
//   * AMD: the device's gcnArchName ("gfx942:sramecc+:xnack-") must be gfx942 or gfx950, the only
//     targets the library compiles (feature suffixes do not matter: the kernels need neither).
//   * NVIDIA: compute capability 8.0 or later (mma.sync bf16), and for FP8 the code the device
//     runs must be built for sm_89 or later (mma.sync e4m3). Which code the device runs is
//     decided from nvcc's __CUDA_ARCH_LIST__ (the virtual architectures of this TU's device
//     passes, visible to the host pass): the highest one not above the device's capability (the
//     driver never runs code built for a later architecture, and prefers the newest it can). A
//     fat binary "80;90a" on an sm_89 device therefore runs its sm_80 code: bf16 yes, FP8 no.
//     Where that rule is too hopeful (SASS of another major version only, sm_90a code on another
//     device) the launch fails with a runtime error: loud, never a wrong result.
//
// It also says which tile table set the device runs (kernel/table_set.hpp): each AMD target has
// its own (gfx942 64 KiB of LDS, gfx950 160 KiB), chosen from the same architecture name.
//
// The decision is pure host code (amd_arch_support, nvidia_arch_support), tested exhaustively in
// tests/host/test_device_arch.cpp. check_device_arch() caches it per device id in an atomic, so a
// call after the first costs hipGetDevice and one load, and allocates nothing.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/core/config.hpp"
#include "vaeconv/core/dtype.hpp"
#include "vaeconv/core/status.hpp"
#include "vaeconv/kernel/table_set.hpp"

namespace vaeconv {
namespace device_arch {

// What a device can run, per operand type.
struct Support {
  bool bf16 = false;
  bool fp8 = false;
  bool allows(DType t) const { return t == DType::kFP8E4M3 ? fp8 : bf16; }
};

// --- AMD -----------------------------------------------------------------------------------------
// The processor of a gcnArchName: the text before the first ':' (the target features follow).
inline std::string amd_processor(const std::string& gcn_arch_name) {
  return gcn_arch_name.substr(0, gcn_arch_name.find(':'));
}

inline Support amd_support(const std::string& gcn_arch_name) {
  const std::string proc = amd_processor(gcn_arch_name);
  const bool ok = proc == "gfx942" || proc == "gfx950";
  return {ok, ok};
}

// The tile table set of a supported gcnArchName (kernel/table_set.hpp): gfx950 -> kGfx950,
// anything else -> kGfx942 (an unsupported name is refused by amd_arch_status first).
using kernel::TableSet;
inline TableSet amd_table_set(const std::string& gcn_arch_name) {
  return amd_processor(gcn_arch_name) == "gfx950" ? TableSet::kGfx950 : TableSet::kGfx942;
}

// Ok, or kUnsupported naming the device's architecture and the supported ones.
inline Status amd_arch_status(const std::string& gcn_arch_name, DType t, int device = 0) {
  if (amd_support(gcn_arch_name).allows(t)) return Status::Ok();
  const std::string name = gcn_arch_name.empty() ? std::string("an empty architecture name")
                                                 : "'" + gcn_arch_name + "'";
  return Status(StatusCode::kUnsupported,
                "AMD device " + std::to_string(device) + " reports " + name +
                    "; vaeconv's kernels are built for gfx942 (MI300X) and gfx950 (MI350X/MI355X) "
                    "only");
}

// --- NVIDIA --------------------------------------------------------------------------------------
// Architectures as __CUDA_ARCH__ spells them: major * 100 + minor * 10 (sm_89 = 890).
constexpr int kNvidiaMinArch = 800;      // mma.sync bf16, ldmatrix, cp.async
constexpr int kNvidiaMinFp8Arch = 890;   // mma.sync e4m3

inline int nvidia_arch(int major, int minor) { return major * 100 + minor * 10; }

// The built architecture a device of this capability runs: the highest one not above it, or 0
// when none is (no code for it). n_built == 0: the build's list is unknown (an nvcc without
// __CUDA_ARCH_LIST__), so the device's own capability stands in for it.
inline int nvidia_code_arch(int device_arch, const int* built, size_t n_built) {
  if (n_built == 0) return device_arch;
  int best = 0;
  for (size_t i = 0; i < n_built; ++i)
    if (built[i] <= device_arch && built[i] > best) best = built[i];
  return best;
}

inline Support nvidia_support(int major, int minor, const int* built, size_t n_built) {
  const int dev = nvidia_arch(major, minor);
  const int code = nvidia_code_arch(dev, built, n_built);
  return {dev >= kNvidiaMinArch && code >= kNvidiaMinArch,
          dev >= kNvidiaMinFp8Arch && code >= kNvidiaMinFp8Arch};
}

inline std::string nvidia_arch_list(const int* built, size_t n_built) {
  std::string s;
  for (size_t i = 0; i < n_built; ++i)
    s += (i ? ", sm_" : "sm_") + std::to_string(built[i] / 10);
  return s;
}

// Ok, or kUnsupported naming the device's compute capability and what is missing.
inline Status nvidia_arch_status(int major, int minor, DType t, const int* built, size_t n_built,
                                 int device = 0) {
  if (nvidia_support(major, minor, built, n_built).allows(t)) return Status::Ok();
  const int dev = nvidia_arch(major, minor);
  const int code = nvidia_code_arch(dev, built, n_built);
  const bool fp8 = t == DType::kFP8E4M3;
  const int need = fp8 ? kNvidiaMinFp8Arch : kNvidiaMinArch;
  const std::string kernels = std::string("vaeconv's ") + (fp8 ? "FP8 (e4m3)" : "bf16") +
                              " kernels need ";
  const std::string need_sm = "sm_" + std::to_string(need / 10) + " or later";
  std::string m = "NVIDIA device " + std::to_string(device) + " has compute capability " +
                  std::to_string(major) + "." + std::to_string(minor) + " (sm_" +
                  std::to_string(dev / 10) + ")";
  if (dev < need)
    m += "; " + kernels + need_sm;
  else if (code == 0)  // the device could, but nothing in this build runs on it
    m += ", and this build has no code it can run (built for " +
         nvidia_arch_list(built, n_built) + ")";
  else  // the device could, the build's code for it cannot
    m += ", but the code of this build it runs is sm_" + std::to_string(code / 10) +
         " (built for " + nvidia_arch_list(built, n_built) + "): " + kernels + "code built for " +
         need_sm;
  return Status(StatusCode::kUnsupported, m);
}

// --- The current device, cached ------------------------------------------------------------------
#if defined(VAECONV_GPU_COMPILER)
namespace detail {

// Per device id, the operand types its look-up admitted (0 before the first look-up) and its
// table set (kGfx950Tables). Only admissions are cached: a refusal is looked up again, as it
// builds its message anyway.
constexpr uint8_t kBf16 = 1, kFp8 = 2, kGfx950Tables = 4;
constexpr int kCachedDevices = 64;  // ids beyond this are decided on every call (still correct)
inline std::atomic<uint8_t> g_support[kCachedDevices] = {};

#if defined(VAECONV_BACKEND_CUDA)
#if defined(__CUDA_ARCH_LIST__)
constexpr int kBuiltArchs[] = {__CUDA_ARCH_LIST__};
constexpr size_t kBuiltArchCount = sizeof(kBuiltArchs) / sizeof(kBuiltArchs[0]);
#else
constexpr int kBuiltArchs[] = {0};
constexpr size_t kBuiltArchCount = 0;
#endif
#endif

// Asks the runtime (the slow path: a device-properties query) and decides.
inline Status query(int device, DType t, Support* support, TableSet* tables) {
#if defined(VAECONV_BACKEND_HIP)
  hipDeviceProp_t prop;
  const hipError_t e = hipGetDeviceProperties(&prop, device);
  if (e != hipSuccess)
    return Status(StatusCode::kRuntimeError,
                  std::string("reading the device's architecture failed: ") + hipGetErrorString(e));
  const std::string name(prop.gcnArchName);
  *support = amd_support(name);
  *tables = amd_table_set(name);
  return amd_arch_status(name, t, device);
#else
  *tables = TableSet::kPrimary;
  int major = 0, minor = 0;
  hipError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == hipSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (e != hipSuccess)
    return Status(StatusCode::kRuntimeError,
                  std::string("reading the device's compute capability failed: ") +
                      hipGetErrorString(e));
  *support = nvidia_support(major, minor, kBuiltArchs, kBuiltArchCount);
  return nvidia_arch_status(major, minor, t, kBuiltArchs, kBuiltArchCount, device);
#endif
}

}  // namespace detail

// Ok when the current device runs this build's kernels for operand type t; kUnsupported naming
// its architecture otherwise; kRuntimeError when the runtime cannot say. *tables (when given):
// the tile table set the device runs (AMD: its target's; NVIDIA: kPrimary), set on Ok.
inline Status check_device_arch(DType t, TableSet* tables = nullptr) {
  int device = 0;
  const hipError_t e = hipGetDevice(&device);
  if (e != hipSuccess)
    return Status(StatusCode::kRuntimeError,
                  std::string("no current device: ") + hipGetErrorString(e));
  const bool cached = device >= 0 && device < detail::kCachedDevices;
  if (cached) {
    const uint8_t s = detail::g_support[device].load(std::memory_order_relaxed);
    const uint8_t want = t == DType::kFP8E4M3 ? detail::kFp8 : detail::kBf16;
    if (s & want) {
      if (tables) *tables = (s & detail::kGfx950Tables) ? TableSet::kGfx950 : TableSet::kPrimary;
      return Status::Ok();
    }
  }
  Support support;
  TableSet set = TableSet::kPrimary;
  Status st = detail::query(device, t, &support, &set);
  if (cached && st.code() != StatusCode::kRuntimeError)  // racing first calls store the same bits
    detail::g_support[device].store(
        uint8_t((support.bf16 ? detail::kBf16 : 0) | (support.fp8 ? detail::kFp8 : 0) |
                (set == TableSet::kGfx950 ? detail::kGfx950Tables : 0)),
        std::memory_order_relaxed);
  if (tables && st.ok()) *tables = set;
  return st;
}
#endif  // VAECONV_GPU_COMPILER

}  // namespace device_arch

#if defined(VAECONV_GPU_COMPILER)
using device_arch::check_device_arch;
#endif

}  // namespace vaeconv
