#pragma once
/// @file
/// torchvision.transforms.v2.TrivialAugmentWide(num_magnitude_bins=31, interpolation=NEAREST,
/// fill=None): one op of its `_AUGMENTATION_SPACE` (augmentation_space.hpp) per sample, as its
/// `forward` draws it (_auto_augment.py:498-514): the op uniformly (`torch.randint(14)`), then for an
/// op with magnitudes a bin uniformly (`torch.randint(num_magnitude_bins)`), negated for a signed op
/// when `torch.rand(()) <= 0.5`. Host-only: it chooses a record.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/augmentation_space.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {

struct TrivialAugmentWide {
  static constexpr const char* name = "TrivialAugmentWide";
  static constexpr const char* summary =
      "One op of TrivialAugment's wide space, at a random magnitude bin, for every sample.";
  static constexpr FieldName fields[] = {"num_magnitude_bins", "interpolation", "fill", "v1"};
  int num_magnitude_bins = 31;
  ops::pixel::Interpolation interpolation = ops::pixel::Interpolation::nearest;
  Fill fill = Fill::none();
  bool v1 = false;  ///< torchvision v1's class (augmentation_space.hpp says where it differs), on PIL images

  void validate() const { detail::expect_policy_arguments(name, num_magnitude_bins, fill); }
  void validate_pil() const {}  // Pillow's ops (augmentation_space.hpp's apply_policy_op)
  void validate_tensor() const { detail::expect_v1_on_pil(name, v1); }
  [[nodiscard]] int max_ops() const { return 1; }

  /// The op and magnitude drawn from `rng` for a `width` x `height` image.
  [[nodiscard]] PolicyChoice choose(CounterRng& rng, int width, int height) const {
    const PolicyEntry& entry = trivial_augment_wide_space[rng.below(trivial_augment_wide_space.size())];
    const int bin = entry.magnitudes.kind == Magnitudes::Kind::none
                        ? -1
                        : static_cast<int>(rng.below(static_cast<std::uint64_t>(num_magnitude_bins)));
    return detail::choose_magnitude(rng, entry, num_magnitude_bins, bin, width, height, v1);
  }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    detail::apply_policy_op(d, choose(rng, d.width(), d.height()), interpolation, fill, d.pil(position), v1);
  }
};

}  // namespace v0
}  // namespace conveyor
