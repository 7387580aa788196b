#pragma once
// Seeded synthetic images and the JPEG fixtures made from them at test time.

#include <conveyor/core/rng.hpp>
#include <conveyor/io/jpeg_encoder.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace conveyor_test {

/// A seeded RGB (or gray) image: smooth gradients plus noise, so JPEG keeps it recognisable
/// and no two seeds look alike. Never constant, never zero.
inline std::vector<std::uint8_t> random_image(int width, int height, int channels, std::uint64_t seed) {
  conveyor::CounterRng rng(seed, 0, 0, conveyor::RngOp::user);
  const double fx = 0.5 + 4 * rng.uniform(), fy = 0.5 + 4 * rng.uniform(), ph = 6.28 * rng.uniform();
  std::vector<std::uint8_t> px(std::size_t(width) * height * channels);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) {
        const double u = double(x) / width, v = double(y) / height;
        const double base = 128 + 90 * std::sin(fx * 6.28 * u + ph + c) * std::cos(fy * 6.28 * v - c);
        const double noise = 24 * (rng.uniform() - 0.5);
        const double val = std::clamp(base + noise, 1.0, 254.0);
        px[(std::size_t(y) * width + x) * channels + c] = static_cast<std::uint8_t>(val);
      }
  return px;
}

/// A JPEG of `random_image(width, height, channels, seed)`.
inline std::vector<std::byte> random_jpeg(int width, int height, std::uint64_t seed, conveyor::EncodeOptions o = {},
                                          int channels = 3) {
  const auto px = random_image(width, height, channels, seed);
  return conveyor::encode_jpeg(px.data(), width, height, channels, std::size_t(width) * channels, o);
}

}  // namespace conveyor_test
