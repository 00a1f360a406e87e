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
  DeviceWeights(DeviceWeights&& o) noexcept : data_(o.data_), info_(o.info_) { o.data_ = nullptr; }
  DeviceWeights& operator=(DeviceWeights&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_;
      info_ = o.info_;
      o.data_ = nullptr;
    }
    return *this;
  }
  ~DeviceWeights() { release(); }

  // Copies host-packed weights to a fresh device buffer (synchronously with respect to `stream`'s
  // later work: the copy is enqueued on it).
  Status upload(const PackedWeightsHost& host, hipStream_t stream) {
    if (int64_t(host.data.size()) != host.info.cout * host.info.k_pad)
      return Status(StatusCode::kInvalidArgument, "packed weights: data size does not match info");
    release();
    const size_t bytes = host.data.size() * sizeof(uint16_t);
    hipError_t e = hipMalloc(&data_, bytes);
    if (e != hipSuccess) {
      data_ = nullptr;
      return Status(StatusCode::kRuntimeError, std::string("hipMalloc: ") + hipGetErrorString(e));
    }
    e = hipMemcpyAsync(data_, host.data.data(), bytes, hipMemcpyHostToDevice, stream);
    if (e == hipSuccess) e = hipStreamSynchronize(stream);  // the host vector may go away next
    if (e != hipSuccess)
      return Status(StatusCode::kRuntimeError, std::string("hipMemcpy: ") + hipGetErrorString(e));
    info_ = host.info;
    return Status::Ok();
  }

  WeightsView view() const { return {data_, info_}; }
  const PackedWeightsInfo& info() const { return info_; }

 private:
  void release() {
    if (data_) (void)hipFree(data_);
    data_ = nullptr;
  }
  void* data_ = nullptr;
  PackedWeightsInfo info_;
};

}  // namespace vaeconv
