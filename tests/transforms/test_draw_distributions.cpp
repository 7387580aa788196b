// The pixel transforms' draws against torchvision 0.29's distributions, over many samples: which
// transforms apply, which RandomChoice picks and the order RandomOrder runs, ColorJitter's factors
// and order, RandomErasing's rectangles. Each reference is written from torchvision's source (the
// lines cited, in torchvision/transforms/v2/), drawn with a generator of its own; the bounds are
// ones a correct draw exceeds with a probability near 1e-4, and the seeds are fixed.

#include <conveyor/ops/augment.hpp>
#include <conveyor/ops/pixel/registry.hpp>
#include <conveyor/transforms/program.hpp>

#include "support/statistics.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <variant>
#include <vector>

using namespace conveyor;
using namespace conveyor_test;
namespace px = conveyor::ops::pixel;

namespace {

constexpr std::size_t draws = 20000;
constexpr double alpha = 1e-4;

/// The programs of `draws` samples.
std::vector<SampleProgram> programs(const std::vector<PixelTransform>& ts, int width = 224, int height = 224) {
  validate_transforms(ts);
  std::vector<SampleProgram> out;
  out.reserve(draws);
  for (std::uint64_t i = 0; i < draws; ++i) out.push_back(draw_program(ts, 2024, 3, i, width, height));
  return out;
}

/// The calls `draws` samples describe.
std::vector<std::vector<DrawnCall>> described(const std::vector<PixelTransform>& ts, int width = 224, int height = 224) {
  validate_transforms(ts);
  std::vector<std::vector<DrawnCall>> out(draws);
  for (std::uint64_t i = 0; i < draws; ++i) (void)draw_program(ts, 2024, 3, i, width, height, &out[i]);
  return out;
}

/// Argument `name` of `call`, a number.
double number(const DrawnCall& call, const char* name) {
  for (const DrawnArg& a : call.args)
    if (a.name == name) return std::get<double>(a.value);
  FAIL("no argument " << name << " in " << call.function);
  return 0;
}

/// The KS distance of `v` from the uniform distribution on [lo, hi].
double ks_uniform(const std::vector<double>& v, double lo, double hi) {
  return ks_distance(v, [&](double x) { return std::clamp((x - lo) / (hi - lo), 0.0, 1.0); });
}

bool all_float32(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return static_cast<double>(static_cast<float>(x)) == x; });
}

std::size_t count_code(const SampleProgram& p, std::int32_t code) {
  std::size_t n = 0;
  for (int k = 0; k < p.pixels.count; ++k) n += p.pixels.ops[k].code == code;
  return n;
}

}  // namespace

TEST_CASE("each transform applies with probability p (torch.rand(1) >= p skips it: _transform.py:187, "
          "_container.py:104)",
          "[transforms][distribution]") {
  struct Case {
    PixelTransform t;
    double p;
    std::int32_t code;  // the record it draws (0: a folded flip)
  };
  const std::vector<Case> cases{
      {RandomVerticalFlip{.p = 0.3}, 0.3, 0},
      {RandomHorizontalFlip{.p = 0.6}, 0.6, 0},
      {RandomGrayscale{}, 0.1, px::RgbToGrayscale::code},  // torchvision's default p
      {RandomInvert{}, 0.5, px::Invert::code},
      {RandomPosterize{.bits = 3, .p = 0.7}, 0.7, px::Posterize::code},
      {RandomSolarize{.threshold = 128.0, .p = 0.2}, 0.2, px::Solarize::code},
      {RandomApply{.transforms = {RandomInvert{.p = 1.0}}, .p = 0.25}, 0.25, px::Invert::code},
      {RandomApply{.transforms = {RandomInvert{.p = 0.5}}}, 0.25, px::Invert::code},
      {RandomChoice{.transforms = {RandomInvert{.p = 0.5}, RandomGrayscale{.p = 1.0}}, .p = {1.0, 1.0}}, 0.25,
       px::Invert::code},
      {RandomOrder{.transforms = {RandomGrayscale{.p = 1.0}, RandomInvert{.p = 0.4}}}, 0.4, px::Invert::code},
      {RandomErasing{.scale = {0.02, 0.05}}, 0.5, px::Erase::code},  // a small rectangle always fits
      {RandomAdjustSharpness{.sharpness_factor = 2.0, .p = 0.3}, 0.3, px::AdjustSharpness::code},
      {RandomAutocontrast{}, 0.5, px::Autocontrast::code},
      {RandomEqualize{.p = 0.8}, 0.8, px::Equalize::code},
      {RandomPerspective{}, 0.5, px::Perspective::code},  // torchvision's default p
      {RandomInvert{.p = 0.0}, 0.0, px::Invert::code},
      {RandomInvert{.p = 1.0}, 1.0, px::Invert::code},
  };
  for (const Case& c : cases) {
    std::size_t hits = 0;
    for (const SampleProgram& p : programs({c.t})) hits += c.code ? count_code(p, c.code) : std::size_t(p.flip_x + p.flip_y);
    INFO(transform_name(c.t) << " p=" << c.p << ": " << hits << " of " << draws);
    CHECK(binomial_fits(hits, draws, c.p));
  }
}

// Catch indents a long name's next lines past its first ": ", and loops when that leaves no room:
// these names have none.
TEST_CASE("RandomChoice picks transform k with probability p[k] / sum(p), each equally likely without p "
          "(torch.multinomial(torch.tensor(self.p), 1) in _container.py's RandomChoice, self.p normalised)",
          "[transforms][distribution]") {
  // Each transform applies always and draws one record of its own kind: the record says which was picked.
  const std::vector<PixelTransform> three{RandomInvert{.p = 1.0}, RandomGrayscale{.p = 1.0},
                                          RandomSolarize{.threshold = 128.0, .p = 1.0}};
  const std::array<std::int32_t, 3> codes{px::Invert::code, px::RgbToGrayscale::code, px::Solarize::code};
  const auto picks = [&](const RandomChoice& choice) {
    std::array<std::size_t, 3> n{};
    for (const SampleProgram& p : programs({choice})) {
      REQUIRE(p.pixels.count == 1);
      const auto k = static_cast<std::size_t>(std::find(codes.begin(), codes.end(), p.pixels.ops[0].code) - codes.begin());
      REQUIRE(k < choice.transforms.size());
      ++n[k];
    }
    return n;
  };
  SECTION("weights p = {1, 3}: a quarter and three quarters") {
    const auto n = picks(RandomChoice{.transforms = {three[0], three[1]}, .p = {1.0, 3.0}});
    INFO(n[0] << " and " << n[1] << " of " << draws);
    CHECK(binomial_fits(n[0], draws, 0.25));
    CHECK(n[0] + n[1] == draws);
  }
  SECTION("weights that sum to 1 as torchvision keeps them, a zero weight never picked") {
    const auto n = picks(RandomChoice{.transforms = three, .p = {0.1, 0.6, 0.3}});
    INFO(n[0] << ", " << n[1] << " and " << n[2] << " of " << draws);
    CHECK(binomial_fits(n[0], draws, 0.1));
    CHECK(binomial_fits(n[1], draws, 0.6));
    CHECK(binomial_fits(n[2], draws, 0.3));
    const auto zero = picks(RandomChoice{.transforms = three, .p = {2.0, 0.0, 1.0}});
    INFO(zero[0] << ", " << zero[1] << " and " << zero[2] << " of " << draws);
    CHECK(zero[1] == 0);
    CHECK(binomial_fits(zero[0], draws, 2.0 / 3.0));
  }
  SECTION("no weights: each of three a third of the time") {
    const auto n = picks(RandomChoice{.transforms = three});
    INFO(n[0] << ", " << n[1] << " and " << n[2] << " of " << draws);
    CHECK(chi_square_uniform({double(n[0]), double(n[1]), double(n[2])}) < chi_square_bound(2));
    for (const std::size_t k : n) CHECK(binomial_fits(k, draws, 1.0 / 3.0));
  }
}

