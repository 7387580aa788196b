#pragma once
/// @file
/// A list of pixel transforms (registry.hpp) as ImageAugment holds it: checked once, then drawn
/// per sample into a `SampleProgram`, a pure function of (seed, epoch, index, image size).

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/random_apply.hpp>
#include <conveyor/transforms/random_choice.hpp>
#include <conveyor/transforms/random_order.hpp>
#include <conveyor/transforms/registry.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {

namespace detail {

template <class... Ts>
constexpr bool all_pixel_transforms(TransformList<Ts...>) {
  return (PixelTransformType<Ts> && ...);
}
static_assert(all_pixel_transforms(PixelTransforms{}), "every registered transform is a PixelTransformType");

/// The transforms' positions in order, each's own and those it holds: at most this many.
inline constexpr int max_transform_positions = 0x8000;

}  // namespace detail

/// torchvision's class name of `t`.
[[nodiscard]] inline const char* transform_name(const PixelTransform& t) { return detail::variant_name(t); }

/// Checks `transforms` as ImageAugment runs them: each one's arguments, that no draw can need
/// more than a program's ops, and that the transforms come in the order of where they apply (`Stage`:
/// the u8 image, the float image, the normalised output, as RandomErasing).
/// @throws ConfigError naming the first transform that cannot run and why.
inline void validate_transforms(std::span<const PixelTransform> transforms) {
  int ops = 0, nodes = 0;
  for (std::size_t k = 0; k < transforms.size(); ++k) {
    const PixelTransform& t = transforms[k];
    try {
      std::visit([](const auto& x) { x.validate(); }, t);
    } catch (const ConfigError& e) {
      throw ConfigError("ImageAugment: transforms[" + std::to_string(k) + "]: " +
                        std::string(detail::split_location(e.what()).second));
    }
    ops += std::visit([](const auto& x) { return x.max_ops(); }, t);
    nodes += std::visit([](const auto& x) { return detail::transform_nodes(x); }, t);
  }
  const char* before = nullptr;  // the last transform past the u8 image, and where it applies
  Stage at = Stage::uint8;
  auto in_stage_order = [&](const char* name, Stage stage) {
    if (stage < at)
      throw ConfigError(std::string("ImageAugment: ") + name + " comes after " + before + ", which applies to " +
                        stage_text(at) + ": a transform of " + stage_text(stage) +
                        " must come before it");
    if (stage != Stage::uint8) before = name, at = stage;
  };
  detail::for_each_leaf(transforms, in_stage_order);
  if (ops > ops::pixel::max_program_ops)
    throw ConfigError("ImageAugment: the transforms may draw up to " + std::to_string(ops) + " pixel ops, more than a " +
                      "sample's program holds (" + std::to_string(ops::pixel::max_program_ops) + ")");
  if (nodes > detail::max_transform_positions)
    throw ConfigError("ImageAugment: " + std::to_string(nodes) + " transforms (nested ones counted), more than " +
                      std::to_string(detail::max_transform_positions));
}

namespace detail {

/// `validate_for` of each transform in `transforms` (a range of variants) and of those they hold;
/// an error reads "<where>transforms[k]: [<container>: transforms[j]: ]<what>".
template <class Transforms>
void validate_each_for(const Transforms& transforms, const ProgramImage& image, const std::string& where) {
  for (std::size_t k = 0; k < transforms.size(); ++k)
    std::visit(
        [&](const auto& x) {
          const std::string here = where + "transforms[" + std::to_string(k) + "]: ";
          if constexpr (requires { x.transforms; }) {
            validate_each_for(x.transforms, image, here + std::remove_cvref_t<decltype(x)>::name + ": ");
          } else if constexpr (requires { x.validate_for(image); }) {
            try {
              x.validate_for(image);
            } catch (const ConfigError& e) {
              throw ConfigError(here + std::string(split_location(e.what()).second));
            }
          }
        },
        transforms[k]);
}

}  // namespace detail

/// Checks that `transforms` (validated) can run on `image`, the image every sample has when they
/// see it and the output it becomes: each one's `validate_for`, nested ones too.
/// @throws ConfigError naming the first transform that cannot, and why.
inline void validate_for_image(std::span<const PixelTransform> transforms, const ProgramImage& image) {
  detail::validate_each_for(transforms, image, "ImageAugment: ");
}

