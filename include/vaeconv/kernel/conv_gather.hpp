// vaeconv/kernel/conv_gather.hpp — the implicit-GEMM gather: which input element is A[m][k].
//
// A[m][k] of the conv GEMM is the input element that output pixel m multiplies with packed weight
// column k = ((kt * 3 + kh) * 3 + kw) * Cin + c. With the pad, stride and upsample of a Geometry:
//
//   it   = ot + kt_base + kt - pad_t                  (causal: time taps look back only)
//   ih_u = oh * Stride + kh - Pad,  ih = ih_u / Up    (ih_u indexes the upsampled, padded frame)
//   iw_u = ow * Stride + kw - Pad,  iw = iw_u / Up
//   valid when 0 <= it < T, 0 <= ih_u < H * Up, 0 <= iw_u < W * Up, k < K, m inside the frame
//
// The three VAE convs are three Geometries: causal (1, 1, 1), downsample (2, 0, 1) — ZeroPad2d
// (0,1,0,1) needs no term, its zeros are the ih_u >= H taps — and upsample (1, 1, 2). Nothing is
// ever padded or upsampled in memory.
//
// Like CUTLASS's analytic conv iterator, the gather reads as the math: at(i) is the byte offset of
// row i's element, valid(i) says whether it exists, advance() moves K by one block tile. The
// kernel reads the cached forms, offset(i) and exists(i): advance() only adds BK to the offsets
// while the K tile stays inside its tap and recomputes them when the tap changes (every Cin / BK
// tiles), which keeps the per-tile index arithmetic off the MMA loop's back. The host tests check
// both forms against the ConvDesc definition after every advance. A thread owns one 16-byte chunk
// column (8 consecutive k, never straddling a tap since Cin % 8 == 0) and kRows rows; per-row
// state is decoded once per block. A chunk is 16 bytes: kChunkElems = 8 bf16 or 16 fp8 elements
// of kElemBytes each.
//
// The vector gather (TileConvGather) walks K with one cursor per block, at the K tile's first
// column, not one per thread: the tile cursor depends only on the K-tile count and the launch's
// parameters, so the tap carry and the "same tap or not" test are block-uniform (on AMD, scalar
// instructions and a scalar branch; per lane only the row offsets and masks change). A thread's
// chunk sits at a fixed channel offset from the tile's first column: in the tile cursor's tap
// when Cin % BK == 0 (every wide VAE layer), else possibly in one of the next taps that the tile
// reaches (Cin 96 with BK 64, Cin 16 with BK 32), which refresh() picks per lane from the taps'
// uniform terms.
#pragma once
#include <cstdint>
#include <type_traits>

#include "vaeconv/core/config.hpp"
#include "vaeconv/kernel/conv_params.hpp"

namespace vaeconv::kernel {

// The offset a folding gather (kOffsetFoldsRange) gives a row that does not exist: offset(i) is
// then at least this, and stays below 2^32 under the K steps (it grows by less than Cin or K
// elements), so a target whose loads return zero at or past it (CDNA's buffer loads: num_records
// is kept below it, arch/cdna.hpp kOutOfRange) loads offset(i) as it is, without the flag and its
// select per load. exists(i) still answers for targets that need the flag (cp.async).
inline constexpr uint32_t kFoldedOutOfRange = 0x80000000u;
template <class Gather, class = void>
struct OffsetFoldsRange : std::false_type {};
template <class Gather>
struct OffsetFoldsRange<Gather, std::enable_if_t<Gather::kOffsetFoldsRange>> : std::true_type {};
// Whether Arch's loads read Gather's folded offsets as they are: the gather folds, and the
// target's loads return zeros at or past kFoldedOutOfRange (Arch::kOutOfRange no larger).
template <class Arch, class = void>
struct LoadsReadFolded : std::false_type {};
template <class Arch>
struct LoadsReadFolded<Arch, decltype(void(Arch::kOutOfRange))>
    : std::bool_constant<Arch::kOutOfRange <= kFoldedOutOfRange> {};
template <class Gather, class Arch>
struct FoldsRange
    : std::bool_constant<OffsetFoldsRange<Gather>::value && LoadsReadFolded<Arch>::value> {};

// Taps: the packed spatial taps are a Taps x Taps window of the 3 x 3 grid (TapWindowCursor):
// the whole grid, or (Taps = 2) one output phase of the upsample conv (upsample_phases.hpp).
template <int Stride_, int Pad_, int Up_, int Taps_ = 3>
struct Geometry {
  static constexpr int kStride = Stride_, kPad = Pad_, kUp = Up_, kTaps = Taps_;
  static_assert(kUp == 1 || kUp == 2, "nearest-exact x2 is the only upsample");
  static_assert(kTaps == 3 || (kTaps == 2 && kUp == 1), "a 2 x 2 window: an upsample phase");
};
using CausalGeometry = Geometry<1, 1, 1>;
using DownsampleGeometry = Geometry<2, 0, 1>;
using UpsampleGeometry = Geometry<1, 1, 2>;
// One output phase (p, q) of the upsample conv, run on the source frame: a stride-1, pad-1 conv
// whose taps are the 2 x 2 window at (p, q) of the 3 x 3 grid (ConvParams::tap_h0 / tap_w0).
using UpsamplePhaseGeometry = Geometry<1, 1, 1, 2>;

// Block-level coordinates, of every kernel family (block_tiling.hpp: tile_coord): which frame,
// which pixels, which output channels.
struct BlockCoord {
  int n, ot;       // frame
  int m0;          // first pixel of the block inside the frame (linear tilings; 0 for patches)
  int n0;          // first output channel
  int it_lo;       // first input time slice the block can touch (the input view's base)
  int oh0, ow0;    // the patch's first output pixel (patch tilings; 0 for linear ones)
};

// The frame of block row y (m0 = n0 = 0).
VAECONV_HD inline BlockCoord frame_coord(const ConvParams& p, int block_y) {
  BlockCoord b;
  b.n = block_y / p.to;
  b.ot = block_y % p.to;
  b.m0 = 0;
  b.n0 = 0;
  b.oh0 = 0;
  b.ow0 = 0;
  const int it0 = b.ot + p.kt_base - p.pad_t;
  b.it_lo = it0 < 0 ? 0 : it0;
  return b;
}

VAECONV_HD inline BlockCoord block_coord(const ConvParams& p, int block_x, int block_y, int bm,
                                         int bn) {
  BlockCoord b = frame_coord(p, block_y);
  b.n0 = (block_x % p.n_tiles) * bn;
  b.m0 = (block_x / p.n_tiles) * bm;
  return b;
}

// Base of the block's input view: the first time slice its taps can reach, in 64 bits.
VAECONV_HD inline int64_t input_view_offset(const ConvParams& p, const BlockCoord& b) {
  return int64_t(b.n) * p.in_sn + int64_t(b.it_lo) * p.in_st;
}

// Where a K index sits in the packed K = (kt, kh, kw, c): channel c of tap (kt, kh, kw).
// carry() moves channel overflow into the tap counters, kw fastest, like an odometer; both the
// vector gather (steps of BK) and the element-wise gather (steps of 1) walk K with it.
// The packed spatial taps are a kWindow x kWindow window of the 3 x 3 grid with its first tap at
// (kh0, kw0): the whole grid (kWindow 3, origin 0), or one upsample phase's 2 x 2 window. kh and
// kw are grid coordinates either way, so tap offsets and the rows' 9-bit tap masks are shared.
// The whole grid keeps its own branches: a single form with a constant-zero origin changed the
// shipped kernels' PTX (nvcc's codegen, not the arithmetic), and they are measured as they are.
template <int kWindow>
struct TapWindowCursor {
  int c = 0, kw = 0, kh = 0, kt = 0;
  int kh0 = 0, kw0 = 0;  // the window's origin (0 for the whole grid)
  VAECONV_HD static TapWindowCursor of(int k, int cin, int kh0 = 0, int kw0 = 0) {
    TapWindowCursor t;
    const int tap = k / cin;
    t.c = k - tap * cin;
    if constexpr (kWindow == 3) {
      (void)kh0; (void)kw0;
      t.kw = tap % 3;
      t.kh = (tap / 3) % 3;
    } else {
      t.kh0 = kh0;
      t.kw0 = kw0;
      t.kw = kw0 + tap % kWindow;
      t.kh = kh0 + (tap / kWindow) % kWindow;
    }
    t.kt = tap / (kWindow * kWindow);
    return t;
  }
  // Channel overflow (c >= cin) into the tap counters, one tap at a time.
  VAECONV_HD void carry(int cin) {
    while (c >= cin) {
      c -= cin;
      next_tap();
    }
  }
  // carry() for an overflow of any size, as the element-wise gather has (its K tile of BK = 32
  // over Cin = 3 crosses ten taps): all but the last tap move at once, with one division, instead
  // of ten rounds of the odometer. The vector gather keeps carry(): its steps cross at most a few
  // taps, and on AMD the division cost its kernels registers (docs/perf-notes.md).
  VAECONV_HD void carry_any(int cin) {
    if (c >= 2 * cin) {
      const int q = c / cin - 1;
      c -= q * cin;
      skip_taps(q);
    }
    carry(cin);
  }
  // The next tap of the window, in odometer order (kw fastest, then kh, then kt).
  VAECONV_HD void next_tap() {
    if constexpr (kWindow == 3) {
      if (++kw == 3) {
        kw = 0;
        if (++kh == 3) {
          kh = 0;
          ++kt;
        }
      }
    } else {
      if (++kw == kw0 + kWindow) {
        kw = kw0;
        if (++kh == kh0 + kWindow) {
          kh = kh0;
          ++kt;
        }
      }
    }
  }

