// vaeconv/core/dtype.hpp — the element types vaeconv moves, as tags and storage structs.
//
// Storage types are plain bit containers (no arithmetic): bf16 and e4m3 values are converted to
// and from float by the functions in numerics_bf16.hpp / numerics_fp8.hpp, which behave the same
// on host and device, so the CPU reference and the kernels see bit-identical operands.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vaeconv {

enum class DType : int {
  kBF16 = 0,      // bfloat16
  kFP8E4M3 = 1,   // OCP e4m3fn (bias 7, max 448): the library's FP8 format on every target
  kFP32 = 2,      // bias and scales
};

inline const char* to_string(DType t) {
  switch (t) {
    case DType::kBF16: return "bf16";
    case DType::kFP8E4M3: return "fp8_e4m3";
    case DType::kFP32: return "fp32";
  }
  return "unknown";
}

inline std::size_t size_of(DType t) {
  switch (t) {
    case DType::kBF16: return 2;
    case DType::kFP8E4M3: return 1;
    case DType::kFP32: return 4;
  }
  return 0;
}

struct bf16_t { std::uint16_t bits; };
struct fp8e4m3_t { std::uint8_t bits; };
static_assert(sizeof(bf16_t) == 2 && sizeof(fp8e4m3_t) == 1, "storage types are raw bits");

}  // namespace vaeconv
