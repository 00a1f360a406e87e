// tests/host/test_wgmma_emulated.cpp — the warpgroup atom (arch/wgmma_layout.hpp) against an
// emulator of wgmma.mma_async written from the PTX ISA (tests/emu/wgmma_emulator.hpp).
//
// A pipeline stage is laid out exactly as the kernels lay it out: A (BM rows) then B (N rows) in
// vaeconv's SwizzledTile, at a 1 KiB-aligned shared address. Each warpgroup's instructions get
// the descriptors the library builds (WgmmaDescriptor::make at Tile::offset(row block, 2 * k
// step), the expression of BlockGemm::mma_stage_from_lds), the emulator decodes them from the
// spec, and every accumulator register must equal the reference product at the library's
// (c_row, c_col). Negative controls show that a wrong swizzle mode, a misaligned stage or a wrong
// K-step advance fail.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "emu/matrix_emulator.hpp"
#include "emu/wgmma_emulator.hpp"
#include "vaeconv/arch/wgmma_layout.hpp"
#include "vaeconv/kernel/smem_layout.hpp"

namespace {

using vaeconv::kernel::SwizzledTile;
using vaeconv::layout::WgmmaDescriptor;
namespace emu = vaeconv::emu;

double decode_bf16(const std::uint8_t* p) {
  return emu::bf16_bits_to_float(std::uint16_t(p[0] | (p[1] << 8)));
}
double decode_e4m3(const std::uint8_t* p) { return emu::decode_e4m3fn(p[0]); }

TEST(WgmmaDescriptor, FieldsAreThePtxEncoding) {
  // 64-byte rows at 0x1A00: start 0x1A00 >> 4, LBO 16 >> 4 (unused), SBO 512 >> 4, mode 2.
  const std::uint64_t d = WgmmaDescriptor::make(0x1A00, 64);
  EXPECT_EQ(d, (std::uint64_t(2) << 62) | (std::uint64_t(32) << 32) | (std::uint64_t(1) << 16) |
                   std::uint64_t(0x1A0));
  const auto s = emu::SmemDescriptor::decode(d);
  EXPECT_EQ(s.start, 0x1A00u);
  EXPECT_EQ(s.sbo, 512u);
  EXPECT_EQ(s.base_offset, 0);
  EXPECT_EQ(s.swizzle_mode, 2);
  EXPECT_EQ(emu::SmemDescriptor::decode(WgmmaDescriptor::make(0x400, 128)).swizzle_mode, 1);
  EXPECT_EQ(emu::SmemDescriptor::decode(WgmmaDescriptor::make(0x400, 128)).sbo, 1024u);
  EXPECT_EQ(emu::SmemDescriptor::decode(WgmmaDescriptor::make(0x400, 32)).swizzle_mode, 3);
}

template <int N, int ElemBytes>
void expect_c_layout_is_a_bijection() {
  using L = vaeconv::layout::WgmmaM64<N, ElemBytes>;
  std::set<std::pair<int, int>> seen;
  for (int l = 0; l < L::kLanes; ++l)
    for (int r = 0; r < L::kCElems; ++r) {
      const int row = L::c_row(l, r), col = L::c_col(l, r);
      ASSERT_TRUE(row >= 0 && row < L::kM && col >= 0 && col < L::kN) << l << " " << r;
      seen.insert({row, col});
    }
  EXPECT_EQ(int(seen.size()), L::kM * L::kN);
}

TEST(WgmmaLayout, AccumulatorsCoverTheTileOnce) {
  expect_c_layout_is_a_bijection<96, 2>();
  expect_c_layout_is_a_bijection<64, 1>();
  expect_c_layout_is_a_bijection<192, 2>();
  expect_c_layout_is_a_bijection<32, 2>();  // the sm_90a bf16 narrow tile's m64n32
}

// What a test case may break on purpose (the negative controls).
enum class Break { kNothing, kSwizzleMode, kStageOffTheRepeat, kHalfKStep };

// One stage of BM = 128 rows of A and N rows of B, K = Chunks * 16 bytes; two warpgroups
// (rows 0..63 and 64..127) each run all K steps. Returns the number of wrong registers.
template <int Chunks, int ElemBytes, int N>
int run_stage(Break brk, unsigned seed) {
  using Tile = SwizzledTile<Chunks>;
  using L = vaeconv::layout::WgmmaM64<N, ElemBytes>;
  constexpr int kBM = 128, kRowBytes = Chunks * 16, kK = kRowBytes / ElemBytes;
  constexpr int kSteps = kRowBytes / 32;  // one instruction reads 32 bytes of K per row
  const std::uint32_t stage = 0x2400 + (brk == Break::kStageOffTheRepeat ? 0x80u : 0u);
  const std::uint32_t base_a = stage, base_b = stage + std::uint32_t(kBM * kRowBytes);
  std::vector<std::uint8_t> smem(static_cast<std::size_t>(base_b + N * kRowBytes + 4096), 0xEE);

  std::mt19937 rng(seed);
  std::vector<double> a(static_cast<std::size_t>(kBM * kK)), b(static_cast<std::size_t>(N * kK));
  auto fill = [&](std::vector<double>& m, int rows, std::uint32_t base) {
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < kK; ++k) {
        std::uint8_t bytes[2];
        if (ElemBytes == 2) {  // small integers: exact in bf16 and in the sums
          const int v = int(rng() % 9) - 4;
          const std::uint16_t bits = emu::bf16_bits_exact(float(v));
          bytes[0] = std::uint8_t(bits & 0xFF);
          bytes[1] = std::uint8_t(bits >> 8);
        } else {               // any finite e4m3fn byte
          std::uint8_t v;
          do v = std::uint8_t(rng() & 0xFF); while ((v & 0x7F) == 0x7F);
          bytes[0] = v;
        }
        const std::size_t off = base + std::size_t(Tile::offset(r, k * ElemBytes / 16)) +
                                std::size_t(k * ElemBytes % 16);
        for (int e = 0; e < ElemBytes; ++e) smem[off + std::size_t(e)] = bytes[e];
        m[std::size_t(r) * kK + std::size_t(k)] =
            ElemBytes == 2 ? decode_bf16(bytes) : decode_e4m3(bytes);
      }
  };
  fill(a, kBM, base_a);
  fill(b, N, base_b);

