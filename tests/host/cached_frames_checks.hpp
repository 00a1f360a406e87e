// Checks shared by the host tests of the convs that read cached frames in front of x (the cached
// causal conv, test_cached_conv.cpp, and WanResample's temporal conv, test_temporal_conv.cpp):
// random operands, fake device arguments for validate_for_kernels, and the walk of a gather over
// cat(cache, x) as the kernel walks it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/kernel/dispatch.hpp"

namespace vaeconv {
namespace cached_frames_checks {

inline std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Fake, well-separated addresses (never dereferenced).
inline void* addr(uintptr_t a) { return reinterpret_cast<void*>(a); }

// The output's fake address: a cache placed inside [kFakeY, kFakeY + y bytes) overlaps it.
constexpr uintptr_t kFakeY = 0x50000000;

// Arguments of a call of d at fake addresses (x, packed weights, y) with the given cache pointer;
// the status is packed_info_for's, so a refusal there is seen too.
inline Status fake_args(const ConvDesc& d, const void* cache, ConvArgs* a) {
  PackedWeightsInfo w;
  if (Status s = packed_info_for(d, &w); !s.ok()) return s;
  a->x = addr(0x10000000);
  a->weights = {addr(0x20000000), w};
  a->y = addr(kFakeY);
  a->cache = cache;
  return Status::Ok();
}

// Where one row of the A operand must read: whether it exists (inside the input, else the pad's
// zero), whether from the cache, and its element offset from the start of the cache or of x
// (not from the block's view).
struct RowSource {
  bool valid = false, cached = false;
  int64_t offset = 0;
};

// The row at frame j of cat(cache, x), batch n, element pix of the frame (its H, W and channel
// offset, laid out alike in the cache and in x): it exists where in_frame (the pixel is inside
// the frame) and j is one of cat(cache, x)'s frames; the first cache_frames are the cache's.
inline RowSource cat_row(const ConvDesc& d, int64_t n, int64_t j, bool in_frame, int64_t pix) {
  RowSource r;
  r.valid = in_frame && j >= 0 && j < d.in_frames();
  r.cached = j < d.cache_frames;
  if (r.valid && r.cached)
    r.offset = n * d.cache_strides.n + j * d.cache_strides.t + pix;
  else if (r.valid)
    r.offset = n * d.in_strides.n + (j - d.cache_frames) * d.in_strides.t + pix;
  return r;
}

// Walks Gather<kRows, kRowStep, BK, kElemBytes> over every block, thread role, K tile and row
// as a BM x BK tile of kThreads threads does, and checks each row against expect(b, m, k) (only
// asked for pixels m of the frame and columns k < w.k; the others are pads). x_base(b) is the
// element offset of block b's view of x (the cache's is b.n * p.cache_sn). Every walk must read
// x and pads, and the cache where d has cached frames, so a walk that reads nothing cannot pass.
template <template <int, int, int, int> class Gather, int BM, int BK, int kThreads,
          int kElemBytes, class XBase, class Expect>
void check_gather_walk(const ConvDesc& d, const PackedWeightsInfo& w, const kernel::ConvParams& p,
                       XBase x_base, Expect expect) {
  constexpr int kChunkElems = 16 / kElemBytes, kChunks = BK / kChunkElems;
  constexpr int kRowStep = kThreads / kChunks, kRows = BM / kRowStep;
  const int k_tiles = (p.k + BK - 1) / BK;
  int64_t from_cache = 0, from_x = 0, pads = 0;
  for (int by = 0; by < d.n * d.out_t(); ++by)
    for (int bx = 0; bx < p.m_blocks * p.n_tiles; ++bx) {
      const kernel::BlockCoord b = kernel::block_coord(p, bx, by, BM, 32);
      const int64_t x_view = x_base(b), c_view = int64_t(b.n) * p.cache_sn;
      for (int tid = 0; tid < kThreads; ++tid) {
        const int chunk = tid % kChunks, row0 = tid / kChunks;
        Gather<kRows, kRowStep, BK, kElemBytes> g;
        g.init(p, b, row0, chunk);
        for (int kt = 0; kt < k_tiles; ++kt) {
          const int64_t k = int64_t(kt) * BK + chunk * kChunkElems;
          for (int i = 0; i < kRows; ++i) {
            const int m = b.m0 + row0 + i * kRowStep;
            RowSource want;
            if (m < p.frame_pixels && k < w.k) want = expect(b, int64_t(m), k);
            ASSERT_EQ(g.exists(i), want.valid) << d.to_string() << " by " << by << " tid " << tid
                                               << " row " << i << " k " << k;
            if (!want.valid) {
              ++pads;
              continue;
            }
            ASSERT_EQ(g.from_cache, want.cached) << d.to_string() << " by " << by << " k " << k;
            const int64_t off = want.offset - (want.cached ? c_view : x_view);
            ASSERT_EQ(int64_t(g.offset(i)), off * kElemBytes)
                << d.to_string() << " by " << by << " tid " << tid << " row " << i << " k " << k;
            ASSERT_LT(g.offset(i), want.cached ? p.cache_view_bytes : p.x_view_bytes);
            ++(want.cached ? from_cache : from_x);
          }
          g.advance(p);
        }
      }
    }
  EXPECT_GT(from_x, 0);
  EXPECT_GT(pads, 0);
  if (d.cache_frames > 0) {
    EXPECT_GT(from_cache, 0);
  }
}

}  // namespace cached_frames_checks
}  // namespace vaeconv
