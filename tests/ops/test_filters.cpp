// Every resampling filter (ops::Resampling, looped over its names) against a reference written
// from its library's source: Pillow 13's ImagingResample (precompute_coeffs, normalize_coeffs_8bpc,
// the passes it skips and their order) and ImagingScaleAffine for NEAREST; torch's uint8 interpolate
// for bilinear and bicubic (antialiased), bilinear without antialiasing, and nearest_idx for
// NEAREST and NEAREST_EXACT. The Python parity tests compare the same against Pillow and torch
// themselves; this one runs where they are absent and reaches sizes from 1 x 1.

#include <conveyor/ops/cpu/resample.hpp>

#include <catch2/catch.hpp>

#include "support/images.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

using namespace conveyor;
using conveyor_test::random_image;

namespace {

constexpr double kPi = 3.14159265358979323846;

double sinc(double x) { return x == 0.0 ? 1.0 : std::sin(x * kPi) / (x * kPi); }

/// The filter and its support as the libraries define them (Resample.c; torch's UpSample.h).
double reference_filter(const std::string& name, double x) {
  if (name == "pil_box") return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
  if (name == "pil_hamming") {
    x = std::fabs(x);
    if (x == 0.0) return 1.0;
    if (x >= 1.0) return 0.0;
    return std::sin(x * kPi) / (x * kPi) * (double(0.54f) + double(0.46f) * std::cos(x * kPi));
  }
  if (name == "pil_bicubic") {
    x = std::fabs(x);
    if (x < 1.0) return (1.5 * x - 2.5) * x * x + 1;
    if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * -0.5;
    return 0.0;
  }
  if (name == "bicubic") {
    x = std::fabs(x);
    if (x < 1.0) return (1.5 * x - 2.5) * x * x + 1;
    if (x < 2.0) return ((-0.5 * x + 2.5) * x - 4) * x + 2;
    return 0.0;
  }
  if (name == "bicubic_no_antialias") {  // torch's A = -0.75: cubic_convolution1 and 2
    constexpr double A = -0.75;
    x = std::fabs(x);
    if (x < 1.0) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2.0) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0.0;
  }
  if (name == "pil_lanczos") return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3) : 0.0;
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

double reference_support(const std::string& name) {
  if (name == "pil_box") return 0.5;
  if (name == "bicubic" || name == "bicubic_no_antialias" || name == "pil_bicubic") return 2.0;
  if (name == "pil_lanczos") return 3.0;
  return 1.0;
}

/// One axis' taps and integer weights.
struct Axis {
  std::vector<int> lo, n;
  std::vector<std::vector<long>> k;
  int precision = 22;
};

