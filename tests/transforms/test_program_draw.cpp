// Pixel transforms drawing their programs: each from its own stream, a pure function of the
// sample, flips folded into the plan only where that is exact, calls described as torchvision's,
// and lists ImageAugment cannot run refused with the transform and the reason.

#include <conveyor/ops/pixel/registry.hpp>
#include <conveyor/transforms/program.hpp>

#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <variant>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;

namespace {

bool same_ops(const px::PixelProgram& a, int from_a, const px::PixelProgram& b, int from_b, int count) {
  return std::memcmp(a.ops + from_a, b.ops + from_b, sizeof(px::PixelOp) * std::size_t(count)) == 0;
}

bool same(const SampleProgram& a, const SampleProgram& b) {
  return a.pixels.count == b.pixels.count && same_ops(a.pixels, 0, b.pixels, 0, a.pixels.count) &&
         a.flip_x == b.flip_x && a.flip_y == b.flip_y;
}

SampleProgram draw(const std::vector<PixelTransform>& ts, std::uint64_t index, std::uint64_t epoch = 0,
                   std::vector<DrawnCall>* calls = nullptr) {
  validate_transforms(ts);
  return draw_program(ts, 42, epoch, index, 224, 224, calls);
}

std::string refusal(const std::vector<PixelTransform>& ts) {
  try {
    validate_transforms(ts);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

/// A recipe with every kind of draw: a permutation, factors, probabilities, a rectangle.
std::vector<PixelTransform> recipe() {
  return {ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1},
          RandomGrayscale{.p = 0.2},
          RandomPosterize{.bits = 4},
          RandomSolarize{.threshold = 128.0, .p = 0.3},
          RandomErasing{.p = 0.5}};
}

}  // namespace

TEST_CASE("a program is a pure function of (seed, epoch, index): drawn again, the same records", "[transforms]") {
  const auto ts = recipe();
  int differ_by_index = 0, differ_by_epoch = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const SampleProgram a = draw(ts, i);
    REQUIRE(same(a, draw(ts, i)));
    REQUIRE(same(a, draw_program(ts, 42, 0, i, 224, 224)));
    differ_by_index += !same(a, draw(ts, i + 1));
    differ_by_epoch += !same(a, draw(ts, i, 1));
    REQUIRE(!same(a, draw_program(ts, 43, 0, i, 224, 224)));  // jitter factors differ with the seed
  }
  CHECK(differ_by_index == 200);
  CHECK(differ_by_epoch == 200);
}

TEST_CASE("a transform draws from its own stream: one added after it changes nothing before it", "[transforms]") {
  const auto ts = recipe();
  std::vector<PixelTransform> longer = ts;
  longer.insert(longer.end() - 1, RandomInvert{.p = 0.5});  // after all but the erasing, which must stay last
  int inverted = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    const SampleProgram a = draw(ts, i), b = draw(longer, i);
    int kept = a.pixels.count;
    if (kept > 0 && a.pixels.ops[kept - 1].code == px::Erase::code) --kept;
    REQUIRE(b.pixels.count >= kept);
    REQUIRE(same_ops(a.pixels, 0, b.pixels, 0, kept));
    REQUIRE(b.pixels.count <= kept + 2);
    if (b.pixels.count > kept && b.pixels.ops[kept].code == px::Invert::code) ++inverted;
    else if (b.pixels.count > kept) REQUIRE(b.pixels.ops[kept].code == px::Erase::code);
  }
  CHECK(inverted > 100);
  CHECK(inverted < 200);
}

