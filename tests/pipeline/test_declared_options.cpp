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
  CHECK(names<ImageAugmentOptions>().size() == 28);
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
  const ImageAugment truncated = ImageAugmentOptions{.crop = CropName::center_truncated}.augment();
  REQUIRE(std::holds_alternative<CenterCrop>(truncated.crop));
  CHECK(std::get<CenterCrop>(truncated.crop).truncated_offset);
  CHECK_FALSE(std::get<CenterCrop>(eval.crop).truncated_offset);
  const ImageAugment unscaled = ImageAugmentOptions{.crop = CropName::center, .mean = std::array{127.5f, 127.5f, 127.5f},
                                                    .std_dev = std::array{127.5f, 127.5f, 127.5f},
                                                    .torchvision_rounding = true, .rescale = 1.0f}.augment();
  CHECK(unscaled.output_params().scale[0] == 1.0f);
  CHECK(unscaled.output_params().bias[1] == 127.5f);
  CHECK(eval.output_params().scale[2] != 1.0f);
  const ImageAugment corner =
      ImageAugmentOptions{.crop = CropName::bottom_left, .five_crop_of = FiveCrop::Of::vertical_flip}.augment();
  REQUIRE(std::holds_alternative<FiveCrop>(corner.crop));
  CHECK(std::get<FiveCrop>(corner.crop).part == FiveCrop::Part::bottom_left);
  CHECK(std::get<FiveCrop>(corner.crop).of == FiveCrop::Of::vertical_flip);
  const ImageAugmentOptions half_normalized{.mean = std::array<float, 3>{0.5f, 0.5f, 0.5f}};
  CHECK_THROWS_WITH(half_normalized.augment(), Catch::Contains("ImageAugment: normalize needs both mean and std"));
}

namespace {

/// Each declared option of `T` (and of the aggregates among them) that takes a named choice: every
/// name parses back to its value, names are distinct, and another name's error lists them all.
template <class T>
int check_named_choices(const T& defaults = T{}) {
  int seen = 0;
  for_each_option(defaults, [&](const char* option, const auto& field) {
    using E = std::remove_cvref_t<decltype(field)>;
    if constexpr (DeclaredOptions<E>) {
      seen += check_named_choices(field);
    } else if constexpr (NamedEnum<E>) {
      INFO(option);
      ++seen;
      const auto names = enum_names(E{});
      REQUIRE(!names.empty());
      std::set<std::string> distinct;
      for (std::size_t k = 0; k < names.size(); ++k) {
        const E e = static_cast<E>(k);
        CHECK(std::string(enum_name(e)) == names[k]);
        CHECK(parse_enum<E>(option, names[k]) == e);
        CHECK(distinct.insert(names[k]).second);
      }
      CHECK(std::string(enum_name(static_cast<E>(names.size()))) == "?");
      std::string wanted = std::string(option) + " must be ";
      for (std::size_t k = 0; k < names.size(); ++k)
        wanted += std::string(k == 0 ? "'" : k + 1 < names.size() ? ", '" : " or '") + names[k] + "'";
      CHECK_THROWS_WITH(parse_enum<E>(option, "no such name"), Catch::Contains(wanted + ", got 'no such name'"));
      CHECK_THROWS_AS(parse_enum<E>(option, std::string(names[0]) + " "), ConfigError);  // spelled exactly
    }
  });
  return seen;
}

}  // namespace

TEST_CASE("declared options with named choices: each name parses to its value, another is refused naming all",
          "[options]") {
  CHECK(check_named_choices<ImageAugmentOptions>() == 7);
  CHECK(check_named_choices<PipelineOptions>() == 3);
  CHECK(check_named_choices<PreprocessorOptions>() == 3);  // its pipeline's
}

TEST_CASE("the tools' and Python's spellings are the enums' names: dtype of an image, decode, layout",
          "[options]") {
  CHECK(parse_dtype("bf16") == DType::bf16);
  CHECK(to_string(DType::i64) == "i64");
  CHECK_THROWS_WITH(parse_dtype("i64"), Catch::Contains("dtype must be 'u8', 'f32', 'f16' or 'bf16', got 'i64'"));
  CHECK(std::string(to_string(JpegDecode::adaptive)) == "auto");
  CHECK(parse_layout("nhwc") == Layout::NHWC);
  CHECK(parse_sixteen_bit("high_byte") == SixteenBit::high_byte);
  CHECK(parse_chroma_upsampling("replicated") == ChromaUpsampling::replicated);
}
