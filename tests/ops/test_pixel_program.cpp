// The CPU pixel-program executor (ops/cpu/pixel_program.hpp): ops in order in place, the store
// with erasing in every dtype and layout, no allocation once warm, and the same bits when the
// executor is compiled with FMA instructions and contraction on.

#include <conveyor/core/rng.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/pixel/gaussian_blur_tiles.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/pixel_programs.hpp"
#ifdef CONVEYOR_TEST_CONTRACTED
#include "fp_contract/pixel_program_contracted.hpp"
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;
using conveyor_test::PixelImage;

namespace {

px::PixelProgram program_of(std::initializer_list<px::PixelOp> ops) {
  px::PixelProgram p;
  for (const auto& op : ops) px::append(p, op);
  return p;
}

std::vector<std::uint8_t> applied(const px::PixelProgram& program, PixelImage image) {
  ops::cpu::PixelScratch scratch;
  ops::cpu::apply_pixel_ops(program, image.pixels.data(), image.width, image.height, scratch);
  return image.pixels;
}

ops::OutputParams output(DType dtype, Layout layout) {
  ops::OutputParams p;
  p.dtype = dtype;
  p.layout = layout;
  for (int c = 0; dtype != DType::u8 && c < 3; ++c) {  // ImageNet's statistics
    const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
    p.scale[c] = 1.0f / (255.0f * std[c]);
    p.bias[c] = -mean[c] / std[c];
  }
  return p;
}

std::vector<PixelImage> photo_windows(const std::filesystem::path& data, int width, int height) {
  std::vector<PixelImage> windows;
  for (const auto& name : conveyor_test::small_photos()) {
    const PixelImage photo = conveyor_test::decode_photo(data, name);
    windows.push_back(conveyor_test::window(photo, (photo.width - width) / 2, (photo.height - height) / 3, width, height));
  }
  return windows;
}

}  // namespace

TEST_CASE("a program applies its ops in order, each to the previous one's result", "[ops][pixel][program]") {
  const PixelImage image = conveyor_test::random_pixels(37, 23, 5);
  const px::PixelOp ops[] = {px::adjust_hue(0.2),       px::equalize(), px::gaussian_blur(5, 3, 1.1, 0.6),
                             px::adjust_brightness(1.4), px::affine({.angle = 21.0, .interpolation = px::Interpolation::bilinear}, 37, 23),
                             px::autocontrast(),         px::adjust_sharpness(1.7), px::solarize(100.0)};
  PixelImage step = image;
  for (const auto& op : ops) {
    step.pixels = applied(program_of({op}), step);
  }
  px::PixelProgram all;
  for (const auto& op : ops) px::append(all, op);
  CHECK(applied(all, image) == step.pixels);
  // and not in another order
  px::PixelProgram swapped = all;
  std::swap(swapped.ops[0], swapped.ops[1]);
  CHECK(applied(swapped, image) != step.pixels);
}

TEST_CASE("a neighbourhood op reads the image before it, not its own output", "[ops][pixel][program]") {
  const PixelImage image = conveyor_test::random_pixels(16, 9, 6);
  const px::PixelOp op = px::adjust_sharpness(0.0);
  px::AdjustSharpness::Prepared prepared;
  std::vector<std::uint8_t> expected(image.pixels.size());
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      px::AdjustSharpness::apply(op, prepared, image.pixels.data(), image.width, image.height, x, y,
                                 expected.data() + (y * image.width + x) * 3);
  CHECK(applied(program_of({op}), image) == expected);
}

namespace {

/// A random GaussianBlur over random pixels of a `width` x `height` image: odd kernels, at most 63
/// and with half below the side (reflect padding), the largest allowed when `largest`; sigmas that
/// zero most taps or none.
struct BlurCase {
  px::PixelOp op;
  PixelImage image;
  px::GaussianBlur::Prepared prepared{};

