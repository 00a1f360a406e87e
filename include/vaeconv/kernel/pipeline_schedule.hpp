// vaeconv/kernel/pipeline_schedule.hpp — the K pipeline's schedule, as constexpr rules.
//
// BlockGemm (block_gemm.hpp) keeps kBuffers LDS buffers; tile kt lives in buffer kt % kBuffers.
// Iteration kt waits for tile kt's copy, passes a barrier, issues the copy of tile kt + kAhead,
// and computes tile kt. An atom that runs asynchronously (wgmma) may leave kInFlight of its
// batches unfinished across the barrier; the buffers they read must not be refilled, so
//   kAhead + kInFlight + 1 = kStages        (copies ahead, batches in flight, the tile computed).
// AMD stages copies in registers: tile t uses staging slot t % kAhead, flushed to LDS at
// iteration t before the barrier, and reused by tile t + kAhead, issued after that barrier.
// Within an iteration, after the barrier, the refill is issued before the tile's math, except
// with kBatchFirst (only without batches in flight: the promoting fp8 atom, which waits for its
// batch at the next iteration's top): its batch starts first, and the copies' address arithmetic
// and issue run under it. The refilled buffer is then tile kt - 1's, whose batch has retired.
// Register staging writes LDS only at a flush, so it needs fewer buffers than tiles in flight:
// tile kt's flush (iteration kt, before its barrier) overwrites the buffer of tile kt - kBuffers,
// at most tile kt - 2, which every wave finished computing before iteration kt - 1's barrier. Two
// buffers (kBuffers = 2) then hold any depth kAhead of copies in flight: the slots carry them,
// not the LDS (a copy that writes LDS at issue, cp.async or a synchronous store, needs kBuffers =
// kStages). One buffer (kBuffers = 1) holds them too if every flush first waits at a barrier
// for all waves to finish the tile before it (kBarrierBeforeFlush): two barriers per K tile.
// tests/host/test_pipeline_schedule.cpp replays the schedule, in both orders, and checks those
// claims.
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"

namespace vaeconv::kernel {

VAECONV_HD constexpr int schedule_gcd(int a, int b) { return b == 0 ? a : schedule_gcd(b, a % b); }

template <int Stages, int InFlight, bool BatchFirst = false, int Buffers = Stages>
struct PipelineSchedule {
  static constexpr int kStages = Stages, kInFlight = InFlight;
  static constexpr bool kBatchFirst = BatchFirst;
  static_assert(!BatchFirst || InFlight == 0, "a batch ahead of the refill is waited for in turn");
  static constexpr int kAhead = Stages - 1 - InFlight;
  static_assert(kAhead >= 1, "a tile ahead at least (LDS atoms with a batch in flight: 3 stages)");
  // LDS buffers: kStages, or (register staging only, see above) fewer, down to one.
  static constexpr int kBuffers = Buffers;
  static_assert(kBuffers == kStages || (kBuffers >= 1 && kBuffers < kStages && InFlight == 0),
                "fewer buffers than stages: register staging without batches in flight");
  // One buffer: a flush overwrites the tile before it, which a lagging wave may still read.
  static constexpr bool kBarrierBeforeFlush = kBuffers == 1;
  // Copy groups that may still be pending when tile kt is needed: those of the kAhead - 1 tiles
  // issued after it (one group is committed per iteration, empty past the last tile).
  static constexpr int kPendingCopies = kAhead - 1;
  VAECONV_HD static constexpr int buffer(int kt) { return kt % kBuffers; }
  // buffer(kt + n) from b = buffer(kt), for n >= 0 (a constant): one add and one wrap.
  VAECONV_HD static constexpr int rotate(int b, int n) {
    return b + n % kBuffers >= kBuffers ? b + n % kBuffers - kBuffers : b + n % kBuffers;
  }
  VAECONV_HD static constexpr int slot(int kt) { return kt % kAhead; }
  // The tile whose copy iteration kt issues after its barrier.
  VAECONV_HD static constexpr int refill_tile(int kt) { return kt + kAhead; }
  // Register staging with several tiles ahead runs kAhead tiles per trip (block_gemm.hpp): a
  // steady trip from tile kt0 has every refill inside K, so it issues them without a test; the
  // last 1 .. 2 * kAhead - 1 tiles follow, tile kt0 + j refilling (tested) only for
  // j < kAhead - 1, since kt0 + j + kAhead >= k_tiles for the others.
  VAECONV_HD static constexpr bool steady_trip(int kt0, int k_tiles) {
    return kt0 + 2 * kAhead - 1 < k_tiles;
  }
  VAECONV_HD static constexpr bool last_tiles_refill(int j) { return j < kAhead - 1; }
  // Trips of kAhead tiles after which the buffers repeat: trip r (from tile 0) holds tiles
  // r * kAhead + u in buffers buffer(r * kAhead + u), the same as every kBufferTrips trips later.
  static constexpr int kBufferTrips = kBuffers / schedule_gcd(kBuffers, kAhead);
};

// The stage ring of a warp-specialized pipeline (warp_specialized_conv_kernel.hpp): K tile u of a
// block (counted over all its block tiles) lives in stage u % kStages and is that stage's use
// u / kStages, whose mbarrier phase has parity (u / kStages) & 1 (arch/nvidia_mbarrier.hpp). The
// consumers wait for `full` at that parity; the producer waits for `empty` at the other one, the
// phase of the stage's previous use (on a fresh barrier, the phase before the first, which counts
// as completed). tests/host/test_warp_specialized_ring.cpp runs the protocol under random
// interleavings and checks that no stage is refilled while a batch reads it.
template <int kStages>
struct StageRing {
  int stage = 0;
  uint32_t parity = 0;
  VAECONV_HD void advance() {
    if (++stage == kStages) {
      stage = 0;
      parity ^= 1u;
    }
  }
  VAECONV_HD uint32_t consumer_parity() const { return parity; }
  VAECONV_HD uint32_t producer_parity() const { return parity ^ 1u; }
};

}  // namespace vaeconv::kernel
