// vaeconv/conv/launch_limits.hpp — the limits a kernel's 1D grid of block tiles must respect.
//
// Host code, separate from api/conv.hpp (which needs a GPU compiler) so that the host tests can
// check every refusal, the HIP one included, without launching anything:
//   * the kernels index tiles with an int, and a persistent block advances its index by the grid
//     (at most kMaxPersistentGrid blocks), so a persistent kernel takes at most 2^31 - 1 - 2^20
//     tiles and a one-tile-per-block kernel 2^31 - 1;
//   * HIP's launch takes grid x times the block size as one 32-bit count, so a one-tile-per-block
//     launch on HIP stops at 2^32 - 1 threads (a persistent grid is cut to the resident blocks
//     and never gets near it). CUDA counts blocks, not threads.
#pragma once
#include <cstdint>
#include <string>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/core/config.hpp"
#include "vaeconv/core/status.hpp"

namespace vaeconv {

// A persistent grid never exceeds this many blocks (far above any GPU's resident blocks).
inline constexpr int64_t kMaxPersistentGrid = int64_t(1) << 20;

// Whether this build's launches count threads in 32 bits (HIP) or not (CUDA, host builds).
#if defined(VAECONV_BACKEND_HIP)
inline constexpr bool kLaunchCountsThreads32 = true;
#else
inline constexpr bool kLaunchCountsThreads32 = false;
#endif

// The most block tiles a kernel's int tile index covers.
inline constexpr int64_t max_tiles(bool persistent) {
  return persistent ? detail::kInt31 - kMaxPersistentGrid : detail::kInt31;
}

// Ok, or kOverflow with a message naming the limit and the launch (`what`: its tiles, e.g.
// " block tiles of 128 pixels x 96 channels").
inline Status check_tile_grid(int64_t tiles, int threads, bool persistent, const std::string& what,
                              bool counts_threads32 = kLaunchCountsThreads32) {
  if (tiles > max_tiles(persistent))
    return Status(StatusCode::kOverflow,
                  std::string(persistent ? "more than 2^31 - 2^20" : "more than 2^31 - 1") + what);
  if (counts_threads32 && !persistent && tiles * threads > int64_t(UINT32_MAX))
    return Status(StatusCode::kOverflow, "more than 2^32 - 1 threads (HIP's launch limit) in " +
                                             std::to_string(tiles) + what);
  return Status::Ok();
}

}  // namespace vaeconv
