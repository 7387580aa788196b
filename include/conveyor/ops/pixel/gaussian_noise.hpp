#pragma once
/// @file
/// torchvision.transforms.v2.functional.gaussian_noise (GaussianNoise), on the image it meets:
/// uint8 (before ToDtype) or float (after ToDtype, before Normalize). torchvision adds
/// `mean + torch.randn_like(image) * sigma`; conveyor's normal values come from a keyed stream
/// (normal.hpp) indexed as the `[C, H, W]` image, so only their distribution is torch's, and the
/// arithmetic around them is torchvision's, each step rounded in float32:
///   uint8: `noise = ((mean * 255) + n * (sigma * 255)).to(int16)`, `image + noise`, clamped to
///          [0, 255] with `clip` (wrapped to uint8 without), a neighbourhood op (it needs the
///          pixel's place);
///   float: `noise = mean + n * sigma`, `image + noise`, clamped to [0, 1] with `clip`, on the
///          value the output holds between its scaling and its normalisation (`OpKind::scaled`).

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/normal.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

namespace detail {

/// Value `channel` of pixel (x, y)'s normal value of the stream in `op.i[0]`, `op.i[1]`.
[[nodiscard]] CONVEYOR_HD inline float noise_normal(const PixelOp& op, int channel, int x, int y, int width,
                                                    int height) noexcept {
  const std::uint64_t key = static_cast<std::uint32_t>(op.i[0]) | (std::uint64_t{static_cast<std::uint32_t>(op.i[1])} << 32);
  using U = std::uint64_t;
  return standard_normal(key, (U(unsigned(channel)) * U(unsigned(height)) + U(unsigned(y))) * U(unsigned(width)) +
                                  U(unsigned(x)));
}

/// The record both ops share: i[0], i[1] the key's low and high words, i[2] clip; f[0] the mean
/// and f[1] sigma as float32 (times 255 for uint8).
inline PixelOp noise_record(std::int32_t code, float mean, float sigma, bool clip, std::uint64_t key) {
  PixelOp op{.code = code};
  op.i[0] = static_cast<std::int32_t>(static_cast<std::uint32_t>(key));
  op.i[1] = static_cast<std::int32_t>(static_cast<std::uint32_t>(key >> 32));
  op.i[2] = clip ? 1 : 0;
  op.f[0] = mean;
  op.f[1] = sigma;
  return op;
}

}  // namespace detail

struct GaussianNoise {
  static constexpr std::int32_t code = 27;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "gaussian_noise";
  struct Prepared {};
  CONVEYOR_HD static void prepare(const PixelOp&, int, int, Prepared&) noexcept {}
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared&, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    const std::uint8_t* from = src + (std::int64_t{y} * width + x) * 3;
    for (int c = 0; c < 3; ++c) {
      const float noise = exact::add(exact::mul(detail::noise_normal(op, c, x, y, width, height), op.f[1]), op.f[0]);
      const int sum = from[c] + static_cast<int>(noise);  // .to(int16): toward zero; in range (the factory bounds it)
      rgb[c] = op.i[2] ? static_cast<std::uint8_t>(sum < 0 ? 0 : (sum > 255 ? 255 : sum))
                       : static_cast<std::uint8_t>(sum & 0xFF);
    }
  }
};

struct GaussianNoiseFloat {
  static constexpr std::int32_t code = 28;
  static constexpr OpKind kind = OpKind::scaled;
  static constexpr const char* name = "gaussian_noise_float";
  [[nodiscard]] CONVEYOR_HD static float scaled(const PixelOp& op, int channel, int x, int y, int width, int height,
                                                float value) noexcept {
    const float noise = exact::add(exact::mul(detail::noise_normal(op, channel, x, y, width, height), op.f[1]), op.f[0]);
    const float sum = exact::add(value, noise);
    return op.i[2] ? (sum > 0.0f ? (sum < 1.0f ? sum : 1.0f) : 0.0f) : sum;
  }
};

/// The most a normal value of normal.hpp's streams can be from 0 (a p of 2^-24).
inline constexpr double max_standard_normal = 5.4;

/// The record of `gaussian_noise(image, mean, sigma, clip)` on a uint8 image, its normal values
/// from the stream `key`.
/// @throws ConfigError unless sigma >= 0 and |mean| + 5.4 sigma <= 127, which keeps every noise
/// value and sum within int16, where torch's conversion and addition are defined.
[[nodiscard]] inline PixelOp gaussian_noise(double mean, double sigma, bool clip, std::uint64_t key) {
  detail::expect(std::isfinite(sigma) && sigma >= 0.0, GaussianNoise::name, "sigma must be finite and >= 0", sigma);
  detail::expect(std::isfinite(mean) && std::abs(mean) + max_standard_normal * sigma <= 127.0, GaussianNoise::name,
                 "on a uint8 image |mean| + 5.4 sigma must be <= 127 (the noise is an int16 of 255 times it)",
                 std::abs(mean) + max_standard_normal * sigma);
  return detail::noise_record(GaussianNoise::code, static_cast<float>(mean * 255), static_cast<float>(sigma * 255), clip,
                              key);
}

/// The record of `gaussian_noise(image, mean, sigma, clip)` on a float image in [0, 1] (after
/// ToDtype), its normal values from the stream `key`.
/// @throws ConfigError unless mean and sigma are finite in float32 and sigma >= 0.
[[nodiscard]] inline PixelOp gaussian_noise_float(double mean, double sigma, bool clip, std::uint64_t key) {
  const float m = static_cast<float>(mean), s = static_cast<float>(sigma);
  detail::expect(std::isfinite(s) && s >= 0.0f, GaussianNoiseFloat::name, "sigma must be finite in float32 and >= 0",
                 sigma);
  detail::expect(std::isfinite(m), GaussianNoiseFloat::name, "mean must be finite in float32", mean);
  return detail::noise_record(GaussianNoiseFloat::code, m, s, clip, key);
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor
