// vaeconv/api/device_weights.hpp — packed weights uploaded to the device once.
//
// The one allocation of the API, done at load time, never per call. Move-only; frees on
// destruction. view() is what ConvArgs carries.
#pragma once
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/packed_weights.hpp"

namespace vaeconv {

class DeviceWeights {
 public:
  DeviceWeights() = default;
  DeviceWeights(const DeviceWeights&) = delete;
  DeviceWeights& operator=(const DeviceWeights&) = delete;
  DeviceWeights(DeviceWeights&& o) noexcept : data_(o.data_), scales_(o.scales_), info_(o.info_) {
    o.data_ = nullptr;
    o.scales_ = nullptr;
  }
  DeviceWeights& operator=(DeviceWeights&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_;
      scales_ = o.scales_;
      info_ = o.info_;
      o.data_ = nullptr;
      o.scales_ = nullptr;
    }
    return *this;
  }
  ~DeviceWeights() { release(); }

  // Copies host-packed weights to a fresh device buffer (synchronously with respect to `stream`'s
  // later work: the copy is enqueued on it).
  Status upload(const PackedWeightsHost& host, hipStream_t stream) {
    const bool fp8 = host.info.dtype == DType::kFP8E4M3;
    if (int64_t(host.byte_size()) != host.info.bytes())
      return Status(StatusCode::kInvalidArgument, "packed weights: data size does not match info");
    if (fp8 && int64_t(host.scales.size()) != host.info.scale_count())
      return Status(StatusCode::kInvalidArgument,
                    "packed fp8 weights: one scale per packed row (channel, and phase)");
    release();
    hipError_t e = hipMalloc(&data_, host.byte_size());
    if (e == hipSuccess && fp8) e = hipMalloc(&scales_, host.scales.size() * sizeof(float));
    if (e == hipSuccess)
      e = hipMemcpyAsync(data_, host.bytes(), host.byte_size(), hipMemcpyHostToDevice, stream);
    if (e == hipSuccess && fp8)
      e = hipMemcpyAsync(scales_, host.scales.data(), host.scales.size() * sizeof(float),
                         hipMemcpyHostToDevice, stream);
    if (e == hipSuccess) e = hipStreamSynchronize(stream);  // the host vectors may go away next
    if (e != hipSuccess) {
      release();
      return Status(StatusCode::kRuntimeError, std::string("weight upload: ") + hipGetErrorString(e));
    }
    info_ = host.info;
    return Status::Ok();
  }

  WeightsView view() const { return {data_, info_, static_cast<const float*>(scales_)}; }
  const PackedWeightsInfo& info() const { return info_; }

 private:
  void release() {
    if (data_) (void)hipFree(data_);
    if (scales_) (void)hipFree(scales_);
    data_ = nullptr;
    scales_ = nullptr;
  }
  void* data_ = nullptr;
  void* scales_ = nullptr;
  PackedWeightsInfo info_;
};

}  // namespace vaeconv