TEST_CASE("RandomApply's transforms keep their streams whether it applies them or not", "[transforms]") {
  // The grayscale after RandomApply draws the same whatever RandomApply's p (its inner
  // transforms' positions are counted either way).
  const auto with = [](double p) {
    return std::vector<PixelTransform>{RandomApply{.transforms = {RandomInvert{.p = 1.0}, RandomSolarize{.threshold = 10.0}}, .p = p},
                                       RandomGrayscale{.p = 0.5}};
  };
  int grayscale = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    const SampleProgram never = draw(with(0.0), i), always = draw(with(1.0), i);
    REQUIRE(always.pixels.count >= 1);
    REQUIRE(always.pixels.ops[0].code == px::Invert::code);
    const bool gray_never = never.pixels.count == 1;
    const bool gray_always = always.pixels.ops[always.pixels.count - 1].code == px::RgbToGrayscale::code;
    REQUIRE(gray_never == gray_always);
    grayscale += gray_never;
    if (gray_never) REQUIRE(never.pixels.ops[0].code == px::RgbToGrayscale::code);
  }
  CHECK(grayscale > 100);
  CHECK(grayscale < 200);
}

TEST_CASE("a transform after RandomChoice or RandomOrder draws the same whatever they pick or their order",
          "[transforms]") {
  // Their inner transforms' positions are counted whichever is picked and in whatever order they
  // run: the grayscale after them keeps its stream when the weights change or the contents swap.
  const auto choice = [](std::vector<double> p) {
    return std::vector<PixelTransform>{
        RandomChoice{.transforms = {RandomInvert{.p = 1.0}, RandomSolarize{.threshold = 10.0, .p = 1.0}}, .p = std::move(p)},
        RandomGrayscale{.p = 0.5}};
  };
  const auto order = [](bool swapped) {
    std::vector<PixelTransform> inner{RandomInvert{.p = 1.0}, RandomSolarize{.threshold = 10.0, .p = 1.0}};
    if (swapped) std::swap(inner[0], inner[1]);
    return std::vector<PixelTransform>{RandomOrder{.transforms = inner}, RandomGrayscale{.p = 0.5}};
  };
  const auto gray = [](const SampleProgram& p) {
    return p.pixels.count > 0 && p.pixels.ops[p.pixels.count - 1].code == px::RgbToGrayscale::code;
  };
  int grayscale = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    const SampleProgram first = draw(choice({1.0, 0.0}), i), second = draw(choice({0.0, 1.0}), i),
                        either = draw(choice({}), i), weighted = draw(choice({0.2, 0.7}), i);
    REQUIRE(first.pixels.ops[0].code == px::Invert::code);
    REQUIRE(second.pixels.ops[0].code == px::Solarize::code);
    REQUIRE(gray(first) == gray(second));
    REQUIRE(gray(first) == gray(either));
    REQUIRE(gray(first) == gray(weighted));
    REQUIRE(first.pixels.count == 1 + gray(first));
    const SampleProgram ordered = draw(order(false), i), swapped = draw(order(true), i);
    REQUIRE(ordered.pixels.count == 2 + gray(ordered));
    REQUIRE(gray(ordered) == gray(first));
    REQUIRE(gray(swapped) == gray(first));
    grayscale += gray(first);
  }
  CHECK(grayscale > 100);
  CHECK(grayscale < 200);
}

