// vaeconv/conv/upsample_phases.hpp — the upsample conv as four 2 x 2 convs on the source frame.
//
// A nearest-exact x2 upsample followed by a 3 x 3, pad-1 conv gives output pixel (2a + p, 2b + q)
// (the output phase (p, q)) from source rows a - 1 + p + dh and columns b - 1 + q + dw, dh, dw in
// {0, 1} (zero outside the frame, which is the upsampled frame's zero padding as well):
//   y[2a + p][2b + q] = sum over dh, dw, c of W_pq[dh][dw][c] * x[a - 1 + p + dh][b - 1 + q + dw][c]
// where W_pq[dh][dw] sums the 3 x 3 weights w[kh][kw] over kh in taps(p, dh), kw in taps(q, dw):
//   phase 0: dh = 0 is kh = 0 alone, dh = 1 sums kh = 1 and 2;
//   phase 1: dh = 0 sums kh = 0 and 1, dh = 1 is kh = 2 alone.
// So each phase is an implicit GEMM over the H x W source pixels with K = 4 Cin instead of 9 Cin:
// 4/9 of the direct form's work. The kernels run it as the stride-1, pad-1 conv of the source
// whose taps are the 2 x 2 window at (p, q) of the 3 x 3 grid (UpsamplePhaseGeometry,
// conv_gather.hpp), writing output pixels with doubled strides from (p, q) (apply_upsample_phase,
// conv_args.hpp); the packing holds each phase's combined weights (packed_weights.hpp).
//
// Numerics: a combined weight is the bf16 rounding of the fp32 sum of up to four weights, one
// rounding more than the direct form (<= 2^-8 relative per weight). FP8: the combined weights
// are quantized to e4m3 with one scale per phase and output channel (packed_weights.hpp), so
// each is one e4m3 rounding of the sum, as a direct-form weight is one rounding of itself.
//
// The phase form measured about half the direct form's time on the upsample layers (the numbers:
// docs/performance.md, docs/perf-notes.md). Only the phase form is built; the direct-form kernels
// were removed.
#pragma once
#include "vaeconv/conv/conv_desc.hpp"

namespace vaeconv {

// Whether this build has the phase kernels (every build does), and whether it runs the upsample
// conv `d` in four phases (and so packs its weights so).
inline constexpr bool kUpsamplePhasesBuilt = true;
inline bool upsample_in_phases(const ConvDesc& d) {
  return kUpsamplePhasesBuilt && d.kind == ConvKind::kUpsample;
}

inline constexpr int kUpsamplePhases = 4;  // (p, q) = (phase / 2, phase % 2)

// The 3 x 3 taps that window tap d (0 or 1) of phase p (0 or 1) combines: first .. last.
constexpr int phase_tap_first(int p, int d) { return p == 0 ? (d == 0 ? 0 : 1) : (d == 0 ? 0 : 2); }
constexpr int phase_tap_last(int p, int d) { return p == 0 ? (d == 0 ? 0 : 2) : (d == 0 ? 1 : 2); }
// The source row (column) that window tap d of phase p reads for output row (column) 2a + p;
// outside [0, H) it is the zero padding.
constexpr int64_t phase_source(int p, int64_t a, int d) { return a - 1 + p + d; }

}  // namespace vaeconv
