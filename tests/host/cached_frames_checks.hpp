// Checks shared by the host tests of the convs that read cached frames in front of x (the cached
// causal conv, test_cached_conv.cpp, and WanResample's temporal conv, test_temporal_conv.cpp):
// random operands, fake device arguments for validate_for_kernels, and the walk of a gather over
// cat(cache, x) as the kernel walks it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/kernel/cached_frames.hpp"
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
              // A folding gather (the cached conv's) gives a missing row an offset that AMD's
              // buffer load reads as zeros without the flag (conv_gather.hpp kFoldedOutOfRange).
              if constexpr (kernel::OffsetFoldsRange<Gather<kRows, kRowStep, BK, kElemBytes>>::value) {
                ASSERT_GE(g.offset(i), kernel::kFoldedOutOfRange)
                    << d.to_string() << " by " << by << " tid " << tid << " row " << i << " k " << k;
              }
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

// copy_a_either on AMD's buffer views, emulated: a wave of 64 lanes whose wave_any / wave_all are
// the ballot of the wave's from_cache (computed here from every lane's gather, as the hardware
// does), views that return zeros out of range or where a lane's load is invalid, and 16-byte
// chunks that OR like the staging registers. `lie` makes the vote claim agreement where the
// lanes disagree (the one-view path with the first lane's view): a negative control.
struct EmulatedView {  // no `base` member: copy_a_either takes the buffer-view path
  const uint8_t* mem;
  uint32_t bytes;
};
struct Chunk16 {
  uint32_t w[4];
  Chunk16& operator|=(const Chunk16& o) {
    for (int j = 0; j < 4; ++j) w[j] |= o.w[j];
    return *this;
  }
};
struct EmulatedWaveArch {
  static inline bool any = false, all = false;  // the current wave's vote
  // The view the current lane reads from, and the in-range loads it made through the other one:
  // such a load reads memory the lane's offset does not index (another batch element's frames,
  // or past the view's allocation: num_records is not the allocation's size).
  static inline const uint8_t* lane_view = nullptr;
  static inline int64_t stray_reads = 0;
  // Out of range at or past this offset (the views here are far smaller): the gathers' folded
  // offsets are loaded as they are, as on AMD (kernel::FoldsRange).
  static constexpr uint32_t kOutOfRange = 0x80000000u;
  template <int N>
  struct Slot {
    Chunk16 v[N];
  };
  template <int N>
  static void load(Slot<N>& s, int i, void*, EmulatedView v, uint32_t offset, bool valid) {
    Chunk16 c{};
    if (valid && offset <= v.bytes && v.bytes - offset >= 16) {
      std::memcpy(&c, v.mem + offset, 16);
      stray_reads += v.mem != lane_view;
    }
    s.v[i] = c;
  }
  static bool wave_any(bool) { return any; }
  static bool wave_all(bool) { return all; }
};
template <int kRows, int kStep>
struct EmulatedGemm {
  static constexpr int kRowsA = kRows, kRowStep = kStep;
  struct Tile {
    static int offset(int, int) { return 0; }
  };
  static char* stage_a(char* smem, int) { return smem; }
};
struct EitherCopyCounts {
  int64_t one_view_waves = 0, mixed_waves = 0, rows = 0, wrong_rows = 0;
};

// Runs copy_a_either for every block, wave, lane and K tile of Gather<kRows, kRowStep, BK,
// kElemBytes> (a BM x BK tile of kThreads threads) over random bytes of x and the cache, and
// checks each row's chunk against the 16 bytes at the gather's offset in the view it names (zeros
// where the row does not exist). x_base(b): block b's x view (elements); the cache's is b.n * cache_sn.
template <template <int, int, int, int> class Gather, int BM, int BK, int kThreads,
          int kElemBytes, class XBase>
EitherCopyCounts check_either_copy(const ConvDesc& d, const kernel::ConvParams& p, XBase x_base,
                                   bool lie = false) {
  constexpr int kChunkElems = 16 / kElemBytes, kChunks = BK / kChunkElems;
  constexpr int kRowStep = kThreads / kChunks, kRows = BM / kRowStep, kWave = 64;
  static_assert(kThreads % kWave == 0, "whole waves");
  using G = Gather<kRows, kRowStep, BK, kElemBytes>;
  using Gemm = EmulatedGemm<kRows, kRowStep>;
  using Arch = EmulatedWaveArch;
  // Random nonzero bytes, with room past the views' ends (a load there must come back zero).
  std::mt19937 rng(1234);
  auto bytes_of = [&](size_t n) {
    std::vector<uint8_t> v(n + 4096);
    for (auto& b : v) b = uint8_t(1 + rng() % 255);
    return v;
  };
  const std::vector<uint8_t> x = bytes_of(size_t(d.in_elements()) * kElemBytes),
                             cache = bytes_of(size_t(d.n * d.cache_strides.n) * kElemBytes);
  const int k_tiles = (p.k + BK - 1) / BK;
  EitherCopyCounts n;
  Arch::stray_reads = 0;
  char smem[16];
  for (int by = 0; by < d.n * d.out_t(); ++by)
    for (int bx = 0; bx < p.m_blocks * p.n_tiles; ++bx) {
      const kernel::BlockCoord b = kernel::block_coord(p, bx, by, BM, 32);
      const EmulatedView vx{x.data() + x_base(b) * kElemBytes, p.x_view_bytes};
      const EmulatedView vc{cache.data() + int64_t(b.n) * p.cache_sn * kElemBytes,
                            p.cache_view_bytes};
      std::vector<G> g(kThreads);
      for (int tid = 0; tid < kThreads; ++tid) g[tid].init(p, b, tid / kChunks, tid % kChunks);
      for (int kt = 0; kt < k_tiles; ++kt) {
        for (int w0 = 0; w0 < kThreads; w0 += kWave) {
          int cached = 0;
          for (int l = 0; l < kWave; ++l) cached += g[w0 + l].from_cache;
          Arch::any = cached > 0;
          Arch::all = cached == kWave;
          ++(Arch::any == Arch::all ? n.one_view_waves : n.mixed_waves);
          if (lie) Arch::all = Arch::any = g[w0].from_cache;
          for (int l = 0; l < kWave; ++l) {
            const int tid = w0 + l;
            typename Arch::template Slot<kRows> sl;
            std::memset(&sl, 0xA5, sizeof sl);  // poison
            Arch::lane_view = g[tid].from_cache ? vc.mem : vx.mem;
            kernel::copy_a_either<Arch, Gemm>(sl, smem, 0, tid / kChunks, tid % kChunks, g[tid],
                                             vc, vx);
            for (int i = 0; i < kRows; ++i) {
              Chunk16 want{};
              if (g[tid].exists(i)) {
                const EmulatedView& v = g[tid].from_cache ? vc : vx;
                EXPECT_LE(uint64_t(g[tid].offset(i)) + 16, v.bytes) << d.to_string();
                std::memcpy(&want, v.mem + g[tid].offset(i), 16);
              }
              ++n.rows;
              n.wrong_rows += std::memcmp(&want, &sl.v[i], 16) != 0;
            }
          }
        }
        for (auto& gi : g) gi.advance(p);
      }
    }
  // Every in-range load went through the lane's own view (the lying vote's one-view path reads
  // x's lanes through the cache's descriptor: its own failure, counted as wrong rows).
  if (!lie) {
    EXPECT_EQ(Arch::stray_reads, 0) << d.to_string();
  }
  return n;
}

}  // namespace cached_frames_checks
}  // namespace vaeconv
