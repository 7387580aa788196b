// The policies (TrivialAugmentWide, RandAugment, AutoAugment) against torchvision 0.29's
// transforms/v2/_auto_augment.py: their op tables as written there (lines cited), the magnitudes
// as torch computes them in float32, and, over many samples, the op choices, bins, signs and
// sub-policies its `forward` methods draw. The bounds are ones a correct draw exceeds with a
// probability near 1e-4; the seeds are fixed.

#include <conveyor/ops/pixel/registry.hpp>
#include <conveyor/transforms/program.hpp>

#include "support/statistics.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

using namespace conveyor;
using namespace conveyor_test;

namespace {

constexpr std::size_t policy_draws = 20000;

/// A row of an `_AUGMENTATION_SPACE` as the source spells it: the op, torch.linspace's (start,
/// end) (end in units of the width or height where `side` says), Posterize's divisor, or none.
struct Row {
  const char* name;
  char kind;  // 'n' none, 'l' linspace, 'p' posterize
  double start, end;
  char side;  // 0, 'w' or 'h'
  bool is_signed;
};

// _auto_augment.py:469-487
const std::vector<Row> trivial_augment_wide_source{
    {"Identity", 'n', 0, 0, 0, false},      {"ShearX", 'l', 0.0, 0.99, 0, true},
    {"ShearY", 'l', 0.0, 0.99, 0, true},    {"TranslateX", 'l', 0.0, 32.0, 0, true},
    {"TranslateY", 'l', 0.0, 32.0, 0, true}, {"Rotate", 'l', 0.0, 135.0, 0, true},
    {"Brightness", 'l', 0.0, 0.99, 0, true}, {"Color", 'l', 0.0, 0.99, 0, true},
    {"Contrast", 'l', 0.0, 0.99, 0, true},  {"Sharpness", 'l', 0.0, 0.99, 0, true},
    {"Posterize", 'p', 8, 6, 0, false},      {"Solarize", 'l', 1.0, 0.0, 0, false},
    {"AutoContrast", 'n', 0, 0, 0, false},  {"Equalize", 'n', 0, 0, 0, false}};

// _auto_augment.py:384-408
const std::vector<Row> rand_augment_source{
    {"Identity", 'n', 0, 0, 0, false},
    {"ShearX", 'l', 0.0, 0.3, 0, true},
    {"ShearY", 'l', 0.0, 0.3, 0, true},
    {"TranslateX", 'l', 0.0, 150.0 / 331.0, 'w', true},
    {"TranslateY", 'l', 0.0, 150.0 / 331.0, 'h', true},
    {"Rotate", 'l', 0.0, 30.0, 0, true},
    {"Brightness", 'l', 0.0, 0.9, 0, true},
    {"Color", 'l', 0.0, 0.9, 0, true},
    {"Contrast", 'l', 0.0, 0.9, 0, true},
    {"Sharpness", 'l', 0.0, 0.9, 0, true},
    {"Posterize", 'p', 8, 4, 0, false},
    {"Solarize", 'l', 1.0, 0.0, 0, false},
    {"AutoContrast", 'n', 0, 0, 0, false},
    {"Equalize", 'n', 0, 0, 0, false}};

// _auto_augment.py:203-227
const std::vector<Row> auto_augment_source{
    {"ShearX", 'l', 0.0, 0.3, 0, true},
    {"ShearY", 'l', 0.0, 0.3, 0, true},
    {"TranslateX", 'l', 0.0, 150.0 / 331.0, 'w', true},
    {"TranslateY", 'l', 0.0, 150.0 / 331.0, 'h', true},
    {"Rotate", 'l', 0.0, 30.0, 0, true},
    {"Brightness", 'l', 0.0, 0.9, 0, true},
    {"Color", 'l', 0.0, 0.9, 0, true},
    {"Contrast", 'l', 0.0, 0.9, 0, true},
    {"Sharpness", 'l', 0.0, 0.9, 0, true},
    {"Posterize", 'p', 8, 4, 0, false},
    {"Solarize", 'l', 1.0, 0.0, 0, false},
    {"AutoContrast", 'n', 0, 0, 0, false},
    {"Equalize", 'n', 0, 0, 0, false},
    {"Invert", 'n', 0, 0, 0, false}};

void check_table(std::span<const PolicyEntry> table, const std::vector<Row>& source) {
  REQUIRE(table.size() == source.size());
  for (std::size_t k = 0; k < table.size(); ++k) {
    const PolicyEntry& e = table[k];
    const Row& r = source[k];
    INFO("row " << k << ": " << r.name);
    CHECK(std::string(policy_op_name(e.op)) == r.name);
    CHECK(e.is_signed == r.is_signed);
    const char kind = e.magnitudes.kind == Magnitudes::Kind::none       ? 'n'
                      : e.magnitudes.kind == Magnitudes::Kind::linspace ? 'l'
                                                                        : 'p';
    CHECK(kind == r.kind);
    if (kind == 'n') continue;
    CHECK(e.magnitudes.start == r.start);
    CHECK(e.magnitudes.end == r.end);
    const char side = e.magnitudes.side == Magnitudes::Side::width    ? 'w'
                      : e.magnitudes.side == Magnitudes::Side::height ? 'h'
                                                                      : 0;
    CHECK(side == r.side);
  }
}

const PolicyEntry& entry_of(std::span<const PolicyEntry> table, const char* name) {
  for (const PolicyEntry& e : table)
    if (std::string(policy_op_name(e.op)) == name) return e;
  FAIL("no " << name);
  return table[0];
}

std::size_t index_of(std::span<const PolicyEntry> table, PolicyOp op) {
  for (std::size_t k = 0; k < table.size(); ++k)
    if (table[k].op == op) return k;
  return table.size();
}

}  // namespace

