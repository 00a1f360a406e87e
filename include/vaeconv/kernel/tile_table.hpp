// vaeconv/kernel/tile_table.hpp — the shipped tile configurations (which family and tile a conv
// gets: kernel/dispatch.hpp).
//
// A small table, not an instance zoo: per target and operand type a wide tile for the
// channel-rich layers (96 wide: every VAE Cout is a multiple of 96), a narrow one for
// Cout <= 32 (enc_conv_out), a tiny one for Cout <= 16, and the tap-reduce tile of the causal
// Cout <= 3 layer (dec_conv_out; see tap_reduce.hpp). BK counts elements: a bf16 BK of 32 and an
// fp8 BK of 64 are the same 64-byte LDS rows. AMD: one table set per target (kernel/table_set.hpp,
// chosen at run time from the device's architecture name): gfx942's fits its 64 KiB of LDS;
// gfx950's replaces the wide tiles by ones that use its 160 KiB. One fat binary serves both.
#pragma once
#include <cstdint>

#include "vaeconv/arch/arch.hpp"
#include "vaeconv/conv/conv_desc.hpp"
#include "vaeconv/core/dtype.hpp"
#include "vaeconv/kernel/halo_tile.hpp"
#include "vaeconv/kernel/table_set.hpp"
#include "vaeconv/kernel/tap_reduce.hpp"
#include "vaeconv/kernel/tap_row_halo.hpp"
#include "vaeconv/kernel/tile_policy.hpp"
#include "vaeconv/kernel/tile_rounds.hpp"
#if defined(VAECONV_GPU_COMPILER)
#include "vaeconv/kernel/halo_conv_kernel.hpp"  // HaloPolicy (device code: GPU compilers only)
#endif