 private:
  // Moves q taps on: the window's taps in odometer order (kw fastest, then kh, then kt).
  VAECONV_HD void skip_taps(int q) {
    int i = (kt * kWindow + (kh - kh0)) * kWindow + (kw - kw0) + q;
    kw = kw0 + i % kWindow;
    i /= kWindow;
    kh = kh0 + i % kWindow;
    kt = i / kWindow;
  }
};
using TapCursor = TapWindowCursor<3>;

// The time term of a tap: x's frames (the block's input view) here; the cached causal conv's
// vector gather reads some taps from the cache (cached_frames.hpp: CachedFrames).
struct XFrames {
  static constexpr bool kCache = false;
  struct Term {
    uint32_t off;     // elements from the row base's time term (it_rel0 * in_st)
    bool ok;          // the frame exists
    bool from_cache;  // the frame is read from the cache's view
  };
  VAECONV_HD void init(const ConvParams&, const BlockCoord&) {}
  VAECONV_HD Term at(const ConvParams& p, int it_rel0, int t_rel_end, int kt) const {
    return {uint32_t(kt) * uint32_t(p.in_st), unsigned(it_rel0 + kt) < unsigned(t_rel_end), false};
  }
};

// The A gather's rows, whichever cursor walks K (LaneConvGather, TileConvGather): the per-row
// state decoded once per block, the frame constants, the cached offsets and flags, and the math
// form of a row's element at any tap cursor (at(), valid()). A cursor class adds its K position
// (Position: its members sit between the rows' and the frame's, GatherRowState and
// GatherFrameState, the member order both gathers had before they shared this state; nvcc's code
// for the kernels depends on that order), its advance and its refresh of the cached forms.
template <int kRows>
struct GatherRowState {
  int ih0[kRows], iw0[kRows];  // oh * Stride - Pad, ow * Stride - Pad (upsampled coordinates)
  bool row_ok[kRows];
  uint32_t taps_in_frame[kRows];  // bit kh * 3 + kw: tap (kh, kw) of the row lies in the frame
  // kLinear: at(i) of tap (0, 0, 0), in elements, at the channel init_rows() was given (the tile
  // cursor's lane_c; 0 for the per-thread cursor, whose tap delta holds its channel)
  uint32_t row_base_[kRows];
};
template <int kRows>
struct GatherFrameState {
  int it_rel0;                 // ot + kt_base - pad_t - it_lo: time offset of tap kt = 0
  int h_up, w_up, t_rel_end;   // bounds in the view's coordinates
  // Cached at()/valid() of the current position (the cursor class keeps them).
  uint32_t off_[kRows];
  bool ok_[kRows];
};

template <class Geo, int kRows, int kRowStep, int kElemBytes, class Position>
struct GatherRows : GatherRowState<kRows>, Position, GatherFrameState<kRows> {
  using RowState = GatherRowState<kRows>;
  using FrameState = GatherFrameState<kRows>;
  using RowState::ih0, RowState::iw0, RowState::row_ok, RowState::taps_in_frame,
      RowState::row_base_;
  using FrameState::it_rel0, FrameState::h_up, FrameState::w_up, FrameState::t_rel_end,
      FrameState::off_, FrameState::ok_;
  static constexpr int kChunkElems = 16 / kElemBytes;
  // Without upsampling the offset is linear in the tap: at(i) = row_base(i) + tap_delta(), so a
  // tap change costs one add per row instead of the whole address (linear_at()).
  static constexpr bool kLinear = Geo::kUp == 1;

  // The frame constants and rows row0 + i * kRowStep of block b, their bases at channel `lane_c`.
  // (Inlined into init() by force, and lane_c read by reference in the row loop as the member it
  // is: with a call or a channel passed by value, clang reassociated the row bases and nvcc
  // scheduled the init differently from the code the kernels were measured with.)
  VAECONV_HD VAECONV_FORCE_INLINE void init_rows(const ConvParams& p, const BlockCoord& b,
                                                 int row0, const int& lane_c) {
    it_rel0 = b.ot + p.kt_base - p.pad_t - b.it_lo;
    h_up = p.h * Geo::kUp;
    w_up = p.w_ * Geo::kUp;
    t_rel_end = p.t - b.it_lo;
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) {
      const int m = b.m0 + row0 + i * kRowStep;
      row_ok[i] = m < p.frame_pixels;
      const int oh = m / p.wo, ow = m % p.wo;
      ih0[i] = oh * Geo::kStride - Geo::kPad;
      iw0[i] = ow * Geo::kStride - Geo::kPad;
      taps_in_frame[i] = frame_taps(i);
      // Unsigned wrap-around: a pad row's base is "negative", its in-frame taps' sums are not.
      row_base_[i] = uint32_t(it_rel0) * uint32_t(p.in_st) + uint32_t(ih0[i]) * uint32_t(p.in_sh) +
                     uint32_t(iw0[i]) * uint32_t(p.in_sw) + uint32_t(lane_c);
    }
  }

