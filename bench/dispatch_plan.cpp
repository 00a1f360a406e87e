// dispatch_plan: prints, as JSON, the kernel instance conv_forward runs for every seed shape
// (conv/vae_shapes.hpp) in bf16 and fp8, with its grid, K tiles and LDS (vaeconv::which_kernel),
// per target: each entry's "target" names the table set it was planned from (AMD: gfx942 and
// gfx950, one entry per shape and dtype each; NVIDIA: "nvidia"). After them, with "set":
// "video", the dominant convs of a chunked Wan 2.1 480x832 video encode / decode (issue 27): the
// cached causal 3x3x3 conv and the (3,1,1) time_convs of upsample3d / downsample3d, whose kernels
// are the implicit GEMM with the cached-frames or temporal A loader ("loader"). "tail": the tail
// rule's split (kernel/tail_split.hpp): [pixels of each frame the tile keeps, the tail tile's BM,
// BN, its blocks], all 0 where the conv runs in one launch (per phase).
// Host code only: it is compiled by the GPU compiler (the tile table names the device atoms) but
// calls no GPU API, so it runs on a machine without a GPU. The CDNA performance model
// (bench/cdna_model/) reads its output to pair each conv with its kernel's assembly.
//
//   dispatch_plan [out.json]     (stdout without an argument)
#include <cstdio>
#include <string>

#include "vaeconv/api/conv.hpp"
#include "vaeconv/conv/vae_shapes.hpp"

namespace {

const char* kind_name(vaeconv::ConvKind k) {
  switch (k) {
    case vaeconv::ConvKind::kCausal3x3x3: return "causal";
    case vaeconv::ConvKind::kDownsample: return "downsample";
    case vaeconv::ConvKind::kUpsample: return "upsample";
    case vaeconv::ConvKind::kTemporal: return "temporal";
  }
  return "?";
}

const char* backend() {
#if defined(VAECONV_BACKEND_HIP)
  return "hip";
#else
  return "cuda";
#endif
}

// A video conv of the chunked Wan 2.1 decode / encode at 480x832 (N = 1): the new frames t after
// cache_frames cached ones.
struct VideoConv {
  const char* id;
  vaeconv::ConvKind kind;  // kCausal3x3x3 (cached) or kTemporal
  int cin, cout, h, w, t, cache_frames;
  int stride_t;            // the temporal conv's: 1 upsample3d, 2 downsample3d

