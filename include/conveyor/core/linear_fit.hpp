#pragma once
/// @file
/// `LinearFit`: a least-squares line y = a + b x kept as running sums, so a counter can be
/// accumulated where it is measured, summed across sources and fitted when it is read.

#include <conveyor/config.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {

struct LinearFit {
  std::uint64_t count = 0;
  double sum_x = 0, sum_y = 0, sum_xx = 0, sum_xy = 0;

  void add(double x, double y) noexcept {
    ++count;
    sum_x += x;
    sum_y += y;
    sum_xx += x * x;
    sum_xy += x * y;
  }
  LinearFit& operator+=(const LinearFit& o) noexcept {
    count += o.count;
    sum_x += o.sum_x;
    sum_y += o.sum_y;
    sum_xx += o.sum_xx;
    sum_xy += o.sum_xy;
    return *this;
  }

  /// The slope b. Where the points cannot show a positive slope with a non-negative intercept
  /// (all x alike, too few points, noise), the line through the origin and the means: y = (Σy/Σx) x.
  [[nodiscard]] double slope() const noexcept {
    const double n = double(count), var = n * sum_xx - sum_x * sum_x;
    if (count >= 2 && var > 1e-9 * n * sum_xx) {
      const double b = (n * sum_xy - sum_x * sum_y) / var;
      if (b > 0 && sum_y - b * sum_x >= 0) return b;
    }
    return sum_x > 0 ? sum_y / sum_x : 0.0;
  }
  /// The intercept a that goes with `slope()`.
  [[nodiscard]] double intercept() const noexcept {
    if (count == 0) return 0;
    const double a = (sum_y - slope() * sum_x) / double(count);
    return a > 0 ? a : 0.0;
  }
};

}  // namespace v0
}  // namespace conveyor
