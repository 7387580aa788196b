// AugMix (torchvision's) and TimmAugMix (timm's AugMixAugment): the programs they draw (a begin,
// chains of ops each closed by its weight, an end), their weights' sums, chain depths and checks.
// tests/parity/test_augmix.py holds their draws to torchvision and timm running and replays them
// through torchvision's and timm's own AugMix to the same pixels.

#include <conveyor/transforms/program.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;

namespace {

/// The programs `t` draws for samples [0, n) of a 40 x 30 image (a PIL image where `pil`).
template <class T>
std::vector<SampleProgram> mix_programs(const T& t, bool pil, int n = 500) {
  const std::vector<PixelTransform> ts{t};
  validate_transforms(ts);
  validate_pil_transforms(ts, pil ? 1 : 0);
  std::vector<SampleProgram> programs;
  for (int i = 0; i < n; ++i)
    programs.push_back(draw_program(ts, 5, 0, static_cast<std::uint64_t>(i), 40, 30, nullptr, pil ? 1 : 0));
  return programs;
}

/// The program's mixing steps (its Mix records), in order.
std::vector<px::PixelOp> mix_steps(const px::PixelProgram& p) {
  std::vector<px::PixelOp> steps;
  for (int k = 0; k < p.count; ++k)
    if (p.ops[k].code == px::Mix::code) steps.push_back(p.ops[k]);
  return steps;
}

/// The ops between consecutive mixing steps: each chain's length.
std::vector<int> chain_lengths(const px::PixelProgram& p) {
  std::vector<int> lengths;
  int run = 0;
  for (int k = 1; k < p.count; ++k) {
    if (p.ops[k].code != px::Mix::code) {
      ++run;
      continue;
    }
    if (p.ops[k].i[0] == px::Mix::add || p.ops[k].i[0] == px::Mix::blend_add) lengths.push_back(run);
    run = 0;
  }
  return lengths;
}

template <class T>
std::string mix_config_error(const T& t) {
  try {
    const std::vector<PixelTransform> ts{t};
    validate_transforms(ts);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("AugMix draws a begin with the image's weight, mixture_width chains of 1 to 3 ops and an end",
          "[transforms][augmix]") {
  for (const bool pil : {false, true}) {
    INFO("pil " << pil);
    int depths[4] = {};
    for (const SampleProgram& s : mix_programs(AugMix{}, pil)) {
      const std::vector<px::PixelOp> steps = mix_steps(s.pixels);
      REQUIRE(steps.size() == 5);
      CHECK(s.pixels.ops[0].code == px::Mix::code);
      CHECK(steps.front().i[0] == px::Mix::begin);
      CHECK(steps.back().i[0] == px::Mix::end);
      CHECK(s.pixels.ops[s.pixels.count - 1].code == px::Mix::code);
      double total = steps.front().f[0];  // m[0] + m[1] * (the chains' Dirichlet weights): 1 but for rounding
      for (std::size_t k = 1; k + 1 < steps.size(); ++k) {
        CHECK(steps[k].i[0] == px::Mix::add);
        CHECK(steps[k].f[0] >= 0.0f);
        total += steps[k].f[0];
      }
      CHECK(std::abs(total - 1.0) < 1e-6);
      for (const int depth : chain_lengths(s.pixels)) {
        REQUIRE(depth >= 1);
        REQUIRE(depth <= 3);
        ++depths[depth];
      }
      for (int k = 0; k < s.pixels.count; ++k) {  // torch's kernels, on a PIL image too
        bool pillow = false;
        px::visit(s.pixels.ops[k].code, [&]<class Op>() {
          if constexpr (requires { Op::pillow; }) pillow = Op::pillow;
        });
        CHECK(!pillow);
      }
    }
    for (int depth = 1; depth <= 3; ++depth) CHECK(depths[depth] > 300);  // 1,500 chains, a third each
  }
  for (const SampleProgram& s : mix_programs(AugMix{.mixture_width = 2, .chain_depth = 4}, false, 50))
    CHECK(chain_lengths(s.pixels) == std::vector<int>{4, 4});
}

TEST_CASE("timm's AugMix: numpy's zeros, the chains' weights summing to 1, then a blend of weight m with the image",
          "[transforms][augmix][timm]") {
  int low = 0, high = 0;
  for (const SampleProgram& s : mix_programs(TimmAugMix{}, true)) {
    const std::vector<px::PixelOp> steps = mix_steps(s.pixels);
    REQUIRE(steps.size() == 5);
    CHECK(steps.front().i[0] == px::Mix::begin);
    CHECK(steps.front().f[0] == 0.0f);
    double total = 0.0;
    for (std::size_t k = 1; k + 1 < steps.size(); ++k) total += steps[k].f[0];
    CHECK(std::abs(total - 1.0) < 1e-6);
    CHECK(steps.back().i[0] == px::Mix::end_blend);
    const float m = steps.back().f[0];
    CHECK(m >= 0.0f);
    CHECK(m <= 1.0f);
    (m < 0.5f ? low : high) += 1;  // Beta(1, 1): uniform
  }
  CHECK(low > 200);
  CHECK(high > 200);
  // blended ("b1"): the running image begins as the image, each chain blended in, the last alpha
  // the chain's share of what is left
  for (const SampleProgram& s : mix_programs(TimmAugMix{.width = 2, .depth = 1, .blended = true}, true, 100)) {
    const std::vector<px::PixelOp> steps = mix_steps(s.pixels);
    REQUIRE(steps.size() == 4);
    CHECK(steps[0].f[0] == 1.0f);
    CHECK(steps[1].i[0] == px::Mix::blend_add);
    CHECK(steps[2].i[0] == px::Mix::blend_add);
    CHECK(steps[3].i[0] == px::Mix::end);
    CHECK(chain_lengths(s.pixels) == std::vector<int>{1, 1});
  }
}

TEST_CASE("AugMix and timm's AugMix refuse chains a program cannot hold, and a non-positive alpha",
          "[transforms][augmix]") {
  CHECK_THAT(mix_config_error(AugMix{.mixture_width = 5}),
             Catch::Contains("5 chains of up to 3 ops draw up to 22 pixel ops"));
  CHECK_THAT(mix_config_error(AugMix{.severity = 11}), Catch::Contains("severity must be in [1, 10]"));
  CHECK_THAT(mix_config_error(AugMix{.alpha = 0.0}), Catch::Contains("alpha must be positive"));
  CHECK_THAT(mix_config_error(AugMix{.mixture_width = 0}), Catch::Contains("width must be at least 1"));
  CHECK_THAT(mix_config_error(TimmAugMix{.width = 3, .depth = 5}),
             Catch::Contains("3 chains of 5 ops draw up to 20 pixel ops"));
  CHECK(mix_config_error(AugMix{.mixture_width = 7, .chain_depth = 1}).empty());
  // counted in 64 bits: a width or depth whose product would wrap an int is refused too
  CHECK_THAT(mix_config_error(TimmAugMix{.width = 1 << 30, .depth = 3}), Catch::Contains("more than a sample's"));
  CHECK_THAT(mix_config_error(AugMix{.mixture_width = 3, .chain_depth = (1 << 30) + 1}),
             Catch::Contains("more than a sample's"));
  // AugMix converts a PIL image to a tensor: torch's kernels, so not bicubic; timm's is Pillow's only
  const std::vector<PixelTransform> bicubic{AugMix{.interpolation = px::Interpolation::bicubic}};
  CHECK_THROWS_WITH(validate_pil_transforms(bicubic, 1), Catch::Contains("interpolation bicubic"));
  const std::vector<PixelTransform> timm{TimmAugMix{}};
  CHECK_THROWS_WITH(validate_pil_transforms(timm, 0), Catch::Contains("PIL images only"));
}
