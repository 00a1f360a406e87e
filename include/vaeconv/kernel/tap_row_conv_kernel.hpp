// vaeconv/kernel/tap_row_conv_kernel.hpp — the causal T = 1 conv of a Cin = 3 layer, from a halo of
// tap rows (tap_row_halo.hpp).
//
//   Policy    HaloPolicy: a tile shape and the architecture's atom (tile_table.hpp: TapRowShape,
//             TapRowShapeFp8 on wgmma; cdna::TapRowFragmentShape, ...Fp8 on MFMA and mma.sync);
//             LDS [halo][B = stage 0 of the policy's layout]
//   Halo      TapRowHalo: the patch (kRows x 8 output pixels = BM) and its (kRows + 2) x 8 tap rows
//   Math      three K steps, kh = 0, 1, 2: A = halo rows r + kh, B = the weights of kernel row kh
//   Epilogue  the shared epilogue (epilogue.hpp), rows mapped through the patch (PatchRows)
// TapRowKernel below is that skeleton for both atom kinds; this file has the wgmma math
// (TapRowLdsMath), tap_row_fragment_kernel.hpp the fragment atoms' (MFMA, mma.sync).
//
// Why its own kernel: the implicit GEMM gathers A element by element when Cin is not a multiple of
// 8 (a 16-byte chunk then straddles taps), and for the VAE's first layer that gather was most of
// the kernel's instructions (docs/perf-notes.md). Here each input element is loaded by at most
// three threads (the tap rows that contain it), once per block, and the atom reads K from the
// halo at constant offsets.
//
// Both operands are built in registers and stored to LDS, once per block (one K tile: K = 3 K
// steps): the tap rows from the input with element loads, the B tile from the packed weights
// with 16-byte loads of each row's first chunks, cut into kernel rows in registers (natural K
// order: the 9 elements of kernel row kh sit 18 bytes apart, too unaligned for 16-byte copies
// into LDS; the element loads this replaced were slower: docs/perf-notes.md). One
// tile per block: block i is patch (i / n_tiles) % patches of frame i / (patches * n_tiles),
// Cout tile i % n_tiles (tile_coord). TapRowFamily (dispatch.hpp) says which convs.
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/conv/packed_weights.hpp"
#include "vaeconv/kernel/block_gemm.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue.hpp"
#include "vaeconv/kernel/halo_conv_kernel.hpp"
#include "vaeconv/kernel/tap_row_halo.hpp"
#include "vaeconv/kernel/tile_policy.hpp"

