// vaeconv/kernel/register_split.hpp — how a warp-specialized block shares its registers
// (kernel/warp_specialized_conv_kernel.hpp; setmaxnreg, NVIDIA sm_90a).
//
// setmaxnreg only moves registers between the warpgroups of a block: the pool is what the block
// was launched with, every thread at the launch bound's count (65536 / threads in whole 8s: 168
// at 384 threads, 128 at 512). The producer warpgroups lower their count and the consumers raise
// theirs; a raise that the producers' release does not cover waits forever. So the consumers
// share exactly what the producers leave of that pool, in the whole 8s setmaxnreg takes (at most
// 256). Host code: tests/host/test_register_split.cpp checks the rule for every producer count.
#pragma once

namespace vaeconv::kernel {

struct RegisterSplit {
  int launch;    // registers a thread at launch, every warpgroup
  int producer;  // each producer warpgroup's, after its release
  int consumer;  // each consumer warpgroup's, after its raise
};

// The producers' registers where a promoting atom (e4m3) sets the split and the shape names none:
// its consumers keep a K tile's partial sums beside the accumulators. At 384 threads the pool is
// 168 a thread; 104 for the producer leaves 200 to each of two consumers: room for the producer's
// gather state and for the consumers' accumulators and partial sums (chosen from ptxas's spill
// reports, docs/perf-notes.md, W26). The warp-specialized kernel and the host test share it.
inline constexpr int kPromoteProducerRegisters = 104;

// The split of a block of consumer_warpgroups consumers and producer_warpgroups producers that keep
// producer_registers a thread.
constexpr RegisterSplit register_split(int consumer_warpgroups, int producer_registers,
                                       int producer_warpgroups = 1) {
  const int warpgroups = consumer_warpgroups + producer_warpgroups;
  const int launch = 65536 / (warpgroups * 128) / 8 * 8;
  const int share = (launch * warpgroups - producer_registers * producer_warpgroups) /
                    consumer_warpgroups / 8 * 8;
  return {launch, producer_registers, share < 256 ? share : 256};  // setmaxnreg's largest count
}

}  // namespace vaeconv::kernel
