// FiveCrop's and TenCrop's crops (ImageAugment's FiveCrop crop, one per view): each part of the
// image or of its mirror image against a reference written from torchvision's five_crop_image and
// ten_crop_image, after a resize or not, and the calls that replay it.

#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <catch2/catch.hpp>

#include "support/images.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace conveyor;
using conveyor_test::random_image;

namespace {

using Image = std::vector<std::uint8_t>;  // RGB, rows packed

Image mirrored(const Image& img, int w, int h, bool horizontal) {
  Image out(img.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        out[(std::size_t(y) * w + x) * 3 + c] =
            img[(std::size_t(horizontal ? y : h - 1 - y) * w + (horizontal ? w - 1 - x : x)) * 3 + c];
  return out;
}

Image cropped(const Image& img, int w, int top, int left, int ch, int cw) {
  Image out(std::size_t(cw) * ch * 3);
  for (int y = 0; y < ch; ++y)
    for (int x = 0; x < cw; ++x)
      for (int c = 0; c < 3; ++c)
        out[(std::size_t(y) * cw + x) * 3 + c] = img[(std::size_t(top + y) * w + left + x) * 3 + c];
  return out;
}

/// torchvision's five_crop_image(image, size)[part] of `img`, or of its flip (ten_crop_image's
/// second five): corners at 0 and at the far side less the crop, the centre as center_crop rounds it.
Image five_crop_reference(const Image& img, int w, int h, const FiveCrop& f) {
  const Image src = f.of == FiveCrop::Of::image ? img : mirrored(img, w, h, f.of == FiveCrop::Of::horizontal_flip);
  const int ch = f.size.height, cw = f.size.width;
  const int k = static_cast<int>(f.part);
  if (f.part == FiveCrop::Part::center) {
    const int top = int(std::nearbyint((h - ch) / 2.0)), left = int(std::nearbyint((w - cw) / 2.0));
    return cropped(src, w, top, left, ch, cw);
  }
  return cropped(src, w, k >= 2 ? h - ch : 0, k % 2 ? w - cw : 0, ch, cw);
}

Image five_crop_ours(const ImageAugment& aug, const Image& img, int w, int h) {
  ops::SamplePlan p = aug.plan({3, 0, 0, nullptr}, w, h);
  p.src = {0, 3, std::int64_t{w} * 3, w, h};
  const Size s = aug.output_size();
  Image out(std::size_t(s.width) * s.height * 3, 0xCD);
  ops::cpu::ResampleScratch scratch;
  ops::cpu::resample(img.data(), p, aug.output_params(), out.data(), scratch);
  return out;
}

/// `img` through `calls` (horizontal_flip, vertical_flip, crop, center_crop), as a replay runs them.
Image replayed(Image img, int w, int h, const std::vector<DrawnCall>& calls) {
  for (const DrawnCall& c : calls) {
    const auto integer = [&](const char* name) {
      for (const DrawnArg& a : c.args)
        if (a.name == name) return static_cast<int>(std::get<std::int64_t>(a.value));
      FAIL("no " << name);
      return 0;
    };
    if (c.function == "horizontal_flip" || c.function == "vertical_flip") {
      img = mirrored(img, w, h, c.function == "horizontal_flip");
    } else if (c.function == "crop") {
      img = cropped(img, w, integer("top"), integer("left"), integer("height"), integer("width"));
      w = integer("width"), h = integer("height");
    } else if (c.function == "center_crop") {
      const auto& size = std::get<std::vector<std::int64_t>>(c.args.at(0).value);
      const int ch = int(size[0]), cw = int(size[1]);
      img = cropped(img, w, int(std::nearbyint((h - ch) / 2.0)), int(std::nearbyint((w - cw) / 2.0)), ch, cw);
      w = cw, h = ch;
    } else {
      FAIL("unexpected call " << c.function);
    }
  }
  return img;
}

}  // namespace

TEST_CASE("FiveCrop and TenCrop take torchvision's boxes of the image and of its mirror images", "[ops][five_crop]") {
  CounterRng rng(17, 0, 0, RngOp::user);
  for (int trial = 0; trial < 60; ++trial) {
    const int w = 1 + int(rng.below(trial % 6 == 0 ? 4 : 90)), h = 1 + int(rng.below(trial % 5 == 0 ? 4 : 70));
    const Size size = trial % 3 ? Size{1 + int(rng.below(std::uint64_t(std::min(w, h))))}
                                : Size{1 + int(rng.below(std::uint64_t(h))), 1 + int(rng.below(std::uint64_t(w)))};
    const Image img = random_image(w, h, 3, 300 + trial);
    for (int of = 0; of < 3; ++of)
      for (int part = 0; part < 5; ++part) {
        const FiveCrop f{size, static_cast<FiveCrop::Part>(part), static_cast<FiveCrop::Of>(of)};
        const ImageAugment aug{.crop = f, .dtype = DType::u8, .layout = Layout::NHWC};
        INFO(w << "x" << h << " -> " << size.width << "x" << size.height << ", part " << part << " of " << of);
        const Image want = five_crop_reference(img, w, h, f);
        REQUIRE(five_crop_ours(aug, img, w, h) == want);
        REQUIRE(replayed(img, w, h, aug.drawn_calls(3, 0, 0, w, h)) == want);
      }
  }
}

TEST_CASE("FiveCrop refuses an image smaller than its box, as torchvision does", "[ops][five_crop]") {
  const ImageAugment aug{.crop = FiveCrop{.size = Size{20, 30}}, .dtype = DType::u8};
  REQUIRE_NOTHROW(aug.plan({}, 30, 20));
  REQUIRE_THROWS_WITH(aug.plan({}, 29, 40), Catch::Contains("FiveCrop: requested crop size (20, 30) is bigger than "
                                                            "input size (40, 29)"));
}