  int wrong = 0;
  for (int wg = 0; wg < 2; ++wg) {
    const int wm0 = 64 * wg;
    std::vector<std::vector<double>> d(128, std::vector<double>(std::size_t(L::kCElems), 0.0));
    for (int ks = 0; ks < kSteps; ++ks) {
      const int step_chunks = brk == Break::kHalfKStep ? 1 : 2;
      std::uint64_t da = WgmmaDescriptor::make(
          base_a + std::uint32_t(Tile::offset(wm0, step_chunks * ks)), kRowBytes);
      std::uint64_t db = WgmmaDescriptor::make(
          base_b + std::uint32_t(Tile::offset(0, step_chunks * ks)), kRowBytes);
      if (brk == Break::kSwizzleMode) {  // claim the next wider swizzle
        const std::uint64_t wrong_mode = kRowBytes == 32 ? 2 : 1;
        da = (da & ~(std::uint64_t(3) << 62)) | (wrong_mode << 62);
        db = (db & ~(std::uint64_t(3) << 62)) | (wrong_mode << 62);
      }
      emu::wgmma_ss(d, smem, da, db, N, ElemBytes, ElemBytes == 2 ? decode_bf16 : decode_e4m3);
    }
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < L::kCElems; ++r) {
        const int m = wm0 + L::c_row(t, r), n = L::c_col(t, r);
        double ref = 0;
        for (int k = 0; k < kK; ++k)
          ref += a[std::size_t(m) * kK + std::size_t(k)] * b[std::size_t(n) * kK + std::size_t(k)];
        if (d[std::size_t(t)][std::size_t(r)] != ref) ++wrong;
      }
  }
  return wrong;
}

TEST(WgmmaEmulated, StageProductsThroughTheLibraryLayout) {
  EXPECT_EQ((run_stage<8, 2, 96>(Break::kNothing, 1)), 0);   // bf16 BK 64: the shipped wide tile
  EXPECT_EQ((run_stage<4, 1, 96>(Break::kNothing, 2)), 0);   // e4m3 BK 64: the shipped fp8 tile
  EXPECT_EQ((run_stage<4, 2, 96>(Break::kNothing, 3)), 0);   // 64-byte rows (BK 32 bf16)
  EXPECT_EQ((run_stage<8, 2, 64>(Break::kNothing, 10)), 0);  // 128-byte rows, N = 64
  EXPECT_EQ((run_stage<2, 2, 128>(Break::kNothing, 4)), 0);  // 32-byte rows (BK 16 bf16)
  EXPECT_EQ((run_stage<8, 1, 192>(Break::kNothing, 5)), 0);  // 128-byte rows of e4m3, N = 192
  EXPECT_EQ((run_stage<8, 2, 32>(Break::kNothing, 12)), 0);  // bf16 BK 64, N = 32: the narrow tile
}

TEST(WgmmaEmulated, NegativeControlsFail) {
  EXPECT_GT((run_stage<4, 2, 96>(Break::kSwizzleMode, 6)), 0);
  EXPECT_GT((run_stage<4, 2, 96>(Break::kHalfKStep, 7)), 0);
  EXPECT_GT((run_stage<2, 2, 64>(Break::kSwizzleMode, 8)), 0);
  EXPECT_GT((run_stage<8, 2, 96>(Break::kHalfKStep, 11)), 0);
  // A stage off the swizzle repeat: the emulator refuses the descriptor (the hardware would need
  // the base-offset field, which vaeconv never sets).
  EXPECT_ANY_THROW((run_stage<4, 2, 96>(Break::kStageOffTheRepeat, 9)));
}

}  // namespace
