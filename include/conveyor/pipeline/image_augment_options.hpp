#pragma once
/// @file
/// `ImageAugmentOptions`: an `ImageAugment` as flat options, one value each, by name: what a
/// binding or a configuration takes as keywords (the Python package's ImageAugment). Declared once
/// here; the binding reads each by its name and describes them to Python from the same list.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/io/decode_options.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/pipeline/image_augment.hpp>
#include <conveyor/transforms/fields.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Which crop an `ImageAugmentOptions` names: RandomResizedCrop, CenterCrop, RandomCrop, or one of
/// FiveCrop's (`FiveCrop::Part`'s order).
enum class CropName : std::uint8_t {
  random_resized,
  center,
  random,
  top_left,
  top_right,
  bottom_left,
  bottom_right,
  five_center,
  center_truncated,  ///< CenterCrop with Hugging Face's truncated offset (`CenterCrop::truncated_offset`)
};

namespace detail {
inline constexpr const char* crop_names[] = {"random_resized", "center",       "random",
                                             "top_left",       "top_right",    "bottom_left",
                                             "bottom_right",   "five_center",  "center_truncated"};
inline constexpr const char* five_crop_of_names[] = {"image", "horizontal_flip", "vertical_flip"};
}  // namespace detail

[[nodiscard]] constexpr std::span<const char* const> enum_names(CropName) noexcept { return detail::crop_names; }
[[nodiscard]] constexpr std::span<const char* const> enum_names(FiveCrop::Of) noexcept {
  return detail::five_crop_of_names;
}

/// An `ImageAugment`'s options flat, in the Python package's order and with its defaults (a bare
/// `ImageAugment()`): `size`, `scale`, `ratio` and the padding belong to the crop `crop` names,
/// `mean` and `std` make the normalisation, `lenient` and the two after it the decode's options.
struct ImageAugmentOptions {
  static constexpr const char* name = "ImageAugment";

  CropName crop = CropName::random_resized;
  Size size = 224;
  std::array<double, 2> scale{0.08, 1.0};
  std::array<double, 2> ratio{3.0 / 4.0, 4.0 / 3.0};
  std::optional<Size> resize{};
  double flip = 0.0;
  std::optional<std::array<float, 3>> mean{};
  std::optional<std::array<float, 3>> std_dev{};
  DType dtype = DType::f32;
  Layout layout = Layout::NCHW;
  bool exif_orientation = false;
  bool roi = true;
  std::optional<bool> decode_scaling{};
  bool lenient = false;
  std::uint64_t max_image_pixels = DecodeOptions{}.max_image_pixels;
  SixteenBit sixteen_bit = SixteenBit::refuse;
  std::vector<PixelTransform> transforms{};
  bool torchvision_rounding = false;
  std::optional<int> max_size{};
  ops::Resampling resampling = ops::Resampling::bilinear;
  bool divide_by_255 = false;
  float rescale = static_cast<float>(1.0 / 255.0);
  /// Left, top, right, bottom.
  std::array<int, 4> padding{};
  bool pad_if_needed = false;
  ops::PadMode padding_mode = ops::PadMode::constant;
  FiveCrop::Of five_crop_of = FiveCrop::Of::image;
  std::size_t pil_transforms = 0;
  std::optional<ops::Resampling> random_resampling{};

  static constexpr auto options() {
    using O = ImageAugmentOptions;
    return std::tuple{option("crop", &O::crop),
                      option("size", &O::size),
                      option("scale", &O::scale),
                      option("ratio", &O::ratio),
                      option("resize", &O::resize),
                      option("flip", &O::flip),
                      option("mean", &O::mean),
                      option("std", &O::std_dev),
                      option("dtype", &O::dtype),
                      option("layout", &O::layout),
                      option("exif_orientation", &O::exif_orientation),
                      option("roi", &O::roi),
                      option("decode_scaling", &O::decode_scaling),
                      option("lenient", &O::lenient),
                      option("max_image_pixels", &O::max_image_pixels),
                      option("sixteen_bit", &O::sixteen_bit),
                      option("transforms", &O::transforms),
                      option("torchvision_rounding", &O::torchvision_rounding),
                      option("max_size", &O::max_size),
                      option("resampling", &O::resampling),
                      option("divide_by_255", &O::divide_by_255),
                      option("rescale", &O::rescale),
                      option("padding", &O::padding),
                      option("pad_if_needed", &O::pad_if_needed),
                      option("padding_mode", &O::padding_mode),
                      option("five_crop_of", &O::five_crop_of),
                      option("pil_transforms", &O::pil_transforms),
                      option("random_resampling", &O::random_resampling)};
  }

  /// The `ImageAugment` these options describe, validated.
  /// @throws ConfigError naming the offending option.
  [[nodiscard]] ImageAugment augment() const {
    ImageAugment a;
    switch (crop) {
      case CropName::random_resized: a.crop = RandomResizedCrop{size, scale, ratio}; break;
      case CropName::center: a.crop = CenterCrop{size}; break;
      case CropName::center_truncated: a.crop = CenterCrop{size, true}; break;
      case CropName::random:
        a.crop = RandomCrop{size, {padding[0], padding[1], padding[2], padding[3]}, pad_if_needed, padding_mode};
        break;
      default: a.crop = FiveCrop{size, static_cast<FiveCrop::Part>(int(crop) - int(CropName::top_left)), five_crop_of};
    }
    if (resize || max_size) a.resize = Resize{resize, max_size};  // v2's Resize(None, max_size) without a size
    a.flip.p = flip;
    if (mean.has_value() != std_dev.has_value()) throw ConfigError("ImageAugment: normalize needs both mean and std");
    if (mean) a.normalize = Normalize{*mean, *std_dev, torchvision_rounding, divide_by_255, rescale};
    else if (divide_by_255) throw ConfigError("ImageAugment: divide_by_255 (ToTensor's rounding) needs normalize");
    a.resampling = resampling;
    a.random_resampling = random_resampling;
    a.dtype = dtype;
    a.layout = layout;
    a.exif_orientation = exif_orientation;
    a.roi = roi;
    a.decode_scaling = decode_scaling;
    a.decode.lenient = lenient;
    a.decode.max_image_pixels = max_image_pixels;
    a.decode.sixteen_bit = sixteen_bit;
    a.transforms = transforms;
    a.pil_transforms = pil_transforms;
    a.validate();
    return a;
  }
};

static_assert(DeclaredOptions<ImageAugmentOptions>);

}  // namespace v0
}  // namespace conveyor
