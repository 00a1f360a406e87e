// A HIP (or CUDA) translation unit of a consumer project: #include <vaeconv/vaeconv.hpp> alone
// brings the kernels, conv_forward, DeviceWeights and the quantizer, instantiated right here.
// Run without a GPU it checks that every call is validated before anything is launched.
#include <cstdint>
#include <cstdio>
#include <vaeconv/vaeconv.hpp>

int main() {
  const vaeconv::ConvDesc bf16 = vaeconv::kVaeShapes[6].desc();
  const vaeconv::ConvDesc fp8 = vaeconv::kVaeShapes[6].desc(vaeconv::DType::kFP8E4M3);
  vaeconv::ConvArgs a;  // null pointers: refused before any launch
  const vaeconv::Status s1 = vaeconv::conv_forward(bf16, a, nullptr);
  const vaeconv::Status s2 = vaeconv::conv_forward(fp8, a, nullptr);
  const vaeconv::Status s3 = vaeconv::quantize_fp8(nullptr, 16, nullptr, nullptr, nullptr, 0, nullptr);
  std::printf("header-only consumer: bf16 -> %s\n  fp8 -> %s\n  quantize -> %s\n",
              s1.to_string().c_str(), s2.to_string().c_str(), s3.to_string().c_str());
  // The quantizer's other refusals, on fake (never dereferenced) addresses.
  auto at = [](uintptr_t a) { return reinterpret_cast<void*>(a); };
  float* scale = static_cast<float*>(at(0x40000));
  const vaeconv::Status s4 =  // y inside x (x holds 2 * 1024 bytes)
      vaeconv::quantize_fp8(at(0x10000), 1024, at(0x10400), scale, at(0x80000), 4096, nullptr);
  const vaeconv::Status s5 =  // scale inside the workspace
      vaeconv::quantize_fp8(at(0x10000), 1024, at(0x20000), static_cast<float*>(at(0x80010)),
                            at(0x80000), 4096, nullptr);
  const vaeconv::Status s6 =  // x not 16-byte aligned
      vaeconv::quantize_fp8(at(0x10002), 1024, at(0x20000), scale, at(0x80000), 4096, nullptr);
  std::printf("  quantize overlap -> %s\n  quantize scale overlap -> %s\n  quantize misaligned -> %s\n",
              s4.to_string().c_str(), s5.to_string().c_str(), s6.to_string().c_str());
  const bool refused = s1.code() == vaeconv::StatusCode::kInvalidArgument &&
                       s2.code() == vaeconv::StatusCode::kInvalidArgument &&
                       s3.code() == vaeconv::StatusCode::kInvalidArgument &&
                       s4.code() == vaeconv::StatusCode::kOverlap &&
                       s5.code() == vaeconv::StatusCode::kOverlap &&
                       s6.code() == vaeconv::StatusCode::kMisaligned;
  return refused ? 0 : 1;
}
