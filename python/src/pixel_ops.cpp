// _apply_pixel_program: one image through a program of pixel ops (ops/pixel/) on the CPU
// executor, for the tests that compare conveyor with torchvision's functional ops. Internal: ops
// are (name, kwargs) pairs named and spelt as torchvision.transforms.v2.functional's, so a test
// calls both with the same arguments; with pil=True, the ops torchvision's functionals run on PIL
// images (Pillow's arithmetic); with v1=True, torchvision v1's tensor functionals.

#include "bindings.hpp"

#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/pixel/registry.hpp>

#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace conveyor_ext {
namespace {

namespace px = conveyor::ops::pixel;

/// An op's keyword arguments, each to be read once; the ones left over are errors.
class Arguments {
 public:
  Arguments(std::string op, nb::dict kwargs) : op_(std::move(op)), kwargs_(std::move(kwargs)) {}

  [[nodiscard]] bool has(const char* name) const { return kwargs_.contains(name) && !kwargs_[name].is_none(); }
  template <class T>
  [[nodiscard]] T get(const char* name) {
    if (!kwargs_.contains(name)) throw conveyor::ConfigError(op_ + ": missing argument '" + name + "'");
    read_.insert(name);
    try {
      return nb::cast<T>(kwargs_[name]);
    } catch (const nb::cast_error&) {
      throw conveyor::ConfigError(op_ + ": argument '" + name + "' has the wrong type");
    }
  }
  template <class T>
  [[nodiscard]] T get(const char* name, T otherwise) {
    if (!has(name)) {
      read_.insert(name);
      return otherwise;
    }
    return get<T>(name);
  }
  /// One number for every channel, or one per channel.
  [[nodiscard]] std::optional<std::array<double, 3>> channels(const char* name) {
    if (!has(name)) {
      read_.insert(name);
      return std::nullopt;
    }
    const nb::handle v = kwargs_[name];
    if (nb::isinstance<nb::float_>(v) || nb::isinstance<nb::int_>(v)) {
      const double x = get<double>(name);
      return std::array<double, 3>{x, x, x};
    }
    const auto list = get<std::vector<double>>(name);
    if (list.size() == 1) return std::array<double, 3>{list[0], list[0], list[0]};
    if (list.size() != 3) throw conveyor::ConfigError(op_ + ": '" + name + "' needs 1 or 3 values");
    return std::array<double, 3>{list[0], list[1], list[2]};
  }
  /// A pair, or one number for both; `otherwise` when absent or None.
  [[nodiscard]] std::array<double, 2> pair(const char* name, std::array<double, 2> otherwise) {
    if (!has(name)) {
      read_.insert(name);
      return otherwise;
    }
    return pair(name);
  }
  /// A pair, or one number for both, that must be given.
  [[nodiscard]] std::array<double, 2> pair(const char* name) {
    if (!has(name)) throw conveyor::ConfigError(op_ + ": missing argument '" + name + "'");
    const nb::handle v = kwargs_[name];
    if (nb::isinstance<nb::float_>(v) || nb::isinstance<nb::int_>(v)) {
      const double x = get<double>(name);
      return {x, x};
    }
    const auto list = get<std::vector<double>>(name);
    if (list.size() == 1) return {list[0], list[0]};
    if (list.size() != 2) throw conveyor::ConfigError(op_ + ": '" + name + "' needs 1 or 2 values");
    return {list[0], list[1]};
  }
  /// A pair, or nothing when absent or None.
  [[nodiscard]] std::optional<std::array<double, 2>> optional_pair(const char* name) {
    if (!has(name)) {
      read_.insert(name);
      return std::nullopt;
    }
    return pair(name);
  }
  [[nodiscard]] px::Interpolation interpolation() {
    const std::string mode = get<std::string>("interpolation", std::string("nearest"));
    if (mode == "nearest") return px::Interpolation::nearest;
    if (mode == "bilinear") return px::Interpolation::bilinear;
    if (mode == "bicubic") return px::Interpolation::bicubic;
    throw conveyor::ConfigError(op_ + ": interpolation must be 'nearest', 'bilinear' or 'bicubic', got '" + mode + "'");
  }
  void expect_all_read() const {
    for (auto item : kwargs_) {
      const std::string key = nb::cast<std::string>(item.first);
      if (!read_.contains(key)) throw conveyor::ConfigError(op_ + ": unexpected argument '" + key + "'");
    }
  }

