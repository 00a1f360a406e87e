// conv_bf16.cpp — instantiates the shipped BF16 kernels (kernel/tile_table.hpp) once, for the
// library's C++ entry (vaeconv_kernels.hpp).
#include "vaeconv_kernels.hpp"

#include "vaeconv/api/conv.hpp"

namespace vaeconv::precompiled {

Status conv_forward(const ConvDesc& desc, const ConvArgs& args, void* stream) {
  return vaeconv::conv_forward(desc, args, static_cast<hipStream_t>(stream));
}

}  // namespace vaeconv::precompiled
