#pragma once
// Seeded synthetic images and the JPEG fixtures made from them at test time.

#include <conveyor/core/bytes.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/io/file.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/io/jpeg_encoder.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
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

/// The centre `size` x `size` pixels of each JPEG under `dir` (recursively, in path order; those
/// smaller are left out), encoded again as baseline 4:2:0 JPEGs: real pictures, all of one size.
inline std::vector<std::vector<std::byte>> square_photos(const std::filesystem::path& dir, int size) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    std::string ext = e.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (e.is_regular_file() && (ext == ".jpg" || ext == ".jpeg")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::vector<std::byte>> out;
  conveyor::ByteBuffer bytes;
  conveyor::ImageDecoder decoder;
  std::vector<std::uint8_t> px;
  for (const auto& f : files) {
    conveyor::read_file(f.string(), bytes);
    const conveyor::ImageInfo info = decoder.read_header(bytes.span());
    if (info.width < size || info.height < size) continue;
    const std::size_t row = std::size_t(info.width) * 3;
    px.resize(row * std::size_t(info.height));
    decoder.decode(px.data(), row);
    const std::size_t x0 = std::size_t(info.width - size) / 2, y0 = std::size_t(info.height - size) / 2;
    out.push_back(conveyor::encode_jpeg(px.data() + y0 * row + x0 * 3, size, size, 3, row));
  }
  return out;
}

}  // namespace conveyor_test