TEST_CASE("the policies' op tables are torchvision's _AUGMENTATION_SPACE, row for row", "[transforms][policy]") {
  check_table(trivial_augment_wide_space, trivial_augment_wide_source);
  check_table(rand_augment_space, rand_augment_source);
  check_table(auto_augment_space, auto_augment_source);
}

TEST_CASE("AutoAugment's sub-policies are torchvision's (_auto_augment.py:239-327)", "[transforms][policy]") {
  const auto imagenet = auto_augment_policies(AutoAugmentPolicy::imagenet);
  const auto cifar10 = auto_augment_policies(AutoAugmentPolicy::cifar10);
  const auto svhn = auto_augment_policies(AutoAugmentPolicy::svhn);
  const auto same = [](const SubPolicyStep& s, PolicyOp op, double p, int bin) {
    return s.op == op && s.probability == p && s.magnitude_bin == bin;
  };
  // _auto_augment.py:244, 256, 268
  CHECK(same(imagenet[0][0], PolicyOp::posterize, 0.4, 8));
  CHECK(same(imagenet[0][1], PolicyOp::rotate, 0.6, 9));
  CHECK(same(imagenet[12][0], PolicyOp::equalize, 0.0, -1));
  CHECK(same(imagenet[18][0], PolicyOp::shear_x, 0.6, 5));
  CHECK(same(imagenet[24][1], PolicyOp::equalize, 0.6, -1));
  // _auto_augment.py:273, 286, 296
  CHECK(same(cifar10[1][1], PolicyOp::translate_x, 0.3, 9));
  CHECK(same(cifar10[14][1], PolicyOp::invert, 0.0, -1));
  CHECK(same(cifar10[24][0], PolicyOp::translate_y, 0.7, 9));
  // _auto_augment.py:300, 315, 324
  CHECK(same(svhn[0][0], PolicyOp::shear_x, 0.9, 4));
  CHECK(same(svhn[15][1], PolicyOp::translate_y, 0.0, 2));
  CHECK(same(svhn[24][1], PolicyOp::invert, 0.1, -1));
  // Every op's count over the ImageNet policy's 50 steps, as the source lists them.
  std::array<int, 15> counts{};
  for (const SubPolicy& s : imagenet)
    for (const SubPolicyStep& step : s) ++counts[static_cast<std::size_t>(step.op)];
  CHECK(counts[static_cast<std::size_t>(PolicyOp::equalize)] == 17);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::rotate)] == 6);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::posterize)] == 5);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::solarize)] == 7);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::color)] == 6);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::invert)] == 3);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::contrast)] == 2);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::autocontrast)] == 2);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::sharpness)] == 1);
  CHECK(counts[static_cast<std::size_t>(PolicyOp::shear_x)] == 1);
}

