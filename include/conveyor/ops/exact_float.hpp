#pragma once
/// @file
/// IEEE arithmetic that the compiler may not rearrange: each call rounds once, as written, whatever
/// the user's flags. A product written `a * b + c` is one rounding or two depending on the
/// compiler: nvcc fuses it into an FMA by default, and g++ does under `-ffp-contract=fast` (its
/// default in GNU mode) whenever FMA instructions are enabled (`-march=native`, or the x86-64-v3
/// clone `CONVEYOR_CPU_CLONES` builds). Matching another library bit for bit needs its roundings,
/// so code that must be exact spells each one: `mul` and `add` round twice, `fma` once.
///
/// On the device these are the `__f*_rn` intrinsics, which nvcc never contracts. On the host each
/// result passes through an empty `asm` that the optimiser cannot see into: a product it returns
/// cannot be fused with the sum that consumes it, nor reassociated, nor folded differently.

#include <conveyor/config.hpp>

#include <math.h>

namespace conveyor {
inline namespace v0 {
namespace ops::exact {

namespace detail {

/// `v`, hidden from the optimiser (a register round trip that costs nothing).
template <class T>
CONVEYOR_HD inline T opaque(T v) noexcept {
#if defined(__CUDA_ARCH__)
  return v;
#elif defined(__GNUC__) && defined(__SSE2__)
  __asm__("" : "+x"(v));
  return v;
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(v));
  return v;
#else
  volatile T held = v;
  return held;
#endif
}

}  // namespace detail

/// a + b, rounded once.
[[nodiscard]] CONVEYOR_HD inline float add(float a, float b) noexcept {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return detail::opaque(a + b);
#endif
}
/// a - b, rounded once.
[[nodiscard]] CONVEYOR_HD inline float sub(float a, float b) noexcept {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return detail::opaque(a - b);
#endif
}
/// a * b, rounded once (never fused with what consumes it).
[[nodiscard]] CONVEYOR_HD inline float mul(float a, float b) noexcept {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return detail::opaque(a * b);
#endif
}
/// a / b, correctly rounded (also under nvcc's `-prec-div=false`).
[[nodiscard]] CONVEYOR_HD inline float div(float a, float b) noexcept {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return detail::opaque(a / b);
#endif
}
/// a * b + c, rounded once.
[[nodiscard]] CONVEYOR_HD inline float fma(float a, float b, float c) noexcept {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return detail::opaque(fmaf(a, b, c));
#endif
}
/// The square root, correctly rounded (also under nvcc's `-prec-sqrt=false`).
[[nodiscard]] CONVEYOR_HD inline float sqrt(float a) noexcept {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return detail::opaque(sqrtf(a));
#endif
}

/// The same in double precision.
[[nodiscard]] CONVEYOR_HD inline double add(double a, double b) noexcept {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return detail::opaque(a + b);
#endif
}
[[nodiscard]] CONVEYOR_HD inline double sub(double a, double b) noexcept {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return detail::opaque(a - b);
#endif
}
[[nodiscard]] CONVEYOR_HD inline double mul(double a, double b) noexcept {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return detail::opaque(a * b);
#endif
}
[[nodiscard]] CONVEYOR_HD inline double div(double a, double b) noexcept {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return detail::opaque(a / b);
#endif
}

}  // namespace ops::exact
}  // namespace v0
}  // namespace conveyor