TEST_CASE("RandomOrder's order is a uniform permutation (torch.randperm(len(transforms)) in _container.py's RandomOrder)",
          "[transforms][distribution]") {
  const RandomOrder order{.transforms = {RandomInvert{.p = 1.0}, RandomGrayscale{.p = 1.0},
                                         RandomSolarize{.threshold = 128.0, .p = 1.0}}};
  std::map<std::array<std::int32_t, 3>, double> orders;
  std::size_t invert_first = 0;
  for (const SampleProgram& p : programs({order})) {
    REQUIRE(p.pixels.count == 3);  // all of them, every time
    ++orders[{p.pixels.ops[0].code, p.pixels.ops[1].code, p.pixels.ops[2].code}];
    invert_first += p.pixels.ops[0].code == px::Invert::code;
  }
  REQUIRE(orders.size() == 6);
  std::vector<double> counts;
  for (const auto& [o, n] : orders) {
    INFO("order " << o[0] << ", " << o[1] << ", " << o[2] << ": " << n << " of " << draws);
    CHECK(std::set<std::int32_t>(o.begin(), o.end()).size() == 3);
    CHECK(binomial_fits(std::size_t(n), draws, 1.0 / 6.0));
    counts.push_back(n);
  }
  CHECK(chi_square_uniform(counts) < chi_square_bound(5));
  CHECK(binomial_fits(invert_first, draws, 1.0 / 3.0));
}

TEST_CASE("RandomChannelPermutation's order is a uniform permutation of the channels (torch.randperm(3), "
          "_color.py's RandomChannelPermutation)",
          "[transforms][distribution]") {
  std::map<std::array<std::int32_t, 3>, double> orders;
  for (const SampleProgram& p : programs({RandomChannelPermutation{}})) {
    REQUIRE(p.pixels.count == 1);
    REQUIRE(p.pixels.ops[0].code == px::PermuteChannels::code);
    ++orders[{p.pixels.ops[0].i[0], p.pixels.ops[0].i[1], p.pixels.ops[0].i[2]}];
  }
  REQUIRE(orders.size() == 6);
  std::vector<double> counts;
  for (const auto& [o, n] : orders) {
    INFO("order " << o[0] << ", " << o[1] << ", " << o[2] << ": " << n << " of " << draws);
    CHECK(binomial_fits(std::size_t(n), draws, 1.0 / 6.0));
    counts.push_back(n);
  }
  CHECK(chi_square_uniform(counts) < chi_square_bound(5));
  // channel k of the result is channel permutation[k] of the image
  px::PixelProgram program;
  px::append(program, px::permute_channels({2, 0, 1}));
  std::uint8_t rgb[3] = {10, 20, 30};
  px::PermuteChannels::apply(program.ops[0], rgb);
  CHECK((rgb[0] == 30 && rgb[1] == 10 && rgb[2] == 20));
  CHECK_THROWS_WITH(px::permute_channels({0, 0, 1}), Catch::Contains("permute_channels: the record must hold a permutation"));
}

TEST_CASE("ColorJitter's factors are uniform on their ranges and float32 (_color.py:143-152)",
          "[transforms][distribution]") {
  const ColorJitter jitter{.brightness = 0.4, .contrast = {0.5, 1.0}, .saturation = 0.8, .hue = 0.1};
  const std::array<std::array<double, 2>, 4> range{{{0.6, 1.4}, {0.5, 1.0}, {0.2, 1.8}, {-0.1, 0.1}}};
  const std::array<std::int32_t, 4> codes{px::AdjustBrightness::code, px::AdjustContrast::code,
                                          px::AdjustSaturation::code, px::AdjustHue::code};
  std::array<std::vector<double>, 4> factors;
  for (const SampleProgram& p : programs({jitter})) {
    REQUIRE(p.pixels.count == 4);
    for (int k = 0; k < 4; ++k) {
      const px::PixelOp& op = p.pixels.ops[k];
      const auto j = static_cast<std::size_t>(std::find(codes.begin(), codes.end(), op.code) - codes.begin());
      REQUIRE(j < 4);
      // brightness and hue keep the factor in f[0]; the blends keep float32(ratio) there too.
      factors[j].push_back(op.f[0]);
    }
  }
  for (std::size_t j = 0; j < 4; ++j) {
    const double lo = range[j][0], hi = range[j][1];
    const double d = ks_distance(factors[j], [&](double x) { return std::clamp((x - lo) / (hi - lo), 0.0, 1.0); });
    INFO("factor " << j << " on [" << lo << ", " << hi << "): KS distance " << d);
    CHECK(d < ks_bound(draws, alpha));
    CHECK(*std::min_element(factors[j].begin(), factors[j].end()) >= lo);
    CHECK(*std::max_element(factors[j].begin(), factors[j].end()) <= hi);
  }
}

