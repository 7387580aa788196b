#pragma once
/// @file
/// GaussianBlur's pass over a whole image on the CPU: the bits of `pixel::GaussianBlur::apply` (the
/// reference, one pixel at a time), in an order the compiler vectorises. Each output value is
/// still one chain of fused multiply-adds over the kernel's rows, each row left to right, with
/// the same weights; only the outputs are computed side by side, a row at a time, from the input
/// rows converted to float and reflect-padded once. A 23-tap kernel on a 224 x 224 image is 80
/// million multiply-adds: one at a time through the per-pixel function they cost 160 ms.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/gaussian_blur.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace ops::cpu {

/// The float rows a blur pass reuses across samples.
struct BlurBuffers {
  std::vector<float> rows;  ///< the input, planar, each row reflect-padded by the kernel's used half width
  std::vector<float> acc;   ///< one output row, planar
};

namespace detail {
/// `acc[x] = fma(in[x], w, acc[x])` for x in [0, n): the one loop that runs the taps.
CONVEYOR_CPU_CLONES inline void fma_row(const float* __restrict in, float w, float* __restrict acc, int n) noexcept {
  for (int x = 0; x < n; ++x) acc[x] = std::fma(in[x], w, acc[x]);
}
}  // namespace detail

/// `op` (prepared as `p`) over `src`, `width` x `height` interleaved RGB, into `dst` (not `src`).
inline void gaussian_blur_image(const pixel::PixelOp& op, const pixel::GaussianBlur::Prepared& p,
                                const std::uint8_t* src, int width, int height, std::uint8_t* dst, BlurBuffers& b) {
  using pixel::detail::reflect;
  using std::size_t;
  const int rx = op.i[0] / 2, ry = op.i[1] / 2;
  const int xf = p.x_first, yf = p.y_first;
  const int kxe = op.i[0] - 2 * xf, kye = op.i[1] - 2 * yf;  // the taps with a non-zero weight
  const int left = rx - xf;
  const auto w = static_cast<size_t>(width), padded = w + static_cast<size_t>(kxe - 1);
  const size_t plane = static_cast<size_t>(height) * padded;
  b.rows.resize(3 * plane);
  b.acc.resize(3 * w);
  for (int y = 0; y < height; ++y) {
    float* row = b.rows.data() + static_cast<size_t>(y) * padded;
    for (size_t t = 0; t < padded; ++t) {
      const std::uint8_t* px = src + (std::int64_t{y} * width + reflect(static_cast<int>(t) - left, width)) * 3;
      for (size_t c = 0; c < 3; ++c) row[c * plane + t] = pixel::to_float(px[c]);
    }
  }
  for (int y = 0; y < height; ++y) {
    std::fill(b.acc.begin(), b.acc.end(), 0.0f);
    for (int i = 0; i < kye; ++i) {
      const float wy = p.y[yf + i];
      const float* line = b.rows.data() + static_cast<size_t>(reflect(y + yf + i - ry, height)) * padded;
      for (int j = 0; j < kxe; ++j) {
        const float weight = exact::mul(wy, p.x[xf + j]);
        for (size_t c = 0; c < 3; ++c) detail::fma_row(line + c * plane + static_cast<size_t>(j), weight, b.acc.data() + c * w, width);
      }
    }
    std::uint8_t* out = dst + std::int64_t{y} * width * 3;
    for (size_t x = 0; x < w; ++x)
      for (size_t c = 0; c < 3; ++c) out[x * 3 + c] = pixel::round_u8(b.acc[c * w + x]);
  }
}

}  // namespace ops::cpu
}  // namespace v0
}  // namespace conveyor
