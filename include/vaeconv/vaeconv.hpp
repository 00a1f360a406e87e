// vaeconv/vaeconv.hpp — everything a project needs: #include <vaeconv/vaeconv.hpp>.
//
// Host parts (descriptors, validation, weight packing, the CPU reference) compile with any C++17
// compiler. The GPU parts (kernels, conv_forward, DeviceWeights) are added when the file is
// compiled by hipcc/clang (HIP) or nvcc (CUDA).
#pragma once
#include "vaeconv/core/config.hpp"
#include "vaeconv/core/dtype.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"
#include "vaeconv/core/status.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/conv/vae_shapes.hpp"
#include "vaeconv/kernel/tile_table.hpp"
#include "vaeconv/reference/conv_reference.hpp"

#if defined(VAECONV_GPU_COMPILER)
#include "vaeconv/api/conv.hpp"
#include "vaeconv/api/device_weights.hpp"
#include "vaeconv/api/fp8_sanitize.hpp"
#include "vaeconv/api/quantize.hpp"
#endif
