#pragma once
/// @file
/// GaussianBlur's pass over a whole image on the CPU: the bits of `pixel::GaussianBlur::apply` (the
/// reference, one pixel at a time), in an order the compiler vectorises. Each output value is
/// still one chain of fused multiply-adds over the kernel's rows, each row left to right, with
/// the same weights; only the outputs are computed side by side, 64 of a row at a time with their
/// sums in registers, from the input rows converted to float and reflect-padded once. A 23-tap
/// kernel on a 224 x 224 image is 80 million multiply-adds: one at a time through the per-pixel
/// function they cost 160 ms.

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
  std::vector<float> rows;           ///< the input, planar, each row reflect-padded by the kernel's used half width
  std::vector<float> weights;        ///< the 2-D kernel's used taps, row by row: wy * wx, as the reference rounds them
  std::vector<const float*> lines;   ///< the input rows one output row reads, one per kernel row
};

namespace detail {
/// Outputs computed together: 8 AVX2 vectors of sums, 8 independent chains of fused multiply-adds
/// (32 gave 4, bound by the FMA latency: 1.45x slower a value).
inline constexpr int blur_block = 64;

/// `blur_block` neighbouring outputs of one plane's row into `out`: for each kernel row `i`, each
/// tap `j` left to right, `acc[o] = fma(lines[i][o + j], weights[i * kxe + j], acc[o])`. The sums
/// stay in registers for all the taps (each load serves one multiply-add, no sum goes to memory).
CONVEYOR_CPU_CLONES inline void blur_block_outputs(const float* const* lines, const float* weights, int kye, int kxe,
                                                   float* __restrict out) noexcept {
  float acc[blur_block] = {};
  for (int i = 0; i < kye; ++i) {
    const float* line = lines[i];
    const float* w = weights + i * kxe;
    for (int j = 0; j < kxe; ++j)
      for (int o = 0; o < blur_block; ++o) acc[o] = std::fma(line[j + o], w[j], acc[o]);
  }
  for (int o = 0; o < blur_block; ++o) out[o] = acc[o];
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
  // a block past a row's end reads into the next row, and past the last into this slack: unused
  b.rows.resize(3 * plane + detail::blur_block);
  b.weights.resize(static_cast<size_t>(kye) * static_cast<size_t>(kxe));
  b.lines.resize(static_cast<size_t>(kye));
  for (int y = 0; y < height; ++y) {
    float* row = b.rows.data() + static_cast<size_t>(y) * padded;
    for (size_t t = 0; t < padded; ++t) {
      const std::uint8_t* px = src + (std::int64_t{y} * width + reflect(static_cast<int>(t) - left, width)) * 3;
      for (size_t c = 0; c < 3; ++c) row[c * plane + t] = pixel::to_float(px[c]);
    }
  }
  for (int i = 0; i < kye; ++i)
    for (int j = 0; j < kxe; ++j)
      b.weights[static_cast<size_t>(i * kxe + j)] = exact::mul(p.y[yf + i], p.x[xf + j]);
  float block[detail::blur_block];
  for (int y = 0; y < height; ++y) {
    std::uint8_t* out = dst + std::int64_t{y} * width * 3;
    for (size_t c = 0; c < 3; ++c) {
      for (int i = 0; i < kye; ++i)
        b.lines[static_cast<size_t>(i)] =
            b.rows.data() + c * plane + static_cast<size_t>(reflect(y + yf + i - ry, height)) * padded;
      for (size_t x0 = 0; x0 < w; x0 += detail::blur_block) {
        detail::blur_block_outputs(b.lines.data(), b.weights.data(), kye, kxe, block);
        const size_t n = std::min<size_t>(detail::blur_block, w - x0);
        for (size_t o = 0; o < n; ++o) out[(x0 + o) * 3 + c] = pixel::round_u8(block[o]);
        for (const float*& line : b.lines) line += detail::blur_block;  // the next block's inputs
      }
    }
  }
}

}  // namespace ops::cpu
}  // namespace v0
}  // namespace conveyor
