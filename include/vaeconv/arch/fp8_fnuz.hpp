// vaeconv/arch/fp8_fnuz.hpp — feeding e4m3fn bytes to gfx942's FNUZ matrix instructions.
//
// vaeconv's FP8 tensors are OCP e4m3fn on every target. gfx942's MFMAs read bytes as e4m3fnuz,
// whose bias is one larger: every finite e4m3fn byte then reads as exactly half its value (448 ->
// 224, subnormals too), so a product of two operands reads as a quarter and the epilogue multiplies
// by 4 (Atom::acc_scale). Three bytes do not follow that rule:
//   0x80  e4m3fn -0, FNUZ NaN
//   0x7F, 0xFF  e4m3fn NaN, FNUZ +-240
// The kernels read operand bytes as they are (no rewrite in the main loop: it cost more VALU
// issue per K tile than the MFMAs it fed). So the bytes a gfx942 conv reads must hold no -0 and
// no e4m3fn NaN, and a NaN must be 0x80: the library's own FP8 producers guarantee it
// (conv/fp8_scale.hpp: quantize_e4m3fn never emits -0 or 0x7F / 0xFF on gfx942; the quantizer and
// the weight packer store no NaN byte at all, the FP8-output epilogue stores a NaN as 0x80,
// kFp8NanCodeFnuz below), and sanitize_fp8_for_target (api/fp8_sanitize.hpp) makes that form of an
// FP8 tensor from outside, once per tensor, with e4m3fn_bytes_for_fnuz below:
//   0x80 -> 0x00 (+0: same product),  0x7F, 0xFF -> 0x80 (FNUZ NaN: NaN stays NaN).
// tests/host/test_fp8_atoms.cpp runs the same bytes through the emulated gfx950 (e4m3fn) and
// gfx942 (FNUZ) instructions and requires identical results.
#pragma once
#include <cstdint>

#include "vaeconv/core/config.hpp"

namespace vaeconv::arch {

// True for the e4m3fn codes that read as exactly half their value in FNUZ: all but 0x80 (-0) and
// the NaNs 0x7F / 0xFF. The codes a gfx942 conv may be fed without sanitizing.
VAECONV_HD constexpr bool e4m3fn_reads_as_half_fnuz(uint32_t b) {
  return b != 0x80u && (b & 0x7Fu) != 0x7Fu;
}

// The sanitizing rewrite of four e4m3fn bytes for gfx942 (api/fp8_sanitize.hpp).
VAECONV_HD constexpr uint32_t e4m3fn_bytes_for_fnuz(uint32_t w) {
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t b = (w >> (8 * i)) & 0xFFu;
    const uint32_t fixed = b == 0x80u ? 0x00u : ((b & 0x7Fu) == 0x7Fu ? 0x80u : b);
    out |= fixed << (8 * i);
  }
  return out;
}

// The factor that turns a gfx942 FNUZ-read fp8 product back into the e4m3fn product.
inline constexpr float kFnuzProductScale = 4.0f;

// The byte an FP8-output conv stores for a NaN result: a code the target's matrix instructions
// read as NaN in the library's FP8 tensor form, so the NaN reaches every consumer. e4m3fn's NaN
// where the instructions read e4m3fn (gfx950, NVIDIA); the FNUZ NaN on gfx942, whose library
// tensors are thus exactly in the form sanitize_fp8_for_target produces (no -0, NaN = 0x80).
// Each architecture names its code (Cdna / Nvidia::kFp8NanCode); host code takes it as a parameter.
inline constexpr uint8_t kFp8NanCodeE4m3fn = 0x7Fu;
inline constexpr uint8_t kFp8NanCodeFnuz = 0x80u;

}  // namespace vaeconv::arch
