#pragma once
/// @file
/// Standard normal values as a pure function of (key, index), the same bits on the CPU and the
/// GPU: RandomErasing's `value="random"`. torch draws its own values with its own generator, so
/// only their distribution can match (and does: a statistical test checks it against
/// `torch.normal`). Philox4x32-10 turns (key, index / 4) into four 32-bit words; word index % 4
/// becomes p = (2 (w >> 9) + 1) / 2^24 (odd multiples of 2^-24, symmetric about 1/2) and then
/// a normal value through Wichura's inverse CDF (AS 241, PPND7: about 1e-7 from the true quantile),
/// with a logarithm of plain float operations instead of either library's `logf`. Values lie
/// within +-5.3 (p of 2^-24): a tail of 1e-7 is cut.

#include <conveyor/config.hpp>
#include <conveyor/ops/convert.hpp>
#include <conveyor/ops/exact_float.hpp>

#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

namespace detail {

/// Word `lane` of Philox4x32-10's block (counter, 0, 0, 0) under `key` (core/rng.hpp's generator,
/// written for device code).
[[nodiscard]] CONVEYOR_HD inline std::uint32_t philox_word(std::uint64_t counter, std::uint64_t key, int lane) noexcept {
  std::uint32_t c0 = static_cast<std::uint32_t>(counter), c1 = static_cast<std::uint32_t>(counter >> 32), c2 = 0,
                c3 = 0;
  std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c0, p1 = std::uint64_t{0xCD9E8D57u} * c2;
    const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1 ^ k0, n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<std::uint32_t>(p1);
    c3 = static_cast<std::uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return lane == 0 ? c0 : (lane == 1 ? c1 : (lane == 2 ? c2 : c3));
}

/// The natural logarithm of a normal positive float, from its exponent and atanh's series.
[[nodiscard]] CONVEYOR_HD inline float log_positive(float x) noexcept {
  using namespace exact;
  const std::uint32_t bits = float_bits(x);
  int e = static_cast<int>(bits >> 23) - 127;
  float m = bits_float((bits & 0x7FFFFFu) | 0x3F800000u);  // [1, 2)
  if (m > 1.41421356f) {
    m = mul(m, 0.5f);
    ++e;
  }
  const float f = sub(m, 1.0f);  // exact (Sterbenz)
  const float s = div(f, add(2.0f, f)), z = mul(s, s);
  float series = 0.222222222f;  // 2/9
  series = add(mul(series, z), 0.285714286f);  // 2/7
  series = add(mul(series, z), 0.4f);
  series = add(mul(series, z), 0.666666667f);
  const float log_m = add(mul(2.0f, s), mul(mul(s, z), series));
  return add(mul(static_cast<float>(e), 0.693147181f), log_m);
}

/// A rational function of `r`, numerator and denominator coefficients lowest first (Horner's rule).
template <std::size_t N, std::size_t D>
[[nodiscard]] CONVEYOR_HD inline float rational(float r, const float (&num)[N], const float (&den)[D]) noexcept {
  using namespace exact;
  float n = num[N - 1], d = den[D - 1];
  for (std::size_t k = N - 1; k-- > 0;) n = add(mul(n, r), num[k]);
  for (std::size_t k = D - 1; k-- > 0;) d = add(mul(d, r), den[k]);
  return div(n, d);
}

}  // namespace detail

/// The standard normal quantile of p in (0, 1) (AS 241, PPND7).
[[nodiscard]] CONVEYOR_HD inline float normal_quantile(float p) noexcept {
  using namespace exact;
  const float q = sub(p, 0.5f);
  if ((q < 0.0f ? -q : q) <= 0.425f) {
    const float a[4] = {3.3871327179f, 50.434271938f, 159.29113202f, 59.109374720f};
    const float b[4] = {1.0f, 17.895169469f, 78.757757664f, 67.187563600f};
    return mul(q, detail::rational(sub(0.180625f, mul(q, q)), a, b));
  }
  float r = exact::sqrt(-detail::log_positive(q < 0.0f ? p : sub(1.0f, p)));
  float z;
  if (r <= 5.0f) {
    const float c[4] = {1.4234372777f, 2.7568153900f, 1.3067284816f, 0.17023821103f};
    const float d[3] = {1.0f, 0.73700164250f, 0.12021132975f};
    z = detail::rational(sub(r, 1.6f), c, d);
  } else {
    const float e[4] = {6.6579051150f, 3.0812263860f, 0.42868294337f, 0.017337203997f};
    const float f[3] = {1.0f, 0.24197894225f, 0.012258202635f};
    z = detail::rational(sub(r, 5.0f), e, f);
  }
  return q < 0.0f ? -z : z;
}

/// Standard normal value number `index` of the stream `key`.
[[nodiscard]] CONVEYOR_HD inline float standard_normal(std::uint64_t key, std::uint64_t index) noexcept {
  const std::uint32_t w = detail::philox_word(index / 4, key, static_cast<int>(index % 4));
  const float p = static_cast<float>(2u * (w >> 9) + 1u) * 5.9604644775390625e-8f;  // 2^-24, exact
  return normal_quantile(p);
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor
