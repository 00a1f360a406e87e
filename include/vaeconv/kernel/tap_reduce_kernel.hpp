// vaeconv/kernel/tap_reduce_kernel.hpp — the tap-reduce conv kernel (see tap_reduce.hpp).
//
//   Policy    tile shape + the architecture's atom and copy; BM = the halo's pixels,
//             BN >= 9 * Cout (tile_table.hpp: TapReduce)
//   Patch     the halo / output patch geometry (HaloPatch)
//   Pipeline  the shared block GEMM (block_gemm.hpp) over HaloGather and TapColumnGather
//   Epilogue  the per-pixel partial sums P go to LDS in fp32; each output element then adds its
//             nine taps' partials (read from neighbouring halo rows), then dequant, bias,
//             residual and one rounding (store_element, epilogue.hpp)
//
// Tiles: tile i is output patch i % m_blocks (patch row * patch_cols + patch col) of output frame
// i / m_blocks. Each input pixel crosses L2 (halo pixels / patch pixels) times instead of 9: 1.31
// with NVIDIA's 16 x 16 halo, 1.52 with AMD's 8 x 16 (tile_table.hpp).
//
// One patch per block; the partials reuse the pipeline's LDS. (A persistent form that overlapped
// the next patch's copies with this one's reduce was measured and removed: docs/perf-notes.md.)
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/kernel/block_gemm.hpp"
#include "vaeconv/kernel/block_tiling.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue.hpp"
#include "vaeconv/kernel/tap_reduce.hpp"
#include "vaeconv/kernel/tile_policy.hpp"

namespace vaeconv::kernel {

template <class Policy, class Patch>
struct TapReduceKernel {
  using Gemm = BlockGemm<Policy>;
  using Arch = typename Policy::ArchT;
  using Atom = typename Policy::AtomT;
  using Layout = typename Atom::Layout;
  using Slot = typename Gemm::Slot;
  static_assert(Policy::BM == Patch::kPixels, "the halo is the GEMM's M tile");
  static constexpr int kMaxCout = Policy::BN / 9;  // 9 * Cout GEMM columns must fit one tile
  static_assert(kMaxCout >= 1, "BN holds the nine taps of at least one channel");
  // fp32 partials, BN + 5 floats per halo row: the reduce's warp reads 32 consecutive halo rows
  // and the staging writes 8 rows of the C layout, both at most 2-way bank conflicts with this
  // odd stride (BN + 4 = 36 made the reads 5-way).
  static constexpr int kRowFloats = Policy::BN + 5;
  static constexpr int kStageBytes = Policy::BM * kRowFloats * 4;
  static constexpr int kSmemBytes =
      Policy::kPipelineBytes > kStageBytes ? Policy::kPipelineBytes : kStageBytes;
  // The launch's view of the kernel (api/conv.hpp, api/kernel_plan.hpp): one Cout tile (BN holds
  // every channel the family takes), one patch per block.
  using PolicyT = Policy;
  using Geometry = void;
  using Tiling = TapReduceTiling<Patch>;
  static constexpr bool kPersistent = false;
  VAECONV_HD static int k_tiles(const ConvParams& p) {
    return (p.taps_t * p.cin + Policy::BK - 1) / Policy::BK;
  }

  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(const ConvParams& p, char* smem) {
    const int tid = threadIdx.x;
    const int lane = tid % Policy::kWaveSize, warp = tid / Policy::kWaveSize;
    const int tile = blockIdx.x;
    if (tile >= p.tiles) return;
    const BlockCoord pc = tile_coord<Tiling, Policy::BM, Policy::BN>(p, tile);

    const int chunk = tid % Policy::kChunksK, row0 = tid / Policy::kChunksK;
    constexpr int kElemBytes = Policy::kElemBytes;
    HaloGather<Patch, Gemm::kRowsA, Gemm::kRowStep, Policy::BK, kElemBytes> ga;
    TapColumnGather<Patch, Gemm::kRowsB, Gemm::kRowStep, Policy::BK, kElemBytes> gb;
    auto view_a = Arch::make_view(p.x, p.x_view_bytes);
    const auto view_b = Arch::make_view(p.w, p.w_view_bytes);
    // Points the gathers at K tile 0 of patch pc.
    auto start_patch = [&]() VAECONV_FORCE_INLINE_LAMBDA {
      ga.init(p, pc, row0, chunk);
      gb.init(p, row0, chunk);
      const char* x_frame =
          static_cast<const char*>(p.x) + kElemBytes * input_view_offset(p, pc);
      view_a = Arch::make_view(x_frame, p.x_view_bytes);
    };

    auto issue = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      Gemm::copy_a(sl, smem, s, row0, chunk, ga, view_a);
      Gemm::copy_b(sl, smem, s, row0, chunk, p, gb, view_b);
      Arch::commit();
      ga.advance(p);
      gb.advance(p);
    };
    auto flush = [&](int s, Slot& sl) VAECONV_FORCE_INLINE_LAMBDA {
      Gemm::flush_a(sl, smem, s, row0, chunk);
      Gemm::flush_b(sl, smem, s, row0, chunk);
    };

