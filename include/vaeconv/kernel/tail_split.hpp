// vaeconv/kernel/tail_split.hpp — the tail rule: a grid whose last round would leave most units
// idle runs that round's work on a smaller tile, in a second launch.
//
// A tile of one resident block per unit runs its grid in rounds of `units` blocks. Where the last
// round is short, most units wait while its few blocks each run a whole K chain of the big tile:
// 384 -> 384 at 166 x 166 on sm_90a's 128 x 192 tile is 432 blocks over 132 SMs, three full
// rounds and a fourth of 36 blocks (27 % of the SMs busy). The rule cuts every frame's pixels at a
// multiple of the head tile's BM, so that the head launch is whole rounds at most, and gives the
// rest of each frame (the tail) to a tile of fewer MACs per block:
//
//   blocks(tile, pixels) = frames x ceil(pixels / BM) x ceil(Cout / BN)
//   rounds               = ceil(blocks(head, frame) / (units x head resident))
//   split                = floor((rounds - 1) x units x head resident
//                                / (frames x head n_tiles)) x BM
//   the split where rounds >= 2, the last round is partial, split > 0, and the tail's blocks
//   (blocks(tail, frame - split)) take at most `tail resident` blocks per unit, all at once,
//   whose MACs per unit (ceil(tail blocks / units) x tail BM x BN) are at most half a head block's
//
// so each unit's share of the tail is done in about half a head block's time: the margin pays the
// second launch and the smaller tile's lower rate per MAC (a tail of three quarters of a head
// block could save at most a quarter of one round). units is the target's
// NOMINAL count (sm_90a: an H100 SXM's or H200's 132 SMs), like the round rule's
// (tile_rounds.hpp): the plan reads only the descriptor, and on a device with other counts the
// split runs correctly, only maybe slower. Host code.
#pragma once
#include <cstdint>

namespace vaeconv::kernel {

// One tile's side of the rule: its block shape and resident blocks per unit.
struct TailRuleTile {
  int bm;
  int bn;
  int resident;
};

// Each frame's pixels of the head launch ([0, split); the tail launch takes the rest), or 0 where
// the conv runs in one launch. frames: output frames of the launch (N x T_out); cout: the
// channels the tiles' n_tiles cover.
constexpr int tail_split_pixels(int units, int64_t frames, int frame_pixels, int cout,
                                TailRuleTile head, TailRuleTile tail) {
  if (units <= 0 || frames <= 0 || frame_pixels <= 0 || cout <= 0) return 0;
  const int64_t head_n = (cout + head.bn - 1) / head.bn;
  const int64_t tail_n = (cout + tail.bn - 1) / tail.bn;
  const int64_t slots = int64_t(units) * head.resident;
  const int64_t blocks = frames * ((frame_pixels + head.bm - 1) / head.bm) * head_n;
  const int64_t rounds = (blocks + slots - 1) / slots;
  if (rounds < 2 || blocks % slots == 0) return 0;
  const int64_t head_m_blocks = (rounds - 1) * slots / (frames * head_n);
  const int64_t split = head_m_blocks * head.bm;
  if (head_m_blocks <= 0 || split >= frame_pixels) return 0;
  const int64_t tail_blocks = frames * ((frame_pixels - split + tail.bm - 1) / tail.bm) * tail_n;
  const int64_t per_unit = (tail_blocks + units - 1) / units;
  if (per_unit > tail.resident) return 0;
  if (2 * per_unit * tail.bm * tail.bn > int64_t(head.bm) * head.bn) return 0;
  return int(split);
}

}  // namespace vaeconv::kernel
