#pragma once
/// @file
/// torchvision.transforms.v2.RandomOrder(transforms): all its transforms, in a uniformly random
/// order (`for idx in torch.randperm(len(transforms))`). The order comes from RandomOrder's own
/// stream (Fisher-Yates with unbiased integers: torch's generator is not matched, its
/// distribution is); each inner transform keeps its own stream, at its own position (the ones
/// after RandomOrder's) whatever its place in the order, and appends its ops in that order.
///
/// No inner transform may erase: erasing runs on the normalised output, after every other
/// transform, so it cannot take a random place among them. (random_apply.hpp says why the members
/// are defined after the other containers.)

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/registry.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct RandomOrder {
  static constexpr const char* name = "RandomOrder";
  static constexpr const char* summary =
      "All the `transforms`, in a uniformly random order; none of them may erase (RandomErasing comes after every "
      "other transform).";
  static constexpr FieldName fields[] = {required("transforms")};
  std::vector<PixelTransform> transforms;

  void validate() const;
  [[nodiscard]] int max_ops() const;
  [[nodiscard]] int nodes() const;
  /// The order `rng` draws: a uniformly random permutation of the transforms' indices.
  [[nodiscard]] std::vector<std::size_t> order(CounterRng& rng) const;
  void draw(ProgramDraw& d, int position) const;
};

}  // namespace v0
}  // namespace conveyor

#include <conveyor/transforms/random_apply.hpp>
#include <conveyor/transforms/random_choice.hpp>

namespace conveyor {
inline namespace v0 {

inline void RandomOrder::validate() const {
  detail::validate_inner(name, transforms);
  for (std::size_t k = 0; k < transforms.size(); ++k)
    detail::expect_transform(detail::stage(transforms[k]) == Stage::uint8, name,
                             "transforms[" + std::to_string(k) + "] (" + detail::variant_name(transforms[k]) +
                                 ") applies to " + stage_text(detail::stage(transforms[k])) +
                                 ", after every transform of the uint8 image: it cannot take a random place in the order");
}

inline int RandomOrder::max_ops() const { return detail::ops_of_all(transforms); }

inline int RandomOrder::nodes() const { return detail::container_nodes(transforms); }

inline std::vector<std::size_t> RandomOrder::order(CounterRng& rng) const {
  std::vector<std::size_t> perm(transforms.size());
  for (std::size_t k = 0; k < perm.size(); ++k) perm[k] = k;
  for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[static_cast<std::size_t>(rng.below(i))]);
  return perm;
}

inline void RandomOrder::draw(ProgramDraw& d, int position) const {
  CounterRng rng = d.stream(position);
  for (const std::size_t k : order(rng))
    std::visit([&](const auto& x) { x.draw(d, detail::inner_position(transforms, position, k)); }, transforms[k]);
}

}  // namespace v0
}  // namespace conveyor
