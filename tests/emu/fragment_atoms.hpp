// tests/emu/fragment_atoms.hpp — one fragment atom of the library (arch/fragment_layouts.hpp) on
// the emulated hardware, its operands read from an LDS image at the addresses each lane supplies.
//
// The library's fragment atoms load A and B as 16-byte chunks per lane (AMD: ds_read_b128 of the
// chunk at the lane's address; NVIDIA: ldmatrix.x4 with the lane's row address) and run:
//   bf16 Mfma32x32x16Bf16   gfx950 one v_mfma_f32_32x32x16_bf16; gfx942 two 32x32x8 on the
//                           chunk's halves (arch/cdna.hpp AtomBf16Of); Mfma16x16x32Bf16 alike
//   e4m3 Mfma32x32x64Fp8    gfx950 one f8f6f4 32x32x64 (OCP e4m3fn); gfx942 four
//                           v_mfma_f32_32x32x16_fp8_fp8 on the lane's 8-byte quarters (FNUZ:
//                           each product a quarter, the epilogue's x4: product_scale)
//   bf16 MmaM16N16K16Bf16   NVIDIA ldmatrix.x4, two mma.m16n8k16 on B's register halves
//   e4m3 MmaM16N16K32Fp8    NVIDIA ldmatrix.x4, two mma.m16n8k32 on B's register halves
// run_lds_atom<L>(t, lds, a_addr, b_addr, c): a_addr(lane, part) / b_addr(lane, part) are byte
// addresses into lds; c and the result are the accumulators in L's C layout (c_row, c_col). A read
// outside lds throws std::out_of_range. The halo tests (test_halo_fragment.cpp,
// test_tap_row_fragment.cpp) feed the kernels' own lane addresses through it.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "emu/matrix_emulator.hpp"
#include "vaeconv/arch/fp8_fnuz.hpp"