Axis reference_axis(const std::string& name, int in, int out) {
  Axis a;
  const double scale = double(in) / out;
  if (name == "nearest" || name == "nearest_exact") {  // UpSample.h: nearest_idx, float32 scale
    const float s = float(in) / float(out);
    for (int o = 0; o < out; ++o) {
      const float at = name == "nearest" ? float(o) * s : float((o + 0.5) * double(s));
      a.lo.push_back(std::min(int(std::floor(at)), in - 1));
      a.n.push_back(1);
      a.k.push_back({1L << 14});
    }
    a.precision = 14;
    return a;
  }
  if (name == "pil_nearest") {  // ImagingScaleAffine: xo = a[0] * 0.5, then xo += a[0] per pixel
    double xo = scale * 0.5;
    for (int o = 0; o < out; ++o, xo += scale) {
      a.lo.push_back(int(xo));
      a.n.push_back(1);
      a.k.push_back({1L << 22});
    }
    return a;
  }
  // torch without antialiasing: the filter at its own width whatever the scale
  const double filterscale = name.ends_with("_no_antialias") ? 1.0 : std::max(scale, 1.0);
  const double support = reference_support(name) * filterscale;
  std::vector<std::vector<double>> kk;
  double wt_max = 0;
  for (int o = 0; o < out; ++o) {
    if (name == "bicubic_no_antialias") {  // the float path's four taps about x, clamped into the image, merged
      const double x = (o + 0.5) * scale - 0.5;
      const int from = int(std::floor(x)) - 1, lo = std::max(from, 0), n = std::min(from + 3, in - 1) - lo + 1;
      std::vector<double> k(static_cast<std::size_t>(n));
      for (int t = from; t < from + 4; ++t) k[std::size_t(std::clamp(t, 0, in - 1) - lo)] += reference_filter(name, t - x);
      double ww = 0;
      for (double v : k) ww += v;
      for (double& v : k) wt_max = std::max(wt_max, v /= ww);
      a.lo.push_back(lo);
      a.n.push_back(n);
      kk.push_back(k);
      continue;
    }
    const double center = (o + 0.5) * scale;
    const int lo = std::max(int(center - support + 0.5), 0);
    const int n = std::min(int(center + support + 0.5), in) - lo;
    std::vector<double> k(std::size_t(std::max(n, 0)));
    double ww = 0;
    for (int j = 0; j < n; ++j) ww += k[j] = reference_filter(name, (j + lo - center + 0.5) * (1.0 / filterscale));
    for (double& v : k) wt_max = std::max(wt_max, v = ww != 0.0 ? v / ww : v);
    a.lo.push_back(lo);
    a.n.push_back(n);
    kk.push_back(k);
  }
  if (name.rfind("pil_", 0) != 0)  // torch: the most fraction bits that keep the largest weight in 16 bits
    for (a.precision = 0; a.precision < 22; ++a.precision)
      if (int(0.5 + wt_max * (1 << (a.precision + 1))) >= (1 << 15)) break;
  for (const auto& k : kk) {
    a.k.emplace_back();
    for (double v : k) {
      const double s = v * double(1 << a.precision);
      a.k.back().push_back(long(v < 0 ? -0.5 + s : 0.5 + s));
    }
  }
  return a;
}

/// One pass of `img` (w x h, RGB) along x (`horizontal`) or y to `out` pixels, rounded and clamped.
std::vector<std::uint8_t> reference_pass(const std::string& name, const std::vector<std::uint8_t>& img, int w, int h,
                                         int out, bool horizontal) {
  const Axis a = reference_axis(name, horizontal ? w : h, out);
  const int ow = horizontal ? out : w, oh = horizontal ? h : out;
  std::vector<std::uint8_t> res(std::size_t(ow) * oh * 3);
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < 3; ++c) {
        const int o = horizontal ? x : y;
        long acc = 1L << (a.precision - 1);
        for (int j = 0; j < a.n[o]; ++j) {
          const int sx = horizontal ? a.lo[o] + j : x, sy = horizontal ? y : a.lo[o] + j;
          acc += a.k[o][j] * img[(std::size_t(sy) * w + sx) * 3 + c];
        }
        res[(std::size_t(y) * ow + x) * 3 + c] = std::uint8_t(std::clamp(acc >> a.precision, 0L, 255L));
      }
  return res;
}

/// `img` (w x h, RGB) resized to ow x oh in two passes. torch: rows first. Pillow 13: a pass
/// whose size does not change is skipped (the result must not depend on it), and the columns go
/// first when the height shrinks by more than twice what the width does.
std::vector<std::uint8_t> reference_resize(const std::string& name, const std::vector<std::uint8_t>& img, int w, int h,
                                           int ow, int oh) {
  const bool pil = name.rfind("pil_", 0) == 0;
  if (pil && h - oh > 0 && h - oh > (w - ow) * 2) {
    const auto mid = oh != h ? reference_pass(name, img, w, h, oh, false) : img;
    return ow != w ? reference_pass(name, mid, w, oh, ow, true) : mid;
  }
  const auto mid = ow != w || !pil ? reference_pass(name, img, w, h, ow, true) : img;
  return oh != h || !pil ? reference_pass(name, mid, ow, h, oh, false) : mid;
}

