// The calls the new transforms and the policies describe are the records they draw: each sample's
// described torchvision calls, made into records by the pixel ops' factories with the described
// arguments, give the same records and, through the CPU executor on windows of the real photos,
// the same pixels. And each policy op stands for the call torchvision's
// `_apply_image_or_video_transform` makes (transforms/v2/_auto_augment.py:88-174).

#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/pixel/registry.hpp>
#include <conveyor/transforms/program.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/pixel_programs.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;
using conveyor_test::PixelImage;

namespace {

const DrawnArg* find(const DrawnCall& call, const char* name) {
  for (const DrawnArg& a : call.args)
    if (a.name == name) return &a;
  return nullptr;
}
double number_arg(const DrawnCall& call, const char* name) { return std::get<double>(find(call, name)->value); }
std::vector<double> numbers(const DrawnCall& call, const char* name) {
  const DrawnArg* a = find(call, name);
  if (const auto* ints = std::get_if<std::vector<std::int64_t>>(&a->value)) return {ints->begin(), ints->end()};
  return std::get<std::vector<double>>(a->value);
}
px::Interpolation interpolation(const DrawnCall& call) {
  return std::get<std::string>(find(call, "interpolation")->value) == "bilinear" ? px::Interpolation::bilinear
                                                                                 : px::Interpolation::nearest;
}
std::optional<std::array<double, 3>> fill(const DrawnCall& call) {
  if (!find(call, "fill")) return std::nullopt;
  const auto v = numbers(call, "fill");
  return std::array<double, 3>{v.at(0), v.at(1), v.at(2)};
}
std::optional<std::array<double, 2>> center(const DrawnCall& call) {
  if (!find(call, "center")) return std::nullopt;
  const auto v = numbers(call, "center");
  return std::array<double, 2>{v.at(0), v.at(1)};
}

/// The record torchvision's functional `call` stands for, made by the pixel op's factory from the
/// described arguments, on a `width` x `height` image.
px::PixelOp record_of(const DrawnCall& call, int width, int height) {
  const std::string& f = call.function;
  if (f == "adjust_brightness") return px::adjust_brightness(number_arg(call, "brightness_factor"));
  if (f == "adjust_contrast") return px::adjust_contrast(number_arg(call, "contrast_factor"));
  if (f == "adjust_saturation") return px::adjust_saturation(number_arg(call, "saturation_factor"));
  if (f == "adjust_sharpness") return px::adjust_sharpness(number_arg(call, "sharpness_factor"));
  if (f == "posterize") return px::posterize(static_cast<int>(std::get<std::int64_t>(find(call, "bits")->value)));
  if (f == "solarize") return px::solarize(number_arg(call, "threshold"));
  if (f == "autocontrast") return px::autocontrast();
  if (f == "equalize") return px::equalize();
  if (f == "invert") return px::invert();
  if (f == "gaussian_blur") {
    const auto k = numbers(call, "kernel_size");
    const auto s = numbers(call, "sigma");
    return px::gaussian_blur(static_cast<int>(k.at(0)), static_cast<int>(k.at(1)), s.at(0), s.at(1));
  }
  if (f == "affine") {
    px::AffineParams a{.angle = number_arg(call, "angle"), .scale = number_arg(call, "scale"),
                       .interpolation = interpolation(call), .fill = fill(call), .center = center(call)};
    const auto t = numbers(call, "translate");
    const auto s = numbers(call, "shear");
    a.translate = {t.at(0), t.at(1)};
    a.shear = {s.at(0), s.at(1)};
    return px::affine(a, width, height);
  }
  if (f == "rotate")
    return px::rotate({.angle = number_arg(call, "angle"), .interpolation = interpolation(call), .fill = fill(call),
                       .center = center(call)},
                      width, height);
  FAIL("no record for " << f);
  return {};
}

std::vector<std::uint8_t> run_program(const px::PixelProgram& program, PixelImage image) {
  ops::cpu::PixelScratch scratch;
  ops::cpu::apply_pixel_ops(program, image.pixels.data(), image.width, image.height, scratch);
  return image.pixels;
}

/// Photo windows of `width` x `height`, one per small photo of the corpus.
std::vector<PixelImage> windows(const std::filesystem::path& data, int width, int height) {
  std::vector<PixelImage> out;
  for (const auto& name : conveyor_test::small_photos()) {
    const PixelImage photo = conveyor_test::decode_photo(data, name);
    out.push_back(conveyor_test::window(photo, (photo.width - width) / 2, (photo.height - height) / 2, width, height));
  }
  return out;
}

}  // namespace