namespace vaeconv::kernel {

// Elements of one chunk, packed little-endian into 16 bytes: w = the chunk's four 32-bit words.
template <int kElemBytes>
struct ChunkWords {
  uint32_t w[4] = {0, 0, 0, 0};
  VAECONV_HD void put(int e, uint32_t bits) {  // e: a compile-time constant after unrolling
    constexpr int kPerWord = 4 / kElemBytes;
    w[e / kPerWord] |= bits << (8 * kElemBytes * (e % kPerWord));
  }
};

// The tap-row kernels' skeleton, one for either atom kind: the patch tiling (tile_coord), the
// fill of both operands (below), then Math's three K steps — Math::publish() before the fill's
// barrier, Math::compute(acc, wm0, wn0, halo, lb, warp, lane) after it — and the shared epilogue
// over the patch's rows. TapRowConvKernel (below: wgmma) and TapRowFragmentConvKernel
// (tap_row_fragment_kernel.hpp: MFMA, mma.sync) are this skeleton with their math.
template <class Policy, class Math>
struct TapRowKernel {
  using Halo = typename Policy::Halo;
  using Gemm = BlockGemm<Policy>;
  using Arch = typename Policy::ArchT;
  using Atom = typename Policy::AtomT;
  using Tile = typename Gemm::Tile;
  using FragC = typename Gemm::FragC;
  static constexpr int kElemBytes = Policy::kElemBytes;
  using Elem = typename std::conditional<kElemBytes == 2, uint16_t, uint8_t>::type;
  static_assert(Policy::BK >= Halo::kK, "the three tap rows are one K tile");
  static_assert(Math::kBChunks >= Halo::kSteps * Halo::kChunks &&
                    Math::kBChunks <= Policy::BK / Policy::kChunkElems,
                "the math reads the tap rows' B chunks, within one B row of the tile");
  static_assert(Atom::kM % Halo::kCols == 0 && Policy::WTM % Halo::kCols == 0,
                "atoms start on patch rows");
  static constexpr int kSmemBytes = EpilogueShape<Policy>::kKernelBytes;
  // The launch's view of the kernel (api/conv.hpp, api/kernel_plan.hpp): its three K steps are
  // one batch.
  using PolicyT = Policy;
  using Geometry = void;
  using Tiling = PatchTiles<Halo::kRows, Halo::kCols>;
  static constexpr bool kPersistent = false;
  VAECONV_HD static int k_tiles(const ConvParams&) { return 1; }

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(const ConvParams& p, char* smem) {
    const int tid = threadIdx.x;
    const int lane = tid % Policy::kWaveSize, warp = tid / Policy::kWaveSize;
    const BlockCoord b = tile_coord<Tiling, Policy::BM, Policy::BN>(p, int(blockIdx.x));
    char* halo = smem;
    char* lb = smem + Policy::kHaloBytes;  // B: stage 0 of the policy's layout

    fill(p, b, halo, lb);
    Math::publish();
    __syncthreads();

    FragC acc[Policy::kAtomsM][Policy::kAtomsN];
    int wm0, wn0;
    Math::compute(acc, wm0, wn0, halo, lb, warp, lane);
    __syncthreads();  // the epilogue stages in the halo's and B's LDS

    Epilogue<Policy>::run(p, b, PatchRows<Halo::kCols>{b.oh0, b.ow0, p.ho, p.wo}, acc, wm0, wn0,
                          lane, smem);
  }

