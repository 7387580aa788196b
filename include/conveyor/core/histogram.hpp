#pragma once
/// @file
/// `LatencyHistogram`: durations counted in fixed buckets, as Prometheus histograms expose them
/// (cumulative counts per upper bound, a sum and a count). Not synchronised: its owner guards it.

#include <conveyor/config.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {

struct LatencyHistogram {
  /// Upper bounds in seconds, from 100 us to 10 s: a batch ready at once to a stalled loader.
  static constexpr std::array<double, 11> bounds{1e-4, 2.5e-4, 1e-3, 2.5e-3, 1e-2, 2.5e-2, 0.1, 0.25, 1.0, 2.5, 10.0};

  std::array<std::uint64_t, bounds.size()> counts{};  ///< per bucket, not cumulative
  std::uint64_t count = 0;                            ///< every observation, +Inf included
  double sum = 0;                                     ///< seconds

  void observe(double seconds) noexcept {
    for (std::size_t i = 0; i < bounds.size(); ++i)
      if (seconds <= bounds[i]) {
        ++counts[i];
        break;
      }
    ++count;
    sum += seconds;
  }
  /// Observations at or below `bounds[i]`.
  [[nodiscard]] std::uint64_t cumulative(std::size_t i) const noexcept {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k <= i; ++k) n += counts[k];
    return n;
  }
};

}  // namespace v0
}  // namespace conveyor
