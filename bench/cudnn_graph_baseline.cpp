// cudnn_graph_baseline.cpp — cuDNN's graph (backend) API on vaeconv_bench's problems, tuned the way
// cudnn-frontend and PyTorch's cudnn.benchmark tune it (CUDA build with cuDNN only; the interface
// is cudnn_graph_bench / cudnn_graph_fp8_bench in vendor_baseline.hpp, called by vendor_bench in
// cudnn_baseline.cpp).
//
// The C backend API directly (cudnn-frontend is a header-only C++ layer over the same calls, not
// a package this build can rely on). Per shape, NHWC bf16 activations, KRSC bf16 filter, fp32
// compute, the same conv problem as the legacy path (vendor_common.hpp's VendorConv: the separate
// pad / upsample kernel first for down / up, then a 3x3 conv):
//   conv graph   CONVOLUTION_FORWARD x, w -> y (bf16); the bias then added by the plain kernel
//                (what PyTorch's conv2d does when it does not fuse);
//   fused graph  CONVOLUTION_FORWARD x, w -> t (virtual, fp32), POINTWISE ADD t + b -> y (bf16),
//                the bias fp32 (bf16 when no engine takes fp32);
//   fp8 graph    (cudnn_graph_fp8_bench, beside the BF16 baseline) e4m3 x and w, t * s + b -> y
//                (bf16), s the per-channel descale, both pointwise ops fused.
// Each graph is tuned on its own: the engine configurations of heuristics mode A, then those of the
// fallback list not already seen; a configuration whose engine down-converts its inputs or reduces
// in less than fp32 (its numerical notes) is left out, as PyTorch leaves out the former; every other
// one is finalized into an execution plan (a plan cuDNN cannot build, or that asks for more than
// 2 GiB of workspace, is skipped; at most kMaxCandidates plans and kBuildBudgetSeconds of plan
// building per graph) and timed on the rotated inputs; the fastest is kept. One
// workspace (the largest any kept candidate asks for) and every variant pack the timed loops use
// are made at setup: the loops allocate nothing and build nothing.
// The fastest bias way (conv graph + kernel, or fused) is then checked, timed and fetched exactly as
// the legacy path's ways are (vendor_common.hpp's ShapeRun), the plain kernel's output the
// reference.
// The video rows (cudnn_graph_video_bench, video_vendor.hpp) build the same graphs with 3 spatial
// dims (NDHWC, KTRSC) on the padded conv3d input; video_vendor_run.hpp checks and times them.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "vaeconv/core/numerics_fp8.hpp"
#include "vendor_baseline.hpp"
#include "vendor_common.hpp"
#include "video_vendor.hpp"
#include "video_vendor_run.hpp"

#if CUDNN_MAJOR < 9
#error "the cuDNN graph baseline needs cuDNN 9 or later (its backend API and cudnnGetLastErrorString)"
#endif

namespace vaeconv_bench {
namespace {

using namespace vendor;

constexpr int64_t kWorkspaceCap = int64_t(2) << 30;  // the legacy search's cap
constexpr int kTuneIters = 5;                         // timed runs per candidate plan (median)
// Bounds on one graph's tuning, so that 18 shapes fit a device call: runtime-compiled engines (the
// fused graph's) take up to seconds each to finalize. Candidates come in heuristics order (mode A
// ranks its list), so the bounds cut the tail; the plan's name says when they did.
constexpr int kMaxCandidates = 24;
constexpr double kBuildBudgetSeconds = 3.0;
constexpr int64_t kAlignment = 16;                    // every buffer is cudaMalloc'd (256 B)

// Tensor ids in the variant packs.
enum : int64_t { kUidX = 1, kUidW = 2, kUidY = 3, kUidB = 4, kUidT = 5, kUidS = 6, kUidU = 7 };

// What a graph computes (y is bf16 NHWC, accumulation fp32 throughout):
//   kConv          y = conv(x, w), x and w bf16;
//   kConvBias      y = conv(x, w) + b, x and w bf16, b fused as a pointwise add;
//   kFp8ScaleBias  y = conv(x, w) * s + b, x and w e4m3, s the per-channel descale (fp32 [Cout]),
//                  both pointwise ops fused.
enum class Form { kConv, kConvBias, kFp8ScaleBias };
const char* form_name(Form f) {
  switch (f) {
    case Form::kConv: return "conv";
    case Form::kConvBias: return "conv + bias add";
    default: return "fp8 conv + descale + bias add";
  }
}

std::string graph_err(const std::string& what, cudnnStatus_t s) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof detail);
  std::string m = "cuDNN graph API: " + what + ": " + cudnnGetErrorString(s);
  if (detail[0]) m += " (" + std::string(detail) + ")";
  return m;
}
#define TRY_G(what, expr)                                                    \
  do {                                                                       \
    const cudnnStatus_t s_ = (expr);                                         \
    if (s_ != CUDNN_STATUS_SUCCESS) return graph_err(what, s_);              \
  } while (0)
#define TRY(expr) VENDOR_TRY(expr)
#define TRY_CUDA(expr) VENDOR_TRY_RT(expr)

