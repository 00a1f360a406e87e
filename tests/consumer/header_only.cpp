// A HIP (or CUDA) translation unit of a consumer project: #include <vaeconv/vaeconv.hpp> alone
// brings the kernels, conv_forward, DeviceWeights and the quantizer, instantiated right here.
// Run without a GPU it checks that every call is validated before anything is launched.
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
  const bool refused = s1.code() == vaeconv::StatusCode::kInvalidArgument &&
                       s2.code() == vaeconv::StatusCode::kInvalidArgument &&
                       s3.code() == vaeconv::StatusCode::kInvalidArgument;
  return refused ? 0 : 1;
}
