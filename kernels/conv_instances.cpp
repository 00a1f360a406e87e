// conv_instances.cpp — instantiates the shipped kernels (kernel/tile_table.hpp: bf16 and fp8)
// once, for the library's C++ entry (vaeconv_kernels.hpp).
#include "vaeconv_kernels.hpp"

#include <string>

#include "vaeconv/api/conv.hpp"
#include "vaeconv/api/quantize.hpp"

namespace vaeconv::precompiled {

Status conv_forward(const ConvDesc& desc, const ConvArgs& args, void* stream) {
  return vaeconv::conv_forward(desc, args, static_cast<hipStream_t>(stream));
}

Status conv_forward_table_set(const ConvDesc& desc, const ConvArgs& args, kernel::TableSet tables,
                              void* stream) {
  using kernel::TableSet;
  if (tables != TableSet::kPrimary && tables != TableSet::kGfx950 &&
      tables != TableSet::kGfx942Twin)
    return Status(StatusCode::kInvalidArgument,
                  "conv_forward_table_set: table set " + std::to_string(int(tables)) +
                      " is neither the primary set (0), gfx950's (1) nor gfx942's twin (2)");
  if (tables == TableSet::kGfx942Twin && !kernel::kGfx942TwinTables)
    return Status(StatusCode::kUnsupported,
                  "conv_forward_table_set: this build has no gfx942 twin set (only the NVIDIA "
                  "mma.sync build has one; on AMD gfx942's tables are the primary set, 0)");
  if (tables == TableSet::kGfx950) {
    if (!kernel::kGfx950Tables)
      return Status(StatusCode::kUnsupported,
                    "conv_forward_table_set: this build has no gfx950 table set (the NVIDIA wgmma "
                    "build)");
#if defined(VAECONV_BACKEND_HIP)
    TableSet device_set = TableSet::kPrimary;
    VAECONV_RETURN_IF_ERROR(check_device_arch(desc.in_dtype, &device_set));
    if (device_set != TableSet::kGfx950)
      return Status(StatusCode::kUnsupported,
                    "conv_forward_table_set: the gfx950 table set runs on a gfx950 device only (its "
                    "wide kernels are traps on gfx942)");
#endif
  }
  return kernel::visit_any_table_set(tables, [&](auto set) {
    return vaeconv::conv_forward_with<decltype(set)>(desc, args, static_cast<hipStream_t>(stream));
  });
}

size_t quantize_fp8_workspace_bytes(int64_t n) { return vaeconv::quantize_fp8_workspace_bytes(n); }

Status quantize_fp8(const void* x_bf16, int64_t n, void* y_fp8, float* scale, void* workspace,
                    size_t workspace_bytes, void* stream) {
  return vaeconv::quantize_fp8(x_bf16, n, y_fp8, scale, workspace, workspace_bytes,
                               static_cast<hipStream_t>(stream));
}

}  // namespace vaeconv::precompiled
