// vaeconv/conv/stream_cache_args.hpp — what write_stream_cache (api/stream_cache.hpp) accepts,
// checked on the host before its first copy: a refusal never leaves the new cache half written.
//
// The new cache is [N, stream_cache_frames(d), H, W, Cin] with strides s; its frames come from the
// cache (d.cache_strides, only while d.t < 2) and from x (d.in_strides). Each tensor that is read
// or written must have dense pixels within a row (w stride = Cin): the copies are whole rows. The
// new cache may be the cache itself (the same pointer and strides; the batch stride may differ
// when N = 1): frame f of the new cache is copied from frame f or a later one, so nothing is read
// after it is written. It must not otherwise overlap the cache or x.
#pragma once
#include <cstdint>
#include <string>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/core/status.hpp"

namespace vaeconv {

// Frames of the next chunk's cache after the conv `d` (its cache_frames, then its T frames).
inline int stream_cache_frames(const ConvDesc& d) {
  const int64_t all = d.in_frames();
  return int(all < 2 ? all : 2);
}

inline Status check_stream_cache_args(const ConvDesc& d, const void* cache, const void* x,
                                      const void* new_cache, const Strides5& s) {
  VAECONV_RETURN_IF_ERROR(d.validate());
  if (x == nullptr)
    return Status(StatusCode::kInvalidArgument, "write_stream_cache: x is null");
  if (new_cache == nullptr)
    return Status(StatusCode::kInvalidArgument, "write_stream_cache: new_cache is null");
  if ((cache == nullptr) != (d.cache_frames == 0))
    return Status(StatusCode::kInvalidArgument,
                  "write_stream_cache: a cache is given exactly when d.cache_frames > 0 (cache " +
                      std::string(cache ? "given" : "null") + ", cache_frames " +
                      std::to_string(d.cache_frames) + ")");
  const int frames = stream_cache_frames(d);
  VAECONV_RETURN_IF_ERROR(detail::check_strides("new cache", s, frames, d.h, d.w, d.cin));
  // Frame 0 of the new cache is frame `first` of cat(cache, x): the cache is read when it is
  // before x's first frame, x always (T >= 1).
  const int64_t first = d.in_frames() - frames;
  const bool reads_cache = first < d.cache_frames;
  const auto dense_rows = [&](const char* name, const Strides5& st) {
    return st.w == d.cin ? Status::Ok()
                         : Status(StatusCode::kUnsupported,
                                  std::string("write_stream_cache: ") + name +
                                      " pixels must be dense within a row (w stride " +
                                      std::to_string(st.w) + ", Cin " + std::to_string(d.cin) + ")");
  };
  VAECONV_RETURN_IF_ERROR(dense_rows("new cache", s));
  VAECONV_RETURN_IF_ERROR(dense_rows("x", d.in_strides));
  if (reads_cache) VAECONV_RETURN_IF_ERROR(dense_rows("cache", d.cache_strides));
  const int64_t new_bytes = detail::tensor_span_bytes(s, d.n, frames, d.h, d.w, d.cin, d.in_dtype);
  if (detail::ranges_overlap(new_cache, new_bytes, x,
                             detail::tensor_span_bytes(d.in_strides, d.n, d.t, d.h, d.w, d.cin,
                                                       d.in_dtype)))
    return Status(StatusCode::kOverlap, "write_stream_cache: new_cache overlaps x");
  if (cache != nullptr) {
    const Strides5& c = d.cache_strides;
    const bool in_place = new_cache == cache && (d.n == 1 || s.n == c.n) && s.t == c.t &&
                          s.h == c.h && s.w == c.w && s.c == c.c;
    if (!in_place &&
        detail::ranges_overlap(new_cache, new_bytes, cache,
                               detail::tensor_span_bytes(c, d.n, d.cache_frames, d.h, d.w, d.cin,
                                                         d.in_dtype)))
      return Status(StatusCode::kOverlap,
                    "write_stream_cache: new_cache overlaps the cache (it may be the cache itself, "
                    "with the cache's strides)");
  }
  return Status::Ok();
}

}  // namespace vaeconv
