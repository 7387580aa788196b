#pragma once
/// @file
/// GaussianBlur's pass for one sample's block of the pixel-program kernel: the tiles of
/// `ops/pixel/gaussian_blur_tiles.hpp` (the bits of `GaussianBlur::apply`, the reference) in
/// shared memory, spread over the block's threads.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/pixel_gaussian_blur.cuh needs a CUDA compiler"
#endif

#include <conveyor/ops/pixel/gaussian_blur.hpp>
#include <conveyor/ops/pixel/gaussian_blur_tiles.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

/// The shared memory the pass uses.
struct BlurShared {
  float tile[ops::pixel::blur_tile_floats];
  float across[ops::pixel::blur_weights];
};

/// `op` (prepared as `p`) over `src`, `width` x `height` interleaved RGB, into `dst`, by the
/// whole block. Ends with a barrier.
__device__ inline void gaussian_blur_block(const ops::pixel::PixelOp& op, const ops::pixel::GaussianBlur::Prepared& p,
                                           const std::uint8_t* src, int width, int height, std::uint8_t* dst,
                                           BlurShared& s) {
  namespace px = ops::pixel;
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const px::BlurTiling t = px::blur_tiling(op, p, height);
  for (int j = tid; j < px::blur_weights; j += threads) s.across[j] = px::blur_across(t, p, j);
  for (int y0 = 0; y0 < height; y0 += t.rows)
    for (int x0 = 0; x0 < width; x0 += px::blur_tile_width)
      for (int c = 0; c < 3; ++c) {
        __syncthreads();  // the previous tile is read (and the weights written)
        for (int e = tid; e < t.tile_floats(); e += threads)
          s.tile[e] = px::blur_tile_value(t, src, width, height, x0, y0, c, e);
        __syncthreads();
        for (int item = tid; item < t.items(); item += threads)
          px::blur_tile_item(t, p, s.tile, s.across, width, height, x0, y0, c, item, dst);
      }
  __syncthreads();
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
