// A plan's flips: the resampler's store mirrors the output's columns (`flip`), rows (`flip_y`) or
// both, in every dtype and layout, and nothing else changes.

#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/ops/pixel/flip.hpp>
#include <conveyor/ops/plan.hpp>

#include "support/images.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace conveyor;

TEST_CASE("a plan's flips mirror the output's columns, rows or both, in every dtype and layout", "[ops][resample][flip]") {
  const int w = 57, h = 41, ow = 23, oh = 17;
  const auto img = conveyor_test::random_image(w, h, 3, 7);
  ops::SamplePlan p;
  p.src = {0, 3, w * 3, w, h};
  p.out_width = ow;
  p.out_height = oh;
  p.x = {0.25, 40.0 / ow, 0, ow, 9, 49};
  p.y = {0.0, 33.0 / oh, 0, oh, 3, 36};
  ops::cpu::ResampleScratch scratch;
  for (const DType dtype : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (const Layout layout : {Layout::NCHW, Layout::NHWC}) {
      ops::OutputParams params;
      params.dtype = dtype;
      params.layout = layout;
      const std::size_t size = dtype_size(dtype);
      const auto run = [&](int flip_x, int flip_y) {
        ops::SamplePlan q = p;
        q.flip = flip_x;
        q.flip_y = flip_y;
        std::vector<std::byte> out(std::size_t(ow) * oh * 3 * size);
        ops::cpu::resample(img.data(), q, params, out.data(), scratch);
        return out;
      };
      const auto upright = run(0, 0);
      for (int fx = 0; fx < 2; ++fx)
        for (int fy = 0; fy < 2; ++fy) {
          INFO("dtype " << to_string(dtype) << ", layout " << to_string(layout) << ", flips " << fx << fy);
          const auto flipped = run(fx, fy);
          for (int y = 0; y < oh; ++y)
            for (int x = 0; x < ow; ++x)
              for (int c = 0; c < 3; ++c) {
                const int sx = fx ? ow - 1 - x : x, sy = fy ? oh - 1 - y : y;
                const auto at = [&](int px, int py) {
                  return std::size_t(ops::element_index(layout, c, py, px, oh, ow)) * size;
                };
                REQUIRE(std::memcmp(flipped.data() + at(x, y), upright.data() + at(sx, sy), size) == 0);
              }
        }
    }
}

TEST_CASE("a flip folded into the plan and a flip op after resampling give the same image", "[ops][resample][flip]") {
  const int w = 64, h = 48, ow = 31, oh = 26;
  const auto img = conveyor_test::random_image(w, h, 3, 8);
  ops::SamplePlan p;
  p.src = {0, 3, w * 3, w, h};
  p.out_width = ow;
  p.out_height = oh;
  p.x = {0.0, 50.0 / ow, 0, ow, 7, 57};
  p.y = {0.0, 40.0 / oh, 0, oh, 2, 42};
  ops::OutputParams u8;
  u8.dtype = DType::u8;
  u8.layout = Layout::NHWC;
  ops::cpu::ResampleScratch scratch;
  ops::cpu::PixelScratch pixel_scratch;
  const auto resampled = [&](int flip_x, int flip_y) {
    ops::SamplePlan q = p;
    q.flip = flip_x;
    q.flip_y = flip_y;
    std::vector<std::uint8_t> out(std::size_t(ow) * oh * 3);
    ops::cpu::resample(img.data(), q, u8, out.data(), scratch);
    return out;
  };
  for (const bool vertical : {false, true}) {
    auto image = resampled(0, 0);
    ops::pixel::PixelProgram program;
    ops::pixel::append(program, vertical ? ops::pixel::vertical_flip() : ops::pixel::horizontal_flip());
    ops::cpu::apply_pixel_ops(program, image.data(), ow, oh, pixel_scratch);
    CHECK(image == resampled(vertical ? 0 : 1, vertical ? 1 : 0));
  }
}
