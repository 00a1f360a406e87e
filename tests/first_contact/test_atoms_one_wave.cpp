// test_atoms_one_wave.cpp — every fragment matrix atom of the architecture layer, run by ONE atom
// group (a wave of 64 lanes on AMD, a warp of 32 for mma.sync) against the CPU.
//
// This is the hardware half of tests/host/test_atoms_emulated.cpp: there the library's fragment
// layouts (arch/fragment_layouts.hpp) feed an emulator written from the documentation; here they
// feed the real instructions. Per atom: random A (kM x kK, staged [m][k]) and B (kK x kN, staged
// as its transpose Bt[n][k], the packed-weight layout) are written to LDS in rows of 16-byte chunks
// through the arch layer's own store_lds (bytes as loaded; e4m3fn operands, which hold -0 here,
// first go through sanitize_fp8_for_target as the FP8 contract asks of outside bytes: on gfx942
// -0 -> +0, arch/fp8_fnuz.hpp; elsewhere nothing); each lane loads its fragments with the
// atom's load_a / load_b from the chunk the layout's a_lds_row / a_lds_chunk (b_...) name, C is
// loaded from random values through c_row / c_col, mma runs once (D1 = C + A*B) and again
// (D2 = D1 + A*B, the accumulate path), and both are written through c_row / c_col into
// NaN-poisoned buffers. Every element is compared with a CPU fp64 matmul of the decoded inputs
// (bf16: exact products; e4m3fn: core/numerics_fp8.hpp), divided by the atom's acc_scale()
// (4 on gfx942's FNUZ fp8 path, whose products read as a quarter).
//
// Atoms covered per target (arch::Current's four names):
//   gfx950: AtomBf16 = v_mfma_f32_32x32x16_bf16; AtomBf16Narrow = v_mfma_f32_16x16x32_bf16;
//           AtomFp8 = AtomFp8Narrow = v_mfma_f32_32x32x64_f8f6f4 (e4m3, unit scales).
//   gfx942: the same layouts from two v_mfma_f32_32x32x8_bf16 / 16x16x16_bf16 on a chunk's halves
//           and four v_mfma_f32_32x32x16_fp8_fp8 (FNUZ).
//   NVIDIA: AtomBf16 = AtomBf16Narrow = two mma.sync.m16n8k16 bf16 (ldmatrix.x4);
//           AtomFp8 = AtomFp8Narrow = two mma.sync.m16n8k32 e4m3. The sm_90a warpgroup atoms
//           (wgmma) read both operands from LDS through descriptors and have no lane fragments:
//           they are not covered here (tests/host/test_wgmma_emulated.cpp and the GPU suite).
//
// Data and tolerances:
//   bf16 random in [-1, 1]; the bound is that of fp32 accumulation in any order, doubled to allow
//     truncation instead of rounding: |D - ref| <= 2 (n + 2) 2^-24 (|C| + sum |a b|), n the
//     products summed. A layout error moves an element by O(|a b|), far above it.
//   e4m3fn "small": values {0, -0, +-0.5, +-1, +-2}, C multiples of 1/4: every product and partial
//     sum is a multiple of 1/16 below 2^11 in magnitude, so any accumulator with 16 or more
//     significant bits gives the exact result: D must equal the reference bit for bit.
//   e4m3fn "subnormal": A only subnormals (+-1..7 * 2^-9) and zeros, B in {0, +-0.5, +-1, +-2}:
//     exact likewise; an instruction that flushed fp8 subnormals would give C.
//   e4m3fn "full range": every finite code (both zeros, subnormals, +-448). AMD: the fp32 bound
//     above (MFMA accumulates in fp32). NVIDIA: 2^-11 * sum |a b| (the FP8 tensor-core
//     accumulation bound the GPU suite uses, tests/gpu/test_conv_fp8_gpu.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "first_contact_util.hpp"
#include "vaeconv/api/fp8_sanitize.hpp"
#include "vaeconv/arch/arch.hpp"

