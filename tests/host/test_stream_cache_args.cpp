// test_stream_cache_args.cpp — write_stream_cache's argument checks (conv/stream_cache_args.hpp),
// on the host with fake addresses: every refusal comes before the first copy and names the
// argument; the new cache may be the cache itself but may not otherwise overlap it or x.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "vaeconv/conv/stream_cache_args.hpp"

namespace {

using namespace vaeconv;

// Fake, well-separated device addresses (never dereferenced).
const void* at(uintptr_t a) { return reinterpret_cast<const void*>(a); }
void* at_mut(uintptr_t a) { return reinterpret_cast<void*>(a); }
constexpr uintptr_t kCache = 0x10000000, kX = 0x20000000, kNew = 0x30000000;

// A one-frame chunk after two cached frames: the new cache is the cache's last frame and x's.
ConvDesc one_frame_chunk(int64_t n = 2) {
  return ConvDesc::causal3x3x3_cached(n, 1, 6, 10, 16, 16, 2);
}

void expect_refused(const Status& s, StatusCode code, const std::string& names) {
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(names), std::string::npos) << s.to_string();
}

TEST(StreamCacheArgs, AcceptsWellFormedCalls) {
  const ConvDesc d = one_frame_chunk();
  const Strides5 s = Strides5::dense(2, d.h, d.w, d.cin);
  EXPECT_TRUE(check_stream_cache_args(d, at(kCache), at(kX), at(kNew), s).ok());
  // The first chunk (no cache), and a chunk of four frames (the cache is not read).
  const ConvDesc first = ConvDesc::causal3x3x3_cached(2, 3, 6, 10, 16, 16, 0);
  EXPECT_TRUE(check_stream_cache_args(first, nullptr, at(kX), at(kNew), s).ok());
  const ConvDesc four = ConvDesc::causal3x3x3_cached(2, 4, 6, 10, 16, 16, 2);
  EXPECT_TRUE(check_stream_cache_args(four, at(kCache), at(kX), at(kNew), s).ok());
  EXPECT_EQ(stream_cache_frames(ConvDesc::causal3x3x3_cached(1, 1, 6, 10, 16, 16, 0)), 1);
  EXPECT_EQ(stream_cache_frames(d), 2);
}

TEST(StreamCacheArgs, NullPointersAreNamed) {
  const ConvDesc d = one_frame_chunk();
  const Strides5 s = Strides5::dense(2, d.h, d.w, d.cin);
  expect_refused(check_stream_cache_args(d, at(kCache), nullptr, at(kNew), s),
                 StatusCode::kInvalidArgument, "x is null");
  expect_refused(check_stream_cache_args(d, at(kCache), at(kX), nullptr, s),
                 StatusCode::kInvalidArgument, "new_cache is null");
  expect_refused(check_stream_cache_args(d, nullptr, at(kX), at(kNew), s),
                 StatusCode::kInvalidArgument, "cache null, cache_frames 2");
}

// The refusal that used to come from inside the copy loop, after the cache's frame was copied:
// x with padded pixels (w stride > Cin), which ConvDesc::validate accepts.
TEST(StreamCacheArgs, SparseRowsAreRefusedBeforeAnyCopy) {
  ConvDesc d = one_frame_chunk();
  d.in_strides = {int64_t(d.t) * d.h * d.w * 24, d.h * d.w * 24, d.w * 24, 24, 1};
  ASSERT_TRUE(d.validate().ok()) << d.validate().to_string();
  const Strides5 s = Strides5::dense(2, d.h, d.w, d.cin);
  expect_refused(check_stream_cache_args(d, at(kCache), at(kX), at(kNew), s),
                 StatusCode::kUnsupported, "x pixels must be dense");
  ConvDesc c = one_frame_chunk();
  c.cache_strides = {2 * c.h * c.w * 32, c.h * c.w * 32, c.w * 32, 32, 1};
  ASSERT_TRUE(c.validate().ok());
  expect_refused(check_stream_cache_args(c, at(kCache), at(kX), at(kNew), s),
                 StatusCode::kUnsupported, "cache pixels must be dense");
  // A chunk of four frames does not read the cache: its strides do not matter here.
  ConvDesc four = ConvDesc::causal3x3x3_cached(2, 4, 6, 10, 16, 16, 2);
  four.cache_strides = c.cache_strides;
  EXPECT_TRUE(check_stream_cache_args(four, at(kCache), at(kX), at(kNew), s).ok());
  const Strides5 sparse_new = {2 * d.h * d.w * 32, d.h * d.w * 32, d.w * 32, 32, 1};
  expect_refused(check_stream_cache_args(c, at(kCache), at(kX), at(kNew), sparse_new),
                 StatusCode::kUnsupported, "new cache pixels must be dense");
  expect_refused(check_stream_cache_args(one_frame_chunk(), at(kCache), at(kX), at(kNew),
                                         Strides5::dense(1, d.h, d.w, d.cin)),
                 StatusCode::kInvalidArgument, "new cache strides");
}

TEST(StreamCacheArgs, OverlapsAreRefusedButTheCacheItselfIsAllowed) {
  const ConvDesc d = one_frame_chunk();
  const Strides5 s = Strides5::dense(2, d.h, d.w, d.cin);
  const int64_t frame_bytes = d.h * d.w * d.cin * 2;
  // In place: the cache's pointer and strides.
  EXPECT_TRUE(check_stream_cache_args(d, at(kCache), at(kX), at_mut(kCache), s).ok());
  // A frame into the cache, or the same pointer with other strides.
  expect_refused(check_stream_cache_args(d, at(kCache), at(kX), at_mut(kCache + frame_bytes), s),
                 StatusCode::kOverlap, "new_cache overlaps the cache");
  const int64_t frame_elems = d.h * d.w * d.cin;
  const Strides5 wider = {3 * frame_elems, frame_elems, d.w * d.cin, d.cin, 1};
  expect_refused(check_stream_cache_args(d, at(kCache), at(kX), at_mut(kCache), wider),
                 StatusCode::kOverlap, "new_cache overlaps the cache");
  // The last byte of x, and x itself.
  const int64_t x_bytes = d.n * frame_bytes;
  expect_refused(check_stream_cache_args(d, at(kCache), at(kX), at_mut(kX + x_bytes - 2), s),
                 StatusCode::kOverlap, "new_cache overlaps x");
  expect_refused(check_stream_cache_args(d, at(kCache), at(kX), at_mut(kX), s),
                 StatusCode::kOverlap, "new_cache overlaps x");
  EXPECT_TRUE(check_stream_cache_args(d, at(kCache), at(kX), at_mut(kX + x_bytes), s).ok());
  // A lone batch: the batch stride of the new cache may differ from the cache's (one cached
  // frame growing to two in place).
  const ConvDesc lone = ConvDesc::causal3x3x3_cached(1, 1, 6, 10, 16, 16, 1);
  EXPECT_TRUE(check_stream_cache_args(lone, at(kCache), at(kX), at_mut(kCache), s).ok());
}

}  // namespace
