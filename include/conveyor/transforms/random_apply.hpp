#pragma once
/// @file
/// torchvision.transforms.v2.RandomApply(transforms, p=0.5): its transforms, in order, with
/// probability p (skipped when `torch.rand(1) >= p`). Each inner transform keeps its own stream, at
/// its own position (the ones after RandomApply's), drawn or not.
///
/// RandomApply, RandomChoice and RandomOrder hold lists of any registered transform, one another
/// included: each file defines its struct, includes the other two, then defines the members that
/// visit the transforms, so that every alternative is complete by then whichever comes first.
/// Their `transforms` have no default member initializer (torchvision's argument is required
/// too): where it meets one, nvcc's front end instantiates the list's destructor, and with it the
/// variant, which in the container defined first would need the other two complete.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/registry.hpp>

#include <cstddef>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct RandomApply {
  static constexpr const char* name = "RandomApply";
  static constexpr const char* summary = "The `transforms`, in order, with probability `p`; none of them otherwise.";
  static constexpr FieldName fields[] = {required("transforms"), "p"};
  std::vector<PixelTransform> transforms;
  double p = 0.5;

  void validate() const;
  [[nodiscard]] int max_ops() const;
  [[nodiscard]] int nodes() const;
  [[nodiscard]] Stage stage() const;
  void draw(ProgramDraw& d, int position) const;
};

}  // namespace v0
}  // namespace conveyor

#include <conveyor/transforms/random_choice.hpp>
#include <conveyor/transforms/random_order.hpp>

namespace conveyor {
inline namespace v0 {

inline void RandomApply::validate() const {
  detail::expect_probability(name, p);
  detail::validate_inner(name, transforms);
}

inline int RandomApply::max_ops() const { return detail::ops_of_all(transforms); }

inline int RandomApply::nodes() const { return detail::container_nodes(transforms); }

inline Stage RandomApply::stage() const { return detail::latest_stage(transforms); }

inline void RandomApply::draw(ProgramDraw& d, int position) const {
  CounterRng rng = d.stream(position);
  if (applies(rng, p)) detail::draw_in_order(transforms, d, position + 1);
}

}  // namespace v0
}  // namespace conveyor
