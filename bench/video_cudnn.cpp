// video_cudnn.cpp — cuDNN's legacy API on the video rows (CUDA build with cuDNN only; the interface
// is video_vendor.hpp), and video_vendor_bench, which runs it and the graph API's path
// (cudnn_graph_baseline.cpp) on the same buffers and keeps the faster, as vendor_bench does for
// the image rows.
//
// Legacy path: 5-d bf16 tensor descriptors with NDHWC strides (cudnnSetTensorNdDescriptor, as
// PyTorch sets channels_last_3d tensors), a KTRSC bf16 filter (NHWC format), cudnnSetConvolutionNdDescriptor (3 spatial dims, padding 0: the input is
// already padded, as diffusers' F.pad leaves it), fp32 compute, tensor-op math; the algorithm
// chosen once by cudnnFindConvolutionForwardAlgorithmEx with a workspace as large as any
// algorithm asks for (capped at 2 GiB). Bias two ways, the faster counts: the plain fp32 kernel
// after the conv (PyTorch's add_), or fused by cudnnConvolutionBiasActivationForward (identity
// activation, IMPLICIT_PRECOMP_GEMM), checked against the plain kernel's output first.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>

#include "video_vendor.hpp"
#include "video_vendor_run.hpp"

namespace vaeconv_bench {
namespace {

using namespace vendor;

struct LegacyState {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr, bd = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  void *ws = nullptr, *ws2 = nullptr;
  ~LegacyState() {
    for (void* p : {ws, ws2})
      if (p) cudaFree(p);
    if (act) cudnnDestroyActivationDescriptor(act);
    if (cd) cudnnDestroyConvolutionDescriptor(cd);
    if (wd) cudnnDestroyFilterDescriptor(wd);
    if (bd) cudnnDestroyTensorDescriptor(bd);
    if (yd) cudnnDestroyTensorDescriptor(yd);
    if (xd) cudnnDestroyTensorDescriptor(xd);
    if (h) cudnnDestroy(h);
  }
};

#define TRY_CUDNN(expr)                                                                    \
  do {                                                                                     \
    const cudnnStatus_t s_ = (expr);                                                       \
    if (s_ != CUDNN_STATUS_SUCCESS) return std::string(#expr) + ": " + cudnnGetErrorString(s_); \
  } while (0)
#define TRY(expr) VENDOR_TRY(expr)
#define TRY_CUDA(expr) VENDOR_TRY_RT(expr)

// A 5-d tensor, dims in NCDHW order, with NDHWC (channels_last_3d) strides, as PyTorch describes it.
cudnnStatus_t set_ndhwc(cudnnTensorDescriptor_t t, cudnnDataType_t type, const int (&dims)[5]) {
  const int c = dims[1], strides[5] = {dims[2] * dims[3] * dims[4] * c, 1, dims[3] * dims[4] * c, dims[4] * c, c};
  return cudnnSetTensorNdDescriptor(t, type, 5, dims, strides);
}

std::string legacy_video(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_ktrsc,
                         const std::vector<float>& bias, const std::vector<void*>& caches,
                         const std::vector<void*>& xs, const std::vector<void*>& ys, int iters,
                         cudaStream_t stream, std::vector<uint16_t>* y_host, VendorPath* r) {
  VideoRun run(d, caches, xs, ys, iters, stream);
  run.profile_label = "cudnn legacy";
  TRY(run.unsupported());
  LegacyState st;
  const int c = int(d.cin), k = int(d.cout);
  TRY_CUDNN(cudnnCreate(&st.h));
  TRY_CUDNN(cudnnSetStream(st.h, stream));
  TRY_CUDNN(cudnnCreateTensorDescriptor(&st.xd));
  TRY_CUDNN(cudnnCreateTensorDescriptor(&st.yd));
  TRY_CUDNN(cudnnCreateTensorDescriptor(&st.bd));
  TRY_CUDNN(cudnnCreateFilterDescriptor(&st.wd));
  TRY_CUDNN(cudnnCreateConvolutionDescriptor(&st.cd));
  const int xdims[5] = {1, c, run.tp, run.hp, run.wp}, wdims[5] = {k, c, 3, 3, 3};
  const int pad[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  TRY_CUDNN(set_ndhwc(st.xd, CUDNN_DATA_BFLOAT16, xdims));
  TRY_CUDNN(cudnnSetFilterNdDescriptor(st.wd, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, 5, wdims));
  TRY_CUDNN(cudnnSetConvolutionNdDescriptor(st.cd, 3, pad, one, one, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  TRY_CUDNN(cudnnSetConvolutionMathType(st.cd, CUDNN_TENSOR_OP_MATH));
  int out[5] = {0, 0, 0, 0, 0};
  TRY_CUDNN(cudnnGetConvolutionNdForwardOutputDim(st.cd, st.xd, st.wd, 5, out));
  if (out[0] != 1 || out[1] != k || out[2] != d.out_t() || out[3] != d.out_h() || out[4] != d.out_w())
    return "cuDNN's conv3d output differs from vaeconv's";
  TRY_CUDNN(set_ndhwc(st.yd, CUDNN_DATA_BFLOAT16, out));
  const int bdims[5] = {1, k, 1, 1, 1};
  TRY_CUDNN(set_ndhwc(st.bd, CUDNN_DATA_FLOAT, bdims));
  TRY(run.upload(w_ktrsc, bias));
  TRY(run.prepare_inputs());

  size_t ws_find = 0;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
    size_t s = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(st.h, st.xd, st.wd, st.cd, st.yd, cudnnConvolutionFwdAlgo_t(a),
                                                &s) == CUDNN_STATUS_SUCCESS)
      ws_find = std::max(ws_find, s);
  }
  ws_find = std::min(ws_find, size_t(2) << 30);
  if (ws_find) TRY_CUDA(cudaMalloc(&st.ws, ws_find));
  int max_algos = 0, found = 0;
  TRY_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(st.h, &max_algos));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(size_t(std::max(1, max_algos)));
  TRY_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(st.h, st.xd, run.padded[0], st.wd, run.w, st.cd, st.yd, ys[0],
                                                   int(perf.size()), &found, perf.data(), st.ws, ws_find));
  const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
  for (int i = 0; i < found && !best; ++i)
    if (perf[size_t(i)].status == CUDNN_STATUS_SUCCESS && perf[size_t(i)].memory <= ws_find) best = &perf[size_t(i)];
  if (!best) return "cudnnFindConvolutionForwardAlgorithmEx: no algorithm supports this conv3d";
  const cudnnConvolutionFwdAlgo_t algo = best->algo;
  TRY_CUDNN(cudnnSetConvolutionMathType(st.cd, best->mathType));
  char name[96];
  std::snprintf(name, sizeof name, "cudnnConvolutionForward algo %d (math type %d)", int(algo), int(best->mathType));
  r->algo = name;
  r->workspace_bytes = int64_t(best->memory);
  if (st.ws) TRY_CUDA(cudaFree(st.ws));
  st.ws = nullptr;
  if (best->memory) TRY_CUDA(cudaMalloc(&st.ws, best->memory));
  const size_t ws_size = best->memory;

  const float alpha = 1.f, zero = 0.f;
  auto conv = [&](const void* x, void* y) -> std::string {
    TRY_CUDNN(cudnnConvolutionForward(st.h, &alpha, st.xd, x, st.wd, run.w, st.cd, algo, st.ws, ws_size, &zero,
                                      st.yd, y));
    return {};
  };
  enum { kKernel = 0, kFused = 1, kBiasWays = 2 };
  bool usable[kBiasWays] = {true, false};
  std::string notes;
  size_t ws_fused = 0;
  const cudnnConvolutionFwdAlgo_t fused_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  TRY_CUDNN(cudnnCreateActivationDescriptor(&st.act));
  TRY_CUDNN(cudnnSetActivationDescriptor(st.act, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  const cudnnStatus_t fs =
      cudnnGetConvolutionForwardWorkspaceSize(st.h, st.xd, st.wd, st.cd, st.yd, fused_algo, &ws_fused);
  if (fs == CUDNN_STATUS_SUCCESS) {
    if (ws_fused) TRY_CUDA(cudaMalloc(&st.ws2, ws_fused));
    usable[kFused] = true;
  } else {
    notes += std::string("fused: no IMPLICIT_PRECOMP_GEMM workspace (") + cudnnGetErrorString(fs) + "); ";
  }
  auto conv_bias = [&](int way, const void* x, void* y) -> std::string {
    if (way == kFused) {
      TRY_CUDNN(cudnnConvolutionBiasActivationForward(st.h, &alpha, st.xd, x, st.wd, run.w, st.cd, fused_algo,
                                                      st.ws2, ws_fused, &zero, st.yd, y, st.bd, run.bias_f32,
                                                      st.act, st.yd, y));
      return {};
    }
    TRY(conv(x, y));
    return add_bias(y, run.bias_f32, run.y_elems, k, stream);
  };
  static const char* const kBiasName[kBiasWays] = {
      "own bias kernel (fp32 bias, separate pass over y, like PyTorch's add_)",
      "cudnnConvolutionBiasActivationForward (identity activation, IMPLICIT_PRECOMP_GEMM, bias fused)"};
  static const char* const kNoteName[kBiasWays] = {"own bias kernel", "fused"};
  double way_us[kBiasWays];
  ShapeRun::Times t;
  TRY(run.check_time_fetch(ShapeRun::Ways<kBiasWays>{kNoteName, usable, kKernel}, conv, conv_bias, way_us, &t,
                           y_host));
  r->conv_nobias_us = t.conv_nobias_us;
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

VendorResult video_vendor_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_ktrsc,
                                const std::vector<float>& bias, const std::vector<void*>& caches,
                                const std::vector<void*>& xs, const std::vector<void*>& ys, int iters,
                                void* stream, std::vector<uint16_t>* y_host) {
  VendorResult r;
  std::vector<uint16_t> y_legacy, y_graph;
  r.legacy = vendor_result<VendorPath>([&](VendorPath* p) {
    return legacy_video(d, w_ktrsc, bias, caches, xs, ys, iters, static_cast<cudaStream_t>(stream), &y_legacy, p);
  });
  r.graph = cudnn_graph_video_bench(d, w_ktrsc, bias, caches, xs, ys, iters, stream, &y_graph);
  if (r.legacy.ran && r.graph.ran) {
    double rel = 0;
    if (!rel_l2(y_graph, y_legacy, &rel) || rel > 1e-2) {
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
  r.fp8.error = "no cuDNN FP8 conv3d in the video rows";
  return r;
}

}  // namespace vaeconv_bench
