// test_buffer_oob.cpp — the zero fill every AMD kernel relies on: buffer loads outside the view.
//
// The kernels never branch around a padding tap or a tile tail: an invalid lane's 16-byte load
// gets the offset arch::Cdna::kOutOfRange (0x80000000) and the buffer resource's range check
// returns zeros (arch/cdna.hpp). This runs exactly that code — Cdna::make_view, Cdna::load into a
// staging slot, Cdna::flush to LDS — on one wave and checks every returned dword.
//
// Expected results (../shared/notes/cdna.md, "Memory"): with buffer resource word 3 = 0x00020000
// (raw buffer, stride 0) the range check applies to the VGPR offset, per dword ("relaxed" OOB
// mode): a dword is returned when it lies wholly below num_records, otherwise it reads 0. So a
// 16-byte load at offset o returns dword j (j = 0..3) iff o + 4 (j + 1) <= num_records:
//   * offset kOutOfRange (also what load() substitutes for valid = false): four zeros;
//   * a dwordx4 straddling num_records by 4, 8 or 12 bytes: its 3, 2 or 1 leading dwords, then
//     zeros (views of 1028, 1032 and 1036 bytes, load at 1024);
//   * loads just below the end (the last whole chunk) and anywhere inside: the memory;
//   * at or past num_records but inside the allocation: zeros (the memory there is not zero);
//   * a view asked for 2^32 - 1 bytes is clamped to 0x7fffffff by make_view, so kOutOfRange is
//     still out of range (a 2^31-element bf16 tensor's view must not read 2 GiB past its base).
// Offsets are 16-byte aligned, as the kernels' are. NVIDIA has no buffer resources (its zero fill
// is cp.async with src-size 0, exercised by every GPU conv test): skipped there, with that reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "first_contact_util.hpp"
#include "vaeconv/arch/arch.hpp"

