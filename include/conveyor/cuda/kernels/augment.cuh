#pragma once
/// @file
/// The fused augmentation kernel: one launch per batch turns every sample's decoded region into
/// its output (resample, flip, normalise, convert, store), with the per-pixel functions the CPU
/// backend calls, in the same order, so the bits are the same.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment.cuh needs a CUDA compiler"
#endif

#include <conveyor/cuda/error.hpp>
#include <conveyor/ops/convert.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/resample.hpp>

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

/// Output tile of one block: 32 columns x 8 rows, one thread per output pixel.
inline constexpr int tile_x = 32;
inline constexpr int tile_y = 8;
/// Filter taps kept per output column/row: enough for a source scale of 32 (taps <= 2 s + 2).
inline constexpr int max_taps = 66;

/// Copies one element of `bytes` bytes.
__device__ inline void copy_element(std::byte* dst, const std::byte* src, std::int64_t i, int bytes) {
  switch (bytes) {
    case 1: reinterpret_cast<std::uint8_t*>(dst)[i] = reinterpret_cast<const std::uint8_t*>(src)[i]; break;
    case 2: reinterpret_cast<std::uint16_t*>(dst)[i] = reinterpret_cast<const std::uint16_t*>(src)[i]; break;
    default: reinterpret_cast<std::uint32_t*>(dst)[i] = reinterpret_cast<const std::uint32_t*>(src)[i]; break;
  }
}

/// grid (tiles across, tiles down, samples), block (tile_x, tile_y).
__global__ void __launch_bounds__(tile_x* tile_y)
    augment_batch(const std::byte* __restrict__ arena, const ops::SamplePlan* __restrict__ plans,
                  std::byte* __restrict__ out, std::size_t sample_bytes, ops::OutputParams params) {
  // Raw storage: __shared__ variables cannot have constructors, and AxisTaps has member defaults.
  __shared__ alignas(ops::AxisTaps) unsigned char taps_storage[(tile_x + tile_y) * sizeof(ops::AxisTaps)];
  __shared__ float weights_x[tile_x * max_taps];
  __shared__ float weights_y[tile_y * max_taps];
  auto* taps_x = reinterpret_cast<ops::AxisTaps*>(taps_storage);
  auto* taps_y = taps_x + tile_x;

  const ops::SamplePlan& p = plans[blockIdx.z];
  const int ox = static_cast<int>(blockIdx.x) * tile_x + static_cast<int>(threadIdx.x);
  const int oy = static_cast<int>(blockIdx.y) * tile_y + static_cast<int>(threadIdx.y);
  const int ow = p.out_width, oh = p.out_height;
  std::byte* sample_out = out + blockIdx.z * sample_bytes;
  const int esize = static_cast<int>(dtype_size(params.dtype));

  if (p.precomputed) {  // finished on the CPU: copy it (uniform per block, so no barrier is skipped)
    if (ox < ow && oy < oh)
      for (int c = 0; c < 3; ++c)
        copy_element(sample_out, arena + p.src.offset, ops::element_index(params.layout, c, oy, ox, oh, ow), esize);
    return;
  }

  // Row 0 of the block computes the column taps, row 1 the row taps; all read them after the barrier.
  if (threadIdx.y == 0) {
    const ops::AxisTaps t = ox < ow ? ops::axis_taps(p.x, ox) : ops::AxisTaps{};
    taps_x[threadIdx.x] = t;
    for (int j = 0; j < t.count; ++j) weights_x[threadIdx.x * max_taps + j] = ops::tap_weight(t, j);
  } else if (threadIdx.y == 1 && threadIdx.x < tile_y) {
    const int row = static_cast<int>(blockIdx.y) * tile_y + static_cast<int>(threadIdx.x);
    const ops::AxisTaps t = row < oh ? ops::axis_taps(p.y, row) : ops::AxisTaps{};
    taps_y[threadIdx.x] = t;
    for (int j = 0; j < t.count; ++j) weights_y[threadIdx.x * max_taps + j] = ops::tap_weight(t, j);
  }
  __syncthreads();
  if (ox >= ow || oy >= oh) return;

  const ops::AxisTaps tx = taps_x[threadIdx.x];
  const ops::AxisTaps ty = taps_y[threadIdx.y];
  const float* wx = weights_x + threadIdx.x * max_taps;
  const float* wy = weights_y + threadIdx.y * max_taps;
  const auto* base = reinterpret_cast<const std::uint8_t*>(arena + p.src.offset) +
                     std::int64_t{p.x.src_begin + tx.first} * p.src.x_stride;
  float acc[3] = {0.0f, 0.0f, 0.0f};
  for (int j = 0; j < ty.count; ++j) {
    float rgb[3];
    ops::row_sum(base + std::int64_t{p.y.src_begin + ty.first + j} * p.src.y_stride, p.src.x_stride, tx.count, wx, rgb);
    for (int c = 0; c < 3; ++c) acc[c] = fmaf(wy[j], rgb[c], acc[c]);
  }
  const int dx = p.flip ? ow - 1 - ox : ox;
  for (int c = 0; c < 3; ++c)
    ops::store(sample_out, ops::element_index(params.layout, c, oy, dx, oh, ow), ops::to_u8(acc[c]), c, params);
}

/// Launches `augment_batch` for `count` samples of `out_width` x `out_height` on `stream`.
/// @throws CudaError when the launch fails.
inline void launch_augment(const std::byte* arena, const ops::SamplePlan* plans, std::byte* out, std::size_t count,
                           std::size_t sample_bytes, const ops::OutputParams& params, int out_width, int out_height,
                           cudaStream_t stream) {
  const dim3 block(tile_x, tile_y);
  const dim3 grid(static_cast<unsigned>((out_width + tile_x - 1) / tile_x),
                  static_cast<unsigned>((out_height + tile_y - 1) / tile_y), static_cast<unsigned>(count));
  augment_batch<<<grid, block, 0, stream>>>(arena, plans, out, sample_bytes, params);
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
