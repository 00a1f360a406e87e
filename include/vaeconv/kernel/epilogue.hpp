// vaeconv/kernel/epilogue.hpp — accumulators to NHWC: dequant, + bias, + residual, one rounding.
//
//   v[m][n] = acc[m][n] * s[n] + bias[n] + residual[m][n]          (all in fp32)
//   y[m][n] = bf16(v)   or, for an FP8 output, e4m3fn(v / y_scale)  (rounded once)
//
// s[n] = 1 for bf16 operands; for FP8 operands s[n] = x_scale * w_scale[n] * Atom::acc_scale()
// (the last is 4 on gfx942, whose FNUZ reading of e4m3fn bytes quarters every product).
//
// The accumulators sit in the atom's C layout (lane-scattered), which would make each lane write
// isolated 4-byte pieces. So the tile is staged through LDS and then every thread writes 16-byte
// runs of one output row: a coalesced NHWC store. Two ways to stage, chosen per launch:
//   packed (run_packed): no residual, bf16 output, Cout a multiple of 8 — the common case. Scale
//     and bias are applied and the value rounded in registers, in the accumulator layout; the
//     whole tile goes to LDS as bf16 and each stored chunk is one 16-byte LDS read.
//   fp32 slabs (run_fp32): everything else (a residual, which must be added before the one
//     rounding; an FP8 output; Cout = 3, the VAE's last layer, stored element-wise). The tile
//     goes through LDS in fp32 column slabs (rows padded by 4 floats against bank conflicts; in
//     row groups where a slab of all rows does not fit, epilogue_shape.hpp) and the residual is
//     read with the store's coalesced pattern.
// Both compute the same fp32 expression in the same order, so they round to the same bits.
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/arch/runtime.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/conv/fp8_scale.hpp"
#include "vaeconv/core/numerics_fp8.hpp"
#include "vaeconv/core/unroll.hpp"
#include "vaeconv/kernel/conv_gather.hpp"
#include "vaeconv/kernel/conv_params.hpp"
#include "vaeconv/kernel/epilogue_shape.hpp"

namespace vaeconv::kernel {

// One output element y[off] from its fp32 value v = acc * s[n] + bias[n] (already applied): the
// residual and the one rounding, in the order of the vector store below. The element-wise store
// of the tap-reduce epilogue. fp8_nan_code: the architecture's kFp8NanCode (conv/fp8_scale.hpp).
VAECONV_DEVICE VAECONV_FORCE_INLINE void store_element(const ConvParams& p, int64_t off, float v,
                                                       float y_scale, uint8_t fp8_nan_code) {
  if (p.residual) v += bf16_to_float(static_cast<const uint16_t*>(p.residual)[off]);
  if (p.y_fp8) static_cast<uint8_t*>(p.y)[off] = quantize_e4m3fn(v, y_scale, fp8_nan_code);
  else static_cast<uint16_t*>(p.y)[off] = float_to_bf16(v);
}

// Which output pixel GEMM row `row` of a block tile is. The conv kernel's tiles are runs of a
// frame's pixels (LinearRows); the halo kernel's are 2D patches of kCols-wide rows (PatchRows).
struct LinearRows {
  int m0, frame_pixels;
  VAECONV_HD bool pixel(int row, int& m) const {
    m = m0 + row;
    return m < frame_pixels;
  }
};
template <int kCols>
struct PatchRows {
  int oh0, ow0, ho, wo;
  VAECONV_HD bool pixel(int row, int& m) const {
    const int oh = oh0 + row / kCols, ow = ow0 + row % kCols;
    m = oh * wo + ow;
    return oh < ho && ow < wo;
  }
};

template <class Policy>
struct Epilogue {
  using Shape = EpilogueShape<Policy>;
  using Atom = typename Policy::AtomT;
  using Layout = typename Atom::Layout;

