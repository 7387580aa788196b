// image_augment() and raw_tensor(): the C++ transforms from the keyword arguments the package's
// ImageAugment and RawTensor dataclasses pass (python/conveyor/_transforms.py); option_schema():
// the options the binding reads by name, as C++ declares them.

#include "transforms.hpp"

#include "options.hpp"
#include "pixel_transforms.hpp"

#include <conveyor/pipeline/image_augment.hpp>
#include <conveyor/pipeline/image_augment_options.hpp>
#include <conveyor/pipeline/raw_tensor.hpp>
#include <conveyor/pipeline/views.hpp>
#include <conveyor/serve/preprocessor.hpp>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <utility>

namespace conveyor_ext {
namespace {

Transform make_transform(conveyor::AnyTransform any) {
  const conveyor::SampleSpec spec = any.sample_spec();
  Transform t{std::move(any), {spec.shape.begin(), spec.shape.begin() + spec.rank}, std::string(to_string(spec.dtype))};
  return t;
}

/// The ImageAugment its declared options (ImageAugmentOptions) describe, each read from the keyword of its name.
Transform image_augment(const nb::kwargs& given) {
  OptionReader reader("ImageAugment", given);
  conveyor::ImageAugmentOptions options;
  reader.read(options);
  reader.finish();
  conveyor::ImageAugment a = options.augment();
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

/// {"ImageAugment": ..., "Loader": ..., "Preprocessor": ...}, each an `Out` that `add(out, options)`
/// fills from the declared options the class reads.
template <class Out, class Add>
nb::dict per_class(Add add) {
  Out augment, loader, preprocessor;
  add(augment, conveyor::ImageAugmentOptions{});
  add(loader, conveyor::PipelineOptions{});
  add(loader, LoaderSampling{});
  add(preprocessor, conveyor::PreprocessorOptions{});
  nb::dict out;
  out["ImageAugment"] = augment;
  out["Loader"] = loader;
  out["Preprocessor"] = preprocessor;
  return out;
}

}  // namespace

void bind_transforms(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<Transform>(m, "Transform")
      .def_ro("sample_shape", &Transform::shape)
      .def_ro("dtype", &Transform::dtype);
  m.def("image_augment", &image_augment, nb::sig("def image_augment(**options: typing.Any) -> Transform"),
        "The ImageAugment of `options` (ImageAugmentOptions' declared options, by name).");
  m.def(
      "option_schema", [] { return per_class<nb::list>([](nb::list& out, const auto& o) { describe(out, o); }); },
      "The options declared in C++ that ImageAugment, Loader and Preprocessor read by name: for each, its "
      "options as (name, annotation, default), in declared order.");
  m.def(
      "option_choices",
      [] { return per_class<nb::dict>([](nb::dict& out, const auto& o) { describe_choices(out, o); }); },
      "The declared options that take one of named choices: for each class, option name: (choices...), "
      "in the enum's order.");
  m.def("raw_tensor", &raw_tensor, "shape"_a, "dtype"_a);
  m.def("views", &views, "views"_a, "Views of (image transform, count) pairs: each image decoded once.");
}

}  // namespace conveyor_ext
