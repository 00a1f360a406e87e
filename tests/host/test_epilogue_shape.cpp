// The epilogue's column slabs (kernel/epilogue.hpp): a slab must hold whole atoms and whole
// 8-channel store chunks, or the accumulator scatter writes an atom's columns past the slab row.
// The H200 sweep of session 3 found that bug with a 128 x 48 tile (two 24-column slabs of a
// 16-wide atom: 525 of 6144 sampled outputs wrong); the rule is now checked here for every tile
// the table could hold.
#include <gtest/gtest.h>

#include "vaeconv/kernel/epilogue_shape.hpp"

namespace vaeconv {
namespace {

// The sizes EpilogueShape reads from a TilePolicy.
template <int BM_, int BN_, int kPipelineBytes_, int kAtomN>
struct FakePolicy {
  static constexpr int BM = BM_, BN = BN_, kPipelineBytes = kPipelineBytes_;
  struct AtomT {
    static constexpr int kN = kAtomN;
  };
};

TEST(EpilogueShape, SlabsHoldWholeAtoms) {
  // The sweep candidate that failed on the H200: 128 x 48 x 32, 2 stages, 16-wide atoms.
  using Failed = kernel::EpilogueShape<FakePolicy<128, 48, 2 * (128 + 48) * 64, 16>>;
  EXPECT_EQ(Failed::kSlabCols, 16) << "three whole-atom slabs, not two slabs of 24 columns";
  // Shipped shapes keep their slabs: NVIDIA fp8 wide 192 x 96 (4 stages), AMD bf16 wide 128 x 128.
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<192, 96, 4 * (192 + 96) * 64, 16>>::kSlabCols), 48);
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<128, 96, 4 * (128 + 96) * 64, 16>>::kSlabCols), 96);
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<128, 128, 2 * (128 + 128) * 64, 32>>::kSlabCols), 32);
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<64, 96, 2 * (64 + 96) * 64, 16>>::kSlabCols), 48);
  // NVIDIA wgmma wide tiles (one 96-wide atom per warpgroup) keep one slab.
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<128, 96, 4 * (128 + 96) * 128, 96>>::kSlabCols), 96);
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<64, 96, 4 * (64 + 96) * 64, 96>>::kSlabCols), 96);
  // A 96-wide AMD tile (32-wide MFMA atoms, 2 stages): three slabs of 32 fit its 28 KiB pipeline,
  // where halving stopped at 96 columns (50 KiB of LDS: one workgroup per gfx942 CU).
  EXPECT_EQ((kernel::EpilogueShape<FakePolicy<128, 96, 2 * (128 + 96) * 64, 32>>::kSlabCols), 32);
}

}  // namespace
}  // namespace vaeconv
