// atom_kernel.cpp — a consumer TU of the whole header-only library with one kernel that runs the
// bf16 and fp8 matrix atoms of arch::Current. tests/CMakeLists.txt compiles it (never links or
// runs it) with expect_compile.cmake (this folder):
//   * for a supported target (gfx942, gfx950; NVIDIA sm_90a) it must compile: the control that
//     shows the TU itself is sound;
//   * for an unsupported AMD target (gfx90a, gfx1201, gfx9-4-generic) it must fail with the
//     architecture layer's #error, and with nothing else.
#include "vaeconv/vaeconv.hpp"

using Arch = vaeconv::arch::Current;

template <class Atom>
__device__ void run_atom(const char* lds, float* out) {
  typename Atom::FragA a;
  typename Atom::FragB b;
  typename Atom::FragC c{};
  for (int part = 0; part < Atom::Layout::kLdsChunks; ++part) {
    Atom::load_a(a, part, lds + 16 * (threadIdx.x + part));
    Atom::load_b(b, part, lds + 16 * (threadIdx.x + 2 * part + 1));
  }
  Atom::mma(c, a, b);
  out[threadIdx.x] = c.v[0] * Atom::acc_scale();
}

__global__ void atom_kernel(const char* lds_image, float* out) {
  __shared__ char lds[64 * 1024];
  for (int i = threadIdx.x; i < 64 * 1024; i += blockDim.x) lds[i] = lds_image[i];
  __syncthreads();
  run_atom<Arch::AtomBf16>(lds, out);
  run_atom<Arch::AtomFp8>(lds, out + blockDim.x);
}