TEST_CASE("ColorJitter's order is a uniform permutation of the four (torch.randperm(4), _color.py:147), "
          "those that are None skipped (_color.py:162-170)",
          "[transforms][distribution]") {
  SECTION("all four: each of the 24 orders equally likely") {
    std::map<std::array<std::int32_t, 4>, double> orders;
    for (const SampleProgram& p : programs({ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1}}))
      ++orders[{p.pixels.ops[0].code, p.pixels.ops[1].code, p.pixels.ops[2].code, p.pixels.ops[3].code}];
    REQUIRE(orders.size() == 24);
    std::vector<double> counts;
    for (const auto& [order, n] : orders) counts.push_back(n);
    CHECK(chi_square_uniform(counts) < chi_square_bound(23));
  }
  SECTION("two of them: either first, half the time") {
    std::size_t brightness_first = 0;
    for (const SampleProgram& p : programs({ColorJitter{.brightness = 0.4, .hue = 0.1}})) {
      REQUIRE(p.pixels.count == 2);
      brightness_first += p.pixels.ops[0].code == px::AdjustBrightness::code;
    }
    CHECK(binomial_fits(brightness_first, draws, 0.5));
  }
}

TEST_CASE("RandomErasing's rectangles follow v2's make_params (_augment.py:98-134)", "[transforms][distribution]") {
  // The reference: the source's loop, in double precision, with its own generator.
  struct Rect {
    int i, j, h, w;
  };
  const auto reference = [](const RandomErasing& e, int img_h, int img_w, std::mt19937_64& gen) -> std::optional<Rect> {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double area = double(img_h) * img_w;
    const double log_lo = std::log(e.ratio[0]), log_hi = std::log(e.ratio[1]);
    for (int attempt = 0; attempt < 10; ++attempt) {
      const double erase_area = area * (e.scale[0] + (e.scale[1] - e.scale[0]) * unit(gen));
      const double aspect = std::exp(log_lo + (log_hi - log_lo) * unit(gen));
      const int h = static_cast<int>(std::nearbyint(std::sqrt(erase_area * aspect)));
      const int w = static_cast<int>(std::nearbyint(std::sqrt(erase_area / aspect)));
      if (!(h < img_h && w < img_w)) continue;
      const int i = std::uniform_int_distribution<int>(0, img_h - h)(gen);
      const int j = std::uniform_int_distribution<int>(0, img_w - w)(gen);
      return Rect{i, j, h, w};
    }
    return std::nullopt;
  };
  struct Case {
    RandomErasing e;
    int h, w;
  };
  const std::vector<Case> cases{{RandomErasing{.p = 1.0}, 224, 224},
                                {RandomErasing{.p = 1.0}, 96, 160},
                                {RandomErasing{.p = 1.0, .scale = {0.3, 0.9}, .ratio = {0.2, 5.0}}, 32, 48}};
  for (const Case& c : cases) {
    std::mt19937_64 gen(99);
    std::array<std::vector<double>, 4> ours, theirs;
    std::size_t ours_none = 0, theirs_none = 0;
    for (const SampleProgram& p : programs({c.e}, c.w, c.h)) {
      if (p.pixels.count == 0) {
        ++ours_none;
        continue;
      }
      const px::PixelOp& op = p.pixels.ops[0];
      REQUIRE(op.code == px::Erase::code);
      REQUIRE(op.i[0] + op.i[2] <= c.h);
      REQUIRE(op.i[1] + op.i[3] <= c.w);
      for (std::size_t k = 0; k < 4; ++k) ours[k].push_back(op.i[k]);
    }
    for (std::size_t n = 0; n < draws; ++n) {
      const auto r = reference(c.e, c.h, c.w, gen);
      if (!r) {
        ++theirs_none;
        continue;
      }
      theirs[0].push_back(r->i);
      theirs[1].push_back(r->j);
      theirs[2].push_back(r->h);
      theirs[3].push_back(r->w);
    }
    INFO(c.h << " x " << c.w << ": no rectangle in " << ours_none << " draws (reference " << theirs_none << ")");
    // The share of samples with no rectangle: within the two binomials' spread.
    const double pooled = double(ours_none + theirs_none) / (2.0 * draws);
    CHECK(std::abs(double(ours_none) - double(theirs_none)) <= 4.5 * std::sqrt(2.0 * draws * pooled * (1 - pooled)) + 1);
    static constexpr const char* names[4] = {"top i", "left j", "height h", "width w"};
    for (std::size_t k = 0; k < 4; ++k) {
      const double d = ks_distance(ours[k], theirs[k]);
      INFO(names[k] << ": two-sample KS distance " << d);
      CHECK(d < ks_bound(ours[k].size(), theirs[k].size(), alpha));
    }
  }
}

