// tests/lds/shipped_accesses.hpp — every LDS access of the shipped AMD kernels, as byte addresses
// per wave and instruction, computed by the library's own layout helpers; and their bank cost.
//
// The tiles are kernel/tile_table.hpp's AMD table (kernel::cdna, which a host compile sees too),
// bound to host stand-ins of arch::Cdna (64-lane waves) and of its atoms
// (the layouts arch/cdna.hpp names: AtomBf16 = Mfma32x32x16Bf16, AtomBf16Narrow =
// Mfma16x16x32Bf16, AtomFp8 = AtomFp8Narrow = Mfma32x32x64Fp8, AtomFp8K32 = Mfma32x32x32Fp8) in
// kernel::TilePolicy. The addresses then come from the code the kernels run:
//   stage_write   block_gemm.hpp flush_a/flush_b (and conv_kernel.hpp's element-wise store_lds,
//                 the same addresses): thread t -> (row t / kChunksK + i * kRowStep, chunk
//                 t % kChunksK) through SwizzledTile::offset, one ds_write_b128 per row i;
//   mfma_a_read / mfma_b_read
//                 block_gemm.hpp mma_stage_fragments: one ds_read_b128 per (ka, atom, part) at
//                 SwizzledTile::offset(w0 + atom * kM + {a,b}_lds_row(l), ka * kChunksPerAtomK +
//                 {a,b}_lds_chunk(l, part)) of fragment_layouts.hpp;
//   epilogue_write / epilogue_read
//                 epilogue.hpp through EpilogueShape: the packed bf16 staging (one ds_write_b16 per
//                 accumulator register at packed_index, one ds_read_b128 per stored chunk) and the
//                 fp32 slabs (one ds_write_b32 per register at stage_index — the compiler pairs two
//                 into ds_write2_b32 —, two ds_read_b128 per stored chunk); the tap-reduce kernel's
//                 partials (tap_reduce_kernel.hpp: rows of BN + 5 floats, one ds_write_b32 per
//                 register, one ds_read_b32 per (channel, tap) of HaloPatch::halo_row/column).
// Every instruction of every wave is costed (lds::cost); a row of the report is the cycle-weighted
// mean of its instructions' ways and the worst instruction.
#pragma once

#include <string>
#include <vector>

#include "lds/bank_model.hpp"
#include "vaeconv/arch/fragment_layouts.hpp"
#include "vaeconv/kernel/epilogue_shape.hpp"
#include "vaeconv/kernel/halo_fragment.hpp"
#include "vaeconv/kernel/halo_tile.hpp"
#include "vaeconv/kernel/smem_layout.hpp"
#include "vaeconv/kernel/tap_reduce.hpp"
#include "vaeconv/kernel/tile_policy.hpp"
#include "vaeconv/kernel/tile_table.hpp"

