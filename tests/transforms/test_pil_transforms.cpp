// Pixel transforms on PIL images (ImageAugment::pil_transforms): each registered transform either
// runs there, drawing from the same random numbers the ops torchvision's PIL functionals stand for
// (the tensor op, or its Pillow twin of the same name), or is refused by name; a list whose first
// transforms see a PIL image draws Pillow's ops for them only. Pillow's arithmetic itself is held
// to Pillow by tests/parity/test_pil_ops.py, the kernel to the CPU by the GPU tests.

#include "support/random_programs.hpp"

#include <conveyor/pipeline/image_augment.hpp>
#include <conveyor/transforms/program.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;

namespace {

std::string config_error(const std::vector<PixelTransform>& ts, std::size_t pil) {
  try {
    validate_pil_transforms(ts, pil);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}

/// Whether `a` and `b` are the same op, or twins: one torchvision functional (the name), one kind.
bool twins(const px::PixelOp& a, const px::PixelOp& b) {
  return std::string(px::op_name(a.code)) == px::op_name(b.code) && px::op_kind(a.code) == px::op_kind(b.code);
}

bool is_pillow_op(std::int32_t code) {
  bool pillow = false;
  px::visit(code, [&]<class Op>() { pillow = requires { requires Op::pillow; }; });
  return pillow;
}

template <class... Ts>
std::set<std::string> leaves_on_pil(TransformList<Ts...>) {
  std::set<std::string> names;
  ((requires(const Ts& t) { t.validate_pil(); } ? (void)names.insert(Ts::name) : void()), ...);
  return names;
}

template <class... Ts>
void each_leaf_type_refused_unless_it_runs_on_pil(TransformList<Ts...>) {
  const auto check = []<class T>() {
    if constexpr (requires(const T& t) { t.transforms; }) return;  // a container: its transforms decide
    else {
      const std::string message = config_error({T{}}, 1);
      INFO(T::name << ": " << message);
      if constexpr (requires(const T& t) { t.validate_pil(); }) {
        CHECK(message.find(" on a PIL image (torchvision's PIL functional") == std::string::npos);
      } else {
        CHECK(message.find(std::string("transforms[0]: ") + T::name + " on a PIL image") != std::string::npos);
      }
    }
  };
  (check.template operator()<Ts>(), ...);
}

template <class... Ts>
void each_v1_transform_refused_on_a_tensor(TransformList<Ts...>) {
  int on_pil_only = 0, anywhere = 0;
  const auto check = [&]<class T>() {
    if constexpr (requires(T& t) { t.v1 = true; }) {
      T t{};
      t.v1 = true;
      INFO(T::name);
      CHECK(config_error({t}, 1).empty());
      const std::string on_tensor = config_error({ColorJitter{}, t}, 1);
      if constexpr (requires { t.validate_tensor(); }) {
        CHECK(on_tensor.find(std::string("transforms[1]: ") + T::name +
                             ": v1 = true (torchvision v1's arithmetic) runs on PIL images only") != std::string::npos);
        ++on_pil_only;
      } else {  // AugMix: v1's tensor functionals, on the tensor it makes of a PIL image too
        CHECK(on_tensor.empty());
        ++anywhere;
      }
    }
  };
  (check.template operator()<Ts>(), ...);
  CHECK(on_pil_only == 4);  // RandomAffine and the three policies
  CHECK(anywhere == 1);     // AugMix
}

/// The Solarize thresholds `t` draws on PIL images for samples [0, 3000).
std::vector<double> solarize_thresholds(const PixelTransform& t) {
  std::vector<double> thresholds;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    std::vector<DrawnCall> calls;
    (void)draw_program({&t, 1}, 3, 0, i, 96, 64, &calls, 1);
    for (const DrawnCall& call : calls)
      if (call.function == "solarize") thresholds.push_back(std::get<double>(call.args[0].value));
  }
  return thresholds;
}

}  // namespace

TEST_CASE("torchvision v1's classes (v1 = true) run on PIL images only but AugMix, and v1's policies solarize at v1's thresholds",
          "[transforms][pil]") {
  each_v1_transform_refused_on_a_tensor(PixelTransforms{});
  // v1's Solarize magnitudes are float32 linspace(255, 0, 31), 255 - 8.5 k exactly, the threshold
  // itself; v2's are 255 times linspace(1, 0, 31), mostly a little off
  const auto on_v1_steps = [](double t) { return (255.0 - t) / 8.5 == std::floor((255.0 - t) / 8.5); };
  const std::vector<double> v1 = solarize_thresholds(TrivialAugmentWide{.v1 = true});
  REQUIRE(v1.size() > 50);
  for (const double t : v1) CHECK(on_v1_steps(t));
  const std::vector<double> v2 = solarize_thresholds(TrivialAugmentWide{});
  REQUIRE(v2.size() > 50);
  CHECK(std::count_if(v2.begin(), v2.end(), on_v1_steps) < static_cast<std::ptrdiff_t>(v2.size()) / 2);
}

