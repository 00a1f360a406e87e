// validate_for_kernels(): every refusal of the GPU entry points, checked on the host with fake
// (never dereferenced) device addresses.
#include <gtest/gtest.h>

#include <cstdint>

#include "vaeconv/conv/conv_args.hpp"
#include "vaeconv/kernel/conv_gather.hpp"

namespace vaeconv {
namespace {

// Fake, well-separated, 256-byte aligned addresses.
void* addr(uintptr_t a) { return reinterpret_cast<void*>(a); }

struct Fixture {
  ConvDesc d = ConvDesc::causal3x3x3(1, 1, 16, 16, 32, 64);
  ConvArgs a;
  Fixture() {
    PackedWeightsInfo w;
    EXPECT_TRUE(packed_info_for(d, &w).ok());
    a.x = addr(0x10000000);
    a.weights = {addr(0x20000000), w};
    a.bias = static_cast<const float*>(addr(0x30000000));
    a.residual = addr(0x40000000);
    a.y = addr(0x50000000);
  }
  StatusCode code() const { return validate_for_kernels(d, a).code(); }
};

TEST(ConvArgs, AcceptsAWellFormedCall) {
  Fixture f;
  EXPECT_EQ(f.code(), StatusCode::kOk) << validate_for_kernels(f.d, f.a).to_string();
  f.a.bias = nullptr;
  f.a.residual = nullptr;
  EXPECT_EQ(f.code(), StatusCode::kOk);
  f.a.residual = f.a.y;  // in-place residual add is allowed
  EXPECT_EQ(f.code(), StatusCode::kOk);
}

TEST(ConvArgs, NullPointers) {
  Fixture f;
  f.a.x = nullptr;
  EXPECT_EQ(f.code(), StatusCode::kInvalidArgument);
  Fixture g;
  g.a.y = nullptr;
  EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
  Fixture h;
  h.a.weights.data = nullptr;
  EXPECT_EQ(h.code(), StatusCode::kInvalidArgument);
}

TEST(ConvArgs, Misaligned) {
  Fixture f;
  f.a.x = addr(0x10000008);
  EXPECT_EQ(f.code(), StatusCode::kMisaligned);
  Fixture g;
  g.a.y = addr(0x50000002);
  EXPECT_EQ(g.code(), StatusCode::kMisaligned);
  Fixture h;
  h.a.bias = static_cast<const float*>(addr(0x30000002));
  EXPECT_EQ(h.code(), StatusCode::kMisaligned);
  Fixture r;
  r.a.residual = addr(0x40000004);
  EXPECT_EQ(r.code(), StatusCode::kMisaligned);
  Fixture s;  // a pixel stride that breaks 16-byte rows
  s.d.in_strides.w = 36;
  s.d.in_strides.h = 36 * 16;
  s.d.in_strides.t = s.d.in_strides.n = 36 * 256;
  EXPECT_EQ(s.code(), StatusCode::kMisaligned);
}

// Each misaligned pointer is named in the refusal, not a list of every pointer's rule.
TEST(ConvArgs, MisalignedPointerIsNamed) {
  const auto message = [](const Fixture& f) { return validate_for_kernels(f.d, f.a).message(); };
  Fixture f;
  f.a.x = addr(0x10000008);
  EXPECT_EQ(message(f), "x must be 16-byte aligned");
  Fixture w;
  w.a.weights.data = addr(0x20000004);
  EXPECT_EQ(message(w), "packed weights must be 16-byte aligned");
  Fixture r;
  r.a.residual = addr(0x40000004);
  EXPECT_EQ(message(r), "residual must be 16-byte aligned");
  Fixture y;
  y.a.y = addr(0x50000002);
  EXPECT_EQ(message(y), "y must be 16-byte aligned");
  Fixture b;
  b.a.bias = static_cast<const float*>(addr(0x30000002));
  EXPECT_EQ(message(b), "bias must be 4-byte aligned");
}

TEST(ConvArgs, UnsupportedProblems) {
  Fixture f;
  f.d.stride_h = 2;  // a causal conv with stride: not a VAE conv
  EXPECT_EQ(f.code(), StatusCode::kUnsupported);
  Fixture g;  // bf16 operands with an fp8 output
  g.d.out_dtype = DType::kFP8E4M3;
  EXPECT_EQ(g.code(), StatusCode::kUnsupported);
  Fixture h;
  h.d.pad = {1, 1, 1, 1, 1, 1};  // symmetric time pad: not causal
  EXPECT_EQ(h.code(), StatusCode::kUnsupported);
}

TEST(ConvArgs, WeightsPackedForAnotherConv) {
  Fixture f;
  f.a.weights.info.cout = 32;
  EXPECT_EQ(f.code(), StatusCode::kInvalidArgument);
  Fixture g;  // T = 1 slice used for a video conv
  g.d = ConvDesc::causal3x3x3(1, 3, 16, 16, 32, 64);
  EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(validate_for_kernels(g.d, g.a).message().find("time taps"), std::string::npos);
}

// The refusal names the fields that differ, each with both values, and no other.
TEST(ConvArgs, WeightsPackedForAnotherConvNameWhatDiffers) {
  Fixture f;  // weights packed for the fp8 conv of the same shape, used by the bf16 conv
  ASSERT_TRUE(packed_info_for(ConvDesc::causal3x3x3(1, 1, 16, 16, 32, 64, DType::kFP8E4M3),
                              &f.a.weights.info)
                  .ok());
  const std::string m = validate_for_kernels(f.d, f.a).message();
  EXPECT_NE(m.find("dtype fp8_e4m3 where this conv needs bf16"), std::string::npos) << m;
  EXPECT_EQ(m.find("Cout"), std::string::npos) << m;
  EXPECT_EQ(m.find("kind"), std::string::npos) << m;
  Fixture g;  // weights of a downsample conv (Cin 32 -> Cout 64, 3 x 3) for the causal T = 1 conv
  ASSERT_TRUE(packed_info_for(ConvDesc::downsample(1, 1, 32, 32, 32, 64), &g.a.weights.info).ok());
  const std::string k = validate_for_kernels(g.d, g.a).message();
  EXPECT_NE(k.find("kind downsample where this conv needs causal3x3x3"), std::string::npos) << k;
  EXPECT_EQ(k.find("dtype"), std::string::npos) << k;
}

TEST(ConvArgs, Overlaps) {
  Fixture f;
  f.a.y = addr(0x10000000 + 4096);  // inside x
  EXPECT_EQ(f.code(), StatusCode::kOverlap);
  Fixture g;
  g.a.residual = addr(0x50000000 + 256);  // partially over y
  EXPECT_EQ(g.code(), StatusCode::kOverlap);
  Fixture h;
  h.a.bias = static_cast<const float*>(addr(0x50000000 + 64));
  EXPECT_EQ(h.code(), StatusCode::kOverlap);
  Fixture w;
  w.a.weights.data = addr(0x50000000 - 256);
  EXPECT_EQ(w.code(), StatusCode::kOverlap);
}

// Far-apart fake buffers for a conv of many tiny frames (spans of tens of GiB, never touched).
void admit_many_frames(Fixture* f, const ConvDesc& d) {
  f->d = d;
  PackedWeightsInfo w;
  ASSERT_TRUE(packed_info_for(d, &w).ok());
  f->a.weights.info = w;
  f->a.x = addr(uintptr_t(1) << 40);
  f->a.y = addr(uintptr_t(2) << 40);
  f->a.residual = nullptr;
  f->a.weights.data = addr(uintptr_t(3) << 40);
  f->a.bias = static_cast<const float*>(addr(uintptr_t(4) << 40));
}

// The kernels' 1D tile grid has no 65535 limit on frames (the old grid y): the frame index
// n * T_out + t_out is an int, so N * T_out stops at 2^31 - 1, for every conv kind and however
// the frames split between N and T.
TEST(ConvArgs, FramesStopAtTheIntFrameIndex) {
  const int64_t max = kMaxKernelFrames;
  ASSERT_EQ(max, int64_t(INT32_MAX));
  struct Split { int64_t n, t; };
  for (int kind = 0; kind < 3; ++kind) {
    // 2^31 - 1 is prime: a batch of videos reaches it to within a frame (2 x (2^30 - 1)).
    for (const Split& at : {Split{1, max}, Split{max, 1}, Split{2, (max - 1) / 2}}) {
      ASSERT_GE(at.n * at.t, max - 1);
      ASSERT_LE(at.n * at.t, max);
      const auto make = [&](int64_t n, int64_t t) {
        return kind == 0 ? ConvDesc::causal3x3x3(n, t, 1, 1, 8, 8)
                         : kind == 1 ? ConvDesc::downsample(n, t, 2, 2, 8, 8)
                                     : ConvDesc::upsample2x(n, t, 1, 1, 8, 8);
      };
      Fixture below;  // at the limit (or one frame below it): admitted
      admit_many_frames(&below, make(at.n, at.t));
      ASSERT_EQ(below.d.n * below.d.out_t(), at.n * at.t) << below.d.to_string();
      EXPECT_EQ(below.code(), StatusCode::kOk) << validate_for_kernels(below.d, below.a).to_string();
      // Its parameters hold T and T_out exactly, and the last frame decodes to (N - 1, T_out - 1)
      // with a 64-bit input base.
      const kernel::ConvParams p = make_params(below.d, below.a, 128, 16);
      EXPECT_EQ(int64_t(p.to), below.d.out_t());
      EXPECT_EQ(int64_t(p.t), below.d.t);
      const kernel::BlockCoord last = kernel::frame_coord(p, int(at.n * at.t - 1));
      EXPECT_EQ(last.n, below.d.n - 1);
      EXPECT_EQ(last.ot, below.d.out_t() - 1);
      EXPECT_GE(kernel::input_view_offset(p, last), int64_t(0));
      // N or T one larger (past the limit): refused, naming the limit and the count.
      for (const Split& over : {Split{at.n + 1, at.t}, Split{at.n, at.t + 1}}) {
        ASSERT_GT(over.n * over.t, max);
        Fixture above;
        admit_many_frames(&above, make(over.n, over.t));
        const Status s = validate_for_kernels(above.d, above.a);
        EXPECT_EQ(s.code(), StatusCode::kOverflow) << above.d.to_string();
        EXPECT_NE(s.message().find("frame index (an int) takes at most 2^31 - 1"), std::string::npos)
            << s.to_string();
        EXPECT_NE(s.message().find(std::to_string(over.n * over.t)), std::string::npos)
            << s.to_string();
      }
    }
  }
}

// What the old grid y refused (65536 and more frames) is admitted, and frames past 65535 decode
// into (n, t_out) and 64-bit input and output bases exactly (the GPU case frames_past_65535_*
// runs such convs).
TEST(ConvArgs, FramesPast65535AreAdmitted) {
  Fixture f;
  admit_many_frames(&f, ConvDesc::causal3x3x3(2, 32800, 2, 2, 8, 8));
  EXPECT_EQ(f.code(), StatusCode::kOk) << validate_for_kernels(f.d, f.a).to_string();
  const kernel::ConvParams p = make_params(f.d, f.a, 128, 16);
  for (int frame : {65535, 65536, 65599}) {
    const kernel::BlockCoord b = kernel::frame_coord(p, frame);
    EXPECT_EQ(b.n, frame / 32800);
    EXPECT_EQ(b.ot, frame % 32800);
    const int64_t it_lo = b.ot >= 2 ? b.ot - 2 : 0;  // causal: taps t_out - 2 .. t_out
    EXPECT_EQ(kernel::input_view_offset(p, b), b.n * f.d.in_strides.n + it_lo * f.d.in_strides.t);
  }
  Fixture g;
  admit_many_frames(&g, ConvDesc::downsample(70000, 1, 4, 4, 32, 64));
  EXPECT_EQ(g.code(), StatusCode::kOk) << validate_for_kernels(g.d, g.a).to_string();
}

TEST(ConvArgs, IndexOverflow) {
  PackedWeightsInfo w;
  Fixture g;  // one frame past 2^31 bytes
  g.d = ConvDesc::causal3x3x3(1, 1, 1 << 14, 1 << 14, 8, 8);
  ASSERT_TRUE(packed_info_for(g.d, &w).ok());
  g.a.weights.info = w;
  g.a.y = addr(uintptr_t(1) << 40);
  EXPECT_EQ(g.code(), StatusCode::kOverflow);
}

TEST(ConvArgs, LargeVideoIsAdmittedWith64BitFrameBases) {
  // 2^31+ elements in all (13 frames of 1328^2 x 96) but each frame's view fits 32 bits.
  Fixture f;
  f.d = ConvDesc::causal3x3x3(1, 13, 1328, 1328, 96, 96);
  PackedWeightsInfo w;
  ASSERT_TRUE(packed_info_for(f.d, &w).ok());
  f.a.weights.info = w;
  f.a.x = addr(uintptr_t(1) << 36);
  f.a.y = addr(uintptr_t(1) << 38);
  f.a.residual = nullptr;
  f.a.bias = nullptr;
  f.a.weights.data = addr(uintptr_t(1) << 39);
  ASSERT_GT(f.d.in_elements(), int64_t(1) << 31);
  EXPECT_EQ(f.code(), StatusCode::kOk) << validate_for_kernels(f.d, f.a).to_string();
  const kernel::ConvParams p = make_params(f.d, f.a, 128, 128);
  const kernel::BlockCoord b = kernel::block_coord(p, 0, 12, 128, 128);
  EXPECT_EQ(kernel::input_view_offset(p, b), int64_t(10) * 1328 * 1328 * 96);  // frames 10..12
}

}  // namespace
}  // namespace vaeconv

namespace vaeconv {
namespace {

TEST(ConvArgsFp8, ScalesAreRequiredAndChecked) {
  ConvDesc d = ConvDesc::causal3x3x3(1, 1, 16, 16, 32, 64, DType::kFP8E4M3);
  PackedWeightsInfo w;
  ASSERT_TRUE(packed_info_for(d, &w).ok());
  ConvArgs a;
  a.x = addr(0x10000000);
  a.weights = {addr(0x20000000), w, static_cast<const float*>(addr(0x21000000))};
  a.y = addr(0x50000000);
  a.x_scale = static_cast<const float*>(addr(0x60000000));
  EXPECT_TRUE(validate_for_kernels(d, a).ok()) << validate_for_kernels(d, a).to_string();
  ConvArgs b = a;
  b.x_scale = nullptr;
  EXPECT_EQ(validate_for_kernels(d, b).code(), StatusCode::kInvalidArgument);
  b = a;
  b.weights.scales = nullptr;
  EXPECT_EQ(validate_for_kernels(d, b).code(), StatusCode::kInvalidArgument);
  b = a;  // bf16 weights for an fp8 conv
  b.weights.info.dtype = DType::kBF16;
  EXPECT_EQ(validate_for_kernels(d, b).code(), StatusCode::kInvalidArgument);
  ConvDesc d8 = d;  // fp8 output needs y_scale
  d8.out_dtype = DType::kFP8E4M3;
  EXPECT_EQ(validate_for_kernels(d8, a).code(), StatusCode::kInvalidArgument);
  b = a;
  b.y_scale = static_cast<const float*>(addr(0x60000004));
  EXPECT_TRUE(validate_for_kernels(d8, b).ok());
  b.residual = b.y;  // an fp8 output cannot also be the bf16 residual
  EXPECT_EQ(validate_for_kernels(d8, b).code(), StatusCode::kOverlap);
  b = a;  // a scale inside the output: the refusal names which
  b.x_scale = static_cast<const float*>(addr(0x50000000 + 64));
  EXPECT_EQ(validate_for_kernels(d, b).code(), StatusCode::kOverlap);
  EXPECT_EQ(validate_for_kernels(d, b).message(), "output y overlaps x_scale");
  b = a;
  b.y_scale = static_cast<const float*>(addr(0x50000000 + 128));
  EXPECT_EQ(validate_for_kernels(d8, b).message(), "output y overlaps y_scale");
  b = a;  // misaligned scales, each named
  b.x_scale = static_cast<const float*>(addr(0x60000002));
  EXPECT_EQ(validate_for_kernels(d, b).message(), "x_scale must be 4-byte aligned");
  b = a;
  b.weights.scales = static_cast<const float*>(addr(0x21000001));
  EXPECT_EQ(validate_for_kernels(d, b).message(), "weight scales must be 4-byte aligned");
  b = a;
  b.y_scale = static_cast<const float*>(addr(0x60000006));
  EXPECT_EQ(validate_for_kernels(d8, b).message(), "y_scale must be 4-byte aligned");
  // A bf16 conv takes no scales: the kernels would read weight scales that bf16 weights do not
  // have (and bf16 kernels apply none).
  ConvDesc bf = ConvDesc::causal3x3x3(1, 1, 16, 16, 32, 64);
  PackedWeightsInfo wb;
  ASSERT_TRUE(packed_info_for(bf, &wb).ok());
  ConvArgs c;
  c.x = addr(0x10000000);
  c.weights = {addr(0x20000000), wb, nullptr};
  c.y = addr(0x50000000);
  EXPECT_TRUE(validate_for_kernels(bf, c).ok()) << validate_for_kernels(bf, c).to_string();
  c.x_scale = static_cast<const float*>(addr(0x60000000));
  EXPECT_EQ(validate_for_kernels(bf, c).code(), StatusCode::kInvalidArgument);
  c.x_scale = nullptr;
  c.weights.scales = static_cast<const float*>(addr(0x21000000));
  EXPECT_EQ(validate_for_kernels(bf, c).code(), StatusCode::kInvalidArgument);
  ConvDesc mixed = ConvDesc::causal3x3x3(1, 1, 16, 16, 32, 64);  // bf16 in, fp8 out
  mixed.out_dtype = DType::kFP8E4M3;
  EXPECT_EQ(validate_for_kernels(mixed, b).code(), StatusCode::kUnsupported);
  ConvDesc strided = d;  // fp8 rows need 16-element pixel strides
  strided.in_strides.w = 40;
  strided.in_strides.h = 40 * 16;
  strided.in_strides.t = strided.in_strides.n = 40 * 256;
  EXPECT_EQ(validate_for_kernels(strided, a).code(), StatusCode::kMisaligned);
}

}  // namespace
}  // namespace vaeconv
