#pragma once
// Random pixel programs (every op, parameters across their ranges and at their edges) and the
// images to run them on: windows of real photos, and random pixels.

#include <conveyor/core/rng.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/ops/pixel/registry.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace conveyor_test {

/// An interleaved RGB image, rows packed.
struct PixelImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;
};

/// A photo of the real-image corpus (`data`/photos/`name`), decoded at full size.
inline PixelImage decode_photo(const std::filesystem::path& data, const std::string& name) {
  std::ifstream in(data / "photos" / name, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(chars.data()), chars.size());
  conveyor::ImageDecoder decoder;
  const conveyor::ImageInfo info = decoder.read_header(bytes);
  PixelImage image{info.width, info.height, std::vector<std::uint8_t>(std::size_t(info.width) * info.height * 3)};
  decoder.decode(image.pixels.data(), std::size_t(info.width) * 3);
  return image;
}

/// Small photos of the corpus (0.2-0.4 MP, one grayscale JPEG among them).
inline const std::vector<std::string>& small_photos() {
  static const std::vector<std::string> names = {"darktable_style_image-1.jpg", "sklearn_china.jpg",
                                                 "opencv_fruits.jpg", "matplotlib_grace_hopper.jpg",
                                                 "jpegdecoder_tower_grayscale.jpg", "skimage_rocket.jpg"};
  return names;
}

/// The `width` x `height` window of `photo` at (`left`, `top`), clamped inside it (the photo must be
/// at least that large).
inline PixelImage window(const PixelImage& photo, int left, int top, int width, int height) {
  left = std::clamp(left, 0, photo.width - width);
  top = std::clamp(top, 0, photo.height - height);
  PixelImage w{width, height, std::vector<std::uint8_t>(std::size_t(width) * height * 3)};
  for (int y = 0; y < height; ++y)
    std::copy_n(photo.pixels.data() + (std::size_t(top + y) * photo.width + left) * 3, std::size_t(width) * 3,
                w.pixels.data() + std::size_t(y) * width * 3);
  return w;
}

/// Random bytes (seeded), `width` x `height` x 3.
inline PixelImage random_pixels(int width, int height, std::uint64_t seed) {
  conveyor::CounterRng rng(seed, 0, 0, conveyor::RngOp::user);
  PixelImage image{width, height, std::vector<std::uint8_t>(std::size_t(width) * height * 3)};
  for (auto& b : image.pixels) b = static_cast<std::uint8_t>(rng.next_u32());
  return image;
}

