// miopen_baseline.cpp — MIOpen on vaeconv_bench's problems (HIP build with MIOpen only; see
// vendor_baseline.hpp for the interface and bench/CMakeLists.txt for when it is compiled).
//
// What runs, per shape (N·T = 1 frame, NHWC bf16 activations, KRSC bf16 filter, fp32 accumulation):
//   causal    miopenConvolutionForward(pad 1, stride 1) + bias
//   down      pad kernel (ZeroPad2d((0,1,0,1))), then miopenConvolutionForward(pad 0, stride 2) + bias
//   up        nearest-exact x2 kernel, then miopenConvolutionForward(pad 1) + bias
// the same pad / upsample / bias kernels as the cuDNN baseline (vendor_common.hpp). NHWC is
// described to MIOpen as NCHW lengths with NHWC strides (miopenSetTensorDescriptor), the filter as
// [K][C][3][3] lengths with KRSC strides. The algorithm is chosen once per shape by
// miopenFindConvolutionForwardAlgorithm with exhaustiveSearch in the Normal find mode (the
// default, DynamicHybrid, would return a find-db entry as it is and skip non-dynamic solvers on
// a miss; Normal times every solver MIOpen has for the problem on this GPU), with the workspace
// miopenConvolutionForwardGetWorkSpaceSize asks for: the fastest it returns. All buffers are
// allocated at setup; the timed loops allocate nothing.
//
// Bias: miopenOpTensor(Add, y + bias -> y) with a bf16 [1][C][1][1] bias (a second pass over y;
// what miopenConvolutionForwardBias does inside, which refuses bf16 tensors outright) and the
// plain fp32-bias kernel; each is checked against the other's output before it is timed (a way whose
// output differs is not used, and `bias_notes` says why), and the faster is MIOpen's number. A
// fused conv + bias (MIOpen's fusion API) is not tried: it takes the fusion plan's own algorithm
// choice rather than the searched one.
//
// Not run here: no AMD GPU can be reached from this project's machines. It is compiled in every
// HIP build that finds MIOpen (CI's toolchain root installs it), and the bench reports its numbers
// on an AMD machine with the same method as cuDNN's on NVIDIA.
#include "vendor_baseline.hpp"

#include <hip/hip_runtime.h>
#include <miopen/miopen.h>
#include <miopen/version.h>

#include <cstdio>

#include "vaeconv/core/numerics_bf16.hpp"
#include "vendor_common.hpp"