TEST_CASE("magnitudes are torch's float32 values: its linspace, Posterize's rounded bits", "[transforms][policy]") {
  SECTION("torch.linspace's values where rounding the exact value to float32 would differ (torch 2.15)") {
    const PolicyEntry& ta_shear = entry_of(trivial_augment_wide_space, "ShearX");
    CHECK(policy_magnitude(ta_shear, 31, 5, 224, 224) == 0.16499999165534973);
    CHECK(policy_magnitude(ta_shear, 31, 10, 224, 224) == 0.32999998331069946);
    CHECK(policy_magnitude(ta_shear, 31, 26, 224, 224) == 0.8580000400543213);
    const PolicyEntry& ra_shear = entry_of(rand_augment_space, "ShearY");
    CHECK(policy_magnitude(ra_shear, 31, 5, 224, 224) == 0.05000000447034836);
    CHECK(policy_magnitude(ra_shear, 31, 7, 224, 224) == 0.07000000774860382);
    CHECK(policy_magnitude(entry_of(auto_augment_space, "Contrast"), 10, 6, 224, 224) == 0.6000000238418579);
    const PolicyEntry& solarize = entry_of(trivial_augment_wide_space, "Solarize");
    CHECK(policy_magnitude(solarize, 31, 10, 224, 224) == 0.6666666269302368);
    CHECK(policy_magnitude(solarize, 31, 12, 224, 224) == 0.5999999642372131);
    CHECK(policy_magnitude(solarize, 31, 27, 224, 224) == 0.10000000894069672);
    // TranslateX's end is 150 / 331 of the width: 16.767... at 37
    const PolicyEntry& translate = entry_of(rand_augment_space, "TranslateX");
    CHECK(policy_magnitude(translate, 31, 5, 37, 500) == 2.7945618629455566);
    CHECK(policy_magnitude(translate, 31, 26, 37, 500) == 14.531723022460938);
    CHECK(policy_magnitude(entry_of(rand_augment_space, "TranslateY"), 31, 26, 500, 37) == 14.531723022460938);
  }
  SECTION("fused: torch.linspace (torch 2.15) where a multiply then an add would differ") {
    const PolicyEntry& ta_shear = entry_of(trivial_augment_wide_space, "ShearX");
    CHECK(policy_magnitude(ta_shear, 31, 19, 224, 224) == 0.6270000338554382);
    CHECK(policy_magnitude(ta_shear, 31, 25, 224, 224) == 0.824999988079071);
    CHECK(policy_magnitude(entry_of(rand_augment_space, "Brightness"), 31, 20, 224, 224) == 0.5999999642372131);
    const PolicyEntry& solarize = entry_of(rand_augment_space, "Solarize");
    CHECK(policy_magnitude(solarize, 31, 6, 224, 224) == 0.800000011920929);
    CHECK(policy_magnitude(solarize, 31, 13, 224, 224) == 0.5666666626930237);
    CHECK(policy_magnitude(entry_of(auto_augment_space, "Solarize"), 10, 3, 224, 224) == 0.6666666865348816);
    // TrivialAugmentWide's TranslateX at bin 15 is a hair below 16: int() makes it a 15-pixel shift
    const PolicyEntry& ta_translate = entry_of(trivial_augment_wide_space, "TranslateX");
    CHECK(policy_magnitude(ta_translate, 31, 15, 224, 224) == 15.999999046325684);
    CHECK(policy_magnitude(ta_translate, 31, 17, 224, 224) == 18.133333206176758);
    CHECK(policy_magnitude(entry_of(rand_augment_space, "TranslateX"), 31, 20, 224, 224) == 67.67371368408203);
    CHECK(policy_magnitude(entry_of(auto_augment_space, "TranslateY"), 10, 6, 224, 224) == 67.67371368408203);
  }
  SECTION("every bin: float32, within a step of the exact value, the ends exact") {
    for (const auto* table : {&trivial_augment_wide_space, &rand_augment_space, &auto_augment_space})
      for (const PolicyEntry& e : *table) {
        if (e.magnitudes.kind != Magnitudes::Kind::linspace) continue;
        for (const int bins : {2, 10, 31, 64}) {
          const double end = e.magnitudes.side == Magnitudes::Side::none ? e.magnitudes.end : e.magnitudes.end * 224;
          for (int b = 0; b < bins; ++b) {
            const double m = policy_magnitude(e, bins, b, 224, 224);
            REQUIRE(static_cast<double>(static_cast<float>(m)) == m);
            const double exact = e.magnitudes.start + (end - e.magnitudes.start) * b / (bins - 1);
            REQUIRE(std::abs(m - exact) <= 4e-7 * std::max(1.0, std::abs(end)));
          }
          CHECK(policy_magnitude(e, bins, 0, 224, 224) == static_cast<float>(e.magnitudes.start));
          CHECK(policy_magnitude(e, bins, bins - 1, 224, 224) == static_cast<float>(end));
        }
      }
  }
  SECTION("Posterize: (8 - arange(n) / ((n - 1) / k)).round().int(), as torch gives them") {
    const std::vector<int> ta{8, 8, 8, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 2, 2, 2};
    const std::vector<int> ra{8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4};
    const std::vector<int> aa{8, 8, 7, 7, 6, 6, 5, 5, 4, 4};
    for (int b = 0; b < 31; ++b) {
      CHECK(policy_magnitude(entry_of(trivial_augment_wide_space, "Posterize"), 31, b, 224, 224) == ta[std::size_t(b)]);
      CHECK(policy_magnitude(entry_of(rand_augment_space, "Posterize"), 31, b, 224, 224) == ra[std::size_t(b)]);
    }
    for (int b = 0; b < 10; ++b)
      CHECK(policy_magnitude(entry_of(auto_augment_space, "Posterize"), 10, b, 224, 224) == aa[std::size_t(b)]);
  }
}