  // The 9-bit mask of row i's spatial taps inside the (upsampled) frame; 0 for a row past it.
  VAECONV_HD uint32_t frame_taps(int i) const {
    uint32_t cols = 0, mask = 0;
VAECONV_UNROLL
    for (int kw = 0; kw < 3; ++kw) cols |= uint32_t(unsigned(iw0[i] + kw) < unsigned(w_up)) << kw;
VAECONV_UNROLL
    for (int kh = 0; kh < 3; ++kh)
      if (unsigned(ih0[i] + kh) < unsigned(h_up)) mask |= cols << (3 * kh);
    return row_ok[i] ? mask : 0u;
  }

  VAECONV_HD bool exists(int i) const { return ok_[i]; }
  VAECONV_HD uint32_t offset(int i) const { return off_[i]; }

  // kLinear: byte offset of row i's chunk at a tap `delta` elements from the row base.
  VAECONV_HD uint32_t linear_at(int i, uint32_t delta) const {
    return (row_base_[i] + delta) * uint32_t(kElemBytes);
  }

  // The math form at tap cursor `tap` (kh, kw, kt, c: TapWindowCursor), K index `k`: whether row
  // i's element exists, its time term from `frames` (x's frames unless given).
  template <class Cursor, class Frames = XFrames>
  VAECONV_HD bool valid(const ConvParams& p, int i, const Cursor& tap, int k,
                        const Frames& frames = Frames()) const {
    const int ih_u = ih0[i] + tap.kh, iw_u = iw0[i] + tap.kw;
    return row_ok[i] && k < p.k && unsigned(ih_u) < unsigned(h_up) &&
           unsigned(iw_u) < unsigned(w_up) && frames.at(p, it_rel0, t_rel_end, tap.kt).ok;
  }

  // Byte offset of row i's 16-byte chunk at tap cursor `tap` from the block's input view
  // (meaningful when valid; of x's view).
  template <class Cursor>
  VAECONV_HD uint32_t at(const ConvParams& p, int i, const Cursor& tap) const {
    const int ih = (ih0[i] + tap.kh) / Geo::kUp, iw = (iw0[i] + tap.kw) / Geo::kUp;
    // Unsigned products: rows past the frame get offsets too (never read) and must not overflow.
    const uint32_t e = uint32_t(it_rel0 + tap.kt) * uint32_t(p.in_st) +
                       uint32_t(ih) * uint32_t(p.in_sh) + uint32_t(iw) * uint32_t(p.in_sw) +
                       uint32_t(tap.c);
    return e * uint32_t(kElemBytes);
  }
};

// The per-thread cursor's K position: its chunk's tap and K index.
template <int kWindow>
struct LanePosition {
  TapWindowCursor<kWindow> tap;
  int k;
};

// The gather with one K cursor per thread (its chunk's own position): the element-wise kernel's
// (kFarSteps: its K tiles span many taps, carry_any; ChunkTaps reads the cursor), and the vector
// form the kernels ran before TileConvGather (kept as the reference form of the K walk).
template <class Geo, int kRows, int kRowStep, int BK, int kElemBytes, bool kFarSteps = false>
struct LaneConvGather : GatherRows<Geo, kRows, kRowStep, kElemBytes, LanePosition<Geo::kTaps>> {
  using Rows = GatherRows<Geo, kRows, kRowStep, kElemBytes, LanePosition<Geo::kTaps>>;
  using Rows::kChunkElems, Rows::kLinear;
  using Rows::it_rel0, Rows::t_rel_end, Rows::taps_in_frame, Rows::off_, Rows::ok_;
  using Rows::at, Rows::valid;
  using LanePosition<Geo::kTaps>::tap, LanePosition<Geo::kTaps>::k;

  VAECONV_HD void init(const ConvParams& p, const BlockCoord& b, int row0, int chunk) {
    k = chunk * kChunkElems;
    if constexpr (Geo::kTaps == 3) tap = TapWindowCursor<3>::of(k, p.cin);
    else tap = TapWindowCursor<Geo::kTaps>::of(k, p.cin, p.tap_h0, p.tap_w0);
    Rows::init_rows(p, b, row0, 0);
    refresh(p);
  }

