// vaeconv/kernel/conv_kernel.hpp — the implicit-GEMM conv kernel, composed from its policies.
//
//   Policy    tile shape + the architecture's atom and copy (tile_policy.hpp, arch/)
//   Geometry  which conv: stride, pad and upsample folded into the gather (conv_gather.hpp)
//   Pipeline  kStages LDS buffers; tile kt lives in buffer kt % kStages (below)
//   Epilogue  bias + residual + coalesced NHWC bf16 store (epilogue.hpp)
//
// Block (x, y): y is one output frame (n, ot); x enumerates (pixel block, Cout tile) with the Cout
// tiles of one pixel block adjacent, so they share the input rows in L2.
//
// Pipeline, identical on every target: the copy of tile kt + kStages - 1 is issued right after the
// barrier that frees its buffer, and the math on tile kt overlaps it. On NVIDIA the copy is
// cp.async straight into LDS (wait_group retires it); on AMD it is a buffer load into registers
// that flush() writes to LDS just before the barrier of the iteration that needs it.
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue.hpp"
#include "vaeconv/kernel/smem_layout.hpp"
#include "vaeconv/kernel/tile_policy.hpp"

namespace vaeconv::kernel {

// Element-wise gather for Cin not a multiple of the chunk (the VAE's first layer, Cin = 3): a
// 16-byte chunk of K straddles taps, so each of its elements is located separately. Synchronous
// and scalar: that layer has a single K tile (K = 27), so there is nothing to overlap.
template <class Geo, int kElemBytes>
VAECONV_DEVICE VAECONV_FORCE_INLINE uint4 gather_chunk_scalar(const ConvParams& p, const BlockCoord& b, int m,
                                                int k0) {
  using Elem = typename std::conditional<kElemBytes == 2, uint16_t, uint8_t>::type;
  constexpr int kChunkElems = 16 / kElemBytes, kPerWord = 4 / kElemBytes;
  const Elem* x = static_cast<const Elem*>(p.x) + input_view_offset(p, b);
  uint32_t w[4] = {0, 0, 0, 0};
  if (m < p.frame_pixels) {
    const int oh = m / p.wo, ow = m % p.wo;
    // One division for the chunk's first element; the rest step the tap cursor by one.
    TapCursor tap = TapCursor::of(k0, p.cin);
VAECONV_UNROLL
    for (int e = 0; e < kChunkElems; ++e) {  // fully unrolled: w[] stays in registers
      const int it = b.ot + p.kt_base - p.pad_t + tap.kt - b.it_lo;
      const int ih_u = oh * Geo::kStride - Geo::kPad + tap.kh;
      const int iw_u = ow * Geo::kStride - Geo::kPad + tap.kw;
      if (k0 + e < p.k && unsigned(it) < unsigned(p.t - b.it_lo) &&
          unsigned(ih_u) < unsigned(p.h * Geo::kUp) && unsigned(iw_u) < unsigned(p.w_ * Geo::kUp)) {
        const uint32_t off = uint32_t(it) * uint32_t(p.in_st) +
                             uint32_t((ih_u / Geo::kUp) * p.in_sh) +
                             uint32_t((iw_u / Geo::kUp) * p.in_sw) + uint32_t(tap.c);
        w[e / kPerWord] |= uint32_t(x[off]) << (8 * kElemBytes * (e % kPerWord));
      }
      ++tap.c;
      tap.carry(p.cin);
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <class Policy, class Geo, bool kVectorGather>
struct ConvKernel {
  using Arch = typename Policy::ArchT;
  using Atom = typename Policy::AtomT;
  using Layout = typename Atom::Layout;
  using Tile = SwizzledTile<Policy::kChunksK>;
  static constexpr int kRowsA = Policy::kRowsPerThreadA;
  static constexpr int kRowsB = Policy::kRowsPerThreadB;
  static constexpr int kRowStep = Policy::kRowsPerPassA;
  static constexpr int kSmemBytes = Policy::kPipelineBytes > EpilogueShape<Policy>::kBytes
                                        ? Policy::kPipelineBytes
                                        : EpilogueShape<Policy>::kBytes;
  using Slot = typename Arch::template Slot<kRowsA + kRowsB>;

  VAECONV_DEVICE static char* stage_a(char* smem, int s) { return smem + s * Policy::kStageBytes; }
  VAECONV_DEVICE static char* stage_b(char* smem, int s) {
    return smem + s * Policy::kStageBytes + Policy::kTileBytesA;
  }

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(const ConvParams& p, char* smem) {
    const int tid = threadIdx.x;
    const int lane = tid % Policy::kWaveSize, warp = tid / Policy::kWaveSize;
    const BlockCoord b = block_coord(p, blockIdx.x, blockIdx.y, Policy::BM, Policy::BN);

    // Copy roles: thread -> (row0, chunk) of both operand tiles.
    const int chunk = tid % Policy::kChunksK, row0 = tid / Policy::kChunksK;
    constexpr int kElemBytes = Policy::kElemBytes;
    ConvGather<Geo, kRowsA, kRowStep, Policy::BK, kElemBytes> ga;
    WeightGather<kRowsB, kRowStep, Policy::BK, kElemBytes> gb;
    ga.init(p, b, row0, chunk);
    gb.init(b, row0, chunk);
    const char* x_frame = static_cast<const char*>(p.x) + kElemBytes * input_view_offset(p, b);
    const auto view_a = Arch::make_view(x_frame, p.x_view_bytes);
    const auto view_b = Arch::make_view(p.w, p.w_view_bytes);
    Slot slot[Policy::kStages - 1];

    // Issues the copy of K tile `kt` (the gathers' current position) into LDS buffer `s`.
    auto issue = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      char* la = stage_a(smem, s);
      char* lb = stage_b(smem, s);
      if constexpr (kVectorGather) {
VAECONV_UNROLL
        for (int i = 0; i < kRowsA; ++i)
          Arch::load(sl, i, la + Tile::offset(row0 + i * kRowStep, chunk), view_a, ga.offset(i),
                     ga.exists(i));
      } else {
VAECONV_UNROLL
        for (int i = 0; i < kRowsA; ++i)
          Arch::template store_lds<kElemBytes>(
              la + Tile::offset(row0 + i * kRowStep, chunk),
              gather_chunk_scalar<Geo, kElemBytes>(p, b, b.m0 + row0 + i * kRowStep, ga.k));
      }
VAECONV_UNROLL
      for (int i = 0; i < kRowsB; ++i)
        if (!Policy::kGuardB || row0 + i * kRowStep < Policy::BN)
          Arch::load(sl, kRowsA + i, lb + Tile::offset(row0 + i * kRowStep, chunk), view_b,
                     gb.at(p, i), gb.valid(p, i));
      Arch::commit();
      ga.advance(p);
      gb.advance();
    };
    // Writes register-staged data of buffer `s` to LDS (a no-op where the copy is asynchronous).
    auto flush = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      char* la = stage_a(smem, s);
      char* lb = stage_b(smem, s);
      if constexpr (kVectorGather) {
VAECONV_UNROLL
        for (int i = 0; i < kRowsA; ++i)
          Arch::template flush<kElemBytes>(sl, i, la + Tile::offset(row0 + i * kRowStep, chunk));
      }
VAECONV_UNROLL
      for (int i = 0; i < kRowsB; ++i)
        if (!Policy::kGuardB || row0 + i * kRowStep < Policy::BN)
          Arch::template flush<kElemBytes>(sl, kRowsA + i,
                                           lb + Tile::offset(row0 + i * kRowStep, chunk));
    };

    typename Atom::FragC acc[Policy::kAtomsM][Policy::kAtomsN];
VAECONV_UNROLL
    for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
      for (int j = 0; j < Policy::kAtomsN; ++j)
VAECONV_UNROLL
        for (int r = 0; r < Layout::kCElems; ++r) acc[i][j].v[r] = 0.f;

    const int wm0 = (warp % Policy::kWarpsM) * Policy::WTM;
    const int wn0 = (warp / Policy::kWarpsM) * Policy::WTN;
    const int k_tiles = (p.k + Policy::BK - 1) / Policy::BK;

    // Prologue: tiles 0 .. kStages-2 in flight.
VAECONV_UNROLL
    for (int s = 0; s < Policy::kStages - 1; ++s) {
      if (s < k_tiles) issue(s, slot[s]);
      else Arch::commit();  // keep the group count uniform for wait<>
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % Policy::kStages;
      Arch::template wait<Policy::kStages - 2>();
      flush(s, slot[kt % (Policy::kStages - 1)]);
      __syncthreads();
      // Buffer (kt - 1) % kStages was last read before this barrier: refill it.
      const int next = kt + Policy::kStages - 1;
      if (next < k_tiles) issue(next % Policy::kStages, slot[next % (Policy::kStages - 1)]);
      else Arch::commit();

      const char* la = stage_a(smem, s);
      const char* lb = stage_b(smem, s);
VAECONV_UNROLL
      for (int ka = 0; ka < Policy::kAtomsK; ++ka) {
        constexpr int kChunksPerAtomK = Atom::kK / Policy::kChunkElems;
        typename Atom::FragA fa[Policy::kAtomsM];
        typename Atom::FragB fb[Policy::kAtomsN];
VAECONV_UNROLL
        for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
          for (int part = 0; part < Layout::kLdsChunks; ++part)
            Atom::load_a(fa[i], part,
                         la + Tile::offset(wm0 + i * Atom::kM + Layout::a_lds_row(lane),
                                           ka * kChunksPerAtomK + Layout::a_lds_chunk(lane, part)));
VAECONV_UNROLL
        for (int j = 0; j < Policy::kAtomsN; ++j)
VAECONV_UNROLL
          for (int part = 0; part < Layout::kLdsChunks; ++part)
            Atom::load_b(fb[j], part,
                         lb + Tile::offset(wn0 + j * Atom::kN + Layout::b_lds_row(lane),
                                           ka * kChunksPerAtomK + Layout::b_lds_chunk(lane, part)));
VAECONV_UNROLL
        for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
          for (int j = 0; j < Policy::kAtomsN; ++j) Atom::mma(acc[i][j], fa[i], fb[j]);
      }
    }
    Arch::template wait<0>();
    __syncthreads();  // the epilogue reuses the pipeline's LDS
    Epilogue<Policy>::run(p, b, acc, wm0, wn0, lane, reinterpret_cast<float*>(smem));
  }
};

template <class Policy, class Geo, bool kVectorGather>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocks) conv_kernel(ConvParams p) {
  using Kernel = ConvKernel<Policy, Geo, kVectorGather>;
  if constexpr (Policy::ArchT::kStaticLds) {
    // A fixed-size array: the LDS size then shows in the compiler's resource report.
    __shared__ __attribute__((aligned(16))) char smem[Kernel::kSmemBytes];
    Kernel::run(p, smem);
  } else {
    extern __shared__ __attribute__((aligned(16))) char smem_dynamic[];
    Kernel::run(p, smem_dynamic);
  }
}

}  // namespace vaeconv::kernel
