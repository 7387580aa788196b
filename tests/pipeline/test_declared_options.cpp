// The options bindings read by name (ImageAugmentOptions, PipelineOptions, PreprocessorOptions;
// conveyor/transforms/fields.hpp's `options()`): each name usable as a keyword and given once, and
// the flat ImageAugment options making the ImageAugment their defaults and crops name.

#include <conveyor/pipeline/image_augment_options.hpp>
#include <conveyor/pipeline/options.hpp>
#include <conveyor/serve/preprocessor.hpp>

#include <catch2/catch.hpp>

#include <cctype>
#include <set>
#include <string>
#include <variant>

using namespace conveyor;

namespace {

template <class T>
std::set<std::string> names() {
  std::set<std::string> seen;
  const T defaults{};
  for_each_option(defaults, [&](const char* name, const auto&) {
    const std::string n(name);
    INFO(n);
    CHECK(!n.empty());
    for (const unsigned char c : n) CHECK((std::islower(c) || std::isdigit(c) || c == '_'));
    CHECK(seen.insert(n).second);
  });
  return seen;
}

}  // namespace

TEST_CASE("declared options: each a keyword, given once", "[options]") {
  CHECK(names<ImageAugmentOptions>().size() == 26);
  CHECK(names<PipelineOptions>().size() == 17);
  CHECK(names<PreprocessorOptions>().size() == 4);
}

TEST_CASE("ImageAugmentOptions: its defaults are a bare ImageAugment, and each crop the one it names", "[options]") {
  const ImageAugment a = ImageAugmentOptions{}.augment();
  const ImageAugment b{};
  CHECK(std::holds_alternative<RandomResizedCrop>(a.crop));
  CHECK(a.output_size().height == b.output_size().height);
  CHECK(!a.resize);
  CHECK(!a.normalize);
  CHECK(a.flip.p == b.flip.p);
  CHECK(a.dtype == b.dtype);
  CHECK(a.decode.max_image_pixels == b.decode.max_image_pixels);

  const ImageAugment eval = ImageAugmentOptions{.crop = CropName::center, .resize = Size{256}}.augment();
  CHECK(std::holds_alternative<CenterCrop>(eval.crop));
  REQUIRE(eval.resize);
  const ImageAugment corner =
      ImageAugmentOptions{.crop = CropName::bottom_left, .five_crop_of = FiveCrop::Of::vertical_flip}.augment();
  REQUIRE(std::holds_alternative<FiveCrop>(corner.crop));
  CHECK(std::get<FiveCrop>(corner.crop).part == FiveCrop::Part::bottom_left);
  CHECK(std::get<FiveCrop>(corner.crop).of == FiveCrop::Of::vertical_flip);
  const ImageAugmentOptions half_normalized{.mean = std::array<float, 3>{0.5f, 0.5f, 0.5f}};
  CHECK_THROWS_WITH(half_normalized.augment(), Catch::Contains("ImageAugment: normalize needs both mean and std"));
}
