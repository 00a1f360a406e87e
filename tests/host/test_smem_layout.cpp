// The swizzled LDS tile: a bijection, the canonical swizzle modes, and free of bank conflicts for
// NVIDIA's ldmatrix. The AMD accesses are costed by the documented LDS bank model in
// tests/host/test_lds_banks.cpp (gfx942 ds_read_b128 phases, gfx950's 64 banks), not here.
#include <gtest/gtest.h>

#include <set>

#include "vaeconv/arch/fragment_layouts.hpp"
#include "vaeconv/kernel/smem_layout.hpp"

namespace vaeconv::kernel {
namespace {

template <int Chunks>
void check_bijection(int rows) {
  std::set<int> seen;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < Chunks; ++c) {
      const int off = SwizzledTile<Chunks>::offset(r, c);
      EXPECT_EQ(off % 16, 0);
      EXPECT_GE(off, r * Chunks * 16);  // stays inside its row
      EXPECT_LT(off, (r + 1) * Chunks * 16);
      seen.insert(off);
    }
  EXPECT_EQ(int(seen.size()), rows * Chunks);
}

// NVIDIA shared memory: 32 banks of 4 bytes; 8 lanes moving 16 bytes each are one phase (an
// ldmatrix 8x8 matrix's 8 row addresses, or 8 consecutive threads of a cp.async copy). The 8
// chunks must hit 8 distinct 16-byte bank groups of a 128-byte bank line.
template <int Chunks>
bool phase_conflict_free(const int (&rows)[8], const int (&chunks)[8]) {
  std::set<int> groups;
  for (int i = 0; i < 8; ++i) groups.insert((SwizzledTile<Chunks>::offset(rows[i], chunks[i]) / 16) % 8);
  return groups.size() == 8;
}

TEST(SmemLayout, Bijection) {
  check_bijection<2>(64);
  check_bijection<4>(128);
  check_bijection<8>(128);
}

template <int Chunks, class Layout>
void check_ldmatrix_reads() {
  static_assert(Layout::kLanes == 32, "an NVIDIA warp atom");
  // Every ldmatrix phase (8 consecutive lanes) of an operand read, at every K step and row offset.
  for (int row0 = 0; row0 < 64; row0 += Layout::kM)
    for (int k0 = 0; k0 < Chunks; k0 += Layout::kK / 8)
      for (int g = 0; g < Layout::kLanes / 8; ++g) {
        int rows[8], chunks[8];
        for (int i = 0; i < 8; ++i) {
          rows[i] = row0 + Layout::a_lds_row(8 * g + i);
          chunks[i] = k0 + Layout::a_lds_chunk(8 * g + i);
        }
        EXPECT_TRUE((phase_conflict_free<Chunks>(rows, chunks))) << "A group " << g << " k0 " << k0;
        for (int i = 0; i < 8; ++i) {
          rows[i] = row0 + Layout::b_lds_row(8 * g + i);
          chunks[i] = k0 + Layout::b_lds_chunk(8 * g + i);
        }
        EXPECT_TRUE((phase_conflict_free<Chunks>(rows, chunks))) << "B group " << g << " k0 " << k0;
      }
}

TEST(SmemLayout, LdmatrixReadsAreConflictFree) {
  check_ldmatrix_reads<4, layout::MmaM16N16K16Bf16>();
  check_ldmatrix_reads<8, layout::MmaM16N16K16Bf16>();
  check_ldmatrix_reads<2, layout::MmaM16N16K16Bf16>();
  check_ldmatrix_reads<2, layout::MmaM16N16K32Fp8>();
  check_ldmatrix_reads<4, layout::MmaM16N16K32Fp8>();
}

// Negative control: the first ldmatrix phase of the m16n16k16 A read on an unswizzled tile of
// 64-byte rows (chunk c of row r at 64 r + 16 c) puts its 8 rows on 2 bank groups.
TEST(SmemLayout, UnswizzledLdmatrixPhaseConflicts) {
  using L = layout::MmaM16N16K16Bf16;
  std::set<int> groups;
  for (int i = 0; i < 8; ++i) groups.insert(((64 * L::a_lds_row(i) + 16 * L::a_lds_chunk(i)) / 16) % 8);
  EXPECT_EQ(groups.size(), 2u);
}

// NVIDIA's cp.async copy: thread t writes (row t / Chunks, chunk t % Chunks); 8 consecutive threads
// (16 bytes each) form one 128-byte shared-memory wavefront. (AMD's ds_write_b128 phases are the
// bank model's, tests/host/test_lds_banks.cpp.)
TEST(SmemLayout, CpAsyncCopyWritesAreConflictFree) {
  for (int t0 = 0; t0 < 256; t0 += 8) {
    int rows[8], chunks[8];
    for (int i = 0; i < 8; ++i) {
      rows[i] = (t0 + i) / 4;
      chunks[i] = (t0 + i) % 4;
    }
    EXPECT_TRUE(phase_conflict_free<4>(rows, chunks));
    for (int i = 0; i < 8; ++i) {
      rows[i] = (t0 + i) / 8;
      chunks[i] = (t0 + i) % 8;
    }
    EXPECT_TRUE(phase_conflict_free<8>(rows, chunks));
  }
}

// The tiles are Hopper's canonical K-major swizzled layouts, so a future wgmma atom
// (docs/perf-notes.md, next step 1) can read them through a shared-memory descriptor as they are:
// the 32-, 64- and 128-byte swizzle modes XOR byte-address bits [4, 4 + b) with bits [7, 7 + b),
// b = 1, 2, 3, a pattern that repeats every 256 / 512 / 1024 bytes (8 rows of 32 / 64 / 128 bytes).
template <int Chunks>
void check_canonical_swizzle(int bits) {
  for (int row = 0; row < 64; ++row)
    for (int chunk = 0; chunk < Chunks; ++chunk) {
      const unsigned logical = unsigned(row * Chunks * 16 + chunk * 16);
      const unsigned mask = (1u << bits) - 1u;
      const unsigned canonical = logical ^ (((logical >> 7) & mask) << 4);
      ASSERT_EQ(unsigned(SwizzledTile<Chunks>::offset(row, chunk)), canonical)
          << Chunks << " chunks, row " << row << ", chunk " << chunk;
    }
}

TEST(SmemLayout, TilesAreTheCanonicalSwizzleModes) {
  check_canonical_swizzle<2>(1);  // 32-byte rows: the 32-byte swizzle
  check_canonical_swizzle<4>(2);  // 64-byte rows (bf16 BK 32, fp8 BK 64): the 64-byte swizzle
  check_canonical_swizzle<8>(3);  // 128-byte rows: the 128-byte swizzle
}

}  // namespace
}  // namespace vaeconv::kernel