  // Recomputes the cached forms after a tap change: valid() is the row's frame-tap bit and the
  // position's K and time bounds, shared by all rows; at() is the row base plus the tap's
  // offset (kLinear), or at() itself.
  VAECONV_HD void refresh(const ConvParams& p) {
    const bool k_ok = k < p.k && unsigned(it_rel0 + tap.kt) < unsigned(t_rel_end);
    const int bit = tap.kh * 3 + tap.kw;
    const uint32_t delta = uint32_t(tap.kt) * uint32_t(p.in_st) +
                           uint32_t(tap.kh) * uint32_t(p.in_sh) +
                           uint32_t(tap.kw) * uint32_t(p.in_sw) + uint32_t(tap.c);
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) {
      ok_[i] = k_ok && ((taps_in_frame[i] >> bit) & 1u);
      if constexpr (kLinear) off_[i] = Rows::linear_at(i, delta);
      else off_[i] = at(p, i);
    }
  }

  VAECONV_HD void advance(const ConvParams& p) {
    k += BK;
    tap.c += BK;
    if (tap.c < p.cin) {  // same tap: the elements are BK further along the channels
VAECONV_UNROLL
      for (int i = 0; i < kRows; ++i) off_[i] += uint32_t(BK * kElemBytes);
      return;
    }
    if constexpr (kFarSteps) tap.carry_any(p.cin);
    else tap.carry(p.cin);
    refresh(p);
  }

  // The math form at the thread's position (GatherRows).
  VAECONV_HD bool valid(const ConvParams& p, int i) const { return valid(p, i, tap, k); }
  VAECONV_HD uint32_t at(const ConvParams& p, int i) const { return at(p, i, tap); }
};

// The vector gather's tile cursor: channel c of spatial tap s = kh * 3 + kw (the bit of the rows'
// frame masks) of time tap kt, in the kWindow x kWindow window whose first tap is s0. Stepping it
// is a compare and two selects (no odometer of three counters), which keeps the block-uniform
// carry in a few scalar instructions on AMD.
template <int kWindow>
struct TileTap {
  int c = 0, s = 0, kt = 0;
  int s0 = 0;  // the window's first tap: kh0 * 3 + kw0 (0 for the whole grid)
  VAECONV_HD static TileTap first(int kh0, int kw0) {
    TileTap t;
    t.s0 = kh0 * 3 + kw0;
    t.s = t.s0;
    return t;
  }
  VAECONV_HD int kh() const { return (s * 11) >> 5; }  // s / 3 for 0 <= s < 9
  VAECONV_HD int kw() const { return s - 3 * kh(); }
  // The next tap in K order (kw fastest, then kh, then kt).
  VAECONV_HD void next_tap() {
    if constexpr (kWindow == 3) {
      // Integer arithmetic (no select of a bool): on AMD a block-uniform bool select takes a
      // 64-bit lane mask and an AND with exec, a carry into kt three scalar instructions more.
      const int last = (s + 8) >> 4;  // s == 8, for 0 <= s < 9
      kt += last;
      s = s + 1 - 9 * last;
    } else {  // the 2 x 2 window: s0, s0 + 1, s0 + 3, s0 + 4
      const bool last = s == s0 + 4;
      kt = last ? kt + 1 : kt;
      s = last ? s0 : s + (s == s0 + 1 ? 2 : 1);
    }
  }
};

// The tile cursor's K position: the tile cursor (block-uniform), the lane's channel offset
// from it, and the taps' time terms.
template <int kWindow, class Frames>
struct TilePosition {
  TileTap<kWindow> tile;
  int k0;       // the K tile's first column
  int lane_c;   // chunk * kChunkElems
  Frames frames;
  bool from_cache = false;  // Frames::kCache: the lane's current tap reads a cached frame
};

// The vector gather with a block-uniform K cursor (the file comment): `tile` and `k0` are the K
// tile's first column, `lane_c` the thread's chunk's fixed channel offset from it.
// kMaskRows: refresh() folds a missing row's offset by a 32-bit row mask, with no compare (what
// loads that read the folded offset and never the flag want: AMD's buffer loads); without it, it
// tests the row's bit into the flag and folds by a select of it (which sm_90a's cached-conv
// kernels, whose cp.async zero-fills by exists(), measured faster with). The kernel chooses
// (conv_kernel.hpp, kMaskRowsA; docs/perf-notes.md, W20).
template <class Geo, int kRows, int kRowStep, int BK, int kElemBytes, class Frames = XFrames,
          bool kMaskRows = true>
