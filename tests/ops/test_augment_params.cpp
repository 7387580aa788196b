#include <conveyor/ops/augment.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

using namespace conveyor;
using ops::CropBox;

TEST_CASE("RandomResizedCrop boxes respect scale and ratio and bounds", "[ops][augment]") {
  const RandomResizedCrop op{};
  int fallbacks = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    CounterRng rng(3, 0, i, RngOp::crop);
    const int w = 100 + int(i % 700), h = 80 + int(i % 531);
    const CropBox b = ops::random_resized_crop_box(op, w, h, rng);
    REQUIRE(b.left >= 0);
    REQUIRE(b.top >= 0);
    REQUIRE(b.width > 0);
    REQUIRE(b.height > 0);
    REQUIRE(b.left + b.width <= w);
    REQUIRE(b.top + b.height <= h);
    const double area = double(b.width) * b.height / (double(w) * h);
    const double ratio = double(b.width) / b.height;
    // Rounding to whole pixels moves area and ratio a little past the drawn values.
    if (area > 1.0 - 1e-9 && b.width == w && b.height == h) ++fallbacks;
    CHECK(area >= 0.08 * 0.9);
    CHECK(ratio >= 0.75 * 0.9);
    CHECK(ratio <= 4.0 / 3.0 * 1.1);
  }
  CHECK(fallbacks < 250);
}

TEST_CASE("RandomResizedCrop falls back to torchvision's centre crop", "[ops][augment]") {
  // 1000x10 can never fit a box of >= 8% area at ratio <= 4/3: h = 10, w = round(10 * 4/3) = 13.
  CounterRng a(1, 0, 0, RngOp::crop);
  CHECK(ops::random_resized_crop_box({}, 1000, 10, a) == CropBox{0, 493, 10, 13});
  // 10x1000: w = 10, h = round(10 / (3/4)) = 13, top = (1000 - 13) // 2.
  CounterRng b(1, 0, 0, RngOp::crop);
  CHECK(ops::random_resized_crop_box({}, 10, 1000, b) == CropBox{493, 0, 13, 10});
  // A 1x1 image: the whole image.
  CounterRng c(1, 0, 0, RngOp::crop);
  CHECK(ops::random_resized_crop_box({}, 1, 1, c) == CropBox{0, 0, 1, 1});
}

TEST_CASE("Resize computes torchvision's output size", "[ops][augment]") {
  using A = std::array<int, 2>;
  CHECK(ops::resize_shorter_side(256, 500, 375) == A{341, 256});  // int(256 * 500 / 375) = 341
  CHECK(ops::resize_shorter_side(256, 375, 500) == A{256, 341});
  CHECK(ops::resize_shorter_side(256, 256, 256) == A{256, 256});
  CHECK(ops::resize_shorter_side(256, 300, 225) == A{341, 256});  // upscaling
  CHECK(ops::resize_shorter_side(256, 1000, 1) == A{256000, 256});
}

TEST_CASE("CenterCrop offsets round half to even and pad when smaller", "[ops][augment]") {
  CHECK(ops::center_crop_offset(256, 224) == 16);
  CHECK(ops::center_crop_offset(341, 224) == 58);  // round(58.5) = 58
  CHECK(ops::center_crop_offset(343, 224) == 60);  // round(59.5) = 60
  CHECK(ops::center_crop_offset(224, 224) == 0);
  CHECK(ops::center_crop_offset(100, 224) == -62);
  CHECK(ops::center_crop_offset(101, 224) == -61);  // (224 - 101) // 2 = 61 on the leading side
}

TEST_CASE("ImageAugment plans depend on seed and epoch and index alone", "[ops][augment]") {
  const ImageAugment aug = ImageAugment::train();
  const auto p = aug.plan({.seed = 1, .epoch = 2, .index = 3}, 640, 480);
  const auto q = aug.plan({.seed = 1, .epoch = 2, .index = 3}, 640, 480);
  CHECK(std::memcmp(&p, &q, sizeof p) == 0);
  int differ = 0, flips = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const auto r = aug.plan({.seed = 1, .epoch = 2, .index = i}, 640, 480);
    differ += std::memcmp(&p, &r, sizeof p) != 0;
    flips += r.flip;
  }
  CHECK(differ == 199);
  CHECK(flips > 60);
  CHECK(flips < 140);
  const auto other_epoch = aug.plan({.seed = 1, .epoch = 3, .index = 3}, 640, 480);
  CHECK(std::memcmp(&p, &other_epoch, sizeof p) != 0);
}

TEST_CASE("ImageAugment rejects invalid options by name", "[ops][augment]") {
  CHECK_THROWS_WITH((ImageAugment{.crop = RandomResizedCrop{.size = 0}}.validate()), Catch::Contains("crop size"));
  CHECK_THROWS_WITH((ImageAugment{.resize = Resize{256}}.validate()), Catch::Contains("resize"));
  CHECK_THROWS_WITH((ImageAugment{.normalize = Normalize::imagenet(), .dtype = DType::u8}.validate()),
                    Catch::Contains("u8"));
  CHECK_THROWS_WITH((ImageAugment{.flip = {.p = 1.5}}.validate()), Catch::Contains("flip.p"));
  CHECK_THROWS_WITH((ImageAugment{.crop = RandomResizedCrop{.scale = {0.5, 0.1}}}.validate()),
                    Catch::Contains("scale"));
  CHECK_NOTHROW(ImageAugment::train().validate());
  CHECK_NOTHROW(ImageAugment::eval().validate());
}
