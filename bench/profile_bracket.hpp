// bench/profile_bracket.hpp — vaeconv_bench --profile: after a row's warm-up, checks and timing,
// exactly one more call of each conv the row timed, between cudaProfilerStart() and
// cudaProfilerStop(), so that Nsight Compute started with --profile-from-start off profiles those
// calls' kernels and nothing else (bench/profile.sh's vendor mode; bench/profile_table.py reads
// its text output). The calls bracketed, by label:
//   "vaeconv bf16", "vaeconv fp8"   vaeconv's conv (vaeconv_bench.cpp, video_bench.cpp);
//   "cudnn legacy", "cudnn graph"   the engine of each cuDNN path (pad / upsample or cat + pad,
//                                   the conv, its fastest bias way: vendor_common.hpp's ShapeRun,
//                                   video_vendor_run.hpp's VideoRun);
//   "cudnn fp8 graph"               cuDNN's FP8 engine (cudnn_graph_baseline.cpp).
// Before each bracket one line goes to stdout (flushed), and one after it:
//   vaeconv_bench --profile: begin ROW | LABEL | DETAIL
//   vaeconv_bench --profile: end ROW | LABEL | ok            (or "FAILED: why")
// ROW is the row's id, DETAIL what the call runs (the bias way, ...). Nsight Compute's
// "==PROF== Profiling ..." lines for the bracket's kernels fall between the two. The device is
// drained before the bracket opens and before it closes; nothing is allocated inside it. With
// --profile off (the default) profile_bracket returns at once: the timed paths are untouched.
// NVIDIA builds only (cuda_profiler_api.h): a HIP build refuses --profile (kProfileSupported).
#pragma once
#include <cstdio>
#include <string>

#include "vaeconv/arch/runtime.hpp"
#if defined(VAECONV_BACKEND_CUDA)
#include <cuda_profiler_api.h>
#endif

namespace vaeconv_bench {

#if defined(VAECONV_BACKEND_CUDA)
inline constexpr bool kProfileSupported = true;
#else
inline constexpr bool kProfileSupported = false;
#endif

// The process's --profile state: set by main (on) and by the row loops (row), read by every
// bracket, the vendor baselines' included.
struct ProfileState {
  bool on = false;
  std::string row;  // the id of the row being run
  int brackets = 0, failed = 0;
};
inline ProfileState& profile_state() {
  static ProfileState s;
  return s;
}

// One call of run() (returns "" or what failed) inside the profiler's range, when --profile is on.
template <class Run>
void profile_bracket(const char* label, const std::string& detail, const Run& run) {
  ProfileState& p = profile_state();
  if (!p.on) return;
#if defined(VAECONV_BACKEND_CUDA)
  ++p.brackets;
  std::string err;
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) err = std::string("cudaDeviceSynchronize before the bracket: ") + cudaGetErrorString(e);
  std::printf("vaeconv_bench --profile: begin %s | %s | %s\n", p.row.c_str(), label, detail.c_str());
  std::fflush(stdout);
  if (err.empty()) {
    e = cudaProfilerStart();
    if (e != cudaSuccess) {
      err = std::string("cudaProfilerStart: ") + cudaGetErrorString(e);
    } else {
      err = run();
      e = cudaDeviceSynchronize();
      if (err.empty() && e != cudaSuccess) err = std::string("cudaDeviceSynchronize: ") + cudaGetErrorString(e);
      e = cudaProfilerStop();
      if (err.empty() && e != cudaSuccess) err = std::string("cudaProfilerStop: ") + cudaGetErrorString(e);
    }
  }
  if (!err.empty()) ++p.failed;
  std::printf("vaeconv_bench --profile: end %s | %s | %s\n", p.row.c_str(), label,
              err.empty() ? "ok" : ("FAILED: " + err).c_str());
  std::fflush(stdout);
#else
  (void)label;
  (void)detail;
  (void)run;
#endif
}

}  // namespace vaeconv_bench
