// vaeconv/kernel/conv_kernel.hpp — the implicit-GEMM conv kernel, composed from its policies.
//
//   Policy    tile shape + the architecture's atom and copy (tile_policy.hpp, arch/)
//   Geometry  which conv: stride, pad and upsample folded into the gather (conv_gather.hpp)
//   Pipeline  kStages LDS buffers and the atom loop, shared with every kernel (block_gemm.hpp)
//   Epilogue  bias + residual + coalesced NHWC bf16 store (epilogue.hpp)
//
// Block (x, y): y is one output frame (n, ot); x enumerates (pixel block, Cout tile) with the Cout
// tiles of one pixel block adjacent, so they share the input rows in L2.
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/block_gemm.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue.hpp"
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
  using Gemm = BlockGemm<Policy>;
  using Arch = typename Policy::ArchT;
  using Tile = typename Gemm::Tile;
  using Slot = typename Gemm::Slot;
  static constexpr int kRowsA = Gemm::kRowsA, kRowsB = Gemm::kRowsB, kRowStep = Gemm::kRowStep;
  static constexpr int kSmemBytes = Policy::kPipelineBytes > EpilogueShape<Policy>::kBytes
                                        ? Policy::kPipelineBytes
                                        : EpilogueShape<Policy>::kBytes;

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

    // Issues the copy of K tile `kt` (the gathers' current position) into LDS buffer `s`.
    auto issue = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      if constexpr (kVectorGather) {
        Gemm::copy_a(sl, smem, s, row0, chunk, ga, view_a);
      } else {
        char* la = Gemm::stage_a(smem, s);
VAECONV_UNROLL
        for (int i = 0; i < kRowsA; ++i)
          Arch::template store_lds<kElemBytes>(
              la + Tile::offset(row0 + i * kRowStep, chunk),
              gather_chunk_scalar<Geo, kElemBytes>(p, b, b.m0 + row0 + i * kRowStep, ga.k));
      }
      Gemm::copy_b(sl, smem, s, row0, chunk, p, gb, view_b);
      Arch::commit();
      ga.advance(p);
      gb.advance();
    };
    // Writes register-staged data of buffer `s` to LDS (a no-op where the copy is asynchronous).
    auto flush = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      if constexpr (kVectorGather) Gemm::flush_a(sl, smem, s, row0, chunk);
      Gemm::flush_b(sl, smem, s, row0, chunk);
    };

    typename Gemm::FragC acc[Policy::kAtomsM][Policy::kAtomsN];
    const int wm0 = (warp % Policy::kWarpsM) * Policy::WTM;
    const int wn0 = (warp / Policy::kWarpsM) * Policy::WTN;
    const int k_tiles = (p.k + Policy::BK - 1) / Policy::BK;
    Gemm::run(acc, smem, k_tiles, wm0, wn0, lane, issue, flush);
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
