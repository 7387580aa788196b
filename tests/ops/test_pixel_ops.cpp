// The pixel ops (ops/pixel/) on small cases worked out by hand (and agreeing with torchvision
// 0.29), their factories' checks, the registry and its dispatch. tests/parity/test_pixel_ops.py
// holds every op to torchvision bit for bit on real photos and on every colour.

#include <conveyor/core/rng.hpp>
#include <conveyor/ops/pixel/registry.hpp>

#include <catch2/catch.hpp>

#include "support/torchvision_values.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;

namespace {

/// `op` applied to one pixel (a point op).
template <class Op>
std::array<int, 3> point(const px::PixelOp& op, std::array<int, 3> rgb) {
  std::uint8_t p[3] = {std::uint8_t(rgb[0]), std::uint8_t(rgb[1]), std::uint8_t(rgb[2])};
  Op::apply(op, p);
  return {p[0], p[1], p[2]};
}

/// A grey image (three equal channels) of `values`, `width` to a row.
std::vector<std::uint8_t> grey_image(const std::vector<int>& values) {
  std::vector<std::uint8_t> image;
  for (int v : values) image.insert(image.end(), {std::uint8_t(v), std::uint8_t(v), std::uint8_t(v)});
  return image;
}

/// A statistic op's result on `image`, channel 0.
template <class Op>
std::vector<int> through_table(const px::PixelOp& op, const std::vector<std::uint8_t>& image) {
  px::ImageStats s;
  s.pixels = static_cast<std::int64_t>(image.size() / 3);
  for (std::size_t p = 0; p < image.size(); p += 3) {
    s.gray_sum += px::gray_floor(&image[p]);
    for (int c = 0; c < 3; ++c) {
      s.min[c] = std::min<int>(s.min[c], image[p + c]);
      s.max[c] = std::max<int>(s.max[c], image[p + c]);
      ++s.histogram[c][image[p + c]];
    }
  }
  std::uint8_t lut[256];
  Op::table(op, s, 0, lut);
  std::vector<int> out;
  for (std::size_t p = 0; p < image.size(); p += 3) out.push_back(lut[image[p]]);
  return out;
}

/// A neighbourhood op's channel 0 on a grey `width` x `height` image.
template <class Op>
std::vector<int> neighbourhood(const px::PixelOp& op, const std::vector<int>& values, int width, int height) {
  const auto image = grey_image(values);
  typename Op::Prepared prepared;
  Op::prepare(op, width, height, prepared);
  std::vector<int> out;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      std::uint8_t rgb[3];
      Op::apply(op, prepared, image.data(), width, height, x, y, rgb);
      out.push_back(rgb[0]);
    }
  return out;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("point ops on pixels worked out by hand", "[ops][pixel]") {
  // 3 x 1.5 = 4.5 truncates; 200 x 1.5 clamps; 255 x float32(0.1) = 25.5000004
  CHECK(point<px::AdjustBrightness>(px::adjust_brightness(1.5), {3, 100, 200}) == std::array{4, 150, 255});
  CHECK(point<px::AdjustBrightness>(px::adjust_brightness(0.1), {255, 10, 77}) == std::array{25, 1, 7});
  // grey of (10, 20, 30): 0.2989 x 10 + 0.587 x 20 + 0.114 x 30 = 18.149
  CHECK(point<px::RgbToGrayscale>(px::rgb_to_grayscale(), {10, 20, 30}) == std::array{18, 18, 18});
  CHECK(point<px::AdjustSaturation>(px::adjust_saturation(0.0), {10, 20, 30}) == std::array{18, 18, 18});
  CHECK(point<px::AdjustSaturation>(px::adjust_saturation(1.0), {10, 20, 30}) == std::array{10, 20, 30});
  // saturation 2: 2x - 18 per channel
  CHECK(point<px::AdjustSaturation>(px::adjust_saturation(2.0), {10, 20, 30}) == std::array{2, 22, 42});
  CHECK(point<px::AdjustHue>(px::adjust_hue(0.5), {255, 0, 0}) == std::array{0, 255, 255});  // red to cyan
  CHECK(point<px::AdjustHue>(px::adjust_hue(1.0 / 3.0), {255, 0, 0}) == std::array{0, 255, 0});
  CHECK(point<px::AdjustHue>(px::adjust_hue(-0.25), {200, 120, 40}) == std::array{200, 40, 200});
  CHECK(point<px::AdjustHue>(px::adjust_hue(0.3), {77, 77, 77}) == std::array{77, 77, 77});  // grey has no hue
  CHECK(point<px::Invert>(px::invert(), {0, 200, 255}) == std::array{255, 55, 0});
  CHECK(point<px::Posterize>(px::posterize(3), {255, 0x1F, 0xA7}) == std::array{0xE0, 0, 0xA0});
  CHECK(point<px::Posterize>(px::posterize(8), {255, 0x1F, 0xA7}) == std::array{255, 0x1F, 0xA7});
  CHECK(point<px::Posterize>(px::posterize(0), {255, 0x1F, 0xA7}) == std::array{0, 0, 0});
  CHECK(point<px::Solarize>(px::solarize(128.0), {127, 128, 200}) == std::array{127, 127, 55});
  // compared in float32: 127.0000001 is 127.0f, so 127 inverts
  CHECK(point<px::Solarize>(px::solarize(127.0000001), {126, 127, 128}) == std::array{126, 128, 127});
}

TEST_CASE("the float32 grey is torchvision's to the bit", "[ops][pixel]") {
  // torchvision's _rgb_to_grayscale_image(preserve_dtype=False), float.hex()
  const auto grey = [](std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    const std::uint8_t rgb[3] = {r, g, b};
    return px::gray_float(rgb);
  };
  CHECK(grey(10, 20, 30) == 0x1.22624ep+4f);
  CHECK(grey(0, 255, 3) == 0x1.2c0dd2p+7f);  // 150.027: a weight 0.001 off moves it below 150
  CHECK(grey(255, 255, 255) == 0x1.fdf2f4p+7f);
  CHECK(grey(201, 3, 77) == 0x1.1a78bcp+6f);
  CHECK(point<px::RgbToGrayscale>(px::rgb_to_grayscale(), {0, 255, 3}) == std::array{150, 150, 150});
  CHECK(point<px::RgbToGrayscale>(px::rgb_to_grayscale(), {255, 255, 255}) == std::array{254, 254, 254});
}

TEST_CASE("hue round-trips every grey and primary at factor 0", "[ops][pixel]") {
  for (int v = 0; v < 256; ++v)
    for (std::array<int, 3> rgb : {std::array{v, v, v}, std::array{v, 0, 0}, std::array{0, v, 0}, std::array{0, 0, v}})
      REQUIRE(point<px::AdjustHue>(px::adjust_hue(0.0), rgb) == rgb);
}

TEST_CASE("hue equals torchvision's in every sector of its round trip, on colours whose channels differ",
          "[ops][pixel]") {
  namespace tv = conveyor_test::torchvision_values;
  for (std::size_t f = 0; f < tv::hue_factors.size(); ++f)
    for (std::size_t k = 0; k < tv::hue_colours.size(); ++k) {
      INFO("factor " << tv::hue_factors[f] << ", colour " << k);
      CHECK(point<px::AdjustHue>(px::adjust_hue(tv::hue_factors[f]), tv::hue_colours[k]) == tv::hue_adjusted[f][k]);
    }
}

TEST_CASE("equalize leaves the brightest value's pixels out of its step, as torchvision does", "[ops][pixel]") {
  namespace tv = conveyor_test::torchvision_values;
  const std::vector<int> values = tv::equalize_values();
  const std::vector<int> got = through_table<px::Equalize>(px::equalize(), grey_image(values));
  for (std::size_t i = 0; i < values.size(); ++i) {
    INFO("value " << values[i]);
    REQUIRE(got[i] == tv::equalized(values[i]));
  }
}

TEST_CASE("statistic ops on images worked out by hand", "[ops][pixel]") {
  // contrast: greys 18 and 124 (124.18), mean 71; 0.5 x v + 35.5 truncated
  std::vector<std::uint8_t> two = {10, 20, 30, 200, 100, 50};
  px::ImageStats s;
  s.pixels = 2;
  s.gray_sum = px::gray_floor(&two[0]) + px::gray_floor(&two[3]);
  CHECK(s.gray_sum == 142);
  std::uint8_t lut[256];
  px::AdjustContrast::table(px::adjust_contrast(0.5), s, 0, lut);
  CHECK((std::array{lut[10], lut[200], lut[20], lut[100], lut[30], lut[50]}) ==
        std::array<std::uint8_t, 6>{40, 135, 45, 85, 50, 60});
  // autocontrast: min 50, max 150, inv_scale = 100 x float32(1/255) rounds up, so 150 maps to 254
  CHECK(through_table<px::Autocontrast>(px::autocontrast(), grey_image({50, 100, 150, 75})) ==
        std::vector{0, 127, 254, 63});
  CHECK(through_table<px::Autocontrast>(px::autocontrast(), grey_image({9, 9, 9})) == std::vector{9, 9, 9});
  // equalize: 0 256 times and every other value once: step 510 / 255 = 2, v -> (256 + v) / 2
  std::vector<int> values(256, 0);
  for (int v = 1; v < 256; ++v) values.push_back(v);
  const auto eq = through_table<px::Equalize>(px::equalize(), grey_image(values));
  CHECK(eq[0] == 0);
  for (int v = 1; v < 256; ++v) REQUIRE(eq[255 + v] == 128 + v / 2);
  // fewer than 256 + 1 pixels: step 0, unchanged
  CHECK(through_table<px::Equalize>(px::equalize(), grey_image({3, 3, 10, 200})) == std::vector{3, 3, 10, 200});
}

TEST_CASE("sharpness blends a pixel with its 3 x 3 blur and leaves the border", "[ops][pixel]") {
  // neighbours sum to 400: (400 + 5 x 250) / 13 = 126.9, rounded 127
  const std::vector<int> image = {10, 20, 30, 40, 250, 60, 70, 80, 90};
  CHECK(neighbourhood<px::AdjustSharpness>(px::adjust_sharpness(0.0), image, 3, 3) ==
        std::vector{10, 20, 30, 40, 127, 60, 70, 80, 90});
  CHECK(neighbourhood<px::AdjustSharpness>(px::adjust_sharpness(0.5), image, 3, 3)[4] == 188);  // 188.5
  CHECK(neighbourhood<px::AdjustSharpness>(px::adjust_sharpness(2.0), image, 3, 3)[4] == 255);
  CHECK(neighbourhood<px::AdjustSharpness>(px::adjust_sharpness(1.0), image, 3, 3) == image);
  CHECK(neighbourhood<px::AdjustSharpness>(px::adjust_sharpness(0.0), {10, 250, 30, 40}, 2, 2) ==
        std::vector{10, 250, 30, 40});
}

TEST_CASE("gaussian kernels are torch's float32 values", "[ops][pixel]") {
  // torch 2.15's _get_gaussian_kernel1d (the first taps; the kernels are symmetric)
  struct Case {
    int k;
    double sigma;
    std::vector<float> taps;
  };
  for (const Case& c : {Case{3, 1.0, {0x1.18a572p-2f, 0x1.ceb51cp-2f}},
                        Case{5, 0.5, {0x1.14aec6p-12f, 0x1.b405bap-4f, 0x1.92b964p-1f}},
                        Case{23, 2.0, {0x1.ce8edcp-25f, 0x1.8f1694p-21f, 0x1.0c29b4p-17f, 0x1.18a996p-14f}},
                        Case{17, 1.3, {0x1.f8674cp-30f, 0x1.4d5bacp-23f, 0x1.e7ab18p-18f, 0x1.8ac8b0p-13f}}}) {
    INFO("kernel " << c.k << ", sigma " << c.sigma);
    const px::PixelOp op = px::gaussian_blur(c.k, c.k, c.sigma, c.sigma);
    px::GaussianBlur::Prepared p;
    px::GaussianBlur::prepare(op, 100, 100, p);
    for (std::size_t i = 0; i < c.taps.size(); ++i) {
      CHECK(p.x[i] == c.taps[i]);
      CHECK(p.x[c.k - 1 - i] == c.taps[i]);
      CHECK(p.y[i] == c.taps[i]);
    }
  }
}

TEST_CASE("a blur keeps a flat image and a one-tap kernel keeps any", "[ops][pixel]") {
  std::vector<int> flat(7 * 5, 93), ramp;
  for (int i = 0; i < 35; ++i) ramp.push_back(3 + 7 * i);
  CHECK(neighbourhood<px::GaussianBlur>(px::gaussian_blur(5, 3, 1.5, 0.7), flat, 7, 5) == flat);
  CHECK(neighbourhood<px::GaussianBlur>(px::gaussian_blur(1, 1, 1.0, 1.0), ramp, 7, 5) == ramp);
  // reflect padding: a 3-tap blur (weights 0.2741 0.4519 0.2741) of 10 10 250 reads index 1 for -1 and 3
  const auto step = neighbourhood<px::GaussianBlur>(px::gaussian_blur(3, 1, 1.0, 1.0), {10, 10, 250}, 3, 1);
  // 10 x 0.2741 + 10 x 0.4519 + 250 x 0.2741 = 75.8; 10 x 0.2741 + 250 x 0.4519 + 10 x 0.2741 = 118.4
  CHECK(step == std::vector{10, 76, 118});
}

TEST_CASE("affine and rotate on images worked out by hand", "[ops][pixel]") {
  std::vector<int> image;  // 5 x 4, 10..29
  for (int v = 10; v < 30; ++v) image.push_back(v);
  CHECK(neighbourhood<px::Affine>(px::affine({.translate = {2.0, 1.0}}, 5, 4), image, 5, 4) ==
        std::vector{0, 0, 0, 0, 0, 0, 0, 10, 11, 12, 0, 0, 15, 16, 17, 0, 0, 20, 21, 22});
  CHECK(neighbourhood<px::Affine>(px::affine({.translate = {2.0, 1.0}, .fill = std::array{7.0, 7.0, 7.0}}, 5, 4),
                                  image, 5, 4)[0] == 7);
  // half a pixel across, bilinear: means of neighbours, halves rounded to even (10.5 -> 10, 11.5 -> 12)
  const auto half = neighbourhood<px::Affine>(
      px::affine({.translate = {0.5, 0.0}, .interpolation = px::Interpolation::bilinear}, 5, 4), image, 5, 4);
  CHECK(std::vector(half.begin(), half.begin() + 5) == std::vector{5, 10, 12, 12, 14});
  std::vector<int> square;  // 4 x 4, 10..25
  for (int v = 10; v < 26; ++v) square.push_back(v);
  CHECK(neighbourhood<px::Affine>(px::rotate({.angle = 90.0}, 4, 4), square, 4, 4) ==
        std::vector{13, 17, 21, 25, 12, 16, 20, 24, 11, 15, 19, 23, 10, 14, 18, 22});
  CHECK(neighbourhood<px::Affine>(px::rotate({.angle = -90.0}, 4, 4), square, 4, 4) ==
        std::vector{22, 18, 14, 10, 23, 19, 15, 11, 24, 20, 16, 12, 25, 21, 17, 13});
  CHECK(neighbourhood<px::Affine>(px::rotate({.angle = 540.0}, 5, 4), image, 5, 4) ==
        std::vector<int>(image.rbegin(), image.rend()));
  CHECK(neighbourhood<px::Affine>(px::rotate({.angle = 720.0}, 5, 4), image, 5, 4) == image);
  // not square: 90 degrees resamples (a quarter turn would not fit)
  CHECK(px::rotate({.angle = 90.0}, 5, 4).i[2] == -1);
  CHECK(px::rotate({.angle = 90.0}, 4, 4).i[2] == 1);
  CHECK(px::rotate({.angle = 90.0, .center = std::array{2.0, 2.0}}, 4, 4).i[2] == -1);  // no shortcut with a centre
}

TEST_CASE("perspective on images worked out by hand, and torchvision's coefficients", "[ops][pixel]") {
  std::vector<int> image;  // 5 x 4, 10..29
  for (int v = 10; v < 30; ++v) image.push_back(v);
  const px::Corners corners = px::image_corners(5, 4);
  px::Corners shifted = corners;  // the corners moved by (2, 1): output (x, y) is source (x - 2, y - 1)
  for (auto& c : shifted) c[0] += 2, c[1] += 1;
  const auto shift = px::perspective_coefficients(corners, shifted);
  const std::array<float, 8> translation{1, 0, -2, 0, 1, -1, 0, 0};
  for (std::size_t k = 0; k < 8; ++k)  // exact, or a residue of the elimination where 0 is exact
    CHECK(std::abs(shift[k] - translation[k]) <= (translation[k] == 0.0f ? 1e-12f : 0.0f));
  const std::vector shifted_image{0, 0, 0, 0, 0, 0, 0, 10, 11, 12, 0, 0, 15, 16, 17, 0, 0, 20, 21, 22};
  CHECK(neighbourhood<px::Perspective>(px::perspective(shift, px::Interpolation::nearest, std::nullopt, 5, 4), image,
                                       5, 4) == shifted_image);
  CHECK(neighbourhood<px::PilPerspective>(px::pil::perspective(shift, px::Interpolation::nearest, std::nullopt, 5, 4),
                                          image, 5, 4) == shifted_image);
  CHECK(neighbourhood<px::Perspective>(
            px::perspective(shift, px::Interpolation::nearest, std::array{7.0, 7.0, 7.0}, 5, 4), image, 5, 4)[0] == 7);
  CHECK(neighbourhood<px::PilPerspective>(
            px::pil::perspective(shift, px::Interpolation::bilinear, std::array{7.9, 7.0, 7.0}, 5, 4), image, 5, 4)[0] ==
        7);  // Pillow's fill is int(fill)
  // the corners themselves: the identity, whichever the sampling
  const auto identity = px::perspective_coefficients(corners, corners);
  CHECK(identity == std::array<float, 8>{1, 0, 0, 0, 1, 0, 0, 0});
  for (const auto mode : {px::Interpolation::nearest, px::Interpolation::bilinear}) {
    CHECK(neighbourhood<px::Perspective>(px::perspective(identity, mode, std::nullopt, 5, 4), image, 5, 4) == image);
    CHECK(neighbourhood<px::PilPerspective>(px::pil::perspective(identity, mode, std::nullopt, 5, 4), image, 5, 4) ==
          image);
  }
  // torchvision 0.29's _get_perspective_coeffs for a 100 x 80 image (LAPACK's gels, float32)
  CHECK(px::perspective_coefficients(px::image_corners(100, 80), {{{3, 2}, {95, 5}, {97, 77}, {1, 70}}}) ==
        std::array<float, 8>{1.13695729f, 0.0334399194f, -3.47775173f, -0.0395669118f, 1.21338534f, -2.30806994f,
                             0.000572371006f, 0.000640889339f});
  // an image one pixel wide has no unique map (torch's lstsq fails too); a record is for its size
  CHECK_THROWS_WITH(px::perspective_coefficients(px::image_corners(1, 5), px::image_corners(1, 5)),
                    Catch::Contains("no unique map"));
  const px::PixelOp op = px::perspective(identity, px::Interpolation::bilinear, std::nullopt, 5, 4);
  CHECK_THROWS_WITH(px::Perspective::check(op, 4, 5), Catch::Contains("made for another image size"));
  CHECK_THROWS_WITH(px::perspective(identity, px::Interpolation::nearest, std::array{1.0, 300.0, 0.0}, 5, 4),
                    Catch::Contains("fill values must be in [0, 255]"));
}

TEST_CASE("torchvision's inverse affine matrix, as Python computes it", "[ops][pixel]") {
  // torchvision's _get_inverse_affine_matrix in Python 3.11 (float.hex())
  CHECK(px::inverse_affine_matrix({0.0, 0.0}, 30.0, {2.0, 1.0}, 1.0, {0.0, 0.0}) ==
        std::array{0x1.bb67ae8584cabp-1, 0x1.fffffffffffffp-2, -0x1.1db3d742c2655p+1, -0x1.fffffffffffffp-2,
                   0x1.bb67ae8584cabp-1, 0x1.126145e9ecd50p-3});
  CHECK(px::inverse_affine_matrix({3.5, -2.0}, -17.25, {1.5, -4.0}, 1.3, {12.0, -7.5}) ==
        std::array{0x1.866e275f16008p-1, -0x1.0c9862b2c6f4fp-4, -0x1.69990ee1833a3p-1, 0x1.0d17bd0f77d0ap-3,
                   0x1.8781c17e0b866p-1, 0x1.ee566e5077b0ap+0});
}

TEST_CASE("torchvision v1's inverse affine matrix, as Python computes it: v2's rounded otherwise", "[ops][pixel]") {
  // torchvision.transforms.functional._get_inverse_affine_matrix in Python 3.11 (float.hex())
  const auto v1 = px::v1_inverse_affine_matrix({3.5, -2.0}, -17.25, {1.5, -4.0}, 1.3, {12.0, -7.5});
  CHECK(v1 == std::array{0x1.866e275f16008p-1, -0x1.0c9862b2c6f4fp-4, -0x1.69990ee1833a0p-1, 0x1.0d17bd0f77d0ap-3,
                         0x1.8781c17e0b866p-1, 0x1.ee566e5077b0ap+0});
  CHECK(v1[2] != px::inverse_affine_matrix({3.5, -2.0}, -17.25, {1.5, -4.0}, 1.3, {12.0, -7.5})[2]);
  const auto about_the_middle = px::v1_inverse_affine_matrix({56.0, 40.0}, 12.6, {-3.0, 5.0}, 0.85, {7.3, -4.1});
  CHECK(about_the_middle == std::array{0x1.1aced2053001cp+0, 0x1.9afeb7f0d394cp-2, -0x1.49c8310683ca4p+4,
                                       -0x1.5b12b992edd02p-2, 0x1.2136b8ece32a6p+0, 0x1.c806664db8250p+2});
  CHECK(about_the_middle[1] != px::inverse_affine_matrix({56.0, 40.0}, 12.6, {-3.0, 5.0}, 0.85, {7.3, -4.1})[1]);
  // an affine record with v1's matrix: Pillow's bilinear engine keeps it in double, the tensor's in float32
  const px::AffineParams a{.angle = 12.6, .translate = {-3.0, 5.0}, .scale = 0.85, .shear = {7.3, -4.1},
                           .interpolation = px::Interpolation::bilinear, .v1 = true};
  const px::PixelOp pil = px::pil::affine(a, 112, 80), tensor = px::affine(a, 112, 80);
  const auto about_the_origin = px::v1_inverse_affine_matrix({0.0, 0.0}, 12.6, {-3.0, 5.0}, 0.85, {7.3, -4.1});
  for (int k = 0; k < 6; ++k) {
    CHECK(pil.d[k] == about_the_middle[static_cast<std::size_t>(k)]);
    CHECK(tensor.f[k] == static_cast<float>(about_the_origin[static_cast<std::size_t>(k)]));
  }
}

TEST_CASE("erase covers its rectangle with its values or a keyed normal stream", "[ops][pixel]") {
  const px::PixelOp op = px::erase(2, 3, 4, 5, {0.5, -1.25, 2.0});
  CHECK(px::Erase::covers(op, 3, 2));
  CHECK(px::Erase::covers(op, 7, 5));
  CHECK_FALSE(px::Erase::covers(op, 8, 5));
  CHECK_FALSE(px::Erase::covers(op, 7, 6));
  CHECK_FALSE(px::Erase::covers(op, 2, 2));
  CHECK(px::Erase::value(op, 1, 4, 4) == -1.25f);
  const px::PixelOp random = px::erase_random(2, 3, 4, 5, 0x123456789ABCDEF0ull);
  // element (c, y - top, x - left) of torchvision's [C, h, w] tensor: index (c h + y') w + x'
  CHECK(px::Erase::value(random, 2, 6, 4) == px::standard_normal(0x123456789ABCDEF0ull, (2 * 4 + 2) * 5 + 3));
  CHECK(px::Erase::value(random, 2, 6, 4) != px::Erase::value(random, 1, 6, 4));
  // timm's "rand": one value per channel, element (c, 0, 0) of a [C, 1, 1] tensor
  const px::PixelOp colour = px::erase_random(2, 3, 4, 5, 0x123456789ABCDEF0ull, true);
  for (int c = 0; c < 3; ++c) {
    CHECK(px::Erase::value(colour, c, 4, 2) == px::standard_normal(0x123456789ABCDEF0ull, std::uint64_t(c)));
    CHECK(px::Erase::value(colour, c, 7, 5) == px::Erase::value(colour, c, 3, 2));
  }
}

TEST_CASE("gaussian_noise adds torchvision's noise to uint8 and to float values, from the keyed stream",
          "[ops][pixel]") {
  const std::uint64_t key = 0x0FEDCBA987654321ull;
  const int width = 5, height = 4;
  const auto normal = [&](int c, int x, int y) { return px::standard_normal(key, std::uint64_t((c * height + y) * width + x)); };
  // uint8: ((mean * 255) + n * (sigma * 255)).to(int16), added, clamped or wrapped
  std::vector<std::uint8_t> src(std::size_t(width) * height * 3);
  for (std::size_t k = 0; k < src.size(); ++k) src[k] = std::uint8_t(k % 3 == 0 ? 2 : (k % 3 == 1 ? 128 : 253));
  for (const bool clip : {true, false}) {
    const px::PixelOp op = px::gaussian_noise(0.01, 0.2, clip, key);
    CHECK(op.f[0] == static_cast<float>(0.01 * 255));
    CHECK(op.f[1] == static_cast<float>(0.2 * 255));
    int clamped = 0, wrapped = 0;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        std::uint8_t rgb[3];
        px::GaussianNoise::apply(op, {}, src.data(), width, height, x, y, rgb);
        for (int c = 0; c < 3; ++c) {
          const float noise = ops::exact::add(ops::exact::mul(normal(c, x, y), op.f[1]), op.f[0]);
          const int sum = src[std::size_t((y * width + x) * 3 + c)] + static_cast<int>(std::trunc(noise));
          clamped += sum < 0 || sum > 255;
          wrapped += (sum < 0 || sum > 255) && !clip;
          CHECK(int(rgb[c]) == (clip ? std::clamp(sum, 0, 255) : ((sum % 256) + 256) % 256));
        }
      }
    CHECK(clamped > 0);  // the edges are met
    if (!clip) CHECK(wrapped > 0);
  }
  // float, between ToDtype and Normalize: mean + n * sigma, added, clamped to [0, 1]
  const px::PixelOp f = px::gaussian_noise_float(-0.05, 0.3, true, key), loose = px::gaussian_noise_float(-0.05, 0.3, false, key);
  int outside = 0;
  for (int c = 0; c < 3; ++c)
    for (float v : {0.0f, 0.25f, 1.0f}) {
      const float sum = ops::exact::add(v, ops::exact::add(ops::exact::mul(normal(c, 4, 3), 0.3f), -0.05f));
      outside += sum < 0.0f || sum > 1.0f;
      CHECK(px::GaussianNoiseFloat::scaled(loose, c, 4, 3, width, height, v) == sum);
      CHECK(px::GaussianNoiseFloat::scaled(f, c, 4, 3, width, height, v) == std::clamp(sum, 0.0f, 1.0f));
    }
  CHECK(outside > 0);
  // the normal values stay within the bound the uint8 record's check relies on
  CHECK(std::abs(px::normal_quantile(5.9604644775390625e-8f)) < px::max_standard_normal);
  CHECK(std::abs(px::normal_quantile(ops::exact::sub(1.0f, 5.9604644775390625e-8f))) < px::max_standard_normal);
  CHECK_THROWS_WITH(px::gaussian_noise(0.0, -0.1, true, key), Catch::Contains("sigma must be finite and >= 0"));
  CHECK_THROWS_WITH(px::gaussian_noise(100.0, 6.0, true, key), Catch::Contains("|mean| + 5.4 sigma must be <= 127"));
  CHECK_NOTHROW(px::gaussian_noise(-127.0, 0.0, false, key));
  CHECK_THROWS_WITH(px::gaussian_noise_float(0.0, 1e300, true, key), Catch::Contains("sigma must be finite in float32"));
  CHECK_THROWS_WITH(px::gaussian_noise_float(NAN, 0.1, true, key), Catch::Contains("mean must be finite"));
}

TEST_CASE("the normal stream is Philox4x32-10 into Wichura's quantile", "[ops][pixel]") {
  CounterRng rng(0x0123456789ABCDEFull, 0, 0, RngOp::user);
  for (std::uint64_t block = 0; block < 3; ++block) {
    const auto expected = philox4x32_10({std::uint32_t(block), 0, 0, 0}, {0x89ABCDEFu, 0x01234567u});
    for (int lane = 0; lane < 4; ++lane)
      CHECK(px::detail::philox_word(block, 0x0123456789ABCDEFull, lane) == expected[std::size_t(lane)]);
  }
  CHECK(px::normal_quantile(0.5f) == 0.0f);
  for (double wanted : {1e-7, 0.001, 0.025, 0.3, 0.075, 0.5 + 1e-3, 0.8, 0.975, 0.9999}) {
    const double p = static_cast<float>(wanted);
    INFO("p " << p);
    // the exact quantile through erfc, by bisection in double
    double lo = -8, hi = 8;
    for (int i = 0; i < 200; ++i) {
      const double mid = (lo + hi) / 2;
      (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
    }
    CHECK(px::normal_quantile(static_cast<float>(p)) == Approx(lo).margin(2e-6).epsilon(2e-6));
  }
  // moments of a million draws
  double sum = 0, squares = 0;
  const int n = 1000000;
  for (int i = 0; i < n; ++i) {
    const double z = px::standard_normal(42, std::uint64_t(i));
    sum += z;
    squares += z * z;
  }
  CHECK(std::abs(sum / n) < 0.005);
  CHECK(std::abs(squares / n - 1) < 0.005);
}

TEST_CASE("the logarithm of plain float operations is within 2 ulp of libm's", "[ops][pixel]") {
  CounterRng rng(3, 0, 0, RngOp::user);
  for (int i = 0; i < 100000; ++i) {
    const float x = ops::bits_float(0x33800000u + rng.next_u32() % (0x3F800000u - 0x33800000u));  // [2^-24, 1)
    const float ours = px::detail::log_positive(x), libm = std::log(x);
    REQUIRE(std::abs(ours - libm) <= 2 * std::abs(std::nextafter(libm, 0.0f) - libm) + 1e-7f);
  }
}

TEST_CASE("Sleef's expf reproduced is within an ulp of the exact exponential", "[ops][pixel]") {
  CounterRng rng(4, 0, 0, RngOp::user);
  for (int i = 0; i < 100000; ++i) {
    const float x = -static_cast<float>(rng.uniform(0.0, 103.0));
    const double exact = std::exp(double(x));
    const float ours = px::detail::sleef_expf(x);
    REQUIRE(std::abs(double(ours) - exact) <= std::abs(double(std::nextafter(ours, 1.0f)) - double(ours)));
  }
  CHECK(px::detail::sleef_expf(0.0f) == 1.0f);
  CHECK(px::detail::sleef_expf(-105.0f) == 0.0f);
  CHECK(px::detail::sleef_expf(-INFINITY) == 0.0f);
}

TEST_CASE("factories refuse what torchvision refuses, naming the op and the value", "[ops][pixel][errors]") {
  CHECK(message_of([] { (void)px::adjust_hue(0.6); }).find("adjust_hue: hue_factor must be in [-0.5, 0.5], got 0.6") !=
        std::string::npos);
  CHECK(message_of([] { (void)px::adjust_brightness(-0.5); }).find("got -0.5") != std::string::npos);
  CHECK(message_of([] { (void)px::adjust_contrast(NAN); }).find("contrast_factor must be finite") != std::string::npos);
  CHECK(message_of([] { (void)px::adjust_saturation(-1); }).find("adjust_saturation:") != std::string::npos);
  CHECK(message_of([] { (void)px::adjust_sharpness(INFINITY); }).find("adjust_sharpness:") != std::string::npos);
  CHECK(message_of([] { (void)px::posterize(9); }).find("bits must be in [0, 8], got 9") != std::string::npos);
  CHECK(message_of([] { (void)px::solarize(255.5); }).find("threshold must be <= 255") != std::string::npos);
  CHECK(message_of([] { (void)px::gaussian_blur(4, 3, 1, 1); }).find("odd and in [1, 63], got 4") != std::string::npos);
  CHECK(message_of([] { (void)px::gaussian_blur(3, 65, 1, 1); }).find("got 65") != std::string::npos);
  CHECK(message_of([] { (void)px::gaussian_blur(3, 3, 0, 1); }).find("sigma must be finite and > 0") != std::string::npos);
  CHECK(message_of([] { (void)px::affine({.scale = 0.0}, 10, 10); }).find("scale must be finite and > 0") !=
        std::string::npos);
  CHECK(message_of([] { (void)px::affine({.fill = std::array{0.0, 256.0, 0.0}}, 10, 10); })
            .find("fill values must be in [0, 255], got 256") != std::string::npos);
  CHECK(message_of([] { (void)px::rotate({.angle = NAN}, 10, 10); }).find("rotate: angle must be finite") !=
        std::string::npos);
  CHECK(message_of([] { (void)px::erase(-1, 0, 2, 2, {0, 0, 0}); }).find("erase: top and left must be >= 0") !=
        std::string::npos);
  // the location is the factory's, not the shared check's
  CHECK(message_of([] { (void)px::posterize(9); }).rfind("posterize.hpp:", 0) == 0);
}

TEST_CASE("a program holds at most 16 ops", "[ops][pixel][errors]") {
  px::PixelProgram program;
  for (int k = 0; k < px::max_program_ops; ++k) px::append(program, px::invert());
  CHECK(program.count == 16);
  CHECK(message_of([&] { px::append(program, px::invert()); }).find("at most 16 ops") != std::string::npos);
}

TEST_CASE("the registry dispatches each code to its op and no other", "[ops][pixel][registry]") {
  const std::vector<std::pair<px::PixelOp, std::string>> made = {
      {px::adjust_brightness(1), "adjust_brightness"}, {px::adjust_contrast(1), "adjust_contrast"},
      {px::adjust_saturation(1), "adjust_saturation"}, {px::adjust_hue(0), "adjust_hue"},
      {px::rgb_to_grayscale(), "rgb_to_grayscale"},    {px::invert(), "invert"},
      {px::posterize(4), "posterize"},                 {px::solarize(9), "solarize"},
      {px::autocontrast(), "autocontrast"},            {px::equalize(), "equalize"},
      {px::adjust_sharpness(1), "adjust_sharpness"},   {px::gaussian_blur(3, 3, 1, 1), "gaussian_blur"},
      {px::affine({}, 4, 4), "affine"},                {px::erase(0, 0, 1, 1, {0, 0, 0}), "erase"},
      {px::pil::adjust_brightness(1), "adjust_brightness"}, {px::pil::adjust_contrast(1), "adjust_contrast"},
      {px::pil::adjust_saturation(1), "adjust_saturation"}, {px::pil::adjust_hue(0), "adjust_hue"},
      {px::pil::adjust_sharpness(1), "adjust_sharpness"},   {px::pil::rgb_to_grayscale(), "rgb_to_grayscale"},
      {px::pil::autocontrast(), "autocontrast"},            {px::permute_channels({2, 0, 1}), "permute_channels"}};
  for (const auto& [op, name] : made) {
    INFO(name);
    CHECK(std::string(px::op_name(op.code)) == name);
    int calls = 0;
    CHECK(px::visit(op.code, [&]<class Op>() {
      ++calls;
      CHECK(std::string(Op::name) == name);
    }));
    CHECK(calls == 1);
  }
  CHECK(px::op_kind(px::adjust_hue(0).code) == px::OpKind::point);
  CHECK(px::op_kind(px::equalize().code) == px::OpKind::statistic);
  CHECK(px::op_kind(px::gaussian_blur(3, 3, 1, 1).code) == px::OpKind::neighbourhood);
  CHECK(px::op_kind(px::erase(0, 0, 1, 1, {0, 0, 0}).code) == px::OpKind::erase);
  int calls = 0;
  CHECK_FALSE(px::visit(0, [&]<class>() { ++calls; }));
  CHECK_FALSE(px::visit(999, [&]<class>() { ++calls; }));
  CHECK(calls == 0);
  CHECK(std::string(px::op_name(999)) == "unknown");
  CHECK(message_of([] { (void)px::op_kind(999); }).find("pixel op code 999 is not registered") != std::string::npos);
}

TEST_CASE("check names the first record that cannot run on the image, and why", "[ops][pixel][errors]") {
  px::PixelProgram program;
  px::append(program, px::adjust_hue(0.1));
  px::append(program, px::gaussian_blur(23, 3, 1, 1));
  CHECK_NOTHROW(px::check(program, 12, 12));
  CHECK(message_of([&] { px::check(program, 11, 12); })
            .find("pixel op 1 of the program on a 11 x 12 image: gaussian_blur: the kernel's half size") !=
        std::string::npos);
  px::PixelProgram other;
  px::append(other, px::affine({.angle = 10}, 20, 30));
  CHECK_NOTHROW(px::check(other, 20, 30));
  CHECK(message_of([&] { px::check(other, 30, 20); }).find("affine: the record was made for another image size") !=
        std::string::npos);
  px::PixelProgram erasing;
  px::append(erasing, px::erase(5, 5, 10, 10, {0, 0, 0}));
  CHECK(message_of([&] { px::check(erasing, 14, 20); }).find("erase: the rectangle must lie inside the image") !=
        std::string::npos);
  px::PixelProgram unknown;
  px::append(unknown, px::invert());
  px::append(unknown, px::PixelOp{.code = 77});
  CHECK(message_of([&] { px::check(unknown, 5, 5); }).find("pixel op 1 of the program on a 5 x 5 image: code 77") !=
        std::string::npos);
  px::PixelProgram broken;
  broken.count = 17;
  CHECK(message_of([&] { px::check(broken, 5, 5); }).find("0 to 16 ops, not 17") != std::string::npos);
}

static_assert(std::is_trivially_copyable_v<px::PixelOp> && std::is_trivially_copyable_v<px::PixelProgram>,
              "records are plain data: copied to the device as bytes");
static_assert(sizeof(px::PixelOp) == 120);

TEST_CASE("Pillow's bicubic Image.transform, and timm's solarize_add, against their outputs", "[ops][pixel]") {
  // Pillow 13: Image.fromarray(src).transform((5, 4), AFFINE, (1, 0.27, -0.6, 0.1, 1, 0.4), BICUBIC,
  // fillcolor=(10, 20, 30)) of a random 5 x 4 image: clamped at 0, the fill past the edge
  const std::vector<std::uint8_t> src{
      168, 229, 184, 171, 238, 171, 20,  206, 245, 153, 204, 5,   37,  53,  213, 206, 192, 173, 6,   120,
      63,  96,  236, 131, 118, 4,   87,  161, 124, 71,  42,  73,  237, 16,  194, 250, 10,  103, 206, 13,
      143, 2,   38,  71,  133, 118, 36,  98,  196, 35,  57,  146, 50,  179, 145, 104, 206, 53,  141, 33};
  const std::vector<std::uint8_t> pillow{
      217, 232, 181, 141, 181, 113, 46, 218, 120, 121, 135, 118, 150, 46, 78,  149, 135, 223, 0,  160,
      191, 11,  175, 200, 12,  114, 17, 48,  82,  98,  57,  47,  183, 116, 115, 167, 89,  60,  193, 102,
      124, 141, 43,  130, 41,  164, 22, 51,  10,  20,  30,  10,  20,  30,  10,  20,  30,  10,  20,  30};
  const px::PixelOp op = px::pil::transform_affine({1.0, 0.27, -0.6, 0.1, 1.0, 0.4}, px::Interpolation::bicubic,
                                                   std::array{10.0, 20.0, 30.0}, 5, 4);
  CHECK(op.i[0] == px::PilAffine::bicubic);
  std::vector<std::uint8_t> out;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) {
      std::uint8_t rgb[3];
      px::PilAffine::apply(op, {}, src.data(), 5, 4, x, y, rgb);
      out.insert(out.end(), rgb, rgb + 3);
    }
  CHECK(out == pillow);
  // torch's kernels have no bicubic here: refused on a tensor, with what runs instead
  CHECK_THROWS_WITH(px::affine({.angle = 3.0, .interpolation = px::Interpolation::bicubic}, 5, 4),
                    Catch::Contains("bicubic runs on PIL images only (Pillow's)"));
  CHECK_THROWS_WITH(px::rotate({.angle = 0.0, .interpolation = px::Interpolation::bicubic}, 5, 4),
                    Catch::Contains("bicubic runs on PIL images only"));
  CHECK_NOTHROW(px::pil::rotate({.angle = 7.0, .interpolation = px::Interpolation::bicubic}, 5, 4));
  // timm's table: min(255, i + add) below thresh, else i
  CHECK(point<px::SolarizeAdd>(px::solarize_add(110), {0, 127, 128}) == std::array{110, 237, 128});
  CHECK(point<px::SolarizeAdd>(px::solarize_add(128, 256), {200, 255, 127}) == std::array{255, 255, 255});
  CHECK(point<px::SolarizeAdd>(px::solarize_add(50, 0), {0, 1, 255}) == std::array{0, 1, 255});
  CHECK_THROWS_WITH(px::solarize_add(-1), Catch::Contains("add must be in [0, 255]"));
  CHECK_THROWS_WITH(px::solarize_add(3, 257), Catch::Contains("thresh must be in [0, 256]"));
}
