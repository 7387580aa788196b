#pragma once
/// @file
/// The augmentation operations and their parameter sampling, with torchvision's semantics. These
/// run on the host, once per sample, from the image size alone (no pixel needed), and produce
/// the integer crop boxes and sizes that `ops::SamplePlan` turns into resampling.

#include <conveyor/config.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/ops/plan.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <variant>

namespace conveyor {
inline namespace v0 {

/// A size as torchvision takes one: an int (`.size = 224`: a square, or for Resize the shorter
/// side) or (height, width) (`.size = {256, 192}`), torchvision's order.
struct Size {
  constexpr Size(int side) noexcept : height(side), width(side) {}  // NOLINT: `= 224` reads as torchvision
  constexpr Size(int h, int w) noexcept : height(h), width(w), pair(true) {}
  int height;
  int width;
  bool pair = false;  ///< given as (height, width)
};

/// torchvision.transforms.RandomResizedCrop: a random box of `scale` of the area and aspect
/// `ratio` (log-uniform), 10 tries, then the centre crop clamped to the ratio range; resized to
/// `size`.
struct RandomResizedCrop {
  Size size = 224;
  std::array<double, 2> scale{0.08, 1.0};
  std::array<double, 2> ratio{3.0 / 4.0, 4.0 / 3.0};
};

/// torchvision.transforms.Resize(size, max_size): with an int, the shorter side becomes `size` and
/// the longer keeps the aspect (truncated, as torchvision computes it), then both shrink so that
/// the longer is at most `max_size`; with (height, width), exactly that; with none (v2's
/// size=None), the longer side becomes `max_size`. Antialiased when downscaling.
struct Resize {
  std::optional<Size> size = 256;
  std::optional<int> max_size{};
};

/// torchvision.transforms.CenterCrop(size): the centred `size` box, zero-padded where the image is
/// smaller.
struct CenterCrop {
  Size size = 224;
  /// The offset truncated, as Hugging Face's image processors place it (`int((h - crop) / 2.0)`),
  /// not rounded half to even as torchvision's `center_crop` does; they differ by one pixel where
  /// the margin is odd.
  bool truncated_offset = false;
};

/// torchvision.transforms.RandomCrop(size, padding, pad_if_needed, fill=0, padding_mode): the
/// image padded by `padding`, and on both sides by what it still lacks of the crop with
/// `pad_if_needed`, in one `F.pad` (v2's order), then a `size` box at a uniformly drawn place (the
/// CIFAR recipe's RandomCrop(32, padding=4), also with padding_mode="reflect").
struct RandomCrop {
  Size size = 224;
  std::array<int, 4> padding{0, 0, 0, 0};  ///< left, top, right, bottom (torchvision's F.pad order)
  bool pad_if_needed = false;
  ops::PadMode padding_mode = ops::PadMode::constant;
};

/// One crop of torchvision's FiveCrop(size) (a view each: `Views`): the `size` box at a corner of
/// the image or its centre, of the image or, for TenCrop's second five, of its mirror image;
/// refused where the image is smaller than the box, as torchvision refuses it.
struct FiveCrop {
  enum class Part : std::uint8_t { top_left, top_right, bottom_left, bottom_right, center };  ///< five_crop's order
  enum class Of : std::uint8_t { image, horizontal_flip, vertical_flip };  ///< TenCrop's vertical_flip picks the last
  Size size = 224;
  Part part = Part::center;
  Of of = Of::image;
};

/// The crop an ImageAugment starts with.
using Crop = std::variant<RandomResizedCrop, CenterCrop, RandomCrop, FiveCrop>;

/// torchvision.transforms.RandomHorizontalFlip(p).
struct HorizontalFlip {
  double p = 0.5;
};

/// torchvision.transforms.Normalize(mean, std) applied to pixels scaled to [0, 1].
struct Normalize {
  std::array<float, 3> mean{0.0f, 0.0f, 0.0f};
  std::array<float, 3> std{1.0f, 1.0f, 1.0f};
  /// Round as torchvision v2's ToDtype(float32, scale=True) then Normalize do: a multiply by
  /// 1/255, a subtract and a divide, each rounded to float32 (bit for bit theirs). Otherwise one
  /// fused multiply-add an element: within a few ulps of that, and cheaper on the CPU.
  bool torchvision_rounding = false;
  /// With `torchvision_rounding`: scale as torchvision's ToTensor does on a PIL image (`div(255)`)
  /// instead of ToDtype's multiply by 1/255.
  bool divide_by_255 = false;
  /// With `torchvision_rounding` and not `divide_by_255`: the factor each value is multiplied by
  /// before the subtraction: ToDtype's 1/255 (as float32), or 1 where mean and std are on the 0-255
  /// scale (Hugging Face's processors fold their rescale into them: `mean * 255`, `std * 255`).
  float rescale = static_cast<float>(1.0 / 255.0);
  /// The ImageNet statistics torchvision's models expect.
  [[nodiscard]] static constexpr Normalize imagenet() noexcept {
    return {{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
  }
};

namespace ops {

/// A crop box in pixels of the (oriented) source image.
struct CropBox {
  int top = 0, left = 0, height = 0, width = 0;
  friend constexpr bool operator==(const CropBox&, const CropBox&) = default;
};

/// Python's round(): to nearest, ties to even.
[[nodiscard]] inline int round_half_even(double v) noexcept { return static_cast<int>(std::nearbyint(v)); }

/// torchvision's RandomResizedCrop.get_params, drawing from `rng`.
[[nodiscard]] inline CropBox random_resized_crop_box(const RandomResizedCrop& op, int width, int height,
                                                     CounterRng& rng) noexcept {
  const double area = double(width) * double(height);
  const double log_lo = std::log(op.ratio[0]), log_hi = std::log(op.ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.uniform(op.scale[0], op.scale[1]);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    // Rounded and compared as Python's ints are: a side beyond any int (or NaN) just fails the test.
    const double w = std::nearbyint(std::sqrt(target_area * aspect));
    const double h = std::nearbyint(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int top = static_cast<int>(rng.below(static_cast<std::uint64_t>(height - static_cast<int>(h) + 1)));
      const int left = static_cast<int>(rng.below(static_cast<std::uint64_t>(width - static_cast<int>(w) + 1)));
      return {top, left, static_cast<int>(h), static_cast<int>(w)};
    }
  }
  const double in_ratio = double(width) / double(height);
  const double lo = std::fmin(op.ratio[0], op.ratio[1]), hi = std::fmax(op.ratio[0], op.ratio[1]);
  int w = width, h = height;
  // Within the image's sides: w / lo < h and h * hi < w here. Empty (0) when the ratio is extreme
  // for this image, which torchvision cannot resize either: the caller refuses it.
  if (in_ratio < lo) {
    h = round_half_even(w / lo);
  } else if (in_ratio > hi) {
    w = round_half_even(h * hi);
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

/// RandomCrop's draw on a `width` x `height` image: the padding torchvision adds (left, top, right,
/// bottom), the padded image's size and the box's top-left corner in it; `fits` is false (and
/// nothing drawn) when the crop is larger than the padded image, which torchvision refuses.
struct PaddedCrop {
  std::array<long long, 4> padding{};
  long long padded_width = 0, padded_height = 0;
  long long top = 0, left = 0;
  bool fits = true;
};

/// torchvision's RandomCrop.make_params (v2; v1 pads and draws alike), drawing from `rng`: the top
/// then the left, each only where the padded image is larger than the crop.
[[nodiscard]] inline PaddedCrop random_crop_box(const RandomCrop& op, int width, int height, CounterRng& rng) noexcept {
  PaddedCrop c;
  for (std::size_t k = 0; k < 4; ++k) c.padding[k] = op.padding[k];
  c.padded_width = width + c.padding[0] + c.padding[2];
  c.padded_height = height + c.padding[1] + c.padding[3];
  if (op.pad_if_needed && c.padded_height < op.size.height) {
    const long long diff = op.size.height - c.padded_height;
    c.padding[1] += diff, c.padding[3] += diff, c.padded_height += 2 * diff;
  }
  if (op.pad_if_needed && c.padded_width < op.size.width) {
    const long long diff = op.size.width - c.padded_width;
    c.padding[0] += diff, c.padding[2] += diff, c.padded_width += 2 * diff;
  }
  c.fits = c.padded_height >= op.size.height && c.padded_width >= op.size.width;
  if (!c.fits) return c;
  if (c.padded_height > op.size.height)
    c.top = static_cast<long long>(rng.below(static_cast<std::uint64_t>(c.padded_height - op.size.height + 1)));
  if (c.padded_width > op.size.width)
    c.left = static_cast<long long>(rng.below(static_cast<std::uint64_t>(c.padded_width - op.size.width + 1)));
  return c;
}

/// torchvision's output size for Resize(size) with an int: {width, height}. The longer side is
/// `int(size * long / short)`, which can pass any int: such a size is returned as 0. With
/// `max_size` below that, the longer side becomes `max_size` and the shorter
/// `int(max_size * short / long)` of those (torchvision's `_compute_resized_output_size`).
[[nodiscard]] inline std::array<int, 2> resize_shorter_side(int size, int width, int height,
                                                            std::optional<int> max_size = std::nullopt) noexcept {
  const bool w_short = width <= height;
  const long long s = w_short ? width : height, l = w_short ? height : width;
  const double long_side = std::trunc(double(size * l) / double(s));  // int(size * long / short)
  int short_int = size;
  int long_int = long_side < 2147483648.0 ? static_cast<int>(long_side) : 0;
  if (max_size && (long_int == 0 || long_int > *max_size)) {
    // from the unclamped longer side, as Python's ints hold it
    short_int = static_cast<int>(std::trunc(double(static_cast<long long>(*max_size) * size) / long_side));
    long_int = *max_size;
  }
  return w_short ? std::array<int, 2>{short_int, long_int} : std::array<int, 2>{long_int, short_int};
}

/// torchvision's output size for `resize` of a `width` x `height` image: {width, height}.
[[nodiscard]] inline std::array<int, 2> resized_size(const Resize& resize, int width, int height) noexcept {
  if (!resize.size) {  // the longer side to max_size, the shorter int(max_size * short / long)
    const bool w_short = width <= height;
    const long long s = w_short ? width : height, l = w_short ? height : width, m = resize.max_size.value_or(0);
    const int short_int = static_cast<int>(std::trunc(double(m * s) / double(l)));
    return w_short ? std::array<int, 2>{short_int, int(m)} : std::array<int, 2>{int(m), short_int};
  }
  if (resize.size->pair) return {resize.size->width, resize.size->height};
  return resize_shorter_side(resize.size->height, width, height, resize.max_size);
}

/// torchvision's CenterCrop offset of a `crop` window in `extent` pixels (Hugging Face's, truncated,
/// with `truncated`): negative when the image is padded (by floor((crop - extent) / 2) on the
/// leading side, in both).
[[nodiscard]] inline int center_crop_offset(int extent, int crop, bool truncated = false) noexcept {
  if (extent < crop) return -((crop - extent) / 2);
  return truncated ? (extent - crop) / 2 : round_half_even((extent - crop) / 2.0);
}

}  // namespace ops
}  // namespace v0
}  // namespace conveyor