  using Arch = typename Policy::ArchT;
  static constexpr bool kPairs = c_pairs_along_n<Layout>();
  static constexpr bool kRowPairs = !kPairs && c_pairs_along_m<Layout>();
  // The threads that store the staged tile: the whole block (in a sliced-K block every group's,
  // though only group 0 holds the sums: kernel/sliced_k.hpp).
  static constexpr int kStoreThreads = Policy::kBlockThreads;
  // Their barrier between staging and storing: the block's, or the policy's own where only some
  // of the block's warps store (a warp-specialized kernel's consumers: Policy::store_barrier()).
  template <class P, class = void>
  struct HasStoreBarrier : std::false_type {};
  template <class P>
  struct HasStoreBarrier<P, std::void_t<decltype(P::store_barrier())>> : std::true_type {};
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void sync() {
    if constexpr (HasStoreBarrier<Policy>::value) Policy::store_barrier();
    else __syncthreads();
  }

  // b: the frame (n, ot) and the first output channel n0; rows: the tile's pixels; acc[i][j]: the
  // warp's atoms; (wm0, wn0): the warp tile's origin in the block tile; stage: the LDS the kernel
  // lends the epilogue (Shape::kStagingRoom bytes). stages_acc: whether this thread's acc is
  // the tile's (false for the other groups of a sliced-K block, which only store).
  template <class Rows, class FragC>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run(const ConvParams& p, const BlockCoord& b,
                                 const Rows& rows,
                                 FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], int wm0, int wn0,
                                 int lane, void* stage, bool stages_acc = true) {
    if constexpr (Shape::kPackedFits) {
      if (packed_applies(p)) {
        run_packed(p, b, rows, acc, wm0, wn0, lane, static_cast<uint16_t*>(stage), stages_acc);
        return;
      }
    }
    run_fp32(p, b, rows, acc, wm0, wn0, lane, static_cast<float*>(stage), stages_acc);
  }

  // The packed staging serves a launch without residual, with a bf16 output of whole chunks.
  VAECONV_HD static bool packed_applies(const ConvParams& p) {
    return p.residual == nullptr && !p.y_fp8 && p.cout % 8 == 0;
  }

 private:
  // Byte offset of pixel m (of the frame), channel n from the output base.
  VAECONV_DEVICE VAECONV_FORCE_INLINE static int64_t out_offset(const ConvParams& p,
                                                               int64_t frame_out, bool rows_packed,
                                                               int m, int n) {
    int64_t off = frame_out + n;
    if (rows_packed) {
      off += int64_t(m) * p.out_sw;
    } else {
      const int oh = m / p.wo, ow = m % p.wo;
      off += int64_t(oh) * p.out_sh + int64_t(ow) * p.out_sw;
    }
    return off;
  }

  // v = acc * s[n] + bias[n] for output channel n (< Cout), in two parts: a column's factors,
  // read once (column), then applied to each of its accumulators (apply). A missing scale is 1
  // and a missing bias -0 (v + -0 == v for every v, -0 included), so apply() is one expression
  // with no branch: the uniform "is there a scale / a bias" tests stay out of the per-element
  // code, where nvcc had turned them into per-register predicates. Both stagings compute it
  // through scaled(), so they round to the same bits.
  // Only fp8 operands are scaled (validate_for_kernels refuses an x_scale for bf16 ones): a bf16
  // kernel's mul is the constant 1 and its apply() one add, with no scale registers.
  static constexpr bool kScaled = Policy::kElemBytes == 1;
  struct Column {
    float mul, add;
  };
  VAECONV_DEVICE VAECONV_FORCE_INLINE static Column column(const ConvParams& p, float acc_scale,
                                                           int n) {
    return Column{kScaled && p.x_scale ? acc_scale * p.w_scale[n] : 1.f,
                  p.bias ? p.bias[n] : -0.f};
  }
  VAECONV_DEVICE VAECONV_FORCE_INLINE static float apply(const Column& c, float v) {
    return v * c.mul + c.add;
  }
  VAECONV_DEVICE VAECONV_FORCE_INLINE static float scaled(const ConvParams& p, float acc_scale,
                                                          int n, float v) {
    return apply(column(p, acc_scale, n), v);
  }