namespace vaeconv::lds {

// Host stand-ins for what TilePolicy reads from arch::Cdna and its atoms.
struct CdnaModelArch {
  static constexpr int kWaveSize = 64;
  static constexpr bool kBulkStore = false;
  template <int N>
  struct Slot {  // copies staged in registers, as arch::Cdna's
    int v[N];
  };
};
template <class L>
struct CdnaModelAtom {
  using Layout = L;
  static constexpr int kM = L::kM, kN = L::kN, kK = L::kK;
};
template <class Shape, class L>
using CdnaPolicy = kernel::TilePolicy<Shape, CdnaModelArch, CdnaModelAtom<L>>;

// One row of the report: one access of one shipped tile, every instruction of every wave.
struct AccessSet {
  std::string layout;  // tile name and operand type, e.g. "wide_bf16"
  std::string tile;    // "BMxBNxBK"
  int elem_bytes = 0;
  std::string access;  // mfma_a_read | mfma_b_read | stage_write | epilogue_write | epilogue_read
  std::string path;    // mainloop | epilogue_packed | epilogue_fp32 | tap_reduce
  int waves = 0;       // waves of the workgroup
  int per = 1;         // the instructions are per K tile x `per` stages (mainloop), else 1
  std::vector<WaveAccess> instrs;
};

struct AccessCost {
  double ways = 1.0;      // sum of cycles / sum of conflict-free cycles
  double ways_max = 1.0;  // the worst single instruction
  double instrs_per_wave = 0.0;  // per K tile (mainloop) or per epilogue
};

inline AccessCost cost_of(Target t, const AccessSet& s) {
  AccessCost c;
  long cycles = 0, minimum = 0;
  for (const WaveAccess& a : s.instrs) {
    const Cost k = cost(t, a);
    cycles += k.cycles;
    minimum += k.min_cycles;
    c.ways_max = std::max(c.ways_max, k.ways());
  }
  c.ways = minimum == 0 ? 1.0 : double(cycles) / double(minimum);
  c.instrs_per_wave = double(s.instrs.size()) / double(s.waves * s.per);
  return c;
}

namespace detail {

inline std::string tile_name(int bm, int bn, int bk) {
  return std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk);
}

// The main loop's three accesses of policy P (every stage buffer, every wave).
template <class P>
void mainloop_accesses(const std::string& layout, std::vector<AccessSet>& out) {
  using L = typename P::AtomT::Layout;
  using Tile = kernel::SwizzledTile<P::kChunksK>;
  constexpr int kWaves = P::kThreads / 64;
  constexpr int kChunksPerAtomK = P::AtomT::kK / P::kChunkElems;  // BlockGemm::kChunksPerAtomK
  const std::string tile = tile_name(P::BM, P::BN, P::BK);
  AccessSet a{layout, tile, P::kElemBytes, "mfma_a_read", "mainloop", kWaves, P::kStages, {}};
  AccessSet b = a, w = a;
  b.access = "mfma_b_read";
  w.access = "stage_write";
  for (int s = 0; s < P::kStages; ++s) {
    const int64_t base_a = int64_t(s) * P::kStageBytes, base_b = base_a + P::kTileBytesA;
    for (int wave = 0; wave < kWaves; ++wave) {
      const int wm0 = (wave % P::kWarpsM) * P::WTM, wn0 = (wave / P::kWarpsM) * P::WTN;
      for (int ka = 0; ka < P::kAtomsK; ++ka)
        for (int part = 0; part < L::kLdsChunks; ++part) {
          for (int i = 0; i < P::kAtomsM; ++i) {
            WaveAccess r{Instr::kReadB128};
            for (int l = 0; l < 64; ++l)
              r.addr[size_t(l)] = base_a + Tile::offset(wm0 + i * L::kM + L::a_lds_row(l),
                                                        ka * kChunksPerAtomK + L::a_lds_chunk(l, part));
            a.instrs.push_back(r);
          }
          for (int j = 0; j < P::kAtomsN; ++j) {
            WaveAccess r{Instr::kReadB128};
            for (int l = 0; l < 64; ++l)
              r.addr[size_t(l)] = base_b + Tile::offset(wn0 + j * L::kN + L::b_lds_row(l),
                                                        ka * kChunksPerAtomK + L::b_lds_chunk(l, part));
            b.instrs.push_back(r);
          }
        }
      // flush: thread t = 64 wave + l copies (row0 + i * kRowStep, chunk) of A, then of B.
      for (int i = 0; i < P::kRowsPerThreadA; ++i) {
        WaveAccess r{Instr::kWriteB128};
        for (int l = 0; l < 64; ++l) {
          const int t = 64 * wave + l;
          r.addr[size_t(l)] =
              base_a + Tile::offset(t / P::kChunksK + i * P::kRowsPerPassA, t % P::kChunksK);
        }
        w.instrs.push_back(r);
      }
      for (int i = 0; i < P::kRowsPerThreadB; ++i) {
        WaveAccess r{Instr::kWriteB128};
        bool any = false;
        for (int l = 0; l < 64; ++l) {
          const int t = 64 * wave + l, row = t / P::kChunksK + i * P::kRowsPerPassA;
          if (P::kGuardFlushB && row >= P::BN) continue;  // flush_b's guard: no write
          r.addr[size_t(l)] = base_b + Tile::offset(row, t % P::kChunksK);
          any = true;
        }
        if (any) w.instrs.push_back(r);  // a wave with every lane guarded off skips the store
      }
    }
  }
  out.push_back(a);
  out.push_back(b);
  out.push_back(w);
}

// The conv kernels' epilogue (epilogue.hpp) of policy P: packed staging where it fits, fp32 slabs.
template <class P>
void conv_epilogue_accesses(const std::string& layout, std::vector<AccessSet>& out) {
  using L = typename P::AtomT::Layout;
  using E = kernel::EpilogueShape<P>;
  constexpr int kWaves = P::kThreads / 64;
  // conv_kernel.hpp: the staging lies above the copies ahead when it fits there.
  const int64_t base = E::kFitsAboveAhead ? P::kAheadBytes : 0;
  const std::string tile = tile_name(P::BM, P::BN, P::BK);
  if (E::kPackedFits) {
    AccessSet wr{layout, tile, P::kElemBytes, "epilogue_write", "epilogue_packed", kWaves, 1, {}};
    AccessSet rd = wr;
    rd.access = "epilogue_read";
    for (int wave = 0; wave < kWaves; ++wave) {
      const int wm0 = (wave % P::kWarpsM) * P::WTM, wn0 = (wave / P::kWarpsM) * P::WTN;
      for (int j = 0; j < P::kAtomsN; ++j)
        for (int i = 0; i < P::kAtomsM; ++i)
          for (int r = 0; r < L::kCElems; ++r) {
            WaveAccess a{Instr::kWriteB16};
            for (int l = 0; l < 64; ++l)
              a.addr[size_t(l)] = base + 2 * int64_t(E::packed_index(wm0 + i * L::kM + L::c_row(l, r),
                                                                     wn0 + j * L::kN + L::c_col(l, r)));
            wr.instrs.push_back(a);
          }
      constexpr int kChunks = P::BM * E::kPackedChunksPerRow;
      for (int step = 0; step * P::kThreads < kChunks; ++step) {
        WaveAccess a{Instr::kReadB128};
        bool any = false;
        for (int l = 0; l < 64; ++l) {
          const int idx = 64 * wave + l + step * P::kThreads;
          if (idx >= kChunks) continue;
          a.addr[size_t(l)] =
              base + 2 * int64_t(E::packed_index(E::packed_store_row(idx), E::packed_store_col(idx)));
          any = true;
        }
        if (any) rd.instrs.push_back(a);
      }
    }
    out.push_back(wr);
    out.push_back(rd);
  }
  AccessSet wr{layout, tile, P::kElemBytes, "epilogue_write", "epilogue_fp32", kWaves, 1, {}};
  AccessSet rd = wr;
  rd.access = "epilogue_read";
  for (int s = 0; s < E::kSlabs; ++s)
   for (int g = 0; g < E::kRowGroups; ++g)
    for (int wave = 0; wave < kWaves; ++wave) {
      const int wm0 = (wave % P::kWarpsM) * P::WTM, wn0 = (wave / P::kWarpsM) * P::WTN;
      for (int i = 0; i < P::kAtomsM; ++i) {
        if (!E::atom_in_group(wm0 + i * L::kM, g)) continue;
        for (int j = 0; j < P::kAtomsN; ++j) {
          const int atom_col = wn0 + j * L::kN;
          if (!E::atom_in_slab(atom_col, s)) continue;
          for (int r = 0; r < L::kCElems; ++r) {
            WaveAccess a{Instr::kWriteB32};
            for (int l = 0; l < 64; ++l)
              a.addr[size_t(l)] = base + 4 * int64_t(E::stage_index(wm0 + i * L::kM + L::c_row(l, r),
                                                                    atom_col + L::c_col(l, r), s, g));
            wr.instrs.push_back(a);
          }
        }
      }
      constexpr int kChunks = E::kSlabRows * E::kChunksPerRow;
      for (int step = 0; step * P::kThreads < kChunks; ++step)
        for (int half = 0; half < 2; ++half) {  // src[0], src[1]: two float4 of the 8-channel chunk
          WaveAccess a{Instr::kReadB128};
          bool any = false;
          for (int l = 0; l < 64; ++l) {
            const int idx = 64 * wave + l + step * P::kThreads;
            if (idx >= kChunks) continue;
            a.addr[size_t(l)] = base + 4 * int64_t(E::stage_index(E::store_row(idx, g),
                                                                  s * E::kSlabCols + E::store_col(idx), s, g)) +
                                16 * half;
            any = true;
          }
          if (any) rd.instrs.push_back(a);
        }
    }
  out.push_back(wr);
  out.push_back(rd);
}

// The tap-reduce kernel's partials (tap_reduce_kernel.hpp reduce()) of policy P over Patch, for
// the VAE's Cout = 3. kRowFloats restates TapReduceKernel::kRowFloats (a device header).
template <class P, class Patch>
void tap_reduce_epilogue_accesses(const std::string& layout, std::vector<AccessSet>& out) {
  using L = typename P::AtomT::Layout;
  constexpr int kWaves = P::kThreads / 64;
  constexpr int kRowFloats = P::BN + 5;
  constexpr int kCout = 3;
  const std::string tile = tile_name(P::BM, P::BN, P::BK);
  AccessSet wr{layout, tile, P::kElemBytes, "epilogue_write", "tap_reduce", kWaves, 1, {}};
  AccessSet rd = wr;
  rd.access = "epilogue_read";
  for (int wave = 0; wave < kWaves; ++wave) {
    const int wm0 = (wave % P::kWarpsM) * P::WTM, wn0 = (wave / P::kWarpsM) * P::WTN;
    for (int i = 0; i < P::kAtomsM; ++i)
      for (int j = 0; j < P::kAtomsN; ++j)
        for (int r = 0; r < L::kCElems; ++r) {
          WaveAccess a{Instr::kWriteB32};
          for (int l = 0; l < 64; ++l)
            a.addr[size_t(l)] = 4 * int64_t((wm0 + i * L::kM + L::c_row(l, r)) * kRowFloats + wn0 +
                                            j * L::kN + L::c_col(l, r));
          wr.instrs.push_back(a);
        }
    constexpr int kOutputs = Patch::kOutRows * Patch::kOutCols;
    for (int step = 0; step * P::kThreads < kOutputs; ++step)
      for (int co = 0; co < kCout; ++co)
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            WaveAccess a{Instr::kReadB32};
            bool any = false;
            for (int l = 0; l < 64; ++l) {
              const int q = 64 * wave + l + step * P::kThreads;
              if (q >= kOutputs) continue;
              const int rr = q / Patch::kOutCols, cc = q % Patch::kOutCols;
              a.addr[size_t(l)] = 4 * int64_t(Patch::halo_row(rr, cc, kh, kw) * kRowFloats +
                                              Patch::column(kh * 3 + kw, co, kCout));
              any = true;
            }
            if (any) rd.instrs.push_back(a);
          }
  }
  out.push_back(wr);
  out.push_back(rd);
}

