// The per-pixel headers compiled by nvcc and by the C++ compiler give the same bits: one binary
// links both builds (nvcc_host.cu, in a library of its own, and this file) and compares them on
// seeded images.

#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <catch2/catch.hpp>

#include "cuda/nvcc_host.hpp"
#include "support/images.hpp"

#include <cstring>
#include <vector>

using namespace conveyor;

TEST_CASE("nvcc and the C++ compiler build the shared headers to the same results", "[cuda][nvcc]") {
  REQUIRE(conveyor_test::kernel_address() != nullptr);
  REQUIRE(conveyor_test::resample_address() != reinterpret_cast<const void*>(&ops::cpu::resample));
  CounterRng rng(5, 0, 0, RngOp::user);
  for (int trial = 0; trial < 20; ++trial) {
    const int w = 16 + int(rng.below(300)), h = 16 + int(rng.below(300));
    const auto img = conveyor_test::random_image(w, h, 3, 900 + trial);
    ImageAugment aug = trial % 2 ? ImageAugment::train(48) : ImageAugment::eval(56, 48);
    aug.dtype = static_cast<DType>(trial % 4);
    if (aug.dtype == DType::u8) aug.normalize.reset();
    const int orientation = 1 + trial % 8;  // the stored w x h image, viewed upright
    const bool swap = orientation >= 5;
    ops::SamplePlan plan = aug.plan({.seed = 1, .epoch = 0, .index = std::uint64_t(trial)}, swap ? h : w, swap ? w : h);
    plan.src = detail::oriented_view(orientation, w, h, std::int64_t(w) * 3);
    const std::size_t bytes = aug.sample_spec().bytes();
    std::vector<std::byte> a(bytes), b(bytes);
    ops::cpu::ResampleScratch s;
    ops::cpu::resample(img.data(), plan, aug.output_params(), a.data(), s);
    conveyor_test::resample_nvcc(img.data(), plan, aug.output_params(), b.data());
    REQUIRE(a == b);
  }
  for (int i = 0; i < 100000; ++i) {
    const float f = ops::bits_float(rng.next_u32());
    REQUIRE(conveyor_test::f16_nvcc(f) == ops::to_f16_bits(f));
    REQUIRE(conveyor_test::bf16_nvcc(f) == ops::to_bf16_bits(f));
  }
}