  template <class Rows, class FragC>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run_packed(
      const ConvParams& p, const BlockCoord& b, const Rows& rows,
      FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN],
      int wm0, int wn0, int lane, uint16_t* stage, bool stages_acc) {
    const float acc_scale = p.x_scale != nullptr ? p.x_scale[0] * Atom::acc_scale() : 1.f;
    // 1. Every accumulator, scaled, biased and rounded once, to its place in the bf16 tile.
    //    A lane's registers repeat few columns (c_col_leader): each column's scale and bias are
    //    read once, at its leader register, so they issue together rather than one dependent
    //    load per accumulator. Columns past Cout (a partial Cout tile) are staged too, with the
    //    factors of column Cout - kStep (a valid read), and never stored: no select per element.
    constexpr int kStep = kPairs ? 2 : 1;
    constexpr int kRegStep = kPairs || kRowPairs ? 2 : 1;  // registers rounded together
VAECONV_UNROLL
    for (int j = 0; j < Policy::kAtomsN && stages_acc; ++j) {
      const int atom_col = wn0 + j * Atom::kN;
      for_each_constant<Layout::kCElems>([&](auto leader) VAECONV_FORCE_INLINE_LAMBDA {
        constexpr int r0 = decltype(leader)::value;
        if constexpr (r0 % kStep == 0 && c_col_leader<Layout>(r0) == r0) {
          const int col = atom_col + Layout::c_col(lane, r0);
          const int n = b.n0 + col;  // Cout % 8 == 0: n < Cout, then n + 1 < Cout as well
          const int n_read = n < p.cout ? n : p.cout - kStep;
          Column c[kStep];
VAECONV_UNROLL
          for (int e = 0; e < kStep; ++e) c[e] = column(p, acc_scale, n_read + e);
VAECONV_UNROLL
          for (int i = 0; i < Policy::kAtomsM; ++i)
            for_each_constant<Layout::kCElems>([&](auto reg) VAECONV_FORCE_INLINE_LAMBDA {
              constexpr int r = decltype(reg)::value;
              if constexpr (r % kRegStep == 0 && c_col_leader<Layout>(r) == r0) {
                const int row = wm0 + i * Atom::kM + Layout::c_row(lane, r);
                const float v0 = apply(c[0], acc[i][j].v[r]);
                if constexpr (kPairs) {
                  const float v1 = apply(c[kStep - 1], acc[i][j].v[r + 1]);
                  *reinterpret_cast<uint32_t*>(stage + Shape::packed_index(row, col)) =
                      Arch::pack_bf16x2(v0, v1);
                } else if constexpr (kRowPairs) {
                  // r + 1 is row + 1 of the same column: one rounding for both, two stores.
                  const uint32_t two = Arch::pack_bf16x2(v0, apply(c[0], acc[i][j].v[r + 1]));
                  stage[Shape::packed_index(row, col)] = uint16_t(two);
                  stage[Shape::packed_index(row + 1, col)] = uint16_t(two >> 16);
                } else {
                  stage[Shape::packed_index(row, col)] = float_to_bf16(v0);
                }
              }
            });
        }
      });
    }
    if constexpr (Policy::kBulkStoreEpilogue) Arch::bulk_fence();
    sync();
    uint16_t* y = static_cast<uint16_t*>(p.y);
    const int64_t frame_out = int64_t(b.n) * p.out_sn + int64_t(b.ot) * p.out_st;
    const bool rows_packed = int64_t(p.out_sh) == int64_t(p.wo) * p.out_sw;
    if constexpr (Policy::kBulkStoreEpilogue) {
      // 2. Each staged row (pixel) goes out whole by the copy engine: its Cout-tile's channels,
      //    BN * 2 bytes or the partial tile's (Cout - n0) * 2, both multiples of 16 (Cout % 8 == 0,
      //    and rows of kPackedRowElems keep 16-byte alignment in LDS; output strides are
      //    multiples of 8 elements, so each output pixel's run is 16-byte aligned too).
      const int n_valid = p.cout - b.n0 < Policy::BN ? p.cout - b.n0 : Policy::BN;
      bool issued = false;
      for (int row = int(threadIdx.x); row < Policy::BM; row += kStoreThreads) {
        int m;
        if (!rows.pixel(row, m)) continue;
        Arch::bulk_store(y + out_offset(p, frame_out, rows_packed, m, b.n0),
                         stage + Shape::packed_index(row, 0), uint32_t(n_valid) * 2u);
        issued = true;
      }
      if (issued) {
        Arch::bulk_commit();
        Arch::bulk_wait_read();  // the rows are read out of LDS before it is written again
      }
      sync();
      return;
    }
    // 2. Each thread copies 8-channel chunks of staged rows to the output: one 16-byte LDS read,
    //    one 16-byte store.
    constexpr int kChunks = Policy::BM * Shape::kPackedChunksPerRow;
    constexpr int kSteps = (kChunks + kStoreThreads - 1) / kStoreThreads;
VAECONV_UNROLL
    for (int step = 0; step < kSteps; ++step) {
      const int idx = int(threadIdx.x) + step * kStoreThreads;
      if (kChunks % kStoreThreads != 0 && idx >= kChunks) break;
      const int row = Shape::packed_store_row(idx), col = Shape::packed_store_col(idx);
      const int n = b.n0 + col;
      int m;
      if (!rows.pixel(row, m) || n >= p.cout) continue;
      *reinterpret_cast<uint4*>(y + out_offset(p, frame_out, rows_packed, m, n)) =
          *reinterpret_cast<const uint4*>(stage + Shape::packed_index(row, col));
    }
    sync();
  }

  // One whole 8-channel chunk of output pixel row `off`, channels n .. n + 7 (all < Cout), from
  // its staged fp32 accumulators v: scale and bias (apply(), the packed path's expression), the
  // residual, then the one rounding, in the order of store_element. The chunk's factors are read
  // unconditionally (the missing-pointer tests are uniform, once per chunk), the residual as one
  // 16-byte row, and the result stored as one 8- or 16-byte run.
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void store_chunk(const ConvParams& p,
                                                              float acc_scale, float y_scale,
                                                              int n, int64_t off, float (&v)[8]) {
    float mul[8], add[8];
VAECONV_UNROLL
    for (int e = 0; e < 8; ++e) mul[e] = 1.f;
    if (kScaled && p.x_scale) {
VAECONV_UNROLL
      for (int e = 0; e < 8; ++e) mul[e] = acc_scale * p.w_scale[n + e];
    }
    if (p.bias) {
VAECONV_UNROLL
      for (int e = 0; e < 8; ++e) add[e] = p.bias[n + e];
    } else {
VAECONV_UNROLL
      for (int e = 0; e < 8; ++e) add[e] = -0.f;
    }
VAECONV_UNROLL
    for (int e = 0; e < 8; ++e) v[e] = apply(Column{mul[e], add[e]}, v[e]);
    if (p.residual) {
      const uint4 r4 =
          *reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(p.residual) + off);
      const uint32_t rw[4] = {r4.x, r4.y, r4.z, r4.w};
VAECONV_UNROLL
      for (int e = 0; e < 8; ++e) v[e] += bf16_to_float(uint16_t(rw[e / 2] >> (16 * (e % 2))));
    }
    if (p.y_fp8) {  // FP8 output: e4m3fn at y_scale
      uint32_t q[2] = {0, 0};
VAECONV_UNROLL
      for (int e = 0; e < 8; ++e)
        q[e / 4] |= uint32_t(quantize_e4m3fn(v[e], y_scale, Arch::kFp8NanCode)) << (8 * (e % 4));
      *reinterpret_cast<uint2*>(static_cast<uint8_t*>(p.y) + off) = make_uint2(q[0], q[1]);
    } else {
      // The shared integer rounding, not Arch::pack_bf16x2: through NVIDIA's cvt the sm_90a
      // kernels measured slower (their packed paths too), and on gfx950 the model finds the
      // difference negligible (docs/perf-notes.md, W20).
      uint32_t w[4];
VAECONV_UNROLL
      for (int e = 0; e < 4; ++e)
        w[e] = uint32_t(float_to_bf16(v[2 * e])) | (uint32_t(float_to_bf16(v[2 * e + 1])) << 16);
      *reinterpret_cast<uint4*>(static_cast<uint16_t*>(p.y) + off) =
          make_uint4(w[0], w[1], w[2], w[3]);
    }
  }

  template <class Rows, class FragC>
  VAECONV_DEVICE VAECONV_FORCE_INLINE static void run_fp32(const ConvParams& p, const BlockCoord& b,
                                 const Rows& rows,
                                 FragC (&acc)[Policy::kAtomsM][Policy::kAtomsN], int wm0, int wn0,
                                 int lane, float* stage, bool stages_acc) {
    const int tid = threadIdx.x;
    const int64_t frame_out = int64_t(b.n) * p.out_sn + int64_t(b.ot) * p.out_st;
    const bool vector_ok = (p.cout % 8) == 0;
    const float acc_scale = p.x_scale != nullptr ? p.x_scale[0] * Atom::acc_scale() : 1.f;
    const float y_scale = p.y_fp8 ? p.y_scale[0] : 1.f;
    // A frame's rows packed back to back (every dense output): pixel m sits at m * out_sw, with
    // no division of m into (oh, ow) per stored chunk.
    const bool rows_packed = int64_t(p.out_sh) == int64_t(p.wo) * p.out_sw;

VAECONV_UNROLL
    for (int s = 0; s < Shape::kSlabs; ++s) {
      const int col0 = s * Shape::kSlabCols;
VAECONV_UNROLL
      for (int g = 0; g < Shape::kRowGroups; ++g) {
        // 1. Scatter this warp's accumulators that fall in the slab (and its row group).
VAECONV_UNROLL
        for (int i = 0; i < Policy::kAtomsM && stages_acc; ++i) {
          const int atom_row = wm0 + i * Atom::kM;
          if (Shape::kRowGroups > 1 && !Shape::atom_in_group(atom_row, g)) continue;
VAECONV_UNROLL
          for (int j = 0; j < Policy::kAtomsN; ++j) {
            const int atom_col = wn0 + j * Atom::kN;
            if (!Shape::atom_in_slab(atom_col, s)) continue;
VAECONV_UNROLL
            for (int r = 0; r < Layout::kCElems; ++r) {
              const int row = atom_row + Layout::c_row(lane, r);
              stage[Shape::stage_index(row, atom_col + Layout::c_col(lane, r), s, g)] =
                  acc[i][j].v[r];
            }
          }
        }
        sync();
        // 2. Each thread writes 8 consecutive channels of one pixel per step.
        for (int idx = tid; idx < Shape::kSlabRows * Shape::kChunksPerRow;
             idx += kStoreThreads) {
          const int row = Shape::store_row(idx, g), cc = Shape::store_col(idx);
          const int n = b.n0 + col0 + cc;
          int m;
          if (!rows.pixel(row, m) || n >= p.cout) continue;
          const int64_t off = out_offset(p, frame_out, rows_packed, m, n);
          if (vector_ok) {
            // A whole chunk (Cout % 8 == 0, so n + 7 < Cout): one straight path, no per-element
            // test. Two 16-byte LDS reads: rows are whole float4s and a chunk starts on 8 columns.
            static_assert(Shape::kRowFloats % 4 == 0, "staged chunks are float4-aligned");
            const float4* src =
                reinterpret_cast<const float4*>(stage + Shape::stage_index(row, col0 + cc, s, g));
            const float4 lo = src[0], hi = src[1];
            float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
            store_chunk(p, acc_scale, y_scale, n, off, v);
          } else {
            // A chunk of a Cout that is no multiple of 8 (Cout = 3, the VAE's last layer),
            // possibly cut at Cout: element by element, in a loop kept rolled (a rare path, one
            // copy of its body; its counter is wave-uniform, the cut a lane mask), through the
            // expression and order of the whole-chunk path.
            const int ne = p.cout - n < 8 ? p.cout - n : 8;
            const float* src = stage + Shape::stage_index(row, col0 + cc, s, g);
VAECONV_NO_UNROLL
            for (int e = 0; e < 8; ++e)
              if (e < ne) store_element(p, off + e, scaled(p, acc_scale, n + e, src[e]), y_scale,
                            Arch::kFp8NanCode);
          }
        }
        sync();
      }
    }
  }
};

}  // namespace vaeconv::kernel