namespace vaeconv::test {
namespace {

#if defined(VAECONV_BACKEND_HIP)
using Cdna = arch::Cdna;
constexpr int kLanes = Cdna::kWaveSize;

__global__ void __launch_bounds__(kLanes)
    buffer_load_kernel(const void* base, uint32_t view_bytes, const uint32_t* offsets,
                       const int* valid, Cdna::i32x4* out) {
  __shared__ __attribute__((aligned(16))) Cdna::i32x4 lds[kLanes];
  const int lane = int(threadIdx.x);
  const Cdna::GlobalView view = Cdna::make_view(base, view_bytes);
  Cdna::Slot<1> slot;
  Cdna::load(slot, 0, &lds[lane], view, offsets[lane], valid[lane] != 0);
  Cdna::commit();
  Cdna::wait<0>();
  Cdna::flush<2>(slot, 0, &lds[lane]);  // 2-byte elements: no FNUZ rewrite, the bytes as loaded
  __syncthreads();
  out[lane] = lds[lane];
}

constexpr uint32_t kAllocBytes = 4096;
inline uint32_t pattern(uint32_t dword_index) { return 0xA5000000u | dword_index; }

struct Lane {
  uint32_t offset;
  bool valid;
};

// Runs one wave with `lanes` (padded to the wave with in-range loads at 16 * lane) on a view of
// `view_bytes` and checks every dword; returns the failures.
std::vector<std::string> run_view(uint32_t view_bytes, std::vector<Lane> lanes) {
  std::vector<std::string> fails;
  for (int l = int(lanes.size()); l < kLanes; ++l) lanes.push_back({uint32_t(16 * l), true});
  std::vector<uint32_t> mem(kAllocBytes / 4), offsets(kLanes);
  std::vector<int> valid(kLanes);
  for (uint32_t i = 0; i < mem.size(); ++i) mem[i] = pattern(i);
  for (int l = 0; l < kLanes; ++l) {
    offsets[size_t(l)] = lanes[size_t(l)].offset;
    valid[size_t(l)] = lanes[size_t(l)].valid;
  }
  GuardedBuffer mem_dev(kAllocBytes), off_dev(kLanes * 4), valid_dev(kLanes * 4), out_dev(kLanes * 16);
  if (!mem_dev.ok() || !off_dev.ok() || !valid_dev.ok() || !out_dev.ok()) return {"hipMalloc failed"};
  mem_dev.upload(mem.data(), kAllocBytes);
  off_dev.upload(offsets.data(), kLanes * 4);
  valid_dev.upload(valid.data(), kLanes * 4);
  const std::vector<uint8_t> poison(kLanes * 16, 0xEE);
  out_dev.upload(poison.data(), poison.size());
  buffer_load_kernel<<<1, kLanes>>>(mem_dev.ptr(), view_bytes, static_cast<const uint32_t*>(off_dev.ptr()),
                                    static_cast<const int*>(valid_dev.ptr()),
                                    static_cast<Cdna::i32x4*>(out_dev.ptr()));
  hipError_t e = hipGetLastError();
  if (e == hipSuccess) e = hipDeviceSynchronize();
  if (e != hipSuccess) return {std::string("kernel failed: ") + hipGetErrorString(e)};
  std::vector<uint32_t> got(kLanes * 4);
  out_dev.download(got.data(), got.size() * 4);
  // The view the hardware sees: make_view clamps to kOutOfRange - 1.
  const uint64_t records = view_bytes < Cdna::kOutOfRange ? view_bytes : Cdna::kOutOfRange - 1;
  for (int l = 0; l < kLanes; ++l)
    for (uint32_t j = 0; j < 4; ++j) {
      const Lane& ln = lanes[size_t(l)];
      const uint64_t off = ln.valid ? ln.offset : Cdna::kOutOfRange;
      const bool in = off + 4 * (j + 1) <= records;
      if (in && off + 4 * (j + 1) > kAllocBytes) {
        fails.push_back("test bug: lane " + std::to_string(l) + " reads past the allocation");
        continue;
      }
      const uint32_t want = in ? pattern(uint32_t(off / 4 + j)) : 0u;
      const uint32_t g = got[size_t(l) * 4 + j];
      if (g != want) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "view %u bytes, lane %d (offset 0x%x, valid %d), dword %u: got 0x%08x, want 0x%08x",
                      view_bytes, l, ln.offset, int(ln.valid), j, g, want);
        fails.push_back(buf);
      }
    }
  if (!mem_dev.guards_intact() || !out_dev.guards_intact()) fails.push_back("a guard band was written");
  return fails;
}
#endif

TEST(FirstContactBufferLoads, OutOfRangeReadsZeros) {
  VAECONV_REQUIRE_GPU();
#if !defined(VAECONV_BACKEND_HIP)
  GTEST_SKIP() << "AMD only: NVIDIA has no buffer resources (its zero fill is cp.async with "
                  "src-size 0, which every GPU conv test exercises)";
#else
  print_device("buffer loads: kOutOfRange, partial dwordx4, end of view");
  const uint32_t kOor = Cdna::kOutOfRange;
  // The dwords past 1024 of every view below hold nonzero memory, so a zero is the range check.
  for (uint32_t view : {1024u, 1028u, 1032u, 1036u, 1040u}) {
    const std::vector<Lane> lanes = {
        {0, true},      {16, true},    {512, true},  {992, true},   {1008, true},  // inside
        {1024, true},                                    // straddles (1028..1036) or at the end
        {1040, true},   {2048, true},  {4080, true},    // past the end, inside the allocation
        {kOor, true},                                    // the library's out-of-range offset
        {16, false},    {1008, false}, {0, false},      // valid = false: load() substitutes kOor
    };
    for (const std::string& f : run_view(view, lanes)) ADD_FAILURE() << f;
  }
  // make_view's clamp: a view "as large as possible" keeps kOutOfRange out of range.
  const std::vector<Lane> lanes = {{0, true}, {16, true}, {4080, true}, {kOor, true}, {16, false}};
  for (const std::string& f : run_view(0xFFFFFFFFu, lanes)) ADD_FAILURE() << f;
#endif
}

}  // namespace
}  // namespace vaeconv::test
