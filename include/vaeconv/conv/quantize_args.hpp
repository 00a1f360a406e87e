// vaeconv/conv/quantize_args.hpp — what quantize_fp8 (api/quantize.hpp) accepts, checked on the
// host before anything is queued; each refusal names the argument at fault. The workspace's size
// is checked by quantize_fp8 itself (it asks the device reduce how much it needs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "vaeconv/conv/conv_args.hpp"  // detail::aligned, detail::ranges_overlap
#include "vaeconv/core/status.hpp"

namespace vaeconv {

inline Status check_quantize_fp8_args(const void* x_bf16, int64_t n, const void* y_fp8,
                                      const float* scale, const void* workspace,
                                      size_t workspace_bytes) {
  const auto null = [](const char* name) {
    return Status(StatusCode::kInvalidArgument, std::string("quantize_fp8: ") + name + " is null");
  };
  if (x_bf16 == nullptr) return null("x");
  if (y_fp8 == nullptr) return null("y");
  if (scale == nullptr) return null("scale");
  if (workspace == nullptr) return null("workspace");
  // x spans 2n bytes: n past 2^62 would overflow the byte counts below.
  if (n < 1 || n > std::numeric_limits<int64_t>::max() / 2)
    return Status(StatusCode::kInvalidArgument,
                  "quantize_fp8: n must be in [1, 2^62), got " + std::to_string(n));
  const auto misaligned = [](const char* name, int bytes) {
    return Status(StatusCode::kMisaligned, std::string("quantize_fp8: ") + name + " must be " +
                                               std::to_string(bytes) + "-byte aligned");
  };
  if (!detail::aligned(x_bf16, 16)) return misaligned("x", 16);
  if (!detail::aligned(y_fp8, 8)) return misaligned("y", 8);
  if (!detail::aligned(scale, 4)) return misaligned("scale", 4);
  if (!detail::aligned(workspace, 256)) return misaligned("workspace", 256);
  if (workspace_bytes > size_t(std::numeric_limits<int64_t>::max()))
    return Status(StatusCode::kInvalidArgument, "quantize_fp8: workspace_bytes past 2^63");
  const int64_t ws = int64_t(workspace_bytes);
  struct Span {
    const char* name;
    const void* p;
    int64_t bytes;
  };
  const Span spans[4] = {{"x", x_bf16, 2 * n}, {"y", y_fp8, n}, {"scale", scale, 4},
                         {"workspace", workspace, ws}};
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      if (detail::ranges_overlap(spans[i].p, spans[i].bytes, spans[j].p, spans[j].bytes))
        return Status(StatusCode::kOverlap, std::string("quantize_fp8: ") + spans[i].name +
                                                " overlaps " + spans[j].name);
  return Status::Ok();
}

}  // namespace vaeconv
