// tests/emu/operand_codes.hpp — operand elements of either type as the LDS emulations store them:
// bf16 bits or e4m3fn bytes, with their exact values (the halo tests' shared vocabulary).
#pragma once
#include <cstdint>
#include <vector>

#include "emu/matrix_emulator.hpp"
#include "emu/wgmma_emulator.hpp"
#include "vaeconv/core/numerics_bf16.hpp"
#include "vaeconv/core/numerics_fp8.hpp"

namespace vaeconv::emu {

inline double decode_bf16_le(const std::uint8_t* p) {
  return bf16_bits_to_float(std::uint16_t(p[0] | (p[1] << 8)));
}
inline double decode_e4m3_byte(const std::uint8_t* p) { return decode_e4m3fn(p[0]); }

// An operand element of kElemBytes: its code (bf16 bits or an e4m3fn byte) and its value.
template <int kElemBytes>
struct OperandCode {
  static std::uint16_t encode(float v) {
    return kElemBytes == 2 ? vaeconv::float_to_bf16(v) : vaeconv::float_to_e4m3fn(v);
  }
  static double value(std::uint16_t code) {
    return kElemBytes == 2 ? double(vaeconv::bf16_to_float(code))
                           : double(vaeconv::e4m3fn_to_float(std::uint8_t(code)));
  }
  static void store(std::vector<std::uint8_t>& smem, std::uint32_t at, std::uint16_t code) {
    smem[at] = std::uint8_t(code & 0xFF);
    if (kElemBytes == 2) smem[at + 1] = std::uint8_t(code >> 8);
  }
  static constexpr Decode kDecode = kElemBytes == 2 ? decode_bf16_le : decode_e4m3_byte;
};

}  // namespace vaeconv::emu
