// vendor_baseline.hpp — the platform vendor library run on the same conv problem as vaeconv, in
// the same process, for vaeconv_bench.
//
// NVIDIA (VAECONV_BENCH_CUDNN, set by bench/CMakeLists.txt when cudnn.h and libcudnn are found at
// configure time): cuDNN two ways, each a path of its own, and per shape the faster counts:
//   legacy  the legacy convolution API, NHWC bf16 in/out, fp32 compute, the fastest algorithm
//           chosen once at setup by cudnnFindConvolutionForwardAlgorithmEx with a preallocated
//           workspace, the bias added the fastest of three ways (cudnnAddTensor, a plain kernel,
//           or fused by cudnnConvolutionBiasActivationForward) (cudnn_baseline.cpp);
//   graph   the graph (backend) API that cudnn-frontend and PyTorch use: the engine
//           configurations of heuristics mode A and the fallback list, each finalized into an
//           execution plan and timed, the fastest kept (PyTorch's cudnn.benchmark), for the conv
//           alone (bias by the plain kernel) and for the conv with its bias fused as a pointwise
//           add (cudnn_graph_baseline.cpp);
//   fp8     the graph API with e4m3 operands, tuned the same way: cuDNN's FP8 conv, reported
//           beside vaeconv's FP8 (the BF16 baseline is the faster of legacy and graph).
// AMD (VAECONV_BENCH_MIOPEN, set when miopen/miopen.h and libMIOpen are found): MIOpen, NHWC bf16
// in/out, fp32 accumulation, the fastest algorithm found once by miopenFindConvolutionForwardAlgorithm
// (exhaustive search), the bias added the faster of two ways (miopenOpTensor add or the
// plain kernel) (miopen_baseline.cpp).
// Both run the downsample's ZeroPad2d((0,1,0,1)) and the upsample's nearest-exact x2 as separate
// kernels before the conv (vendor_common.hpp). Elsewhere: a stub that says why there is no baseline.
// With vaeconv_bench --profile, each cuDNN path (legacy, graph, fp8) runs its engine once more after
// its timing, inside a profiler bracket labelled with the path (profile_bracket.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/core/config.hpp"

namespace vaeconv_bench {

// One way of running the vendor library on a shape (cuDNN's legacy or graph API, or MIOpen).
struct VendorPath {
  bool ran = false;           // false: `error` says why (unsupported shape, library failure)
  std::string error;
  std::string algo;           // the algorithm the search chose (for the conv that is timed)
  std::string bias_mode;      // how the bias was added in conv_us / pipeline_us (the fastest way)
  std::string bias_notes;     // ways that were refused or disagreed, and why
  int64_t workspace_bytes = 0;
  double conv_nobias_us = 0;  // the conv alone, no bias (pre-padded / pre-upsampled input)
  double conv_us = 0;         // conv + bias, the fastest way (pre-padded / pre-upsampled input)
  // Each way (0 = not used): the library's own bias op (cudnnAddTensor, miopenOpTensor add),
  // the plain kernel, the bias fused into the conv (cuDNN only).
  double conv_addtensor_us = 0, conv_biaskernel_us = 0, conv_fused_us = 0;
  double pipeline_us = 0;     // pad / upsample kernel + conv + bias: what an engine runs
                              // (equal to conv_us for the causal conv: nothing to add)
};

// The vendor baseline of a shape. With one path (MIOpen) the fields of VendorPath are its run and
// `best` is empty. With cuDNN they are the faster path's: pipeline_us, conv_us and conv_nobias_us
// each the smaller of the two paths' values, the other fields those of the path with the smaller
// pipeline_us, which `best` names ("legacy" or "graph"); each path's own run is kept beside.
// `fp8` (cuDNN only) is the graph API's FP8 conv of the same problem (not part of the BF16
// baseline above; beside vaeconv's FP8).
struct VendorResult : VendorPath {
  std::string best;
  VendorPath legacy, graph, fp8;
};

#if defined(VAECONV_BENCH_CUDNN) || defined(VAECONV_BENCH_MIOPEN)
// The vendor library's name and version ("cuDNN 9.19.0", "MIOpen 3.5.1"), or why none is available.
bool vendor_available(std::string* name_or_reason);

// Runs the vendor conv on the problem `d` (N = 1 frames of [H, W, C], T = 1):
//   w_krsc  bf16 bits, [Cout][3][3][Cin] (the 2D 3x3 weights vaeconv runs: the packed rows
//           without their padding), host memory;
//   bias    Cout floats, host memory (bf16-representable, so that the vendor's bf16 bias equals
//           vaeconv's fp32 one);
//   xs, ys  device buffers (inputs as stored, before pad/upsample; outputs), rotated in timing;
//   y_host  receives the pipeline's output for xs[0] (poisoned first), for the full comparison.
// Timing: `iters` event-timed runs after warm-up, median; all allocation happens before.
VendorResult vendor_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                          const std::vector<float>& bias, const std::vector<void*>& xs,
                          const std::vector<void*>& ys, int iters, void* stream,
                          std::vector<uint16_t>* y_host);

#if defined(VAECONV_BENCH_CUDNN)
// The two cuDNN paths that vendor_bench runs and compares, with its arguments: the legacy API
// (cudnn_baseline.cpp) and the graph API (cudnn_graph_baseline.cpp).
VendorPath cudnn_legacy_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                              const std::vector<float>& bias, const std::vector<void*>& xs,
                              const std::vector<void*>& ys, int iters, void* stream,
                              std::vector<uint16_t>* y_host);
VendorPath cudnn_graph_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                             const std::vector<float>& bias, const std::vector<void*>& xs,
                             const std::vector<void*>& ys, int iters, void* stream,
                             std::vector<uint16_t>* y_host);
// The graph API with e4m3 x and w (fp32 accumulation, per-channel descale and bias fused, bf16 y),
// checked against y_ref, the bf16 cuDNN output of the same data (cudnn_graph_baseline.cpp).
VendorPath cudnn_graph_fp8_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                                 const std::vector<float>& bias, const std::vector<void*>& xs,
                                 const std::vector<void*>& ys, int iters, void* stream,
                                 const std::vector<uint16_t>& y_ref);
#endif

#else
// No vendor baseline in this build: both functions say why.
inline const char* vendor_missing_reason() {
#if defined(VAECONV_BACKEND_HIP)
  return "MIOpen not available (miopen/miopen.h or libMIOpen not found at configure time, or "
         "VAECONV_BENCH_MIOPEN=OFF)";
#else
  return "cuDNN not available (cudnn.h or libcudnn not found at configure time, or "
         "VAECONV_BENCH_CUDNN=OFF)";
#endif
}
inline bool vendor_available(std::string* name_or_reason) {
  *name_or_reason = vendor_missing_reason();
  return false;
}
inline VendorResult vendor_bench(const vaeconv::ConvDesc&, const std::vector<uint16_t>&,
                                 const std::vector<float>&, const std::vector<void*>&,
                                 const std::vector<void*>&, int, void*, std::vector<uint16_t>*) {
  VendorResult r;
  r.error = vendor_missing_reason();
  return r;
}
#endif

}  // namespace vaeconv_bench
