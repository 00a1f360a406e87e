// cudnn_baseline.cpp — cuDNN on vaeconv_bench's problems (CUDA build with cuDNN only; see
// vendor_baseline.hpp for the interface and bench/CMakeLists.txt for when it is compiled): the
// legacy API's path (below), and vendor_bench, which runs it and the graph API's path
// (cudnn_graph_baseline.cpp) on the same data and keeps the faster per shape, then the graph
// API's FP8 conv (reported beside, not part of the BF16 baseline).
//
// What runs, per shape (N·T = 1 frame, NHWC bf16 activations, KRSC bf16 filter, fp32 compute):
//   causal    cudnnConvolutionForward(pad 1, stride 1) + bias
//   down      pad kernel (ZeroPad2d((0,1,0,1)): [H+1][W+1][C], zero last row and column), then
//             cudnnConvolutionForward(pad 0, stride 2) + bias
//   up        nearest-exact x2 kernel ([2H][2W][C]), then cudnnConvolutionForward(pad 1) + bias
// The algorithm is chosen once per shape by cudnnFindConvolutionForwardAlgorithmEx (every
// algorithm cuDNN offers, with a workspace as large as the largest any of them asks for, capped at
// 2 GiB): the fastest that succeeded, with the math type it was found with. Its workspace, the
// pre-padded / pre-upsampled input copies and the pipeline's intermediate buffer are allocated at
// setup; the timed loops allocate nothing.
//
// Bias: three ways are tried and the fastest that works is cuDNN's number (`bias_mode` names it):
// cudnnAddTensor with a bf16 [1][C][1][1] bias (a second pass over y); a plain 16-byte-vector CUDA
// kernel adding the fp32 bias (a second pass over y, what PyTorch's conv2d does with add_ after
// cuDNN's conv); cudnnConvolutionBiasActivationForward with an identity activation (the bias fused
// into the conv; cuDNN allows that only with IMPLICIT_PRECOMP_GEMM). Each way's output is checked
// against the plain kernel's before it is timed. The conv alone without the bias is timed too.
#include "vendor_baseline.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vaeconv/core/numerics_bf16.hpp"
#include "vendor_common.hpp"

namespace vaeconv_bench {
namespace {

const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
  }
}

const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "default math";
    case CUDNN_TENSOR_OP_MATH: return "tensor-op math";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor-op math (conversion allowed)";
    case CUDNN_FMA_MATH: return "FMA math";
    default: return "? math";
  }
}

using namespace vendor;

// --- The cuDNN objects one shape holds (ShapeRun holds its buffers), released on every return path
struct State {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr, bd = nullptr, bd32 = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;
  void *ws = nullptr, *ws2 = nullptr;
  ~State() {
    for (void* p : {ws, ws2})
      if (p) cudaFree(p);
    if (cd) cudnnDestroyConvolutionDescriptor(cd);
    if (wd) cudnnDestroyFilterDescriptor(wd);
    if (act) cudnnDestroyActivationDescriptor(act);
    if (bd32) cudnnDestroyTensorDescriptor(bd32);
    if (bd) cudnnDestroyTensorDescriptor(bd);
    if (yd) cudnnDestroyTensorDescriptor(yd);
    if (xd) cudnnDestroyTensorDescriptor(xd);
    if (h) cudnnDestroy(h);
  }
};

