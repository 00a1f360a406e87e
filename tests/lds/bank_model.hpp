// tests/lds/bank_model.hpp — the LDS bank model of AMD CDNA (gfx942, gfx950), host code.
//
// An LDS instruction of one wave is served in phases: fixed groups of lanes whose accesses the
// LDS handles together. Within a phase each bank delivers one dword per cycle, so a phase takes
// as many cycles as its busiest bank has DISTINCT dwords to serve (lanes reading the same dword
// share it: a broadcast). The instruction's cycles are the sum over its phases; its conflict
// "ways" are those cycles divided by the conflict-free minimum (one cycle per phase that has an
// active lane): 1.0 = conflict-free, 2.0 = every phase twice as long, and so on.
//
// Banks: dword d of LDS lives in bank d % kBanks. gfx942: 32 banks of 4 bytes (128 B/clk per CU);
// gfx950: 64 banks (256 B/clk).
//
// Phases (lane groups), each row cited or marked ASSUMED:
//   gfx942 ds_read_b128   8 groups of 8: {0-3,20-23} {4-7,16-19} {8-11,28-31} {12-15,24-27}, the
//                         same +32. CK docs/conceptual/ck_tile/hardware/lds_bank_conflicts.rst
//                         ("Read Access Pattern"); shared/notes/cdna.md lists the same sets.
//   gfx942 ds_write_b128  8 groups of 8 consecutive lanes: CK lds_bank_conflicts.rst ("ds_write_b128
//                         ... divided into 8 phases"); shared/notes/cdna.md "writes go 8 lanes at
//                         a time".
//   gfx942 b64 (r/w)      ASSUMED 4 groups of 16 consecutive lanes: 128 B per phase, the bank width
//                         (gfx950's ds_write_b64 was measured in 16-lane groups, below).
//   gfx942 b32, b16       2 groups of 32 consecutive lanes: AMD APP OpenCL Programming Guide, LDS
//                         optimization ("Threads 0 through 31 are checked for conflicts as are
//                         threads 32 through 63"); CK's bank-rule slides draw one half-wave (32
//                         lanes x 32 banks) per panel.
//   gfx950 ds_read_b128   4 groups of 16: {0-3,12-15,20-23,24-27} {4-11,16-19,28-31}, the same +32.
//                         Measured on MI355X by HipKittens (arXiv 2511.08083; the repository's
//                         analysis/paper_experiments/phases/ds_read_b128/phase_results.txt, which
//                         also measures 64 banks): each is the union of two gfx942 groups.
//   gfx950 ds_read_b64    2 groups of 32 consecutive lanes: HipKittens, phases/ds_read_b64.
//   gfx950 ds_write_b64   4 groups of 16 consecutive lanes: HipKittens, phases/ds_write_b64.
//   gfx950 ds_write_b128  ASSUMED 8 groups of 8 consecutive lanes: gfx942's rule; the measured
//                         ds_write_b64 groups show writes at 128 B per phase on gfx950 too.
//   gfx950 ds_read_b32    ASSUMED 1 group of 64 lanes (256 B per phase, the read width of b64/b128).
//   gfx950 b32/b16 writes ASSUMED 2 groups of 32 consecutive lanes (128 B per phase, as b64 writes).
// Within a phase, two lanes writing different bytes of one dword (b16) count as one dword: ASSUMED.
// ds_write2_b32 (two dwords per lane at two offsets) is modelled as two ds_write_b32: ASSUMED.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace vaeconv::lds {

enum class Target { kGfx942, kGfx950 };
enum class Instr { kReadB128, kReadB64, kReadB32, kWriteB128, kWriteB64, kWriteB32, kWriteB16 };