namespace vaeconv::kernel {

// kWideFewRounds: the wide tile's few-rounds partner, where a table has one (tile_rounds.hpp).
// kWideCout192: the 192-wide tile of the Cout % 192 == 0 causal and downsample convs, where a
// table has one (dispatch.hpp's takes_wide_cout192).
// kWideSmallGrid: the tile of the grids that give each CU at most one wide block, where a table
// has one (tile_rounds.hpp's small-grid rule).
// kNarrowSliced: the narrow tile's sliced-K form (kernel/sliced_k.hpp), where a table has one: the
// narrow convs of the 16-byte gather whose K tiles split evenly over its groups of warps
// (api/kernel_plan.hpp).
// kWideCausal: the tile of the causal convs (cached or not) that the wide tile would otherwise
// take, where a table has one (dispatch.hpp's takes_wide_causal; sm_90a bf16).
enum class TileId : int {
  kWide = 0,
  kNarrow = 1,
  kTiny = 2,
  kWideFewRounds = 3,
  kWideCout192 = 4,
  kWideSmallGrid = 5,
  kNarrowSliced = 6,
  kWideCausal = 7
};

// The tap-reduce kernel (tap_reduce.hpp) for the RGB output layer: BN = 32 GEMM columns = 9 taps x
// up to 3 outputs, and BM = an input halo of 16-pixel rows around the output patch. NVIDIA: a
// 16 x 16 halo (14 x 14 outputs; input read 1.31 times) in 4 stages of 18 KiB. AMD: an 8 x 16
// halo (6 x 14 outputs; 1.52 times) in 2 stages of 10 KiB, so that three workgroups fit gfx942's
// 64 KiB of LDS (the 16 x 16 halo left one). The fp32 partials reuse the pipeline's LDS.
template <int BM>
using TapReduceHalo = HaloPatch<BM / 16, 16>;  // the halo of a tap-reduce tile: rows of 16 pixels
using TapReducePatchNvidia = TapReduceHalo<256>;
using TapReducePatchCdna = TapReduceHalo<128>;
constexpr int kTapReduceBN = 32;
constexpr int kTapReduceMaxCout = kTapReduceBN / 9;

// The AMD table, named kernel::cdna for every compiler (host tools that model the AMD kernels,
// tests/lds/ and bench/lds_bank_report.cpp, read it); a HIP build uses it as its own.
namespace cdna {
// The wide tiles are 96 wide, like NVIDIA's: 96 divides every VAE Cout (96, 192, 384), where a
// 128-wide tile computes 25 % padding columns on the 96- and 192-channel layers (most of the
// set's FLOPs). The bf16 wide tile: two waves of 64 x 96 (six 32 x 32 MFMA atoms each: per MFMA
// 5/8 of a 32 x 96 wave tile's LDS reads and a share of the loop's other instructions), 32 deep
// (64-byte LDS rows), two K tiles in flight in staging registers and one LDS buffer
// (OneBufferTileShape: a barrier before each K tile's flush): 14 KiB, the epilogue's fp32 slabs
// staged in row groups inside it, so four blocks fit gfx942's 64 KiB and its registers (2 waves
// per SIMD). Against the 16-deep tile in two buffers (16 KiB, also four blocks), a K tile's fixed
// cost (its waits, barriers, branch and cursor) is spread over twice the MFMAs: the tile is
// issue-bound on gfx942. Chosen by the CDNA model at the pessimistic end among scratch-free
// gfx942 candidates (docs/perf-notes.md, issue 25 W15 and W24). BN = 96 from the H200 sweeps
// (worth ~20 % there). Not measured on AMD hardware.
//                                 BM   BN  BK  warpsM warpsN stages
using WideShape = OneBufferTileShape<128, 96, 32, 2, 1, 3>;
// The bf16 wide tile's few-rounds partner (tile_rounds.hpp, the round rule): four waves of 32 x
// 96, 32 deep, two tiles in flight in two LDS buffers (32 KiB with B's rows padded to whole copy
// passes, docs/resource-report.md; 2 blocks per CU: twice the wide tile's waves per block), for
// the grids that the four resident blocks of WideShape do not finish
// in fewer rounds over gfx942's CUs (the 512x512 and 256x256 layers, the downsample and upsample
// phases of 512 blocks or fewer): faster there at the pessimistic end of the CDNA model
// (docs/perf-notes.md, issue 25 W6 and W15).
using WideFewRoundsShape = TwoBufferTileShape<128, 96, 32, 4, 1, 3>;
// The small-grid tile (tile_rounds.hpp's small-grid rule: grids that give a CU at most two of
// the few-rounds tile's blocks, e.g. the 128² 384-channel layers' 512): the wide tile's two
// groups of two 64 x 96 waves, each group over half of the K tiles with its own 16 KiB of
// buffers (SlicedKTileShape, kernel/sliced_k.hpp; their partial sums meet in two passes of
// 24 KiB), 32 KiB: two blocks and 2 waves per SIMD per CU, each block's K-tile chain half the
// few-rounds tile's. Faster there at the pessimistic end of the CDNA model (docs/perf-notes.md,
// W22). Not measured on AMD hardware.
using SmallGridShape = SlicedKTileShape<TwoBufferTileShape<128, 96, 16, 2, 1, 4, 2>, 2>;
using NarrowShape = TileShape<128, 32, 32, 4, 1, 2>;
// The narrow convs' sliced-K tile (Cout <= 32 of the 16-byte gather whose K tiles split evenly
// in three: the encoder's 384 -> 32 conv, whose 108 K tiles of 128 rows on the narrow tile leave
// each of its 128 blocks' chain exposed): 32 x 32 blocks (four times the blocks) of three groups
// of one wave, each over a third of the K tiles in two stages, 24 KiB. gfx950 has its own, in six
// groups (Gfx950NarrowSlicedShape). Faster there at the pessimistic end of the CDNA model
// (docs/perf-notes.md, W23). Not measured on AMD hardware.
using NarrowSlicedShape = SlicedKTileShape<TileShape<32, 32, 32, 1, 1, 2>, 3>;
using TinyShape = TileShape<128, 16, 32, 4, 1, 2>;
// The fp8 wide tile: the bf16 one's waves, 32 e4m3 deep (32-byte rows) in two LDS buffers with
// three tiles ahead (the bf16 tile's form before W24), 16 KiB, 4 blocks per CU, on gfx942's
// one-chunk 32x32x32 atom (arch/cdna.hpp AtomFp8K32; the 32x32x64 atom's two chunks per lane need
// BK >= 64). Its few-rounds partner (tile_rounds.hpp) is the 64-deep tile in four waves of 32 x 96
// and two LDS buffers, two tiles in flight (32 KiB, 2 blocks per CU), on the 32x32x64 atom. Chosen
// by the CDNA model at the pessimistic end (docs/perf-notes.md, issue 25 W6, W9 and W15). Not
// measured on AMD hardware.
using WideShapeFp8 = TwoBufferTileShape<128, 96, 32, 2, 1, 4>;
using WideFewRoundsShapeFp8 = TwoBufferTileShape<128, 96, 64, 4, 1, 3>;
using SmallGridShapeFp8 = SlicedKTileShape<TwoBufferTileShape<128, 96, 32, 2, 1, 4, 2>, 2>;
using NarrowShapeFp8 = TileShape<128, 32, 64, 4, 1, 2>;
using NarrowSlicedShapeFp8 = SlicedKTileShape<TileShape<32, 32, 64, 1, 1, 2>, 3>;
using TinyShapeFp8 = NarrowShapeFp8;  // no 16-wide fp8 atom on AMD (see arch/cdna.hpp)
using TapReduceShape = TileShape<128, kTapReduceBN, 32, 4, 1, 2>;
using TapReduceShapeFp8 = TileShape<128, kTapReduceBN, 64, 4, 1, 2>;
// The element-wise gather (Cin not a multiple of 8: enc_conv_in, K = 27) keeps one 32-deep K
// tile in two stages (no measurement or model row asks for another).
using WideElementwiseShape = TileShape<128, 96, 32, 4, 1, 2>;
using WideElementwiseShapeFp8 = TileShape<128, 96, 64, 4, 1, 2>;  // 64 deep, 32x32x64 atom
// The tap-row kernel on fragment atoms (tap_row_fragment_kernel.hpp) of the Cin = 3 layer, both
// targets: a 16 x 8 patch (128 output pixels) over its 18 x 8 tap rows (5 KiB), 96 output
// channels (the VAE's first layer has 96: one Cout tile, so each halo is built once) in two waves
// of 64 x 96, B in one buffer of 64 (bf16) / 128 (e4m3) K columns, of which the three tap rows use
// 48 / 96 (e4m3: two 32x32x64 atom steps, the second half zeros): 17 KiB. Faster at the
// pessimistic end of the CDNA model than four waves of 32 x 96 or 64 x 64 (128 wide) on both
// targets, and than a 32 x 8 patch of four 64 x 96 waves on MI355X (within 1 % of it on MI300X;
// docs/perf-notes.md, issue 25 W25). Not measured on AMD hardware.
using TapRowFragmentHaloBf16 = TapRowHalo<16, 2>;
using TapRowFragmentHaloFp8 = TapRowHalo<16, 1>;
using TapRowFragmentShape = OneBufferTileShape<128, 96, 64, 2, 1, 2>;
using TapRowFragmentShapeFp8 = OneBufferTileShape<128, 96, 128, 2, 1, 2>;

// The gfx950 table (gfx950's 160 KiB of LDS and 64 banks; TableSet::kGfx950): gfx942's with the
// wide tiles replaced by 256 x 96 blocks of four 64 x 96 wave tiles (six 32 x 32 atoms each: per
// MFMA 5/8 of the 32 x 96 wave tile's LDS reads) in three stages (66 KiB; two blocks per CU by
// registers and LDS, 2 waves per SIMD): two K tiles in flight behind the one computed hide the
// K-tile chain that bounds two stages. Chosen by the CDNA model at the pessimistic end of its
// range among candidates without scratch (four stages or deeper K cost a resident block at 256
// rows; the candidates and their predictions: docs/perf-notes.md). Not measured on AMD hardware.
using Gfx950WideShape = TileShape<256, 96, 32, 4, 1, 3>;
using Gfx950WideShapeFp8 = TileShape<256, 96, 64, 4, 1, 3>;
// The gfx950 192-wide tile of the Cout % 192 == 0 convs (dispatch.hpp's takes_wide_cout192, the
// rule sm_90a's 192-wide tile follows): 128 x 192 blocks of four 64 x 96 wave tiles in three
// stages (60 KiB, two blocks per CU, 2 waves per SIMD). Per FLOP a block fetches 9 % fewer bytes
// than the 256 x 96 tile (the A tile once for 192 output channels), which is what bounds those
// layers at the model's pessimistic end (the Infinity Cache). Chosen by the CDNA model at the
// pessimistic end against the 256 x 96 tile on the Cout % 192 rows (docs/perf-notes.md, W16).
// Not measured on AMD hardware.
using Gfx950WideCout192Shape = TileShape<128, 192, 32, 2, 2, 3>;
using Gfx950WideCout192ShapeFp8 = TileShape<128, 192, 64, 2, 2, 3>;
// The gfx950 small-grid tile (tile_rounds.hpp's small-grid rule): where the wide tile's grid (the
// 256 x 96 or the 192-wide one) gives each CU at most one block, that block's K-tile chain runs
// exposed at one wave per SIMD. Two waves of 64 x 96, three K tiles in flight in staging
// registers, two LDS buffers (TwoBufferTileShape, 28 KiB): twice the blocks, four per CU, the
// chains of two blocks overlapping on each CU. Faster there at the pessimistic end of the CDNA
// model (the 128² 384-channel layers, the 16 -> 384 conv, the 256² downsample, the first upsample
// conv), slower on every grid that fills the CUs (docs/perf-notes.md, W17).
using Gfx950SmallGridShape = SlicedKTileShape<TwoBufferTileShape<128, 96, 32, 2, 1, 4, 2>, 2>;
using Gfx950SmallGridShapeFp8 = SlicedKTileShape<TwoBufferTileShape<128, 96, 64, 2, 1, 4, 2>, 2>;
// The gfx950 halo kernel (halo_fragment_kernel.hpp), bf16: a 16 x 8 patch (BM = 128) and its
// 18 x 10 halo of up to 96 channels (34 KiB), then one B-only LDS buffer of 96 x 32 with three
// B tiles in flight in staging registers (OneBufferTileShape: a barrier before each flush): 40
// KiB, four blocks per CU (two LDS buffers, 46 KiB, left three), two waves of 64 x 96 (2 waves
// per SIMD). It reads each input pixel of a block once instead of at
// nine taps, so a block fetches about 40 % fewer bytes per FLOP than the 256 x 96 tile, and the
// Infinity Cache that bounds the 96-channel layers at the model's pessimistic end drops out;
// with three B tiles in flight its K-tile chain stays below the implicit GEMM's time (three LDS
// stages, two tiles in flight, were slower). Taken where the set's implicit GEMM would take the
// 256 x 96 tile (the 96 -> 96 layers): on the Cout % 192 and small-grid rows their own tiles
// are faster (docs/perf-notes.md, W18, W18b and W21). Not measured on AMD hardware.
using Gfx950HaloShape = OneBufferTileShape<128, 96, 32, 2, 1, 4>;
// The gfx950 narrow sliced-K tile: gfx942's 32 x 32 blocks in six groups of one wave (a sixth of
// the K tiles each: 18 of the 384 -> 32 conv's 108), 48 KiB, which gfx942's LDS would hold once
// per CU. Faster there at the pessimistic end of the CDNA model (docs/perf-notes.md, W23). Not
// measured on AMD hardware.
using Gfx950NarrowSlicedShape = SlicedKTileShape<TileShape<32, 32, 32, 1, 1, 2>, 6>;
using Gfx950NarrowSlicedShapeFp8 = SlicedKTileShape<TileShape<32, 32, 64, 1, 1, 2>, 6>;
// No few-rounds partner (tile_rounds.hpp) on gfx950: the one candidate with fewer resident
// blocks of the same grid, 256 x 96 with 128-byte K tiles in two stages (88 KiB, 1 block per CU),
// gains the fp8 set 0.7 % and loses the bf16 set 0.8 % at the model's pessimistic end
// (docs/perf-notes.md, issue 25 W6).
}  // namespace cdna
#if defined(VAECONV_BACKEND_HIP)
using namespace cdna;
static_assert(TapReduceShape::BM == TapReducePatchCdna::kPixels &&
                  TapReduceShapeFp8::BM == TapReducePatchCdna::kPixels,
              "the host tests check the AMD tap-reduce halo under this name");
#else
// The wide tiles' atom: on sm_90a (VAECONV_NVIDIA_WGMMA, set by CMake) the warpgroup atom, one
// m64 x 96 wgmma per warpgroup and K step, so "warps" in these shapes are warpgroups; elsewhere
// two m16n8 mma.sync per m16n16 atom.
#if defined(VAECONV_NVIDIA_WGMMA)
#define VAECONV_WIDE_WGMMA 1
#endif
#if defined(VAECONV_WIDE_WGMMA)
// Session-4 sweep (docs/perf-notes.md): two warpgroups of 64 x 96, BK = 64 (128-byte rows: half
// the barriers per FLOP of BK = 32), 4 stages (two tiles ahead of the one in flight), 2 blocks/SM.
using WideShape = TileShape<128, 96, 64, 2, 1, 4, 2>;
// The bf16 tile of the causal (cached or not) and downsample convs whose Cout is a multiple of
// 192 (192, 384; dispatch.hpp's takes_wide_cout192): two consumer warpgroups of 64 x 192 (one
// m64n192 wgmma each per K step), BK = 64, 4 stages (160 KiB) and 51200 bytes of epilogue staging
// of its own, 1 block/SM. Per K tile it reads each A row once for 192 output channels instead of
// twice for 2 x 96: faster than WideShape on the 192- and 384-channel causal, cached-causal and
// 384-channel downsample layers timed, equal on the 192-channel downsample, slower on the
// 96-channel ones (which it would pad) and neutral on the upsample phases, which keep WideShape;
// the temporal convs keep WideShape until timed on it (docs/performance.md, the 128x192 tile).
// Warp-specialized with two producer warpgroups of 56 registers each (the consumers keep 200):
// with one producer warpgroup it measured slower than ConvKernel's form on every row it serves,
// with two faster on every seed row timed (docs/perf-notes.md).
using WideCout192Shape =
    WarpSpecializedTileShape<TileShape<128, 192, 64, 2, 1, 4, 1>, 51200, 2, 56>;
// The bf16 tile of the causal convs (cached or not, T = 1 and T > 1) that WideShape would take
// (dispatch.hpp's takes_wide_causal: Cout not a multiple of 192, and not the halo kernel's),
// above all the 96-channel cached conv of a Wan video decode: warp-specialized
// (kernel/warp_specialized_conv_kernel.hpp: a producer warpgroup feeds two consumer warpgroups of
// 128 x 96 through mbarriers, 3 stages, 53248 bytes of epilogue staging of its own, one block per
// SM, a persistent grid). The same tile in WideShape's place was slower on the downsample conv
// and the upsample phases, which keep WideShape (docs/perf-notes.md).
using WideCausalShape = WarpSpecializedTileShape<TileShape<256, 96, 64, 2, 1, 3, 1>, 53248>;
// The bf16 narrow tile (Cout <= 32 past the tiny tile; enc_conv_out: 384 -> 32, 128 blocks) on
// the wgmma atom: two warpgroups of 64 x 32 (one m64n32 wgmma each per K step), BK = 64, 8 stages
// (160 KiB, 1 block/SM): the K chain of a grid of one block per SM deep in flight. Faster on
// enc_conv_out than the mma.sync sliced-K tile it replaced (64 x 32 x 32 in 4 groups of warps)
// and than 64 x 32 x 64 in 8 stages or in 4 at 3 blocks/SM (docs/perf-notes.md). The element-wise
// gather (Cin not a multiple of 8) keeps the mma.sync narrow tile (NarrowElementwise).
using NarrowShapeWgmma = TileShape<128, 32, 64, 2, 1, 8, 1>;
#else
// Sweeps of 2026-12-02 (docs/perf-notes.md): BN = 96 divides every VAE Cout (96, 192, 384), and
// three resident blocks per SM (168 registers) hide the mma.sync issue latency that two did not.
using WideShape = TileShape<128, 96, 32, 2, 2, 4, 3>;
#endif
// The element-wise gather (Cin = 3: one K tile, synchronous loads) of the wide tile. 64x96, 128x96
// with 2 stages and the wide tile itself measured equal within noise (docs/perf-notes.md); 64x96
// is shipped because it does not spill (the wide tile's element-wise kernel does).
using WideElementwiseShape = TileShape<64, 96, 32, 2, 2, 2, 4>;
using NarrowShape = TileShape<128, 32, 32, 4, 1, 3>;
using TinyShape = TileShape<128, 16, 32, 4, 1, 3>;
#if defined(VAECONV_WIDE_WGMMA)
// One warpgroup per block: the promoted fp8 partial sums double the accumulators (96 floats).
// BK = 128 (128-byte rows, as the bf16 BK = 64) halves the barriers and promotions per FLOP, and
// 3 stages keep 3 blocks/SM; it measured faster than BK = 64 with 4 stages (docs/perf-notes.md).
using WideShapeFp8 = TileShape<64, 96, 128, 1, 1, 3, 3>;
// The e4m3 tile of the same convs as WideCout192Shape, and of the upsample phases, whose Cout is
// a multiple of 192: two warpgroups of 64 x 192 (one m64n192 e4m3 wgmma each per K step), BK = 128
// (128-byte rows), 4 stages, 160 KiB and so 1 block/SM; the promoted partial sums take 2 x 96
// accumulators per thread. Faster than WideShapeFp8 on every 192- and 384-channel causal,
// downsample and upsample-phase layer swept, where 3 stages and BK = 64 lost (docs/perf-notes.md,
// the e4m3 192-wide sweep). Warp-specialized (kernel/warp_specialized_conv_kernel.hpp: a producer
// warpgroup feeds the two consumers through mbarriers; 51200 bytes of epilogue staging of its own,
// a persistent grid): each consumer promotes its batch while the other's runs, where ConvKernel's
// block barrier per K tile serialized them; faster on the 192-channel causal and downsample and
// the 192 -> 384 and 384 -> 384 256² rows, about equal on the others (docs/perf-notes.md).
using WideCout192ShapeFp8 = WarpSpecializedTileShape<TileShape<128, 192, 128, 2, 1, 4, 1>, 51200>;
#else
// The fastest FP8 mma.sync tile measured; on sm_90 (the cuda-mma build) its main loop spills
// (docs/amd-performance.md, the NVIDIA validation), which a smaller tile would have to beat.
using WideShapeFp8 = TileShape<192, 96, 64, 2, 2, 4>;
#endif
// The FP8 element-wise gather keeps the mma.sync tile: under the wgmma tile's register cap
// (2 blocks of 256 threads) its 16-element chunks spill about 100 bytes.
using WideElementwiseShapeFp8 = TileShape<192, 96, 64, 2, 2, 4>;
using NarrowShapeFp8 = TileShape<128, 32, 64, 4, 1, 3>;
using TinyShapeFp8 = TileShape<128, 16, 64, 4, 1, 3>;
// Tap-reduce: memory-bound, so as many resident blocks as fit without spilling (ptxas: bf16 161
// registers at 3 blocks/SM; e4m3 mma.sync needs operand conversions, so fp8 takes BK = 32 and
// 2 blocks/SM at 196 registers), and 4 stages: the whole K of the T = 1 layer (Cin = 96) is in
// flight at once (faster than 3 stages: docs/perf-notes.md).
using TapReduceShape = TileShape<256, kTapReduceBN, 32, 4, 1, 4, 3>;
static_assert(TapReduceShape::BM == TapReducePatchNvidia::kPixels,
              "the host tests check the NVIDIA tap-reduce halo under this name");
using TapReduceShapeFp8 = TileShape<256, kTapReduceBN, 32, 4, 1, 4, 2>;
static_assert(TapReduceShapeFp8::BM == TapReducePatchNvidia::kPixels,
              "the host tests check the NVIDIA tap-reduce halo under this name");
#endif

// The halo kernel (halo_conv_kernel.hpp): a patch of 32 x 8 output pixels (BM = 256, two
// warpgroups of 128 rows) and its 34 x 10 input halo of up to 96 bf16 channels (64 KiB), then
// three B-only stages at 2 blocks/SM (128 registers, no spill). Built where the wide tile is the
// wgmma atom (NVIDIA sm_90a). A 16 x 8 patch was slower than the implicit GEMM at Cin = 96
// (occupancy: 1 block/SM at 4 stages); the 256-row patch at 3 stages is faster at every T = 1
// layer it holds (each weight tile read from L2 once per 256 pixels instead of 128), so it takes
// Cin <= 96 (docs/perf-notes.md).
using HaloBf16 = HaloTile<32, 8, 96, 2>;  // 256 output pixels
// Built for both operand types where the wide tile is the wgmma atom (NVIDIA sm_90a).
#if defined(VAECONV_WIDE_WGMMA)
constexpr bool kHaloKernel = true;
using HaloShape = TileShape<256, 96, 64, 2, 1, 3, 2>;
#else
constexpr bool kHaloKernel = false;
#endif

// The halo kernel on fragment atoms (halo_fragment_kernel.hpp), bf16 only: a 16 x 8 patch
// (BM = 128) and its 18 x 10 halo of up to 96 channels (34 KiB), then the wide tile's B stages.
// The NVIDIA mma.sync build's own set: 128 x 96 x 32 in four warps of 64 x 48 and 4 stages,
// 58 KiB, 3 blocks/SM (166 registers, no spill). AMD: the gfx950 set's, on its own tile
// (cdna::Gfx950HaloShape; gfx942's set has none), which the mma.sync build twins.
using HaloFragmentBf16 = HaloTile<16, 8, 96, 2>;  // 128 output pixels
#if !defined(VAECONV_WIDE_WGMMA) && !defined(VAECONV_BACKEND_HIP)
constexpr bool kHaloFragmentKernel = true;
using HaloFragmentShape = TileShape<128, 96, 32, 2, 2, 4, 3>;
#else
constexpr bool kHaloFragmentKernel = false;
#endif
// The bf16 halo cap of the build's primary table set (its Tiles<kBF16>::kHaloMaxCin, the
// dispatch's shipped_family): 0 on AMD, whose primary set (gfx942's) has no halo kernel; the
// gfx950 set's (cdna::Gfx950HaloShape, which the mma.sync build twins) is its own.
#if defined(VAECONV_BACKEND_HIP)
constexpr int kPrimaryHaloMaxCinBf16 = 0;
#else
constexpr int kPrimaryHaloMaxCinBf16 = HaloBf16::kMaxCin;
#endif

// The FP8 halo kernel: the same kernel on e4m3 operands (16 channels per halo chunk, K steps of
// 32 channels, BK = 128 = one 128-byte B row per K tile), with the partial sums promoted every
// K tile. Its promotion doubles the accumulators, so the bf16 halo's two warpgroups of 128 rows
// would not fit 2 blocks/SM: a 16 x 8 patch of two warpgroups of 64 rows (the e4m3 weights are
// half the bytes, so a 128-pixel patch re-reads as many weight bytes per pixel as the bf16
// 256-pixel one); 122 registers, no spill. It is faster than the BK = 128 implicit GEMM on the
// 96-channel layers; the 32 x 8 patch (four warpgroups, 1 block/SM) was slower
// (docs/perf-notes.md).
using HaloFp8 = HaloTile<16, 8, 96, 1>;
using HaloShapeFp8 = TileShape<128, 96, 128, 2, 1, 4, 2>;

// The tap-row kernel (tap_row_conv_kernel.hpp) of the Cin = 3 layer: the bf16 halo kernel's tile
// (a 32 x 8 patch, two warpgroups of 128 rows, 96 output channels) over a halo of 34 x 8 tap rows
// (8.5 KiB), built where the halo kernel is. The e4m3 form has the same patch: its three K steps
// of 32 are one batch of 27 products per output, too short to need the promotion the wide fp8
// tiles make every K tile, so the accumulators stay at 96 floats per thread.
using TapRowBf16 = TapRowHalo<32, 2>;
using TapRowShape = TileShape<256, 96, 64, 2, 1, 3, 2>;
using TapRowFp8 = TapRowHalo<32, 1>;
using TapRowShapeFp8 = TileShape<256, 96, 128, 2, 1, 3, 2>;

// The bf16 halo kernel stores its packed epilogue by the copy engine (sm_90 cp.async.bulk, one
// instruction per staged output row; epilogue.hpp), where it measured faster; every other kernel
// stores through registers (docs/perf-notes.md, the copy-engine store).
constexpr bool kBulkStoreHaloBf16 = true;

#if defined(VAECONV_GPU_COMPILER)
using Arch = arch::Current;
#if defined(VAECONV_WIDE_WGMMA)
using WideAtomBf16 = Arch::AtomWgmmaBf16<WideShape::WTN>;
using WideCout192AtomBf16 = Arch::AtomWgmmaBf16<WideCout192Shape::WTN>;
using WideCausalAtomBf16 = Arch::AtomWgmmaBf16<WideCausalShape::WTN>;
using NarrowAtomBf16 = Arch::AtomWgmmaBf16<NarrowShapeWgmma::WTN>;
using WideAtomFp8 = Arch::AtomWgmmaFp8<WideShapeFp8::WTN>;
using WideCout192AtomFp8 = Arch::AtomWgmmaFp8<WideCout192ShapeFp8::WTN>;
#elif defined(VAECONV_BACKEND_HIP)
using WideAtomBf16 = Arch::AtomBf16;
using WideAtomFp8 = Arch::AtomFp8K32;  // gfx942's 32-deep fp8 wide tile (cdna::WideShapeFp8)
#else
using WideAtomBf16 = Arch::AtomBf16;
using WideAtomFp8 = Arch::AtomFp8;
#endif
// The shipped policies of each operand type. A dispatch reads a table set (Tables::For<kType>,
// api/kernel_plan.hpp): the library's is ShippedTiles; a sweep's bench translation unit passes its
// own, the shipped tables with one entry replaced by a candidate (bench/sweep_candidate.cpp).
// kHaloMaxCin: the largest Cin the halo kernel's halo holds, the dispatch's cap (0: the set has
// no halo kernel); kHaloOnWideTileOnly (where set, true): the halo kernel takes only the convs
// whose implicit GEMM would take the set's wide tile (kernel_plan.hpp). WideFewRounds:
// the wide tile's few-rounds partner and kRoundTarget the target constants of the round rule
// (tile_rounds.hpp) where the set has one, else void (one wide tile). WideCout192: the tile of
// the Cout % 192 == 0 convs of dispatch.hpp's takes_wide_cout192 where the set has one (sm_90a
// and gfx950, bf16 and e4m3), else void. WideCausal: the tile of dispatch.hpp's
// takes_wide_causal convs where the set has one (sm_90a bf16), else void. WideCout192Tail and
// kTailUnits (where the set has them, sm_90a bf16): the tile and nominal units of the tail rule
// (tail_split.hpp) for the 192-wide tile's short last round. NarrowElementwise (where the set has
// one, sm_90a bf16): the narrow tile of the element-wise gather, else Narrow's. WideSmallGrid: the
// tile of tile_rounds.hpp's small-grid rule and kSmallGridTarget its target constants where the
// set has one (gfx950), else void.
template <DType kType>
struct Tiles;
template <>
struct Tiles<DType::kBF16> {
  static constexpr int kHaloMaxCin = kPrimaryHaloMaxCinBf16;
  using Wide = TilePolicy<WideShape, Arch, WideAtomBf16>;
#if defined(VAECONV_BACKEND_HIP)
  using WideFewRounds = TilePolicy<WideFewRoundsShape, Arch, Arch::AtomBf16>;
  static constexpr RoundTarget kRoundTarget = kRoundTargetGfx942;
  using WideSmallGrid = TilePolicy<SmallGridShape, Arch, Arch::AtomBf16>;
  static constexpr RoundTarget kSmallGridTarget = kRoundTargetGfx942;
  static constexpr int kSmallGridBlocksPerUnit = 2;
#else
  using WideFewRounds = void;
  using WideSmallGrid = void;
#endif
#if defined(VAECONV_WIDE_WGMMA)
  using WideCout192 = TilePolicy<WideCout192Shape, Arch, WideCout192AtomBf16>;
  // The tail rule's (tail_split.hpp) tile for the 192-wide tile's short last round: the wide
  // tile, 128 x 96 (half a 192-wide block's MACs, two resident per SM), whose kernels every
  // geometry of the 192-wide tile already builds; kTailUnits: an H100 SXM's or H200's SMs. The
  // 166² bottleneck is the one seed row it splits (timed: docs/perf-notes.md).
  using WideCout192Tail = Wide;
  static constexpr int kTailUnits = 132;
  using WideCausal = TilePolicy<WideCausalShape, Arch, WideCausalAtomBf16>;
#else
  using WideCout192 = void;
  using WideCausal = void;
#endif
  using WideElementwise = TilePolicy<WideElementwiseShape, Arch, Arch::AtomBf16>;
#if defined(VAECONV_WIDE_WGMMA)
  using Narrow = TilePolicy<NarrowShapeWgmma, Arch, NarrowAtomBf16>;
  using NarrowElementwise = TilePolicy<NarrowShape, Arch, Arch::AtomBf16>;
#else
  using Narrow = TilePolicy<NarrowShape, Arch, Arch::AtomBf16>;
#endif
#if defined(VAECONV_BACKEND_HIP)
  using NarrowSliced = TilePolicy<NarrowSlicedShape, Arch, Arch::AtomBf16>;
#else
  using NarrowSliced = void;
#endif
  using Tiny = TilePolicy<TinyShape, Arch, Arch::AtomBf16Narrow>;
  using TapReduce = TilePolicy<TapReduceShape, Arch, Arch::AtomBf16>;
#if defined(VAECONV_WIDE_WGMMA)
  using Halo = HaloPolicy<TilePolicy<HaloShape, Arch, WideAtomBf16, kBulkStoreHaloBf16>, HaloBf16>;
  using TapRow =
      HaloPolicy<TilePolicy<TapRowShape, Arch, WideAtomBf16>, TapRowBf16>;
#else
#if !defined(VAECONV_BACKEND_HIP)
  using Halo = HaloPolicy<TilePolicy<HaloFragmentShape, Arch, Arch::AtomBf16>, HaloFragmentBf16>;
#endif
  // AMD's, and its mma.sync twin as the NVIDIA build's own (no other tap-row tile there)
  using TapRow = HaloPolicy<TilePolicy<cdna::TapRowFragmentShape, Arch, Arch::AtomBf16>,
                            cdna::TapRowFragmentHaloBf16>;
#endif
};
template <>
struct Tiles<DType::kFP8E4M3> {
  static constexpr int kHaloMaxCin = HaloFp8::kMaxCin;
#if defined(VAECONV_WIDE_WGMMA)
  using Halo = HaloPolicy<
      TilePolicy<HaloShapeFp8, Arch, Arch::AtomWgmmaFp8<HaloShapeFp8::WTN>>,
      HaloFp8>;
  using TapRow = HaloPolicy<
      TilePolicy<TapRowShapeFp8, Arch, Arch::AtomWgmmaFp8<TapRowShapeFp8::WTN>>,
      TapRowFp8>;
#else
  using TapRow = HaloPolicy<TilePolicy<cdna::TapRowFragmentShapeFp8, Arch, Arch::AtomFp8>,
                            cdna::TapRowFragmentHaloFp8>;
#endif
  using Wide = TilePolicy<WideShapeFp8, Arch, WideAtomFp8>;
#if defined(VAECONV_BACKEND_HIP)
  using WideFewRounds = TilePolicy<WideFewRoundsShapeFp8, Arch, Arch::AtomFp8>;
  static constexpr RoundTarget kRoundTarget = kRoundTargetGfx942;
  using WideSmallGrid = TilePolicy<SmallGridShapeFp8, Arch, WideAtomFp8>;
  static constexpr RoundTarget kSmallGridTarget = kRoundTargetGfx942;
  static constexpr int kSmallGridBlocksPerUnit = 2;
#else
  using WideFewRounds = void;
  using WideSmallGrid = void;
#endif
#if defined(VAECONV_WIDE_WGMMA)
  // No tail tile (tail_split.hpp): the e4m3 wide tile as the tail was not faster on the 166²
  // bottleneck (docs/perf-notes.md).
  using WideCout192 = TilePolicy<WideCout192ShapeFp8, Arch, WideCout192AtomFp8>;
#else
  using WideCout192 = void;
#endif
  using WideCausal = void;  // e4m3's causal convs keep the wide tile (none timed on another)
  using WideElementwise = TilePolicy<WideElementwiseShapeFp8, Arch, Arch::AtomFp8>;
  using Narrow = TilePolicy<NarrowShapeFp8, Arch, Arch::AtomFp8>;
#if defined(VAECONV_BACKEND_HIP)
  using NarrowSliced = TilePolicy<NarrowSlicedShapeFp8, Arch, Arch::AtomFp8>;
#else
  using NarrowSliced = void;
#endif
  using Tiny = TilePolicy<TinyShapeFp8, Arch, Arch::AtomFp8Narrow>;
  using TapReduce = TilePolicy<TapReduceShapeFp8, Arch, Arch::AtomFp8>;
};
struct ShippedTiles {
  template <DType kType>
  using For = Tiles<kType>;
};

// The gfx950 table set (TableSet::kGfx950): the shipped tables with the wide tiles that use
// gfx950's LDS (one wide tile per operand type: no round rule) and a 192-wide tile for the
// Cout % 192 == 0 convs (takes_wide_cout192). On AMD their arch type is
// arch::CdnaGfx950Only (its gfx942 device pass is a trap: arch/cdna.hpp). On an NVIDIA build
// without wgmma (the cuda-mma preset) the same shapes are instantiated on the mma.sync atom, the
// portable twin the GPU suite runs; the wgmma build has no such set (conv_forward never asks for
// it there).
#if defined(VAECONV_BACKEND_HIP)
using Gfx950Arch = arch::CdnaGfx950Only;
#else
using Gfx950Arch = Arch;
#endif
#if !defined(VAECONV_WIDE_WGMMA)
constexpr bool kGfx950Tables = true;
template <DType kType>
struct Gfx950Tiles;
template <>
struct Gfx950Tiles<DType::kBF16> : Tiles<DType::kBF16> {
  using Wide = TilePolicy<cdna::Gfx950WideShape, Gfx950Arch, Arch::AtomBf16>;
  using WideFewRounds = void;  // one wide tile (cdna::Gfx950WideShape's comment)
  using WideCout192 = TilePolicy<cdna::Gfx950WideCout192Shape, Gfx950Arch, Arch::AtomBf16>;
  using WideSmallGrid = TilePolicy<cdna::Gfx950SmallGridShape, Gfx950Arch, Arch::AtomBf16>;
  static constexpr RoundTarget kSmallGridTarget = kRoundTargetGfx950;
  static constexpr int kSmallGridBlocksPerUnit = 1;
  using NarrowSliced = TilePolicy<cdna::Gfx950NarrowSlicedShape, Gfx950Arch, Arch::AtomBf16>;
  static constexpr int kHaloMaxCin = HaloFragmentBf16::kMaxCin;
  static constexpr bool kHaloOnWideTileOnly = true;
  using Halo = HaloPolicy<TilePolicy<cdna::Gfx950HaloShape, Gfx950Arch, Arch::AtomBf16>,
                          HaloFragmentBf16>;
};
template <>
struct Gfx950Tiles<DType::kFP8E4M3> : Tiles<DType::kFP8E4M3> {
  using Wide = TilePolicy<cdna::Gfx950WideShapeFp8, Gfx950Arch, Arch::AtomFp8>;
  using WideFewRounds = void;
  using WideCout192 = TilePolicy<cdna::Gfx950WideCout192ShapeFp8, Gfx950Arch, Arch::AtomFp8>;
  using WideSmallGrid = TilePolicy<cdna::Gfx950SmallGridShapeFp8, Gfx950Arch, Arch::AtomFp8>;
  static constexpr RoundTarget kSmallGridTarget = kRoundTargetGfx950;
  static constexpr int kSmallGridBlocksPerUnit = 1;
  using NarrowSliced = TilePolicy<cdna::Gfx950NarrowSlicedShapeFp8, Gfx950Arch, Arch::AtomFp8>;
};
struct ShippedTilesGfx950 {
  template <DType kType>
  using For = Gfx950Tiles<kType>;
};
#else
constexpr bool kGfx950Tables = false;
#endif

// The gfx942 table set's portable twin (TableSet::kGfx942Twin). On AMD gfx942's tables are the
// primary set; the NVIDIA mma.sync build's primary set is NVIDIA's own tiles, so there gfx942's
// wide tiles (the bf16 one 32 deep in one LDS buffer, the fp8 one 32-byte rows in two: layouts no
// NVIDIA tile has) and its tap-reduce tiles (the 8 x 16 halo of 128 rows in two stages) are
// instantiated on the mma.sync atom for the GPU suite to run, with the round rule's choice between
// the bf16 wide tile and its few-rounds partner made as on gfx942 (its target constants,
// tile_rounds.hpp), so that each shape runs the tile gfx942 gives it. The narrow, tiny and
// element-wise tiles keep the primary set's (they differ from gfx942's in stages or warps only, and
// each more wide-family policy is five more kernels to compile). Not in visit_table_set: a device
// never runs it, so conv_forward does not instantiate it.
#if !defined(VAECONV_WIDE_WGMMA) && !defined(VAECONV_BACKEND_HIP)
constexpr bool kGfx942TwinTables = true;
template <DType kType>
struct Gfx942TwinTiles;
template <>
struct Gfx942TwinTiles<DType::kBF16> : Tiles<DType::kBF16> {
  using Wide = TilePolicy<cdna::WideShape, Arch, Arch::AtomBf16>;
  using WideFewRounds = TilePolicy<cdna::WideFewRoundsShape, Arch, Arch::AtomBf16>;
  static constexpr RoundTarget kRoundTarget = kRoundTargetGfx942;
  using WideSmallGrid = TilePolicy<cdna::SmallGridShape, Arch, Arch::AtomBf16>;
  static constexpr RoundTarget kSmallGridTarget = kRoundTargetGfx942;
  static constexpr int kSmallGridBlocksPerUnit = 2;
  using NarrowSliced = TilePolicy<cdna::NarrowSlicedShape, Arch, Arch::AtomBf16>;
  using TapReduce = TilePolicy<cdna::TapReduceShape, Arch, Arch::AtomBf16>;
};
template <>
struct Gfx942TwinTiles<DType::kFP8E4M3> : Tiles<DType::kFP8E4M3> {
  // NVIDIA's e4m3 atom (m16n16k32) takes the 32-deep wide tile as it is: one 16-byte chunk per
  // lane, 32-byte rows, the LDS bytes and stages of gfx942's.
  using Wide = TilePolicy<cdna::WideShapeFp8, Arch, Arch::AtomFp8>;
  using WideFewRounds = TilePolicy<cdna::WideFewRoundsShapeFp8, Arch, Arch::AtomFp8>;
  static constexpr RoundTarget kRoundTarget = kRoundTargetGfx942;
  using WideSmallGrid = TilePolicy<cdna::SmallGridShapeFp8, Arch, Arch::AtomFp8>;
  static constexpr RoundTarget kSmallGridTarget = kRoundTargetGfx942;
  static constexpr int kSmallGridBlocksPerUnit = 2;
  using NarrowSliced = TilePolicy<cdna::NarrowSlicedShapeFp8, Arch, Arch::AtomFp8>;
  using TapReduce = TilePolicy<cdna::TapReduceShapeFp8, Arch, Arch::AtomFp8>;
};
struct ShippedTilesGfx942Twin {
  template <DType kType>
  using For = Gfx942TwinTiles<kType>;
};
#else
constexpr bool kGfx942TwinTables = false;
#endif

// Calls f with the table set s names (a value of its type): ShippedTiles, or ShippedTilesGfx950
// where the build has it; a build without it runs its one set for every s (kGfx942Twin too).
template <class F>
inline decltype(auto) visit_table_set(TableSet s, F&& f) {
#if !defined(VAECONV_WIDE_WGMMA)
  if (s == TableSet::kGfx950) return f(ShippedTilesGfx950{});
#else
  (void)s;
#endif
  return f(ShippedTiles{});
}

// visit_table_set and the set only a caller names: the gfx942 twin where the build has it
// (which_kernel, precompiled::conv_forward_table_set).
template <class F>
inline decltype(auto) visit_any_table_set(TableSet s, F&& f) {
#if !defined(VAECONV_WIDE_WGMMA) && !defined(VAECONV_BACKEND_HIP)
  if (s == TableSet::kGfx942Twin) return f(ShippedTilesGfx942Twin{});
#endif
  return visit_table_set(s, static_cast<F&&>(f));
}
#endif

}  // namespace vaeconv::kernel