namespace detail {

/// Refuses an interpolation field of `t` that torch's kernels do not run here (bicubic: Pillow's only).
template <class T>
void expect_tensor_interpolations(const T& t) {
  for_each_field(t, [](FieldName field, const auto& value) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(value)>, ops::pixel::Interpolation>)
      expect_transform(value != ops::pixel::Interpolation::bicubic, T::name,
                       std::string(field.name) + " bicubic runs on PIL images only (Pillow's): on a tensor, "
                       "nearest or bilinear");
  });
}

/// Checks that `t` (a variant), and what it holds, runs on a PIL image (`validate_pil`), or, not
/// `pil`, on a tensor (`validate_tensor`, where a transform has it, and no bicubic interpolation).
template <bool pil, class Transform>
void validate_on(const Transform& t) {
  std::visit(
      [](const auto& x) {
        using X = std::remove_cvref_t<decltype(x)>;
        if constexpr (requires { x.transforms; }) {
          for (std::size_t k = 0; k < x.transforms.size(); ++k) {
            try {
              validate_on<pil>(x.transforms[k]);
            } catch (const ConfigError& e) {
              throw ConfigError(std::string(X::name) + ": transforms[" + std::to_string(k) +
                                "]: " + std::string(split_location(e.what()).second));
            }
          }
        } else if constexpr (!pil) {
          expect_tensor_interpolations(x);
          if constexpr (requires { x.validate_tensor(); }) x.validate_tensor();
        } else if constexpr (requires { x.validate_pil(); }) {
          x.validate_pil();
        } else {
          throw ConfigError(std::string(X::name) +
                            " on a PIL image (torchvision's PIL functional, Pillow's arithmetic) is not supported yet: "
                            "convert the image before it (ToImage or PILToTensor) to run torchvision's uint8 kernel");
        }
      },
      t);
}

/// The positions the first `count` of `transforms` take, nested ones counted.
[[nodiscard]] inline int positions_of(std::span<const PixelTransform> transforms, std::size_t count) {
  int n = 0;
  for (std::size_t k = 0; k < count && k < transforms.size(); ++k)
    n += std::visit([](const auto& x) { return transform_nodes(x); }, transforms[k]);
  return n;
}

}  // namespace detail

/// Checks that the first `pil_transforms` of `transforms` (validated) run on a PIL image, and the
/// others on a tensor.
/// @throws ConfigError naming the first that cannot, and why.
inline void validate_pil_transforms(std::span<const PixelTransform> transforms, std::size_t pil_transforms) {
  if (pil_transforms > transforms.size())
    throw ConfigError("ImageAugment: pil_transforms is " + std::to_string(pil_transforms) + ", but there are " +
                      std::to_string(transforms.size()) + " transforms");
  for (std::size_t k = 0; k < transforms.size(); ++k) {
    try {
      if (k < pil_transforms) detail::validate_on<true>(transforms[k]);
      else detail::validate_on<false>(transforms[k]);
    } catch (const ConfigError& e) {
      throw ConfigError("ImageAugment: transforms[" + std::to_string(k) +
                        "]: " + std::string(detail::split_location(e.what()).second));
    }
  }
}

/// Whether any of `transforms`, nested ones counted, may draw mixing steps (AugMix's: a type with
/// `static constexpr bool mixes = true`), for which the executors keep buffers beside the image.
[[nodiscard]] inline bool may_mix(std::span<const PixelTransform> transforms) {
  bool any = false;
  for (const PixelTransform& t : transforms)
    std::visit(
        [&](const auto& x) {
          using X = std::remove_cvref_t<decltype(x)>;
          if constexpr (requires { x.transforms; }) any = any || may_mix(x.transforms);
          else if constexpr (requires { requires X::mixes; }) any = true;
        },
        t);
  return any;
}

/// The program `transforms` (validated) draw for sample `index` of `epoch` under `seed`, whose
/// image is `width` x `height` when they see it, the first `pil_transforms` of them on a PIL image;
/// the torchvision calls it stands for go to `calls` when it is set.
[[nodiscard]] inline SampleProgram draw_program(std::span<const PixelTransform> transforms, std::uint64_t seed,
                                                std::uint64_t epoch, std::uint64_t index, int width, int height,
                                                std::vector<DrawnCall>* calls = nullptr,
                                                std::size_t pil_transforms = 0) {
  ProgramDraw d(seed, epoch, index, width, height, calls, detail::positions_of(transforms, pil_transforms));
  detail::draw_in_order(transforms, d, 0);
  return d.program();
}

}  // namespace v0
}  // namespace conveyor
