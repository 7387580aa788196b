// image_augment() and raw_tensor(): the C++ transforms from the keyword arguments the package's
// ImageAugment and RawTensor dataclasses pass (python/conveyor/_transforms.py).

#include "transforms.hpp"

#include "pixel_transforms.hpp"

#include <conveyor/pipeline/image_augment.hpp>
#include <conveyor/pipeline/raw_tensor.hpp>
#include <conveyor/pipeline/views.hpp>

#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <utility>

namespace conveyor_ext {
namespace {

Transform make_transform(conveyor::AnyTransform any) {
  const conveyor::SampleSpec spec = any.sample_spec();
  Transform t{std::move(any), {spec.shape.begin(), spec.shape.begin() + spec.rank}, std::string(to_string(spec.dtype))};
  return t;
}

/// torchvision's size: [n] or [height, width].
conveyor::Size size_of(const char* name, const std::vector<int>& v) {
  if (v.size() == 1) return {v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  throw conveyor::ConfigError(std::string("ImageAugment: ") + name + " must be an int or (height, width), got " +
                              std::to_string(v.size()) + " values");
}

/// FiveCrop's part named `crop`, if it names one.
std::optional<conveyor::FiveCrop::Part> five_crop_part(const std::string& crop) {
  static constexpr const char* parts[] = {"top_left", "top_right", "bottom_left", "bottom_right", "five_center"};
  for (std::size_t k = 0; k < 5; ++k)
    if (crop == parts[k]) return static_cast<conveyor::FiveCrop::Part>(k);
  return std::nullopt;
}

/// An enum's value by its name in `ops::enum_names(E)`, the argument `what`.
template <class E>
E enum_of(const char* what, const std::string& name) {
  const auto names = conveyor::ops::enum_names(E{});
  std::string listed;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (name == names[k]) return static_cast<E>(k);
    listed += std::string(k ? ", '" : "'") + names[k] + "'";
  }
  throw conveyor::ConfigError(std::string("ImageAugment: ") + what + " must be one of " + listed + ", got '" + name +
                              "'");
}

Transform image_augment(const std::string& crop, const std::vector<int>& size, std::pair<double, double> scale,
                        std::pair<double, double> ratio, const std::optional<std::vector<int>>& resize,
                        std::optional<int> max_size, double flip,
                        std::optional<std::vector<float>> mean, std::optional<std::vector<float>> std_dev,
                        const std::string& dtype, const std::string& layout, bool exif_orientation, bool roi,
                        std::optional<bool> decode_scaling, bool lenient, std::uint64_t max_image_pixels,
                        const std::string& sixteen_bit, bool torchvision_rounding, bool divide_by_255,
                        const std::string& resampling, std::array<int, 4> padding, bool pad_if_needed,
                        const std::string& padding_mode, int five_crop_of, const std::vector<PixelTransform>& transforms,
                        std::size_t pil_transforms) {
  conveyor::ImageAugment a;
  const conveyor::Size out = size_of("size", size);
  if (crop == "random_resized")
    a.crop = conveyor::RandomResizedCrop{out, {scale.first, scale.second}, {ratio.first, ratio.second}};
  else if (crop == "center")
    a.crop = conveyor::CenterCrop{out};
  else if (crop == "random")
    a.crop = conveyor::RandomCrop{out, {padding[0], padding[1], padding[2], padding[3]}, pad_if_needed,
                                  enum_of<conveyor::ops::PadMode>("padding_mode", padding_mode)};
  else if (const auto part = five_crop_part(crop)) {
    if (five_crop_of < 0 || five_crop_of > 2)
      throw conveyor::ConfigError("ImageAugment: five_crop_of must be 0 (the image), 1 (its horizontal flip) or 2 "
                                  "(its vertical flip), got " + std::to_string(five_crop_of));
    a.crop = conveyor::FiveCrop{out, *part, static_cast<conveyor::FiveCrop::Of>(five_crop_of)};
  }
  else
    throw conveyor::ConfigError("ImageAugment: crop must be 'random_resized', 'center', 'random' or one of "
                                "FiveCrop's 'top_left', 'top_right', 'bottom_left', 'bottom_right', "
                                "'five_center', got '" + crop + "'");
  if (resize) a.resize = conveyor::Resize{size_of("resize", *resize), max_size};
  else if (max_size) a.resize = conveyor::Resize{std::nullopt, max_size};  // v2's Resize(None, max_size)
  a.flip.p = flip;
  if (mean.has_value() != std_dev.has_value())
    throw conveyor::ConfigError("ImageAugment: normalize needs both mean and std");
  if (mean) {
    if (mean->size() != 3 || std_dev->size() != 3)
      throw conveyor::ConfigError("ImageAugment: normalize's mean and std must have 3 values each");
    a.normalize = conveyor::Normalize{{(*mean)[0], (*mean)[1], (*mean)[2]},
                                      {(*std_dev)[0], (*std_dev)[1], (*std_dev)[2]},
                                      torchvision_rounding, divide_by_255};
  } else if (divide_by_255) {
    throw conveyor::ConfigError("ImageAugment: divide_by_255 (ToTensor's rounding) needs normalize");
  }
  a.resampling = enum_of<conveyor::ops::Resampling>("resampling", resampling);
  a.dtype = conveyor::parse_dtype(dtype);
  a.layout = conveyor::parse_layout(layout);
  a.exif_orientation = exif_orientation;
  a.roi = roi;
  a.decode_scaling = decode_scaling;
  a.decode.lenient = lenient;
  a.decode.max_image_pixels = max_image_pixels;
  a.decode.sixteen_bit = conveyor::parse_sixteen_bit(sixteen_bit);
  for (const PixelTransform& t : transforms) a.transforms.push_back(t.held);
  a.pil_transforms = pil_transforms;
  a.validate();
  Transform t = make_transform(conveyor::AnyTransform(a));
  t.augment = std::move(a);
  return t;
}

Transform raw_tensor(const std::vector<std::int64_t>& shape, const std::string& dtype) {
  if (shape.empty() || shape.size() > 3)
    throw conveyor::ConfigError("RawTensor: the sample shape must have 1 to 3 dimensions");
  conveyor::SampleSpec spec{conveyor::parse_dtype(dtype), static_cast<int>(shape.size()), {}};
  for (std::size_t i = 0; i < shape.size(); ++i) spec.shape[i] = shape[i];
  const conveyor::RawTensor raw{spec};
  raw.validate();
  return make_transform(conveyor::AnyTransform(raw));
}

Transform views(const std::vector<std::pair<Transform, int>>& parts) {
  conveyor::Views v;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (!parts[k].first.augment)
      throw conveyor::ConfigError("Views: view " + std::to_string(k) +
                                  " is not an image transform (an ImageAugment or a torchvision v2 Compose)");
    v.views.push_back({*parts[k].first.augment, parts[k].second});
  }
  v.validate();
  return make_transform(conveyor::AnyTransform(std::move(v)));
}

}  // namespace