// The halo kernel on fragment atoms (halo_fragment_kernel.hpp) of policy P over halo Halo, at
// Cin = Halo::kMaxCin: its main loop's A reads straight from the halo (HaloFragment::a_offset:
// one ds_read_b128 per lane, atom and K step, over every tap and channel step of the block's K
// tiles), its B reads and B stage writes as the implicit GEMM's (block_gemm.hpp on B-only
// stages above the halo: every base a multiple of 256 bytes, so the same banks), per K tile.
// The halo's copy (once per block) is test_halo_fragment.cpp's.
template <class Shape, class Halo, class L>
void halo_tile(const std::string& layout, std::vector<AccessSet>& out) {
  using P = CdnaPolicy<Shape, L>;
  using F = kernel::HaloFragment<Halo, L>;
  constexpr int kWaves = P::kThreads / 64;
  constexpr int kKTiles = 9 * Halo::kMaxCin / P::BK;
  std::vector<AccessSet> plain;
  mainloop_accesses<P>(layout, plain);  // B reads and writes; its A rows are the implicit GEMM's
  AccessSet a{layout, tile_name(P::BM, P::BN, P::BK), P::kElemBytes, "mfma_a_read", "mainloop",
              kWaves, kKTiles, {}};
  for (int wave = 0; wave < kWaves; ++wave) {
    const int wm0 = (wave % P::kWarpsM) * P::WTM;
    for (int k0 = 0; k0 < kKTiles * P::BK; k0 += L::kK)
      for (int part = 0; part < L::kLdsChunks; ++part)
        for (int i = 0; i < P::kAtomsM; ++i) {
          WaveAccess r{Instr::kReadB128};
          for (int l = 0; l < 64; ++l)
            r.addr[size_t(l)] = F::a_offset(l, part, wm0 + i * L::kM, k0, Halo::kMaxCin);
          a.instrs.push_back(r);
        }
  }
  out.push_back(a);
  for (AccessSet& r : plain) {
    if (r.access == "mfma_a_read") continue;
    if (r.access == "stage_write") {  // flush_b's only: the halo kernel's stages hold B
      std::vector<WaveAccess> b_only;
      for (const WaveAccess& w : r.instrs) {
        bool in_b = false;
        for (int l = 0; l < 64; ++l)
          if (w.addr[size_t(l)] % P::kStageBytes >= P::kTileBytesA) in_b = true;
        if (in_b) b_only.push_back(w);
      }
      r.instrs = b_only;
    }
    out.push_back(r);
  }
}

