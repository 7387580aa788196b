#pragma once
// Goodness-of-fit checks for the tests of random draws: Kolmogorov-Smirnov (one and two samples)
// and chi-square, each against a bound a correct draw exceeds with a small, stated probability.
// The seeds are fixed, so a test either passes or fails every time.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace conveyor_test {

/// The Kolmogorov-Smirnov distance between `samples` and the distribution with CDF `cdf`.
template <class Cdf>
double ks_distance(std::vector<double> samples, Cdf cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = double(samples.size());
  double d = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double f = cdf(samples[i]);
    d = std::max({d, std::abs(f - double(i) / n), std::abs(double(i + 1) / n - f)});
  }
  return d;
}

/// The two-sample Kolmogorov-Smirnov distance between `a` and `b` (ties handled: both empirical
/// CDFs are compared after every distinct value).
inline double ks_distance(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double v = std::min(a[i], b[j]);
    while (i < a.size() && a[i] == v) ++i;
    while (j < b.size() && b[j] == v) ++j;
    d = std::max(d, std::abs(double(i) / double(a.size()) - double(j) / double(b.size())));
  }
  return d;
}

/// The distance a sample of `n` from the right distribution exceeds with probability `alpha`
/// (the asymptotic Kolmogorov bound, sqrt(-ln(alpha / 2) / 2) / sqrt(n)).
inline double ks_bound(std::size_t n, double alpha) { return std::sqrt(-std::log(alpha / 2) / 2) / std::sqrt(double(n)); }

/// The same for two samples of `n` and `m`.
inline double ks_bound(std::size_t n, std::size_t m, double alpha) {
  return std::sqrt(-std::log(alpha / 2) / 2) * std::sqrt(double(n + m) / (double(n) * double(m)));
}

/// Pearson's chi-square of `counts` against equal expected counts.
inline double chi_square_uniform(const std::vector<double>& counts) {
  double total = 0;
  for (const double c : counts) total += c;
  const double expected = total / double(counts.size());
  double x = 0;
  for (const double c : counts) x += (c - expected) * (c - expected) / expected;
  return x;
}

/// The chi-square value `dof` degrees of freedom exceed with probability about 1e-4
/// (Wilson-Hilferty's approximation at z = 3.72).
inline double chi_square_bound(int dof) {
  const double k = dof, z = 3.72;
  const double t = 1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k));
  return k * t * t * t;
}

/// Whether `hits` of `n` trials lie within `sigmas` standard deviations of a probability `p`.
inline bool binomial_fits(std::size_t hits, std::size_t n, double p, double sigmas = 4.5) {
  const double mean = double(n) * p, sd = std::sqrt(double(n) * p * (1 - p));
  return std::abs(double(hits) - mean) <= sigmas * sd + 0.5;
}

}  // namespace conveyor_test