struct TileConvGather
    : GatherRows<Geo, kRows, kRowStep, kElemBytes, TilePosition<Geo::kTaps, Frames>> {
  using Rows = GatherRows<Geo, kRows, kRowStep, kElemBytes, TilePosition<Geo::kTaps, Frames>>;
  using Position = TilePosition<Geo::kTaps, Frames>;
  using Rows::kChunkElems, Rows::kLinear;
  using Rows::it_rel0, Rows::t_rel_end, Rows::taps_in_frame, Rows::off_, Rows::ok_;
  using Rows::at, Rows::valid;
  using Position::tile, Position::k0, Position::lane_c, Position::frames, Position::from_cache;
  // offset(i) of a row that does not exist is kFoldedOutOfRange or more (the same-tap steps add
  // less than Cin elements to it).
  static constexpr bool kOffsetFoldsRange = true;
  static_assert(kLinear || !Frames::kCache, "the cached frames are read by the causal conv");

  VAECONV_HD void init(const ConvParams& p, const BlockCoord& b, int row0, int chunk) {
    k0 = 0;
    lane_c = chunk * kChunkElems;
    if constexpr (Geo::kTaps == 3) tile = TileTap<3>::first(0, 0);
    else tile = TileTap<Geo::kTaps>::first(p.tap_h0, p.tap_w0);
    frames.init(p, b);
    Rows::init_rows(p, b, row0, lane_c);
    refresh(p);
  }

  // What a tap contributes to every lane in it (block-uniform): its offset from the row base (the
  // channel not included), its test of the rows' frame mask, and the view it reads. The test,
  // with kMaskRows: how far a left shift moves the tap's bit to bit 31 (0 when the tap is past K
  // or its frame does not exist: bit 31 is no tap's); without: the tap's bit (0 for no tap).
  // `first_k`: the tap's channel 0 in K.
  struct TapTerm {
    uint32_t delta, bit;
    bool from_cache;
  };
  VAECONV_HD TapTerm tap_term(const ConvParams& p, const TileTap<Geo::kTaps>& t,
                              int first_k) const {
    const typename Frames::Term f = frames.at(p, it_rel0, t_rel_end, t.kt);
    const bool ok = first_k < p.k && f.ok;  // K = taps * Cin: a tap exists iff its channel 0 does
    const uint32_t delta =
        f.off + uint32_t(t.kh()) * uint32_t(p.in_sh) + uint32_t(t.kw()) * uint32_t(p.in_sw);
    if constexpr (kMaskRows) return {delta, ok ? 31u - uint32_t(t.s) : 0u, f.from_cache};
    else return {delta, uint32_t(ok) << t.s, f.from_cache};
  }
  static_assert(Geo::kTaps * Geo::kTaps <= 31, "tap bits lie below bit 31");

  // Moves the tile cursor to the tap that holds the K tile's first column: its channel may have
  // run past Cin (one tap when Cin % BK == 0, several when BK > Cin). Block-uniform.
  VAECONV_HD void carry(const ConvParams& p) {
    while (tile.c >= p.cin) {
      tile.c -= p.cin;
      tile.next_tap();
    }
  }

  // Recomputes the cached forms at a tap change (the cursor in the tap that holds the K tile's
  // first column). The taps the K tile reaches, from the cursor's: tap j's channel 0 lies `edge`
  // = j * Cin - tile.c columns from the tile's first (edge <= 0 for the cursor's tap), and the
  // lanes whose chunk lies at or past it read it, channel lane_c - edge, unless a later tap takes
  // them (one tap when Cin % BK == 0). Each tap's terms are uniform and computed once, in one
  // loop (the cursor's tap is its first trip); a lane selects its own, then every row adds the
  // same offset and tests the same bit.
  VAECONV_HD void refresh(const ConvParams& p) {
    uint32_t delta = 0, bit = 0;
    bool cached = false;
    TileTap<Geo::kTaps> t = tile;
    int edge = -tile.c;
    do {
      const TapTerm n = tap_term(p, t, k0 + edge);
      const bool mine = lane_c >= edge;
      delta = mine ? n.delta - uint32_t(edge) : delta;
      bit = mine ? n.bit : bit;
      cached = mine ? n.from_cache : cached;
      t.next_tap();
      edge += p.cin;
    } while (edge < BK);
    if constexpr (Frames::kCache) from_cache = cached;
    else (void)cached;
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) {
      if constexpr (kMaskRows) {
        // The row's bit as a mask of 32 (to bit 31, then an arithmetic shift: no compare into a
        // condition register, whose use AMD must pad with wait states), then the offset or
        // kFoldedOutOfRange by it (one bitwise select).
        const uint32_t in = uint32_t(int32_t(taps_in_frame[i] << bit) >> 31);
        ok_[i] = in != 0u;
        off_[i] = (row_offset(p, i, delta) & in) | (kFoldedOutOfRange & ~in);
      } else {
        ok_[i] = (taps_in_frame[i] & bit) != 0u;
        off_[i] = ok_[i] ? row_offset(p, i, delta) : kFoldedOutOfRange;
      }
    }
  }

  // Row i's offset at the refreshed position: the row base plus the lane's tap delta (kLinear),
  // or the math form.
  VAECONV_HD uint32_t row_offset(const ConvParams& p, int i, uint32_t delta) const {
    if constexpr (kLinear) return Rows::linear_at(i, delta);
    else return at(p, i);
  }

  VAECONV_HD void advance(const ConvParams& p) {
    k0 += BK;
    tile.c += BK;
    // This K tile and the last one lie inside one tap: every chunk is BK channels further.
    if (tile.c + BK <= p.cin) {
VAECONV_UNROLL
      for (int i = 0; i < kRows; ++i) off_[i] += uint32_t(BK * kElemBytes);
      return;
    }
    carry(p);
    refresh(p);
  }

  // Moves the cursor n K tiles on at once: the position n advance() calls reach (a group of a
  // sliced-K block starts at its share of K: kernel/sliced_k.hpp). Block-uniform but for the
  // rows' refresh.
  VAECONV_HD void skip(const ConvParams& p, int n) {
    k0 += n * BK;
    tile.c += n * BK;
    carry(p);
    refresh(p);
  }

  // The lane's own K position (the math form below; the kernel never needs it whole).
  VAECONV_HD int k() const { return k0 + lane_c; }
  VAECONV_HD TapWindowCursor<Geo::kTaps> lane_tap(const ConvParams& p) const {
    if constexpr (Geo::kTaps == 3) return TapWindowCursor<3>::of(k(), p.cin);
    else return TapWindowCursor<Geo::kTaps>::of(k(), p.cin, p.tap_h0, p.tap_w0);
  }

  // The math form at the lane's position (GatherRows), its time term from `frames`; at() is of
  // x's view (the cached frames' offsets are the cached form's).
  VAECONV_HD bool valid(const ConvParams& p, int i) const {
    return valid(p, i, lane_tap(p), k(), frames);
  }
  VAECONV_HD uint32_t at(const ConvParams& p, int i) const { return at(p, i, lane_tap(p)); }
};