TEST_CASE("the described calls, made into records, are the drawn records and give the same pixels on the photos",
          "[transforms][policy]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const std::vector<std::vector<PixelTransform>> lists{
      {TrivialAugmentWide{}},
      {TrivialAugmentWide{.num_magnitude_bins = 12, .interpolation = px::Interpolation::bilinear, .fill = 90.0}},
      {RandAugment{}},
      {RandAugment{.num_ops = 4, .magnitude = 25, .interpolation = px::Interpolation::bilinear,
                   .fill = Fill{10.0, 200.0, 60.0}}},
      {AutoAugment{}},
      {AutoAugment{.policy = AutoAugmentPolicy::cifar10, .fill = 128.0}},
      {AutoAugment{.policy = AutoAugmentPolicy::svhn, .interpolation = px::Interpolation::bilinear}},
      {RandomAdjustSharpness{.sharpness_factor = 3.5}, RandomAutocontrast{}, RandomEqualize{},
       GaussianBlur{.kernel_size = KernelSize{5, 9}}},
      {RandomRotation{.degrees = 45.0}, RandomRotation{.degrees = Numbers{-90.0, 90.0},
                                                       .interpolation = px::Interpolation::bilinear,
                                                       .center = std::array{20.0, 30.5}, .fill = Fill{1.0, 2.0, 3.0}}},
      {RandomAffine{.degrees = 20.0, .translate = std::array{0.2, 0.1}, .scale = std::array{0.75, 1.25},
                    .shear = Numbers{-8.0, 8.0, -4.0, 4.0}, .interpolation = px::Interpolation::bilinear},
       RandomAffine{.degrees = Numbers{-5.0, 5.0}, .shear = 10.0, .fill = Fill::none(), .center = std::array{0.0, 0.0}}},
  };
  for (const auto& [w, h] : {std::pair{224, 224}, std::pair{199, 150}}) {
    const auto images = windows(data, w, h);
    std::size_t records = 0;
    for (std::size_t l = 0; l < lists.size(); ++l) {
      validate_transforms(lists[l]);
      for (std::uint64_t i = 0; i < 24; ++i) {
        std::vector<DrawnCall> calls;
        const SampleProgram drawn = draw_program(lists[l], 77, 0, i, w, h, &calls);
        INFO("list " << l << ", sample " << i << ", " << w << " x " << h);
        REQUIRE(calls.size() == std::size_t(drawn.pixels.count));
        px::PixelProgram replayed;
        for (const DrawnCall& call : calls) px::append(replayed, record_of(call, w, h));
        for (int k = 0; k < drawn.pixels.count; ++k) {
          INFO("record " << k << ": " << calls[std::size_t(k)].function);
          const std::string& function = calls[std::size_t(k)].function;
          CHECK((function == "rotate" ? "affine" : function) == px::op_name(drawn.pixels.ops[k].code));
          CHECK(std::memcmp(&drawn.pixels.ops[k], &replayed.ops[k], sizeof(px::PixelOp)) == 0);
        }
        records += std::size_t(drawn.pixels.count);
        const PixelImage& image = images[i % images.size()];
        REQUIRE(run_program(drawn.pixels, image) == run_program(replayed, image));
      }
    }
    CHECK(records > 300);
  }
}