  BlurCase(CounterRng& rng, int width, int height, bool largest, std::uint64_t seed)
      : op(random_op(rng, width, height, largest)), image(conveyor_test::random_pixels(width, height, seed)) {
    px::GaussianBlur::prepare(op, width, height, prepared);
  }
  static px::PixelOp random_op(CounterRng& rng, int width, int height, bool largest) {
    const auto kernel = [&](int side) {
      const int most = std::min(px::max_blur_kernel, 2 * (side - 1) + 1);
      return largest ? most : 1 + 2 * static_cast<int>(rng.below(static_cast<std::uint64_t>(most / 2 + 1)));
    };
    const auto sigma = [&] { return rng.below(3) == 0 ? rng.uniform(0.05, 0.6) : rng.uniform(0.1, 12.0); };
    const int kx = kernel(width), ky = kernel(height);
    const double sx = sigma(), sy = sigma();
    return px::gaussian_blur(kx, ky, sx, sy);
  }
};

/// `GaussianBlur::apply` pixel by pixel: the reference the other passes hold to.
std::vector<std::uint8_t> blurred_per_pixel(const BlurCase& b) {
  std::vector<std::uint8_t> out(b.image.pixels.size());
  for (int y = 0; y < b.image.height; ++y)
    for (int x = 0; x < b.image.width; ++x)
      px::GaussianBlur::apply(b.op, b.prepared, b.image.pixels.data(), b.image.width, b.image.height, x, y,
                              out.data() + (y * b.image.width + x) * 3);
  return out;
}

}  // namespace

TEST_CASE("GaussianBlur's vectorised pass equals the per-pixel reference on random sizes, kernels and sigmas",
          "[ops][pixel][program]") {
  CounterRng rng(21, 0, 0, RngOp::user);
  for (int k = 0; k < 120; ++k) {
    const int width = 1 + static_cast<int>(rng.below(80)), height = 1 + static_cast<int>(rng.below(80));
    const BlurCase b(rng, width, height, false, 100 + static_cast<std::uint64_t>(k));
    INFO(width << " x " << height << ", kernel " << b.op.i[0] << " x " << b.op.i[1] << ", sigma " << b.op.f[0]
               << ", " << b.op.f[1]);
    CHECK(applied(program_of({b.op}), b.image) == blurred_per_pixel(b));
  }
}

TEST_CASE("GaussianBlur's GPU tiles, run one work item at a time, equal the per-pixel reference",
          "[ops][pixel][program]") {
  // The kernel's arithmetic and indexing (cuda/kernels/pixel_gaussian_blur.cuh adds threads and
  // barriers): one tile and many, across and down, bands of every height, clamped inputs at the
  // right and bottom edges, kernels whose zero taps are skipped or not, up to 63 x 63.
  CounterRng rng(22, 0, 0, RngOp::user);
  for (int k = 0; k < 40; ++k) {
    const bool largest = k < 2;  // 63 x 63 over several bands of the fewest rows a tile holds
    const int width = largest ? 70 : 1 + static_cast<int>(rng.below(120));
    const int height = largest ? 131 : 1 + static_cast<int>(rng.below(150));
    const BlurCase b(rng, width, height, largest, 300 + static_cast<std::uint64_t>(k));
    INFO(width << " x " << height << ", kernel " << b.op.i[0] << " x " << b.op.i[1] << ", sigma " << b.op.f[0]
               << ", " << b.op.f[1]);
    const px::BlurTiling t = px::blur_tiling(b.op, b.prepared, height);
    REQUIRE(t.tile_floats() <= px::blur_tile_floats);
    std::vector<std::uint8_t> tiled(b.image.pixels.size(), 0);
    std::vector<float> across(px::blur_weights), tile(px::blur_tile_floats);
    for (int j = 0; j < px::blur_weights; ++j) across[static_cast<std::size_t>(j)] = px::blur_across(t, b.prepared, j);
    for (int y0 = 0; y0 < height; y0 += t.rows)
      for (int x0 = 0; x0 < width; x0 += px::blur_tile_width)
        for (int c = 0; c < 3; ++c) {
          for (int e = 0; e < t.tile_floats(); ++e)
            tile[static_cast<std::size_t>(e)] =
                px::blur_tile_value(t, b.image.pixels.data(), width, height, x0, y0, c, e);
          for (int item = 0; item < t.items(); ++item)
            px::blur_tile_item(t, b.prepared, tile.data(), across.data(), width, height, x0, y0, c, item, tiled.data());
        }
    CHECK(tiled == blurred_per_pixel(b));
  }
}

