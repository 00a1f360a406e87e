// vaeconv/arch/wgmma_layout.hpp — the warpgroup atom of sm_90a (wgmma), as constexpr helpers.
//
// wgmma.mma_async.m64nNk16 (bf16) / m64nNk32 (e4m3) computes D[64 x N] += A[64 x K] * B[K x N]
// with a warpgroup: 4 consecutive warps, 128 threads. Unlike the mma.sync and MFMA atoms of
// fragment_layouts.hpp, no thread loads an operand: the tensor cores read A and B from shared
// memory through two 64-bit matrix descriptors. So this layout states two things:
//
//   1. the descriptor (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits 0-13,
//      leading-dimension byte offset >> 4 in bits 16-29, stride-dimension byte offset >> 4 in
//      bits 32-45, base offset in bits 49-51 (0: the tile sits on the swizzle repeat), swizzle
//      mode in bits 62-63 (1 = 128 B, 2 = 64 B, 3 = 32 B);
//   2. the accumulator layout: thread l of the warpgroup holds N/2 floats; register r is
//      D[16 * (l / 32) + (l % 32) / 4 + 8 * ((r / 2) % 2)][8 * (r / 4) + 2 * (l % 4) + r % 2].
//      Warp w of the group owns rows 16w..16w+15 and, per 16 columns, exactly the C fragment of
//      one m16n16 mma.sync atom (MmaM16N16K16Bf16::c_row/c_col), so the epilogue treats both alike.
//
// The operand tiles are vaeconv's SwizzledTile (kernel/smem_layout.hpp) in K-major form: rows of
// the M (or N) dimension, each `row_bytes` = 32, 64 or 128 bytes of K, which is exactly Hopper's
// canonical K-major layout of the 32/64/128-byte swizzle (tests/host/test_smem_layout.cpp). In
// that layout 8 rows form one swizzle repeat of 8 * row_bytes bytes; the stride-dimension offset
// is the distance between two such 8-row groups, and the leading-dimension offset is unused
// (an instruction's K, 32 bytes, lies inside one row). An instruction on K step ks of a row block
// starts at the address of (row block, chunk 2 * ks): the hardware applies the swizzle to the
// address bits, which is why every tile must start on a multiple of the repeat.
// tests/host/test_wgmma_emulated.cpp decodes these descriptors with an emulator written from the
// PTX ISA and checks the product through c_row/c_col.
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"

namespace vaeconv::layout {

// Descriptor fields for a K-major SwizzledTile with rows of `row_bytes` bytes.
struct WgmmaDescriptor {
  VAECONV_HD static constexpr uint64_t swizzle_mode(int row_bytes) {
    return row_bytes == 128 ? 1u : row_bytes == 64 ? 2u : 3u;  // 32-byte rows: mode 3
  }
  // Bytes of one swizzle repeat (8 rows): tiles and stage buffers start on multiples of it.
  VAECONV_HD static constexpr int repeat_bytes(int row_bytes) { return 8 * row_bytes; }
  // The descriptor of the operand block whose first element is at shared address `addr`.
  VAECONV_HD static constexpr uint64_t make(uint32_t addr, int row_bytes) {
    return uint64_t((addr & 0x3FFFFu) >> 4) | (uint64_t(1) << 16) /* LBO: unused */ |
           (uint64_t(uint32_t(repeat_bytes(row_bytes)) >> 4) << 32) |
           (swizzle_mode(row_bytes) << 62);
  }
  // The descriptor of a K-major operand without swizzle (mode 0): core matrices of 8 rows x 16
  // bytes, each stored as 128 contiguous bytes (row i at +16 i); `lbo` bytes from a core matrix
  // to the next along K (the two 16-byte halves of a bf16 K step), `sbo` bytes to the next along
  // M (N). Any 16-byte-aligned start: no swizzle pattern to stay in phase with. The halo
  // kernel's A operand (kernel/halo_tile.hpp).
  VAECONV_HD static constexpr uint64_t make_unswizzled(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    return uint64_t((addr & 0x3FFFFu) >> 4) | (uint64_t((lbo & 0x3FFFFu) >> 4) << 16) |
           (uint64_t((sbo & 0x3FFFFu) >> 4) << 32);
  }
};

// The accumulator layout of wgmma m64nNk(32 / ElemBytes) with fp32 D.
template <int N, int ElemBytes>
struct WgmmaM64 {
  static_assert(N % 16 == 0 && N >= 16 && N <= 256, "N: a multiple of 16 up to 256");
  static constexpr int kM = 64, kN = N, kK = 32 / ElemBytes, kLanes = 128;
  static constexpr int kCElems = N / 2, kElemBytes = ElemBytes;
  VAECONV_HD static constexpr int c_row(int l, int r) {
    return 16 * (l / 32) + (l % 32) / 4 + 8 * ((r / 2) % 2);
  }
  VAECONV_HD static constexpr int c_col(int l, int r) { return 8 * (r / 4) + 2 * (l % 4) + r % 2; }
};

}  // namespace vaeconv::layout
