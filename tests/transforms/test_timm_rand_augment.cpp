// timm's RandAugment (TimmRandAugment): its ops' arguments as timm's LEVEL_TO_ARG computes them
// at the levels' ends, its probability and layers, its magnitude noise and clipping, its filters,
// and its checks. tests/parity/test_timm_draws.py holds the draws to timm running;
// test_pil_vs_torchvision.py replays them through timm's functions to the same pixels.

#include <conveyor/transforms/program.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;

namespace {

/// The calls `t` draws for samples [0, n) of a 64 x 48 PIL image.
std::vector<std::vector<DrawnCall>> timm_calls(const TimmRandAugment& t, int n = 3000) {
  const std::vector<PixelTransform> ts{t};
  validate_transforms(ts);
  validate_pil_transforms(ts, 1);
  std::vector<std::vector<DrawnCall>> runs;
  for (int i = 0; i < n; ++i) {
    std::vector<DrawnCall> calls;
    (void)draw_program(ts, 11, 0, static_cast<std::uint64_t>(i), 64, 48, &calls, 1);
    runs.push_back(std::move(calls));
  }
  return runs;
}

double first_number(const DrawnCall& call) {
  const auto& v = call.args.at(0).value;
  return std::holds_alternative<double>(v) ? std::get<double>(v) : static_cast<double>(std::get<std::int64_t>(v));
}

std::string timm_config_error(const TimmRandAugment& t, std::size_t pil = 1) {
  try {
    const std::vector<PixelTransform> ts{t};
    validate_transforms(ts);
    validate_pil_transforms(ts, pil);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("timm's RandAugment at level 10: each op's arguments as LEVEL_TO_ARG makes them", "[transforms][timm]") {
  for (const bool increasing : {true, false}) {
    INFO("increasing " << increasing);
    std::map<std::string, std::set<double>> arguments;
    for (const auto& run : timm_calls({.magnitude = 10.0, .prob = 1.0, .increasing = increasing,
                                     .interpolation = px::Interpolation::bicubic})) {
      REQUIRE(run.size() == 2);  // both layers, every time
      for (const DrawnCall& call : run) arguments[call.function].insert(call.args.empty() ? 0.0 : first_number(call));
    }
    CHECK(arguments.size() == 15);  // every op, the increasing ones named by their function
    CHECK(arguments["timm.rotate"] == std::set<double>{-30.0, 30.0});
    CHECK(arguments["timm.shear_x"] == std::set<double>{-0.3, 0.3});
    CHECK(arguments["timm.translate_y_rel"] == std::set<double>{-0.45, 0.45});
    CHECK(arguments["timm.solarize_add"] == std::set<double>{110.0});
    CHECK(arguments["timm.posterize"] == std::set<double>{increasing ? 0.0 : 4.0});
    CHECK(arguments["timm.solarize"] == std::set<double>{increasing ? 0.0 : 256.0});
    // 1.0 +- 0.9 kept >= 0.1, or 1.0 * 1.8 + 0.1 (in Python, 1.9000000000000001)
    CHECK(arguments["timm.contrast"] == (increasing ? std::set<double>{0.1, 1.9} : std::set<double>{1.0 * 1.8 + 0.1}));
  }
}

TEST_CASE("timm's RandAugment: probability, layers, noise clipped to [0, magnitude_max or 10], filters, fill",
          "[transforms][timm]") {
  for (const auto& run : timm_calls({.prob = 0.0})) CHECK(run.empty());
  for (const auto& run : timm_calls({.num_layers = 0, .prob = 1.0}, 50)) CHECK(run.empty());
  std::map<std::size_t, int> ops_a_run;
  for (const auto& run : timm_calls({.num_layers = 3, .prob = 0.5})) ++ops_a_run[run.size()];
  CHECK(ops_a_run.size() == 4);  // 0 to 3 of them applied
  CHECK(std::abs(ops_a_run[3] / 3000.0 - 0.125) < 0.03);
  // gauss(9, 5) clipped to [0, 10]: rotations reach 30 degrees and 0, never past; uniform (an
  // infinite std) to magnitude_max 20 reaches 60 degrees
  std::set<double> clipped, uniform;
  std::set<std::int64_t> filters;
  for (const auto& run : timm_calls({.magnitude = 9.0, .prob = 1.0, .magnitude_std = 5.0, .img_mean = {1.0, 2.0, 3.0}}))
    for (const DrawnCall& call : run)
      if (call.function == "timm.rotate") {
        clipped.insert(std::abs(first_number(call)));
        filters.insert(std::get<std::int64_t>(call.args[2].value));
        CHECK(std::get<std::vector<std::int64_t>>(call.args[1].value) == std::vector<std::int64_t>{1, 2, 3});
      }
  CHECK(*clipped.begin() == 0.0);
  CHECK(*clipped.rbegin() == 30.0);
  CHECK(clipped.size() > 20);
  CHECK(filters == std::set<std::int64_t>{2, 3});  // random.choice of BILINEAR and BICUBIC
  for (const auto& run : timm_calls({.magnitude = 20.0, .prob = 1.0, .magnitude_std = INFINITY, .magnitude_max = 20.0}))
    for (const DrawnCall& call : run)
      if (call.function == "timm.rotate") uniform.insert(std::abs(first_number(call)));
  for (const auto& run : timm_calls({.prob = 1.0, .img_mean = Fill::none()}, 200))  // timm's _FILL without img_mean
    for (const DrawnCall& call : run)
      if (call.function == "timm.shear_y")
        CHECK(std::get<std::vector<std::int64_t>>(call.args[1].value) == std::vector<std::int64_t>{128, 128, 128});
  CHECK(*uniform.rbegin() > 55.0);
  CHECK(*uniform.rbegin() <= 60.0);
}

TEST_CASE("timm's weighted RandAugment (tweights) chooses by _RAND_WEIGHTED_0's weights, no op twice",
          "[transforms][timm]") {
  // n = 15 chooses every op once; n = 1 chooses by the weights (Rotate 3 / 10.6 of the time)
  for (const auto& run : timm_calls({.num_layers = 15, .prob = 1.0, .weighted = true}, 300)) {
    std::set<std::string> ops;
    for (const DrawnCall& call : run) ops.insert(call.function);
    CHECK(run.size() == 15);
    CHECK(ops == std::set<std::string>{"timm.auto_contrast", "timm.brightness", "timm.color", "timm.contrast",
                                       "timm.equalize", "timm.invert", "timm.posterize", "timm.rotate",
                                       "timm.sharpness", "timm.shear_x", "timm.shear_y", "timm.solarize",
                                       "timm.solarize_add", "timm.translate_x_rel", "timm.translate_y_rel"});
  }
  std::map<std::string, int> first;
  const int n = 20000;
  for (const auto& run : timm_calls({.num_layers = 1, .prob = 1.0, .weighted = true}, n)) ++first[run.at(0).function];
  const double total = 3 + 2 + 2 + 1 + 1 + 0.25 * 3 + 0.05 * 7;
  CHECK(std::abs(first["timm.rotate"] / double(n) - 3 / total) < 0.015);
  CHECK(std::abs(first["timm.translate_x_rel"] / double(n) - 1 / total) < 0.01);
  CHECK(std::abs(first["timm.invert"] / double(n) - 0.05 / total) < 0.003);
  // no op twice: Rotate, the likeliest, after Rotate never
  for (const auto& run : timm_calls({.num_layers = 2, .prob = 1.0, .weighted = true}, 2000))
    CHECK(run.at(0).function != run.at(1).function);
  CHECK(timm_config_error({.num_layers = 16, .weighted = true}).find("num_layers must be at most 15") !=
        std::string::npos);
  CHECK(timm_config_error({.increasing = true, .weighted = true}).find("give one") != std::string::npos);
}

TEST_CASE("timm's RandAugment refuses what timm would not run, and tensors", "[transforms][timm][errors]") {
  CHECK(timm_config_error({}).empty());
  CHECK(timm_config_error({.num_layers = 17}).find("num_layers must be in [0, 16]") != std::string::npos);
  CHECK(timm_config_error({.prob = 1.5}).find("prob must be in [0, 1], got 1.5") != std::string::npos);
  CHECK(timm_config_error({.magnitude_max = -1.0}).find("magnitude_max must be finite and >= 0") != std::string::npos);
  CHECK(timm_config_error({.img_mean = 300.0}).find("fill values must be in [0, 255]") != std::string::npos);
  CHECK(timm_config_error({}, 0).find("timm's ops run on PIL images only") != std::string::npos);
}

TEST_CASE("timm's AutoAugment: one sub-policy a sample, its ops in order with their probabilities and magnitudes",
          "[transforms][timm]") {
  // timm's auto_augment_policy_original begins [('PosterizeOriginal', 0.4, 8), ('Rotate', 0.6, 9)]
  const TimmSubPolicy& first = conveyor::detail::timm_policies[0][0];
  CHECK((first.steps[0].op == TimmOp::posterize_original && first.steps[0].prob == 0.4 &&
         first.steps[0].magnitude == 8.0 && first.steps[1].op == TimmOp::rotate));
  for (std::size_t p = 0; p < enum_names(TimmPolicy{}).size(); ++p) {
    const TimmAutoAugment t{.policy = static_cast<TimmPolicy>(p), .interpolation = px::Interpolation::bilinear};
    INFO(enum_names(TimmPolicy{})[p]);
    // the share of samples with both ops is the table's mean of prob_1 * prob_2; PosterizeOriginal
    // keeps int(magnitude / 10 * 4) + 4 bits
    double both = 0;
    for (const TimmSubPolicy& s : conveyor::detail::timm_policies[p]) both += s.steps[0].prob * s.steps[1].prob / 25.0;
    const std::vector<PixelTransform> ts{t};
    validate_transforms(ts);
    int twos = 0;
    const int n = 4000;
    for (int i = 0; i < n; ++i) {
      std::vector<DrawnCall> calls;
      (void)draw_program(ts, 5, 0, static_cast<std::uint64_t>(i), 64, 48, &calls, 1);
      REQUIRE(calls.size() <= 2);
      twos += calls.size() == 2;
      for (const DrawnCall& call : calls)
        if (call.function == "timm.posterize" && p == 0) CHECK(first_number(call) >= 4.0);  // original: PosterizeOriginal
    }
    CHECK(std::abs(twos / double(n) - both) < 4.0 * std::sqrt(both * (1 - both) / n) + 1e-9);
  }
  CHECK(timm_config_error(TimmRandAugment{}).empty());
  const std::vector<PixelTransform> on_tensor{TimmAutoAugment{}};
  CHECK_THROWS_WITH(validate_pil_transforms(on_tensor, 0), Catch::Contains("timm's ops run on PIL images only"));
}
