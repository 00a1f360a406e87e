// conv_instances.cpp — instantiates the shipped kernels (kernel/tile_table.hpp: bf16 and fp8)
// once, for the library's C++ entry (vaeconv_kernels.hpp).
#include "vaeconv_kernels.hpp"

#include "vaeconv/api/conv.hpp"
#include "vaeconv/api/quantize.hpp"

namespace vaeconv::precompiled {

Status conv_forward(const ConvDesc& desc, const ConvArgs& args, void* stream) {
  return vaeconv::conv_forward(desc, args, static_cast<hipStream_t>(stream));
}

size_t quantize_fp8_workspace_bytes(int64_t n) { return vaeconv::quantize_fp8_workspace_bytes(n); }

Status quantize_fp8(const void* x_bf16, int64_t n, void* y_fp8, float* scale, void* workspace,
                    size_t workspace_bytes, void* stream) {
  return vaeconv::quantize_fp8(x_bf16, n, y_fp8, scale, workspace, workspace_bytes,
                               static_cast<hipStream_t>(stream));
}

}  // namespace vaeconv::precompiled