    typename Gemm::FragC acc[Policy::kAtomsM][Policy::kAtomsN];
    const int wm0 = (warp % Policy::kWarpsM) * Policy::WTM;
    const int wn0 = (warp / Policy::kWarpsM) * Policy::WTN;
    const int k_tiles = TapReduceKernel::k_tiles(p);
    typename Gemm::Slot slot[Gemm::kAhead];
    start_patch();
    Gemm::prologue(slot, k_tiles, issue);
    Gemm::mainloop(acc, smem, k_tiles, wm0, wn0, lane, slot, issue, flush);
    reduce(p, pc, acc, wm0, wn0, lane, smem);
  }

 private:
  // The epilogue: the partials to LDS, then each output's nine taps summed, scaled, stored.
  template <class FragC>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void reduce(
      const ConvParams& p, const BlockCoord& pc, FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN],
      int wm0, int wn0, int lane, char* smem) {
    const int tid = threadIdx.x;
    // 1. The partials P (fp32) to LDS, in the atom's C layout.
    float* part = reinterpret_cast<float*>(smem);
VAECONV_UNROLL
    for (int i = 0; i < Policy::kAtomsM; ++i)
VAECONV_UNROLL
      for (int j = 0; j < Policy::kAtomsN; ++j)
VAECONV_UNROLL
        for (int r = 0; r < Layout::kCElems; ++r)
          part[(wm0 + i * Atom::kM + Layout::c_row(lane, r)) * kRowFloats + wn0 + j * Atom::kN +
               Layout::c_col(lane, r)] = acc[i][j].v[r];
    __syncthreads();

    // 2. One thread per output pixel, all its channels: nine partials each, read from the halo
    //    rows around it. Per-channel scale and bias are loaded once.
    const int64_t frame_out = int64_t(pc.n) * p.out_sn + int64_t(pc.ot) * p.out_st;
    const float acc_scale = p.x_scale != nullptr ? p.x_scale[0] * Atom::acc_scale() : 1.f;
    const float y_scale = p.y_fp8 ? p.y_scale[0] : 1.f;
    float scale[kMaxCout], bias[kMaxCout];
VAECONV_UNROLL
    for (int co = 0; co < kMaxCout; ++co) {
      const bool ok = co < p.cout;
      scale[co] = ok && p.x_scale != nullptr ? acc_scale * p.w_scale[co] : 1.f;
      bias[co] = ok && p.bias != nullptr ? p.bias[co] : 0.f;
    }
    for (int q = tid; q < Patch::kOutRows * Patch::kOutCols; q += Policy::kThreads) {
      const int r = q / Patch::kOutCols, c = q % Patch::kOutCols;
      const int oh = pc.oh0 + r, ow = pc.ow0 + c;
      if (oh >= p.ho || ow >= p.wo) continue;
      const int64_t off = frame_out + int64_t(oh) * p.out_sh + int64_t(ow) * p.out_sw;
VAECONV_UNROLL
      for (int co = 0; co < kMaxCout; ++co) {
        if (co >= p.cout) break;
        float v = 0.f;
VAECONV_UNROLL
        for (int kh = 0; kh < 3; ++kh)
VAECONV_UNROLL
          for (int kw = 0; kw < 3; ++kw)
            v += part[Patch::halo_row(r, c, kh, kw) * kRowFloats +
                      Patch::column(kh * 3 + kw, co, p.cout)];
        store_element(p, off + co, v * scale[co] + bias[co], y_scale, Arch::kFp8NanCode);
      }
    }
  }
};

template <class Policy, class Patch>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocks)
    tap_reduce_kernel(ConvParams p) {
  run_with_lds<TapReduceKernel<Policy, Patch>, typename Policy::ArchT>(p);
}

template <class Policy, class Patch>
constexpr auto kernel_entry(const TapReduceKernel<Policy, Patch>*) {
  return &tap_reduce_kernel<Policy, Patch>;
}

}  // namespace vaeconv::kernel
