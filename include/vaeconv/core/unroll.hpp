// vaeconv/core/unroll.hpp — a loop whose index is a compile-time constant in its body.
//
// for_each_constant<N>(f) calls f(std::integral_constant<int, 0>{}) ... f(<N - 1>{}). The body can
// then take `if constexpr` branches on the index: a register's role that a constexpr rule decides
// (the epilogue's column leaders, epilogue_shape.hpp) is settled at compile time rather than
// left to the unroller's constant folding. Not constexpr: nvcc refuses a constexpr __host__
// __device__ function called from a plain __device__ one (without --expt-relaxed-constexpr).
#pragma once
#include <type_traits>
#include <utility>

#include "vaeconv/core/config.hpp"

namespace vaeconv {

template <class F, int... Is>
VAECONV_HD VAECONV_FORCE_INLINE void for_each_constant_impl(
    F&& f, std::integer_sequence<int, Is...>) {
  (f(std::integral_constant<int, Is>{}), ...);
}

template <int N, class F>
VAECONV_HD VAECONV_FORCE_INLINE void for_each_constant(F&& f) {
  for_each_constant_impl(f, std::make_integer_sequence<int, N>{});
}

}  // namespace vaeconv