// One backend descriptor, destroyed on every return path.
class Desc {
 public:
  Desc() = default;
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  Desc& operator=(Desc&& o) noexcept {
    std::swap(d_, o.d_);
    return *this;
  }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  std::string create(cudnnBackendDescriptorType_t type, const char* what) {
    TRY_G(std::string("create ") + what, cudnnBackendCreateDescriptor(type, &d_));
    return {};
  }
  cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// Sets attribute `name` (named in the error by its enumerator's spelling).
#define SET_ATTR(desc, name, type, count, values)                                            \
  TRY_G("set " #name, cudnnBackendSetAttribute((desc).get(), name, type, count, values))
#define FINALIZE(desc, what) TRY_G(std::string("finalize ") + (what), cudnnBackendFinalize((desc).get()))

// A tensor in NC(D)HW dimension order with channels-last strides: 4-d (the activations,
// [1][C][1][1] bias; KRSC for the filter, K as N) or 5-d (the video rows' NDHWC, KTRSC filter).
std::string make_tensor(Desc* t, int64_t uid, cudnnDataType_t type, const std::vector<int64_t>& dims,
                        bool is_virtual, const char* what) {
  TRY(t->create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what));
  const int64_t rank = int64_t(dims.size());
  std::vector<int64_t> strides(dims.size());
  int64_t s = dims[1];  // C is innermost, then the last spatial dim, ..., N outermost
  strides[1] = 1;
  for (int64_t i = rank - 1; i >= 2; --i) {
    strides[size_t(i)] = s;
    s *= dims[size_t(i)];
  }
  strides[0] = s;
  const bool virt = is_virtual;
  SET_ATTR(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  SET_ATTR(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, dims.data());
  SET_ATTR(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, strides.data());
  SET_ATTR(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  SET_ATTR(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &kAlignment);
  SET_ATTR(*t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
  FINALIZE(*t, what);
  return {};
}

// The conv a graph computes, 2 or 3 spatial dims: x [N][Cin][sp...], a 3 x 3 (x 3) filter, the
// same padding and stride on every spatial dim.
struct GraphConvShape {
  int spatial = 2;
  int64_t n = 1, cin = 1, cout = 1;
  int64_t in[3] = {1, 1, 1};  // input sizes (H, W or T, H, W)
  int64_t pad = 0, stride = 1;
  static GraphConvShape of(const VendorConv& vc) {
    GraphConvShape s;
    s.n = vc.frames;
    s.cin = vc.cin;
    s.cout = vc.cout;
    s.in[0] = vc.ch;
    s.in[1] = vc.cw;
    s.pad = vc.pad;
    s.stride = vc.stride;
    return s;
  }
  std::vector<int64_t> x_dims() const { return dims(n, cin, [&](int i) { return in[i]; }); }
  std::vector<int64_t> w_dims() const { return dims(cout, cin, [](int) { return int64_t(3); }); }
  std::vector<int64_t> y_dims() const {
    return dims(n, cout, [&](int i) { return (in[i] + 2 * pad - 3) / stride + 1; });
  }
  std::vector<int64_t> per_channel_dims() const { return dims(1, cout, [](int) { return int64_t(1); }); }

 private:
  template <class F>
  std::vector<int64_t> dims(int64_t a, int64_t b, const F& sp) const {
    std::vector<int64_t> d = {a, b};
    for (int i = 0; i < spatial; ++i) d.push_back(sp(i));
    return d;
  }
};

// One operation graph (the conv alone, or the conv with its bias fused), its tuned plan, and the
// workspace and variant packs it runs with.
class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name;     // the kept plan: engine, knobs, and how many candidates were timed
  int64_t ws_bytes = 0;  // the kept plan's workspace

  // Builds the graph `form` for the problem `vc` (with a bias: the bias tensor of type `bias_type`).
  std::string build(cudnnHandle_t h, const VendorConv& vc, Form form, cudnnDataType_t bias_type) {
    return build(h, GraphConvShape::of(vc), form, bias_type);
  }
  std::string build(cudnnHandle_t h, const GraphConvShape& s, Form form, cudnnDataType_t bias_type) {
    h_ = h;
    form_ = form;
    const bool fused = form != Form::kConv, fp8 = form == Form::kFp8ScaleBias;
    const cudnnDataType_t in_type = fp8 ? CUDNN_DATA_FP8_E4M3 : CUDNN_DATA_BFLOAT16;
    Desc x, w, y, b, t, conv, op, pw, pw_op, sc, u, mul, mul_op;
    TRY(make_tensor(&x, kUidX, in_type, s.x_dims(), false, "tensor x"));
    TRY(make_tensor(&w, kUidW, in_type, s.w_dims(), false, "tensor w"));
    TRY(make_tensor(&y, kUidY, CUDNN_DATA_BFLOAT16, s.y_dims(), false, "tensor y"));
    if (fused) {
      TRY(make_tensor(&t, kUidT, CUDNN_DATA_FLOAT, s.y_dims(), true, "tensor t (conv output)"));
      TRY(make_tensor(&b, kUidB, bias_type, s.per_channel_dims(), false, "tensor bias"));
    }
    if (fp8) {
      TRY(make_tensor(&sc, kUidS, CUDNN_DATA_FLOAT, s.per_channel_dims(), false, "tensor descale"));
      TRY(make_tensor(&u, kUidU, CUDNN_DATA_FLOAT, s.y_dims(), true, "tensor u (descaled)"));
    }
    TRY(conv.create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "convolution"));
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t dims = s.spatial, one[3] = {1, 1, 1}, stride[3] = {s.stride, s.stride, s.stride},
                  pad[3] = {s.pad, s.pad, s.pad};
    SET_ATTR(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    SET_ATTR(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    SET_ATTR(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    SET_ATTR(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dims, one);
    SET_ATTR(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, dims, stride);
    SET_ATTR(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, dims, pad);
    SET_ATTR(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, dims, pad);
    FINALIZE(conv, "convolution");

    TRY(op.create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, "convolution forward"));
    const float alpha = 1.f, beta = 0.f;
    cudnnBackendDescriptor_t xd = x.get(), wd = w.get(), yd = fused ? t.get() : y.get(), cd = conv.get();
    SET_ATTR(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd);
    SET_ATTR(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd);
    SET_ATTR(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd);
    SET_ATTR(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd);
    SET_ATTR(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    SET_ATTR(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    FINALIZE(op, "convolution forward");
    std::vector<cudnnBackendDescriptor_t> ops = {op.get()};
    if (fp8) {  // u = t * s
      TRY(mul.create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise mul"));
      const cudnnPointwiseMode_t m = CUDNN_POINTWISE_MUL;
      SET_ATTR(mul, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &m);
      SET_ATTR(mul, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f32);
      FINALIZE(mul, "pointwise mul");
      TRY(mul_op.create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "pointwise mul operation"));
      cudnnBackendDescriptor_t md = mul.get(), td = t.get(), sd = sc.get(), ud = u.get();
      SET_ATTR(mul_op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &md);
      SET_ATTR(mul_op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &td);
      SET_ATTR(mul_op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &sd);
      SET_ATTR(mul_op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ud);
      FINALIZE(mul_op, "pointwise mul operation");
      ops.push_back(mul_op.get());
    }
    if (fused) {  // y = (fp8 ? u : t) + b
      TRY(pw.create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise add"));
      const cudnnPointwiseMode_t add = CUDNN_POINTWISE_ADD;
      SET_ATTR(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &add);
      SET_ATTR(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f32);
      FINALIZE(pw, "pointwise add");
      TRY(pw_op.create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "pointwise add operation"));
      cudnnBackendDescriptor_t pd = pw.get(), td = fp8 ? u.get() : t.get(), bd = b.get(), out = y.get();
      SET_ATTR(pw_op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pd);
      SET_ATTR(pw_op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &td);
      SET_ATTR(pw_op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bd);
      SET_ATTR(pw_op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &out);
      FINALIZE(pw_op, "pointwise add operation");
      ops.push_back(pw_op.get());
    }
    TRY(graph_.create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph"));
    SET_ATTR(graph_, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops.size()), ops.data());
    SET_ATTR(graph_, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h_);
    FINALIZE(graph_, std::string("operation graph (") + form_name(form) + ")");
    return {};
  }

  // The candidates' plans, then each timed on the rotated (x, y) pairs; the fastest is kept.
  // w, b and s are the device filter, bias and descale (b, s: null where the form has none).
  std::string tune(const void* w, const void* b, const void* s, const std::vector<void*>& xs,
                   const std::vector<void*>& ys, cudaStream_t stream) {
    w_ = w;
    b_ = b;
    s_ = s;
    std::vector<Candidate> cands;
    int heur_a = 0, fallback = 0, skipped_notes = 0, not_built = 0, too_big = 0, over_budget = 0;
    double build_s = 0;
    std::string heur_notes;
    std::set<std::string> seen;
    for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      std::vector<Desc> cfgs;
      const std::string e = heuristics(mode, &cfgs);
      if (!e.empty()) {  // one list missing is a note; both missing is the error below
        heur_notes += e + "; ";
        continue;
      }
      for (size_t i = 0; i < cfgs.size(); ++i) {
        const Desc& cfg = cfgs[i];
        Candidate c;
        bool excluded = false;
        const std::string undescribed = describe(cfg, &c.name, &excluded);
        if (!undescribed.empty())  // still a candidate: a name from its place in the list
          c.name = std::string(mode == CUDNN_HEUR_MODE_A ? "mode A" : "fallback") + " config " + std::to_string(i) +
                   " (" + undescribed + ")";
        if (!seen.insert(c.name).second) continue;
        (mode == CUDNN_HEUR_MODE_A ? heur_a : fallback)++;
        if (excluded) {
          ++skipped_notes;
          continue;
        }
        if (int(cands.size()) >= kMaxCandidates || build_s > kBuildBudgetSeconds) {
          ++over_budget;
          continue;
        }
        TRY(c.plan.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan"));
        SET_ATTR(c.plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h_);
        cudnnBackendDescriptor_t cd = cfg.get();
        SET_ATTR(c.plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd);
        const auto t0 = std::chrono::steady_clock::now();
        const cudnnStatus_t built = cudnnBackendFinalize(c.plan.get());
        build_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (built != CUDNN_STATUS_SUCCESS) {
          ++not_built;
          continue;
        }
        int64_t n = 0;
        TRY_G("get CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE",
              cudnnBackendGetAttribute(c.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                       &n, &c.ws));
        if (c.ws > kWorkspaceCap) {
          ++too_big;
          continue;
        }
        cands.push_back(std::move(c));
      }
    }
    char counts[320];
    std::snprintf(counts, sizeof counts,
                  "%d configs from heuristics mode A + %d more from the fallback list; %d left out by numerical "
                  "note, %d not buildable, %d over the workspace cap, %d past the tuning bounds (%d plans, "
                  "%.0f s of plan building); %.1f s building plans",
                  heur_a, fallback, skipped_notes, not_built, too_big, over_budget, kMaxCandidates,
                  kBuildBudgetSeconds, build_s);
    if (cands.empty())
      return std::string("cuDNN graph API: no execution plan for the ") + form_name(form_) +
             " graph (" + counts + ")" + (heur_notes.empty() ? "" : "; " + heur_notes);

    // One workspace for all candidates; every variant pack of the tuning loop made before it runs.
    for (const Candidate& c : cands) ws_bytes = std::max(ws_bytes, c.ws);
    if (ws_bytes) TRY_CUDA(cudaMalloc(&ws_, size_t(ws_bytes)));
    const size_t runs = size_t(std::max(kTuneIters, kWarmup));
    for (size_t i = 0; i < runs; ++i) TRY(pack(xs[i % xs.size()], ys[i % ys.size()]));

    Events ev;
    TRY(ev.create());
    int timed = 0, failed = 0;
    double best_us = 0;
    Candidate* best = nullptr;
    for (Candidate& c : cands) {
      auto run = [&](int i) { return execute(c.plan, xs[size_t(i) % xs.size()], ys[size_t(i) % ys.size()]); };
      double us = 0;
      const std::string e = time_median(run, kTuneIters, stream, ev, &us);
      if (!e.empty()) {  // an engine may refuse at run time: not a candidate, the next may run
        ++failed;
        (void)cudaGetLastError();
        TRY_CUDA(cudaStreamSynchronize(stream));
        continue;
      }
      ++timed;
      if (!best || us < best_us) {
        best = &c;
        best_us = us;
      }
    }
    if (!best)
      return std::string("cuDNN graph API: every execution plan of the ") + form_name(form_) +
             " graph failed to run (" + counts + ", " + std::to_string(failed) + " failed)";
    name = best->name + " (fastest of " + std::to_string(timed) + " plans timed, " + std::to_string(failed) +
           " failed to run; " + counts + ")";
    plan_ = std::move(best->plan);
    ws_bytes = best->ws;
    return {};
  }

  // Makes the variant pack for (x, y) unless it exists (setup only; run() requires it).
  std::string pack(const void* x, void* y) {
    const auto key = std::make_pair(x, static_cast<const void*>(y));
    if (packs_.count(key)) return {};
    Desc vp;
    TRY(vp.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack"));
    std::vector<int64_t> u = {kUidX, kUidW, kUidY};
    std::vector<void*> p = {const_cast<void*>(x), const_cast<void*>(w_), y};
    if (form_ != Form::kConv) {
      u.push_back(kUidB);
      p.push_back(const_cast<void*>(b_));
    }
    if (form_ == Form::kFp8ScaleBias) {
      u.push_back(kUidS);
      p.push_back(const_cast<void*>(s_));
    }
    const int64_t n = int64_t(u.size());
    SET_ATTR(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, u.data());
    SET_ATTR(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, p.data());
    SET_ATTR(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws_);
    FINALIZE(vp, "variant pack");
    packs_.emplace(key, std::move(vp));
    return {};
  }

  // The kept plan on (x, y), whose variant pack pack() made.
  std::string run(const void* x, void* y) const { return execute(plan_, x, y); }

  ~Graph() {
    if (ws_) (void)cudaFree(ws_);
  }

 private:
  struct Candidate {
    Desc plan;
    int64_t ws = 0;
    std::string name;
  };

  std::string execute(const Desc& plan, const void* x, void* y) const {
    const auto it = packs_.find(std::make_pair(x, static_cast<const void*>(y)));
    if (it == packs_.end()) return "cuDNN graph API: no variant pack was made for this (x, y) pair";
    TRY_G("cudnnBackendExecute", cudnnBackendExecute(h_, plan.get(), it->second.get()));
    return {};
  }

  // The engine configurations of one heuristics mode, in its order.
  std::string heuristics(cudnnBackendHeurMode_t mode, std::vector<Desc>* cfgs) const {
    const char* what = mode == CUDNN_HEUR_MODE_A ? "heuristics mode A" : "heuristics fallback list";
    Desc heur;
    TRY(heur.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what));
    cudnnBackendDescriptor_t g = graph_.get();
    SET_ATTR(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    SET_ATTR(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    FINALIZE(heur, what);
    int64_t count = 0;
    TRY_G(std::string("count the results of ") + what,
          cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                   &count, nullptr));
    cfgs->resize(size_t(count));
    std::vector<cudnnBackendDescriptor_t> raw(static_cast<size_t>(count));
    for (size_t i = 0; i < cfgs->size(); ++i) {
      TRY((*cfgs)[i].create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine configuration"));
      raw[i] = (*cfgs)[i].get();
    }
    int64_t got = 0;
    if (count)
      TRY_G(std::string("get the results of ") + what,
            cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                     &got, raw.data()));
    cfgs->resize(size_t(std::min(got, count)));
    return {};
  }

  // "engine N {knob=value ...}" for a configuration; *excluded when its engine's numerical notes
  // say it down-converts its inputs or reduces in less than fp32.
  static std::string describe(const Desc& cfg, std::string* name, bool* excluded) {
    Desc engine;
    TRY(engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine"));
    cudnnBackendDescriptor_t ed = engine.get();
    int64_t n = 0, index = -1;
    TRY_G("get CUDNN_ATTR_ENGINECFG_ENGINE",
          cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &ed));
    TRY_G("get CUDNN_ATTR_ENGINE_GLOBAL_INDEX",
          cudnnBackendGetAttribute(ed, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index));
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int64_t n_notes = 0;
    TRY_G("get CUDNN_ATTR_ENGINE_NUMERICAL_NOTE",
          cudnnBackendGetAttribute(ed, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                   CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n_notes, notes));
    *excluded = false;
    for (int64_t i = 0; i < std::min<int64_t>(n_notes, CUDNN_NUMERICAL_NOTE_TYPE_COUNT); ++i)
      if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
          notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)
        *excluded = true;
    std::vector<Desc> knobs(CUDNN_KNOB_TYPE_COUNTS);
    std::vector<cudnnBackendDescriptor_t> raw(knobs.size());
    for (size_t i = 0; i < knobs.size(); ++i) {
      TRY(knobs[i].create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, "knob choice"));
      raw[i] = knobs[i].get();
    }
    int64_t n_knobs = 0;
    TRY_G("get CUDNN_ATTR_ENGINECFG_KNOB_CHOICES",
          cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                   int64_t(raw.size()), &n_knobs, raw.data()));
    *name = "engine " + std::to_string(index) + " {";
    for (int64_t i = 0; i < std::min<int64_t>(n_knobs, int64_t(raw.size())); ++i) {
      cudnnBackendKnobType_t type{};
      int64_t value = 0;
      TRY_G("get CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE",
            cudnnBackendGetAttribute(raw[size_t(i)], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n,
                                     &type));
      TRY_G("get CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE",
            cudnnBackendGetAttribute(raw[size_t(i)], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &n,
                                     &value));
      *name += (i ? " k" : "k") + std::to_string(int(type)) + "=" + std::to_string(value);
    }
    *name += "}";
    return {};
  }

  cudnnHandle_t h_ = nullptr;
  Form form_ = Form::kConv;
  Desc graph_, plan_;
  const void *w_ = nullptr, *b_ = nullptr, *s_ = nullptr;
  void* ws_ = nullptr;
  std::map<std::pair<const void*, const void*>, Desc> packs_;
};

struct Handle {
  cudnnHandle_t h = nullptr;
  ~Handle() {
    if (h) cudnnDestroy(h);
  }
};

std::string run_shape(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                      const std::vector<float>& bias, const std::vector<void*>& xs,
                      const std::vector<void*>& ys, int iters, cudaStream_t stream,
                      std::vector<uint16_t>* y_host, VendorPath* r) {
  if (d.t != 1) return "the cuDNN graph baseline covers T = 1 (2D convs) only";
  if (xs.empty() || ys.empty()) return "no buffers";
  ShapeRun run(d, xs, ys, iters, stream);
  run.profile_label = "cudnn graph";
  const VendorConv& vc = run.vc;
  {
    const int oh = (vc.ch + 2 * vc.pad - 3) / vc.stride + 1, ow = (vc.cw + 2 * vc.pad - 3) / vc.stride + 1;
    TRY(output_size_mismatch("cuDNN graph API", d, vc, vc.frames, vc.cout, oh, ow));
  }
  Handle handle;
  TRY_G("cudnnCreate", cudnnCreate(&handle.h));
  TRY_G("cudnnSetStream", cudnnSetStream(handle.h, stream));
  TRY(run.upload(w_krsc, bias));
  TRY(run.prepare_inputs());

  // The conv alone: required (the path fails without it).
  Graph conv_graph;
  TRY(conv_graph.build(handle.h, vc, Form::kConv, CUDNN_DATA_FLOAT));
  TRY(conv_graph.tune(run.w, nullptr, nullptr, run.conv_in, ys, stream));
  // The conv with its bias fused: fp32 bias first, then bf16; a note when neither has a plan.
  enum { kKernel = 0, kFused = 1, kBiasWays = 2 };
  bool usable[kBiasWays] = {true, false};
  std::string notes;
  std::unique_ptr<Graph> fused_graph;
  for (const bool f32 : {true, false}) {
    auto g = std::make_unique<Graph>();
    std::string e = g->build(handle.h, vc, Form::kConvBias, f32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16);
    if (e.empty())
      e = g->tune(run.w, f32 ? static_cast<const void*>(run.bias_f32) : run.b, nullptr, run.conv_in, ys, stream);
    (void)cudaGetLastError();
    if (e.empty()) {
      fused_graph = std::move(g);
      usable[kFused] = true;
      break;
    }
    notes += std::string("fused, ") + (f32 ? "fp32" : "bf16") + " bias: " + e + "; ";
  }
  TRY(run.for_each_timed_pair([&](const void* x, void* y) -> std::string {
    TRY(conv_graph.pack(x, y));
    if (usable[kFused]) TRY(fused_graph->pack(x, y));
    return {};
  }));

  auto conv = [&](const void* x, void* y) { return conv_graph.run(x, y); };
  auto conv_bias = [&](int way, const void* x, void* y) -> std::string {
    if (way == kFused) return fused_graph->run(x, y);
    TRY(conv_graph.run(x, y));
    return add_bias(y, run.bias_f32, run.y_elems, vc.cout, stream);
  };
  static const char* const kBiasName[kBiasWays] = {
      "graph conv + own bias kernel (fp32 bias, separate pass over y, like PyTorch's add_)",
      "graph conv + pointwise add (bias fused into the conv's plan)"};
  static const char* const kNoteName[kBiasWays] = {"own bias kernel", "fused"};
  double way_us[kBiasWays];
  ShapeRun::Times t;
  TRY(run.check_time_fetch(ShapeRun::Ways<kBiasWays>{kNoteName, usable, kKernel}, conv, conv_bias, way_us, &t,
                           y_host));
  r->algo = "conv: " + conv_graph.name;
  if (usable[kFused]) r->algo += "; fused: " + fused_graph->name;
  r->workspace_bytes = t.best_way == kFused ? fused_graph->ws_bytes : conv_graph.ws_bytes;
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


// --- FP8: the same problem with e4m3 operands ---------------------------------------------------
// Accepted difference from the bf16 cuDNN output: e4m3 keeps 3 mantissa bits, so each operand is
// off by up to 2^-4 relative and a random conv's output by about 5 % (rel L2); a wrong result is
// off by about 100 %.
constexpr double kFp8RelL2Tol = 0.15;

// bf16 -> e4m3fn at unit scale: the bench's inputs lie in [-1, 1], well inside e4m3's range.
__global__ void to_e4m3_kernel(const uint16_t* __restrict__ x, uint8_t* __restrict__ y, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = vaeconv::float_to_e4m3fn(vaeconv::bf16_to_float(x[i]));
}

// The engine's pad / upsample on e4m3 data: vendor_common.hpp's kernels moving 16 channels per
// 16-byte vector (Cin % 16 == 0, checked by the caller).
std::string prep_e4m3(const VendorConv& vc, vaeconv::ConvKind kind, const void* x, void* y, cudaStream_t s) {
  const int cv = vc.cin / 16;
  const int64_t n = int64_t(vc.frames) * vc.ch * vc.cw * cv;
  if (kind == vaeconv::ConvKind::kDownsample)
    pad_br_kernel<<<grid_for(n), 256, 0, s>>>(static_cast<const uint4*>(x), static_cast<uint4*>(y), vc.frames,
                                               vc.h, vc.w, cv);
  else
    upsample2x_kernel<<<grid_for(n), 256, 0, s>>>(static_cast<const uint4*>(x), static_cast<uint4*>(y), vc.frames,
                                                   vc.h, vc.w, cv);
  TRY_CUDA(cudaGetLastError());
  return {};
}

// Device buffers, released on every return path.
struct DeviceBuffers {
  std::vector<void*> all;
  std::string alloc(void** p, size_t bytes) {
    TRY_CUDA(cudaMalloc(p, bytes));
    all.push_back(*p);
    return {};
  }
  ~DeviceBuffers() {
    for (void* p : all) (void)cudaFree(p);
  }
};

// The fp8 graph on the problem: inputs quantized from xs outside the timed region (as a previous
// layer would hand them over), weights per output channel (largest magnitude -> 448, descaled in
// the graph), bias fp32; its output on xs[0] checked against y_ref (the bf16 cuDNN output).
std::string run_shape_fp8(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                          const std::vector<float>& bias, const std::vector<void*>& xs,
                          const std::vector<void*>& ys, int iters, cudaStream_t stream,
                          const std::vector<uint16_t>& y_ref, VendorPath* r) {
  if (d.t != 1) return "the cuDNN fp8 baseline covers T = 1 (2D convs) only";
  if (xs.empty() || ys.empty()) return "no buffers";
  if (y_ref.size() != size_t(d.out_elements())) return "no bf16 cuDNN output to check the fp8 conv against";
  const VendorConv vc(d);
  if (vc.has_prep && vc.cin % 16) return "the fp8 pad / upsample kernel needs Cin % 16 == 0";
  const size_t k = size_t(9) * size_t(vc.cin);
  if (w_krsc.size() != size_t(vc.cout) * k) return "weights are not [Cout][3][3][Cin]";
  std::vector<uint8_t> w8(w_krsc.size());
  std::vector<float> descale(size_t(vc.cout));
  for (size_t co = 0; co < size_t(vc.cout); ++co) {
    float amax = 0;
    for (size_t j = 0; j < k; ++j) amax = std::max(amax, std::fabs(vaeconv::bf16_to_float(w_krsc[co * k + j])));
    const float q = amax > 0 ? vaeconv::kE4M3FnMax / amax : 1.f;
    descale[co] = 1.f / q;
    for (size_t j = 0; j < k; ++j) w8[co * k + j] = vaeconv::float_to_e4m3fn(vaeconv::bf16_to_float(w_krsc[co * k + j]) * q);
  }
  DeviceBuffers mem;
  void *w_d = nullptr, *s_d = nullptr, *b_d = nullptr, *tmp = nullptr;
  TRY(mem.alloc(&w_d, w8.size()));
  TRY(mem.alloc(&s_d, descale.size() * 4));
  TRY(mem.alloc(&b_d, bias.size() * 4));
  TRY_CUDA(cudaMemcpy(w_d, w8.data(), w8.size(), cudaMemcpyHostToDevice));
  TRY_CUDA(cudaMemcpy(s_d, descale.data(), descale.size() * 4, cudaMemcpyHostToDevice));
  TRY_CUDA(cudaMemcpy(b_d, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice));
  const int64_t x_elems = int64_t(vc.frames) * vc.h * vc.w * vc.cin;
  const size_t prep_elems = vc.prep_bytes() / 2;
  std::vector<void*> src(xs.size()), conv_in(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    TRY(mem.alloc(&src[i], size_t(x_elems)));
    to_e4m3_kernel<<<grid_for(x_elems), 256, 0, stream>>>(static_cast<const uint16_t*>(xs[i]),
                                                          static_cast<uint8_t*>(src[i]), x_elems);
    TRY_CUDA(cudaGetLastError());
    conv_in[i] = src[i];
    if (vc.has_prep) {
      TRY(mem.alloc(&conv_in[i], prep_elems));
      TRY(prep_e4m3(vc, d.kind, src[i], conv_in[i], stream));
    }
  }
  if (vc.has_prep) TRY(mem.alloc(&tmp, prep_elems));
  TRY_CUDA(cudaStreamSynchronize(stream));

  Handle handle;
  TRY_G("cudnnCreate", cudnnCreate(&handle.h));
  TRY_G("cudnnSetStream", cudnnSetStream(handle.h, stream));
  Graph g;
  TRY(g.build(handle.h, vc, Form::kFp8ScaleBias, CUDNN_DATA_FLOAT));
  TRY(g.tune(w_d, b_d, s_d, conv_in, ys, stream));
  for (size_t i = 0; i < size_t(std::max(iters, kWarmup)); ++i) {
    void* y = ys[i % ys.size()];
    TRY(g.pack(conv_in[i % conv_in.size()], y));
    TRY(g.pack(vc.has_prep ? tmp : src[i % src.size()], y));
  }
  auto pipeline = [&](int i) -> std::string {
    const void* x = src[size_t(i) % src.size()];
    if (vc.has_prep) {
      TRY(prep_e4m3(vc, d.kind, x, tmp, stream));
      x = tmp;
    }
    return g.run(x, ys[size_t(i) % ys.size()]);
  };
  auto conv_alone = [&](int i) { return g.run(conv_in[size_t(i) % conv_in.size()], ys[size_t(i) % ys.size()]); };

  // The check: poison, the pipeline on xs[0]'s quantized copy, the whole output against y_ref.
  const size_t y_bytes = size_t(d.out_elements()) * 2;
  TRY_CUDA(cudaMemset(ys[0], 0xFF, y_bytes));
  TRY(pipeline(0));
  TRY_CUDA(cudaStreamSynchronize(stream));
  std::vector<uint16_t> got(y_ref.size());
  TRY_CUDA(cudaMemcpy(got.data(), ys[0], y_bytes, cudaMemcpyDeviceToHost));
  double rel = 0;
  const bool finite = rel_l2(got, y_ref, &rel);
  char buf[160];
  std::snprintf(buf, sizeof buf, "rel L2 %.3g against the bf16 cuDNN output (tolerance %.2g)", rel, kFp8RelL2Tol);
  if (!finite || rel > kFp8RelL2Tol)
    return std::string("cuDNN fp8 graph: output ") + (finite ? buf : "non-finite");

  Events ev;
  TRY(ev.create());
  TRY(time_median(conv_alone, iters, stream, ev, &r->conv_us));
  if (vc.has_prep) TRY(time_median(pipeline, iters, stream, ev, &r->pipeline_us));
  else r->pipeline_us = r->conv_us;
  r->conv_fused_us = r->conv_us;
  // --profile: the engine once more, alone in the profiler's range (profile_bracket.hpp).
  if (profile_state().on)
    profile_bracket("cudnn fp8 graph",
                    std::string(vc.has_prep ? "e4m3 pad / upsample kernel + " : "") +
                        "fp8 conv + descale + bias (fused)",
                    [&] { return pipeline(0); });
  r->algo = g.name;
  r->workspace_bytes = g.ws_bytes;
  r->bias_mode = "e4m3 x (unit scale) and w (per output channel), fp32 accumulation, descale and bias fused";
  r->bias_notes = buf;
  r->ran = true;
  return {};
}

// --- Video rows: the conv3d of the cached causal conv (video_vendor.hpp) -----------------------
// The conv graph (and the fused-bias graph) with 3 spatial dims on the padded NDHWC input, padding
// 0, tuned as above; the engine's cat + pad and the timing are video_vendor_run.hpp's.
std::string run_video_shape(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_ktrsc,
                            const std::vector<float>& bias, const std::vector<void*>& caches,
                            const std::vector<void*>& xs, const std::vector<void*>& ys, int iters,
                            cudaStream_t stream, std::vector<uint16_t>* y_host, VendorPath* r) {
  VideoRun run(d, caches, xs, ys, iters, stream);
  run.profile_label = "cudnn graph";
  TRY(run.unsupported());
  GraphConvShape s;
  s.spatial = 3;
  s.cin = d.cin;
  s.cout = d.cout;
  s.in[0] = run.tp;
  s.in[1] = run.hp;
  s.in[2] = run.wp;
  const std::vector<int64_t> yd = s.y_dims();
  if (yd[2] != d.out_t() || yd[3] != d.out_h() || yd[4] != d.out_w())
    return "cuDNN graph API: the conv3d's output differs from vaeconv's";
  Handle handle;
  TRY_G("cudnnCreate", cudnnCreate(&handle.h));
  TRY_G("cudnnSetStream", cudnnSetStream(handle.h, stream));
  TRY(run.upload(w_ktrsc, bias));
  TRY(run.prepare_inputs());
  Graph conv_graph;
  TRY(conv_graph.build(handle.h, s, Form::kConv, CUDNN_DATA_FLOAT));
  TRY(conv_graph.tune(run.w, nullptr, nullptr, run.padded, ys, stream));
  enum { kKernel = 0, kFused = 1, kBiasWays = 2 };
  bool usable[kBiasWays] = {true, false};
  std::string notes;
  Graph fused_graph;
  {
    std::string e = fused_graph.build(handle.h, s, Form::kConvBias, CUDNN_DATA_FLOAT);
    if (e.empty()) e = fused_graph.tune(run.w, run.bias_f32, nullptr, run.padded, ys, stream);
    (void)cudaGetLastError();
    if (e.empty()) usable[kFused] = true;
    else notes += "fused, fp32 bias: " + e + "; ";
  }
  TRY(run.for_each_timed_pair([&](const void* x, void* y) -> std::string {
    TRY(conv_graph.pack(x, y));
    if (usable[kFused]) TRY(fused_graph.pack(x, y));
    return {};
  }));
  auto conv = [&](const void* x, void* y) { return conv_graph.run(x, y); };
  auto conv_bias = [&](int way, const void* x, void* y) -> std::string {
    if (way == kFused) return fused_graph.run(x, y);
    TRY(conv_graph.run(x, y));
    return add_bias(y, run.bias_f32, run.y_elems, int(d.cout), stream);
  };
  static const char* const kBiasName[kBiasWays] = {
      "graph conv3d + own bias kernel (fp32 bias, separate pass over y, like PyTorch's add_)",
      "graph conv3d + pointwise add (bias fused into the conv's plan)"};
  static const char* const kNoteName[kBiasWays] = {"own bias kernel", "fused"};
  double way_us[kBiasWays];
  ShapeRun::Times t;
  TRY(run.check_time_fetch(ShapeRun::Ways<kBiasWays>{kNoteName, usable, kKernel}, conv, conv_bias, way_us, &t,
                           y_host));
  r->algo = "conv: " + conv_graph.name;
  if (usable[kFused]) r->algo += "; fused: " + fused_graph.name;
  r->workspace_bytes = t.best_way == kFused ? fused_graph.ws_bytes : conv_graph.ws_bytes;
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

VendorPath cudnn_graph_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                             const std::vector<float>& bias, const std::vector<void*>& xs,
                             const std::vector<void*>& ys, int iters, void* stream,
                             std::vector<uint16_t>* y_host) {
  return vendor::vendor_result<VendorPath>([&](VendorPath* r) {
    return run_shape(d, w_krsc, bias, xs, ys, iters, static_cast<cudaStream_t>(stream), y_host, r);
  });
}

VendorPath cudnn_graph_fp8_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_krsc,
                                 const std::vector<float>& bias, const std::vector<void*>& xs,
                                 const std::vector<void*>& ys, int iters, void* stream,
                                 const std::vector<uint16_t>& y_ref) {
  return vendor::vendor_result<VendorPath>([&](VendorPath* r) {
    return run_shape_fp8(d, w_krsc, bias, xs, ys, iters, static_cast<cudaStream_t>(stream), y_ref, r);
  });
}

VendorPath cudnn_graph_video_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_ktrsc,
                                   const std::vector<float>& bias, const std::vector<void*>& caches,
                                   const std::vector<void*>& xs, const std::vector<void*>& ys, int iters,
                                   void* stream, std::vector<uint16_t>* y_host) {
  return vendor::vendor_result<VendorPath>([&](VendorPath* r) {
    return run_video_shape(d, w_ktrsc, bias, caches, xs, ys, iters, static_cast<cudaStream_t>(stream), y_host, r);
  });
}

}  // namespace vaeconv_bench
