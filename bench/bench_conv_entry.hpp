// bench_conv_entry.hpp — the conv the bench times: the library's (libvaeconv_kernels), or in a
// tuning sweep's build the library's dispatch over the shipped tables with one entry replaced by
// the sweep's candidate policy (bench/sweep_candidate.cpp; bench/sweep.sh configures it).
#pragma once
#include "vaeconv_kernels.hpp"

namespace vaeconv::bench {

#if defined(VAECONV_BENCH_SWEEP_CANDIDATE)
Status candidate_conv_forward(const ConvDesc& desc, const ConvArgs& args, void* stream);
#endif

inline Status conv_forward(const ConvDesc& desc, const ConvArgs& args, void* stream) {
#if defined(VAECONV_BENCH_SWEEP_CANDIDATE)
  return candidate_conv_forward(desc, args, stream);
#else
  return precompiled::conv_forward(desc, args, stream);
#endif
}

}  // namespace vaeconv::bench
