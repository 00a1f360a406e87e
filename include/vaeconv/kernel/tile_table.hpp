// vaeconv/kernel/tile_table.hpp — the shipped tile configurations, and how a conv picks one.
//
// A small table, not an instance zoo: per target and operand type a wide tile for the
// channel-rich layers (96 wide on NVIDIA: every VAE Cout is a multiple of 96), a narrow one for
// Cout <= 32 (enc_conv_out) and a tiny one for Cout <= 16 (dec_conv_out, Cout = 3: a 16-wide tile
// instead of padding 3 channels to 32 or 128). BK counts elements: a bf16 BK of 32 and an fp8 BK
// of 64 are the same 64-byte LDS rows. LDS: the HIP configurations fit gfx942's 64 KiB, so one
// binary serves gfx942 and gfx950.
#pragma once
#include <cstdint>

#include "vaeconv/arch/arch.hpp"
#include "vaeconv/core/dtype.hpp"
#include "vaeconv/kernel/tile_policy.hpp"

namespace vaeconv::kernel {

enum class TileId : int { kWide = 0, kNarrow = 1, kTiny = 2 };

#if defined(VAECONV_BACKEND_HIP)
//                        BM   BN  BK  warpsM warpsN stages
using WideShape = TileShape<128, 128, 32, 2, 2, 2>;
using NarrowShape = TileShape<128, 32, 32, 4, 1, 2>;
using TinyShape = TileShape<128, 16, 32, 4, 1, 2>;
using WideShapeFp8 = TileShape<128, 128, 64, 2, 2, 2>;
using NarrowShapeFp8 = TileShape<128, 32, 64, 4, 1, 2>;
using TinyShapeFp8 = NarrowShapeFp8;  // no 16-wide fp8 atom on AMD (see arch/cdna.hpp)
#else
// VAECONV_SWEEP_{BM,BN,BK,WM,WN,ST,MB} override the wide bf16 tile (or, with VAECONV_SWEEP_FP8, the
// wide fp8 tile) for a tuning sweep (bench/sweep.sh); shipped builds never set them.
#if defined(VAECONV_SWEEP_BM)
#if !defined(VAECONV_SWEEP_MB)
#define VAECONV_SWEEP_MB 1
#endif
using SweepShape = TileShape<VAECONV_SWEEP_BM, VAECONV_SWEEP_BN, VAECONV_SWEEP_BK, VAECONV_SWEEP_WM,
                             VAECONV_SWEEP_WN, VAECONV_SWEEP_ST, VAECONV_SWEEP_MB>;
#endif
#if defined(VAECONV_SWEEP_BM) && !defined(VAECONV_SWEEP_FP8)
using WideShape = SweepShape;
#else
// Sweeps of 2026-12-02 (docs/perf-notes.md): BN = 96 divides every VAE Cout (96, 192, 384), and
// three resident blocks per SM (168 registers) hide the mma.sync issue latency that two did not.
using WideShape = TileShape<128, 96, 32, 2, 2, 4, 3>;
#endif
using NarrowShape = TileShape<128, 32, 32, 4, 1, 3>;
using TinyShape = TileShape<128, 16, 32, 4, 1, 3>;
#if defined(VAECONV_SWEEP_BM) && defined(VAECONV_SWEEP_FP8)
using WideShapeFp8 = SweepShape;
#else
using WideShapeFp8 = TileShape<192, 96, 64, 2, 2, 4>;  // the fastest FP8 tile that does not spill
#endif
using NarrowShapeFp8 = TileShape<128, 32, 64, 4, 1, 3>;
using TinyShapeFp8 = TileShape<128, 16, 64, 4, 1, 3>;
#endif

#if defined(VAECONV_GPU_COMPILER)
using Arch = arch::Current;
template <DType kType>
struct Tiles;
template <>
struct Tiles<DType::kBF16> {
  using Wide = TilePolicy<WideShape, Arch, Arch::AtomBf16>;
  using Narrow = TilePolicy<NarrowShape, Arch, Arch::AtomBf16>;
  using Tiny = TilePolicy<TinyShape, Arch, Arch::AtomBf16Narrow>;
};
template <>
struct Tiles<DType::kFP8E4M3> {
  using Wide = TilePolicy<WideShapeFp8, Arch, Arch::AtomFp8>;
  using Narrow = TilePolicy<NarrowShapeFp8, Arch, Arch::AtomFp8>;
  using Tiny = TilePolicy<TinyShapeFp8, Arch, Arch::AtomFp8Narrow>;
};
#endif

// The dispatch rule (host code, tested on the host).
inline TileId choose_tile(int64_t cout) {
  if (cout <= 16) return TileId::kTiny;
  return cout <= 32 ? TileId::kNarrow : TileId::kWide;
}

}  // namespace vaeconv::kernel
