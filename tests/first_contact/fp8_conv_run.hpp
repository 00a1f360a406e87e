// fp8_conv_run.hpp — one FP8 conv through the shipped kernels (precompiled::conv_forward) with
// e4m3fn input bytes chosen by the test (no quantizer in between), a bf16 output poisoned first.
#pragma once
#include <string>
#include <vector>

#include "first_contact_util.hpp"
#include "vaeconv/api/fp8_sanitize.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv_kernels.hpp"

namespace vaeconv::test {

struct Fp8ConvRun {
  Status status;
  std::vector<uint16_t> y;  // bf16 bits, dense NDHWC
  bool guards_ok = true;
};

// d: FP8 operands, bf16 output, dense strides. bias and residual optional (nullptr). sanitize:
// x's and the weights' device bytes go through sanitize_fp8_for_target before the conv (what a
// caller does with FP8 tensors from outside the library).
inline Fp8ConvRun run_fp8_conv(const ConvDesc& d, const std::vector<uint8_t>& x_bytes, float x_scale,
                               const PackedWeightsHost& packed, const std::vector<float>* bias,
                               const std::vector<uint16_t>* residual, uint16_t poison,
                               bool sanitize = false) {
  Fp8ConvRun r;
  const size_t y_n = size_t(d.out_elements());
  GuardedBuffer x_dev(x_bytes.size()), w_dev(packed.byte_size()), ws_dev(packed.scales.size() * 4),
      xs_dev(4), b_dev(bias ? bias->size() * 4 : 4), r_dev(residual ? residual->size() * 2 : 2),
      y_dev(y_n * 2);
  if (!x_dev.ok() || !w_dev.ok() || !ws_dev.ok() || !xs_dev.ok() || !b_dev.ok() || !r_dev.ok() ||
      !y_dev.ok()) {
    r.status = Status(StatusCode::kRuntimeError, "hipMalloc failed");
    return r;
  }
  x_dev.upload(x_bytes.data(), x_bytes.size());
  w_dev.upload(packed.bytes(), packed.byte_size());
  ws_dev.upload(packed.scales.data(), packed.scales.size() * 4);
  xs_dev.upload(&x_scale, 4);
  if (bias) b_dev.upload(bias->data(), bias->size() * 4);
  if (residual) r_dev.upload(residual->data(), residual->size() * 2);
  const std::vector<uint16_t> y_init(y_n, poison);
  y_dev.upload(y_init.data(), y_n * 2);
  if (sanitize) {
    r.status = sanitize_fp8_for_target(x_dev.ptr(), int64_t(x_bytes.size()), nullptr);
    if (r.status.ok())
      r.status = sanitize_fp8_for_target(w_dev.ptr(), int64_t(packed.byte_size()), nullptr);
    if (!r.status.ok()) return r;
  }

  ConvArgs a;
  a.x = x_dev.ptr();
  a.x_scale = static_cast<const float*>(xs_dev.ptr());
  a.weights = {w_dev.ptr(), packed.info, static_cast<const float*>(ws_dev.ptr())};
  a.bias = bias ? static_cast<const float*>(b_dev.ptr()) : nullptr;
  a.residual = residual ? r_dev.ptr() : nullptr;
  a.y = y_dev.ptr();
  r.status = precompiled::conv_forward(d, a, nullptr);
  if (!r.status.ok()) return r;
  const hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) {
    r.status = Status(StatusCode::kRuntimeError, std::string("conv_forward's kernels failed: ") +
                                                     hipGetErrorString(e));
    return r;
  }
  r.y.resize(y_n);
  y_dev.download(r.y.data(), y_n * 2);
  r.guards_ok = y_dev.guards_intact();
  return r;
}

}  // namespace vaeconv::test
