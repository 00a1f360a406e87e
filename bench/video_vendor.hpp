// video_vendor.hpp — the vendor baseline of vaeconv_bench's video rows (video_shapes.hpp): cuDNN's
// conv3d of the cached causal conv as diffusers' WanCausalConv3d runs it on channels_last_3d
// tensors: torch.cat([cache, x], dim=2), F.pad((1, 1, 1, 1, 2 - cache_frames, 0)), conv3d with
// padding 0 (NDHWC bf16 activations, KTRSC bf16 filter, fp32 compute), then the bias.
//
// NVIDIA with cuDNN (VAECONV_BENCH_CUDNN): two paths, the faster counts, as for the image rows:
//   legacy  cudnnFindConvolutionForwardAlgorithmEx over N-d descriptors (video_cudnn.cpp);
//   graph   the backend API's conv graph tuned over heuristics mode A + fallback engine configs
//           (cudnn_graph_baseline.cpp, its Graph built with 3 spatial dims).
// Both time, on the same buffers (video_vendor_run.hpp):
//   conv_nobias_us  the conv3d alone on a ready padded input;
//   conv_us         the conv3d + bias (the fastest way) on a ready padded input ("conv alone");
//   pipeline_us     the cat copy + the pad kernel + conv3d + bias: what the engine runs ("engine").
// Elsewhere (MIOpen, or no cuDNN): a stub that says why there is no baseline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vendor_baseline.hpp"
#include "vaeconv/conv/conv_desc.hpp"

namespace vaeconv_bench {

#if defined(VAECONV_BENCH_CUDNN)
// d: the cached conv (N = 1, cache_frames > 0); w_ktrsc: bf16 bits [Cout][3][3][3][Cin] (the packed
// rows without their padding), host; bias: Cout floats (bf16-representable), host;
// caches, xs, ys: the device buffers vaeconv's run used, per rotated copy (cache [cache_frames, H,
// W, C], x [T, H, W, C], y [T, H, W, Cout], dense); y_host: the engine's output for copy 0
// (poisoned first), for the full comparison with vaeconv's. All allocation happens before timing.
VendorResult video_vendor_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_ktrsc,
                                const std::vector<float>& bias, const std::vector<void*>& caches,
                                const std::vector<void*>& xs, const std::vector<void*>& ys,
                                int iters, void* stream, std::vector<uint16_t>* y_host);
// The graph API's path (cudnn_graph_baseline.cpp); video_vendor_bench runs it beside the legacy one.
VendorPath cudnn_graph_video_bench(const vaeconv::ConvDesc& d, const std::vector<uint16_t>& w_ktrsc,
                                   const std::vector<float>& bias, const std::vector<void*>& caches,
                                   const std::vector<void*>& xs, const std::vector<void*>& ys,
                                   int iters, void* stream, std::vector<uint16_t>* y_host);
#else
inline VendorResult video_vendor_bench(const vaeconv::ConvDesc&, const std::vector<uint16_t>&,
                                       const std::vector<float>&, const std::vector<void*>&,
                                       const std::vector<void*>&, const std::vector<void*>&, int,
                                       void*, std::vector<uint16_t>*) {
  VendorResult r;
  r.error = "the video rows' vendor baseline is cuDNN's conv3d (a CUDA build with cuDNN)";
  return r;
}
#endif

}  // namespace vaeconv_bench
