// ConvDesc: derived sizes of the three kinds and every refusal of validate().
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "vaeconv/conv/conv_desc.hpp"

namespace vaeconv {
namespace {

TEST(ConvDesc, DerivedSizes) {
  const ConvDesc c = ConvDesc::causal3x3x3(2, 5, 7, 9, 16, 32);
  EXPECT_EQ(c.out_t(), 5);  // causal: (5 + 2 + 0 - 3) / 1 + 1
  EXPECT_EQ(c.out_h(), 7);
  EXPECT_EQ(c.gemm_m(), 2 * 5 * 7 * 9);
  EXPECT_EQ(c.gemm_k(), 27 * 16);
  EXPECT_EQ(ConvDesc::causal3x3x3(1, 1, 7, 9, 16, 32).gemm_k(), 9 * 16) << "T = 1: 2D slice";
  const ConvDesc d = ConvDesc::downsample(1, 1, 1024, 7, 96, 96);
  EXPECT_EQ(d.out_h(), 512);  // ZeroPad (0,1): 1025 -> (1025 - 3) / 2 + 1
  EXPECT_EQ(d.out_w(), 3);    // 8 -> (8 - 3) / 2 + 1
  const ConvDesc u = ConvDesc::upsample2x(1, 1, 5, 3, 32, 16);
  EXPECT_EQ(u.out_h(), 10);
  EXPECT_EQ(u.out_w(), 6);
  EXPECT_EQ(u.in_strides.w, 32);
  EXPECT_EQ(u.out_strides.h, 6 * 16);
}

TEST(ConvDesc, Refusals) {
  auto code = [](const ConvDesc& d) { return d.validate().code(); };
  const ConvDesc ok = ConvDesc::causal3x3x3(1, 1, 8, 8, 16, 16);
  ASSERT_EQ(code(ok), StatusCode::kOk);

  ConvDesc d = ok;
  d.h = 0;
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  d = ok;
  d.cin = -3;
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  d = ok;
  d.stride_h = 0;
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  d = ok;
  d.pad.h_top = -1;
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  d = ok;
  d.upsample = 2;  // mode still none
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  d = ok;
  d.in_dtype = DType::kFP32;
  d.weight_dtype = DType::kFP32;
  EXPECT_EQ(code(d), StatusCode::kUnsupported);
  d = ok;
  d.weight_dtype = DType::kFP8E4M3;
  EXPECT_EQ(code(d), StatusCode::kUnsupported);
  // Non-NDHWC strides: channels not innermost, or aliasing pixels.
  d = ok;
  d.in_strides.c = 2;
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  d = ok;
  d.in_strides.w = 8;  // < Cin: pixels alias
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  d = ok;
  d.out_strides.h = d.out_strides.w;  // rows alias
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  // A kernel larger than the padded input.
  d = ConvDesc::downsample(1, 1, 1, 1, 8, 8);  // 1 + 1 < 3
  EXPECT_EQ(code(d), StatusCode::kInvalidArgument);
  // Products that overflow int64.
  d = ok;
  d.h = d.w = int64_t(1) << 32;
  d.set_dense_strides();
  EXPECT_EQ(code(d), StatusCode::kOverflow);
  d = ok;
  d.cout = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_EQ(code(d), StatusCode::kOverflow);
}

TEST(ConvDesc, MessagesNameTheProblem) {
  ConvDesc d = ConvDesc::upsample2x(1, 1, 4, 4, 8, 8);
  d.in_strides.c = 3;
  const Status s = d.validate();
  EXPECT_NE(s.message().find("channel stride"), std::string::npos) << s.message();
  EXPECT_NE(s.to_string().find("invalid argument"), std::string::npos);
}

}  // namespace
}  // namespace vaeconv
