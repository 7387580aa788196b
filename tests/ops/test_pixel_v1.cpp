// torchvision v1's tensor functionals (ops/pixel/v1_color.hpp) on cases where their numbers differ
// from v2's, each value torchvision 0.29's `transforms.functional` gives (and v2's beside it), run
// through the CPU executor so that the statistics they ask for are the executor's; v1's affine and
// rotate matrices. tests/parity/test_augmix.py holds them to torchvision on real photos.

#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/pixel/registry.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <tuple>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;

namespace {

/// `op` applied by the CPU executor to a `width` x `height` image of `rgb` values.
std::vector<int> applied(const px::PixelOp& op, std::vector<int> rgb, int width, int height) {
  px::PixelProgram program;
  px::append(program, op);
  px::check(program, width, height);
  std::vector<std::uint8_t> image(rgb.begin(), rgb.end());
  ops::cpu::PixelScratch scratch;
  ops::cpu::apply_pixel_ops(program, image.data(), width, height, scratch);
  return {image.begin(), image.end()};
}

/// A grey image (three equal channels) of `values`.
std::vector<int> grey(std::initializer_list<int> values) {
  std::vector<int> rgb;
  for (int v : values) rgb.insert(rgb.end(), {v, v, v});
  return rgb;
}

std::vector<int> channel0(const std::vector<int>& rgb) {
  std::vector<int> out;
  for (std::size_t p = 0; p < rgb.size(); p += 3) out.push_back(rgb[p]);
  return out;
}

}  // namespace

TEST_CASE("v1's grey sums three rounded products: 21 colours truncate below v2's", "[ops][pixel][v1]") {
  for (const auto& [rgb, v1, v2] : {std::tuple{std::array<std::uint8_t, 3>{20, 152, 7}, 95, 96},
                                    std::tuple{std::array<std::uint8_t, 3>{40, 244, 244}, 182, 183},
                                    std::tuple{std::array<std::uint8_t, 3>{40, 252, 80}, 168, 169}}) {
    CHECK(px::v1::gray(rgb.data()) == v1);
    CHECK(px::gray_floor(rgb.data()) == v2);
  }
  const std::uint8_t pixel[3] = {10, 20, 30};
  CHECK(px::v1::gray(pixel) == 18);
}

TEST_CASE("v1's saturation and contrast blend towards v1's grey with two rounded products", "[ops][pixel][v1]") {
  // one pixel whose greys differ: the saturation and the contrast (the mean of one grey) agree
  for (const px::PixelOp& op : {px::v1::adjust_saturation(0.5), px::v1::adjust_contrast(0.5)}) {
    CHECK(applied(op, {20, 152, 7}, 1, 1) == std::vector{57, 123, 51});
  }
  CHECK(applied(px::adjust_saturation(0.5), {20, 152, 7}, 1, 1) == std::vector{58, 124, 51});
  CHECK(applied(px::adjust_contrast(0.5), {20, 152, 7}, 1, 1) == std::vector{58, 124, 51});
  CHECK(applied(px::v1::adjust_saturation(0.0), {20, 152, 7}, 1, 1) == std::vector{95, 95, 95});
  // 0.3 x 3 + 0.7 x 13 rounds each product first: 9.999999, truncated to 9 (v2's fused sum: 10)
  for (const px::PixelOp& op : {px::v1::adjust_saturation(0.3), px::v1::adjust_contrast(0.3)}) {
    CHECK(applied(op, {3, 20, 10}, 1, 1) == std::vector{9, 15, 12});
  }
  CHECK(applied(px::adjust_contrast(0.3), {3, 20, 10}, 1, 1) == std::vector{10, 15, 12});
  // two pixels: the mean of v1's greys (95 and 18), 56.5
  CHECK(applied(px::v1::adjust_contrast(0.0), {20, 152, 7, 10, 20, 30}, 2, 1) == std::vector{56, 56, 56, 56, 56, 56});
}

TEST_CASE("v1's sharpness blends the border too, where x may truncate to x - 1", "[ops][pixel][v1]") {
  CHECK(channel0(applied(px::v1::adjust_sharpness(0.1), grey({3, 3, 3, 3, 3, 3, 3, 3, 3}), 3, 3)) ==
        std::vector{2, 2, 2, 2, 2, 2, 2, 2, 2});
  CHECK(channel0(applied(px::adjust_sharpness(0.1), grey({3, 3, 3, 3, 3, 3, 3, 3, 3}), 3, 3)) ==
        std::vector{3, 3, 3, 3, 3, 3, 3, 3, 3});
  const auto image = grey({10, 200, 30, 40, 250, 60, 70, 80, 90});
  CHECK(channel0(applied(px::v1::adjust_sharpness(0.5), image, 3, 3)) ==
        std::vector{10, 200, 30, 40, 195, 60, 70, 80, 90});
  CHECK(channel0(applied(px::v1::adjust_sharpness(0.0), image, 3, 3))[4] == 141);
  CHECK(channel0(applied(px::v1::adjust_sharpness(2.0), image, 3, 3))[4] == 255);
  // two rows or columns: unchanged, as v1 returns them
  CHECK(channel0(applied(px::v1::adjust_sharpness(0.1), grey({3, 3, 3, 3}), 2, 2)) == std::vector{3, 3, 3, 3});
}

TEST_CASE("v1's autocontrast multiplies by 255 / (max - min)", "[ops][pixel][v1]") {
  CHECK(channel0(applied(px::v1::autocontrast(), grey({50, 100, 150, 75}), 4, 1)) == std::vector{0, 127, 255, 63});
  CHECK(channel0(applied(px::autocontrast(), grey({50, 100, 150, 75}), 4, 1)) == std::vector{0, 127, 254, 63});
  CHECK(channel0(applied(px::v1::autocontrast(), grey({0, 1}), 2, 1)) == std::vector{0, 255});
  CHECK(channel0(applied(px::v1::autocontrast(), grey({9, 9, 9}), 3, 1)) == std::vector{9, 9, 9});
  // per channel
  CHECK(applied(px::v1::autocontrast(), {10, 0, 7, 20, 5, 7}, 2, 1) == std::vector{0, 0, 7, 255, 255, 7});
}

TEST_CASE("v1's records check their factors, and v1's affine and rotate take v1's matrix", "[ops][pixel][v1]") {
  CHECK_THROWS_WITH(px::v1::adjust_saturation(-1.0), Catch::Contains("saturation_factor must be finite and >= 0"));
  CHECK_THROWS_WITH(px::v1::adjust_contrast(NAN), Catch::Contains("contrast_factor must be finite and >= 0"));
  CHECK_THROWS_WITH(px::v1::adjust_sharpness(INFINITY), Catch::Contains("sharpness_factor must be finite and >= 0"));
  // rotate: no shortcut at 180 in v1 (a grid through v1's matrix), v2's turns the image over
  const px::PixelOp v1_turn = px::rotate({.angle = 180.0, .v1 = true}, 5, 4);
  const px::PixelOp v2_turn = px::rotate({.angle = 180.0}, 5, 4);
  CHECK(v1_turn.i[2] < 0);
  CHECK(v2_turn.i[2] == 2);
  const auto matrix = px::v1_inverse_affine_matrix({0.0, 0.0}, -180.0, {0.0, 0.0}, 1.0, {0.0, 0.0});
  for (int k = 0; k < 6; ++k) CHECK(v1_turn.f[k] == static_cast<float>(matrix[std::size_t(k)]));
  px::AffineParams shear{.shear = {17.0, 3.0}, .interpolation = px::Interpolation::bilinear, .v1 = true};
  const px::PixelOp v1_shear = px::affine(shear, 9, 7);
  const auto sheared = px::v1_inverse_affine_matrix({0.0, 0.0}, 0.0, {0.0, 0.0}, 1.0, {17.0, 3.0});
  for (int k = 0; k < 6; ++k) CHECK(v1_shear.f[k] == static_cast<float>(sheared[std::size_t(k)]));
}
