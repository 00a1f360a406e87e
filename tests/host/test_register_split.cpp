// The register split of the warp-specialized kernel (kernel/register_split.hpp): the consumers'
// raise never asks for more than the producer's release leaves of the launch pool (else
// setmaxnreg.inc waits forever), for every producer count setmaxnreg takes and one to three
// consumer warpgroups; and the shipped e4m3 192-wide kernel's split (two consumers, a 104-register
// producer) is 104 / 200 of 168 at launch.
#include <gtest/gtest.h>

#include "vaeconv/kernel/register_split.hpp"

namespace {

using vaeconv::kernel::register_split;
using vaeconv::kernel::RegisterSplit;

TEST(RegisterSplit, ShippedSplit) {
  constexpr RegisterSplit s = register_split(2, vaeconv::kernel::kPromoteProducerRegisters);
  static_assert(s.launch == 168 && s.producer == 104 && s.consumer == 200);
  EXPECT_EQ(s.launch * 3, 504);  // 65536 / 384 in whole 8s, three warpgroups
  // The bf16 192-wide tile: two producers of 56 beside two consumers, 512 threads at 128.
  constexpr RegisterSplit two = register_split(2, 56, 2);
  static_assert(two.launch == 128 && two.producer == 56 && two.consumer == 200);
  EXPECT_EQ(2 * two.producer + 2 * two.consumer, 4 * two.launch);  // the whole pool handed out
}

TEST(RegisterSplit, RaiseStaysInsideTheLaunchPool) {
  int checked = 0;
  for (int producers = 1; producers <= 2; ++producers) {
    for (int consumers = 1; consumers <= 3; ++consumers) {
      const int launch = register_split(consumers, 24, producers).launch;
      for (int producer = 24; producer <= launch; producer += 8) {
        const RegisterSplit s = register_split(consumers, producer, producers);
        SCOPED_TRACE(testing::Message() << consumers << " consumers, " << producers
                                        << " producers of " << producer);
        const int pool = s.launch * (consumers + producers);
        EXPECT_LE(producers * s.producer + consumers * s.consumer, pool);
        // Whole 8s, a raise (not a release), and inside setmaxnreg's range.
        EXPECT_EQ(s.consumer % 8, 0);
        EXPECT_GE(s.consumer, s.launch);
        EXPECT_LE(s.consumer, 256);
        // Nothing that could be handed out is left over: one more 8 for each consumer overflows
        // the pool or setmaxnreg's range.
        if (s.consumer < 256) {
          EXPECT_GT(producers * s.producer + consumers * (s.consumer + 8), pool);
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 30);
}

TEST(RegisterSplit, TheHungSweepSplitIsRefused) {
  // A 48-register producer beside two consumers: the old rule (512 per warpgroup slot) gave each
  // consumer 232, 8 past the pool, and the block hung on a GPU. The pool leaves 224.
  const RegisterSplit s = register_split(2, 48);
  EXPECT_EQ(s.consumer, 224);
  EXPECT_GT(48 + 2 * 232, s.launch * 3);
}

}  // namespace