TEST_CASE("each policy op is the call _apply_image_or_video_transform makes (_auto_augment.py:100-172)",
          "[transforms][policy]") {
  struct Case {
    PolicyOp op;
    double magnitude;
    const char* function;
    std::vector<std::pair<const char*, DrawnArg::Value>> args;
  };
  using I = std::vector<std::int64_t>;
  using D = std::vector<double>;
  const std::vector<Case> cases{
      // lines 102-118: shear = [math.degrees(math.atan(magnitude)), 0.0] about center=[0, 0]
      {PolicyOp::shear_x, 0.3, "affine",
       {{"angle", 0.0}, {"translate", I{0, 0}}, {"scale", 1.0}, {"shear", D{16.69924423399362, 0.0}},
        {"interpolation", std::string("nearest")}, {"center", D{0.0, 0.0}}}},
      {PolicyOp::shear_y, -0.99, "affine",
       {{"angle", 0.0}, {"translate", I{0, 0}}, {"scale", 1.0}, {"shear", D{0.0, -44.712083933442905}},
        {"interpolation", std::string("nearest")}, {"center", D{0.0, 0.0}}}},
      // lines 132-151: translate=[int(magnitude), 0], about the centre
      {PolicyOp::translate_x, -13.7, "affine",
       {{"angle", 0.0}, {"translate", I{-13, 0}}, {"scale", 1.0}, {"shear", D{0.0, 0.0}},
        {"interpolation", std::string("nearest")}}},
      {PolicyOp::translate_y, 31.9, "affine",
       {{"angle", 0.0}, {"translate", I{0, 31}}, {"scale", 1.0}, {"shear", D{0.0, 0.0}},
        {"interpolation", std::string("nearest")}}},
      // line 153
      {PolicyOp::rotate, -20.5, "rotate", {{"angle", -20.5}, {"interpolation", std::string("nearest")}}},
      // lines 154-161: factors 1 + magnitude
      {PolicyOp::brightness, -0.3, "adjust_brightness", {{"brightness_factor", 0.7}}},
      {PolicyOp::color, 0.5, "adjust_saturation", {{"saturation_factor", 1.5}}},
      {PolicyOp::contrast, 0.25, "adjust_contrast", {{"contrast_factor", 1.25}}},
      {PolicyOp::sharpness, -0.75, "adjust_sharpness", {{"sharpness_factor", 0.25}}},
      // line 163: bits=int(magnitude)
      {PolicyOp::posterize, 5.0, "posterize", {{"bits", std::int64_t{5}}}},
      // lines 164-166: threshold = 255 * magnitude for uint8
      {PolicyOp::solarize, 0.6666666269302368, "solarize", {{"threshold", 169.9999898672104}}},
      {PolicyOp::autocontrast, 0.0, "autocontrast", {}},
      {PolicyOp::equalize, 0.0, "equalize", {}},
      {PolicyOp::invert, 0.0, "invert", {}},
  };
  for (const Case& c : cases) {
    INFO(policy_op_name(c.op) << " at " << c.magnitude);
    std::vector<DrawnCall> calls;
    ProgramDraw d(1, 0, 0, 64, 48, &calls);
    conveyor::detail::apply_policy_op(d, {.op = c.op, .magnitude = c.magnitude}, px::Interpolation::nearest, Fill::none(), false,
                            false);
    REQUIRE(calls.size() == 1);
    REQUIRE(d.program().pixels.count == 1);
    CHECK(calls[0].function == c.function);
    REQUIRE(calls[0].args.size() == c.args.size());
    for (std::size_t a = 0; a < c.args.size(); ++a) {
      INFO("argument " << c.args[a].first);
      CHECK(calls[0].args[a].name == c.args[a].first);
      CHECK(calls[0].args[a].value == c.args[a].second);
    }
  }
  // Identity (line 100): nothing; a fill is passed to the geometric ops (lines 116, 153).
  std::vector<DrawnCall> calls;
  ProgramDraw d(1, 0, 0, 64, 48, &calls);
  conveyor::detail::apply_policy_op(d, {.op = PolicyOp::identity}, px::Interpolation::nearest, Fill::none(), false, false);
  CHECK(calls.empty());
  CHECK(d.program().pixels.count == 0);
  conveyor::detail::apply_policy_op(d, {.op = PolicyOp::rotate, .magnitude = 3.0}, px::Interpolation::bilinear, Fill{4.0}, false,
                          false);
  REQUIRE(calls.size() == 1);
  CHECK(std::get<std::string>(calls[0].args.at(1).value) == "bilinear");
  CHECK(std::get<std::vector<double>>(calls[0].args.at(2).value) == std::vector<double>{4.0, 4.0, 4.0});
}