TEST_CASE("a transform runs on a PIL image from the same draws, as the same ops or their Pillow twins",
          "[transforms][pil]") {
  std::set<std::string> drawn_on_pil;
  std::set<std::int32_t> pillow_ops;
  for (std::uint32_t k = 0; k < 3000; ++k) {
    std::vector<std::uint8_t> bytes(256);
    CounterRng rng(61, 0, k, RngOp::user);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next_u32());
    conveyor_test::Choices c(bytes);
    const std::vector<PixelTransform> ts{conveyor_test::detail::random_transform(c, 0)};
    try {
      validate_transforms(ts);
      validate_pil_transforms(ts, 1);
    } catch (const ConfigError&) {
      continue;
    }
    INFO(transform_name(ts[0]) << ", case " << k);
    try {
      validate_pil_transforms(ts, 0);  // v1's arithmetic (v1 = true), timm's ops: no tensor side to compare
    } catch (const ConfigError&) {
      std::vector<DrawnCall> calls;
      const SampleProgram pil = draw_program(ts, 7, 1, k, 96, 64, &calls, 1);
      for (int i = 0; i < pil.pixels.count; ++i)
        if (is_pillow_op(pil.pixels.ops[i].code)) pillow_ops.insert(pil.pixels.ops[i].code);
      if (!calls.empty()) drawn_on_pil.insert(transform_name(ts[0]));
      continue;
    }
    std::vector<DrawnCall> tensor_calls, pil_calls;
    SampleProgram tensor, pil;
    bool tensor_refused = false, pil_refused = false;  // a factor an op refuses (drawn from (0, inf))
    try {
      tensor = draw_program(ts, 7, 1, k, 96, 64, &tensor_calls, 0);
    } catch (const ConfigError&) {
      tensor_refused = true;
    }
    try {
      pil = draw_program(ts, 7, 1, k, 96, 64, &pil_calls, 1);
    } catch (const ConfigError&) {
      pil_refused = true;
    }
    REQUIRE(pil_refused == tensor_refused);
    if (pil_refused) continue;
    REQUIRE(pil.pixels.count == tensor.pixels.count);
    CHECK(pil.flip_x == tensor.flip_x);
    CHECK(pil.flip_y == tensor.flip_y);
    for (int i = 0; i < pil.pixels.count; ++i) {
      CHECK(twins(pil.pixels.ops[i], tensor.pixels.ops[i]));
      CHECK_FALSE(is_pillow_op(tensor.pixels.ops[i].code));
      if (is_pillow_op(pil.pixels.ops[i].code)) pillow_ops.insert(pil.pixels.ops[i].code);
    }
    // the calls that replay it are torchvision's, on a PIL image or a tensor alike
    REQUIRE(pil_calls.size() == tensor_calls.size());
    for (std::size_t i = 0; i < pil_calls.size(); ++i) CHECK(pil_calls[i].function == tensor_calls[i].function);
    drawn_on_pil.insert(transform_name(ts[0]));
  }
  // every transform that runs on PIL images ran; every Pillow op was drawn
  for (const std::string& name : leaves_on_pil(PixelTransforms{})) {
    INFO(name);
    CHECK(drawn_on_pil.count(name) == 1);
  }
  std::set<std::int32_t> registered_pillow_ops;
  [&]<class... Ops>(px::OpList<Ops...>) {
    ((is_pillow_op(Ops::code) ? (void)registered_pillow_ops.insert(Ops::code) : void()), ...);
  }(px::PixelOps{});
  CHECK(registered_pillow_ops.size() == 9);
  CHECK(pillow_ops == registered_pillow_ops);
}

TEST_CASE("a transform conveyor does not run on PIL images is refused there by name, nested ones too",
          "[transforms][pil][errors]") {
  each_leaf_type_refused_unless_it_runs_on_pil(PixelTransforms{});
  const RandomApply nested{.transforms = {ColorJitter{.brightness = 0.4}, RandomErasing{}}};
  CHECK(config_error({nested}, 1).find("transforms[0]: RandomApply: transforms[1]: RandomErasing on a PIL image") !=
        std::string::npos);
  CHECK(config_error({RandomErasing{}, ColorJitter{.brightness = 0.4}}, 0).empty());
  CHECK(config_error({ColorJitter{.brightness = 0.4}, RandomErasing{}}, 1).empty());
  CHECK(config_error({RandomPosterize{.bits = 0}}, 1).find("bits must be in [1, 8] on a PIL image") != std::string::npos);
  CHECK(config_error({RandomPosterize{.bits = 1}}, 1).empty());
  CHECK(config_error({ColorJitter{}}, 2).find("pil_transforms is 2, but there are 1 transforms") != std::string::npos);
}

TEST_CASE("the transforms before the first on a tensor draw Pillow's ops, the rest the tensor kernels'",
          "[transforms][pil]") {
  ImageAugment a{.crop = CenterCrop{.size = 32}, .dtype = DType::u8};
  a.transforms = {ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1},
                  RandomGrayscale{.p = 1.0}, ColorJitter{.brightness = 0.4}, RandomGrayscale{.p = 1.0}};
  a.pil_transforms = 2;
  a.validate();
  for (std::uint64_t i = 0; i < 20; ++i) {
    const SampleProgram p = a.program({.seed = 3, .epoch = 0, .index = i});
    REQUIRE(p.pixels.count == 7);  // 4 + 1 on the PIL image, 1 + 1 on the tensor
    for (int k = 0; k < 7; ++k) CHECK(is_pillow_op(p.pixels.ops[k].code) == (k < 5));
  }
  a.pil_transforms = 5;
  CHECK_THROWS_WITH(a.validate(), Catch::Contains("pil_transforms is 5, but there are 4 transforms"));
}
