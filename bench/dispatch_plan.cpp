// dispatch_plan: prints, as JSON, the kernel instance conv_forward runs for every seed shape
// (conv/vae_shapes.hpp) in bf16 and fp8, with its grid, K tiles and LDS (vaeconv::which_kernel),
// per target: each entry's "target" names the table set it was planned from (AMD: gfx942 and
// gfx950, one entry per shape and dtype each; NVIDIA: "nvidia").
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
        const vaeconv::ConvDesc d = s.desc(dt);
        vaeconv::KernelPlan q;
        const vaeconv::Status st = vaeconv::which_kernel(d, &q, set);
        if (!st.ok()) {
          std::fprintf(stderr, "dispatch_plan: %s: %s\n", s.id, st.message().c_str());
          ++failures;
          continue;
        }
        std::fprintf(
            f,
            "%s  {\"target\": \"%s\", \"id\": \"%s\", \"kind\": \"%s\", \"dtype\": \"%s\", "
            "\"cin\": %d, \"cout\": %d, "
            "\"h\": %d, \"w\": %d, \"out_h\": %lld, \"out_w\": %lld, \"calls\": %d, "
            "\"resolution\": %d, \"flops\": %.0f,\n"
            "   \"kernel\": {\"name\": \"%s\", \"family\": \"%s\", \"bm\": %d, \"bn\": %d, "
            "\"bk\": %d, \"warps_m\": %d, \"warps_n\": %d, \"stages\": %d, \"min_blocks\": %d, "
            "\"threads\": %d, \"wave_size\": %d, \"geometry\": [%d, %d, %d, %d], \"vector\": %s, "
            "\"launches\": %d, \"tiles\": %lld, \"k_tiles\": %d, \"lds_bytes\": %d, "
            "\"patch\": [%d, %d]}}",
            first ? "" : ",\n", q.target().c_str(), s.id, kind_name(s.kind),
            dt == vaeconv::DType::kFP8E4M3 ? "fp8" : "bf16",
            s.cin, s.cout, s.h, s.w, static_cast<long long>(d.out_h()),
            static_cast<long long>(d.out_w()), s.calls, s.resolution, d.flops(), q.name().c_str(),
            q.family().c_str(), q.bm, q.bn, q.bk, q.warps_m, q.warps_n, q.stages, q.min_blocks,
            q.threads, q.wave_size, q.geo_stride, q.geo_pad, q.geo_up, q.geo_taps,
            q.choice.vector ? "true" : "false", q.launches, static_cast<long long>(q.tiles),
            q.k_tiles, q.lds_bytes, q.patch_rows, q.patch_cols);
        first = false;
      }
    }
  }
  std::fprintf(f, "\n]}\n");
  if (f != stdout) std::fclose(f);
  return failures == 0 ? 0 : 1;
}