// The implicit GEMM's A gather: the tile-cursor vector gather, or (kFarSteps) the element-wise
// kernel's per-thread cursor, or (kLaneCursor: an atom that asks for it, LaneKCursor below) the
// per-thread cursor for the vector gather too.
// kMaskRows: the tile cursor's row test (TileConvGather).
template <class Geo, int kRows, int kRowStep, int BK, int kElemBytes, bool kFarSteps = false,
          bool kLaneCursor = false, bool kMaskRows = true>
using ConvGather = typename std::conditional<
    kFarSteps || kLaneCursor, LaneConvGather<Geo, kRows, kRowStep, BK, kElemBytes, kFarSteps>,
    TileConvGather<Geo, kRows, kRowStep, BK, kElemBytes, XFrames, kMaskRows>>::type;

// Whether an atom's kernels walk K with the per-thread cursor (Atom::kLaneKCursor; default: the
// block-uniform tile cursor).
template <class Atom, class = void>
struct LaneKCursor {
  static constexpr bool value = false;
};
template <class Atom>
struct LaneKCursor<Atom, decltype(void(Atom::kLaneKCursor))> {
  static constexpr bool value = Atom::kLaneKCursor;
};

// The element-wise gather, for Cin not a multiple of the chunk (the VAE's first layer, Cin = 3):
// a 16-byte chunk of K then straddles taps, so each of its elements is located separately. All
// rows of a thread read the same K positions, so the chunk's elements are located once per K tile
// (locate(), from the gather's tap cursor): per element a spatial tap s = kh * 3 + kw and an
// offset. A row contributes a 9-bit mask of its taps that lie inside the frame (row_mask()) and
// its pixel's offset: element e of row i exists when bit s of the mask is set, at
// at(i, e) (an element offset from the block's input view). The former per-element search
// (cursor, bounds and address from scratch for every row) made the layer instruction-bound
// (docs/perf-notes.md).
template <class Geo, int kChunkElems>
struct ChunkTaps {
  static constexpr int kAbsent = 9;  // a tap bit no row mask has: past K, or no such time slice
  int tap[kChunkElems];       // kh * 3 + kw, or kAbsent
  uint32_t rel[kChunkElems];  // it * in_st + c (+ kh * in_sh + kw * in_sw without upsampling)

