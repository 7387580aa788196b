#pragma once
/// @file
/// torchvision.transforms.v2.RandAugment(num_ops=2, magnitude=9, num_magnitude_bins=31,
/// interpolation=NEAREST, fill=None): `num_ops` ops of its `_AUGMENTATION_SPACE`
/// (augmentation_space.hpp) in turn, as its `forward` draws them (_auto_augment.py:425-440): each
/// op uniformly (`torch.randint(14)`), with repetition, at the fixed bin `magnitude`, negated for a
/// signed op when `torch.rand(()) <= 0.5`. Host-only: it chooses records.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/augmentation_space.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <string>

namespace conveyor {
inline namespace v0 {

struct RandAugment {
  static constexpr const char* name = "RandAugment";
  static constexpr const char* summary =
      "`num_ops` ops of RandAugment's space, each at bin `magnitude` of `num_magnitude_bins`.";
  static constexpr FieldName fields[] = {"num_ops", "magnitude", "num_magnitude_bins", "interpolation", "fill", "v1"};
  int num_ops = 2;
  int magnitude = 9;  ///< the bin of every op's magnitudes
  int num_magnitude_bins = 31;
  ops::pixel::Interpolation interpolation = ops::pixel::Interpolation::nearest;
  Fill fill = Fill::none();
  bool v1 = false;  ///< torchvision v1's class (augmentation_space.hpp says where it differs), on PIL images

  void validate() const {
    detail::expect_transform(num_ops >= 0 && num_ops <= ops::pixel::max_program_ops, name,
                             "num_ops must be in [0, " + std::to_string(ops::pixel::max_program_ops) +
                                 "] (a sample's program holds " + std::to_string(ops::pixel::max_program_ops) +
                                 " ops), got " + std::to_string(num_ops));
    detail::expect_policy_arguments(name, num_magnitude_bins, fill);
    detail::expect_transform(magnitude >= 0 && magnitude < num_magnitude_bins, name,
                             "magnitude must be a bin in [0, num_magnitude_bins) = [0, " +
                                 std::to_string(num_magnitude_bins) + "), got " + std::to_string(magnitude));
  }
  void validate_pil() const {}  // Pillow's ops (augmentation_space.hpp's apply_policy_op)
  void validate_tensor() const { detail::expect_v1_on_pil(name, v1); }
  [[nodiscard]] int max_ops() const { return num_ops; }

  /// One op and its magnitude drawn from `rng` for a `width` x `height` image.
  [[nodiscard]] PolicyChoice choose(CounterRng& rng, int width, int height) const {
    const PolicyEntry& entry = rand_augment_space[rng.below(rand_augment_space.size())];
    const int bin = entry.magnitudes.kind == Magnitudes::Kind::none ? -1 : magnitude;
    return detail::choose_magnitude(rng, entry, num_magnitude_bins, bin, width, height, v1);
  }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    for (int k = 0; k < num_ops; ++k)
      detail::apply_policy_op(d, choose(rng, d.width(), d.height()), interpolation, fill, d.pil(position), v1);
  }
};

}  // namespace v0
}  // namespace conveyor