namespace vaeconv_bench {
namespace {

using namespace vendor;

const char* algo_name(miopenConvFwdAlgorithm_t a) {
  switch (a) {
    case miopenConvolutionFwdAlgoGEMM: return "GEMM";
    case miopenConvolutionFwdAlgoDirect: return "Direct";
    case miopenConvolutionFwdAlgoFFT: return "FFT";
    case miopenConvolutionFwdAlgoWinograd: return "Winograd";
    case miopenConvolutionFwdAlgoImplicitGEMM: return "ImplicitGEMM";
    default: return "?";
  }
}

// The MIOpen objects one shape holds (ShapeRun holds its buffers), released on every return path.
struct State {
  miopenHandle_t h = nullptr;
  miopenTensorDescriptor_t xd = nullptr, yd = nullptr, wd = nullptr, bd = nullptr;
  miopenConvolutionDescriptor_t cd = nullptr;
  void* ws = nullptr;
  ~State() {
    if (ws) (void)hipFree(ws);
    if (cd) miopenDestroyConvolutionDescriptor(cd);
    for (miopenTensorDescriptor_t t : {bd, wd, yd, xd})
      if (t) miopenDestroyTensorDescriptor(t);
    if (h) miopenDestroy(h);
  }
};

std::string miopen_err(const char* what, miopenStatus_t s) {
  return std::string(what) + ": " + miopenGetErrorString(s);
}

#define TRY_MIOPEN(expr)                                                     \
  do {                                                                       \
    const miopenStatus_t s_ = (expr);                                        \
    if (s_ != miopenStatusSuccess) return miopen_err(#expr, s_);             \
  } while (0)
#define TRY_HIP(expr) VENDOR_TRY_RT(expr)
#define TRY(expr) VENDOR_TRY(expr)

// A 4D bf16 NHWC tensor: NCHW lengths, NHWC strides.
std::string set_nhwc(miopenTensorDescriptor_t t, int n, int c, int h, int w) {
  const int lens[4] = {n, c, h, w};
  const int strides[4] = {h * w * c, 1, w * c, c};
  TRY_MIOPEN(miopenSetTensorDescriptor(t, miopenBFloat16, 4, lens, strides));
  return {};
}

std::string run_shape(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                      const std::vector<float>& bias, const std::vector<void*>& xs,
                      const std::vector<void*>& ys, int iters, hipStream_t stream,
                      std::vector<uint16_t>* y_host, VendorResult* r) {
  if (d.t != 1) return "the MIOpen baseline covers T = 1 (2D convs) only";
  if (xs.empty() || ys.empty()) return "no buffers";
  ShapeRun run(d, xs, ys, iters, stream);
  State st;
  const VendorConv& vc = run.vc;
  const int frames = vc.frames, cin = vc.cin, cout = vc.cout;

  TRY_MIOPEN(miopenCreate(&st.h));
  TRY_MIOPEN(miopenSetStream(st.h, stream));
  TRY_MIOPEN(miopenCreateTensorDescriptor(&st.xd));
  TRY_MIOPEN(miopenCreateTensorDescriptor(&st.yd));
  TRY_MIOPEN(miopenCreateTensorDescriptor(&st.wd));
  TRY_MIOPEN(miopenCreateTensorDescriptor(&st.bd));
  TRY_MIOPEN(miopenCreateConvolutionDescriptor(&st.cd));
  TRY(set_nhwc(st.xd, frames, cin, vc.ch, vc.cw));
  TRY(set_nhwc(st.wd, cout, cin, 3, 3));  // KRSC: the NHWC strides of a [K][C][3][3] tensor
  TRY_MIOPEN(miopenInitConvolutionDescriptor(st.cd, miopenConvolution, vc.pad, vc.pad, vc.stride,
                                             vc.stride, 1, 1));
  int on = 0, oc = 0, oh = 0, ow = 0;
  TRY_MIOPEN(miopenGetConvolutionForwardOutputDim(st.cd, st.xd, st.wd, &on, &oc, &oh, &ow));
  TRY(output_size_mismatch("MIOpen", d, vc, on, oc, oh, ow));
  TRY(set_nhwc(st.yd, frames, cout, oh, ow));
  TRY(set_nhwc(st.bd, 1, cout, 1, 1));

  TRY(run.upload(w_krsc, bias));
  TRY(run.prepare_inputs());
  const std::vector<void*>& conv_in = run.conv_in;

  // The algorithm search, once, exhaustive, with the workspace MIOpen asks for.
  size_t ws_size = 0;
  TRY_MIOPEN(miopenConvolutionForwardGetWorkSpaceSize(st.h, st.wd, st.xd, st.cd, st.yd, &ws_size));
  if (ws_size) TRY_HIP(hipMalloc(&st.ws, ws_size));
  TRY_HIP(hipStreamSynchronize(stream));
  constexpr int kMaxAlgos = 8;
  miopenConvAlgoPerf_t perf[kMaxAlgos];
  int found = 0;
  TRY_MIOPEN(miopenSetConvolutionFindMode(st.cd, miopenConvolutionFindModeNormal));
  TRY_MIOPEN(miopenFindConvolutionForwardAlgorithm(st.h, st.xd, conv_in[0], st.wd, run.w, st.cd,
                                                   st.yd, ys[0], kMaxAlgos, &found, perf, st.ws,
                                                   ws_size, /*exhaustiveSearch=*/true));
  const miopenConvAlgoPerf_t* best = nullptr;
  for (int i = 0; i < found; ++i)  // sorted fastest first; the first that fits the workspace
    if (perf[i].memory <= ws_size) {
      best = &perf[i];
      break;
    }
  if (!best) return "miopenFindConvolutionForwardAlgorithm: no algorithm supports this problem";
  const miopenConvFwdAlgorithm_t algo = best->fwd_algo;
  r->algo = algo_name(algo);
  r->workspace_bytes = int64_t(best->memory);

  const float one = 1.f, zero = 0.f;
  auto conv = [&](const void* x, void* y) -> std::string {
    TRY_MIOPEN(miopenConvolutionForward(st.h, &one, st.xd, x, st.wd, run.w, st.cd, algo, &zero,
                                        st.yd, y, st.ws, ws_size));
    return {};
  };

  // Two ways to add the bias; each that agrees with the plain kernel's output is timed.
  enum { kLibrary = 0, kKernel = 1, kBiasWays = 2 };
  static const char* const kBiasName[kBiasWays] = {
      "miopenOpTensor add (bf16 bias, separate pass over y)",
      "own bias kernel (fp32 bias, separate 16-byte-vector pass over y, like PyTorch's add_)"};
  bool usable[kBiasWays] = {true, true};
  auto conv_bias = [&](int way, const void* x, void* y) -> std::string {
    TRY(conv(x, y));
    if (way == kKernel) return add_bias(y, run.bias_f32, run.y_elems, cout, stream);
    // y = 1 * y + 1 * bias (broadcast over N, H, W), + 0 * y: in place, as ForwardBias runs it.
    TRY_MIOPEN(miopenOpTensor(st.h, miopenTensorOpAdd, &one, st.yd, y, &one, st.bd, run.b, &zero,
                              st.yd, y));
    return {};
  };
  static const char* const kNoteName[kBiasWays] = {"miopenOpTensor bias", "own bias kernel"};
  double way_us[kBiasWays];
  ShapeRun::Times t;
  TRY(run.check_time_fetch(ShapeRun::Ways<kBiasWays>{kNoteName, usable, kKernel}, conv, conv_bias,
                           way_us, &t, y_host));
  r->conv_nobias_us = t.conv_nobias_us;
  r->conv_addtensor_us = way_us[kLibrary];
  r->conv_biaskernel_us = way_us[kKernel];
  r->conv_us = way_us[t.best_way];
  r->pipeline_us = t.pipeline_us;
  r->bias_mode = kBiasName[t.best_way];
  r->bias_notes = t.notes;
  r->ran = true;
  return {};
}

}  // namespace

bool vendor_available(std::string* name_or_reason) {
  size_t major = 0, minor = 0, patch = 0;
  const miopenStatus_t s = miopenGetVersion(&major, &minor, &patch);
  if (s != miopenStatusSuccess) {
    *name_or_reason = miopen_err("miopenGetVersion", s);
    return false;
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "MIOpen %zu.%zu.%zu (built against %d.%d.%d)", major, minor, patch,
                MIOPEN_VERSION_MAJOR, MIOPEN_VERSION_MINOR, MIOPEN_VERSION_PATCH);
  *name_or_reason = buf;
  return true;
}

VendorResult vendor_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                          const std::vector<float>& bias, const std::vector<void*>& xs,
                          const std::vector<void*>& ys, int iters, void* stream,
                          std::vector<uint16_t>* y_host) {
  return vendor::vendor_result([&](VendorResult* r) {
    return run_shape(d, w_krsc, bias, xs, ys, iters, static_cast<hipStream_t>(stream), y_host, r);
  });
}

}  // namespace vaeconv_bench
