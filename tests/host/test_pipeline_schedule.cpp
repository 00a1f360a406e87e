// tests/host/test_pipeline_schedule.cpp — replays BlockGemm's K pipeline (kernel/
// pipeline_schedule.hpp) event by event, for every stage count and batches-in-flight the kernels
// can take and every K length up to 16 tiles, and checks what the schedule must guarantee:
//   * when tile kt is computed, its buffer holds tile kt and its copy group has completed under
//     wait_group<kPendingCopies>;
//   * a copy never lands in a buffer that a batch still in flight (or the tile being computed)
//     reads, nor in one whose tile has not been computed yet;
//   * a register staging slot is flushed before the next tile's copy reuses it;
//   * every tile is computed exactly once, in order.
// A promoting atom (fp8 wgmma, no batch in flight across a barrier) starts its batch before the
// refill (batch_first), so the copies' issue runs under it; that order is replayed too.
// A negative control replays a schedule that refills one tile too early and must fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "vaeconv/kernel/pipeline_schedule.hpp"

namespace {

using vaeconv::kernel::PipelineSchedule;

// Whether tile kt's copy group has completed under wait_group<pending>: every issued group but the
// newest `pending` has (groups: the issued load groups in order, a tile or -1 for an empty one).
bool loads_complete(const std::vector<int>& groups, int pending, int kt) {
  const int complete = static_cast<int>(groups.size()) - pending;
  int pos = -1;
  for (int g = 0; g < static_cast<int>(groups.size()); ++g)
    if (groups[static_cast<size_t>(g)] == kt) pos = g;
  return pos >= 0 && pos < complete;
}

// The replay. `ahead` and `pending` are the schedule's kAhead and kPendingCopies (a negative
// control passes wrong ones); in_flight batches may remain unfinished across a barrier.
std::string replay(int stages, int in_flight, int ahead, int pending, int k_tiles,
                   bool batch_first = false) {
  auto buffer = [&](int t) { return t % stages; };
  auto slot = [&](int t) { return t % ahead; };
  std::vector<int> resident(static_cast<size_t>(stages), -1);  // tile whose copy targets buffer
  std::vector<int> staged(static_cast<size_t>(ahead), -1);     // tile staged in a slot, unflushed
  std::vector<int> groups;                                      // committed groups: tile or -1
  std::deque<int> batches;                                      // batches not yet retired
  int computed = 0;
  auto issue = [&](int t) -> std::string {
    if (t >= k_tiles) {
      groups.push_back(-1);
      return "";
    }
    const int b = buffer(t);
    for (int r : batches)
      if (buffer(r) == b) return "tile " + std::to_string(t) + " overwrites the buffer of tile " +
                                 std::to_string(r) + ", still read by a batch in flight";
    if (resident[static_cast<size_t>(b)] >= computed)
      return "tile " + std::to_string(t) + " overwrites tile " +
             std::to_string(resident[static_cast<size_t>(b)]) + " before it is computed";
    if (staged[static_cast<size_t>(slot(t))] != -1)
      return "tile " + std::to_string(t) + " reuses a staging slot before it was flushed";
    resident[static_cast<size_t>(b)] = t;
    staged[static_cast<size_t>(slot(t))] = t;
    groups.push_back(t);
    return "";
  };
  for (int s = 0; s < ahead; ++s)
    if (auto e = issue(s); !e.empty()) return "prologue: " + e;
  for (int kt = 0; kt < k_tiles; ++kt) {
    // wait_group<pending>: every group but the newest `pending` has completed.
    if (!loads_complete(groups, pending, kt))
      return "tile " + std::to_string(kt) + " used before its copy";
    if (resident[static_cast<size_t>(buffer(kt))] != kt)
      return "tile " + std::to_string(kt) + " is not in its buffer";
    if (staged[static_cast<size_t>(slot(kt))] != kt)
      return "tile " + std::to_string(kt) + " flushed from the wrong slot";
    staged[static_cast<size_t>(slot(kt))] = -1;  // flush
    while (static_cast<int>(batches.size()) > in_flight) batches.pop_front();  // wait_batches
    // __syncthreads, then the refill and this tile's batch (in the order the atom asks for).
    auto compute = [&]() -> std::string {
      if (computed != kt) return "tiles computed out of order";
      batches.push_back(kt);
      ++computed;
      return "";
    };
    if (batch_first)
      if (auto e = compute(); !e.empty()) return e;
    if (auto e = issue(kt + ahead); !e.empty()) return "iteration " + std::to_string(kt) + ": " + e;
    if (!batch_first)
      if (auto e = compute(); !e.empty()) return e;
  }
  return computed == k_tiles ? "" : "not every tile computed";
}

template <int Stages, int InFlight>
void expect_schedule_safe() {
  using S = PipelineSchedule<Stages, InFlight>;
  for (int k_tiles = 0; k_tiles <= 16; ++k_tiles) {
    const std::string e = replay(Stages, InFlight, S::kAhead, S::kPendingCopies, k_tiles);
    EXPECT_TRUE(e.empty()) << Stages << " stages, " << InFlight << " in flight, " << k_tiles
                           << " K tiles: " << e;
    if constexpr (InFlight == 0) {  // the promoting atom's other order: batch, then refill
      using SF = PipelineSchedule<Stages, InFlight, true>;
      static_assert(SF::kBatchFirst && SF::kAhead == S::kAhead, "same buffers, other order");
      const std::string eb = replay(Stages, InFlight, SF::kAhead, SF::kPendingCopies, k_tiles, true);
      EXPECT_TRUE(eb.empty()) << Stages << " stages, batch before refill, " << k_tiles
                              << " K tiles: " << eb;
    }
    for (int kt = 0; kt < k_tiles; ++kt) {  // the helpers are the replay's rules
      EXPECT_EQ(S::buffer(kt), kt % Stages);
      EXPECT_EQ(S::refill_tile(kt), kt + S::kAhead);
    }
  }
}

TEST(PipelineSchedule, EveryShippedDepthIsHazardFree) {
  expect_schedule_safe<2, 0>();  // AMD tiles, mma.sync element-wise tiles
  expect_schedule_safe<3, 0>();
  expect_schedule_safe<4, 0>();  // NVIDIA mma.sync tiles, promoted fp8 wgmma tiles
  expect_schedule_safe<3, 1>();
  expect_schedule_safe<4, 1>();  // the bf16 wgmma tile: one batch in flight
  expect_schedule_safe<6, 1>();
}

// Register staging (AMD): issue() loads tile t into slot t % kAhead only; iteration kt waits for
// tile kt's loads, flushes its slot to buffer(kt), passes the barrier, issues the refill of tile
// kt + kAhead into the slot just flushed and computes tile kt. The waves of a block pass the
// barriers together but may lag one barrier interval behind each other, so when a wave flushes
// tile kt, another may still compute tile kt - 1: its buffer must not be overwritten. Checked:
// that hazard, that the tile computed is in its buffer, that a slot is flushed before its reuse
// and that the flush finds its tile's loads complete.
// barrier_before_flush (one buffer, PipelineSchedule::kBarrierBeforeFlush): the flush of tile kt
// waits at a barrier that every wave reaches only after computing tile kt - 1, so no wave lags.
std::string replay_register(int buffers, int ahead, int pending, int k_tiles,
                            bool barrier_before_flush = false) {
  auto buffer = [&](int t) { return t % buffers; };
  auto slot = [&](int t) { return t % ahead; };
  std::vector<int> resident(static_cast<size_t>(buffers), -1);  // tile in each buffer
  std::vector<int> staged(static_cast<size_t>(ahead), -1);      // tile in each slot, unflushed
  std::vector<int> groups;                                       // issued load groups: tile or -1
  auto issue = [&](int t) -> std::string {
    if (t >= k_tiles) {
      groups.push_back(-1);
      return "";
    }
    if (staged[static_cast<size_t>(slot(t))] != -1)
      return "tile " + std::to_string(t) + " reuses a staging slot before it was flushed";
    staged[static_cast<size_t>(slot(t))] = t;
    groups.push_back(t);
    return "";
  };
  for (int s = 0; s < ahead; ++s)
    if (auto e = issue(s); !e.empty()) return "prologue: " + e;
  for (int kt = 0; kt < k_tiles; ++kt) {
    if (!loads_complete(groups, pending, kt))
      return "tile " + std::to_string(kt) + " flushed before its loads";
    if (staged[static_cast<size_t>(slot(kt))] != kt)
      return "tile " + std::to_string(kt) + " flushed from the wrong slot";
    const int b = buffer(kt);
    if (kt > 0 && resident[static_cast<size_t>(b)] == kt - 1 && !barrier_before_flush)
      return "tile " + std::to_string(kt) + " overwrites tile " + std::to_string(kt - 1) +
             ", which a lagging wave may still read";
    resident[static_cast<size_t>(b)] = kt;  // flush
    staged[static_cast<size_t>(slot(kt))] = -1;
    // __syncthreads, the refill, then this tile's math
    if (auto e = issue(kt + ahead); !e.empty()) return "iteration " + std::to_string(kt) + ": " + e;
    if (resident[static_cast<size_t>(buffer(kt))] != kt)
      return "tile " + std::to_string(kt) + " is not in its buffer";
  }
  return "";
}

template <int Stages, int Buffers>
void expect_register_schedule_safe() {
  using S = PipelineSchedule<Stages, 0, false, Buffers>;
  static_assert(S::kBuffers == Buffers && S::kAhead == Stages - 1, "");
  static_assert(S::kBarrierBeforeFlush == (Buffers == 1), "");
  for (int k_tiles = 0; k_tiles <= 16; ++k_tiles) {
    const std::string e = replay_register(S::kBuffers, S::kAhead, S::kPendingCopies, k_tiles,
                                          S::kBarrierBeforeFlush);
    EXPECT_TRUE(e.empty()) << Stages << " stages, " << Buffers << " buffers, " << k_tiles
                           << " K tiles: " << e;
    for (int kt = 0; kt < k_tiles; ++kt) {
      EXPECT_EQ(S::buffer(kt), kt % Buffers);
      for (int n = 0; n <= 2 * Stages; ++n) EXPECT_EQ(S::rotate(S::buffer(kt), n), S::buffer(kt + n));
    }
  }
}

TEST(PipelineSchedule, RegisterStagingNeedsTwoBuffersOrAFlushBarrier) {
  expect_register_schedule_safe<2, 2>();
  expect_register_schedule_safe<3, 2>();  // TwoBufferTileShape: two tiles ahead in two buffers
  expect_register_schedule_safe<4, 2>();
  expect_register_schedule_safe<5, 2>();
  expect_register_schedule_safe<3, 3>();  // the shipped s3 tiles' own buffers
  expect_register_schedule_safe<4, 4>();
  // OneBufferTileShape: one buffer behind a barrier before each flush (the gfx950 halo kernel)
  expect_register_schedule_safe<4, 1>();
  expect_register_schedule_safe<3, 1>();
  expect_register_schedule_safe<2, 1>();
  // negative control: one buffer without that barrier is overwritten while a lagging wave reads
  // the tile before
  EXPECT_NE(replay_register(1, 2, 1, 8).find("lagging wave"), std::string::npos);
  // negative control: waiting for one group too few flushes a tile before its loads land
  EXPECT_NE(replay_register(2, 2, 2, 8).find("before its loads"), std::string::npos);
}

TEST(PipelineSchedule, NegativeControlsFail) {
  // One batch in flight with the refill distance of a synchronous atom: overwrites a buffer
  // the batch still reads.
  EXPECT_NE(replay(4, 1, 3, 2, 8), "");
  // Waiting for one group too few: a tile is used before its copy completes.
  EXPECT_NE(replay(4, 0, 3, 3, 8), "");
  // Batch before refill with one tile too many ahead: the refill lands in the buffer the batch
  // just started reading (with the refill first the same schedule fails earlier, on a tile not
  // yet computed: the message says which order's check caught it).
  EXPECT_NE(replay(4, 0, 4, 3, 8, true).find("still read by a batch in flight"), std::string::npos);
  EXPECT_NE(replay(4, 0, 4, 3, 8, false).find("before it is computed"), std::string::npos);
}

// The register-staged loop's trips (kernel/block_gemm.hpp, kAhead > 1): steady trips of kAhead
// tiles whose refills are issued without a test, then the last tiles, unrolled, the first
// kAhead - 1 of them with a tested refill. Replayed with the schedule's own predicates: every
// tile once and in order, tile kt in slot kt % kAhead, and the refill of tile kt + kAhead issued
// exactly when that tile lies inside K (an untested refill past K, or a last tile that should
// have refilled, is an error).
template <class S>
std::string staged_trips(int k_tiles, bool passes) {
  std::vector<int> order, refills;
  std::string error;
  auto step = [&](int kt, int slot, bool tested, bool refills_here) {
    order.push_back(kt);
    if (slot != S::slot(kt)) error = "tile " + std::to_string(kt) + " in the wrong slot";
    const int next = S::refill_tile(kt);
    if (!refills_here) {
      if (next < k_tiles) error = "tile " + std::to_string(kt) + " leaves tile " +
                                  std::to_string(next) + " without a copy";
    } else if (!tested) {
      if (next >= k_tiles) error = "an untested refill past K at tile " + std::to_string(kt);
      refills.push_back(next);
    } else if (next < k_tiles) {
      refills.push_back(next);
    }
  };
  // The steady trips as BlockGemm runs them, each tile's buffer and its refill's checked against
  // buffer(kt) and buffer(kt + kAhead). `passes`: passes of kBufferTrips trips, the steady test
  // before each, trip r of a pass in the constant buffers buffer(r * kAhead + u); else one trip
  // at a time, b0 = buffer(kt0) carried by rotate().
  auto buffers = [&](int kt, int b) {
    if (b != S::buffer(kt)) error = "tile " + std::to_string(kt) + " in the wrong buffer";
    if (S::rotate(b, S::kAhead) != S::buffer(S::refill_tile(kt)))
      error = "the refill of tile " + std::to_string(S::refill_tile(kt)) + " in the wrong buffer";
  };
  int kt0 = 0;
  if (passes) {
    for (bool steady = true; steady;)
      for (int r = 0; r < S::kBufferTrips; ++r) {
        if (!S::steady_trip(kt0, k_tiles)) {
          steady = false;
          break;
        }
        for (int u = 0; u < S::kAhead; ++u) {
          buffers(kt0 + u, S::buffer(r * S::kAhead + u));
          step(kt0 + u, u, false, true);
        }
        kt0 += S::kAhead;
      }
  } else {
    for (int b0 = S::buffer(0); S::steady_trip(kt0, k_tiles);
         kt0 += S::kAhead, b0 = S::rotate(b0, S::kAhead))
      for (int u = 0; u < S::kAhead; ++u) {
        buffers(kt0 + u, S::rotate(b0, u));
        step(kt0 + u, u, false, true);
      }
  }
  for (int j = 0; j < 2 * S::kAhead - 1; ++j)
    if (kt0 + j < k_tiles) step(kt0 + j, j % S::kAhead, true, S::last_tiles_refill(j));
  if (!error.empty()) return error;
  for (int kt = 0; kt < k_tiles; ++kt)
    if (kt >= static_cast<int>(order.size()) || order[static_cast<size_t>(kt)] != kt)
      return "tile " + std::to_string(kt) + " not computed in order";
  if (static_cast<int>(order.size()) != k_tiles) return "a tile past K computed";
  for (int t = S::kAhead; t < k_tiles; ++t)
    if (t - S::kAhead >= static_cast<int>(refills.size()) ||
        refills[static_cast<size_t>(t - S::kAhead)] != t)
      return "tile " + std::to_string(t) + " not refilled once, in order";
  if (static_cast<int>(refills.size()) != std::max(k_tiles - S::kAhead, 0))
    return "a refill past K";
  return "";
}

// A rotation without its wrap: the trips' buffers run past the last one.
template <class S>
struct NoWrap : S {
  static constexpr int rotate(int b, int n) { return b + n; }
};

// Passes one trip too short to repeat the buffers (three stages, two tiles ahead: the buffers
// repeat every three trips, not two).
template <class S>
struct ShortPass : S {
  static constexpr int kBufferTrips = S::kBufferTrips - 1;
};

// A steady trip one tile too long: its last refill may lie past K.
template <class S>
struct OneTooMany : S {
  static constexpr bool steady_trip(int kt0, int k_tiles) {
    return kt0 + 2 * S::kAhead - 2 < k_tiles;
  }
};

TEST(PipelineSchedule, StagedTripsCopyEveryTileOnce) {
  using Three = PipelineSchedule<3, 0>;  // the shipped s3 tiles: two tiles per trip
  using Four = PipelineSchedule<4, 0>;
  using Five = PipelineSchedule<5, 0>;
  using ThreeIn2 = PipelineSchedule<3, 0, false, 2>;  // TwoBufferTileShape
  using FourIn2 = PipelineSchedule<4, 0, false, 2>;
  using FiveIn2 = PipelineSchedule<5, 0, false, 2>;
  for (int k_tiles = 0; k_tiles <= 16; ++k_tiles) {
    for (bool passes : {true, false}) {
      EXPECT_EQ(staged_trips<Three>(k_tiles, passes), "") << k_tiles << " tiles " << passes;
      EXPECT_EQ(staged_trips<Four>(k_tiles, passes), "") << k_tiles << " tiles " << passes;
      EXPECT_EQ(staged_trips<Five>(k_tiles, passes), "") << k_tiles << " tiles " << passes;
      EXPECT_EQ(staged_trips<ThreeIn2>(k_tiles, passes), "") << k_tiles << " tiles " << passes;
      EXPECT_EQ(staged_trips<FourIn2>(k_tiles, passes), "") << k_tiles << " tiles " << passes;
      EXPECT_EQ(staged_trips<FiveIn2>(k_tiles, passes), "") << k_tiles << " tiles " << passes;
    }
  }
  EXPECT_EQ(ThreeIn2::kBufferTrips, 1);  // two tiles per trip in two buffers: every trip alike
  EXPECT_EQ(FourIn2::kBufferTrips, 2);
  EXPECT_NE(staged_trips<NoWrap<FourIn2>>(16, false), "");
  // negative control: some K length makes the too-long steady trip refill past K
  bool caught = false;
  for (int k_tiles = 0; k_tiles <= 16; ++k_tiles)
    caught = caught || staged_trips<OneTooMany<Three>>(k_tiles, true) != "";
  EXPECT_TRUE(caught);
  // negative control: a pass that ends before the buffers repeat
  EXPECT_EQ(Three::kBufferTrips, 3);
  EXPECT_EQ(Four::kBufferTrips, 4);
  EXPECT_EQ((PipelineSchedule<4, 1>::kBufferTrips), 2);  // two ahead of four: every second trip
  EXPECT_NE(staged_trips<ShortPass<Three>>(16, true), "");
  EXPECT_NE(staged_trips<ShortPass<Four>>(16, true), "");
  // negative control: the carried rotation without its wrap
  EXPECT_NE(staged_trips<NoWrap<Three>>(16, false), "");
  EXPECT_NE(staged_trips<NoWrap<Four>>(16, false), "");
}

}  // namespace