 private:
  // Both operands in two phases: every thread's loads first (all rounds of the halo's tap rows
  // and the B rows' vector loads, so that one load latency covers them), then the packing and
  // the LDS stores. Units past a fill's count are predicated off. nvcc keeps the loaded
  // elements in registers (no accumulator is live yet).
  static constexpr int kHaloRounds = (Halo::kHaloPixels + Policy::kThreads - 1) / Policy::kThreads;
  // The 16-byte chunks of a packed weight row that hold its 3 * 9 natural columns.
  static constexpr int kBRowChunks = (Halo::kSteps * Halo::kTapElems * kElemBytes + 15) / 16;
  // B rows in rounds of a thread each (one round where the block has a thread per row).
  static constexpr int kBRounds = (Policy::BN + Policy::kThreads - 1) / Policy::kThreads;
  static_assert(kBRowChunks * 16 <= kPackRowBytes, "inside a packed row (a multiple of these)");

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void fill(const ConvParams& p, const BlockCoord& b,
                                                      char* halo, char* lb) {
    const int tid = int(threadIdx.x);
    // Tap row q = (hr, c) of the halo: input row oh0 - 1 + hr, columns ow0 + c - 1 .. + 1, all
    // three channels (zeros outside the frame: the conv's padding). Neighbouring threads read
    // overlapping pixels, which L1 serves.
    const int it_rel = b.ot + p.kt_base - p.pad_t - b.it_lo;  // the one time tap (taps_t == 1)
    const bool t_ok = unsigned(it_rel) < unsigned(p.t - b.it_lo);
    const Elem* x = reinterpret_cast<const Elem*>(static_cast<const char*>(p.x) +
                                                  int64_t(kElemBytes) * input_view_offset(p, b));
    uint32_t hv[kHaloRounds][Halo::kTapElems];
VAECONV_UNROLL
    for (int round = 0; round < kHaloRounds; ++round) {
      const int q = tid + round * Policy::kThreads;
      const int hr = q / Halo::kHaloCols, c = q % Halo::kHaloCols;
      const int ih = b.oh0 - 1 + hr, iw = b.ow0 - 1 + c;
      const bool row_ok = q < Halo::kHaloPixels && t_ok && unsigned(ih) < unsigned(p.h);
      // Unsigned arithmetic, as in the gathers: a pad pixel's offset is formed but never read.
      const uint32_t base = uint32_t(it_rel) * uint32_t(p.in_st) +
                            uint32_t(ih) * uint32_t(p.in_sh) + uint32_t(iw) * uint32_t(p.in_sw);
VAECONV_UNROLL
      for (int e = 0; e < Halo::kTapElems; ++e) {
        const int kw = Halo::tap_kw(e);
        const bool ok = row_ok && unsigned(iw + kw) < unsigned(p.w_);
        const uint32_t at = base + uint32_t(kw) * uint32_t(p.in_sw) + uint32_t(Halo::tap_c(e));
        hv[round][e] = ok ? uint32_t(x[at]) : 0u;
      }
    }
    // B row n (output channel n0 + n; zeros past Cout): thread n % kThreads (round
    // n / kThreads) loads the packed row's first 16-byte chunks, which hold its 27 natural
    // columns, with kBRowChunks vector loads (the weights are 16-byte aligned and a row is k_pad
    // elements, 128 bytes here, so they are in bounds); kernel row kh is then columns
    // kh * 9 .. kh * 9 + 8 of those words.
    uint4 braw[kBRounds][kBRowChunks];
VAECONV_UNROLL
    for (int round = 0; round < kBRounds; ++round) {
      const int n = tid + round * Policy::kThreads;
      const bool b_ok = n < Policy::BN && b.n0 + n < p.cout;
      const uint4* row = reinterpret_cast<const uint4*>(
          static_cast<const char*>(p.w) +
          (int64_t(b.n0 + n) * int64_t(p.k_pad)) * int64_t(kElemBytes));
VAECONV_UNROLL
      for (int i = 0; i < kBRowChunks; ++i)
        braw[round][i] = b_ok ? row[i] : make_uint4(0, 0, 0, 0);
    }

VAECONV_UNROLL
    for (int round = 0; round < kHaloRounds; ++round) {
      const int q = tid + round * Policy::kThreads;
      if (q >= Halo::kHaloPixels) break;
      store_tap_row(halo, hv[round], [&](int j) VAECONV_FORCE_INLINE_LAMBDA {
        return Halo::offset(j, q / Halo::kHaloCols, q % Halo::kHaloCols);
      });
    }
VAECONV_UNROLL
    for (int round = 0; round < kBRounds; ++round) {
      const int n = tid + round * Policy::kThreads;
      if (n < Policy::BN) {
        uint32_t words[4 * kBRowChunks];
VAECONV_UNROLL
        for (int i = 0; i < kBRowChunks; ++i) {
          words[4 * i] = braw[round][i].x;
          words[4 * i + 1] = braw[round][i].y;
          words[4 * i + 2] = braw[round][i].z;
          words[4 * i + 3] = braw[round][i].w;
        }
VAECONV_UNROLL
        for (int kh = 0; kh < Halo::kSteps; ++kh) {
          uint32_t v[Halo::kTapElems];
VAECONV_UNROLL
          for (int e = 0; e < Halo::kTapElems; ++e)
            v[e] = Halo::packed_elem(words, kh * Halo::kTapElems + e);  // natural column kh*9 + e
          // K step kh = chunks 2 kh and 2 kh + 1 of the SwizzledTile row.
          store_tap_row(lb, v, [&](int j) VAECONV_FORCE_INLINE_LAMBDA {
            return Tile::offset(n, kh * Halo::kChunks + j);
          });
        }
        // Chunks the math reads past the three tap rows (an atom of two tap rows): zeros, since
        // LDS holds anything there and a NaN byte times a zero A is NaN.
VAECONV_UNROLL
        for (int j = Halo::kSteps * Halo::kChunks; j < Math::kBChunks; ++j)
          Arch::template store_lds<kElemBytes>(lb + Tile::offset(n, j), make_uint4(0, 0, 0, 0));
      }
    }
  }