 private:
  std::string op_;
  nb::dict kwargs_;
  std::set<std::string> read_;
};

/// The op `name` on a PIL image (torchvision's PIL functionals), or nothing where it is the
/// tensor's op (invert, posterize, equalize, gaussian_blur).
std::optional<px::PixelOp> make_pil_op(const std::string& name, Arguments& a) {
  if (name == "adjust_brightness") return px::pil::adjust_brightness(a.get<double>("brightness_factor"));
  if (name == "adjust_contrast") return px::pil::adjust_contrast(a.get<double>("contrast_factor"));
  if (name == "adjust_saturation") return px::pil::adjust_saturation(a.get<double>("saturation_factor"));
  if (name == "adjust_hue") return px::pil::adjust_hue(a.get<double>("hue_factor"));
  if (name == "adjust_sharpness") return px::pil::adjust_sharpness(a.get<double>("sharpness_factor"));
  if (name == "autocontrast") return px::pil::autocontrast();
  if (name == "solarize") return px::pil::solarize(a.get<double>("threshold"));
  if (name == "rgb_to_grayscale") {
    if (a.get<int>("num_output_channels", 3) != 3)
      throw conveyor::ConfigError("rgb_to_grayscale: conveyor's images keep 3 channels (num_output_channels=3)");
    return px::pil::rgb_to_grayscale();
  }
  if (name == "erase")
    throw conveyor::ConfigError("_apply_pixel_program: no pixel op '" + name + "' on PIL images");
  return std::nullopt;
}

/// The op `name` of torchvision v1's tensor functionals, or nothing where it is v2's.
std::optional<px::PixelOp> make_v1_op(const std::string& name, Arguments& a) {
  if (name == "adjust_contrast") return px::v1::adjust_contrast(a.get<double>("contrast_factor"));
  if (name == "adjust_saturation") return px::v1::adjust_saturation(a.get<double>("saturation_factor"));
  if (name == "adjust_sharpness") return px::v1::adjust_sharpness(a.get<double>("sharpness_factor"));
  if (name == "autocontrast") return px::v1::autocontrast();
  return std::nullopt;
}

px::PixelOp make_op(const std::string& name, nb::dict kwargs, int width, int height, bool pil, bool v1) {
  Arguments a(name, std::move(kwargs));
  px::PixelOp op;
  if (pil && v1) throw conveyor::ConfigError("_apply_pixel_program: pil and v1 (v1's tensor functionals) exclude each other");
  if (const auto on_pil = pil ? make_pil_op(name, a) : std::nullopt) op = *on_pil;
  else if (const auto tensor_v1 = v1 ? make_v1_op(name, a) : std::nullopt) op = *tensor_v1;
  else if (name == "adjust_brightness") op = px::adjust_brightness(a.get<double>("brightness_factor"));
  else if (name == "adjust_contrast") op = px::adjust_contrast(a.get<double>("contrast_factor"));
  else if (name == "adjust_saturation") op = px::adjust_saturation(a.get<double>("saturation_factor"));
  else if (name == "adjust_hue") op = px::adjust_hue(a.get<double>("hue_factor"));
  else if (name == "adjust_sharpness") op = px::adjust_sharpness(a.get<double>("sharpness_factor"));
  else if (name == "rgb_to_grayscale") {
    if (a.get<int>("num_output_channels", 3) != 3)
      throw conveyor::ConfigError("rgb_to_grayscale: conveyor's images keep 3 channels (num_output_channels=3)");
    op = px::rgb_to_grayscale();
  } else if (name == "invert") op = px::invert();
  else if (name == "permute_channels") {
    const auto p = a.get<std::vector<int>>("permutation");
    if (p.size() != 3) throw conveyor::ConfigError("permute_channels: permutation must order the 3 channels");
    op = px::permute_channels({p[0], p[1], p[2]});
  }
  else if (name == "posterize") op = px::posterize(a.get<int>("bits"));
  else if (name == "solarize") op = px::solarize(a.get<double>("threshold"));
  else if (name == "solarize_add") op = px::solarize_add(a.get<int>("add"), a.get<int>("thresh", 128));  // timm's
  else if (name == "transform_affine") {  // Image.transform(size, AFFINE, matrix, resample, fillcolor=fill)
    const auto m = a.get<std::vector<double>>("matrix");
    if (m.size() != 6) throw conveyor::ConfigError("transform_affine: matrix must hold 6 numbers");
    op = px::pil::transform_affine({m[0], m[1], m[2], m[3], m[4], m[5]}, a.interpolation(), a.channels("fill"), width,
                                   height);
  }
  else if (name == "autocontrast") op = px::autocontrast();
  else if (name == "equalize") op = px::equalize();
  else if (name == "gaussian_blur") {
    const auto k = a.pair("kernel_size");
    const auto s = a.pair("sigma", {px::gaussian_blur_default_sigma(static_cast<int>(k[0])),
                                    px::gaussian_blur_default_sigma(static_cast<int>(k[1]))});
    op = px::gaussian_blur(static_cast<int>(k[0]), static_cast<int>(k[1]), s[0], s[1]);
  } else if (name == "affine") {
    px::AffineParams p;
    p.angle = a.get<double>("angle");
    p.translate = a.pair("translate", {0.0, 0.0});
    p.scale = a.get<double>("scale", 1.0);
    p.shear = a.pair("shear", {0.0, 0.0});
    p.interpolation = a.interpolation();
    p.fill = a.channels("fill");
    p.center = a.optional_pair("center");
    p.v1 = v1;
    op = pil ? px::pil::affine(p, width, height) : px::affine(p, width, height);
  } else if (name == "rotate") {
    px::RotateParams p;
    p.angle = a.get<double>("angle");
    p.interpolation = a.interpolation();
    p.fill = a.channels("fill");
    if (a.get<bool>("expand", false)) throw conveyor::ConfigError("rotate: expand=True changes the size; not supported");
    p.center = a.optional_pair("center");
    p.v1 = v1;
    op = pil ? px::pil::rotate(p, width, height) : px::rotate(p, width, height);
  } else if (name == "perspective") {  // F.perspective(startpoints, endpoints, ...) or (None, None, coefficients=)
    using Points = std::vector<std::array<std::int64_t, 2>>;
    const Points start = a.get<Points>("startpoints", {}), end = a.get<Points>("endpoints", {});
    const auto coefficients = a.get<std::vector<float>>("coefficients", {});
    std::array<float, 8> c{};
    if (!coefficients.empty()) {
      if (coefficients.size() != 8 || !start.empty() || !end.empty())
        throw conveyor::ConfigError("perspective: give 8 coefficients, or startpoints and endpoints");
      std::copy(coefficients.begin(), coefficients.end(), c.begin());
    } else {
      if (start.size() != 4 || end.size() != 4)
        throw conveyor::ConfigError("perspective: startpoints and endpoints must be four [x, y] corners each");
      c = px::perspective_coefficients({start[0], start[1], start[2], start[3]}, {end[0], end[1], end[2], end[3]});
    }
    op = pil ? px::pil::perspective(c, a.interpolation(), a.channels("fill"), width, height)
             : px::perspective(c, a.interpolation(), a.channels("fill"), width, height);
  } else if (name == "gaussian_noise") {  // F.gaussian_noise with conveyor's normal values (`key`)
    const double mean = a.get<double>("mean", 0.0), sigma = a.get<double>("sigma", 0.1);
    const bool clip = a.get<bool>("clip", true);
    const auto key = a.get<std::uint64_t>("key");
    const std::string image = a.get<std::string>("image", std::string("uint8"));
    if (image != "uint8" && image != "float32")
      throw conveyor::ConfigError("gaussian_noise: image must be 'uint8' or 'float32', got '" + image + "'");
    op = image == "uint8" ? px::gaussian_noise(mean, sigma, clip, key) : px::gaussian_noise_float(mean, sigma, clip, key);
  } else if (name == "erase") {
    const int i = a.get<int>("i"), j = a.get<int>("j"), h = a.get<int>("h"), w = a.get<int>("w");
    if (a.has("key")) op = px::erase_random(i, j, h, w, a.get<std::uint64_t>("key"));
    else op = px::erase(i, j, h, w, *a.channels("v"));
  } else {
    throw conveyor::ConfigError("_apply_pixel_program: no pixel op '" + name + "'");
  }
  a.expect_all_read();
  return op;
}

/// `image` (height x width x 3 u8) through the program `ops`, stored as `dtype` and `layout`,
/// normalised with `mean` and `std` when given (as ImageAugment's Normalize; with
/// `torchvision_rounding`, as ToDtype and Normalize round).
nb::bytes apply_pixel_program(nb::bytes image, int width, int height,
                              const std::vector<std::pair<std::string, nb::dict>>& ops, const std::string& dtype,
                              const std::string& layout, std::optional<std::vector<float>> mean,
                              std::optional<std::vector<float>> std_dev, bool pil, bool torchvision_rounding,
                              bool v1) {
  if (width <= 0 || height <= 0 || image.size() != std::size_t(width) * std::size_t(height) * 3)
    throw conveyor::ConfigError("_apply_pixel_program: image must hold width x height x 3 bytes");
  px::PixelProgram program;
  for (const auto& [name, kwargs] : ops) px::append(program, make_op(name, kwargs, width, height, pil, v1));
  px::check(program, width, height);
  conveyor::ops::OutputParams params;
  params.dtype = conveyor::parse_dtype(dtype);
  params.layout = conveyor::parse_layout(layout);
  if (mean.has_value() != std_dev.has_value() || (mean && (mean->size() != 3 || std_dev->size() != 3)))
    throw conveyor::ConfigError("_apply_pixel_program: mean and std go together, 3 values each");
  for (int c = 0; (mean || torchvision_rounding) && c < 3; ++c) {
    const float m = mean ? (*mean)[c] : 0.0f, s = mean ? (*std_dev)[c] : 1.0f;
    if (torchvision_rounding) {
      params.scale[c] = static_cast<float>(1.0 / 255.0);
      params.bias[c] = m;
      params.divisor[c] = s;
    } else {
      params.scale[c] = 1.0f / (255.0f * s);
      params.bias[c] = -m / s;
    }
  }
  std::vector<std::uint8_t> pixels(reinterpret_cast<const std::uint8_t*>(image.c_str()),
                                   reinterpret_cast<const std::uint8_t*>(image.c_str()) + image.size());
  std::vector<std::uint8_t> out(pixels.size() * conveyor::dtype_size(params.dtype));
  {
    nb::gil_scoped_release release;
    conveyor::ops::cpu::PixelScratch scratch;
    conveyor::ops::cpu::run_pixel_program(program, pixels.data(), width, height, params, out.data(), scratch);
  }
  return nb::bytes(reinterpret_cast<const char*>(out.data()), out.size());
}

}  // namespace

void bind_pixel_ops(nb::module_& m) {
  using namespace nb::literals;
  m.def(
      "_perspective_coefficients",
      [](const std::vector<std::array<std::int64_t, 2>>& start, const std::vector<std::array<std::int64_t, 2>>& end) {
        if (start.size() != 4 || end.size() != 4)
          throw conveyor::ConfigError("_perspective_coefficients: four [x, y] corners each");
        return px::perspective_coefficients({start[0], start[1], start[2], start[3]}, {end[0], end[1], end[2], end[3]});
      },
      "startpoints"_a, "endpoints"_a, "Internal (tests): torchvision's _get_perspective_coeffs, as conveyor solves it.");
  m.def(
      "_standard_normals",
      [](std::uint64_t key, std::size_t count) {
        std::vector<float> values(count);
        for (std::size_t k = 0; k < count; ++k) values[k] = px::standard_normal(key, k);
        return nb::bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
      },
      "key"_a, "count"_a,
      "Internal (tests): the first `count` float32 values of conveyor's normal stream `key` (RandomErasing's "
      "\"random\", GaussianNoise), as a [C, H, W] tensor holds them.");
  m.def("_apply_pixel_program", &apply_pixel_program, "image"_a, "width"_a, "height"_a, "ops"_a, "dtype"_a = "u8",
        "layout"_a = "nhwc", "mean"_a = nb::none(), "std"_a = nb::none(),
        "pil"_a = false, "torchvision_rounding"_a = false, "v1"_a = false,
        "Internal (tests): one HWC u8 image through pixel ops named as torchvision's functionals (on a PIL image's "
        "semantics with pil=True, v1's tensor functionals with v1=True).");
}

}  // namespace conveyor_ext
