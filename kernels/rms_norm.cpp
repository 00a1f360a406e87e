// rms_norm.cpp — instantiates the RMS norm kernels (api/rms_norm.hpp) once, for the library. Its
// own translation unit, so that its AMD assembly is generated and checked on its own
// (kernels/CMakeLists.txt: rms_norm-<arch>.s in the resource report).
#include "rms_norm_entry.hpp"

#include "vaeconv/api/rms_norm.hpp"

namespace vaeconv::precompiled {

Status rms_norm(const RmsNormArgs& args, void* stream) {
  return vaeconv::rms_norm(args, static_cast<hipStream_t>(stream));
}

}  // namespace vaeconv::precompiled