TEST_CASE("TrivialAugmentWide: one op uniformly, a uniform bin, signed ops negated half the time "
          "(_auto_augment.py:502-510)",
          "[transforms][policy][distribution]") {
  const TrivialAugmentWide ta{};
  std::vector<double> op_counts(14), bin_counts(31);
  std::size_t signed_draws = 0, negated = 0;
  for (std::uint64_t i = 0; i < policy_draws; ++i) {
    CounterRng rng(7, 0, i, RngOp::pixel_transform);
    const PolicyChoice c = ta.choose(rng, 224, 224);
    const std::size_t k = index_of(trivial_augment_wide_space, c.op);
    REQUIRE(k < 14);
    ++op_counts[k];
    const PolicyEntry& e = trivial_augment_wide_space[k];
    if (e.magnitudes.kind == Magnitudes::Kind::none) {
      REQUIRE(c.bin == -1);
      REQUIRE(c.magnitude == 0.0);
      continue;
    }
    REQUIRE(c.bin >= 0);
    REQUIRE(c.bin < 31);
    ++bin_counts[std::size_t(c.bin)];
    const double m = policy_magnitude(e, 31, c.bin, 224, 224);
    REQUIRE(c.magnitude == (c.negated ? -m : m));
    if (e.is_signed) {
      ++signed_draws;
      negated += c.negated;
    } else {
      REQUIRE_FALSE(c.negated);
    }
  }
  INFO("ops " << chi_square_uniform(op_counts) << ", bins " << chi_square_uniform(bin_counts));
  CHECK(chi_square_uniform(op_counts) < chi_square_bound(13));
  CHECK(chi_square_uniform(bin_counts) < chi_square_bound(30));
  CHECK(binomial_fits(negated, signed_draws, 0.5));
  // num_magnitude_bins changes the bins' range
  const TrivialAugmentWide few{.num_magnitude_bins = 3};
  std::vector<double> few_bins(3);
  for (std::uint64_t i = 0; i < 3000; ++i) {
    CounterRng rng(8, 0, i, RngOp::pixel_transform);
    const PolicyChoice c = few.choose(rng, 224, 224);
    if (c.bin >= 0) ++few_bins[std::size_t(c.bin)];
  }
  CHECK(chi_square_uniform(few_bins) < chi_square_bound(2));
}

TEST_CASE("TrivialAugmentWide draws one record, none for Identity (1 in 14)", "[transforms][policy][distribution]") {
  const std::vector<PixelTransform> ts{TrivialAugmentWide{}};
  validate_transforms(ts);
  std::size_t none = 0;
  for (std::uint64_t i = 0; i < policy_draws; ++i) {
    const SampleProgram p = draw_program(ts, 3, 1, i, 224, 224);
    REQUIRE(p.pixels.count <= 1);
    none += p.pixels.count == 0;
  }
  CHECK(binomial_fits(none, policy_draws, 1.0 / 14));
}