TEST_CASE("statistic ops see the whole image: contrast's mean, equalize's histogram", "[ops][pixel][program]") {
  // half the image at 40, half at 200 (greys 39 and 199: 0.2989 + 0.587 + 0.114 = 0.9999): mean 119
  PixelImage image{4, 2, std::vector<std::uint8_t>(24, 40)};
  std::fill(image.pixels.begin() + 12, image.pixels.end(), 200);
  const auto contrast = applied(program_of({px::adjust_contrast(0.0)}), image);
  CHECK(contrast == std::vector<std::uint8_t>(24, 119));
  const auto half = applied(program_of({px::adjust_contrast(0.5)}), image);
  CHECK(half[0] == 79);    // 20 + 59.5
  CHECK(half[23] == 159);  // 100 + 59.5
}

TEST_CASE("the executor refuses, before any op runs, a record it cannot run on the image", "[ops][pixel][program]") {
  // Each would read outside the image or its prepared weights: a blur whose half kernel reaches
  // the image's side (reflect padding's index leaves it), kernel sizes past the weights, a record
  // made for another size, a quarter turn of a non-square image, an unknown code.
  const auto refused = [](const px::PixelProgram& program, int width, int height, const char* why) {
    PixelImage image = conveyor_test::random_pixels(width, height, 7);
    const std::vector<std::uint8_t> before = image.pixels;
    ops::cpu::PixelScratch scratch;
    INFO(why << " on " << width << " x " << height);
    CHECK_THROWS_AS(ops::cpu::apply_pixel_ops(program, image.pixels.data(), width, height, scratch), ConfigError);
    CHECK(image.pixels == before);
  };
  for (int side = 1; side <= 12; ++side)
    for (int k = 1; k <= px::max_blur_kernel; k += 2) {
      const px::PixelProgram blur = program_of({px::invert(), px::gaussian_blur(k, 1, 1.0, 1.0)});
      if (k / 2 >= side) refused(blur, side, 3, "a blur as wide as the image");
      else CHECK_NOTHROW(applied(blur, conveyor_test::random_pixels(side, 3, 7)));
    }
  refused(program_of({px::gaussian_blur(3, 23, 1.0, 1.0)}), 40, 11, "a blur as high as the image");
  px::PixelOp wide = px::gaussian_blur(63, 63, 1.0, 1.0);
  wide.i[0] = 65;
  refused(program_of({wide}), 100, 100, "a kernel larger than the prepared weights");
  refused(program_of({px::rotate({.angle = 30.0}, 8, 9)}), 9, 8, "an affine record made for another size");
  px::PixelOp turn = px::rotate({.angle = 90.0}, 8, 8);
  turn.i[3] = 9;
  refused(program_of({turn}), 9, 8, "a quarter turn of a non-square image");
  refused(program_of({px::erase(5, 0, 4, 2, {1.0, 1.0, 1.0})}), 8, 8, "an erased rectangle past the image");
  refused(program_of({px::invert(), px::PixelOp{.code = 99}}), 8, 8, "an unknown code");
}

