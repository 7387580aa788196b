// RandomCrop (torchvision's): its draw (the padding pad_if_needed adds, a uniform place), the plan
// that copies the box out of the padded image in every padding mode, and the calls that replay it.

#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <catch2/catch.hpp>

#include "support/images.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace conveyor;
using conveyor_test::random_image;

namespace {

/// The integer argument `name` of `call`.
std::int64_t arg(const DrawnCall& call, const std::string& name) {
  for (const DrawnArg& a : call.args)
    if (a.name == name) return std::get<std::int64_t>(a.value);
  FAIL("no argument " << name << " in " << call.function);
  return 0;
}

/// The image pixel that index `i` of an axis of `n` pixels padded with `pad` before it holds in
/// `mode`, written as numpy's np.pad and torchvision's _pad_symmetric index (one mirror image);
/// -1 for zero padding.
std::int64_t padded_index(std::int64_t i, std::int64_t pad, std::int64_t n, const std::string& mode) {
  std::vector<std::int64_t> left;  // torchvision's left_indices, built as it builds them
  for (std::int64_t k = pad - 1; k >= 0; --k)
    left.push_back(mode == "symmetric" ? k : mode == "reflect" ? k + 1 : mode == "edge" ? 0 : -1);
  if (i < pad) return left[std::size_t(i)];
  if (i - pad < n) return i - pad;
  const std::int64_t k = i - pad - n;  // right_indices: -(k + 1), counted from the end
  return mode == "symmetric" ? n - 1 - k : mode == "reflect" ? n - 2 - k : mode == "edge" ? n - 1 : -1;
}

/// `img` (w x h, RGB) padded and cropped as `calls` (pad, then crop) say: the reference.
std::vector<std::uint8_t> replay(const std::vector<std::uint8_t>& img, int w, int h, const std::vector<DrawnCall>& calls,
                                 int out_w, int out_h) {
  std::int64_t pad[4] = {0, 0, 0, 0}, top = 0, left = 0;
  std::string mode = "constant";
  for (const DrawnCall& c : calls) {
    if (c.function == "pad") {
      const auto& v = std::get<std::vector<std::int64_t>>(c.args.at(0).value);
      for (int k = 0; k < 4; ++k) pad[k] = v[std::size_t(k)];
      mode = std::get<std::string>(c.args.at(1).value);
    } else if (c.function == "crop") {
      top = arg(c, "top"), left = arg(c, "left");
    }
  }
  std::vector<std::uint8_t> out(std::size_t(out_w) * out_h * 3, 0);
  for (int y = 0; y < out_h; ++y)
    for (int x = 0; x < out_w; ++x) {
      const std::int64_t sx = padded_index(x + left, pad[0], w, mode), sy = padded_index(y + top, pad[1], h, mode);
      if (sx < 0 || sy < 0) continue;
      for (int c = 0; c < 3; ++c) out[(std::size_t(y) * out_w + x) * 3 + c] = img[(std::size_t(sy) * w + sx) * 3 + c];
    }
  return out;
}

}  // namespace

TEST_CASE("RandomCrop copies a uniformly placed box of the padded image, in every padding mode", "[ops][random_crop]") {
  CounterRng rng(5, 0, 0, RngOp::user);
  const auto modes = ops::enum_names(ops::PadMode{});
  for (int trial = 0; trial < 400; ++trial) {
    const int w = 1 + int(rng.below(trial % 5 == 0 ? 3 : 70)), h = 1 + int(rng.below(trial % 7 == 0 ? 3 : 60));
    const Size size = trial % 3 ? Size{1 + int(rng.below(48))} : Size{1 + int(rng.below(40)), 1 + int(rng.below(40))};
    RandomCrop crop{.size = size, .pad_if_needed = true,
                    .padding_mode = static_cast<ops::PadMode>(std::size_t(trial) % modes.size())};
    for (int& pad : crop.padding) pad = int(rng.below(6));
    const ImageAugment aug{.crop = crop, .dtype = DType::u8, .layout = Layout::NHWC};
    const auto img = random_image(w, h, 3, 900 + trial);
    const SampleContext ctx{7, 1, std::uint64_t(trial), nullptr};
    const ops::PaddedCrop drawn = [&] {
      CounterRng draw(7, 1, std::uint64_t(trial), RngOp::crop);
      return ops::random_crop_box(crop, w, h, draw);
    }();
    if (!drawn.fits || std::max(drawn.padding[0], drawn.padding[2]) > ops::max_padding(crop.padding_mode, w) ||
        std::max(drawn.padding[1], drawn.padding[3]) > ops::max_padding(crop.padding_mode, h)) {
      REQUIRE_THROWS_AS(aug.plan(ctx, w, h), ConfigError);  // torchvision refuses both
      continue;
    }
    ops::SamplePlan p = aug.plan(ctx, w, h);
    p.src = {0, 3, std::int64_t{w} * 3, w, h};
    std::vector<std::uint8_t> out(std::size_t(size.width) * size.height * 3, 0xCD);
    ops::cpu::ResampleScratch s;
    ops::OutputParams params = aug.output_params();
    ops::cpu::resample(img.data(), p, params, out.data(), s);
    INFO(w << "x" << h << " -> " << size.width << "x" << size.height << ", " << modes[std::size_t(crop.padding_mode)]);
    REQUIRE(out == replay(img, w, h, aug.drawn_calls(7, 1, std::uint64_t(trial), w, h), size.width, size.height));
  }
}

