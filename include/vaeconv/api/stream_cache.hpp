// vaeconv/api/stream_cache.hpp — the next chunk's cache of a cached causal conv, without a cat.
//
// A chunked video decode keeps, per causal conv, the last two input frames of cat(cache, x) for
// the next chunk (Wan / Qwen-Image feat_cache, CACHE_T = 2): x's last two frames, or with a
// one-frame chunk the cache's last frame and x's frame. write_stream_cache copies exactly those
// frames into a [N, frames, H, W, Cin] tensor (frames = min(2, cache_frames + T), the count
// stream_cache_frames returns) with device-to-device copies on the stream: one per (batch, frame)
// when a frame is contiguous, else one per row. The conv never writes the cache it reads, so the
// order on the stream is the caller's: conv_forward, then write_stream_cache into the same cache
// tensor is correct (the frames are copied in ascending order, and frame f of the new cache is
// never read after it is written).
#pragma once
#include <cstdint>
#include <string>

#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/conv/stream_cache_args.hpp"
#include "vaeconv/core/status.hpp"

namespace vaeconv {

// new_cache: [N, stream_cache_frames(d), H, W, Cin] with strides `s` (NDHWC, in x's dtype).
// cache: as ConvArgs::cache for d (null when d.cache_frames == 0); x: d's input. Every argument
// is checked before the first copy (conv/stream_cache_args.hpp).
inline Status write_stream_cache(const ConvDesc& d, const void* cache, const void* x,
                                 void* new_cache, const Strides5& s, hipStream_t stream) {
  VAECONV_RETURN_IF_ERROR(check_stream_cache_args(d, cache, x, new_cache, s));
  const int frames = stream_cache_frames(d);
  const int64_t esz = int64_t(size_of(d.in_dtype));
  const int64_t first = d.in_frames() - frames;  // frame of cat(cache, x) that becomes frame 0
  for (int64_t n = 0; n < d.n; ++n)
    for (int f = 0; f < frames; ++f) {
      const int64_t j = first + f;
      const bool cached = j < d.cache_frames;
      const Strides5& src_s = cached ? d.cache_strides : d.in_strides;
      const char* src = static_cast<const char*>(cached ? cache : x) +
                        esz * (n * src_s.n + (cached ? j : j - d.cache_frames) * src_s.t);
      char* dst = static_cast<char*>(new_cache) + esz * (n * s.n + f * s.t);
      const int64_t row_bytes = d.w * d.cin * esz;  // rows are dense (checked above)
      if (src_s.h == d.w * d.cin && s.h == d.w * d.cin) {  // one contiguous frame
        const hipError_t e = hipMemcpyAsync(dst, src, size_t(row_bytes * d.h),
                                            hipMemcpyDeviceToDevice, stream);
        if (e != hipSuccess)
          return Status(StatusCode::kRuntimeError,
                        std::string("write_stream_cache: ") + hipGetErrorString(e));
        continue;
      }
      for (int64_t r = 0; r < d.h; ++r) {
        const hipError_t e = hipMemcpyAsync(dst + esz * r * s.h, src + esz * r * src_s.h,
                                            size_t(row_bytes), hipMemcpyDeviceToDevice, stream);
        if (e != hipSuccess)
          return Status(StatusCode::kRuntimeError,
                        std::string("write_stream_cache: ") + hipGetErrorString(e));
      }
    }
  return Status::Ok();
}

}  // namespace vaeconv