TEST_CASE("timm's RandomErasing: its probability, count and boxes follow random_erasing.py's _erase", "[transforms][distribution]") {
  // The reference: timm's loop (random.random, randint, uniform, exp, round), its own generator.
  struct Box {
    int i, j, h, w;
  };
  const auto reference = [](const TimmRandomErasing& e, int img_h, int img_w, std::mt19937_64& gen) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<Box> boxes;
    if (unit(gen) > e.probability) return boxes;
    const int most = e.max_count.value_or(e.min_count);
    const int count = e.min_count == most ? e.min_count : std::uniform_int_distribution<int>(e.min_count, most)(gen);
    const double area = double(img_h) * img_w;
    const double lo = std::log(e.min_aspect), hi = std::log(e.max_aspect.value_or(1.0 / e.min_aspect));
    for (int b = 0; b < count; ++b)
      for (int attempt = 0; attempt < 10; ++attempt) {
        const double target = (e.min_area + (e.max_area - e.min_area) * unit(gen)) * area / count;
        const double aspect = std::exp(lo + (hi - lo) * unit(gen));
        const int h = static_cast<int>(std::nearbyint(std::sqrt(target * aspect)));
        const int w = static_cast<int>(std::nearbyint(std::sqrt(target / aspect)));
        if (!(w < img_w && h < img_h)) continue;
        const int i = std::uniform_int_distribution<int>(0, img_h - h)(gen);
        const int j = std::uniform_int_distribution<int>(0, img_w - w)(gen);
        boxes.push_back({i, j, h, w});
        break;
      }
    return boxes;
  };
  struct Case {
    TimmRandomErasing e;
    int h, w;
  };
  const std::vector<Case> cases{{TimmRandomErasing{.probability = 0.25}, 224, 224},
                                {TimmRandomErasing{.probability = 1.0, .mode = ErasingMode::pixel, .max_count = 3}, 96, 160},
                                {TimmRandomErasing{.probability = 0.7, .min_area = 0.2, .max_area = 0.9,
                                                   .min_aspect = 0.2, .max_aspect = 4.0, .mode = ErasingMode::rand,
                                                   .min_count = 2, .max_count = 4}, 32, 48}};
  for (const Case& c : cases) {
    std::mt19937_64 gen(7);
    std::array<std::vector<double>, 5> ours, theirs;  // boxes per sample, then i, j, h, w of each box
    for (const SampleProgram& p : programs({c.e}, c.w, c.h)) {
      ours[4].push_back(p.pixels.count);
      for (int k = 0; k < p.pixels.count; ++k) {
        const px::PixelOp& op = p.pixels.ops[k];
        REQUIRE(op.code == px::Erase::code);
        REQUIRE(op.i[4] == (c.e.mode == ErasingMode::const_ ? 0 : c.e.mode == ErasingMode::rand ? 2 : 1));
        REQUIRE((op.i[0] + op.i[2] <= c.h && op.i[1] + op.i[3] <= c.w));
        for (std::size_t q = 0; q < 4; ++q) ours[q].push_back(op.i[q]);
      }
    }
    for (std::size_t n = 0; n < draws; ++n) {
      const std::vector<Box> boxes = reference(c.e, c.h, c.w, gen);
      theirs[4].push_back(double(boxes.size()));
      for (const Box& b : boxes) {
        theirs[0].push_back(b.i);
        theirs[1].push_back(b.j);
        theirs[2].push_back(b.h);
        theirs[3].push_back(b.w);
      }
    }
    static constexpr const char* names[5] = {"top i", "left j", "height h", "width w", "boxes a sample"};
    for (std::size_t q = 0; q < 5; ++q) {
      const double d = ks_distance(ours[q], theirs[q]);
      INFO(c.h << " x " << c.w << ", " << names[q] << ": two-sample KS distance " << d);
      CHECK(d < ks_bound(ours[q].size(), theirs[q].size(), alpha));
    }
  }
  CHECK_THROWS_WITH(validate_transforms(std::vector<PixelTransform>{TimmRandomErasing{.min_count = 3, .max_count = 2}}),
                    Catch::Contains("1 <= min_count <= max_count <= 16, got (3, 2)"));
}