TEST_CASE("RandomCrop pads as torchvision does and refuses a crop larger than the padded image", "[ops][random_crop]") {
  CounterRng rng(1, 0, 0, RngOp::user);
  // pad_if_needed: the difference on both sides, after the padding
  const ops::PaddedCrop c = ops::random_crop_box({.size = {40, 30}, .padding = {1, 2, 3, 4}, .pad_if_needed = true}, 20, 25, rng);
  REQUIRE(c.fits);
  REQUIRE(c.padding == std::array<long long, 4>{7, 11, 9, 13});  // width 24 lacks 6, height 31 lacks 9
  REQUIRE((c.padded_width == 36 && c.padded_height == 49));
  const ops::PaddedCrop no = ops::random_crop_box({.size = 32, .padding = {4, 4, 4, 4}}, 20, 40, rng);
  REQUIRE(!no.fits);
  const ImageAugment aug{.crop = RandomCrop{.size = 32}};
  REQUIRE_THROWS_WITH(aug.plan({}, 31, 40), Catch::EndsWith("RandomCrop: required crop size (32, 32) is larger than "
                                                             "the padded input image size (40, 31)"));
  REQUIRE_THROWS_WITH((ImageAugment{.crop = RandomCrop{.size = 8, .padding = {0, -1, 0, 0}}}.validate()),
                      Catch::Contains("RandomCrop padding must be in [0, 2^20]"));
  // one mirror image: reflect at most a side less one deep, symmetric a side
  const ImageAugment reflect{.crop = RandomCrop{.size = 8, .padding = {3, 0, 3, 0}, .padding_mode = ops::PadMode::reflect}};
  REQUIRE_NOTHROW(reflect.plan({}, 4, 8));
  REQUIRE_THROWS_WITH(reflect.plan({}, 3, 8),
                      Catch::Contains("padding_mode='reflect' mirrors an image once: padding (3, 0, 3, 0) is deeper "
                                      "than this 3 x 8 image allows"));
  const ImageAugment symmetric{.crop = RandomCrop{.size = 8, .padding = {3, 0, 3, 0}, .padding_mode = ops::PadMode::symmetric}};
  REQUIRE_NOTHROW(symmetric.plan({}, 3, 8));
  REQUIRE_THROWS_AS(symmetric.plan({}, 2, 8), ConfigError);
}

TEST_CASE("RandomCrop's place is uniform, the top and the left each", "[ops][random_crop]") {
  // CIFAR's RandomCrop(32, padding=4) of a 32 x 32 image: 9 places on each axis.
  const RandomCrop crop{.size = 32, .padding = {4, 4, 4, 4}};
  std::vector<int> tops(9, 0), lefts(9, 0);
  const int n = 9 * 4000;
  for (int i = 0; i < n; ++i) {
    CounterRng rng(11, 0, std::uint64_t(i), RngOp::crop);
    const ops::PaddedCrop c = ops::random_crop_box(crop, 32, 32, rng);
    ++tops[std::size_t(c.top)];
    ++lefts[std::size_t(c.left)];
  }
  for (int k = 0; k < 9; ++k) {
    // 4,000 expected; six standard deviations (about 6 x 59) would be a defect, not chance
    CHECK(std::abs(tops[std::size_t(k)] - 4000) < 360);
    CHECK(std::abs(lefts[std::size_t(k)] - 4000) < 360);
  }
}
