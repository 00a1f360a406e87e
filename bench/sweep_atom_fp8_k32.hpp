// sweep_atom_fp8_k32.hpp — the e4m3 atom of bench/sweep.sh amd-model's flag "k32": gfx942's
// 32 x 32 x 32 atom, one 16-byte LDS chunk per lane and operand (16 e4m3 along K), run as two
// v_mfma_f32_32x32x16_fp8_fp8 on the chunk's 8-byte halves. It was prototyped here for the model
// only (issue 25, W6) and is now the library's arch::Cdna::AtomFp8K32 (arch/cdna.hpp; layout
// layout::Mfma32x32x32Fp8, pinned by tests/host/test_atoms_emulated.cpp, AtomEmulatedFp8K32),
// the atom of gfx942's fp8 wide tile: the flag compiles a candidate on that same atom.
#pragma once
#include "vaeconv/api/conv.hpp"

namespace vaeconv::sweep {

using AtomFp8K32 = arch::Cdna::AtomFp8K32;

}  // namespace vaeconv::sweep