TEST_CASE("RandomErasing's value: the given numbers, or a fresh normal stream per sample", "[transforms][distribution]") {
  std::vector<std::uint64_t> keys;
  for (const SampleProgram& p : programs({RandomErasing{.p = 1.0, .value = ErasingValue::random()}})) {
    REQUIRE(p.pixels.count == 1);
    REQUIRE(p.pixels.ops[0].i[4] == 1);
    keys.push_back(static_cast<std::uint32_t>(p.pixels.ops[0].i[5]) |
                   std::uint64_t{static_cast<std::uint32_t>(p.pixels.ops[0].i[6])} << 32);
  }
  std::sort(keys.begin(), keys.end());
  CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
  const std::vector<PixelTransform> half{RandomErasing{.p = 1.0, .value = 0.5}};
  const SampleProgram one = draw_program(half, 1, 0, 0, 224, 224);
  REQUIRE(one.pixels.count == 1);
  CHECK(one.pixels.ops[0].i[4] == 0);
  CHECK(one.pixels.ops[0].f[0] == 0.5f);
  CHECK(one.pixels.ops[0].f[2] == 0.5f);
}

TEST_CASE("GaussianBlur's sigma is uniform on its range and float32, a single sigma fixed (_misc.py:204-211)",
          "[transforms][distribution]") {
  std::vector<double> sigmas;
  for (const SampleProgram& p : programs({GaussianBlur{.kernel_size = KernelSize{3, 7}, .sigma = Numbers{0.5, 3.0}}})) {
    REQUIRE(p.pixels.count == 1);  // every sample: GaussianBlur has no p
    const px::PixelOp& op = p.pixels.ops[0];
    REQUIRE(op.code == px::GaussianBlur::code);
    REQUIRE(op.i[0] == 3);  // kernel_size is (width, height)
    REQUIRE(op.i[1] == 7);
    REQUIRE(op.f[0] == op.f[1]);  // sigma=[s, s]
    sigmas.push_back(op.f[0]);
  }
  CHECK(ks_uniform(sigmas, 0.5, 3.0) < ks_bound(draws, alpha));
  CHECK(*std::min_element(sigmas.begin(), sigmas.end()) >= 0.5);
  for (const SampleProgram& p : programs({GaussianBlur{.kernel_size = 23, .sigma = 1.3}}))
    REQUIRE(p.pixels.ops[0].f[0] == 1.3f);
  const auto calls = described({GaussianBlur{.kernel_size = 9}});
  std::vector<double> drawn;
  for (const auto& c : calls) drawn.push_back(std::get<std::vector<double>>(c.at(0).args.at(1).value).at(0));
  CHECK(ks_uniform(drawn, 0.1, 2.0) < ks_bound(draws, alpha));  // the default (0.1, 2.0)
  CHECK(all_float32(drawn));
}

TEST_CASE("RandomRotation's angle is uniform on degrees, float32 (_geometry.py:641-643)", "[transforms][distribution]") {
  for (const auto& [t, lo, hi] : {std::tuple{RandomRotation{.degrees = 30.0}, -30.0, 30.0},
                                  std::tuple{RandomRotation{.degrees = Numbers{10.0, 50.0}}, 10.0, 50.0}}) {
    std::vector<double> angles;
    for (const auto& c : described({t})) {
      REQUIRE(c.size() == 1);
      REQUIRE(c[0].function == "rotate");
      angles.push_back(number(c[0], "angle"));
    }
    INFO("degrees (" << lo << ", " << hi << ")");
    CHECK(ks_uniform(angles, lo, hi) < ks_bound(draws, alpha));
    CHECK(all_float32(angles));
  }
}