TEST_CASE("RandomChoice's and RandomOrder's transforms draw from their own positions, whichever is picked "
          "and wherever it runs",
          "[transforms]") {
  // The reference: RandomApply with p = 1 draws both, each from its position (1 and 2).
  const std::vector<PixelTransform> inner{ColorJitter{.brightness = 0.4}, ColorJitter{.hue = 0.1}};
  const std::vector<PixelTransform> both{RandomApply{.transforms = inner, .p = 1.0}};
  const auto choice = [&](std::vector<double> p) {
    return std::vector<PixelTransform>{RandomChoice{.transforms = inner, .p = std::move(p)}};
  };
  const std::vector<PixelTransform> order{RandomOrder{.transforms = inner}};
  int brightness_picked = 0, brightness_first = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    const SampleProgram ref = draw(both, i);
    REQUIRE(ref.pixels.count == 2);
    REQUIRE(ref.pixels.ops[0].code == px::AdjustBrightness::code);
    REQUIRE(ref.pixels.ops[1].code == px::AdjustHue::code);
    const SampleProgram brightness = draw(choice({1.0, 0.0}), i), hue = draw(choice({0.0, 1.0}), i);
    REQUIRE(brightness.pixels.count == 1);
    REQUIRE(same_ops(brightness.pixels, 0, ref.pixels, 0, 1));
    REQUIRE(hue.pixels.count == 1);
    REQUIRE(same_ops(hue.pixels, 0, ref.pixels, 1, 1));
    const SampleProgram either = draw(choice({}), i);
    REQUIRE(either.pixels.count == 1);
    const int k = either.pixels.ops[0].code == px::AdjustBrightness::code ? 0 : 1;
    REQUIRE(same_ops(either.pixels, 0, ref.pixels, k, 1));
    brightness_picked += k == 0;
    std::vector<DrawnCall> calls;
    const SampleProgram ordered = draw(order, i, 0, &calls);
    REQUIRE(ordered.pixels.count == 2);
    const int first = ordered.pixels.ops[0].code == px::AdjustBrightness::code ? 0 : 1;
    REQUIRE(same_ops(ordered.pixels, 0, ref.pixels, first, 1));
    REQUIRE(same_ops(ordered.pixels, 1, ref.pixels, 1 - first, 1));
    // The calls describe the ops in the order they run.
    REQUIRE(calls.size() == 2);
    REQUIRE(calls[0].function == px::op_name(ordered.pixels.ops[0].code));
    REQUIRE(calls[1].function == px::op_name(ordered.pixels.ops[1].code));
    brightness_first += first == 0;
  }
  CHECK(brightness_picked > 100);
  CHECK(brightness_picked < 200);
  CHECK(brightness_first > 100);
  CHECK(brightness_first < 200);
  // Positions: a container takes its own and its transforms' (nested ones counted).
  CHECK(RandomChoice{.transforms = {RandomApply{.transforms = inner}, RandomInvert{}}}.nodes() == 5);
  CHECK(RandomOrder{.transforms = {RandomChoice{.transforms = inner}, RandomInvert{}}}.nodes() == 5);
}

TEST_CASE("flips fold into the plan after ops that commute with them, and stay in order after others",
          "[transforms][flip]") {
  SECTION("alone, or after per-pixel and whole-image statistic ops: folded") {
    const std::vector<PixelTransform> ts{ColorJitter{.brightness = 0.5, .contrast = 0.5},
                                         RandomGrayscale{.p = 1.0}, RandomVerticalFlip{.p = 1.0}};
    const SampleProgram p = draw(ts, 7);
    CHECK(p.flip_y == 1);
    CHECK(p.flip_x == 0);
    for (int k = 0; k < p.pixels.count; ++k) CHECK(p.pixels.ops[k].code != px::Flip::code);
    // Two flips cancel in the plan.
    const SampleProgram twice = draw({RandomVerticalFlip{.p = 1.0}, RandomInvert{.p = 1.0}, RandomVerticalFlip{.p = 1.0}}, 7);
    CHECK(twice.flip_y == 0);
    CHECK(twice.pixels.count == 1);    // The horizontal one folds into the other axis.
    const SampleProgram both = draw({RandomHorizontalFlip{.p = 1.0}, RandomInvert{.p = 1.0}, RandomVerticalFlip{.p = 1.0}}, 7);
    CHECK(both.flip_x == 1);
    CHECK(both.flip_y == 1);
    CHECK(both.pixels.count == 1);
  }
  SECTION("after a neighbourhood op: a flip op, in order") {
    ProgramDraw d(1, 2, 3, 64, 48);
    d.add(px::adjust_contrast(1.5));
    d.flip(true);
    CHECK(d.program().flip_y == 1);
    CHECK(d.program().pixels.count == 1);
    d.add(px::adjust_sharpness(2.0));
    d.flip(true);
    d.flip(false);
    REQUIRE(d.program().pixels.count == 4);
    CHECK(d.program().pixels.ops[2].code == px::Flip::code);
    CHECK(d.program().pixels.ops[2].i[0] == 1);
    CHECK(d.program().pixels.ops[3].code == px::Flip::code);
    CHECK(d.program().pixels.ops[3].i[0] == 0);
    CHECK(d.program().flip_y == 1);
    CHECK(d.program().flip_x == 0);
  }
  SECTION("flip ops commute with flips; blurs, sharpening and affine maps do not") {
    CHECK(ProgramDraw::commutes_with_flip(px::vertical_flip()));
    CHECK(ProgramDraw::commutes_with_flip(px::adjust_hue(0.2)));
    CHECK(ProgramDraw::commutes_with_flip(px::equalize()));
    CHECK_FALSE(ProgramDraw::commutes_with_flip(px::adjust_sharpness(2.0)));
    CHECK_FALSE(ProgramDraw::commutes_with_flip(px::gaussian_blur(3, 3, 1.0, 1.0)));
    CHECK_FALSE(ProgramDraw::commutes_with_flip(px::rotate({.angle = 30.0}, 32, 32)));
  }
}

