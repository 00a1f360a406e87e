// vaeconv/arch/arch.hpp — picks the architecture layer for the backend being compiled.
//
// Shared code names `arch::Current` and never a target: vaeconv::arch::Cdna under HIP,
// vaeconv::arch::Nvidia under CUDA. Host-only builds (no GPU compiler) get no Current.
#pragma once
#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"

#if defined(VAECONV_BACKEND_HIP)
#include "vaeconv/arch/cdna.hpp"
namespace vaeconv::arch { using Current = Cdna; }
#elif defined(VAECONV_BACKEND_CUDA)
#include "vaeconv/arch/nvidia.hpp"
namespace vaeconv::arch { using Current = Nvidia; }
#endif