TEST_CASE("RandomAffine's parameters follow v2's make_params (_geometry.py:743-769)", "[transforms][distribution]") {
  const RandomAffine t{.degrees = 15.0, .translate = std::array{0.1, 0.25}, .scale = std::array{0.8, 1.2},
                       .shear = Numbers{-5.0, 5.0, 2.0, 10.0}};
  const int width = 160, height = 96;
  std::array<std::vector<double>, 6> ours;  // angle, tx, ty, scale, shear x, shear y
  for (const auto& c : described({t}, width, height)) {
    REQUIRE(c.size() == 1);
    REQUIRE(c[0].function == "affine");
    const auto translate = std::get<std::vector<std::int64_t>>(c[0].args.at(1).value);
    const auto shear = std::get<std::vector<double>>(c[0].args.at(3).value);
    ours[0].push_back(number(c[0], "angle"));
    ours[1].push_back(double(translate.at(0)));
    ours[2].push_back(double(translate.at(1)));
    ours[3].push_back(number(c[0], "scale"));
    ours[4].push_back(shear.at(0));
    ours[5].push_back(shear.at(1));
  }
  CHECK(ks_uniform(ours[0], -15.0, 15.0) < ks_bound(draws, alpha));
  CHECK(ks_uniform(ours[3], 0.8, 1.2) < ks_bound(draws, alpha));
  CHECK(ks_uniform(ours[4], -5.0, 5.0) < ks_bound(draws, alpha));
  CHECK(ks_uniform(ours[5], 2.0, 10.0) < ks_bound(draws, alpha));
  for (const std::size_t k : {0, 3, 4, 5}) CHECK(all_float32(ours[k]));
  // The translation, from the source's lines 748-751 with a generator of its own:
  // int(round(uniform(-max_dx, max_dx))), max_dx = translate[0] * width.
  std::mt19937_64 gen(5);
  std::array<std::vector<double>, 2> theirs;
  for (std::size_t n = 0; n < draws; ++n) {
    const double max_dx = 0.1 * width, max_dy = 0.25 * height;
    theirs[0].push_back(std::nearbyint(std::uniform_real_distribution<double>(-max_dx, max_dx)(gen)));
    theirs[1].push_back(std::nearbyint(std::uniform_real_distribution<double>(-max_dy, max_dy)(gen)));
  }
  for (std::size_t k = 0; k < 2; ++k) {
    const double d = ks_distance(ours[1 + k], theirs[k]);
    INFO((k ? "ty" : "tx") << ": two-sample KS distance " << d);
    CHECK(d < ks_bound(draws, draws, alpha));
    CHECK(*std::max_element(ours[1 + k].begin(), ours[1 + k].end()) == (k ? 24.0 : 16.0));
  }
  // Without translate, scale or shear: (0, 0), 1 and (0, 0); two shear values draw x only.
  for (const auto& c : described({RandomAffine{.degrees = 0.0, .shear = 20.0}})) {
    const auto shear = std::get<std::vector<double>>(c[0].args.at(3).value);
    REQUIRE(std::get<std::vector<std::int64_t>>(c[0].args.at(1).value) == std::vector<std::int64_t>{0, 0});
    REQUIRE(number(c[0], "scale") == 1.0);
    REQUIRE(number(c[0], "angle") == 0.0);
    REQUIRE(std::abs(shear.at(0)) <= 20.0);
    REQUIRE(shear.at(1) == 0.0);
  }
}

