// Uses the installed headers (host part of <vaeconv/vaeconv.hpp>) and, when installed, the C ABI.
#include <cstdio>
#include <vaeconv/vaeconv.hpp>
#if defined(VAECONV_CONSUMER_HAS_KERNELS)
#include <vaeconv_c.h>
#endif

int main() {
  const auto d = vaeconv::kVaeShapes[6].desc();  // 384 -> 384 at 128x128
  vaeconv::Status s = d.validate();
  if (!s.ok() || d.gemm_m() != 128 * 128 || d.gemm_k() != 9 * 384) {
    std::printf("consumer: unexpected descriptor: %s\n", s.to_string().c_str());
    return 1;
  }
  vaeconv::ConvArgs a;  // all null: must be refused with a message
  s = vaeconv::validate_for_kernels(d, a);
  if (s.ok()) return 1;
  std::printf("consumer: descriptor ok, null args refused (%s)\n", s.to_string().c_str());
#if defined(VAECONV_CONSUMER_HAS_KERNELS)
  vaeconv_conv_shape shape{VAECONV_CAUSAL_3X3X3, 1, 1, 8, 8, 16, 16};
  char msg[256];
  const int rc = vaeconv_conv_bf16(&shape, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                   msg, sizeof msg);
  std::printf("consumer: %s library %s, null call -> %d (%s)\n", vaeconv_backend(),
              vaeconv_version(), rc, msg);
  if (rc == VAECONV_OK) return 1;
#endif
  return 0;
}
