#pragma once
/// @file
/// torchvision.transforms.v2.RandomChoice(transforms, p=None): one of its transforms, picked with
/// probability `p[k] / sum(p)` (`torch.multinomial(torch.tensor(p), 1)`; every one equally likely
/// when `p` is empty). The pick comes from RandomChoice's own stream: a uniform one as an unbiased
/// integer below the count, a weighted one as the first transform of positive weight whose
/// cumulative normalised weight exceeds a uniform number in [0, 1) (torch's generator is not
/// matched, its distribution is). Each inner transform keeps its own stream, at its own position
/// (the ones after RandomChoice's), picked or not.
///
/// Erasing runs on the normalised output, after every other transform, and the others on the
/// uint8 image before it: a choice between an erasing transform and one that does not erase has
/// no single place in a torchvision pipeline, so the transforms either all erase (nothing but
/// RandomErasing, nested ones counted) or none does.
/// (random_apply.hpp says why the members are defined after the other containers.)

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/registry.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <optional>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct RandomChoice {
  static constexpr const char* name = "RandomChoice";
  static constexpr const char* summary =
      "One of the `transforms`, picked with probability `p[k] / sum(p)`; every one equally likely when `p` is None. "
      "Their transforms all apply to one stage of the output's making (the uint8 image; the float image, as "
      "GaussianNoise after ToDtype; the normalised output, as RandomErasing).";
  static constexpr FieldName fields[] = {required("transforms"), "p"};
  std::vector<PixelTransform> transforms;
  std::vector<double> p{};  ///< one weight per transform (normalised by their sum), or empty: uniform

  void validate() const;
  [[nodiscard]] int max_ops() const;
  [[nodiscard]] int nodes() const;
  [[nodiscard]] Stage stage() const;
  /// The index of the transform `rng` picks.
  [[nodiscard]] std::size_t pick(CounterRng& rng) const;
  void draw(ProgramDraw& d, int position) const;
};

}  // namespace v0
}  // namespace conveyor

#include <conveyor/transforms/random_apply.hpp>
#include <conveyor/transforms/random_order.hpp>

namespace conveyor {
inline namespace v0 {

inline void RandomChoice::validate() const {
  static constexpr const char* stage_rule =
      "its transforms must all apply to one stage (the uint8 image, the float image before Normalize, the "
      "normalised output), as each stage follows the one before, so a choice across stages has no place in the "
      "pipeline";
  detail::validate_inner(name, transforms);
  detail::expect_transform(p.empty() || p.size() == transforms.size(), name,
                           "p needs one weight per transform (" + std::to_string(transforms.size()) + "), got " +
                               std::to_string(p.size()));
  double total = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    detail::expect_transform(std::isfinite(p[k]) && p[k] >= 0.0, name,
                             "p[" + std::to_string(k) + "] must be finite and non negative, got " + detail::shown(p[k]));
    total += p[k];
  }
  detail::expect_transform(p.empty() || (total > 0.0 && std::isfinite(total)), name,
                           "p must have a positive, finite sum, got " + detail::shown(total));
  // Every leaf of every transform applies to one stage.
  const auto stage_of = [&](std::size_t k) {
    bool mixed = false;
    std::optional<Stage> one;
    auto see = [&](const char*, Stage stage) {
      mixed = mixed || (one && *one != stage);
      one = stage;
    };
    detail::for_each_leaf(std::span(&transforms[k], 1), see);
    detail::expect_transform(!mixed, name,
                             "transforms[" + std::to_string(k) + "] (" + detail::variant_name(transforms[k]) +
                                 ") holds transforms of more than one stage; " + stage_rule);
    return one.value_or(Stage::uint8);
  };
  const Stage first = stage_of(0);
  for (std::size_t k = 1; k < transforms.size(); ++k) {
    const Stage other = stage_of(k);
    detail::expect_transform(other == first, name,
                             "transforms[0] (" + std::string(detail::variant_name(transforms[0])) + ") applies to " +
                                 stage_text(first) + ", transforms[" + std::to_string(k) + "] (" +
                                 detail::variant_name(transforms[k]) + ") to " + stage_text(other) + "; " + stage_rule);
  }
}

inline int RandomChoice::max_ops() const {
  int n = 0;
  for (const PixelTransform& t : transforms) n = std::max(n, std::visit([](const auto& x) { return x.max_ops(); }, t));
  return n;
}

inline int RandomChoice::nodes() const { return detail::container_nodes(transforms); }

inline Stage RandomChoice::stage() const { return detail::latest_stage(transforms); }  // one for all, once validated

inline std::size_t RandomChoice::pick(CounterRng& rng) const { return pick_index(rng, transforms.size(), p); }

inline void RandomChoice::draw(ProgramDraw& d, int position) const {
  CounterRng rng = d.stream(position);
  const std::size_t k = pick(rng);
  std::visit([&](const auto& x) { x.draw(d, detail::inner_position(transforms, position, k)); }, transforms[k]);
}

}  // namespace v0
}  // namespace conveyor