TEST_CASE("RandomPerspective's corners are uniform on v2's ranges (_geometry.py's RandomPerspective.make_params)",
          "[transforms][distribution]") {
  const int width = 61, height = 40;
  const RandomPerspective t{.distortion_scale = 0.6, .p = 1.0};
  // bound = int(0.6 * (size // 2)) + 1: x in [0, 19) or [42, 61), y in [0, 13) or [27, 40)
  const std::array<std::array<std::int64_t, 2>, 8> ranges{{{0, 19}, {0, 13}, {42, 61}, {0, 13},
                                                           {42, 61}, {27, 40}, {0, 19}, {27, 40}}};
  std::array<std::map<std::int64_t, double>, 8> seen;
  for (const auto& c : described({t}, width, height)) {
    REQUIRE(c.size() == 1);
    REQUIRE(c[0].function == "perspective");
    // The coefficients map the drawn corners onto the image's: their inverse maps the image's
    // corners back onto the drawn ones, integers to within float32's rounding.
    const auto k = std::get<std::vector<double>>(c[0].args.at(2).value);
    const double m[3][3] = {{k[0], k[1], k[2]}, {k[3], k[4], k[5]}, {k[6], k[7], 1.0}};
    const auto cof = [&](int r, int col) {
      const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (col + 1) % 3, c2 = (col + 2) % 3;
      return m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1];
    };
    const ops::pixel::Corners image = ops::pixel::image_corners(width, height);
    for (std::size_t corner = 0; corner < 4; ++corner) {
      const double x = double(image[corner][0]), y = double(image[corner][1]);
      double v[3];
      for (int r = 0; r < 3; ++r) v[r] = cof(0, r) * x + cof(1, r) * y + cof(2, r);  // adjugate^T times (x, y, 1)
      for (std::size_t axis = 0; axis < 2; ++axis) {
        const double drawn = v[axis] / v[2];
        REQUIRE(std::abs(drawn - std::round(drawn)) < 1e-3);
        ++seen[2 * corner + axis][std::llround(drawn)];
      }
    }
  }
  for (std::size_t k = 0; k < 8; ++k) {
    INFO("coordinate " << k << " in [" << ranges[k][0] << ", " << ranges[k][1] << ")");
    REQUIRE(std::int64_t(seen[k].size()) == ranges[k][1] - ranges[k][0]);
    CHECK(seen[k].begin()->first == ranges[k][0]);
    CHECK(seen[k].rbegin()->first == ranges[k][1] - 1);
    std::vector<double> counts;
    for (const auto& [value, n] : seen[k]) counts.push_back(n);
    CHECK(chi_square_uniform(counts) < chi_square_bound(int(counts.size()) - 1));
  }
  // no distortion: the identity map, coefficients (1, 0, 0, 0, 1, 0, 0, 0)
  for (const auto& c : described({RandomPerspective{.distortion_scale = 0.0, .p = 1.0}}, width, height))
    CHECK(std::get<std::vector<double>>(c[0].args.at(2).value) == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0});
}

TEST_CASE("RandomPhotometricDistort draws each adjustment and the permutation with probability p, factors uniform, "
          "the contrast before or after with even odds (_color.py's RandomPhotometricDistort.make_params)",
          "[transforms][distribution]") {
  const RandomPhotometricDistort t{.brightness = {0.6, 1.4}, .contrast = {0.3, 1.7}, .saturation = {0.2, 1.2},
                                   .hue = {-0.3, 0.1}, .p = 0.35};
  const std::array<const char*, 4> functions{"adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue"};
  const std::array<const char*, 4> arguments{"brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"};
  const std::array<std::array<double, 2>, 4> ranges{t.brightness, t.contrast, t.saturation, t.hue};
  // transform()'s order, with the contrast before saturation and hue or after them
  const std::vector<std::string> before{"adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue",
                                        "permute_channels"};
  const std::vector<std::string> after{"adjust_brightness", "adjust_saturation", "adjust_hue", "adjust_contrast",
                                       "permute_channels"};
  const auto in_order = [](const std::vector<std::string>& calls, const std::vector<std::string>& order) {
    std::size_t at = 0;
    for (const std::string& f : calls) {
      while (at < order.size() && order[at] != f) ++at;
      if (at++ == order.size()) return false;
    }
    return true;
  };
  std::array<std::vector<double>, 4> factors;
  std::size_t permuted = 0, told_apart = 0, contrast_first = 0;
  for (const auto& calls : described({t})) {
    std::vector<std::string> names;
    for (const DrawnCall& c : calls) names.push_back(c.function);
    for (std::size_t k = 0; k < 4; ++k)
      for (const DrawnCall& c : calls)
        if (c.function == functions[k]) factors[k].push_back(number(c, arguments[k]));
    permuted += std::count(names.begin(), names.end(), "permute_channels");
    const bool first = in_order(names, before), last = in_order(names, after);
    CHECK((first || last));
    if (first != last) ++told_apart, contrast_first += first;  // the contrast with saturation or hue
  }
  for (std::size_t k = 0; k < 4; ++k) {
    INFO(functions[k] << ": " << factors[k].size() << " of " << draws);
    CHECK(binomial_fits(factors[k].size(), draws, 0.35));
    CHECK(ks_uniform(factors[k], ranges[k][0], ranges[k][1]) < ks_bound(factors[k].size(), alpha));
    CHECK(all_float32(factors[k]));
  }
  CHECK(binomial_fits(permuted, draws, 0.35));
  INFO(contrast_first << " of " << told_apart << " with the contrast first");
  CHECK(binomial_fits(told_apart, draws, 0.35 * (1 - 0.65 * 0.65)));
  CHECK(binomial_fits(contrast_first, told_apart, 0.5));
}