TEST_CASE("the drawn calls are torchvision's functionals with the records' parameters", "[transforms]") {
  const std::vector<PixelTransform> ts{ColorJitter{.brightness = 0.4, .contrast = {0.5, 0.9}, .saturation = 0.4, .hue = 0.1},
                                       Grayscale{},
                                       RandomVerticalFlip{.p = 1.0},
                                       RandomPosterize{.bits = 3, .p = 1.0},
                                       RandomSolarize{.threshold = 100.5, .p = 1.0},
                                       RandomInvert{.p = 1.0},
                                       RandomErasing{.p = 1.0, .value = {0.25, -1.0, 2.0}},
                                       RandomErasing{.p = 1.0, .value = ErasingValue::random()}};
  for (std::uint64_t i = 0; i < 20; ++i) {
    std::vector<DrawnCall> calls;
    const SampleProgram p = draw(ts, i, 0, &calls);
    REQUIRE(calls.size() == std::size_t(p.pixels.count) + 1);  // the vertical flip is folded: a call, no record
    REQUIRE(p.flip_y == 1);
    std::size_t c = 0;
    for (int k = 0; k < p.pixels.count; ++k, ++c) {
      if (calls[c].function == "vertical_flip") ++c;
      const px::PixelOp& op = p.pixels.ops[k];
      const DrawnCall& call = calls[c];
      CHECK(call.function == px::op_name(op.code));
      const auto number = [&](std::size_t a) { return std::get<double>(call.args.at(a).value); };
      const auto integer = [&](std::size_t a) { return std::get<std::int64_t>(call.args.at(a).value); };
      switch (op.code) {
        case px::AdjustBrightness::code:
          CHECK(call.args.at(0).name == "brightness_factor");
          CHECK(static_cast<float>(number(0)) == op.f[0]);
          CHECK(static_cast<double>(static_cast<float>(number(0))) == number(0));  // a float32, as torch draws it
          break;
        case px::AdjustContrast::code:
          CHECK(call.args.at(0).name == "contrast_factor");
          CHECK(number(0) >= 0.5);
          CHECK(number(0) < 0.9);
          CHECK(static_cast<float>(number(0)) == op.f[0]);
          break;
        case px::AdjustHue::code: CHECK(static_cast<float>(number(0)) == op.f[0]); break;
        case px::AdjustSaturation::code: CHECK(static_cast<float>(number(0)) == op.f[0]); break;
        case px::RgbToGrayscale::code: CHECK(integer(0) == 3); break;
        case px::Posterize::code:
          CHECK(integer(0) == 3);
          CHECK(op.i[0] == 0xE0);
          break;
        case px::Solarize::code: CHECK(number(0) == 100.5); break;
        case px::Invert::code: CHECK(call.args.empty()); break;
        case px::Erase::code:
          CHECK(integer(0) == op.i[0]);
          CHECK(integer(1) == op.i[1]);
          CHECK(integer(2) == op.i[2]);
          CHECK(integer(3) == op.i[3]);
          if (op.i[4]) {
            CHECK(call.args.at(4).name == "key");
            const auto key = std::get<std::uint64_t>(call.args.at(4).value);
            CHECK(static_cast<std::uint32_t>(op.i[5]) == static_cast<std::uint32_t>(key));
          } else {
            CHECK(std::get<std::vector<double>>(call.args.at(4).value) == std::vector<double>{0.25, -1.0, 2.0});
          }
          break;
        default: FAIL("unexpected op " << op.code);
      }
    }
  }
}