TEST_CASE("the store normalises like store() and erases with the last covering record", "[ops][pixel][program]") {
  const PixelImage image = conveyor_test::random_pixels(11, 7, 8);
  const px::PixelProgram program = program_of({px::erase(1, 2, 3, 4, {0.5, -1.25, 2.0}),
                                               px::erase(2, 4, 4, 5, {-3.0, 0.0, 300.0})});
  for (DType dtype : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      INFO(to_string(dtype) << " " << to_string(layout));
      const ops::OutputParams params = output(dtype, layout);
      const std::size_t esize = dtype_size(dtype);
      std::vector<std::byte> got(image.pixels.size() * esize), plain(got.size()), value(esize);
      ops::cpu::store_pixels(program, image.pixels.data(), 11, 7, params, got.data());
      ops::cpu::store_pixels({}, image.pixels.data(), 11, 7, params, plain.data());
      for (int y = 0; y < 7; ++y)
        for (int x = 0; x < 11; ++x)
          for (int c = 0; c < 3; ++c) {
            const std::int64_t i = ops::element_index(layout, c, y, x, 7, 11);
            const bool second = y >= 2 && y < 6 && x >= 4 && x < 9, first = y >= 1 && y < 4 && x >= 2 && x < 6;
            if (second || first) {
              const float v = second ? std::array{-3.0f, 0.0f, 300.0f}[c] : std::array{0.5f, -1.25f, 2.0f}[c];
              px::store_value(value.data(), 0, v, dtype);
              REQUIRE(std::memcmp(got.data() + i * esize, value.data(), esize) == 0);
            } else {
              ops::store(value.data(), 0, image.pixels[(y * 11 + x) * 3 + c], c, params);
              REQUIRE(std::memcmp(got.data() + i * esize, value.data(), esize) == 0);
              REQUIRE(std::memcmp(plain.data() + i * esize, value.data(), esize) == 0);
            }
          }
    }
  // u8 output holds erasing values truncated and clamped
  std::uint8_t u8[3];
  px::store_value(u8, 0, -3.0f, DType::u8);
  px::store_value(u8, 1, 300.0f, DType::u8);
  px::store_value(u8, 2, 7.9f, DType::u8);
  CHECK((u8[0] == 0 && u8[1] == 255 && u8[2] == 7));
}

TEST_CASE("the store adds the scaled ops' noise between ToDtype's or ToTensor's scaling and Normalize, "
          "erasing after", "[ops][pixel][program]") {
  namespace ex = ops::exact;
  const PixelImage image = conveyor_test::random_pixels(9, 6, 12);
  const std::uint64_t key = 77;
  const px::PixelProgram program = program_of({px::gaussian_noise_float(0.02, 0.1, true, key),
                                               px::erase(1, 2, 3, 4, {0.5, -1.25, 2.0}),
                                               px::gaussian_noise_float(-0.1, 0.05, false, key + 1)});
  const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  for (const bool divide : {false, true})
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
      for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
        INFO(to_string(dtype) << " " << to_string(layout) << (divide ? ", ToTensor" : ", ToDtype"));
        ops::OutputParams params;  // torchvision's roundings, as ImageAugment gives them with scaled ops
        params.dtype = dtype;
        params.layout = layout;
        params.divide = divide;
        for (int c = 0; c < 3; ++c) params.scale[c] = float(1.0 / 255.0), params.bias[c] = mean[c], params.divisor[c] = std[c];
        const std::size_t esize = dtype_size(dtype);
        std::vector<std::byte> got(image.pixels.size() * esize), value(esize);
        ops::cpu::store_pixels(program, image.pixels.data(), 9, 6, params, got.data());
        int clipped = 0;
        for (int y = 0; y < 6; ++y)
          for (int x = 0; x < 9; ++x)
            for (int c = 0; c < 3; ++c) {
              const std::int64_t i = ops::element_index(layout, c, y, x, 6, 9);
              const float u = image.pixels[std::size_t((y * 9 + x) * 3 + c)];
              const auto index = std::uint64_t((c * 6 + y) * 9 + x);
              float v = divide ? ex::div(u, 255.0f) : ex::mul(u, float(1.0 / 255.0));
              const float first = ex::add(v, ex::add(ex::mul(px::standard_normal(key, index), 0.1f), 0.02f));
              clipped += first < 0.0f || first > 1.0f;
              v = std::clamp(first, 0.0f, 1.0f);
              v = ex::add(v, ex::add(ex::mul(px::standard_normal(key + 1, index), 0.05f), -0.1f));
              v = ex::div(ex::sub(v, mean[c]), std[c]);
              if (y >= 1 && y < 4 && x >= 2 && x < 6) v = std::array{0.5f, -1.25f, 2.0f}[std::size_t(c)];
              px::store_value(value.data(), 0, v, dtype);
              REQUIRE(std::memcmp(got.data() + i * esize, value.data(), esize) == 0);
            }
        CHECK(clipped > 0);
      }
}

