// first_contact_util.hpp — what the first-contact tests share: the device's name and architecture
// (printed by every test, so a log says which card gave each result), and random e4m3fn codes.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "vaeconv/core/numerics_fp8.hpp"

namespace vaeconv::test {

struct DeviceIdentity {
  std::string name;  // marketing name
  std::string arch;  // AMD: gcnArchName ("gfx942:sramecc+:xnack-"); NVIDIA: "sm_90"
  bool amd = false;
  int sm = 0;        // NVIDIA compute capability x 10
};

inline DeviceIdentity device_identity() {
  DeviceIdentity id;
  int dev = 0;
  hipDeviceProp_t prop{};
  if (hipGetDevice(&dev) != hipSuccess || hipGetDeviceProperties(&prop, dev) != hipSuccess) {
    (void)hipGetLastError();
    id.name = id.arch = "unknown";
    return id;
  }
  id.name = prop.name;
#if defined(VAECONV_BACKEND_HIP)
  id.amd = true;
  id.arch = prop.gcnArchName;
#else
  id.sm = prop.major * 10 + prop.minor;
  id.arch = "sm_" + std::to_string(id.sm);
#endif
  return id;
}

// The AMD target the device runs, without the feature suffixes ("gfx942"), or "" on NVIDIA.
inline std::string amd_target(const DeviceIdentity& id) {
  return id.amd ? id.arch.substr(0, id.arch.find(':')) : std::string();
}

inline void print_device(const char* what) {
  const DeviceIdentity id = device_identity();
  std::printf("[ vaeconv  ] %s on %s (%s)\n", what, id.name.c_str(), id.arch.c_str());
}

// e4m3fn codes drawn uniformly from `codes`.
inline std::vector<uint8_t> random_codes(std::mt19937& rng, size_t n, const std::vector<uint8_t>& codes) {
  std::uniform_int_distribution<size_t> pick(0, codes.size() - 1);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = codes[pick(rng)];
  return v;
}

// Every finite e4m3fn code: both zeros (0x00, 0x80 = -0), the subnormals, up to +-448.
inline std::vector<uint8_t> finite_e4m3fn_codes() {
  std::vector<uint8_t> c;
  for (int b = 0; b < 256; ++b)
    if (!e4m3fn_is_nan(uint8_t(b))) c.push_back(uint8_t(b));
  return c;
}

// The codes of the values in `values` (each must be exact in e4m3fn).
inline std::vector<uint8_t> e4m3fn_codes_of(const std::vector<float>& values) {
  std::vector<uint8_t> c;
  for (float v : values) c.push_back(float_to_e4m3fn(v));
  return c;
}

}  // namespace vaeconv::test
