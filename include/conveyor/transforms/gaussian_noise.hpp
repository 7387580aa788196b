#pragma once
/// @file
/// torchvision.transforms.v2.GaussianNoise(mean, sigma, clip): `gaussian_noise` on every image,
/// with normal values of its own per sample (a key drawn from the transform's stream; their
/// distribution is torch's, ops/pixel/normal.hpp). torchvision's arithmetic depends on the image's
/// dtype, so conveyor's `image` says which one it meets: "float32" (after ToDtype, before Normalize,
/// where recipes place it; the Compose compiler sets it from the place) or "uint8" (before ToDtype).
/// torchvision does not run it on PIL images, nor does conveyor.

#include <conveyor/config.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/pixel/gaussian_noise.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>

namespace conveyor {
inline namespace v0 {

/// The image GaussianNoise meets.
enum class NoiseImage : std::int32_t { float32, uint8 };

namespace detail {
inline constexpr const char* noise_image_names[] = {"float32", "uint8"};
}  // namespace detail

[[nodiscard]] constexpr std::span<const char* const> enum_names(NoiseImage) noexcept {
  constexpr std::span<const char* const> names = detail::noise_image_names;
  return names;
}

struct GaussianNoise {
  static constexpr const char* name = "GaussianNoise";
  static constexpr const char* summary =
      "Adds `mean + sigma * n` (n standard normal, per value) to the `image`, \"float32\" after ToDtype (clipped to "
      "[0, 1] with `clip`) or \"uint8\" before it (255 times, as int16; clipped to [0, 255]).";
  static constexpr FieldName fields[] = {"mean", "sigma", "clip", "image"};
  double mean = 0.0;
  double sigma = 0.1;
  bool clip = true;
  NoiseImage image = NoiseImage::float32;  ///< conveyor's: the dtype torchvision would see

  void validate() const {
    detail::expect_transform(std::isfinite(static_cast<float>(sigma)) && sigma >= 0.0, name,
                             "sigma must be finite (in float32) and >= 0, got " + detail::shown(sigma));
    detail::expect_transform(std::isfinite(static_cast<float>(mean)), name,
                             "mean must be finite (in float32), got " + detail::shown(mean));
    detail::expect_transform(image == NoiseImage::float32 ||
                                 std::abs(mean) + ops::pixel::max_standard_normal * sigma <= 127.0,
                             name,
                             "on a uint8 image |mean| + 5.4 sigma must be <= 127 (the noise is an int16 of 255 times "
                             "it), got " + detail::shown(std::abs(mean) + ops::pixel::max_standard_normal * sigma));
  }
  /// On the float image the output must hold floats.
  void validate_for(const ProgramImage& target) const {
    detail::expect_transform(image == NoiseImage::uint8 || target.dtype != DType::u8, name,
                             "image=\"float32\" adds noise after ToDtype, and a uint8 output has none: give a float "
                             "output dtype, or image=\"uint8\"");
  }
  [[nodiscard]] Stage stage() const { return image == NoiseImage::uint8 ? Stage::uint8 : Stage::scaled; }
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const std::uint64_t key = rng.next_u64();
    d.add(record(key));
    // the key of conveyor's normal values (ops/pixel/normal.hpp), where torchvision draws a tensor, and
    // the image's dtype, which decides torchvision's arithmetic
    if (d.describing())
      d.describe({"gaussian_noise", {DrawnArg::number("mean", mean), DrawnArg::number("sigma", sigma),
                                     DrawnArg::flag("clip", clip), DrawnArg::key("key", key),
                                     DrawnArg::text("image", enum_names(image)[static_cast<std::size_t>(image)])}});
  }

 private:
  [[nodiscard]] ops::pixel::PixelOp record(std::uint64_t key) const {
    return image == NoiseImage::uint8 ? ops::pixel::gaussian_noise(mean, sigma, clip, key)
                                      : ops::pixel::gaussian_noise_float(mean, sigma, clip, key);
  }
};

}  // namespace v0
}  // namespace conveyor