TEST_CASE("a transform list ImageAugment cannot run is refused, naming the transform and why", "[transforms]") {
  using Catch::Matchers::Contains;
  CHECK_THAT(refusal({RandomInvert{.p = 1.5}}), Contains("transforms[0]: RandomInvert: p must be in [0, 1], got 1.5"));
  CHECK_THAT(refusal({RandomInvert{}, RandomPosterize{}}), Contains("transforms[1]: RandomPosterize: bits is required"));
  CHECK_THAT(refusal({RandomPosterize{.bits = 9}}), Contains("bits must be in [0, 8], got 9"));
  CHECK_THAT(refusal({RandomSolarize{}}), Contains("RandomSolarize: threshold is required"));
  CHECK_THAT(refusal({RandomSolarize{.threshold = 300.0}}), Contains("threshold must be at most 255"));
  CHECK_THAT(refusal({Grayscale{.num_output_channels = 1}}), Contains("num_output_channels must be 3"));
  CHECK_THAT(refusal({ColorJitter{.brightness = -0.1}}),
             Contains("ColorJitter: brightness as a single number must be non negative, got -0.1"));
  CHECK_THAT(refusal({ColorJitter{.hue = 0.6}}),
             Contains("hue values should be between (-0.5, 0.5) and increasing, but got (-0.6, 0.6)"));
  CHECK_THAT(refusal({ColorJitter{.contrast = {1.5, 0.5}}}), Contains("contrast values should be between (0, inf)"));
  CHECK_THAT(refusal({RandomErasing{.scale = {0.5, 0.2}}}), Contains("RandomErasing: scale must satisfy"));
  CHECK_THAT(refusal({RandomErasing{.ratio = {0.0, 1.0}}}), Contains("RandomErasing: ratio must satisfy"));
  CHECK_THAT(refusal({RandomApply{}}), Contains("RandomApply: pass at least one transform"));
  CHECK_THAT(refusal({RandomApply{.transforms = {RandomInvert{}, RandomInvert{.p = 2.0}}}}),
             Contains("transforms[0]: RandomApply: transforms[1]: RandomInvert: p must be in [0, 1], got 2"));
  CHECK_THAT(refusal({RandomErasing{}, RandomInvert{}}),
             Contains("RandomInvert comes after RandomErasing, which applies to the normalised output: a transform "
                      "of the uint8 image must come before it"));
  CHECK_THAT(refusal({RandomErasing{}, GaussianNoise{}}),
             Contains("GaussianNoise comes after RandomErasing, which applies to the normalised output: a transform "
                      "of the float image before Normalize must come before it"));
  CHECK_THAT(refusal({GaussianNoise{}, RandomInvert{}}),
             Contains("RandomInvert comes after GaussianNoise, which applies to the float image before Normalize"));
  CHECK(refusal({GaussianNoise{.image = NoiseImage::uint8}, RandomInvert{}, GaussianNoise{}, RandomErasing{}}) ==
        "no error");
  CHECK_THAT(refusal({RandomApply{.transforms = {RandomErasing{}, RandomGrayscale{}}}}),
             Contains("RandomGrayscale comes after RandomErasing"));
  const PixelTransform jitter = ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1};
  CHECK_THAT(refusal({jitter, jitter, jitter, jitter, RandomInvert{}}),
             Contains("may draw up to 17 pixel ops, more than a sample's program holds (16)"));
  CHECK(refusal({jitter, jitter, jitter, jitter}) == "no error");
  // a jitter draws one op per factor it has
  CHECK(ColorJitter{.hue = 0.1}.max_ops() == 1);
  CHECK(ColorJitter{}.max_ops() == 0);
  CHECK(refusal({jitter, jitter, jitter, jitter, ColorJitter{}, ColorJitter{.contrast = {1.0, 1.0}}}) == "no error");
  CHECK(refusal({RandomErasing{}, RandomApply{.transforms = {RandomErasing{}}}}) == "no error");
  CHECK(refusal(recipe()) == "no error");
}

