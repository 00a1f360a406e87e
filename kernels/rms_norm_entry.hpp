// rms_norm_entry.hpp — the RMS norm of api/rms_norm.hpp compiled once into libvaeconv_kernels
// (kernels/rms_norm.cpp); the C ABI's vaeconv_rms_norm calls it. Host code may include this
// without a GPU compiler; the stream is a hipStream_t or cudaStream_t passed as void*.
#pragma once
#include "vaeconv/kernel/rms_norm_params.hpp"

namespace vaeconv::precompiled {

Status rms_norm(const RmsNormArgs& args, void* stream);

}  // namespace vaeconv::precompiled
