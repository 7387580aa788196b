#pragma once
/// @file
/// torchvision.transforms.v2.RandomApply(transforms, p=0.5): its transforms, in order, with
/// probability p (skipped when `torch.rand(1) >= p`). Each inner transform keeps its own stream, at
/// its own position (the ones after RandomApply's), drawn or not.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/registry.hpp>

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct RandomApply {
  static constexpr const char* name = "RandomApply";
  std::vector<PixelTransform> transforms{};
  double p = 0.5;

  void validate() const {
    detail::expect_transform(!transforms.empty(), name, "pass at least one transform");
    detail::expect_probability(name, p);
    for (std::size_t k = 0; k < transforms.size(); ++k) {
      try {
        std::visit([](const auto& x) { x.validate(); }, transforms[k]);
      } catch (const ConfigError& e) {
        throw ConfigError(std::string(name) + ": transforms[" + std::to_string(k) +
                          "]: " + std::string(detail::split_location(e.what()).second));
      }
    }
  }
  [[nodiscard]] int max_ops() const {
    int n = 0;
    for (const PixelTransform& t : transforms) n += std::visit([](const auto& x) { return x.max_ops(); }, t);
    return n;
  }
  [[nodiscard]] int nodes() const {
    int n = 1;
    for (const PixelTransform& t : transforms) n += std::visit([](const auto& x) { return detail::transform_nodes(x); }, t);
    return n;
  }
  [[nodiscard]] bool erases() const {
    for (const PixelTransform& t : transforms)
      if (std::visit([](const auto& x) { return detail::transform_erases(x); }, t)) return true;
    return false;
  }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const bool applied = applies(rng, p);
    int next = position + 1;
    for (const PixelTransform& t : transforms)
      std::visit(
          [&](const auto& x) {
            if (applied) x.draw(d, next);
            next += detail::transform_nodes(x);
          },
          t);
  }
};

}  // namespace v0
}  // namespace conveyor
