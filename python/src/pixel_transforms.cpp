// The pixel transforms (conveyor/transforms/): one factory each, with torchvision v2's argument
// names, for the package's dataclasses (python/conveyor/transforms.py) to build ImageAugment's
// list; and drawn_calls, what a transform drew for a sample as torchvision functional calls.

#include "pixel_transforms.hpp"
#include "transforms.hpp"

#include <conveyor/transforms/program.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace conveyor_ext {
namespace {

using Number = std::variant<double, std::pair<double, double>>;

/// A ColorJitter argument: None, a number, or a (min, max) pair.
conveyor::Jitter jitter(const std::optional<Number>& v) {
  if (!v) return {};
  if (const auto* pair = std::get_if<std::pair<double, double>>(&*v)) return {pair->first, pair->second};
  return {std::get<double>(*v)};
}

/// Checked as it is made, as torchvision checks its arguments in its constructors (the sizes it
/// meets are checked with the ImageAugment it joins, which names its position).
PixelTransform make(conveyor::PixelTransform t) {
  std::visit([](const auto& x) { x.validate(); }, t);
  return {std::move(t)};
}

/// RandomErasing's value: a number, one per channel (or one), or "random".
conveyor::ErasingValue erasing_value(const std::variant<double, std::vector<double>, std::string>& v) {
  if (const auto* word = std::get_if<std::string>(&v)) {
    if (*word != "random") throw conveyor::ConfigError("RandomErasing: a value given as a string must be 'random', got '" + *word + "'");
    return conveyor::ErasingValue::random();
  }
  if (const auto* list = std::get_if<std::vector<double>>(&v)) {
    if (list->size() == 1) return {(*list)[0]};
    if (list->size() != 3)
      throw conveyor::ConfigError("RandomErasing: value needs one number or one per channel (3), got " +
                                  std::to_string(list->size()));
    return {(*list)[0], (*list)[1], (*list)[2]};
  }
  return {std::get<double>(v)};
}

/// A number or a sequence of 2 (or, for shear, 4), as torchvision takes `degrees`, `shear`, `sigma`.
conveyor::Numbers numbers(const char* who, const char* name, const std::vector<double>& v) {
  if (v.size() == 1) return {v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  if (v.size() == 4) return {v[0], v[1], v[2], v[3]};
  throw conveyor::ConfigError(std::string(who) + ": " + name + " should be a number or a sequence of 2 (shear: or 4), got " +
                              std::to_string(v.size()) + " values");
}

/// None, one number for every channel, or one per channel.
conveyor::Fill fill(const char* who, const std::optional<std::vector<double>>& v) {
  if (!v) return conveyor::Fill::none();
  if (v->size() == 1) return {(*v)[0]};
  if (v->size() == 3) return {(*v)[0], (*v)[1], (*v)[2]};
  throw conveyor::ConfigError(std::string(who) + ": fill needs one number or one per channel (3), got " +
                              std::to_string(v->size()));
}

conveyor::ops::pixel::Interpolation interpolation(const char* who, const std::string& mode) {
  if (mode == "nearest") return conveyor::ops::pixel::Interpolation::nearest;
  if (mode == "bilinear") return conveyor::ops::pixel::Interpolation::bilinear;
  throw conveyor::ConfigError(std::string(who) + ": interpolation must be 'nearest' or 'bilinear', got '" + mode + "'");
}

std::optional<std::array<double, 2>> pair(const std::optional<std::pair<double, double>>& v) {
  if (!v) return std::nullopt;
  return std::array<double, 2>{v->first, v->second};
}

conveyor::AutoAugmentPolicy policy(const std::string& name) {
  if (name == "imagenet") return conveyor::AutoAugmentPolicy::imagenet;
  if (name == "cifar10") return conveyor::AutoAugmentPolicy::cifar10;
  if (name == "svhn") return conveyor::AutoAugmentPolicy::svhn;
  throw conveyor::ConfigError("AutoAugment: policy must be 'imagenet', 'cifar10' or 'svhn', got '" + name + "'");
}

/// A drawn argument as Python holds it: int, float, a tuple of them, or str.
nb::object python_value(const conveyor::DrawnArg::Value& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<double>> || std::is_same_v<T, std::vector<std::int64_t>>) {
          nb::list items;
          for (const auto& e : x) items.append(nb::cast(e));
          return nb::tuple(items);
        } else {
          return nb::cast(x);
        }
      },
      v);
}

