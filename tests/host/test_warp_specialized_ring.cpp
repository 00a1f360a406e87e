// The warp-specialized pipeline's protocol (kernel/warp_specialized_conv_kernel.hpp) under random
// interleavings: a producer fills a ring of stages, its copies land in any order, two consumer
// warpgroups wait for full stages, keep one wgmma batch in flight (or none: the promoting e4m3
// form) and release the stage a retired batch read. The barriers are modelled from their PTX
// semantics (a phase completes at its expected arrivals; try_wait.parity P passes once the phase
// of parity P has completed, at once for P = 1 on a fresh barrier), the ring is the kernel's own
// StageRing. Checked: every consumer reads each K tile's data in its stage, no stage is refilled
// while a batch reads it, and nothing deadlocks, over several blocks' worth of tiles. Negative
// controls: the producer at the consumers' parity, and a consumer releasing the stage of the
// batch still in flight, must each be caught.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "vaeconv/kernel/pipeline_schedule.hpp"

namespace {

struct SimBarrier {
  int expected = 1, pending = 1, phase = 0;
  void init(int n) { expected = pending = n; phase = 0; }
  bool passed(uint32_t parity) const { return uint32_t(phase & 1) != parity; }
  void arrive() {
    if (--pending == 0) {
      ++phase;
      pending = expected;
    }
  }
};

enum class Fault { kNone, kProducerParity, kReleaseInFlight };

struct Outcome {
  bool deadlock = false;
  std::string violation;
};

template <int kStages>
Outcome simulate(int tiles, int k_tiles, bool promote, Fault fault, uint32_t seed) {
  using Ring = vaeconv::kernel::StageRing<kStages>;
  constexpr int kProducerThreads = 3;  // arrivals on full (the kernel: 128 or 256)
  constexpr int kConsumers = 2, kWarpsPerConsumer = 4;
  const int total = tiles * k_tiles;
  SimBarrier full[kStages], empty[kStages];
  for (int s = 0; s < kStages; ++s) {
    full[s].init(kProducerThreads);
    empty[s].init(kConsumers * kWarpsPerConsumer);
  }
  int content[kStages];
  for (int& c : content) c = -1;
  std::vector<std::pair<int, int>> landings;  // (stage, K tile) of copies in flight
  std::multiset<int> reading;                  // stages a batch in flight reads

  struct Producer { int u = 0; Ring ring; } prod;
  struct Consumer { int u = 0; int previous = -1; Ring ring; } cons[kConsumers];
  std::mt19937 rng(seed);
  Outcome out;
  auto release = [&](int s) {
    for (int w = 0; w < kWarpsPerConsumer; ++w) empty[s].arrive();
  };
  for (;;) {
    bool done = prod.u == total && landings.empty();
    for (const Consumer& c : cons) done = done && c.u == total;
    if (done) return out;
    // Actors that can move: 0 the producer, 1 the copies' landing, 2 + c consumer c.
    std::vector<int> ready;
    const uint32_t producer_parity =
        fault == Fault::kProducerParity ? prod.ring.consumer_parity() : prod.ring.producer_parity();
    if (prod.u < total && empty[prod.ring.stage].passed(producer_parity)) ready.push_back(0);
    if (!landings.empty()) ready.push_back(1);
    for (int c = 0; c < kConsumers; ++c)
      if (cons[c].u < total && full[cons[c].ring.stage].passed(cons[c].ring.consumer_parity()))
        ready.push_back(2 + c);
    if (ready.empty()) {
      out.deadlock = true;
      return out;
    }
    const int actor = ready[rng() % ready.size()];
    if (actor == 0) {
      const int s = prod.ring.stage;
      if (reading.count(s) != 0 && out.violation.empty())
        out.violation = "stage " + std::to_string(s) + " refilled under a batch";
      content[s] = prod.u;
      for (int t = 0; t < kProducerThreads; ++t) landings.emplace_back(s, prod.u);
      ++prod.u;
      prod.ring.advance();
    } else if (actor == 1) {
      const size_t i = rng() % landings.size();
      full[landings[i].first].arrive();
      landings.erase(landings.begin() + long(i));
    } else {
      Consumer& c = cons[actor - 2];
      const int s = c.ring.stage;
      if (content[s] != c.u && out.violation.empty())
        out.violation = "K tile " + std::to_string(c.u) + " read " + std::to_string(content[s]);
      const bool last_of_tile = c.u % k_tiles == k_tiles - 1;
      if (promote) {  // the batch waited for at once, its stage released
        release(s);
      } else {
        reading.insert(s);  // the batch, in flight
        if (fault == Fault::kReleaseInFlight) release(s);  // too early: the batch reads it
        if (c.previous >= 0) {  // wait_batches<1>: the batch before retired
          reading.erase(reading.find(c.previous));
          if (fault != Fault::kReleaseInFlight) release(c.previous);
        }
        c.previous = s;
        if (last_of_tile) {  // wait_batches<0> before the epilogue
          reading.erase(reading.find(s));
          if (fault != Fault::kReleaseInFlight) release(s);
          c.previous = -1;
        }
      }
      ++c.u;
      c.ring.advance();
    }
  }
}

template <int kStages>
void check_protocol() {
  for (bool promote : {false, true})
    for (int k_tiles : {1, 2, kStages - 1, kStages, 2 * kStages + 1, 17})
      for (uint32_t seed = 1; seed <= 40; ++seed) {
        const Outcome o = simulate<kStages>(3, k_tiles, promote, Fault::kNone, seed);
        ASSERT_FALSE(o.deadlock) << kStages << " stages, k_tiles " << k_tiles << " seed " << seed;
        ASSERT_TRUE(o.violation.empty())
            << o.violation << " (" << kStages << " stages, k_tiles " << k_tiles << ")";
      }
}

TEST(WarpSpecializedRing, ParityAdvancesEachLap) {
  vaeconv::kernel::StageRing<3> r;
  for (int u = 0; u < 12; ++u) {
    EXPECT_EQ(r.stage, u % 3);
    EXPECT_EQ(r.consumer_parity(), uint32_t((u / 3) & 1));
    EXPECT_EQ(r.producer_parity(), uint32_t(((u / 3) & 1) ^ 1));
    r.advance();
  }
}

TEST(WarpSpecializedRing, RandomInterleavingsNeverDeadlockNorOverwrite) {
  check_protocol<2>();
  check_protocol<3>();
  check_protocol<4>();
  check_protocol<6>();
}

// The checks can fail: a producer waiting at the consumers' parity, and a consumer that releases
// the stage its in-flight batch reads, are caught (a deadlock or a refill under a batch).
TEST(WarpSpecializedRing, NegativeControls) {
  int parity_caught = 0, release_caught = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const Outcome a = simulate<4>(3, 9, false, Fault::kProducerParity, seed);
    parity_caught += a.deadlock || !a.violation.empty();
    const Outcome b = simulate<4>(3, 9, false, Fault::kReleaseInFlight, seed);
    release_caught += b.deadlock || !b.violation.empty();
  }
  EXPECT_EQ(parity_caught, 40);
  EXPECT_GT(release_caught, 0);
}

}  // namespace
