// vaeconv_kernels.hpp — the C++ entry of libvaeconv_kernels: conv_forward with the kernels
// compiled once into the library. Host code may include this without a GPU compiler; the stream
// is passed as void* (a hipStream_t or cudaStream_t).
#pragma once
#include "vaeconv/conv/conv_args.hpp"

namespace vaeconv::precompiled {

Status conv_forward(const ConvDesc& desc, const ConvArgs& args, void* stream);

}  // namespace vaeconv::precompiled