  template <class Gather>
  VAECONV_HD void locate(const ConvParams& p, const Gather& g) {
    auto t = g.tap;
VAECONV_UNROLL
    for (int e = 0; e < kChunkElems; ++e) {
      const int it = g.it_rel0 + t.kt;
      const bool ok = g.k + e < p.k && unsigned(it) < unsigned(g.t_rel_end);
      tap[e] = ok ? t.kh * 3 + t.kw : kAbsent;
      rel[e] = uint32_t(it) * uint32_t(p.in_st) + uint32_t(t.c);
      if constexpr (Geo::kUp == 1)
        rel[e] += uint32_t(t.kh) * uint32_t(p.in_sh) + uint32_t(t.kw) * uint32_t(p.in_sw);
      // carry_any, like the K-tile advance, although one element crosses at most one tap: on
      // AMD the element-wise kernels came out 2-15 VGPRs lighter with it than with carry()
      // or a single-step form (the session-11 resource reports).
      ++t.c;
      t.carry_any(p.cin);
    }
  }
  // Bit kh * 3 + kw is set when row i's tap (kh, kw) lies inside the (upsampled) frame.
  template <class Gather>
  VAECONV_HD static uint32_t row_mask(const Gather& g, int i) {
    return g.taps_in_frame[i];
  }
  VAECONV_HD bool valid(uint32_t row_mask, int e) const { return (row_mask >> tap[e]) & 1u; }
  // Element offset of row i's element e from the block's input view (meaningful when valid).
  template <class Gather>
  VAECONV_HD uint32_t at(const ConvParams& p, const Gather& g, int i, int e) const {
    if constexpr (Geo::kUp == 1) {
      return rel[e] + uint32_t(g.ih0[i]) * uint32_t(p.in_sh) +
             uint32_t(g.iw0[i]) * uint32_t(p.in_sw);
    } else {
      return rel[e] + uint32_t((g.ih0[i] + tap[e] / 3) / Geo::kUp) * uint32_t(p.in_sh) +
             uint32_t((g.iw0[i] + tap[e] % 3) / Geo::kUp) * uint32_t(p.in_sw);
    }
  }
};

// The B operand: packed weights [Cout][k_pad], row n, 16-byte chunk column at k.
template <int kRows, int kRowStep, int BK, int kElemBytes>
struct WeightGather {
  int n[kRows];
  int k;
  VAECONV_HD void init(const BlockCoord& b, int row0, int chunk) {
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) n[i] = b.n0 + row0 + i * kRowStep;
    k = chunk * (16 / kElemBytes);
  }
  VAECONV_HD void advance() { k += BK; }
  VAECONV_HD void skip(int n) { k += n * BK; }  // n advance() calls at once
  VAECONV_HD bool valid(const ConvParams& p, int i) const { return n[i] < p.cout; }
  VAECONV_HD uint32_t at(const ConvParams& p, int i) const {
    return (uint32_t(n[i]) * uint32_t(p.k_pad) + uint32_t(k)) * uint32_t(kElemBytes);
  }
};

// The weight gather that also keeps each row's offset (the implicit GEMM on a target whose staged
// loads read a folded offset, BlockGemm's FoldsRange: AMD): offset(i), folded
// (kOffsetFoldsRange) for a row past Cout or past the block's `rows` (a tile's B rows past BN).
// A row steps by its own step_: BK elements, or 0 for a missing row, which stays at
// kFoldedOutOfRange. (The step is a register, not a constant: a constant step lets the compiler
// carry a tile's offset as the last one's plus an immediate, which the buffer loads must not
// have: cmake/asm_checks.cmake, buffer-offset.)
template <int kRows, int kRowStep, int BK, int kElemBytes>
struct FoldedWeightGather : WeightGather<kRows, kRowStep, BK, kElemBytes> {
  using Base = WeightGather<kRows, kRowStep, BK, kElemBytes>;
  static constexpr bool kOffsetFoldsRange = true;
  uint32_t off_[kRows], step_[kRows];
  VAECONV_HD void init(const ConvParams& p, const BlockCoord& b, int row0, int chunk, int rows) {
    Base::init(b, row0, chunk);
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) {
      const bool ok = row0 + i * kRowStep < rows && Base::valid(p, i);
      off_[i] = ok ? Base::at(p, i) : kFoldedOutOfRange;
      step_[i] = ok ? uint32_t(BK * kElemBytes) : 0u;
    }
  }
  VAECONV_HD void advance() {
    Base::advance();
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) off_[i] += step_[i];
  }
  VAECONV_HD void skip(int n) {  // n advance() calls at once
    Base::skip(n);
VAECONV_UNROLL
    for (int i = 0; i < kRows; ++i) off_[i] += step_[i] * uint32_t(n);
  }
  VAECONV_HD uint32_t offset(int i) const { return off_[i]; }
};

}  // namespace vaeconv::kernel