  vaeconv::ConvDesc desc(vaeconv::DType dt) const {
    if (kind == vaeconv::ConvKind::kTemporal)
      return vaeconv::ConvDesc::temporal3x1x1(1, t, h, w, cin, cout, stride_t, cache_frames, dt);
    return vaeconv::ConvDesc::causal3x3x3_cached(1, t, h, w, cin, cout, cache_frames, dt);
  }
};

// Issue 27's dominant shapes: the decoder's cached convs with two cached frames (T_in 6 -> T_out
// 4 and 4 -> 2), upsample3d's time_conv on a decoder chunk (one latent frame, then two frames
// after the first temporal doubling; two cached frames), and downsample3d's on an encoder chunk of
// four frames (then two after the first halving; one cached frame).
constexpr VideoConv kVideoConvs[] = {
    {"video_cached_96_480x832_t6to4", vaeconv::ConvKind::kCausal3x3x3, 96, 96, 480, 832, 4, 2, 1},
    {"video_cached_192_240x416_t6to4", vaeconv::ConvKind::kCausal3x3x3, 192, 192, 240, 416, 4, 2,
     1},
    {"video_cached_384_120x208_t4to2", vaeconv::ConvKind::kCausal3x3x3, 384, 384, 120, 208, 2, 2,
     1},
    {"video_up3d_time_384_60x104_t3to1", vaeconv::ConvKind::kTemporal, 384, 768, 60, 104, 1, 2, 1},
    {"video_up3d_time_384_120x208_t4to2", vaeconv::ConvKind::kTemporal, 384, 768, 120, 208, 2, 2,
     1},
    {"video_down3d_time_192_120x208_t5to2", vaeconv::ConvKind::kTemporal, 192, 192, 120, 208, 4, 1,
     2},
    {"video_down3d_time_384_60x104_t3to1", vaeconv::ConvKind::kTemporal, 384, 384, 60, 104, 2, 1,
     2},
};

// The A loader of the implicit-GEMM instance visit_geometry (api/kernel_plan.hpp) runs for d:
// "cached" (CachedCausalGeometry, kernel/cached_frames.hpp) for a causal conv with a cache,
// "temporal" (TemporalGeometry, kernel/temporal_gather.hpp), else "" (the plain gather).
const char* loader_name(const vaeconv::ConvDesc& d, const vaeconv::KernelPlan& q) {
  if (q.choice.family != vaeconv::KernelChoice::Family::kImplicitGemm) return "";
  if (d.kind == vaeconv::ConvKind::kTemporal) return "temporal";
  if (d.kind == vaeconv::ConvKind::kCausal3x3x3 && d.cache_frames > 0) return "cached";
  return "";
}

// KernelPlan::name() with the loader in place of the geometry word it reads off the geometry's
// numbers (a cached instance has the causal numbers, a temporal one none of its words).
std::string kernel_name(const vaeconv::KernelPlan& q, const std::string& loader) {
  std::string s = q.name();
  if (loader.empty()) return s;
  const std::string tail = q.choice.vector ? " vector" : " scalar";
  const size_t cut = s.rfind(' ', s.size() - tail.size() - 1);
  return s.substr(0, cut) + " " + loader + tail;
}

// One plan entry (no leading separator); false where which_kernel refuses the conv.
bool print_entry(FILE* f, bool first, const char* set, const char* id, vaeconv::ConvKind kind,
                 const vaeconv::ConvDesc& d, int calls, int resolution,
                 vaeconv::kernel::TableSet table_set) {
  vaeconv::KernelPlan q;
  const vaeconv::Status st = vaeconv::which_kernel(d, &q, table_set);
  if (!st.ok()) {
    std::fprintf(stderr, "dispatch_plan: %s: %s\n", id, st.message().c_str());
    return false;
  }
  const std::string loader = loader_name(d, q);
  std::fprintf(
      f,
      "%s  {\"target\": \"%s\", \"set\": \"%s\", \"id\": \"%s\", \"kind\": \"%s\", "
      "\"dtype\": \"%s\", \"n\": %lld, \"t\": %lld, \"cache_frames\": %d, \"out_t\": %lld, "
      "\"out_frames_stored\": %lld, \"stride_t\": %d, \"cin\": %d, \"cout\": %d, "
      "\"h\": %d, \"w\": %d, \"out_h\": %lld, \"out_w\": %lld, \"gemm_k\": %lld, "
      "\"calls\": %d, \"resolution\": %d, \"flops\": %.0f,\n"
      "   \"kernel\": {\"name\": \"%s\", \"family\": \"%s\", \"loader\": \"%s\", \"bm\": %d, "
      "\"bn\": %d, \"bk\": %d, \"warps_m\": %d, \"warps_n\": %d, \"stages\": %d, \"lds_stages\": %d, "
      "\"min_blocks\": %d, \"threads\": %d, \"slices_k\": %d, \"wave_size\": %d, "
      "\"geometry\": [%d, %d, %d, %d], "
      "\"vector\": %s, \"launches\": %d, \"tiles\": %lld, \"k_tiles\": %d, \"lds_bytes\": %d, "
      "\"patch\": [%d, %d], \"tail\": [%d, %d, %d, %lld]}}",
      first ? "" : ",\n", q.target().c_str(), set, id, kind_name(kind),
      d.in_dtype == vaeconv::DType::kFP8E4M3 ? "fp8" : "bf16", static_cast<long long>(d.n),
      static_cast<long long>(d.t), d.cache_frames, static_cast<long long>(d.out_t()),
      static_cast<long long>(d.out_frames_stored()), d.stride_t, static_cast<int>(d.cin),
      static_cast<int>(d.cout), static_cast<int>(d.h), static_cast<int>(d.w),
      static_cast<long long>(d.out_h()), static_cast<long long>(d.out_w()),
      static_cast<long long>(d.gemm_k()), calls, resolution, d.flops(),
      kernel_name(q, loader).c_str(), q.family().c_str(), loader.c_str(), q.bm, q.bn, q.bk,
      q.warps_m, q.warps_n, q.stages, q.lds_stages, q.min_blocks, q.threads, q.slices_k,
      q.wave_size, q.geo_stride,
      q.geo_pad, q.geo_up, q.geo_taps, q.choice.vector ? "true" : "false", q.launches,
      static_cast<long long>(q.tiles), q.k_tiles, q.lds_bytes, q.patch_rows, q.patch_cols,
      q.choice.tail_begin, q.tail_bm, q.tail_bn, static_cast<long long>(q.tail_tiles));
  return true;
}

// The table sets the build's devices run: AMD one per target (gfx942, gfx950), each planned
// separately (the model predicts each target from its own table); NVIDIA one.
#if defined(VAECONV_BACKEND_HIP)
constexpr vaeconv::kernel::TableSet kTableSets[] = {vaeconv::kernel::TableSet::kGfx942,
                                                    vaeconv::kernel::TableSet::kGfx950};
#else
constexpr vaeconv::kernel::TableSet kTableSets[] = {vaeconv::kernel::TableSet::kPrimary};
#endif

}  // namespace

int main(int argc, char** argv) {
  FILE* f = argc > 1 ? std::fopen(argv[1], "w") : stdout;
  if (f == nullptr) {
    std::fprintf(stderr, "dispatch_plan: cannot write %s\n", argv[1]);
    return 1;
  }
  std::fprintf(f, "{\"backend\": \"%s\", \"plans\": [\n", backend());
  bool first = true;
  int failures = 0;
  for (vaeconv::kernel::TableSet set : kTableSets) {
    for (const vaeconv::VaeShape& s : vaeconv::kVaeShapes) {
      for (vaeconv::DType dt : {vaeconv::DType::kBF16, vaeconv::DType::kFP8E4M3}) {
        if (!print_entry(f, first, "seed", s.id, s.kind, s.desc(dt), s.calls, s.resolution, set)) {
          ++failures;
          continue;
        }
        first = false;
      }
    }
  }
  // The video convs after every seed entry (a reader of the seed plan sees them last); resolution
  // 0: they belong to neither image set's totals.
  for (vaeconv::kernel::TableSet set : kTableSets) {
    for (const VideoConv& v : kVideoConvs) {
      for (vaeconv::DType dt : {vaeconv::DType::kBF16, vaeconv::DType::kFP8E4M3}) {
        if (!print_entry(f, first, "video", v.id, v.kind, v.desc(dt), 1, 0, set)) {
          ++failures;
          continue;
        }
        first = false;
      }
    }
  }
  std::fprintf(f, "\n]}\n");
  if (f != stdout) std::fclose(f);
  return failures == 0 ? 0 : 1;
}
