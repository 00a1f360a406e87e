// vaeconv_kernels.hpp — the C++ entry of libvaeconv_kernels: conv_forward with the kernels
// compiled once into the library. Host code may include this without a GPU compiler; the stream
// is passed as void* (a hipStream_t or cudaStream_t).
#pragma once
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/kernel/table_set.hpp"

namespace vaeconv::precompiled {

Status conv_forward(const ConvDesc& desc, const ConvArgs& args, void* stream);

// conv_forward with a named table set (kernel/table_set.hpp) instead of the device's: the GPU
// suite runs the gfx950 and gfx942 sets' tiles on the NVIDIA mma.sync build, their portable
// twins (kGfx950, kGfx942Twin). kUnsupported where the build has no such set (the NVIDIA wgmma
// build; kGfx942Twin on AMD, where gfx942's set is the primary one) or the device cannot run it
// (an AMD device other than gfx950 asked for gfx950's set, whose wide kernels trap there).
Status conv_forward_table_set(const ConvDesc& desc, const ConvArgs& args, kernel::TableSet tables,
                              void* stream);

// api/quantize.hpp, compiled once: bf16 -> e4m3fn with a device-side per-tensor scale.
size_t quantize_fp8_workspace_bytes(int64_t n);
Status quantize_fp8(const void* x_bf16, int64_t n, void* y_fp8, float* scale, void* workspace,
                    size_t workspace_bytes, void* stream);

}  // namespace vaeconv::precompiled