void bind_transforms(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<Transform>(m, "Transform")
      .def_ro("sample_shape", &Transform::shape)
      .def_ro("dtype", &Transform::dtype);
  m.def("image_augment", &image_augment, "crop"_a, "size"_a, "scale"_a, "ratio"_a, "resize"_a, "max_size"_a,
        "flip"_a, "mean"_a, "std"_a, "dtype"_a, "layout"_a, "exif_orientation"_a, "roi"_a, "decode_scaling"_a, "lenient"_a,
        "max_image_pixels"_a, "sixteen_bit"_a = "refuse", "torchvision_rounding"_a = false, "divide_by_255"_a = false,
        "resampling"_a = "bilinear", "padding"_a = std::array<int, 4>{0, 0, 0, 0}, "pad_if_needed"_a = false,
        "padding_mode"_a = "constant", "five_crop_of"_a = 0, "transforms"_a = std::vector<PixelTransform>{}, "pil_transforms"_a = std::size_t{0});
  m.def(
      "resampling_names",
      [] {
        const auto names = conveyor::ops::enum_names(conveyor::ops::Resampling{});
        return std::vector<std::string>(names.begin(), names.end());
      },
      "ImageAugment's resamplings, by name (ops::Resampling's order).");
  m.def("raw_tensor", &raw_tensor, "shape"_a, "dtype"_a);
  m.def("views", &views, "views"_a, "Views of (image transform, count) pairs: each image decoded once.");
}

}  // namespace conveyor_ext