namespace vaeconv::emu {

enum class FragTarget { kGfx950, kGfx942, kNvidia };

inline const char* frag_target_name(FragTarget t) {
  return t == FragTarget::kGfx950 ? "gfx950" : t == FragTarget::kGfx942 ? "gfx942" : "nvidia";
}

// The factor the library's epilogue applies to L's accumulators on target t (Atom::acc_scale).
template <class L>
float product_scale(FragTarget t) {
  return L::kElemBytes == 1 && t == FragTarget::kGfx942 ? vaeconv::arch::kFnuzProductScale : 1.f;
}

namespace detail {

inline std::array<std::uint8_t, 16> lds_chunk(const std::vector<std::uint8_t>& s,
                                              std::uint32_t at) {
  if (std::size_t(at) + 16 > s.size()) throw std::out_of_range("emu: LDS read past the image");
  std::array<std::uint8_t, 16> c{};
  for (std::size_t i = 0; i < 16; ++i) c[i] = s[std::size_t(at) + i];
  return c;
}

// Lane l's bytes of one operand: its kLdsChunks chunks, part 0 first (AMD).
template <class L, class Addr>
std::vector<std::vector<std::uint8_t>> amd_operand(const std::vector<std::uint8_t>& s,
                                                   Addr&& addr) {
  std::vector<std::vector<std::uint8_t>> f(std::size_t(L::kLanes));
  for (int l = 0; l < L::kLanes; ++l)
    for (int part = 0; part < L::kLdsChunks; ++part)
      for (std::uint8_t b : lds_chunk(s, std::uint32_t(addr(l, part))))
        f[std::size_t(l)].push_back(b);
  return f;
}

// The ldmatrix.x4 registers of one operand (NVIDIA: one chunk address per lane).
template <class L, class Addr>
Frag32<4> nv_operand(const std::vector<std::uint8_t>& s, Addr&& addr) {
  static_assert(L::kLdsChunks == 1, "one ldmatrix row address per lane");
  std::array<std::uint32_t, 32> a{};
  for (int l = 0; l < 32; ++l) a[std::size_t(l)] = std::uint32_t(addr(l, 0));
  return ldmatrix_x4(s, a);
}

template <int N>
FragF<N> bf16_bytes(const std::vector<std::vector<std::uint8_t>>& f, int first) {
  FragF<N> out(int(f.size()));
  for (std::size_t l = 0; l < f.size(); ++l)
    for (int e = 0; e < N; ++e) {
      const std::size_t at = 2 * std::size_t(first + e);
      out.lanes[l][std::size_t(e)] =
          bf16_bits_to_float(std::uint16_t(f[l][at] | (f[l][at + 1] << 8)));
    }
  return out;
}

template <int N>
Frag8<N> fp8_bytes(const std::vector<std::vector<std::uint8_t>>& f, int first) {
  Frag8<N> out(int(f.size()));
  for (std::size_t l = 0; l < f.size(); ++l)
    for (int e = 0; e < N; ++e) out.lanes[l][std::size_t(e)] = f[l][std::size_t(first + e)];
  return out;
}

}  // namespace detail

template <class L, class AAddr, class BAddr>
FragF<L::kCElems> run_lds_atom(FragTarget t, const std::vector<std::uint8_t>& s, AAddr&& a_addr,
                               BAddr&& b_addr, const FragF<L::kCElems>& c) {
  if constexpr (L::kLanes == 64) {
    if (t == FragTarget::kNvidia) throw std::logic_error("emu: a wave64 atom on the NVIDIA target");
    const auto a = detail::amd_operand<L>(s, a_addr), b = detail::amd_operand<L>(s, b_addr);
    if constexpr (L::kElemBytes == 2) {
      static_assert(L::kLdsChunks == 1, "the bf16 atoms read one chunk per lane");
      const FragF<8> a8 = detail::bf16_bytes<8>(a, 0), b8 = detail::bf16_bytes<8>(b, 0);
      if (t == FragTarget::kGfx950) {
        if constexpr (L::kM == 32) return mfma_f32_32x32x16_bf16(a8, b8, c);
        else return mfma_f32_16x16x32_bf16(a8, b8, c);
      }
      FragF<L::kCElems> d = c;
      for (int h = 0; h < 2; ++h) {
        const FragF<4> ah = detail::bf16_bytes<4>(a, 4 * h), bh = detail::bf16_bytes<4>(b, 4 * h);
        if constexpr (L::kM == 32) d = mfma_f32_32x32x8_bf16(ah, bh, d);
        else d = mfma_f32_16x16x16_bf16(ah, bh, d);
      }
      return d;
    } else {
      static_assert(L::kM == 32 && L::kK == 64, "the 32x32x64 e4m3 atom");
      if (t == FragTarget::kGfx950)
        return mfma_scale_f32_32x32x64_f8f6f4_e4m3(detail::fp8_bytes<32>(a, 0),
                                                   detail::fp8_bytes<32>(b, 0), c);
      FragF<16> d = c;
      for (int q = 0; q < 4; ++q)
        d = mfma_f32_32x32x16_fp8_fp8(detail::fp8_bytes<8>(a, 8 * q),
                                      detail::fp8_bytes<8>(b, 8 * q), d);
      return d;
    }
  } else {
    if (t != FragTarget::kNvidia) throw std::logic_error("emu: a warp32 atom on an AMD target");
    const Frag32<4> ra = detail::nv_operand<L>(s, a_addr), rb = detail::nv_operand<L>(s, b_addr);
    FragF<L::kCElems> d = c;
    for (int h = 0; h < 2; ++h) {  // B registers 2h, 2h + 1: the n8 half h
      FragF<4> ch(32);
      for (std::size_t l = 0; l < 32; ++l)
        for (std::size_t i = 0; i < 4; ++i) ch.lanes[l][i] = c.lanes[l][4 * std::size_t(h) + i];
      FragF<4> dh(32);
      if constexpr (L::kElemBytes == 2) {
        const FragF<8> a = bf16_frag_to_float(split_b16<4>(ra));
        const FragF<8> b = bf16_frag_to_float(split_b16<4>(rb));
        FragF<4> bh(32);
        for (std::size_t l = 0; l < 32; ++l)
          for (std::size_t i = 0; i < 4; ++i) bh.lanes[l][i] = b.lanes[l][4 * std::size_t(h) + i];
        dh = mma_m16n8k16_bf16_f32(a, bh, ch);
      } else {
        Frag8<16> a(32);
        Frag8<8> bh(32);
        for (std::size_t l = 0; l < 32; ++l) {
          for (std::size_t e = 0; e < 16; ++e)
            a.lanes[l][e] = std::uint8_t(ra.lanes[l][e / 4] >> (8 * (e % 4)));
          for (std::size_t e = 0; e < 8; ++e)
            bh.lanes[l][e] = std::uint8_t(rb.lanes[l][2 * std::size_t(h) + e / 4] >> (8 * (e % 4)));
        }
        dh = mma_m16n8k32_e4m3_f32(a, bh, ch);
      }
      for (std::size_t l = 0; l < 32; ++l)
        for (std::size_t i = 0; i < 4; ++i) d.lanes[l][4 * std::size_t(h) + i] = dh.lanes[l][i];
    }
    return d;
  }
}

}  // namespace vaeconv::emu
