# Selects the GPU language for VAECONV_BACKEND and provides vaeconv_gpu_sources(), which marks
# .cpp files as device sources of that language: one set of sources for HIP and CUDA alike.
if(VAECONV_BACKEND STREQUAL "HIP")
  if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)
    set(CMAKE_HIP_ARCHITECTURES "gfx942;gfx950" CACHE STRING "AMD targets")
  endif()
  enable_language(HIP)
  set(VAECONV_GPU_LANG HIP)
  find_package(hip CONFIG QUIET)   # hip::host for host-only targets that call the runtime
elseif(VAECONV_BACKEND STREQUAL "CUDA")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "90a-real" CACHE STRING "NVIDIA targets")
  endif()
  enable_language(CUDA)
  # The warpgroup atom (wgmma) exists only on sm_90a. Every device pass must agree with the host
  # pass on which tiles exist, so the atom is chosen for the whole build. AUTO: when every listed
  # architecture is 90a; any other list (e.g. "90" or "80;90a") builds the mma.sync atoms.
  set(VAECONV_NVIDIA_WGMMA AUTO CACHE STRING "wgmma atoms for the wide tiles: AUTO, ON or OFF")
  set_property(CACHE VAECONV_NVIDIA_WGMMA PROPERTY STRINGS AUTO ON OFF)
  set(all_90a ON)
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(NOT arch MATCHES "^90a(-real|-virtual)?$")
      set(all_90a OFF)
    endif()
  endforeach()
  if(VAECONV_NVIDIA_WGMMA STREQUAL "AUTO")
    set(VAECONV_USE_WGMMA ${all_90a})
  elseif(VAECONV_NVIDIA_WGMMA AND NOT all_90a)
    message(FATAL_ERROR "VAECONV_NVIDIA_WGMMA=ON needs CMAKE_CUDA_ARCHITECTURES of 90a only "
                        "(got '${CMAKE_CUDA_ARCHITECTURES}')")
  elseif(VAECONV_NVIDIA_WGMMA)
    set(VAECONV_USE_WGMMA ON)
  else()
    set(VAECONV_USE_WGMMA OFF)
  endif()
  message(STATUS "vaeconv: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}, "
                 "wgmma atom ${VAECONV_USE_WGMMA}")
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(VAECONV_GPU_LANG CUDA)
  find_package(CUDAToolkit REQUIRED)
elseif(NOT VAECONV_BACKEND STREQUAL "NONE")
  message(FATAL_ERROR "VAECONV_BACKEND must be HIP, CUDA or NONE (got '${VAECONV_BACKEND}')")
endif()

function(vaeconv_gpu_sources)
  set_source_files_properties(${ARGN} PROPERTIES LANGUAGE ${VAECONV_GPU_LANG})
endfunction()

# The runtime library a GPU target links (hipMalloc/cudaMalloc and friends).
function(vaeconv_link_runtime target)
  if(VAECONV_BACKEND STREQUAL "CUDA")
    target_link_libraries(${target} PRIVATE CUDA::cudart)
  endif()
  # HIP: CMake's HIP language links amdhip64 into HIP targets by itself.
endfunction()