template <class Shape, class L>
void conv_tile(const std::string& layout, std::vector<AccessSet>& out) {
  mainloop_accesses<CdnaPolicy<Shape, L>>(layout, out);
  conv_epilogue_accesses<CdnaPolicy<Shape, L>>(layout, out);
}

}  // namespace detail

// Every LDS access of every shipped AMD tile (kernel/tile_table.hpp's Tiles<> on HIP).
inline std::vector<AccessSet> shipped_cdna_accesses() {
  using namespace kernel::cdna;
  using kernel::TapReducePatchCdna;
  using Bf16 = layout::Mfma32x32x16Bf16;
  using Bf16Narrow = layout::Mfma16x16x32Bf16;
  using Fp8 = layout::Mfma32x32x64Fp8;
  using Fp8K32 = layout::Mfma32x32x32Fp8;  // gfx942's fp8 wide tile (AtomFp8K32)
  std::vector<AccessSet> out;
  detail::conv_tile<WideShape, Bf16>("wide_bf16", out);
  detail::conv_tile<SmallGridShape, Bf16>("small_grid_bf16", out);
  detail::conv_tile<WideElementwiseShape, Bf16>("wide_elementwise_bf16", out);
  detail::conv_tile<NarrowShape, Bf16>("narrow_bf16", out);
  detail::conv_tile<TinyShape, Bf16Narrow>("tiny_bf16", out);
  detail::mainloop_accesses<CdnaPolicy<TapReduceShape, Bf16>>("tap_reduce_bf16", out);
  detail::tap_reduce_epilogue_accesses<CdnaPolicy<TapReduceShape, Bf16>, TapReducePatchCdna>(
      "tap_reduce_bf16", out);
  detail::conv_tile<WideShapeFp8, Fp8K32>("wide_fp8", out);
  detail::conv_tile<WideFewRoundsShapeFp8, Fp8>("wide_few_rounds_fp8", out);
  detail::conv_tile<WideElementwiseShapeFp8, Fp8>("wide_elementwise_fp8", out);
  detail::conv_tile<NarrowShapeFp8, Fp8>("narrow_fp8", out);
  detail::conv_tile<TinyShapeFp8, Fp8>("tiny_fp8", out);
  detail::mainloop_accesses<CdnaPolicy<TapReduceShapeFp8, Fp8>>("tap_reduce_fp8", out);
  detail::tap_reduce_epilogue_accesses<CdnaPolicy<TapReduceShapeFp8, Fp8>, TapReducePatchCdna>(
      "tap_reduce_fp8", out);
  // The gfx950 table's wide tiles (TableSet::kGfx950; checked on both targets' bank models).
  detail::conv_tile<Gfx950WideShape, Bf16>("gfx950_wide_bf16", out);
  detail::conv_tile<Gfx950WideShapeFp8, Fp8>("gfx950_wide_fp8", out);
  detail::conv_tile<Gfx950WideCout192Shape, Bf16>("gfx950_wide_cout192_bf16", out);
  detail::conv_tile<Gfx950WideCout192ShapeFp8, Fp8>("gfx950_wide_cout192_fp8", out);
  detail::conv_tile<Gfx950SmallGridShape, Bf16>("gfx950_small_grid_bf16", out);
  detail::conv_tile<Gfx950SmallGridShapeFp8, Fp8>("gfx950_small_grid_fp8", out);
  detail::halo_tile<Gfx950HaloShape, kernel::HaloFragmentBf16, Bf16>("gfx950_halo_bf16", out);
  return out;
}

}  // namespace vaeconv::lds