namespace vaeconv::test {
namespace {

using Arch = arch::Current;

template <class Atom>
__global__ void __launch_bounds__(Atom::Layout::kLanes)
    one_atom_kernel(const uint4* a_rows, const uint4* bt_rows, const float* c_in, float* d_once,
                    float* d_twice, float* acc_scale) {
  using L = typename Atom::Layout;
  constexpr int kRowChunks = L::kK * L::kElemBytes / 16;
  __shared__ __attribute__((aligned(16))) uint4 lds_a[L::kM * kRowChunks];
  __shared__ __attribute__((aligned(16))) uint4 lds_b[L::kN * kRowChunks];
  const int lane = int(threadIdx.x);
  for (int i = lane; i < L::kM * kRowChunks; i += L::kLanes)
    Arch::store_lds<L::kElemBytes>(&lds_a[i], a_rows[i]);
  for (int i = lane; i < L::kN * kRowChunks; i += L::kLanes)
    Arch::store_lds<L::kElemBytes>(&lds_b[i], bt_rows[i]);
  __syncthreads();

  typename Atom::FragA fa;
  typename Atom::FragB fb;
  typename Atom::FragC fc;
  for (int s = 0; s < L::kLdsChunks; ++s) {
    Atom::load_a(fa, s, &lds_a[L::a_lds_row(lane) * kRowChunks + L::a_lds_chunk(lane, s)]);
    Atom::load_b(fb, s, &lds_b[L::b_lds_row(lane) * kRowChunks + L::b_lds_chunk(lane, s)]);
  }
  for (int r = 0; r < L::kCElems; ++r) fc.v[r] = c_in[L::c_row(lane, r) * L::kN + L::c_col(lane, r)];
  Atom::mma(fc, fa, fb);
  for (int r = 0; r < L::kCElems; ++r) d_once[L::c_row(lane, r) * L::kN + L::c_col(lane, r)] = fc.v[r];
  Atom::mma(fc, fa, fb);
  for (int r = 0; r < L::kCElems; ++r) d_twice[L::c_row(lane, r) * L::kN + L::c_col(lane, r)] = fc.v[r];
  if (lane == 0) *acc_scale = Atom::acc_scale();
}

enum class Data { kBf16Random, kFp8Small, kFp8Subnormal, kFp8FullRange };

const char* data_name(Data d) {
  switch (d) {
    case Data::kBf16Random: return "bf16 random";
    case Data::kFp8Small: return "e4m3fn small (exact)";
    case Data::kFp8Subnormal: return "e4m3fn subnormal A (exact)";
    case Data::kFp8FullRange: return "e4m3fn full range";
  }
  return "?";
}

// Operand element values and their bytes: A as [m][k], B as Bt[n][k], K-contiguous.
struct Operands {
  std::vector<uint8_t> a_bytes, bt_bytes;
  std::vector<double> a, bt;  // decoded
  std::vector<float> c;       // [m][n]
};

template <class L>
Operands make_operands(Data data, uint32_t seed) {
  Operands o;
  std::mt19937 rng(seed);
  const size_t na = size_t(L::kM) * L::kK, nb = size_t(L::kN) * L::kK;
  o.c.resize(size_t(L::kM) * L::kN);
  if constexpr (L::kElemBytes == 2) {
    std::vector<uint16_t> abits, bbits;
    std::vector<float> af, bf;
    random_bf16(rng, na, -1.f, 1.f, &abits, &af);
    random_bf16(rng, nb, -1.f, 1.f, &bbits, &bf);
    o.a_bytes.resize(na * 2);
    o.bt_bytes.resize(nb * 2);
    std::memcpy(o.a_bytes.data(), abits.data(), na * 2);
    std::memcpy(o.bt_bytes.data(), bbits.data(), nb * 2);
    o.a.assign(af.begin(), af.end());
    o.bt.assign(bf.begin(), bf.end());
    std::uniform_real_distribution<float> uc(-1.f, 1.f);
    for (auto& v : o.c) v = uc(rng);
  } else {
    const std::vector<uint8_t> small = e4m3fn_codes_of({0.f, -0.f, 0.5f, -0.5f, 1.f, -1.f, 2.f, -2.f});
    std::vector<uint8_t> subnormal = {0x00, 0x80};
    for (uint8_t m = 1; m <= 7; ++m) {
      subnormal.push_back(m);
      subnormal.push_back(uint8_t(0x80 | m));
    }
    const std::vector<uint8_t> full = finite_e4m3fn_codes();
    const auto& a_codes = data == Data::kFp8FullRange ? full : data == Data::kFp8Subnormal ? subnormal : small;
    const auto& b_codes = data == Data::kFp8FullRange ? full : small;
    o.a_bytes = random_codes(rng, na, a_codes);
    o.bt_bytes = random_codes(rng, nb, b_codes);
    for (uint8_t b : o.a_bytes) o.a.push_back(e4m3fn_to_float(b));
    for (uint8_t b : o.bt_bytes) o.bt.push_back(e4m3fn_to_float(b));
    // C: multiples of 1/4 in [-16, 16] (small), of 2^-10 in [-1/4, 1/4] (subnormal), or any
    // float in [-1, 1] (full range): exact sums stay exact.
    std::uniform_int_distribution<int> q(-64, 64), qs(-256, 256);
    std::uniform_real_distribution<float> uc(-1.f, 1.f);
    for (auto& v : o.c)
      v = data == Data::kFp8Small ? float(q(rng)) / 4.f
          : data == Data::kFp8Subnormal ? std::ldexp(float(qs(rng)), -10) : uc(rng);
  }
  return o;
}

struct AtomCheck {
  hipError_t err = hipSuccess;
  float acc_scale = 0.f;
  int64_t checked = 0, bad = 0;
  double max_err = 0;
  std::string first_bad;
};

template <class Atom>
AtomCheck run_atom(Data data, uint32_t seed) {
  using L = typename Atom::Layout;
  static_assert(L::kK * L::kElemBytes % 16 == 0, "rows of whole 16-byte chunks");
  AtomCheck r;
  const Operands o = make_operands<L>(data, seed);
  const size_t nc = size_t(L::kM) * L::kN;
  GuardedBuffer a_dev(o.a_bytes.size()), b_dev(o.bt_bytes.size()), c_dev(nc * 4), d1_dev(nc * 4),
      d2_dev(nc * 4), s_dev(4);
  if (!a_dev.ok() || !b_dev.ok() || !c_dev.ok() || !d1_dev.ok() || !d2_dev.ok() || !s_dev.ok()) {
    r.err = hipErrorInvalidValue;
    r.first_bad = "hipMalloc failed";
    return r;
  }
  a_dev.upload(o.a_bytes.data(), o.a_bytes.size());
  b_dev.upload(o.bt_bytes.data(), o.bt_bytes.size());
  if constexpr (L::kElemBytes == 1) {
    Status s = sanitize_fp8_for_target(a_dev.ptr(), int64_t(o.a_bytes.size()), nullptr);
    if (s.ok()) s = sanitize_fp8_for_target(b_dev.ptr(), int64_t(o.bt_bytes.size()), nullptr);
    if (!s.ok()) {
      r.err = hipErrorInvalidValue;
      r.first_bad = "sanitize_fp8_for_target: " + s.to_string();
      return r;
    }
  }
  c_dev.upload(o.c.data(), nc * 4);
  const std::vector<float> poison(nc, std::nanf(""));
  d1_dev.upload(poison.data(), nc * 4);
  d2_dev.upload(poison.data(), nc * 4);
  one_atom_kernel<Atom><<<1, L::kLanes>>>(
      static_cast<const uint4*>(a_dev.ptr()), static_cast<const uint4*>(b_dev.ptr()),
      static_cast<const float*>(c_dev.ptr()), static_cast<float*>(d1_dev.ptr()),
      static_cast<float*>(d2_dev.ptr()), static_cast<float*>(s_dev.ptr()));
  r.err = hipGetLastError();
  if (r.err == hipSuccess) r.err = hipDeviceSynchronize();
  if (r.err != hipSuccess) {
    r.first_bad = hipGetErrorString(r.err);
    return r;
  }
  std::vector<float> d1(nc), d2(nc);
  d1_dev.download(d1.data(), nc * 4);
  d2_dev.download(d2.data(), nc * 4);
  s_dev.download(&r.acc_scale, 4);

  const bool exact = data == Data::kFp8Small || data == Data::kFp8Subnormal;
  const bool fp8_nvidia_bound = data == Data::kFp8FullRange && !device_identity().amd;
  for (int m = 0; m < L::kM; ++m)
    for (int n = 0; n < L::kN; ++n) {
      double p = 0, pabs = 0;
      for (int k = 0; k < L::kK; ++k) {
        const double v = o.a[size_t(m) * L::kK + k] * o.bt[size_t(n) * L::kK + k];
        p += v;
        pabs += std::fabs(v);
      }
      const double c = o.c[size_t(m) * L::kN + n];
      for (int call = 1; call <= 2; ++call) {
        const double want = c + call * p / r.acc_scale;
        const double got = (call == 1 ? d1 : d2)[size_t(m) * L::kN + n];
        const double sum_abs = std::fabs(c) + call * pabs / r.acc_scale;
        double tol = 0;
        if (!exact)
          tol = fp8_nvidia_bound ? std::ldexp(call * pabs / r.acc_scale, -11) + std::ldexp(std::fabs(c), -22)
                                 : 2.0 * (call * L::kK + 2) * std::ldexp(sum_abs, -24);
        const double err = std::fabs(got - want);
        ++r.checked;
        if (!(err <= tol)) {  // NaN (an element never written) fails too
          if (r.first_bad.empty())
            r.first_bad = "C[" + std::to_string(m) + "][" + std::to_string(n) + "] after call " +
                          std::to_string(call) + ": got " + std::to_string(got) + ", want " +
                          std::to_string(want) + " (tolerance " + std::to_string(tol) + ")";
          ++r.bad;
        }
        if (err > r.max_err) r.max_err = err;
      }
    }
  return r;
}

template <class Atom>
void check_atom(const char* atom_name, Data data) {
  VAECONV_REQUIRE_GPU();
  using L = typename Atom::Layout;
  const std::string what = std::string(atom_name) + " (" + std::to_string(L::kM) + "x" +
                           std::to_string(L::kN) + "x" + std::to_string(L::kK) + ", " +
                           std::to_string(L::kLanes) + " lanes), " + data_name(data);
  print_device(what.c_str());
  for (uint32_t seed : {11u, 12u, 13u}) {
    const AtomCheck r = run_atom<Atom>(data, seed);
    ASSERT_EQ(r.err, hipSuccess) << what << ": " << r.first_bad;
    EXPECT_EQ(r.checked, 2 * int64_t(L::kM) * L::kN);
    EXPECT_EQ(r.bad, 0) << what << ", seed " << seed << ": " << r.bad << " of " << r.checked
                        << " elements wrong; first: " << r.first_bad;
    std::printf("[ vaeconv  ]   seed %u: %lld elements, max |err| %.3e, acc_scale %g\n", seed,
                static_cast<long long>(r.checked), r.max_err, double(r.acc_scale));
  }
}

TEST(FirstContactAtoms, Bf16) { check_atom<Arch::AtomBf16>("AtomBf16", Data::kBf16Random); }
TEST(FirstContactAtoms, Bf16Narrow) {
  check_atom<Arch::AtomBf16Narrow>("AtomBf16Narrow", Data::kBf16Random);
}
TEST(FirstContactAtoms, Fp8Small) { check_atom<Arch::AtomFp8>("AtomFp8", Data::kFp8Small); }
TEST(FirstContactAtoms, Fp8Subnormal) { check_atom<Arch::AtomFp8>("AtomFp8", Data::kFp8Subnormal); }
TEST(FirstContactAtoms, Fp8FullRange) { check_atom<Arch::AtomFp8>("AtomFp8", Data::kFp8FullRange); }
TEST(FirstContactAtoms, Fp8NarrowSmall) {
  check_atom<Arch::AtomFp8Narrow>("AtomFp8Narrow", Data::kFp8Small);
}
TEST(FirstContactAtoms, Fp8NarrowFullRange) {
  check_atom<Arch::AtomFp8Narrow>("AtomFp8Narrow", Data::kFp8FullRange);
}

}  // namespace
}  // namespace vaeconv::test