TEST_CASE("running a program allocates nothing once warm", "[ops][pixel][program]") {
  PixelImage image = conveyor_test::random_pixels(64, 48, 9);
  const px::PixelProgram program =
      program_of({px::gaussian_blur(7, 7, 1.0, 1.0), px::adjust_sharpness(1.5), px::rotate({.angle = 10.0}, 64, 48)});
  ops::cpu::PixelScratch scratch;
  std::vector<float> out(image.pixels.size());
  const ops::OutputParams params = output(DType::f32, Layout::NCHW);
  ops::cpu::run_pixel_program(program, image.pixels.data(), 64, 48, params, out.data(), scratch);
  const auto* buffer = scratch.image.data();
  const float *rows = scratch.blur.rows.data(), *weights = scratch.blur.weights.data();
  const auto* lines = scratch.blur.lines.data();
  REQUIRE((rows != nullptr && weights != nullptr && lines != nullptr));
  for (int k = 0; k < 3; ++k)
    ops::cpu::run_pixel_program(program, image.pixels.data(), 64, 48, params, out.data(), scratch);
  CHECK(scratch.image.data() == buffer);
  CHECK(scratch.blur.rows.data() == rows);
  CHECK(scratch.blur.weights.data() == weights);
  CHECK(scratch.blur.lines.data() == lines);
}

#ifdef CONVEYOR_TEST_CONTRACTED
TEST_CASE("the executor compiled with -O3 -march=native -ffp-contract=fast gives the same bits",
          "[ops][pixel][program][contract]") {
  const auto compare = [](const px::PixelProgram& program, const PixelImage& image, DType dtype, Layout layout) {
    const ops::OutputParams params = output(dtype, layout);
    const std::size_t bytes = image.pixels.size() * dtype_size(dtype);
    std::vector<std::byte> regular(bytes), contracted(bytes);
    PixelImage a = image, b = image;
    ops::cpu::PixelScratch scratch;
    ops::cpu::run_pixel_program(program, a.pixels.data(), a.width, a.height, params, regular.data(), scratch);
    conveyor_test_run_pixel_program_contracted(&program, b.pixels.data(), b.width, b.height, &params,
                                               contracted.data());
    REQUIRE(a.pixels == b.pixels);
    REQUIRE(regular == contracted);
  };
  SECTION("hue, saturation and grey on every colour") {
    PixelImage colours{4096, 4096, std::vector<std::uint8_t>(std::size_t(3) << 24)};
    for (std::uint32_t v = 0; v < (1u << 24); ++v) {
      colours.pixels[v * 3] = std::uint8_t(v >> 16);
      colours.pixels[v * 3 + 1] = std::uint8_t(v >> 8);
      colours.pixels[v * 3 + 2] = std::uint8_t(v);
    }
    for (const px::PixelOp& op : {px::adjust_hue(0.1), px::adjust_hue(-0.37), px::adjust_saturation(0.6),
                                  px::rgb_to_grayscale()}) {
      INFO(px::op_name(op.code) << " " << op.f[0]);
      compare(program_of({op}), colours, DType::u8, Layout::NHWC);
    }
  }
  SECTION("random programs on photos and random pixels, every dtype and layout") {
    CONVEYOR_REQUIRE_SHARED_DATA(data);
    std::vector<PixelImage> images = photo_windows(data, 224, 224);
    for (const PixelImage& w : photo_windows(data, 61, 37)) images.push_back(w);
    images.push_back(conveyor_test::random_pixels(224, 224, 10));
    images.push_back(conveyor_test::random_pixels(13, 9, 11));
    CounterRng rng(12, 0, 0, RngOp::user);
    for (const PixelImage& image : images)
      for (int k = 0; k < 6; ++k) {
        const px::PixelProgram program = conveyor_test::random_program(rng, image.width, image.height);
        const DType dtype = std::array{DType::u8, DType::f32, DType::f16, DType::bf16}[rng.below(4)];
        const Layout layout = rng.below(2) ? Layout::NCHW : Layout::NHWC;
        INFO(image.width << " x " << image.height << ", " << program.count << " ops, first "
                         << px::op_name(program.ops[0].code));
        compare(program, image, dtype, layout);
      }
  }
}
#endif