/// One random op of any registered kind, valid on a `width` x `height` image: parameters drawn
/// across torchvision's ranges, their edges included now and then.
inline conveyor::ops::pixel::PixelOp random_op(conveyor::CounterRng& rng, int width, int height) {
  namespace px = conveyor::ops::pixel;
  const auto pick = [&](std::initializer_list<double> edges, double lo, double hi) {
    if (rng.below(4) == 0) return *(edges.begin() + rng.below(edges.size()));
    return rng.uniform(lo, hi);
  };
  const auto odd_kernel = [&](int limit) {  // odd, mostly at most 23, half below the image side
    const int most = std::min(rng.below(4) == 0 ? px::max_blur_kernel : 23, 2 * (limit - 1) + 1);
    return 1 + 2 * static_cast<int>(rng.below(static_cast<std::uint64_t>(most / 2 + 1)));
  };
  const auto maybe_fill = [&]() -> std::optional<std::array<double, 3>> {
    switch (rng.below(3)) {
      case 0: return std::nullopt;
      case 1: return std::array{0.0, 0.0, 0.0};
      default: return std::array{rng.uniform(0, 255), rng.uniform(0, 255), rng.uniform(0, 255)};
    }
  };
  const auto interpolation = [&] { return rng.below(2) ? px::Interpolation::bilinear : px::Interpolation::nearest; };
  const auto pil_interpolation = [&] { return static_cast<px::Interpolation>(rng.below(3)); };  // bicubic too
  switch (rng.below(33)) {
    case 0: return px::adjust_brightness(pick({0.0, 1.0, 2.0}, 0.0, 2.5));
    case 1: return px::adjust_contrast(pick({0.0, 1.0}, 0.0, 2.5));
    case 2: return px::adjust_saturation(pick({0.0, 1.0}, 0.0, 2.5));
    case 3: return px::adjust_hue(pick({-0.5, 0.0, 0.5}, -0.5, 0.5));
    case 4: return px::rgb_to_grayscale();
    case 5: return px::invert();
    case 6: return px::posterize(static_cast<int>(rng.below(9)));
    case 7: return px::solarize(pick({0.0, 255.0, 128.0}, 0.0, 255.0));
    case 8: return px::autocontrast();
    case 9: return px::equalize();
    case 10: return px::adjust_sharpness(pick({0.0, 1.0, 2.0}, 0.0, 3.0));
    case 11: {
      const int kx = odd_kernel(width), ky = rng.below(2) ? kx : odd_kernel(height);
      return px::gaussian_blur(std::min(kx, 2 * (width - 1) + 1), std::min(ky, 2 * (height - 1) + 1),
                               pick({0.1, 2.0, 9.0}, 0.1, 2.0), pick({0.1, 2.0, 9.0}, 0.1, 2.0));
    }
    case 12: {
      px::AffineParams a;
      a.angle = pick({0.0, 90.0, 180.0, -45.0}, -180.0, 180.0);
      a.translate = {std::floor(rng.uniform(-0.3, 0.3) * width), std::floor(rng.uniform(-0.3, 0.3) * height)};
      a.scale = pick({1.0}, 0.7, 1.4);
      a.shear = {pick({0.0}, -30.0, 30.0), pick({0.0}, -30.0, 30.0)};
      a.interpolation = interpolation();
      a.fill = maybe_fill();
      if (rng.below(3) == 0) a.center = std::array{0.0, 0.0};
      return px::affine(a, width, height);
    }
    case 13:
      return px::rotate({.angle = pick({0.0, 90.0, 180.0, 270.0, -90.0}, -180.0, 180.0),
                         .interpolation = interpolation(), .fill = maybe_fill()},
                        width, height);
    case 14: return rng.below(2) ? px::vertical_flip() : px::horizontal_flip();
    case 15: return px::pil::adjust_brightness(pick({0.0, 1.0, 2.0}, 0.0, 2.5));
    case 16: return px::pil::adjust_contrast(pick({0.0, 1.0}, 0.0, 2.5));
    case 17: return px::pil::adjust_saturation(pick({0.0, 1.0}, 0.0, 2.5));
    case 18: return px::pil::adjust_hue(pick({-0.5, 0.0, 0.5}, -0.5, 0.5));
    case 19: return px::pil::adjust_sharpness(pick({0.0, 1.0, 2.0}, 0.0, 3.0));
    case 20: return rng.below(2) ? px::pil::rgb_to_grayscale() : px::pil::solarize(pick({0.0, 128.5, 255.0}, 0.0, 255.0));
    case 21: return px::pil::autocontrast();
    case 22: {
      px::AffineParams a;
      a.angle = pick({0.0, 90.0, -30.0}, -180.0, 180.0);
      a.translate = {std::floor(rng.uniform(-0.3, 0.3) * width), std::floor(rng.uniform(-0.3, 0.3) * height)};
      a.scale = pick({1.0}, 0.7, 1.4);
      a.shear = {pick({0.0}, -30.0, 30.0), pick({0.0}, -30.0, 30.0)};
      a.interpolation = pil_interpolation();
      a.fill = maybe_fill();
      if (rng.below(3) == 0) a.center = std::array{rng.uniform(-2.0 * width, 2.0 * width), 0.0};
      return px::pil::affine(a, width, height);
    }
    case 24: {
      std::array<int, 3> order{0, 1, 2};
      for (int i = 2; i > 0; --i) std::swap(order[std::size_t(i)], order[rng.below(static_cast<std::uint64_t>(i + 1))]);
      return px::permute_channels(order);
    }
    case 23:
      return px::pil::rotate({.angle = pick({0.0, 90.0, 180.0, 270.0, -90.0, 1e-9}, -360.0, 360.0),
                              .interpolation = pil_interpolation(), .fill = maybe_fill()},
                             width, height);
    case 25: return px::gaussian_noise(pick({0.0, 0.5, -0.5}, -0.5, 0.5), pick({0.0, 1.0, 20.0}, 0.0, 0.5), rng.below(2),
                                       rng.next_u64());
    case 26: return px::gaussian_noise_float(pick({0.0, 0.5, -0.5}, -1.0, 1.0), pick({0.0, 1.0, 3.0}, 0.0, 0.5),
                                             rng.below(2), rng.next_u64());
    case 27: return px::solarize_add(static_cast<int>(rng.below(129)), rng.below(4) ? 128 : static_cast<int>(rng.below(257)));
    case 28: {  // timm's shears and fractional translations: Image.transform with its own matrix
      const double shear = pick({0.0, 0.3, -0.3}, -0.3, 0.3), shift = pick({0.0, 0.5}, -0.45, 0.45);
      const bool x_axis = rng.below(2);
      const std::array<double, 6> m = x_axis ? std::array{1.0, shear, shift * width, 0.0, 1.0, 0.0}
                                             : std::array{1.0, 0.0, 0.0, shear, 1.0, shift * height};
      return px::pil::transform_affine(m, pil_interpolation(), maybe_fill(), width, height);
    }
    case 29:  // torchvision v1's tensor functionals (v1_color.hpp)
      return rng.below(2) ? px::v1::adjust_saturation(pick({0.0, 1.0}, 0.0, 2.5))
                          : px::v1::adjust_contrast(pick({0.0, 1.0}, 0.0, 2.5));
    case 30: return rng.below(2) ? px::v1::adjust_sharpness(pick({0.0, 1.0, 2.0}, 0.0, 3.0)) : px::v1::autocontrast();
    case 31: {  // v1's matrix on a tensor
      if (rng.below(2))
        return px::rotate({.angle = pick({0.0, 180.0, -30.0}, -360.0, 360.0), .interpolation = interpolation(),
                           .fill = maybe_fill(), .v1 = true},
                          width, height);
      px::AffineParams a{.interpolation = interpolation(), .fill = maybe_fill(), .v1 = true};
      a.translate = {std::floor(rng.uniform(-0.3, 0.3) * width), 0.0};
      a.shear = {pick({0.0}, -30.0, 30.0), pick({0.0}, -30.0, 30.0)};
      a.center = std::array{0.0, 0.0};
      return px::affine(a, width, height);
    }
    default: {
      const int h = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(height)));
      const int w = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(width)));
      const int top = static_cast<int>(rng.below(static_cast<std::uint64_t>(height - h + 1)));
      const int left = static_cast<int>(rng.below(static_cast<std::uint64_t>(width - w + 1)));
      if (rng.below(2)) return px::erase_random(top, left, h, w, rng.next_u64(), rng.below(3) == 0);
      return px::erase(top, left, h, w, {rng.uniform(-2.5, 2.5), rng.uniform(-2.5, 2.5), rng.uniform(-2.5, 2.5)});
    }
  }
}

/// A program of 1 to 16 random ops (erasing among them), valid on a `width` x `height` image; a
/// third of those of 4 ops or more mix (ops/pixel/mix.hpp): random ops, then a begin, chains of 0
/// to 3 random ops each closed by an add or blend_add, and an end, with weights in [0, 1] (the edges
/// among them).
inline conveyor::ops::pixel::PixelProgram random_program(conveyor::CounterRng& rng, int width, int height) {
  namespace px = conveyor::ops::pixel;
  px::PixelProgram program;
  const int length = 1 + static_cast<int>(rng.below(px::max_program_ops));
  const auto weight = [&] { return rng.below(4) == 0 ? static_cast<double>(rng.below(2)) : rng.uniform(); };
  int plain = length;
  if (length >= 4 && rng.below(3) == 0) plain = static_cast<int>(rng.below(static_cast<std::uint64_t>(length - 3)));
  for (int k = 0; k < plain; ++k) px::append(program, random_op(rng, width, height));
  if (plain < length) {
    px::append(program, px::mix(px::Mix::begin, weight()));
    for (int left = length - plain - 2; left > 0;) {
      const int ops = static_cast<int>(rng.below(static_cast<std::uint64_t>(std::min(left, 4))));
      for (int k = 0; k < ops; ++k) px::append(program, random_op(rng, width, height));
      px::append(program, px::mix(rng.below(2) ? px::Mix::add : px::Mix::blend_add, weight()));
      left -= ops + 1;
    }
    px::append(program, rng.below(2) ? px::mix(px::Mix::end) : px::mix(px::Mix::end_blend, weight()));
  }
  px::check(program, width, height);
  return program;
}

}  // namespace conveyor_test