std::string cudnn_err(const char* what, cudnnStatus_t s) {
  return std::string(what) + ": " + cudnnGetErrorString(s);
}
#define TRY_CUDNN(expr)                                                      \
  do {                                                                       \
    const cudnnStatus_t s_ = (expr);                                         \
    if (s_ != CUDNN_STATUS_SUCCESS) return cudnn_err(#expr, s_);             \
  } while (0)
#define TRY_CUDA(expr) VENDOR_TRY_RT(expr)
#define TRY(expr) VENDOR_TRY(expr)

std::string run_shape(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                      const std::vector<float>& bias, const std::vector<void*>& xs,
                      const std::vector<void*>& ys, int iters, cudaStream_t stream,
                      std::vector<uint16_t>* y_host, VendorPath* r) {
  if (d.t != 1) return "the cuDNN baseline covers T = 1 (2D convs) only";
  if (xs.empty() || ys.empty()) return "no buffers";
  ShapeRun run(d, xs, ys, iters, stream);
  run.profile_label = "cudnn legacy";
  State st;
  const VendorConv& vc = run.vc;
  const int frames = vc.frames, cin = vc.cin, cout = vc.cout, ch = vc.ch, cw = vc.cw;
  const int pad = vc.pad, stride = vc.stride;

  TRY_CUDNN(cudnnCreate(&st.h));
  TRY_CUDNN(cudnnSetStream(st.h, stream));
  TRY_CUDNN(cudnnCreateTensorDescriptor(&st.xd));
  TRY_CUDNN(cudnnCreateTensorDescriptor(&st.yd));
  TRY_CUDNN(cudnnCreateTensorDescriptor(&st.bd));
  TRY_CUDNN(cudnnCreateFilterDescriptor(&st.wd));
  TRY_CUDNN(cudnnCreateConvolutionDescriptor(&st.cd));
  TRY_CUDNN(cudnnSetTensor4dDescriptor(st.xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, frames, cin, ch, cw));
  TRY_CUDNN(cudnnSetFilter4dDescriptor(st.wd, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, cout, cin, 3, 3));
  TRY_CUDNN(cudnnSetConvolution2dDescriptor(st.cd, pad, pad, stride, stride, 1, 1,
                                            CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  TRY_CUDNN(cudnnSetConvolutionMathType(st.cd, CUDNN_TENSOR_OP_MATH));
  int on = 0, oc = 0, oh = 0, ow = 0;
  TRY_CUDNN(cudnnGetConvolution2dForwardOutputDim(st.cd, st.xd, st.wd, &on, &oc, &oh, &ow));
  TRY(output_size_mismatch("cuDNN", d, vc, on, oc, oh, ow));
  TRY_CUDNN(cudnnSetTensor4dDescriptor(st.yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, frames, cout, oh, ow));
  TRY_CUDNN(cudnnSetTensor4dDescriptor(st.bd, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 1, cout, 1, 1));

  TRY(run.upload(w_krsc, bias));
  TRY(run.prepare_inputs());
  const std::vector<void*>& conv_in = run.conv_in;

  // The algorithm search, once, with a workspace as large as any algorithm asks for.
  size_t ws_find = 0;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
    size_t s = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(st.h, st.xd, st.wd, st.cd, st.yd,
                                                cudnnConvolutionFwdAlgo_t(a), &s) == CUDNN_STATUS_SUCCESS)
      ws_find = std::max(ws_find, s);
  }
  ws_find = std::min(ws_find, size_t(2) << 30);
  if (ws_find) TRY_CUDA(cudaMalloc(&st.ws, ws_find));
  TRY_CUDA(cudaStreamSynchronize(stream));
  int max_algos = 0, found = 0;
  TRY_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(st.h, &max_algos));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(size_t(std::max(1, max_algos)));
  TRY_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(st.h, st.xd, conv_in[0], st.wd, run.w, st.cd, st.yd,
                                                   ys[0], int(perf.size()), &found, perf.data(),
                                                   st.ws, ws_find));
  const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
  for (int i = 0; i < found && !best; ++i)
    if (perf[size_t(i)].status == CUDNN_STATUS_SUCCESS && perf[size_t(i)].memory <= ws_find)
      best = &perf[size_t(i)];
  if (!best) return "cudnnFindConvolutionForwardAlgorithmEx: no algorithm supports this problem";
  const cudnnConvolutionFwdAlgo_t algo = best->algo;
  TRY_CUDNN(cudnnSetConvolutionMathType(st.cd, best->mathType));
  r->algo = std::string(algo_name(algo)) + ", " + math_name(best->mathType);
  r->workspace_bytes = int64_t(best->memory);
  // Keep exactly the workspace the chosen algorithm needs (allocated here, not in the loops).
  if (st.ws) TRY_CUDA(cudaFree(st.ws));
  st.ws = nullptr;
  if (best->memory) TRY_CUDA(cudaMalloc(&st.ws, best->memory));
  const size_t ws_size = best->memory;

  const float one = 1.f, zero = 0.f;
  auto conv = [&](const void* x, void* y) -> std::string {
    TRY_CUDNN(cudnnConvolutionForward(st.h, &one, st.xd, x, st.wd, run.w, st.cd, algo, st.ws, ws_size,
                                      &zero, st.yd, y));
    return {};
  };

  // Three ways to add the bias; each one that cuDNN accepts and that agrees with the plain kernel's
  // output is timed, and the fastest is cuDNN's number (the comparison is with cuDNN at its best).
  enum { kAddTensor = 0, kKernel = 1, kFused = 2, kBiasWays = 3 };
  static const char* const kBiasName[kBiasWays] = {
      "cudnnAddTensor (bf16 bias, separate pass over y)",
      "own bias kernel (fp32 bias, separate 16-byte-vector pass over y, like PyTorch's add_)",
      "cudnnConvolutionBiasActivationForward (identity activation, IMPLICIT_PRECOMP_GEMM, bias fused)"};
  bool usable[kBiasWays] = {true, true, false};
  std::string notes;
  // Fused: identity activation needs IMPLICIT_PRECOMP_GEMM; fp32 bias tried first, then bf16.
  size_t ws_fused = 0;
  const void* fused_bias = nullptr;
  TRY_CUDNN(cudnnCreateActivationDescriptor(&st.act));
  TRY_CUDNN(cudnnSetActivationDescriptor(st.act, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  TRY_CUDNN(cudnnCreateTensorDescriptor(&st.bd32));
  TRY_CUDNN(cudnnSetTensor4dDescriptor(st.bd32, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 1, cout, 1, 1));
  cudnnTensorDescriptor_t fused_bd = st.bd32;
  {
    const cudnnStatus_t s = cudnnGetConvolutionForwardWorkspaceSize(
        st.h, st.xd, st.wd, st.cd, st.yd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &ws_fused);
    if (s == CUDNN_STATUS_SUCCESS) {
      if (ws_fused) TRY_CUDA(cudaMalloc(&st.ws2, ws_fused));
      usable[kFused] = true;
    } else {
      notes += std::string("fused: no IMPLICIT_PRECOMP_GEMM workspace (") + cudnnGetErrorString(s) + "); ";
    }
  }
  auto fused = [&](const void* x, void* y) -> cudnnStatus_t {
    return cudnnConvolutionBiasActivationForward(
        st.h, &one, st.xd, x, st.wd, run.w, st.cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, st.ws2,
        ws_fused, &zero, st.yd, y, fused_bd, fused_bias, st.act, st.yd, y);
  };
  if (usable[kFused]) {
    fused_bias = run.bias_f32;
    cudnnStatus_t s = fused(conv_in[0], ys[0]);
    if (s != CUDNN_STATUS_SUCCESS) {
      fused_bd = st.bd;
      fused_bias = run.b;
      const cudnnStatus_t s2 = fused(conv_in[0], ys[0]);
      if (s2 != CUDNN_STATUS_SUCCESS) {
        usable[kFused] = false;
        notes += std::string("fused refused: fp32 bias ") + cudnnGetErrorString(s) + ", bf16 bias " +
                 cudnnGetErrorString(s2) + "; ";
      }
    }
    (void)cudaGetLastError();
  }
  auto conv_bias = [&](int way, const void* x, void* y) -> std::string {
    switch (way) {
      case kAddTensor:
        TRY(conv(x, y));
        TRY_CUDNN(cudnnAddTensor(st.h, &one, st.bd, run.b, &one, st.yd, y));
        return {};
      case kKernel:
        TRY(conv(x, y));
        return add_bias(y, run.bias_f32, run.y_elems, cout, stream);
      default:
        TRY_CUDNN(fused(x, y));
        return {};
    }
  };
  static const char* const kNoteName[kBiasWays] = {"cudnnAddTensor", "own bias kernel", "fused"};
  double way_us[kBiasWays];
  ShapeRun::Times t;
  TRY(run.check_time_fetch(ShapeRun::Ways<kBiasWays>{kNoteName, usable, kKernel}, conv, conv_bias,
                           way_us, &t, y_host));
  r->conv_nobias_us = t.conv_nobias_us;
  r->conv_addtensor_us = way_us[kAddTensor];
  r->conv_biaskernel_us = way_us[kKernel];
  r->conv_fused_us = way_us[kFused];
  r->conv_us = way_us[t.best_way];
  r->pipeline_us = t.pipeline_us;
  r->bias_mode = kBiasName[t.best_way];
  r->bias_notes = notes + t.notes;
  r->ran = true;
  return {};
}

}  // namespace

bool vendor_available(std::string* name_or_reason) {
  const size_t v = cudnnGetVersion();
  char buf[96];
  std::snprintf(buf, sizeof buf, "cuDNN %zu.%zu.%zu (built against %d.%d.%d)", v / 10000, (v % 10000) / 100,
                v % 100, CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
  *name_or_reason = buf;
  return true;
}

VendorPath cudnn_legacy_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                              const std::vector<float>& bias, const std::vector<void*>& xs,
                              const std::vector<void*>& ys, int iters, void* stream,
                              std::vector<uint16_t>* y_host) {
  return vendor::vendor_result<VendorPath>([&](VendorPath* r) {
    return run_shape(d, w_krsc, bias, xs, ys, iters, static_cast<cudaStream_t>(stream), y_host, r);
  });
}

// Both paths on the same buffers; the graph API's output must agree with the legacy API's (rel L2
// <= 1e-2, finite) before its time counts. The faster path's output goes to y_host (the bench
// compares it with vaeconv's).
VendorResult vendor_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                          const std::vector<float>& bias, const std::vector<void*>& xs,
                          const std::vector<void*>& ys, int iters, void* stream,
                          std::vector<uint16_t>* y_host) {
  VendorResult r;
  std::vector<uint16_t> y_legacy, y_graph;
  r.legacy = cudnn_legacy_bench(d, w_krsc, bias, xs, ys, iters, stream, &y_legacy);
  r.graph = cudnn_graph_bench(d, w_krsc, bias, xs, ys, iters, stream, &y_graph);
  if (r.legacy.ran && r.graph.ran) {
    double rel = 0;
    if (!vendor::rel_l2(y_graph, y_legacy, &rel) || rel > 1e-2) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "output differs from the legacy API's (rel L2 %.3g or non-finite)", rel);
      r.graph.ran = false;
      r.graph.error = buf;
    }
  }
  const bool graph_faster = r.graph.ran && (!r.legacy.ran || r.graph.pipeline_us < r.legacy.pipeline_us);
  const VendorPath* best = graph_faster ? &r.graph : r.legacy.ran ? &r.legacy : nullptr;
  if (!best) {
    r.ran = false;
    r.error = "legacy API: " + r.legacy.error + "; graph API: " + r.graph.error;
    return r;
  }
  static_cast<VendorPath&>(r) = *best;
  r.best = graph_faster ? "graph" : "legacy";
  for (const VendorPath* p : {&r.legacy, &r.graph}) {
    if (!p->ran) continue;
    r.conv_us = std::min(r.conv_us, p->conv_us);
    r.conv_nobias_us = std::min(r.conv_nobias_us, p->conv_nobias_us);
  }
  *y_host = std::move(graph_faster ? y_graph : y_legacy);
  r.fp8 = cudnn_graph_fp8_bench(d, w_krsc, bias, xs, ys, iters, stream, *y_host);
  return r;
}

}  // namespace vaeconv_bench
