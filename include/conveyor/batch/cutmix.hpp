#pragma once
/// @file
/// torchvision.transforms.v2.CutMix(alpha, num_classes) on a batch (transforms/v2/_augment.py):
/// `lam = float(Beta(alpha, alpha).sample())`, a centre `r_x = randint(W)`, `r_y = randint(H)`,
/// half sizes `int(r * W)` and `int(r * H)` with `r = 0.5 * sqrt(1 - lam)` (float64), the box
/// clamped to the image, and `lam_adjusted = 1 - box area / (W * H)` for the labels, which mix as
/// MixUp's do with it. The box's pixels come from the partner sample unchanged, in any dtype.

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/batch/beta.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace conveyor {
inline namespace v0 {

struct CutMix {
  static constexpr const char* name = "CutMix";
  double alpha = 1.0;            ///< Beta(alpha, alpha)'s parameter, > 0
  std::int64_t num_classes = 0;  ///< the width of the soft targets, > 0

  void validate() const { detail::validate_mix_arguments(name, alpha, num_classes); }
  void validate(const MixGeometry&) const {}

  [[nodiscard]] BatchMix draw(CounterRng& rng, const MixGeometry& g) const {
    BatchMix m;
    m.kind = BatchMix::Kind::cutmix;
    m.lam = static_cast<float>(detail::beta_variate(rng, alpha, alpha));  // torch samples in float32
    const std::int64_t W = g.width, H = g.height;
    const auto r_x = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(W)));
    const auto r_y = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(H)));
    const double r = 0.5 * std::sqrt(1.0 - static_cast<double>(m.lam));
    const auto r_w_half = static_cast<std::int64_t>(r * static_cast<double>(W));  // int(): towards zero
    const auto r_h_half = static_cast<std::int64_t>(r * static_cast<double>(H));
    m.x1 = std::max<std::int64_t>(r_x - r_w_half, 0);
    m.y1 = std::max<std::int64_t>(r_y - r_h_half, 0);
    m.x2 = std::min(r_x + r_w_half, W);
    m.y2 = std::min(r_y + r_h_half, H);
    m.label_lam = 1.0 - static_cast<double>((m.x2 - m.x1) * (m.y2 - m.y1)) / static_cast<double>(W * H);
    return m;
  }

  /// Copies the box of `partner` (sample i - 1 as it was before the batch transform) into `self`.
  static void apply(void* self, const void* partner, const MixGeometry& g, const BatchMix& m) noexcept {
    for_each_box_row(g, m, [&](std::size_t at, std::size_t bytes) {
      std::memcpy(static_cast<std::byte*>(self) + at, static_cast<const std::byte*>(partner) + at, bytes);
    });
  }
  /// Swaps the boxes of `a` and `b` (timm's mirrored pairs).
  static void apply_both(void* a, void* b, const MixGeometry& g, const BatchMix& m) noexcept {
    for_each_box_row(g, m, [&](std::size_t at, std::size_t bytes) {
      auto* x = static_cast<std::byte*>(a) + at;
      std::swap_ranges(x, x + bytes, static_cast<std::byte*>(b) + at);
    });
  }

  /// `row(byte offset, bytes)` for each contiguous row of the box in a sample.
  template <class Row>
  static void for_each_box_row(const MixGeometry& g, const BatchMix& m, Row row) {
    if (m.x2 <= m.x1 || m.y2 <= m.y1) return;
    const std::size_t e = dtype_size(g.dtype);
    const auto rows = [&](std::int64_t plane_offset, std::int64_t row_elems, std::int64_t col, std::int64_t cols) {
      for (std::int64_t y = m.y1; y < m.y2; ++y)
        row(static_cast<std::size_t>(plane_offset + y * row_elems + col) * e, static_cast<std::size_t>(cols) * e);
    };
    if (g.layout == Layout::NCHW) {
      for (std::int64_t c = 0; c < g.channels; ++c) rows(c * g.height * g.width, g.width, m.x1, m.x2 - m.x1);
    } else {
      rows(0, g.width * g.channels, m.x1 * g.channels, (m.x2 - m.x1) * g.channels);
    }
  }
};

}  // namespace v0
}  // namespace conveyor
