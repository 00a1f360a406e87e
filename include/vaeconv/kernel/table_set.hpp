// vaeconv/kernel/table_set.hpp — which tile table set a device runs (kernel/tile_table.hpp).
//
// Each AMD target has its own table set, sized to its LDS: gfx942's 64 KiB, gfx950's 160 KiB;
// one fat binary holds both, and conv_forward picks the set from the device's architecture name
// (api/device_arch.hpp, read once per device). An NVIDIA build has one set (kPrimary). Host code.
#pragma once

namespace vaeconv::kernel {

// kGfx942 is kPrimary: a HIP build's default table set (and which_kernel's default) is gfx942's.
// kGfx942Twin: gfx942's tiles on the NVIDIA mma.sync build (the portable twin; tile_table.hpp),
// whose primary set is NVIDIA's own; only named by a caller (which_kernel, the GPU suite), never
// picked for a device.
enum class TableSet : int { kPrimary = 0, kGfx942 = 0, kGfx950 = 1, kGfx942Twin = 2 };

// The target a table set is for, as the plan and the performance model name it.
inline const char* table_set_name(TableSet s) {
#if defined(VAECONV_BACKEND_CUDA)
  (void)s;
  return "nvidia";
#else
  return s == TableSet::kGfx950 ? "gfx950" : "gfx942";
#endif
}

}  // namespace vaeconv::kernel
