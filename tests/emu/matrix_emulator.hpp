// tests/emu/matrix_emulator.hpp — host emulator of the matrix instructions vaeconv's atoms use.
//
// Each instruction is emulated as the HARDWARE documentation defines it, written independently
// of include/vaeconv/arch/fragment_layouts.hpp (deliberately not included here) and of the
// library's numerics headers: the point is that tests/host/test_atoms_emulated.cpp checks the
// library's layout helpers against a separate statement of the documents.
//
// Model
//   * A wave's (AMD, 64 lanes) or warp's (NVIDIA, 32 lanes) operand registers are a Frag: one
//     std::array of N elements per lane, element order = register order, low bits first (element
//     0 is the lowest 16 bits of the first VGPR for bf16, the lowest byte for fp8; for PTX it is
//     a0/b0/c0, the low half of the first .b32 for packed types).
//   * bf16 operands are floats that must hold exactly-representable bf16 values (checked).
//   * fp8 operands are raw bytes; each instruction decodes them with the format the hardware
//     reads (FNUZ e4m3 on gfx942, OCP e4m3fn on gfx950 f8f6f4 and NVIDIA).
//   * Every instruction computes D = A*B + C: the layout maps below scatter the lanes' elements
//     into the full A (M x K), B (K x N) and C (M x N) matrices (throwing if a layout does not
//     cover the tile exactly once — an emulator self-check), each D element is C plus its K
//     products summed EXACTLY (ExactSum: a fixed-point accumulator wide enough for every bf16
//     and fp8 product) and rounded once to fp32 (round to nearest even), and D is gathered back
//     with C's layout. Exact summation is a model of the result, not of the hardware's internal
//     accumulation order: it makes D independent of the order of K, which is what the K-order
//     tests rely on (any difference there is a mispaired A/B element, never rounding).
//   * KOrder relabels the instruction's K: the element the documented layout puts at k is used at
//     k' = order.a[k] (A) and order.b[k] (B). A permutation shared by A and B is the question
//     "which K order does the hardware really use" (for f8f6f4 AMD's own sources disagree,
//     cdna.md); the library must get the same D under every such order.
//
// Sources (lane l; A is M x K, B is K x N, C/D is M x N):
//   [CDNA]  /work/shared/notes/cdna.md, section "Operand layouts" (collected from AMD's matrix
//           instruction calculator, the LLVM AMDGPU docs/tests and CDNA3/CDNA4 material), and
//           its section "FP8 formats".
//   [PTX]   NVIDIA PTX ISA, section 9.7.14.5 "Matrix Fragments for mma.m16n8k16 with floating
//           point type" (.bf16), section 9.7.14.5 "Matrix Fragments for mma.m16n8k32" (.e4m3
//           variant), and section 9.7.14.5.15 / "Warp-level matrix load instruction: ldmatrix".
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace vaeconv::emu {

// ------------------------------------------------------------------------------------------------
// Number formats (local, from the format definitions; no dependency on the library's numerics)
// ------------------------------------------------------------------------------------------------

inline float bf16_bits_to_float(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// True when f is exactly a bf16 value (its low 16 mantissa bits are zero).
inline bool is_bf16_exact(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return (u & 0xFFFFu) == 0;
}

inline std::uint16_t bf16_bits_exact(float f) {
  if (!is_bf16_exact(f)) throw std::invalid_argument("emu: value is not exactly representable in bf16");
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return std::uint16_t(u >> 16);
}

// OCP FP8 E4M3 ("e4m3fn"): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities;
// S.1111.111 (0x7F, 0xFF) is NaN; 0x80 is -0; max normal 0x7E = 1.75 * 2^8 = 448.
// Subnormals (exponent field 0): m/8 * 2^(1-7).
inline double decode_e4m3fn(std::uint8_t b) {
  const int s = b >> 7, e = (b >> 3) & 0xF, m = b & 0x7;
  if (e == 0xF && m == 0x7) return std::numeric_limits<double>::quiet_NaN();
  const double mag = (e == 0) ? std::ldexp(double(m) / 8.0, 1 - 7) : std::ldexp(1.0 + double(m) / 8.0, e - 7);
  return s ? -mag : mag;
}

// FNUZ FP8 E4M3 (what gfx942 MFMAs read, [CDNA] "FP8 formats"): bias 8, no infinities, no -0:
// 0x80 is the (only) NaN; every other code is finite; max 0x7F = 1.875 * 2^7 = 240.
// Subnormals: m/8 * 2^(1-8).
inline double decode_e4m3fnuz(std::uint8_t b) {
  if (b == 0x80) return std::numeric_limits<double>::quiet_NaN();
  const int s = b >> 7, e = (b >> 3) & 0xF, m = b & 0x7;
  const double mag = (e == 0) ? std::ldexp(double(m) / 8.0, 1 - 8) : std::ldexp(1.0 + double(m) / 8.0, e - 8);
  return s ? -mag : mag;
}

// ------------------------------------------------------------------------------------------------
// Register model
// ------------------------------------------------------------------------------------------------

template <typename T, int N>
struct Frag {
  static constexpr int kElems = N;
  std::vector<std::array<T, N>> lanes;
  Frag() = default;
  explicit Frag(int num_lanes) : lanes(std::size_t(num_lanes)) {
    for (auto& a : lanes) a.fill(T{});
  }
};
template <int N> using FragF = Frag<float, N>;          // bf16 operands (as float) or f32 accumulators
template <int N> using Frag8 = Frag<std::uint8_t, N>;   // fp8 operand bytes
template <int N> using Frag32 = Frag<std::uint32_t, N>; // raw .b32 registers (ldmatrix destinations)

struct RC {
  int row, col;
};

// ------------------------------------------------------------------------------------------------
// Hardware layouts. a(l, e) -> (m, k) of A; b(l, e) -> (k, n) of B; c(l, r) -> (m, n) of C and D.
// ------------------------------------------------------------------------------------------------
namespace hw {

// [CDNA] gfx942 32x32x8 bf16: "C register r=0..15: row 8*(r/4) + 4*(l/32) + r%4, column l%32";
// [CDNA] "gfx950 32x32x16 / 16x16x32 bf16 ... C layouts identical to gfx942's"; the fp8 ones use
// "the same patterns".
inline RC c_32x32(int l, int r) { return {8 * (r / 4) + 4 * (l / 32) + r % 4, l % 32}; }
// [CDNA] gfx942 16x16x16 bf16: "C register r=0..3: row 4*(l/16)+r, column l%16".
inline RC c_16x16(int l, int r) { return {4 * (l / 16) + r, l % 16}; }

// gfx942 v_mfma_f32_32x32x8_bf16 — [CDNA]: "A: lane l holds A[l%32][4*(l/32)+e], e=0..3.
// B: B[4*(l/32)+e][l%32]."
struct Mfma32x32x8Bf16 {
  static constexpr int kM = 32, kN = 32, kK = 8, kLanes = 64, kAElems = 4, kBElems = 4, kCElems = 16;
  static RC a(int l, int e) { return {l % 32, 4 * (l / 32) + e}; }
  static RC b(int l, int e) { return {4 * (l / 32) + e, l % 32}; }
  static RC c(int l, int r) { return c_32x32(l, r); }
};

// gfx942 v_mfma_f32_16x16x16_bf16 — [CDNA]: "A[l%16][4*(l/16)+e]"; B mirrors A with n for m
// (the same mirroring [CDNA] states for 32x32x8: B[k-pattern][l%16]).
struct Mfma16x16x16Bf16 {
  static constexpr int kM = 16, kN = 16, kK = 16, kLanes = 64, kAElems = 4, kBElems = 4, kCElems = 4;
  static RC a(int l, int e) { return {l % 16, 4 * (l / 16) + e}; }
  static RC b(int l, int e) { return {4 * (l / 16) + e, l % 16}; }
  static RC c(int l, int r) { return c_16x16(l, r); }
};

// gfx942 v_mfma_f32_32x32x16_fp8_fp8 — [CDNA]: "the same patterns with 8 consecutive K per lane":
// A[l%32][8*(l/32)+e], B[8*(l/32)+e][l%32], e = 0..7 (bytes, FNUZ e4m3).
struct Mfma32x32x16Fp8 {
  static constexpr int kM = 32, kN = 32, kK = 16, kLanes = 64, kAElems = 8, kBElems = 8, kCElems = 16;
  static RC a(int l, int e) { return {l % 32, 8 * (l / 32) + e}; }
  static RC b(int l, int e) { return {8 * (l / 32) + e, l % 32}; }
  static RC c(int l, int r) { return c_32x32(l, r); }
};

// gfx942 v_mfma_f32_16x16x32_fp8_fp8 — [CDNA]: A[l%16][8*(l/16)+e], B[8*(l/16)+e][l%16].
struct Mfma16x16x32Fp8 {
  static constexpr int kM = 16, kN = 16, kK = 32, kLanes = 64, kAElems = 8, kBElems = 8, kCElems = 4;
  static RC a(int l, int e) { return {l % 16, 8 * (l / 16) + e}; }
  static RC b(int l, int e) { return {8 * (l / 16) + e, l % 16}; }
  static RC c(int l, int r) { return c_16x16(l, r); }
};

// gfx950 v_mfma_f32_32x32x16_bf16 — [CDNA]: "8 consecutive K per lane: A[l%32][8*(l/32)+e],
// e=0..7; C layouts identical to gfx942's"; B mirrored.
struct Mfma32x32x16Bf16 {
  static constexpr int kM = 32, kN = 32, kK = 16, kLanes = 64, kAElems = 8, kBElems = 8, kCElems = 16;
  static RC a(int l, int e) { return {l % 32, 8 * (l / 32) + e}; }
  static RC b(int l, int e) { return {8 * (l / 32) + e, l % 32}; }
  static RC c(int l, int r) { return c_32x32(l, r); }
};

// gfx950 v_mfma_f32_16x16x32_bf16 — [CDNA]: A[l%16][8*(l/16)+e], e=0..7; B mirrored.
struct Mfma16x16x32Bf16 {
  static constexpr int kM = 16, kN = 16, kK = 32, kLanes = 64, kAElems = 8, kBElems = 8, kCElems = 4;
  static RC a(int l, int e) { return {l % 16, 8 * (l / 16) + e}; }
  static RC b(int l, int e) { return {8 * (l / 16) + e, l % 16}; }
  static RC c(int l, int r) { return c_16x16(l, r); }
};

// gfx950 v_mfma_scale_f32_32x32x64_f8f6f4 with fp8 (E4M3) operands — [CDNA]: "lane l holds
// A[l%32][16*(l/32) + 32*s + e], s in {0,1}, e=0..15 (two 16-byte K chunks, 32 apart); B mirrored.
// From AMD's blog example; unverified on hardware." Element index i = 16*s + e (bytes 0..15 of the
// 8-VGPR operand are s = 0). UNVERIFIED (as the note says).
struct Mfma32x32x64F8f6f4 {
  static constexpr int kM = 32, kN = 32, kK = 64, kLanes = 64, kAElems = 32, kBElems = 32, kCElems = 16;
  static RC a(int l, int i) { return {l % 32, 16 * (l / 32) + 32 * (i / 16) + i % 16}; }
  static RC b(int l, int i) { return {16 * (l / 32) + 32 * (i / 16) + i % 16, l % 32}; }
  static RC c(int l, int r) { return c_32x32(l, r); }
};

// gfx950 v_mfma_scale_f32_16x16x128_f8f6f4 is not emulated: no source available here documents
// its lane layout, and the library does not use it (arch/cdna.hpp: AtomFp8Narrow = AtomFp8).

// NVIDIA mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 — [PTX] 9.7.14.5.8, with
// groupID = laneid >> 2, threadID_in_group = laneid % 4:
//   A a0..a7:  row = groupID for 0<=i<2 || 4<=i<6, groupID+8 otherwise;
//              col = tig*2 + (i & 1) for i < 4, + 8 for i >= 4.
//   B b0..b3:  row = tig*2 + (i & 1) for i < 2, + 8 for i >= 2; col = groupID.
//   C c0..c3:  row = groupID for i < 2, groupID+8 for i >= 2; col = tig*2 + (i & 1).
struct MmaM16N8K16Bf16 {
  static constexpr int kM = 16, kN = 8, kK = 16, kLanes = 32, kAElems = 8, kBElems = 4, kCElems = 4;
  static RC a(int l, int i) {
    const int g = l >> 2, t = l % 4;
    return {((i < 2) || (i >= 4 && i < 6)) ? g : g + 8, t * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
  }
  static RC b(int l, int i) {
    const int g = l >> 2, t = l % 4;
    return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
  }
  static RC c(int l, int i) {
    const int g = l >> 2, t = l % 4;
    return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
  }
};

// NVIDIA mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 — [PTX] 9.7.14.5 "Matrix Fragments
// for mma.m16n8k32", .e4m3 variant (four .b32 registers of 4 e4m3 for A, two for B):
//   A a0..a15: row = groupID for 0<=i<4 || 8<=i<12, groupID+8 otherwise;
//              col = tig*4 + (i & 3) for i < 8, + 16 for i >= 8.
//   B b0..b7:  row = tig*4 + (i & 3) for i < 4, + 16 for i >= 4; col = groupID.
//   C c0..c3:  as m16n8k16 (row groupID / groupID+8, col tig*2 + (i & 1)).
struct MmaM16N8K32E4m3 {
  static constexpr int kM = 16, kN = 8, kK = 32, kLanes = 32, kAElems = 16, kBElems = 8, kCElems = 4;
  static RC a(int l, int i) {
    const int g = l >> 2, t = l % 4;
    return {((i < 4) || (i >= 8 && i < 12)) ? g : g + 8, t * 4 + (i & 3) + (i >= 8 ? 16 : 0)};
  }
  static RC b(int l, int i) {
    const int g = l >> 2, t = l % 4;
    return {t * 4 + (i & 3) + (i >= 4 ? 16 : 0), g};
  }
  static RC c(int l, int i) { return MmaM16N8K16Bf16::c(l, i); }
};

}  // namespace hw

// ------------------------------------------------------------------------------------------------
// Exact summation and K orders
// ------------------------------------------------------------------------------------------------

// The exact sum of doubles that are integer multiples of 2^kLsbExp below 2^(kBits + kLsbExp - 1)
// in magnitude (every bf16 x bf16 or fp8 x fp8 product and every fp32 accumulator is), rounded
// once to fp32. Infinities and NaNs are summed apart (IEEE: they decide the result).
class ExactSum {
 public:
  void add(double v) {
    if (!std::isfinite(v)) {
      special_ = true;
      special_sum_ += v;
      return;
    }
    if (v == 0.0) return;
    int e;
    const double m = std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
    const std::uint64_t sig = std::uint64_t(std::ldexp(m, 53));
    const int shift = e - 53 - kLsbExp;
    if (shift < 0 || shift + 53 >= kBits - 1)
      throw std::range_error("emu: ExactSum term outside the accumulator's range");
    add_shifted(sig, shift, v < 0);
  }
  // Round to nearest even; an exact zero is +0 (as an accumulator that starts at +0 gives).
  float to_float() const {
    if (special_) return float(special_sum_);
    std::array<std::uint64_t, kLimbs> mag = limb_;
    const bool negative = (mag[kLimbs - 1] >> 63) != 0;
    if (negative) negate(mag);
    int top = -1;
    for (int i = kBits - 1; i >= 0; --i)
      if (bit(mag, i)) {
        top = i;
        break;
      }
    if (top < 0) return 0.0f;
    // Keep 24 significant bits, or down to fp32's smallest subnormal 2^-149.
    const int lowest = std::max(top - 23, -149 - kLsbExp);
    std::uint64_t kept = 0;
    for (int i = top; i >= lowest; --i) kept = (kept << 1) | std::uint64_t(bit(mag, i));
    const bool guard = lowest > 0 && bit(mag, lowest - 1);
    bool sticky = false;
    for (int i = lowest - 2; i >= 0 && !sticky; --i) sticky = bit(mag, i);
    if (guard && (sticky || (kept & 1u))) ++kept;
    const float f = float(std::ldexp(double(kept), lowest + kLsbExp));  // exact, or +-inf
    return negative ? -f : f;
  }

 private:
  static constexpr int kLsbExp = -320;  // below bf16 x bf16's smallest product, 2^-266
  static constexpr int kLimbs = 11;     // 704 bits, two's complement
  static constexpr int kBits = 64 * kLimbs;
  std::array<std::uint64_t, kLimbs> limb_{};
  bool special_ = false;
  double special_sum_ = 0.0;

  static bool bit(const std::array<std::uint64_t, kLimbs>& x, int i) {
    return ((x[std::size_t(i / 64)] >> (i % 64)) & 1u) != 0;
  }
  static void negate(std::array<std::uint64_t, kLimbs>& x) {
    std::uint64_t carry = 1;
    for (auto& w : x) {
      w = ~w + carry;
      carry = (carry && w == 0) ? 1 : 0;
    }
  }
  void add_shifted(std::uint64_t sig, int shift, bool subtract) {
    std::array<std::uint64_t, kLimbs> t{};
    const int i = shift / 64, b = shift % 64;
    t[std::size_t(i)] = sig << b;
    if (b != 0 && i + 1 < kLimbs) t[std::size_t(i + 1)] = sig >> (64 - b);
    if (subtract) negate(t);
    std::uint64_t carry = 0;
    for (int k = 0; k < kLimbs; ++k) {
      const std::uint64_t x = limb_[std::size_t(k)], y = t[std::size_t(k)];
      const std::uint64_t s1 = x + y, s2 = s1 + carry;
      carry = (s1 < x || s2 < s1) ? 1 : 0;
      limb_[std::size_t(k)] = s2;
    }
  }
};

// A relabelling of an instruction's K for A and for B (empty: the documented order).
struct KOrder {
  std::vector<int> a, b;
  static KOrder same(const std::vector<int>& p) { return {p, p}; }
  int ka(int k) const { return a.empty() ? k : a[std::size_t(k)]; }
  int kb(int k) const { return b.empty() ? k : b[std::size_t(k)]; }
};

// K orders the tests apply: the identity, two 16-byte-style stripes, and a random permutation.
inline std::vector<int> identity_order(int k) {
  std::vector<int> p(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) p[std::size_t(i)] = i;
  return p;
}
// A layout of `groups` lane groups holding `per` consecutive K each (documented k = per * g + e)
// re-read as two stripes per group: the first half of a group's elements at per/2 * g + e, the
// second half one half-K further (AITER's f8f6f4 reading, with per = 32, groups = 2).
inline std::vector<int> stripe_order(int groups, int per) {
  std::vector<int> p(static_cast<std::size_t>(groups * per));
  const int half = per / 2;
  for (int g = 0; g < groups; ++g)
    for (int e = 0; e < per; ++e) p[std::size_t(per * g + e)] = half * g + half * groups * (e / half) + e % half;
  return p;
}
// The inverse of a permutation (stripe_order's inverse maps AITER's reading to CK's contiguous one).
inline std::vector<int> inverse_order(const std::vector<int>& p) {
  std::vector<int> q(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) q[std::size_t(p[i])] = int(i);
  return q;
}
inline std::vector<int> random_order(int k, unsigned seed) {
  std::vector<int> p = identity_order(k);
  std::uint64_t x = 0x9E3779B97F4A7C15ull ^ seed;  // splitmix64: no <random> dependence here
  for (int i = k - 1; i > 0; --i) {
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::swap(p[std::size_t(i)], p[std::size_t(z % std::uint64_t(i + 1))]);
  }
  return p;
}

// ------------------------------------------------------------------------------------------------
// Generic executor: D = A*B + C under layout S (its K relabelled by order).
// ------------------------------------------------------------------------------------------------
namespace detail {

template <class S, class F>
void scatter_check(const char* what, int rows, int cols, int elems, F&& map, std::vector<int>& cover) {
  cover.assign(std::size_t(rows) * std::size_t(cols), 0);
  for (int l = 0; l < S::kLanes; ++l)
    for (int e = 0; e < elems; ++e) {
      const RC p = map(l, e);
      if (p.row < 0 || p.row >= rows || p.col < 0 || p.col >= cols)
        throw std::logic_error(std::string("emu: layout of ") + what + " out of range");
      ++cover[std::size_t(p.row) * std::size_t(cols) + std::size_t(p.col)];
    }
  for (int c : cover)
    if (c != 1) throw std::logic_error(std::string("emu: layout of ") + what + " is not a bijection");
}

template <class S, class TA, class Dec>
FragF<S::kCElems> execute(const Frag<TA, S::kAElems>& a, const Frag<TA, S::kBElems>& b,
                          const FragF<S::kCElems>& c, Dec&& decode, const KOrder& order = {}) {
  if (int(a.lanes.size()) != S::kLanes || int(b.lanes.size()) != S::kLanes || int(c.lanes.size()) != S::kLanes)
    throw std::invalid_argument("emu: fragment lane count does not match the instruction");
  constexpr int M = S::kM, N = S::kN, K = S::kK;
  if ((!order.a.empty() && int(order.a.size()) != K) || (!order.b.empty() && int(order.b.size()) != K))
    throw std::invalid_argument("emu: K order of the wrong length");
  auto amap = [&](int l, int e) { const RC p = S::a(l, e); return RC{p.row, order.ka(p.col)}; };
  auto bmap = [&](int l, int e) { const RC p = S::b(l, e); return RC{order.kb(p.row), p.col}; };
  std::vector<int> cover;
  scatter_check<S>("A", M, K, S::kAElems, amap, cover);  // also: the order is a permutation
  scatter_check<S>("B", K, N, S::kBElems, bmap, cover);
  scatter_check<S>("C", M, N, S::kCElems, [](int l, int e) { return S::c(l, e); }, cover);

  std::vector<double> A(std::size_t(M) * K), B(std::size_t(K) * N), C(std::size_t(M) * N);
  for (int l = 0; l < S::kLanes; ++l) {
    for (int e = 0; e < S::kAElems; ++e) {
      const RC p = amap(l, e);
      A[std::size_t(p.row) * K + std::size_t(p.col)] = decode(a.lanes[std::size_t(l)][std::size_t(e)]);
    }
    for (int e = 0; e < S::kBElems; ++e) {
      const RC p = bmap(l, e);
      B[std::size_t(p.row) * N + std::size_t(p.col)] = decode(b.lanes[std::size_t(l)][std::size_t(e)]);
    }
    for (int r = 0; r < S::kCElems; ++r) {
      const RC p = S::c(l, r);
      C[std::size_t(p.row) * N + std::size_t(p.col)] = double(c.lanes[std::size_t(l)][std::size_t(r)]);
    }
  }
  FragF<S::kCElems> d(S::kLanes);
  for (int l = 0; l < S::kLanes; ++l)
    for (int r = 0; r < S::kCElems; ++r) {
      const RC p = S::c(l, r);
      ExactSum acc;  // products of two bf16 or two fp8 are exact in double
      for (int k = 0; k < K; ++k) acc.add(A[std::size_t(p.row) * K + std::size_t(k)] * B[std::size_t(k) * N + std::size_t(p.col)]);
      acc.add(C[std::size_t(p.row) * N + std::size_t(p.col)]);
      d.lanes[std::size_t(l)][std::size_t(r)] = acc.to_float();
    }
  return d;
}

inline double decode_bf16_operand(float v) {
  if (!is_bf16_exact(v) && !std::isnan(v))
    throw std::invalid_argument("emu: bf16 operand holds a value not exactly representable in bf16");
  return double(v);
}

}  // namespace detail

// ------------------------------------------------------------------------------------------------
// AMD gfx942 (CDNA3)
// ------------------------------------------------------------------------------------------------
inline FragF<16> mfma_f32_32x32x8_bf16(const FragF<4>& a, const FragF<4>& b, const FragF<16>& c, const KOrder& order = {}) {
  return detail::execute<hw::Mfma32x32x8Bf16>(a, b, c, detail::decode_bf16_operand, order);
}
inline FragF<4> mfma_f32_16x16x16_bf16(const FragF<4>& a, const FragF<4>& b, const FragF<4>& c, const KOrder& order = {}) {
  return detail::execute<hw::Mfma16x16x16Bf16>(a, b, c, detail::decode_bf16_operand, order);
}
// fp8 bytes are read as FNUZ e4m3 ([CDNA] "gfx942 MFMAs read FNUZ e4m3").
inline FragF<16> mfma_f32_32x32x16_fp8_fp8(const Frag8<8>& a, const Frag8<8>& b, const FragF<16>& c, const KOrder& order = {}) {
  return detail::execute<hw::Mfma32x32x16Fp8>(a, b, c, decode_e4m3fnuz, order);
}
inline FragF<4> mfma_f32_16x16x32_fp8_fp8(const Frag8<8>& a, const Frag8<8>& b, const FragF<4>& c, const KOrder& order = {}) {
  return detail::execute<hw::Mfma16x16x32Fp8>(a, b, c, decode_e4m3fnuz, order);
}

// ------------------------------------------------------------------------------------------------
// AMD gfx950 (CDNA4)
// ------------------------------------------------------------------------------------------------
inline FragF<16> mfma_f32_32x32x16_bf16(const FragF<8>& a, const FragF<8>& b, const FragF<16>& c, const KOrder& order = {}) {
  return detail::execute<hw::Mfma32x32x16Bf16>(a, b, c, detail::decode_bf16_operand, order);
}
inline FragF<4> mfma_f32_16x16x32_bf16(const FragF<8>& a, const FragF<8>& b, const FragF<4>& c, const KOrder& order = {}) {
  return detail::execute<hw::Mfma16x16x32Bf16>(a, b, c, detail::decode_bf16_operand, order);
}
// v_mfma_scale_f32_*_f8f6f4 with atype = btype = 0 (E4M3, OCP e4m3fn per [CDNA] "FP8 formats")
// and unit scales (E8M0 127 = x1). Only this configuration is emulated.
inline FragF<16> mfma_scale_f32_32x32x64_f8f6f4_e4m3(const Frag8<32>& a, const Frag8<32>& b, const FragF<16>& c, const KOrder& order = {}) {
  return detail::execute<hw::Mfma32x32x64F8f6f4>(a, b, c, decode_e4m3fn, order);
}

// ------------------------------------------------------------------------------------------------
// NVIDIA (warp32)
// ------------------------------------------------------------------------------------------------
inline FragF<4> mma_m16n8k16_bf16_f32(const FragF<8>& a, const FragF<4>& b, const FragF<4>& c, const KOrder& order = {}) {
  return detail::execute<hw::MmaM16N8K16Bf16>(a, b, c, detail::decode_bf16_operand, order);
}
inline FragF<4> mma_m16n8k32_e4m3_f32(const Frag8<16>& a, const Frag8<8>& b, const FragF<4>& c, const KOrder& order = {}) {
  return detail::execute<hw::MmaM16N8K32E4m3>(a, b, c, decode_e4m3fn, order);
}

// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}.shared.b16 (non-transposed) — [PTX] "ldmatrix":
//   * each 8x8 matrix is 8 rows of 8 b16 (16 bytes per row, row address 16-byte aligned);
//   * threads 0-7 give the row addresses of matrix 0, 8-15 of matrix 1, 16-23 of matrix 2,
//     24-31 of matrix 3; for .x1 only threads 0-7 and for .x2 only 0-15 are used;
//   * destination register j of thread l receives, from matrix j, row l/4 (groupID), elements
//     2*(l%4) and 2*(l%4)+1 (the lower-numbered element in the low 16 bits).
// smem is the byte-addressed shared memory; row_addr[l] is lane l's byte address into it.
template <int X>
Frag32<X> ldmatrix_b16(const std::vector<std::uint8_t>& smem, const std::array<std::uint32_t, 32>& row_addr) {
  static_assert(X == 1 || X == 2 || X == 4, "ldmatrix: .x1, .x2 or .x4");
  for (int t = 0; t < 8 * X; ++t) {
    const std::uint32_t ad = row_addr[std::size_t(t)];
    if (ad % 16 != 0) throw std::invalid_argument("emu: ldmatrix row address not 16-byte aligned");
    if (std::size_t(ad) + 16 > smem.size()) throw std::out_of_range("emu: ldmatrix row address out of range");
  }
  Frag32<X> d(32);
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < X; ++j) {
      const std::uint32_t row = row_addr[std::size_t(8 * j + l / 4)];
      const std::size_t at = std::size_t(row) + std::size_t(4 * (l % 4));  // elements 2*(l%4), +1
      const std::uint32_t lo = std::uint32_t(smem[at]) | (std::uint32_t(smem[at + 1]) << 8);
      const std::uint32_t hi = std::uint32_t(smem[at + 2]) | (std::uint32_t(smem[at + 3]) << 8);
      d.lanes[std::size_t(l)][std::size_t(j)] = lo | (hi << 16);
    }
  return d;
}
inline Frag32<1> ldmatrix_x1(const std::vector<std::uint8_t>& s, const std::array<std::uint32_t, 32>& a) { return ldmatrix_b16<1>(s, a); }
inline Frag32<2> ldmatrix_x2(const std::vector<std::uint8_t>& s, const std::array<std::uint32_t, 32>& a) { return ldmatrix_b16<2>(s, a); }
inline Frag32<4> ldmatrix_x4(const std::vector<std::uint8_t>& s, const std::array<std::uint32_t, 32>& a) { return ldmatrix_b16<4>(s, a); }

// Splits .b32 registers into their b16 elements in PTX order (element 2j = low half of reg j).
template <int X>
Frag<std::uint16_t, 2 * X> split_b16(const Frag32<X>& r) {
  Frag<std::uint16_t, 2 * X> out(int(r.lanes.size()));
  for (std::size_t l = 0; l < r.lanes.size(); ++l)
    for (int j = 0; j < X; ++j) {
      out.lanes[l][std::size_t(2 * j)] = std::uint16_t(r.lanes[l][std::size_t(j)] & 0xFFFFu);
      out.lanes[l][std::size_t(2 * j + 1)] = std::uint16_t(r.lanes[l][std::size_t(j)] >> 16);
    }
  return out;
}

// bf16 bit patterns -> float operands.
template <int N>
FragF<N> bf16_frag_to_float(const Frag<std::uint16_t, N>& f) {
  FragF<N> out(int(f.lanes.size()));
  for (std::size_t l = 0; l < f.lanes.size(); ++l)
    for (int e = 0; e < N; ++e) out.lanes[l][std::size_t(e)] = bf16_bits_to_float(f.lanes[l][std::size_t(e)]);
  return out;
}

}  // namespace vaeconv::emu
