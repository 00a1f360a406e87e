// bench/bench_check.hpp — what every timed bench row shares (vaeconv_bench.cpp's image rows,
// video_bench.cpp's video rows): a HIP error stops the bench, the median of CUDA/HIP-event timed
// runs, the sampled check of an output against the conv of the packed weights' values, and the
// whole-output comparison with the vendor's; with --profile, one more call of each timed conv
// inside a profiler bracket (profile_bracket.hpp, included here).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/reference/packed_reference.hpp"
#include "profile_bracket.hpp"

#define CHECK_HIP(expr)                                                              \
  do {                                                                               \
    const hipError_t e_ = (expr);                                                    \
    if (e_ != hipSuccess) {                                                          \
      std::fprintf(stderr, "%s failed: %s\n", #expr, hipGetErrorString(e_));         \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

namespace vaeconv_bench {

// The full comparison's tolerance (rel L2; bf16 outputs differ by their roundings, ~1e-3).
inline constexpr double kCrossRelL2Tol = 1e-2;

// Every channel of the given output pixels at rtol = atol = 2e-2 against the conv of the packed
// weights' values (reference/packed_reference.hpp) under desc d: xval(i) is input element i's value,
// wval(r, k) packed weight (r, k)'s.
template <class XVal, class WVal>
void check_pixels(const vaeconv::ConvDesc& d, const vaeconv::PackedWeightsInfo& info, XVal xval,
                  WVal wval, const std::vector<float>& bias, const std::vector<uint16_t>& y,
                  const std::vector<int64_t>& pixels, int64_t* sampled, int64_t* bad) {
  std::vector<double> ref;
  for (const int64_t m : pixels) {
    vaeconv::reference::packed_output_pixel(d, info, xval, wval, bias.data(), m, &ref);
    for (int64_t c = 0; c < d.cout; ++c) {
      const double g = vaeconv::bf16_to_float(y[size_t(m * d.cout + c)]), e = ref[size_t(c)];
      ++*sampled;
      if (!(std::fabs(g - e) <= 2e-2 + 2e-2 * std::fabs(e))) ++*bad;
    }
  }
}

// "" when s is ok, else its text: what a profile_bracket call's run returns for a vaeconv conv.
inline std::string error_of(const vaeconv::Status& s) { return s.ok() ? std::string() : s.to_string(); }

// Median of `iters` event-timed runs of `run(i)` after 3 warm-ups, in microseconds.
template <class Run>
double time_median_us(int iters, hipStream_t stream, Run run) {
  for (int i = 0; i < 3; ++i) run(i);
  hipEvent_t e0, e1;
  CHECK_HIP(hipEventCreate(&e0));
  CHECK_HIP(hipEventCreate(&e1));
  std::vector<float> ms(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    CHECK_HIP(hipEventRecord(e0, stream));
    run(i);
    CHECK_HIP(hipEventRecord(e1, stream));
    CHECK_HIP(hipEventSynchronize(e1));
    CHECK_HIP(hipEventElapsedTime(&ms[size_t(i)], e0, e1));
  }
  CHECK_HIP(hipGetLastError());
  (void)hipEventDestroy(e0);
  (void)hipEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return 1e3 * ms[ms.size() / 2];
}

// Whole-tensor comparison of two bf16 outputs a (vaeconv's) and b (the vendor's) into a result
// row's compared / max_abs / rel_l2 / nonfinite / cross_ok: max |a - b| and ||a - b|| / ||b||.
template <class Row>
void compare_full(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, Row* r) {
  double num = 0, den = 0, mx = 0;
  int64_t nonfinite = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double x = vaeconv::bf16_to_float(a[i]), y = vaeconv::bf16_to_float(b[i]);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      ++nonfinite;
      continue;
    }
    const double e = x - y;
    num += e * e;
    den += y * y;
    mx = std::max(mx, std::fabs(e));
  }
  r->compared = true;
  r->max_abs = mx;
  r->rel_l2 = den > 0 ? std::sqrt(num / den) : (num > 0 ? 1e30 : 0.0);  // finite: it goes into JSON
  r->nonfinite = nonfinite;
  r->cross_ok = nonfinite == 0 && a.size() == b.size() && r->rel_l2 <= kCrossRelL2Tol;
}

}  // namespace vaeconv_bench
