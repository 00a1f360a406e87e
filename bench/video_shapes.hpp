// video_shapes.hpp — vaeconv_bench's video rows (issue 27): the cached causal 3x3x3 convs that
// dominate a chunked Wan 2.1 480p decode, timed beside cuDNN's conv3d (vaeconv_bench --video).
//
// Each row is a decode chunk as diffusers runs it: N = 1, C -> C channels, cache_frames (= 2)
// frames of the previous chunk in front of t new frames, T_out = t. vaeconv runs its cached conv
// (ConvDesc::causal3x3x3_cached, the entry the PyTorch op causal_conv3d_cached calls: the cache
// read in place, no cat) through the bench's timed conv (bench_conv_entry.hpp, so a tile sweep's
// candidate is timed too); the vendor side is cuDNN's conv3d on the concatenated, causally padded
// NDHWC input (video_vendor.hpp). bench/video_bench.cpp runs them.
#pragma once
#include <array>
#include <string>

#include "vaeconv/conv/conv_desc.hpp"

namespace vaeconv_bench {

struct VideoShape {
  const char* id;
  int c;              // Cin = Cout
  int h, w;           // frame size
  int t;              // new frames of the chunk (T_out = t)
  int cache_frames;   // cached frames in front of them
  const char* where;  // the layers of Wan 2.1's decoder it stands for

  vaeconv::ConvDesc desc(vaeconv::DType dt = vaeconv::DType::kBF16) const {
    return vaeconv::ConvDesc::causal3x3x3_cached(1, t, h, w, c, c, cache_frames, dt);
  }
};

// docs/video.md's dominant convs (bench/wan_video_e2e.py's CONV_SHAPES): the ids end in the time
// window T_in = cache_frames + t.
inline constexpr std::array<VideoShape, 3> kVideoShapes = {{
    {"wan_cached_96_480x832_t6", 96, 480, 832, 4, 2, "decoder up block 3 resnets (480x832)"},
    {"wan_cached_192_240x416_t6", 192, 240, 416, 4, 2, "decoder up block 2 resnets (240x416)"},
    {"wan_cached_384_120x208_t4", 384, 120, 208, 2, 2, "decoder up block 1 resnets (120x208)"},
}};

inline bool is_video_shape(const std::string& id) {
  for (const VideoShape& s : kVideoShapes)
    if (id == s.id) return true;
  return false;
}

// What vaeconv_bench's options say to the video rows.
struct VideoOptions {
  std::string only, json;  // one row (an id of kVideoShapes) or all; JSON output file
  int iters = 20;
  bool vendor = true, fp8 = true, bf16 = true;
  double peak_tflops = 0, mem_tbps = 0;
};

// --video --list: one JSON object per line for each video row (no GPU needed).
int list_video_shapes();

// Runs the video rows (a GPU is present): the table on stdout, the JSON when asked. Returns the
// process exit status (1 when any check failed).
int run_video_bench(const VideoOptions& o);

}  // namespace vaeconv_bench
