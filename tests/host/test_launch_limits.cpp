// tests/host/test_launch_limits.cpp — the launch refusals of conv/launch_limits.hpp, at and just
// past each limit, for both kinds of grid and both ways of counting a launch (HIP's 32-bit thread
// count, CUDA's block count, passed explicitly: host tests are built by a plain C++ compiler, so
// the build's own kLaunchCountsThreads32 is CUDA's here): no tile count reaches them in a GPU
// test (that would take more than 2^31 tiles or 2^32 threads), so they are checked here.
#include <gtest/gtest.h>

#include "vaeconv/conv/launch_limits.hpp"

namespace vaeconv {
namespace {

using detail::kInt31;  // 2^31 - 1

TEST(LaunchLimits, TileIndexFitsAnInt) {
  // One tile per block: tile indices 0 .. 2^31 - 2.
  EXPECT_TRUE(check_tile_grid(kInt31, 1, false, " tiles", false).ok());
  const Status s = check_tile_grid(kInt31 + 1, 1, false, " tiles", false);
  EXPECT_EQ(s.code(), StatusCode::kOverflow);
  EXPECT_NE(s.message().find("more than 2^31 - 1 tiles"), std::string::npos) << s.to_string();
  // Persistent: a block's index may pass the last tile by up to the grid (kMaxPersistentGrid).
  const int64_t persistent_max = kInt31 - kMaxPersistentGrid;
  EXPECT_EQ(max_tiles(true), persistent_max);
  EXPECT_TRUE(check_tile_grid(persistent_max, 256, true, " tiles", true).ok());
  const Status p = check_tile_grid(persistent_max + 1, 256, true, " tiles", true);
  EXPECT_EQ(p.code(), StatusCode::kOverflow);
  EXPECT_NE(p.message().find("more than 2^31 - 2^20"), std::string::npos) << p.to_string();
  // The index plus one grid stride still fits an int.
  EXPECT_LE(persistent_max + kMaxPersistentGrid, kInt31);
}

TEST(LaunchLimits, HipCountsThreadsIn32Bits) {
  // 2^24 blocks of 256 threads: exactly 2^32 threads, one too many for HIP, fine for CUDA.
  const int64_t tiles = int64_t(1) << 24;
  const Status hip = check_tile_grid(tiles, 256, false, " tiles", /*counts_threads32=*/true);
  EXPECT_EQ(hip.code(), StatusCode::kOverflow);
  EXPECT_NE(hip.message().find("2^32 - 1 threads"), std::string::npos) << hip.to_string();
  EXPECT_NE(hip.message().find(std::to_string(tiles)), std::string::npos) << hip.to_string();
  EXPECT_TRUE(check_tile_grid(tiles - 1, 256, false, " tiles", true).ok());  // 2^32 - 256
  EXPECT_TRUE(check_tile_grid(tiles, 256, false, " tiles", /*counts_threads32=*/false).ok());
  // A persistent grid is cut to the resident blocks: the thread count does not apply.
  EXPECT_TRUE(check_tile_grid(tiles, 256, true, " tiles", true).ok());
}

// What remains of the old 65535-frame grid-y limit: a conv admitted by validate_for_kernels
// (N * T_out <= kMaxKernelFrames, conv_args.hpp) with one tile per frame meets only these limits.
// CUDA launches every admitted frame count; HIP's 32-bit thread count stops one-tile-per-block
// launches of 256 threads at 2^24 - 1 frames (the message names the limit and the tile count);
// persistent grids stop 2^20 short of the int.
TEST(LaunchLimits, FramesOfOneTileEach) {
  const int64_t frames = kMaxKernelFrames;  // one tile per frame: tiles == frames
  EXPECT_TRUE(check_tile_grid(frames, 256, false, " tiles", /*counts_threads32=*/false).ok());
  EXPECT_EQ(check_tile_grid(frames, 256, true, " tiles", false).code(), StatusCode::kOverflow);
  EXPECT_TRUE(check_tile_grid(frames - kMaxPersistentGrid, 256, true, " tiles", false).ok());
  const int64_t hip_max = int64_t(UINT32_MAX) / 256;  // 2^24 - 1
  EXPECT_TRUE(check_tile_grid(hip_max, 256, false, " tiles", true).ok());
  const Status s = check_tile_grid(hip_max + 1, 256, false, " tiles", true);
  EXPECT_EQ(s.code(), StatusCode::kOverflow);
  EXPECT_NE(s.message().find("2^32 - 1 threads (HIP's launch limit) in 16777216 tiles"),
            std::string::npos)
      << s.to_string();
  // The old limit is far inside all of them.
  EXPECT_TRUE(check_tile_grid(65536, 256, false, " tiles", true).ok());
  EXPECT_TRUE(check_tile_grid(65536, 256, true, " tiles", true).ok());
}

}  // namespace
}  // namespace vaeconv