using Kwargs = nb::typed<nb::dict, std::string, nb::object>;

std::vector<std::pair<std::string, Kwargs>> drawn_calls(const Transform& t, std::uint64_t seed, std::uint64_t epoch,
                                                          std::uint64_t index, int width, int height) {
  if (!t.augment) throw conveyor::ConfigError("drawn_calls: the transform is not an ImageAugment");
  if (width <= 0 || height <= 0)
    throw conveyor::ConfigError("drawn_calls: the image size must be positive, got " + std::to_string(width) + " x " +
                                std::to_string(height));
  std::vector<std::pair<std::string, Kwargs>> out;
  for (const conveyor::DrawnCall& call : t.augment->drawn_calls(seed, epoch, index, width, height)) {
    nb::dict kwargs;
    for (const conveyor::DrawnArg& a : call.args) kwargs[a.name.c_str()] = python_value(a.value);
    out.emplace_back(call.function, Kwargs(std::move(kwargs)));
  }
  return out;
}

}  // namespace

void bind_pixel_transforms(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PixelTransform>(m, "PixelTransform")
      .def_prop_ro("name", [](const PixelTransform& t) { return std::string(conveyor::transform_name(t.held)); });
  m.def("random_vertical_flip", [](double p) { return make(conveyor::RandomVerticalFlip{p}); }, "p"_a);
  m.def(
      "color_jitter",
      [](std::optional<Number> brightness, std::optional<Number> contrast, std::optional<Number> saturation,
         std::optional<Number> hue) {
        return make(conveyor::ColorJitter{jitter(brightness), jitter(contrast), jitter(saturation), jitter(hue)});
      },
      "brightness"_a.none(), "contrast"_a.none(), "saturation"_a.none(), "hue"_a.none());
  m.def("grayscale", [](int channels) { return make(conveyor::Grayscale{channels}); }, "num_output_channels"_a);
  m.def("random_grayscale", [](double p) { return make(conveyor::RandomGrayscale{p}); }, "p"_a);
  m.def("random_invert", [](double p) { return make(conveyor::RandomInvert{p}); }, "p"_a);
  m.def("random_posterize", [](int bits, double p) { return make(conveyor::RandomPosterize{bits, p}); }, "bits"_a, "p"_a);
  m.def("random_solarize", [](double threshold, double p) { return make(conveyor::RandomSolarize{threshold, p}); },
        "threshold"_a, "p"_a);
  m.def(
      "random_erasing",
      [](double p, std::pair<double, double> scale, std::pair<double, double> ratio,
         std::variant<double, std::vector<double>, std::string> value) {
        return make(conveyor::RandomErasing{p, {scale.first, scale.second}, {ratio.first, ratio.second}, erasing_value(value)});
      },
      "p"_a, "scale"_a, "ratio"_a, "value"_a);
  m.def(
      "random_apply",
      [](const std::vector<PixelTransform>& transforms, double p) {
        conveyor::RandomApply a{{}, p};
        for (const PixelTransform& t : transforms) a.transforms.push_back(t.held);
        return make(std::move(a));
      },
      "transforms"_a, "p"_a);
  m.def(
      "random_choice",
      [](const std::vector<PixelTransform>& transforms, std::optional<std::vector<double>> p) {
        conveyor::RandomChoice c{{}, p ? std::move(*p) : std::vector<double>{}};
        for (const PixelTransform& t : transforms) c.transforms.push_back(t.held);
        return make(std::move(c));
      },
      "transforms"_a, "p"_a.none());
  m.def(
      "random_order",
      [](const std::vector<PixelTransform>& transforms) {
        conveyor::RandomOrder o{};
        for (const PixelTransform& t : transforms) o.transforms.push_back(t.held);
        return make(std::move(o));
      },
      "transforms"_a);
  m.def("random_horizontal_flip", [](double p) { return make(conveyor::RandomHorizontalFlip{p}); }, "p"_a);
  m.def("random_adjust_sharpness", [](double factor, double p) { return make(conveyor::RandomAdjustSharpness{factor, p}); },
        "sharpness_factor"_a, "p"_a);
  m.def("random_autocontrast", [](double p) { return make(conveyor::RandomAutocontrast{p}); }, "p"_a);
  m.def("random_equalize", [](double p) { return make(conveyor::RandomEqualize{p}); }, "p"_a);
  m.def(
      "gaussian_blur",
      [](std::pair<int, int> kernel_size, const std::vector<double>& sigma) {
        return make(conveyor::GaussianBlur{conveyor::KernelSize{kernel_size.first, kernel_size.second},
                                           numbers("GaussianBlur", "sigma", sigma)});
      },
      "kernel_size"_a, "sigma"_a);
  m.def(
      "random_rotation",
      [](const std::vector<double>& degrees, const std::string& mode, bool expand,
         std::optional<std::pair<double, double>> center, std::optional<std::vector<double>> fill_values) {
        const char* who = "RandomRotation";
        return make(conveyor::RandomRotation{numbers(who, "degrees", degrees), interpolation(who, mode), expand,
                                             pair(center), fill(who, fill_values)});
      },
      "degrees"_a, "interpolation"_a, "expand"_a, "center"_a.none(), "fill"_a.none());
  m.def(
      "random_affine",
      [](const std::vector<double>& degrees, std::optional<std::pair<double, double>> translate,
         std::optional<std::pair<double, double>> scale, std::optional<std::vector<double>> shear,
         const std::string& mode, std::optional<std::vector<double>> fill_values,
         std::optional<std::pair<double, double>> center) {
        const char* who = "RandomAffine";
        std::optional<conveyor::Numbers> shears;
        if (shear) shears = numbers(who, "shear", *shear);
        return make(conveyor::RandomAffine{numbers(who, "degrees", degrees), pair(translate), pair(scale), shears,
                                           interpolation(who, mode), fill(who, fill_values), pair(center)});
      },
      "degrees"_a, "translate"_a.none(), "scale"_a.none(), "shear"_a.none(), "interpolation"_a, "fill"_a.none(),
      "center"_a.none());
  m.def(
      "trivial_augment_wide",
      [](int bins, const std::string& mode, std::optional<std::vector<double>> fill_values) {
        const char* who = "TrivialAugmentWide";
        return make(conveyor::TrivialAugmentWide{bins, interpolation(who, mode), fill(who, fill_values)});
      },
      "num_magnitude_bins"_a, "interpolation"_a, "fill"_a.none());
  m.def(
      "rand_augment",
      [](int num_ops, int magnitude, int bins, const std::string& mode, std::optional<std::vector<double>> fill_values) {
        const char* who = "RandAugment";
        return make(conveyor::RandAugment{num_ops, magnitude, bins, interpolation(who, mode), fill(who, fill_values)});
      },
      "num_ops"_a, "magnitude"_a, "num_magnitude_bins"_a, "interpolation"_a, "fill"_a.none());
  m.def(
      "auto_augment",
      [](const std::string& name, const std::string& mode, std::optional<std::vector<double>> fill_values) {
        const char* who = "AutoAugment";
        return make(conveyor::AutoAugment{policy(name), interpolation(who, mode), fill(who, fill_values)});
      },
      "policy"_a, "interpolation"_a, "fill"_a.none());
  m.def("drawn_calls", &drawn_calls, "transform"_a, "seed"_a, "epoch"_a, "index"_a, "width"_a, "height"_a,
        "What an ImageAugment draws for sample `index` of `epoch` under `seed` from an image of `width` x `height` "
        "(after Exif orientation): the torchvision.transforms.v2.functional calls that reproduce it, in order, as "
        "(name, kwargs) pairs.");
}

}  // namespace conveyor_ext
