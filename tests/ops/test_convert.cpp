#include <conveyor/core/rng.hpp>
#include <conveyor/ops/convert.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>

using namespace conveyor;

TEST_CASE("to_u8 rounds half to even and clamps", "[ops][convert]") {
  CHECK(ops::to_u8(-5.0f) == 0);
  CHECK(ops::to_u8(0.49f) == 0);
  CHECK(ops::to_u8(0.5f) == 0);
  CHECK(ops::to_u8(1.5f) == 2);
  CHECK(ops::to_u8(2.5f) == 2);
  CHECK(ops::to_u8(254.6f) == 255);
  CHECK(ops::to_u8(1e9f) == 255);
}

TEST_CASE("f16 conversion rounds to nearest even like the hardware type", "[ops][convert]") {
  // GCC's _Float16 conversion is IEEE round-to-nearest-even: an independent reference.
  auto reference = [](float f) {
    const _Float16 h = static_cast<_Float16>(f);
    std::uint16_t bits;
    std::memcpy(&bits, &h, 2);
    return bits;
  };
  for (float f : {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, 1e6f, -1e6f, 6.1035156e-05f,
                  6.0e-08f, 2.9e-08f, 3.0e-08f, 1e-10f, std::numeric_limits<float>::infinity(), 0.1f, 2.1179039f})
    CHECK(ops::to_f16_bits(f) == reference(f));
  CHECK((ops::to_f16_bits(std::nanf("")) & 0x7C00) == 0x7C00);
  CHECK((ops::to_f16_bits(std::nanf("")) & 0x03FF) != 0);
  CounterRng rng(1, 0, 0, RngOp::user);
  for (int i = 0; i < 200000; ++i) {
    const float f = ops::bits_float(rng.next_u32());
    if (std::isnan(f)) continue;
    REQUIRE(ops::to_f16_bits(f) == reference(f));
  }
  for (std::uint32_t h = 0; h < 0x7C00; ++h) REQUIRE(ops::to_f16_bits(ops::f16_to_float(std::uint16_t(h))) == h);
}

TEST_CASE("bf16 conversion rounds to nearest even", "[ops][convert]") {
  CHECK(ops::to_bf16_bits(1.0f) == 0x3F80);
  CHECK(ops::to_bf16_bits(ops::bits_float(0x3F808000u)) == 0x3F80);  // tie, even stays
  CHECK(ops::to_bf16_bits(ops::bits_float(0x3F818000u)) == 0x3F82);  // tie, odd rounds up
  CHECK(ops::to_bf16_bits(ops::bits_float(0x3F808001u)) == 0x3F81);
  CHECK((ops::to_bf16_bits(std::nanf("")) & 0x7F80) == 0x7F80);
  CounterRng rng(2, 0, 0, RngOp::user);
  for (int i = 0; i < 200000; ++i) {
    const float f = ops::bits_float(rng.next_u32());
    if (!std::isfinite(f) || std::fabs(f) > 3.38e38f) continue;  // NaN, or rounding towards infinity
    // The nearer of the two bf16 values around f, ties to the even one.
    const auto lo = static_cast<std::uint16_t>(ops::float_bits(f) >> 16);
    const double a = std::fabs(double(f) - ops::bf16_to_float(lo));
    const double b = std::fabs(double(f) - ops::bf16_to_float(static_cast<std::uint16_t>(lo + 1)));
    const std::uint16_t nearest = a < b ? lo : (b < a ? std::uint16_t(lo + 1) : std::uint16_t(lo + (lo & 1)));
    REQUIRE(ops::to_bf16_bits(f) == nearest);
  }
}
