#pragma once
/// @file
/// GaussianBlur by tiles: the arithmetic of the GPU pass (`cuda/kernels/pixel_gaussian_blur.cuh`),
/// as functions either side can run, so that the CPU tests hold its indexing to the per-pixel
/// reference (`GaussianBlur::apply`) and the kernel adds only the threads and barriers.
///
/// A 23-tap kernel is 529 multiply-adds per value; per pixel from global memory they cost 8-9 ms a
/// batch of 256 at 224 x 224 on an H200, the whole batch period. By tiles, each channel of a tile
/// of the image is converted to float once, reflect-padded, into shared memory; each worker runs
/// 8 neighbouring outputs of one row, each still one chain of fused multiply-adds over the
/// kernel's rows, left to right, with the reference's weights, keeping 16 inputs in registers so
/// that every load serves 8 taps. Taps past the kernel's end, added to round a row up to 8, have
/// weight 0: fma(v, 0, acc) is acc for the finite v a tile holds.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/gaussian_blur.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// Output columns of a tile; each worker computes 8 of them.
inline constexpr int blur_tile_width = 32;
/// Floats a tile may hold: 40 KiB, so the kernel needs no opt-in beyond 48 KiB of shared memory.
inline constexpr int blur_tile_floats = 10240;
/// The weights across, rounded up to 8 taps with zeros.
inline constexpr int blur_weights = max_blur_kernel + 8;
/// Output rows a tile holds at most.
inline constexpr int blur_most_rows = 64;

/// Where one image's tiles lie for one kernel.
struct BlurTiling {
  int kxe = 0, kye = 0;    ///< the taps with a non-zero weight, across and down
  int xf = 0, yf = 0;      ///< the first of them
  int stride = 0;          ///< floats a tile row: outputs, their inputs, the rounding's, +1 (odd strides spread the banks)
  int rows = 0;            ///< output rows a tile: the image's rows in bands of equal height
  int left = 0, top = 0;   ///< the first input of a tile, before its first output
  [[nodiscard]] CONVEYOR_HD int tile_rows() const noexcept { return rows + kye - 1; }
  [[nodiscard]] CONVEYOR_HD int tile_floats() const noexcept { return tile_rows() * stride; }
  /// Work items a tile: 8 outputs of one row each.
  [[nodiscard]] CONVEYOR_HD int items() const noexcept { return rows * (blur_tile_width / 8); }
};

/// The tiling of `op` (prepared as `p`) over an image `height` rows high.
[[nodiscard]] CONVEYOR_HD inline BlurTiling blur_tiling(const PixelOp& op, const GaussianBlur::Prepared& p,
                                                       int height) noexcept {
  BlurTiling t;
  t.xf = p.x_first;
  t.yf = p.y_first;
  t.kxe = op.i[0] - 2 * t.xf;
  t.kye = op.i[1] - 2 * t.yf;
  t.stride = blur_tile_width + (t.kxe + 7) / 8 * 8 + 1;
  const int fit = blur_tile_floats / t.stride - (t.kye - 1);  // >= 43 for a 63 x 63 kernel
  const int most = fit < blur_most_rows ? fit : blur_most_rows;
  const int bands = (height + most - 1) / most;
  t.rows = (height + bands - 1) / bands;
  t.left = op.i[0] / 2 - t.xf;
  t.top = op.i[1] / 2 - t.yf;
  return t;
}

/// The weight across of tap `j` (0 past the kernel's end).
[[nodiscard]] CONVEYOR_HD inline float blur_across(const BlurTiling& t, const GaussianBlur::Prepared& p, int j) noexcept {
  return j < t.kxe ? p.x[t.xf + j] : 0.0f;
}

/// Element `e` of channel `c`'s tile whose first output is (x0, y0), from `src` (`width` x
/// `height` interleaved RGB). Inputs no output reads (past the image's last output) are clamped:
/// finite, unused.
[[nodiscard]] CONVEYOR_HD inline float blur_tile_value(const BlurTiling& t, const std::uint8_t* src, int width,
                                                      int height, int x0, int y0, int c, int e) noexcept {
  const int r = e / t.stride, k = e % t.stride;
  int yy = y0 + r - t.top, xx = x0 + k - t.left;
  yy = yy > height - 1 + t.top ? height - 1 : yy;
  xx = xx > width - 1 + t.left ? width - 1 : xx;
  return to_float(src[(std::int64_t{detail::reflect(yy, height)} * width + detail::reflect(xx, width)) * 3 + c]);
}

/// Work item `item` of channel `c`'s tile at (x0, y0): up to 8 outputs of one row into `dst`
/// (interleaved RGB, the image's size), from the tile and the weights across (`blur_weights` of
/// them, `blur_across`'s).
CONVEYOR_HD inline void blur_tile_item(const BlurTiling& t, const GaussianBlur::Prepared& p, const float* tile,
                                       const float* across, int width, int height, int x0, int y0, int c, int item,
                                       std::uint8_t* dst) noexcept {
  const int r = item / (blur_tile_width / 8), xo = item % (blur_tile_width / 8) * 8;
  const int y = y0 + r;
  if (y >= height || x0 + xo >= width) return;
  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  for (int i = 0; i < t.kye; ++i) {
    const float wy = p.y[t.yf + i];
    const float* line = tile + (r + i) * t.stride + xo;
    float v[16];
    CONVEYOR_UNROLL
    for (int o = 0; o < 8; ++o) v[o] = line[o];
    for (int j = 0; j < t.kxe; j += 8) {
      CONVEYOR_UNROLL
      for (int o = 0; o < 8; ++o) v[8 + o] = line[j + 8 + o];
      CONVEYOR_UNROLL
      for (int jj = 0; jj < 8; ++jj) {
        const float w = exact::mul(wy, across[j + jj]);
        CONVEYOR_UNROLL
        for (int o = 0; o < 8; ++o) acc[o] = exact::fma(v[o + jj], w, acc[o]);
      }
      CONVEYOR_UNROLL
      for (int o = 0; o < 8; ++o) v[o] = v[8 + o];
    }
  }
  std::uint8_t* out = dst + (std::int64_t{y} * width + x0 + xo) * 3 + c;
  CONVEYOR_UNROLL
  for (int o = 0; o < 8; ++o)
    if (x0 + xo + o < width) out[o * 3] = round_u8(acc[o]);
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor
