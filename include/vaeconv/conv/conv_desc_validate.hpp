// vaeconv/conv/conv_desc_validate.hpp — ConvDesc::validate() and ConvDesc::to_string().
//
// validate() admits every well-formed convolution (the CPU reference runs all of them); what the
// GPU kernels additionally need is checked by validate_for_kernels() in conv_args.hpp.
#pragma once
#include <sstream>

#include "vaeconv/conv/conv_desc.hpp"

namespace vaeconv {
namespace detail {

// a * b into *out; false when the product overflows int64 (or an operand is negative).
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  if (a < 0 || b < 0) return false;
  return !__builtin_mul_overflow(a, b, out);
}

inline bool checked_product(std::initializer_list<int64_t> xs, int64_t* out) {
  int64_t p = 1;
  for (int64_t x : xs)
    if (!checked_mul(p, x, &p)) return false;
  *out = p;
  return true;
}

inline Status invalid(const std::string& m) { return Status(StatusCode::kInvalidArgument, m); }
inline Status unsupported(const std::string& m) { return Status(StatusCode::kUnsupported, m); }
inline Status overflow(const std::string& m) { return Status(StatusCode::kOverflow, m); }

// Strides of an NDHWC tensor must be channels-innermost and must not make two elements alias.
inline Status check_strides(const char* name, const Strides5& s, int64_t T, int64_t H, int64_t W,
                            int64_t C) {
  // The message is built only on a refusal: a valid call allocates nothing.
  const auto strides = [&] {
    std::ostringstream os;
    os << name << " strides (n=" << s.n << ", t=" << s.t << ", h=" << s.h << ", w=" << s.w
       << ", c=" << s.c << ")";
    return os.str();
  };
  if (s.c != 1) return invalid(strides() + " are not NDHWC: the channel stride must be 1");
  int64_t need_h = 0, need_t = 0, need_n = 0;
  if (!checked_mul(W, s.w, &need_h) || !checked_mul(H, s.h, &need_t) ||
      !checked_mul(T, s.t, &need_n))
    return overflow(strides() + " overflow int64");
  if (s.w < C || s.h < need_h || s.t < need_t || s.n < need_n)
    return invalid(strides() + " are not NDHWC for a [" + std::to_string(T) + "," +
                   std::to_string(H) + "," + std::to_string(W) + "," + std::to_string(C) +
                   "] tensor: each stride must cover the dimension inside it (no aliasing)");
  return Status::Ok();
}

}  // namespace detail

inline std::string ConvDesc::to_string() const {
  std::ostringstream os;
  os << vaeconv::to_string(kind) << " N=" << n << " T=" << t << " H=" << h << " W=" << w
     << " Cin=" << cin << " Cout=" << cout << " k=" << kt << "x" << kh << "x" << kw
     << " s=" << stride_t << "," << stride_h << "," << stride_w << " pad(t " << pad.t_front << ","
     << pad.t_back << " h " << pad.h_top << "," << pad.h_bottom << " w " << pad.w_left << ","
     << pad.w_right << ") up=" << upsample << " " << vaeconv::to_string(in_dtype);
  if (cache_frames != 0) os << " cache=" << cache_frames;
  if (interleave_halves) os << " interleaved";
  return os.str();
}

inline Status ConvDesc::validate() const {
  using detail::invalid;
  using detail::overflow;
  using detail::unsupported;
  // The message's description of the conv is built only on a refusal: a valid call allocates
  // nothing (conv_forward runs this on every call).
  const auto what = [this] { return " in " + to_string(); };
  if (n < 1 || t < 1 || h < 1 || w < 1) return invalid("sizes N, T, H, W must be >= 1" + what());
  if (cin < 1 || cout < 1) return invalid("channel counts must be >= 1" + what());
  if (kt < 1 || kh < 1 || kw < 1) return invalid("kernel taps must be >= 1" + what());
  if (stride_t < 1 || stride_h < 1 || stride_w < 1) return invalid("strides must be >= 1" + what());
  if (pad.t_front < 0 || pad.t_back < 0 || pad.h_top < 0 || pad.h_bottom < 0 ||
      pad.w_left < 0 || pad.w_right < 0)
    return invalid("padding must be >= 0" + what());
  if (upsample < 1) return invalid("upsample factor must be >= 1" + what());
  if (cache_frames < 0 || cache_frames > 2)
    return invalid("cache_frames must be 0, 1 or 2 (the causal conv's time window looks back two "
                   "frames)" + what());
  if (cache_frames > 0 && kind != ConvKind::kCausal3x3x3 && kind != ConvKind::kTemporal)
    return invalid("only the causal convs (3x3x3, temporal 3x1x1) take cached frames" + what());
  if (interleave_halves && cout % 2 != 0)
    return invalid("interleaved halves need an even Cout" + what());
  if ((upsample == 1) != (upsample_mode == UpsampleMode::kNone))
    return invalid("upsample factor and mode disagree (factor 1 means mode none)" + what());
  if (in_dtype == DType::kFP32 || weight_dtype == DType::kFP32)
    return unsupported("operands must be bf16 or fp8_e4m3, not fp32" + what());
  if (in_dtype != weight_dtype)
    return unsupported("input and weight dtypes must match" + what());
  if (out_dtype == DType::kFP32) return unsupported("output must be bf16 or fp8_e4m3" + what());

  // Every size product the library forms must fit int64 before the derived sizes are trusted.
  int64_t tmp = 0;
  if (!detail::checked_product({n, t, h, w, cin}, &tmp)) return overflow("input size" + what());
  if (!detail::checked_product({h, int64_t(upsample)}, &tmp) ||
      !detail::checked_product({w, int64_t(upsample)}, &tmp))
    return overflow("upsampled size" + what());
  if (in_frames() + pad.t_front + pad.t_back < kt || up_h() + pad.h_top + pad.h_bottom < kh ||
      up_w() + pad.w_left + pad.w_right < kw)
    return invalid("the padded input is smaller than the kernel" + what());
  if (!detail::checked_product({n, out_t(), out_h(), out_w(), cout}, &tmp))
    return overflow("output size" + what());
  if (!detail::checked_product({int64_t(taps()), cin, cout}, &tmp))
    return overflow("weight size" + what());

  VAECONV_RETURN_IF_ERROR(detail::check_strides("input", in_strides, t, h, w, cin));
  VAECONV_RETURN_IF_ERROR(
      detail::check_strides("output", out_strides, out_frames_stored(), out_h(), out_w(),
                            out_channels_stored()));
  if (cache_frames > 0)
    VAECONV_RETURN_IF_ERROR(detail::check_strides("cache", cache_strides, cache_frames, h, w, cin));
  return Status::Ok();
}

}  // namespace vaeconv
