#pragma once
/// @file
/// Beta(alpha, alpha) as torch.distributions.Beta samples it for MixUp and CutMix, and Dirichlet
/// as AugMix samples its weights: the same distributions, rounded to float32 as torch's float32
/// samples are (its generator is not matched). Host only: MixUp's draw happens once a batch, on
/// a worker thread; AugMix's once a sample, while its program is drawn. Each Beta variate is X / (X + Y) of
/// two Gamma(alpha) variates (Marsaglia and Tsang's method, ACM TOMS 26(3), 2000), taken as
/// logarithms so that small alphas (0.2 in torchvision's recipe) do not underflow to 0 / 0.

#include <conveyor/config.hpp>
#include <conveyor/core/rng.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <span>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// A standard normal variate (Box and Muller).
[[nodiscard]] inline double standard_normal(CounterRng& rng) {
  const double u = 1.0 - rng.uniform();  // (0, 1]: its logarithm is finite
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * rng.uniform());
}

/// log of a Gamma(a, 1) variate, a > 0. Below 1, Gamma(a) = Gamma(a + 1) * U^(1/a).
[[nodiscard]] inline double log_gamma_variate(CounterRng& rng, double a) {
  if (a < 1.0) {
    const double u = 1.0 - rng.uniform();
    return log_gamma_variate(rng, a + 1.0) + std::log(u) / a;
  }
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0.0, v = 0.0;
    do {
      x = standard_normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - rng.uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v)))
      return std::log(d) + std::log(v);
  }
}

/// A Beta(a, b) variate, a, b > 0 (MixUp and CutMix round it to float32).
[[nodiscard]] inline double beta_variate(CounterRng& rng, double a, double b) {
  const double lx = log_gamma_variate(rng, a), ly = log_gamma_variate(rng, b);
  return 1.0 / (1.0 + std::exp(ly - lx));
}

/// A Dirichlet(a, ..., a) variate of `out.size()` parts, a > 0, each rounded to float32 (torch's
/// float32 sample; timm's numpy sample as `np.float32` rounds it): Gamma(a) variates over their sum.
/// At most `max_dirichlet_parts` parts.
inline constexpr std::size_t max_dirichlet_parts = 32;
inline void dirichlet_variate(CounterRng& rng, double a, std::span<float> out) {
  std::array<double, max_dirichlet_parts> parts{};
  const std::size_t n = std::min(out.size(), parts.size());
  for (std::size_t i = 0; i < n; ++i) parts[i] = log_gamma_variate(rng, a);
  const double top = n ? *std::max_element(parts.begin(), parts.begin() + n) : 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += (parts[i] = std::exp(parts[i] - top));
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(parts[i] / sum);
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor
