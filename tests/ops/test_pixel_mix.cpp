// AugMix's mixing steps (ops/pixel/mix.hpp) in the CPU executor: known answers for torchvision's
// sum, timm's sum blended with the image and timm's blended chains, chains that start from the
// saved image, and the orders a program's steps must come in.

#include <conveyor/core/error.hpp>
#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/pixel/registry.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <vector>

namespace px = conveyor::ops::pixel;

namespace {

px::PixelProgram mixing_program(std::initializer_list<px::PixelOp> ops) {
  px::PixelProgram p;
  for (const auto& op : ops) px::append(p, op);
  return p;
}

/// One pixel of three values through `program`.
std::vector<std::uint8_t> mixed_pixel(const px::PixelProgram& program, std::vector<std::uint8_t> rgb) {
  conveyor::ops::cpu::PixelScratch scratch;
  conveyor::ops::cpu::apply_pixel_ops(program, rgb.data(), 1, 1, scratch);
  return rgb;
}

}  // namespace

TEST_CASE("torchvision's mix: the image weighted, each chain from the saved image added, truncated",
          "[ops][pixel][mix]") {
  // 0.25 v + 0.5 (255 - v) + 0.25 v, exact in float32 for these values: v = 100 gives 127.5
  const px::PixelProgram program = mixing_program({px::mix(px::Mix::begin, 0.25), px::invert(),
                                                   px::mix(px::Mix::add, 0.5), px::mix(px::Mix::add, 0.25),
                                                   px::mix(px::Mix::end)});
  CHECK(mixed_pixel(program, {100, 0, 255}) == std::vector<std::uint8_t>{127, 127, 127});
  // the second chain starts from the saved image, not the first chain's result
  const px::PixelProgram two = mixing_program({px::mix(px::Mix::begin, 0.0), px::invert(), px::mix(px::Mix::add, 0.5),
                                               px::posterize(1), px::mix(px::Mix::add, 0.5), px::mix(px::Mix::end)});
  // v = 200: 0.5 * 55 + 0.5 * 128 = 91.5; v = 10: 0.5 * 245 + 0 = 122.5
  CHECK(mixed_pixel(two, {200, 10, 130}) == std::vector<std::uint8_t>{91, 122, 126});
}

TEST_CASE("timm's mix: the chains summed, clipped and truncated, then Image.blend with the image",
          "[ops][pixel][mix]") {
  // sum = 0.5 (255 - v) + 0.5 v = 127.5 -> 127; blend(v, 127, 0.5) = v + 0.5 (127 - v), truncated
  const px::PixelProgram program = mixing_program({px::mix(px::Mix::begin, 0.0), px::invert(),
                                                   px::mix(px::Mix::add, 0.5), px::mix(px::Mix::add, 0.5),
                                                   px::mix(px::Mix::end_blend, 0.5)});
  CHECK(mixed_pixel(program, {100, 255, 0}) == std::vector<std::uint8_t>{113, 191, 63});
  // a sum above 255 is clipped before the blend
  const px::PixelProgram over = mixing_program({px::mix(px::Mix::begin, 0.0), px::mix(px::Mix::add, 1.5),
                                                px::mix(px::Mix::end_blend, 1.0)});
  CHECK(mixed_pixel(over, {200, 100, 0}) == std::vector<std::uint8_t>{255, 150, 0});
}

TEST_CASE("timm's blended chains: each chain's result blended into the running image", "[ops][pixel][mix]") {
  // running = blend(v, 255 - v, 0.5), then blend(running, v, 0.25)
  const px::PixelProgram program = mixing_program({px::mix(px::Mix::begin, 1.0), px::invert(),
                                                   px::mix(px::Mix::blend_add, 0.5),
                                                   px::mix(px::Mix::blend_add, 0.25), px::mix(px::Mix::end)});
  // v = 100: 127.5 -> 127; 127 + 0.25 (100 - 127) = 120.25 -> 120. v = 0: 127 + 0.25 (0 - 127) = 95.25 -> 95;
  // v = 255: 127 + 0.25 (255 - 127) = 159
  CHECK(mixed_pixel(program, {100, 0, 255}) == std::vector<std::uint8_t>{120, 95, 159});
}

TEST_CASE("a program's mixing steps come in order, or the program is refused before any op runs",
          "[ops][pixel][mix]") {
  using px::Mix;
  const auto refused = [](std::initializer_list<px::PixelOp> ops) {
    std::vector<std::uint8_t> rgb{1, 2, 3};
    conveyor::ops::cpu::PixelScratch scratch;
    CHECK_THROWS_AS(conveyor::ops::cpu::apply_pixel_ops(mixing_program(ops), rgb.data(), 1, 1, scratch),
                    conveyor::ConfigError);
    CHECK(rgb == std::vector<std::uint8_t>{1, 2, 3});
  };
  refused({px::invert(), px::mix(Mix::add, 0.5), px::mix(Mix::end)});        // an add before any begin
  refused({px::mix(Mix::begin, 0.5), px::mix(Mix::begin, 0.5), px::mix(Mix::end)});  // begun twice
  refused({px::invert(), px::mix(Mix::begin, 0.5), px::mix(Mix::add, 0.5)});  // never ended
  refused({px::mix(Mix::end)});
  CHECK_THROWS_AS(px::mix(static_cast<Mix::Step>(9)), conveyor::ConfigError);
  CHECK_THROWS_AS(px::mix(Mix::add, std::numeric_limits<double>::infinity()), conveyor::ConfigError);
  // two mixes one after the other run
  std::vector<std::uint8_t> rgb{10, 20, 30};
  conveyor::ops::cpu::PixelScratch scratch;
  conveyor::ops::cpu::apply_pixel_ops(mixing_program({px::mix(Mix::begin, 0.5), px::mix(Mix::add, 0.5),
                                                      px::mix(Mix::end), px::mix(Mix::begin, 1.0), px::mix(Mix::end)}),
                                      rgb.data(), 1, 1, scratch);
  CHECK(rgb == std::vector<std::uint8_t>{10, 20, 30});
}
