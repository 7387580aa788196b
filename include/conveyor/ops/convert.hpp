#pragma once
/// @file
/// Per-element conversions shared by the CPU loops and the CUDA kernel: float -> u8 rounding,
/// float -> f16/bf16 with round-to-nearest-even done in integer arithmetic, so both backends give
/// the same bits without relying on either's conversion instructions.

#include <conveyor/config.hpp>

#include <cstdint>
#include <cstring>
#include <math.h>  // rintf in the global namespace, as device code spells it

namespace conveyor {
inline namespace v0 {
namespace ops {

/// The IEEE bits of `f`.
[[nodiscard]] CONVEYOR_HD inline std::uint32_t float_bits(float f) noexcept {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

/// The float with IEEE bits `u`.
[[nodiscard]] CONVEYOR_HD inline float bits_float(std::uint32_t u) noexcept {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// Rounds to the nearest integer (ties to even) and clamps to [0, 255].
[[nodiscard]] CONVEYOR_HD inline std::uint8_t to_u8(float v) noexcept {
  const float r = rintf(v);
  return static_cast<std::uint8_t>(r <= 0.0f ? 0.0f : (r >= 255.0f ? 255.0f : r));
}

/// IEEE binary16 bits of `f`, rounded to nearest even; overflow gives infinity, NaN stays NaN.
[[nodiscard]] CONVEYOR_HD inline std::uint16_t to_f16_bits(float f) noexcept {
  std::uint32_t x = float_bits(f);
  const std::uint32_t sign = x & 0x80000000u;
  x ^= sign;
  std::uint32_t h;
  if (x >= 0x47800000u) {  // |f| >= 65536, inf or NaN
    h = x > 0x7F800000u ? 0x7E00u : 0x7C00u;
  } else if (x < 0x38800000u) {  // below the smallest normal half: let a float add do the rounding
    const float magic = bits_float(0x3F000000u);  // 0.5f shifts the mantissa into place
    h = float_bits(bits_float(x) + magic) - 0x3F000000u;
  } else {
    const std::uint32_t odd = (x >> 13) & 1u;
    x += 0xC8000FFFu;  // rebias the exponent by (15 - 127) << 23, plus the rounding bias 0xFFF
    x += odd;
    h = x >> 13;
  }
  return static_cast<std::uint16_t>(h | (sign >> 16));
}

/// bfloat16 bits of `f`, rounded to nearest even; NaN stays a quiet NaN.
[[nodiscard]] CONVEYOR_HD inline std::uint16_t to_bf16_bits(float f) noexcept {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/// The float a binary16 value holds (for tests and tools).
[[nodiscard]] CONVEYOR_HD inline float f16_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1F) return bits_float(sign | 0x7F800000u | (mant << 13));
  if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  // subnormal: mant * 2^-24, exact in float
  const float v = static_cast<float>(mant) * bits_float(0x33800000u);
  return sign ? -v : v;
}

/// The float a bfloat16 value holds.
[[nodiscard]] CONVEYOR_HD inline float bf16_to_float(std::uint16_t b) noexcept {
  return bits_float(std::uint32_t{b} << 16);
}

}  // namespace ops
}  // namespace v0
}  // namespace conveyor