  // The 9 elements of a tap row, zero-padded, as its two 16-byte chunks at lds + at(j).
  template <class At>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void store_tap_row(
      char* lds, const uint32_t (&v)[Halo::kTapElems], At&& at) {
    ChunkWords<kElemBytes> chunk[Halo::kChunks];
VAECONV_UNROLL
    for (int e = 0; e < Halo::kTapElems; ++e)
      chunk[e / Halo::kChunkElems].put(e % Halo::kChunkElems, v[e]);
VAECONV_UNROLL
    for (int j = 0; j < Halo::kChunks; ++j)
      Arch::template store_lds<kElemBytes>(
          lds + at(j), make_uint4(chunk[j].w[0], chunk[j].w[1], chunk[j].w[2], chunk[j].w[3]));
  }
};

// The math of the wgmma tap-row kernel: the descriptors built in uniform registers (the warp
// index made wave-uniform), the three K steps one batch of the atom reading both operands from
// LDS.
template <class Policy>
struct TapRowLdsMath {
  using Halo = typename Policy::Halo;
  using Gemm = BlockGemm<Policy>;
  using Arch = typename Policy::ArchT;
  using Atom = typename Policy::AtomT;
  using Tile = typename Gemm::Tile;
  using FragC = typename Gemm::FragC;
  static_assert(Policy::kAtomReadsLds, "built for the wgmma atom (see the header)");
  static_assert(Atom::kK == Halo::kStepElems, "a tap row is one K step");
  static constexpr int kBChunks = Halo::kSteps * Halo::kChunks;  // B chunks the steps read

  // The fill's generic stores, visible to the tensor cores after the barrier.
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void publish() { Atom::publish_lds(); }

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void compute(
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], int& wm0, int& wn0, char* halo, char* lb,
      int warp, int /*lane*/) {
    const int uwarp = Arch::wave_uniform(warp);
    wm0 = (uwarp % Policy::kWarpsM) * Policy::WTM;
    wn0 = (uwarp / Policy::kWarpsM) * Policy::WTN;
    const uint64_t da0 = Atom::descriptor_unswizzled(
        Arch::smem_u32(halo) + uint32_t(Halo::a_offset(wm0, 0)), Halo::kChunkStride,
        Halo::kRowStride);
    const uint64_t db = Atom::template descriptor<Tile::kRowBytes>(Arch::smem_u32(lb) +
                                                                   Tile::offset(wn0, 0));
    // K step 0 overwrites the accumulators (first_scale 0): they need no zeroing, only a defined
    // value for the asm operands.
    Gemm::zero(acc);
    Gemm::template lds_batch<Halo::kSteps>(
        acc,
        [&](int i, int kh) VAECONV_FORCE_INLINE_LAMBDA {
          return da0 + uint32_t(Halo::a_offset(i * Atom::kM, kh)) / 16;
        },
        [&](int j, int kh) VAECONV_FORCE_INLINE_LAMBDA {
          return db + Gemm::block_offset16(j * Atom::kN, kh);
        },
        0, [](int) VAECONV_FORCE_INLINE_LAMBDA {});
    Atom::template wait_batches<0>();
    Gemm::fence_all(acc);
  }
};

template <class Policy>
struct TapRowFragmentMath;  // tap_row_fragment_kernel.hpp

template <class Policy>
using TapRowConvKernel = TapRowKernel<Policy, TapRowLdsMath<Policy>>;

// The kernel functions: one per atom kind, named for it (the resource report, the assembly rules
// and the CDNA model read the names).
template <class Policy>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocks)
    tap_row_conv_kernel(ConvParams p) {
  run_with_lds<TapRowConvKernel<Policy>, typename Policy::ArchT>(p);
}
template <class Policy>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocks)
    tap_row_fragment_conv_kernel(ConvParams p) {
  run_with_lds<TapRowKernel<Policy, TapRowFragmentMath<Policy>>, typename Policy::ArchT>(p);
}

template <class Policy, class Math>
constexpr auto kernel_entry(const TapRowKernel<Policy, Math>*) {
  if constexpr (Policy::kAtomReadsLds) return &tap_row_conv_kernel<Policy>;
  else return &tap_row_fragment_conv_kernel<Policy>;
}

}  // namespace vaeconv::kernel
