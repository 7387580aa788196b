#pragma once
/// @file
/// torchvision.transforms.v2.RandomPosterize(bits, p=0.5): `posterize(bits)` with probability p
/// (skipped when `torch.rand(1) >= p`). `bits` has no default, as in torchvision.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/posterize.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <optional>
#include <string>

namespace conveyor {
inline namespace v0 {

struct RandomPosterize {
  static constexpr const char* name = "RandomPosterize";
  static constexpr const char* summary = "Keeps the `bits` high bits of every value with probability `p`.";
  static constexpr FieldName fields[] = {required("bits"), "p"};
  std::optional<int> bits{};  ///< required: bits kept per channel, 0 to 8
  double p = 0.5;

  void validate() const {
    detail::expect_transform(bits.has_value(), name, "bits is required (0 to 8)");
    detail::expect_transform(*bits >= 0 && *bits <= 8, name, "bits must be in [0, 8], got " + std::to_string(*bits));
    detail::expect_probability(name, p);
  }
  /// On a PIL image: the same op; ImageOps.posterize takes 1 to 8 bits.
  void validate_pil() const {
    detail::expect_transform(*bits >= 1, name, "bits must be in [1, 8] on a PIL image (ImageOps.posterize), got 0");
  }
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    d.add(ops::pixel::posterize(*bits));
    if (d.describing()) d.describe({"posterize", {DrawnArg::integer("bits", *bits)}});
  }
};

}  // namespace v0
}  // namespace conveyor