TEST_CASE("RandomChoice and RandomOrder that ImageAugment cannot run are refused, naming the transform and why",
          "[transforms]") {
  using Catch::Matchers::Contains;
  const PixelTransform invert = RandomInvert{}, gray = RandomGrayscale{};
  SECTION("RandomChoice's weights: one per transform, finite, non negative, a positive sum") {
    CHECK_THAT(refusal({RandomChoice{.transforms = {invert, gray}, .p = {1.0}}}),
               Contains("transforms[0]: RandomChoice: p needs one weight per transform (2), got 1"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {invert, gray}, .p = {1.0, 2.0, 3.0}}}),
               Contains("RandomChoice: p needs one weight per transform (2), got 3"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {invert, gray}, .p = {1.0, -0.5}}}),
               Contains("RandomChoice: p[1] must be finite and non negative, got -0.5"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {invert, gray}, .p = {std::nan(""), 1.0}}}),
               Contains("RandomChoice: p[0] must be finite and non negative, got nan"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {invert, gray}, .p = {INFINITY, 1.0}}}),
               Contains("RandomChoice: p[0] must be finite and non negative, got inf"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {invert, gray}, .p = {0.0, 0.0}}}),
               Contains("RandomChoice: p must have a positive, finite sum, got 0"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {invert, gray}, .p = {DBL_MAX, DBL_MAX}}}),
               Contains("RandomChoice: p must have a positive, finite sum, got inf"));
    CHECK(refusal({RandomChoice{.transforms = {invert, gray}, .p = {0.0, 2.0}}}) == "no error");
    CHECK(refusal({RandomChoice{.transforms = {invert, gray}}}) == "no error");
  }
  SECTION("at least one transform, each valid: an inner error names its place") {
    CHECK_THAT(refusal({RandomChoice{}}), Contains("transforms[0]: RandomChoice: pass at least one transform"));
    CHECK_THAT(refusal({RandomOrder{}}), Contains("transforms[0]: RandomOrder: pass at least one transform"));
    CHECK_THAT(refusal({invert, RandomChoice{.transforms = {invert, RandomInvert{.p = 2.0}}}}),
               Contains("transforms[1]: RandomChoice: transforms[1]: RandomInvert: p must be in [0, 1], got 2"));
    CHECK_THAT(refusal({RandomOrder{.transforms = {RandomPosterize{}, invert}}}),
               Contains("transforms[0]: RandomOrder: transforms[0]: RandomPosterize: bits is required"));
  }
  SECTION("nested containers: each level names its place") {
    CHECK_THAT(refusal({RandomOrder{.transforms = {invert,
                                                       RandomChoice{.transforms = {RandomApply{.transforms = {RandomPosterize{.bits = 9}}},
                                                                                   gray}}}}}),
               Contains("transforms[0]: RandomOrder: transforms[1]: RandomChoice: transforms[0]: RandomApply: "
                        "transforms[0]: RandomPosterize: bits must be in [0, 8], got 9"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {RandomOrder{}, gray}}}),
               Contains("transforms[0]: RandomChoice: transforms[0]: RandomOrder: pass at least one transform"));
    CHECK(refusal({RandomOrder{.transforms = {RandomChoice{.transforms = {RandomOrder{.transforms = {invert, gray}},
                                                                              RandomApply{.transforms = {gray}}}},
                                                   invert}}}) == "no error");
  }
  SECTION("erasing and float noise: never inside RandomOrder; inside RandomChoice only when every transform applies "
          "to one stage, and in stage order") {
    CHECK_THAT(refusal({RandomOrder{.transforms = {invert, RandomErasing{}}}}),
               Contains("RandomOrder: transforms[1] (RandomErasing) applies to the normalised output, after every "
                        "transform of the uint8 image: it cannot take a random place in the order"));
    CHECK_THAT(refusal({RandomOrder{.transforms = {invert, GaussianNoise{}}}}),
               Contains("RandomOrder: transforms[1] (GaussianNoise) applies to the float image before Normalize"));
    CHECK(refusal({RandomOrder{.transforms = {invert, GaussianNoise{.image = NoiseImage::uint8}}}}) == "no error");
    CHECK_THAT(refusal({RandomOrder{.transforms = {RandomChoice{.transforms = {RandomErasing{}, RandomErasing{.p = 1.0}}}}}}),
               Contains("RandomOrder: transforms[0] (RandomChoice) applies to the normalised output"));
    CHECK_THAT(refusal({RandomOrder{.transforms = {RandomApply{.transforms = {invert, RandomErasing{}}}}}}),
               Contains("RandomOrder: transforms[0] (RandomApply) applies to the normalised output"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {RandomErasing{}, invert}}}),
               Contains("RandomChoice: transforms[0] (RandomErasing) applies to the normalised output, transforms[1] "
                        "(RandomInvert) to the uint8 image; its transforms must all apply to one stage"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {gray, invert, RandomApply{.transforms = {RandomErasing{}}}}}}),
               Contains("RandomChoice: transforms[0] (RandomGrayscale) applies to the uint8 image, transforms[2] "
                        "(RandomApply) to the normalised output; its transforms must all apply to one stage"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {GaussianNoise{}, RandomErasing{}}}}),
               Contains("transforms[1] (RandomErasing) to the normalised output"));
    CHECK_THAT(refusal({RandomChoice{.transforms = {RandomErasing{}, RandomApply{.transforms = {invert, RandomErasing{}}}}}}),
               Contains("RandomChoice: transforms[1] (RandomApply) holds transforms of more than one stage; its "
                        "transforms must all apply to one stage"));
    CHECK(refusal({RandomChoice{.transforms = {GaussianNoise{}, GaussianNoise{.sigma = 0.2}}}, RandomErasing{}}) ==
          "no error");
    CHECK_THAT(refusal({RandomChoice{.transforms = {RandomErasing{}, RandomErasing{.value = 1.0}}}, invert}),
               Contains("RandomInvert comes after RandomErasing"));
    CHECK(refusal({invert, RandomChoice{.transforms = {RandomErasing{}, RandomApply{.transforms = {RandomErasing{}}}},
                                             .p = {1.0, 2.0}},
                        RandomErasing{}}) == "no error");
  }
  SECTION("ops: RandomChoice draws the most of one transform, RandomOrder all of them") {
    const PixelTransform jitter = ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1};
    CHECK(refusal({jitter, jitter, jitter, RandomChoice{.transforms = {jitter, jitter, jitter, jitter}}}) == "no error");
    CHECK_THAT(refusal({jitter, jitter, jitter, RandomChoice{.transforms = {invert, jitter}}, invert}),
               Contains("may draw up to 17 pixel ops"));
    CHECK_THAT(refusal({jitter, jitter, jitter, RandomOrder{.transforms = {jitter, invert}}}),
               Contains("may draw up to 17 pixel ops"));
    CHECK(refusal({jitter, jitter, jitter, RandomOrder{.transforms = {invert, gray, RandomVerticalFlip{}, invert}}}) ==
          "no error");
  }
}

TEST_CASE("ColorJitter's ranges are torchvision's: a number v is [max(0, 1 - v), 1 + v], or [-v, v] for hue, "
          "and None where the range is the identity",
          "[transforms]") {
  const auto ranges = ColorJitter{.brightness = 1.5, .contrast = {0.2, 0.3}, .saturation = 0.0, .hue = 0.25}.ranges();
  REQUIRE(ranges[0]);
  CHECK((*ranges[0])[0] == 0.0);
  CHECK((*ranges[0])[1] == 2.5);
  CHECK((*ranges[1])[0] == 0.2);
  CHECK_FALSE(ranges[2]);  // 0 means [1, 1]: None
  CHECK((*ranges[3])[0] == -0.25);
  CHECK_FALSE(ColorJitter{.brightness = {1.0, 1.0}, .hue = {0.0, 0.0}}.ranges()[0]);
  CHECK_FALSE(ColorJitter{.brightness = {1.0, 1.0}, .hue = {0.0, 0.0}}.ranges()[3]);
  // A ColorJitter with nothing to jitter draws nothing.
  CHECK(draw({ColorJitter{}}, 3).pixels.count == 0);
}