inline const char* target_name(Target t) { return t == Target::kGfx942 ? "gfx942" : "gfx950"; }
inline const char* instr_name(Instr i) {
  switch (i) {
    case Instr::kReadB128: return "ds_read_b128";
    case Instr::kReadB64: return "ds_read_b64";
    case Instr::kReadB32: return "ds_read_b32";
    case Instr::kWriteB128: return "ds_write_b128";
    case Instr::kWriteB64: return "ds_write_b64";
    case Instr::kWriteB32: return "ds_write_b32";
    case Instr::kWriteB16: return "ds_write_b16";
  }
  return "?";
}
inline int access_bytes(Instr i) {
  switch (i) {
    case Instr::kReadB128: case Instr::kWriteB128: return 16;
    case Instr::kReadB64: case Instr::kWriteB64: return 8;
    case Instr::kReadB32: case Instr::kWriteB32: return 4;
    case Instr::kWriteB16: return 2;
  }
  return 0;
}
inline int banks(Target t) { return t == Target::kGfx942 ? 32 : 64; }
constexpr int kWaveLanes = 64;

using LaneGroups = std::vector<std::vector<int>>;

namespace detail {
inline LaneGroups consecutive(int lanes_per_group) {
  LaneGroups g;
  for (int l0 = 0; l0 < kWaveLanes; l0 += lanes_per_group) {
    g.emplace_back();
    for (int l = l0; l < l0 + lanes_per_group; ++l) g.back().push_back(l);
  }
  return g;
}
// Lane quads {4a..4a+3} joined into groups, in the two wave halves alike.
inline LaneGroups quads(const std::vector<std::vector<int>>& quad_sets) {
  LaneGroups g;
  for (int half = 0; half < 2; ++half)
    for (const auto& set : quad_sets) {
      g.emplace_back();
      for (int q : set)
        for (int i = 0; i < 4; ++i) g.back().push_back(32 * half + 4 * q + i);
    }
  return g;
}
}  // namespace detail

// The phases of an instruction on a target (the table in the header comment).
inline LaneGroups phases(Target t, Instr i) {
  if (t == Target::kGfx942) {
    switch (i) {
      case Instr::kReadB128: return detail::quads({{0, 5}, {1, 4}, {2, 7}, {3, 6}});
      case Instr::kWriteB128: return detail::consecutive(8);
      case Instr::kReadB64: case Instr::kWriteB64: return detail::consecutive(16);
      case Instr::kReadB32: case Instr::kWriteB32: case Instr::kWriteB16: return detail::consecutive(32);
    }
  } else {
    switch (i) {
      case Instr::kReadB128: return detail::quads({{0, 3, 5, 6}, {1, 2, 4, 7}});
      case Instr::kReadB64: return detail::consecutive(32);
      case Instr::kWriteB64: return detail::consecutive(16);
      case Instr::kWriteB128: return detail::consecutive(8);
      case Instr::kReadB32: return detail::consecutive(64);
      case Instr::kWriteB32: case Instr::kWriteB16: return detail::consecutive(32);
    }
  }
  throw std::logic_error("lds: no phase rule");
}

// One wave's instruction: each lane's byte address, or inactive (exec mask off).
struct WaveAccess {
  Instr instr;
  std::vector<int64_t> addr = std::vector<int64_t>(kWaveLanes, -1);  // -1: lane inactive
};

struct Cost {
  int cycles = 0;      // LDS cycles the instruction takes
  int min_cycles = 0;  // conflict-free: one per phase with an active lane
  double ways() const { return min_cycles == 0 ? 1.0 : double(cycles) / double(min_cycles); }
};

// The cycles of one wave's instruction on a target.
inline Cost cost(Target t, const WaveAccess& a) {
  const int bytes = access_bytes(a.instr), nb = banks(t);
  Cost c;
  for (const auto& group : phases(t, a.instr)) {
    std::map<int, std::set<int64_t>> dwords_of_bank;
    bool any = false;
    for (int l : group) {
      const int64_t ad = a.addr[size_t(l)];
      if (ad < 0) continue;
      if (ad % bytes != 0)
        throw std::invalid_argument(std::string("lds: ") + instr_name(a.instr) + " address " +
                                    std::to_string(ad) + " of lane " + std::to_string(l) +
                                    " is not aligned");
      any = true;
      for (int64_t d = ad / 4; d < (ad + bytes + 3) / 4; ++d) dwords_of_bank[int(d % nb)].insert(d);
    }
    if (!any) continue;
    int busiest = 0;
    for (const auto& kv : dwords_of_bank) busiest = std::max(busiest, int(kv.second.size()));
    c.cycles += busiest;
    c.min_cycles += 1;
  }
  return c;
}

}  // namespace vaeconv::lds