TEST_CASE("RandAugment: num_ops ops, each uniform and independent, at the fixed bin (_auto_augment.py:429-437)",
          "[transforms][policy][distribution]") {
  const RandAugment ra{.num_ops = 2, .magnitude = 9};
  std::vector<double> pairs(14 * 14);
  std::size_t signed_draws = 0, negated = 0;
  for (std::uint64_t i = 0; i < policy_draws; ++i) {
    CounterRng rng(11, 2, i, RngOp::pixel_transform);
    std::size_t first = 0;
    for (int k = 0; k < 2; ++k) {
      const PolicyChoice c = ra.choose(rng, 224, 160);
      const std::size_t j = index_of(rand_augment_space, c.op);
      REQUIRE(j < 14);
      const PolicyEntry& e = rand_augment_space[j];
      REQUIRE(c.bin == (e.magnitudes.kind == Magnitudes::Kind::none ? -1 : 9));
      const double m = policy_magnitude(e, 31, 9, 224, 160);
      REQUIRE(c.magnitude == (c.negated ? -m : (e.magnitudes.kind == Magnitudes::Kind::none ? 0.0 : m)));
      if (e.is_signed) {
        ++signed_draws;
        negated += c.negated;
      }
      if (k == 0) first = j;
      else ++pairs[first * 14 + j];
    }
  }
  CHECK(chi_square_uniform(pairs) < chi_square_bound(14 * 14 - 1));
  CHECK(binomial_fits(negated, signed_draws, 0.5));
  // The program holds num_ops records less the Identities.
  const std::vector<PixelTransform> ts{RandAugment{.num_ops = 3, .magnitude = 30}};
  validate_transforms(ts);
  std::size_t records = 0;
  for (std::uint64_t i = 0; i < policy_draws; ++i) records += std::size_t(draw_program(ts, 5, 0, i, 224, 224).pixels.count);
  CHECK(binomial_fits(records, 3 * policy_draws, 13.0 / 14));
}

TEST_CASE("AutoAugment: a uniform sub-policy, each step applied with its probability, its bin, signed ops "
          "negated half the time (_auto_augment.py:333-351)",
          "[transforms][policy][distribution]") {
  for (const AutoAugmentPolicy policy : {AutoAugmentPolicy::imagenet, AutoAugmentPolicy::cifar10, AutoAugmentPolicy::svhn}) {
    const AutoAugment aa{.policy = policy};
    const auto table = auto_augment_policies(policy);
    std::vector<double> chosen(25);
    std::array<std::array<std::size_t, 2>, 25> applied{};
    std::size_t signed_draws = 0, negated = 0;
    for (std::uint64_t i = 0; i < 2 * policy_draws; ++i) {
      CounterRng rng(13, 0, i, RngOp::pixel_transform);
      const AutoAugmentChoice c = aa.choose(rng, 200, 300);
      REQUIRE(c.sub_policy >= 0);
      REQUIRE(c.sub_policy < 25);
      ++chosen[std::size_t(c.sub_policy)];
      for (std::size_t k = 0; k < 2; ++k) {
        if (!c.applied[k]) continue;
        ++applied[std::size_t(c.sub_policy)][k];
        const SubPolicyStep& step = table[std::size_t(c.sub_policy)][k];
        REQUIRE(c.steps[k].op == step.op);
        REQUIRE(c.steps[k].bin == step.magnitude_bin);
        const PolicyEntry& e = auto_augment_space[index_of(auto_augment_space, step.op)];
        if (step.magnitude_bin >= 0) {
          const double m = policy_magnitude(e, 10, step.magnitude_bin, 200, 300);
          REQUIRE(c.steps[k].magnitude == (c.steps[k].negated ? -m : m));
        }
        if (e.is_signed) {
          ++signed_draws;
          negated += c.steps[k].negated;
        }
      }
    }
    INFO("policy " << int(policy) << ": chi-square " << chi_square_uniform(chosen));
    CHECK(chi_square_uniform(chosen) < chi_square_bound(24));
    CHECK(binomial_fits(negated, signed_draws, 0.5));
    for (std::size_t s = 0; s < 25; ++s)
      for (std::size_t k = 0; k < 2; ++k) {
        INFO("sub-policy " << s << " step " << k << ": " << applied[s][k] << " of " << chosen[s]);
        // 5 sigmas: 150 binomials are checked here
        CHECK(binomial_fits(applied[s][k], std::size_t(chosen[s]), table[s][k].probability, 5.0));
      }
  }
}