std::vector<std::uint8_t> ours(ops::Resampling f, const std::vector<std::uint8_t>& img, int w, int h, int ow, int oh) {
  ops::SamplePlan p;
  p.out_width = ow;
  p.out_height = oh;
  p.x = {0.0, double(w) / ow, 0, ow, 0, w, f};
  p.y = {0.0, double(h) / oh, 0, oh, 0, h, f};
  p.src = {0, 3, std::int64_t{w} * 3, w, h};
  ops::OutputParams params;
  params.dtype = DType::u8;
  params.layout = Layout::NHWC;
  std::vector<std::uint8_t> out(std::size_t(ow) * oh * 3, 0xCD);
  ops::cpu::ResampleScratch s;
  ops::cpu::resample(img.data(), p, params, out.data(), s);
  return out;
}

}  // namespace

TEST_CASE("every resampling filter equals its library's arithmetic, from 1 x 1 up and down", "[ops][resample]") {
  const auto names = ops::enum_names(ops::Resampling{});
  CounterRng rng(91, 0, 0, RngOp::user);
  for (std::size_t f = 0; f < names.size(); ++f) {
    const std::string name = names[f];
    int trials = 0;
    constexpr std::array<std::array<int, 4>, 5> small{{{1, 1, 1, 1}, {1, 1, 5, 3}, {7, 1, 1, 1}, {9, 9, 9, 9}, {2, 3, 17, 1}}};
    for (const auto [w, h, ow, oh] : small) {
      INFO(name << " " << w << "x" << h << " -> " << ow << "x" << oh);
      const auto img = random_image(w, h, 3, 500 + trials++);
      REQUIRE(ours(static_cast<ops::Resampling>(f), img, w, h, ow, oh) == reference_resize(name, img, w, h, ow, oh));
    }
    for (int trial = 0; trial < 30; ++trial) {
      const int w = 1 + int(rng.below(300)), h = 1 + int(rng.below(200));
      // Mostly down, as crops are, some up; one axis kept now and then (a pass Pillow skips).
      const int ow = trial % 7 == 0 ? w : 1 + int(rng.below(trial % 3 == 0 ? 400 : 120));
      const int oh = trial % 5 == 0 ? h : 1 + int(rng.below(trial % 4 == 0 ? 300 : 120));
      INFO(name << " " << w << "x" << h << " -> " << ow << "x" << oh);
      const auto img = random_image(w, h, 3, 700 + trial);
      REQUIRE(ours(static_cast<ops::Resampling>(f), img, w, h, ow, oh) == reference_resize(name, img, w, h, ow, oh));
    }
  }
}

TEST_CASE("cubic weights are signed, Pillow's at 22 bits, torch's within 16", "[ops][resample]") {
  // A downscale by 2.5 puts the cubic's negative lobe under taps: rounded away from zero.
  ops::AxisPlan a{0.0, 2.5, 0, 40, 0, 100, ops::Resampling::pil_bicubic};
  bool negative = false;
  for (std::int32_t r = 0; r < a.resized; ++r) {
    const ops::AxisTaps t = ops::resized_taps(a, r);
    for (std::int32_t j = 0; j < t.count; ++j) {
      const double w = ops::tap_weight(t, j);
      if (w < 0) {
        negative = true;
        REQUIRE(ops::fixed_weight(w, 22) == static_cast<std::int32_t>(w * 4194304.0 - 0.5));
      }
    }
  }
  REQUIRE(negative);
  REQUIRE(ops::axis_precision(a) == 22);
  a.filter = ops::Resampling::bicubic;
  const int precision = ops::axis_precision(a);
  REQUIRE(precision <= 16);
  for (std::int32_t r = 0; r < a.resized; ++r) {
    const ops::AxisTaps t = ops::resized_taps(a, r);
    for (std::int32_t j = 0; j < t.count; ++j) REQUIRE(std::abs(ops::fixed_weight(ops::tap_weight(t, j), precision)) < 32768);
  }
  REQUIRE(ops::fixed_weight(-0.25, 14) == -4096);
  REQUIRE(ops::fixed_weight(-0.5 / 16384, 14) == -1);  // half a unit: away from zero
}
