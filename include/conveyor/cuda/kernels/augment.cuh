#pragma once
/// @file
/// The fused augmentation kernel: one launch per batch turns every sample's decoded region into
/// its output (resample, flip, normalise, convert, store), with the per-pixel functions the CPU
/// backend calls, in the same order, so the bits are the same.
///
/// Each block makes a 32 x 16 tile of one sample. Usually (source scale <= 4 on both axes, the
/// case after DCT-scaled decoding) it runs separably like the CPU: the horizontal pass of every
/// source row the tile needs goes to shared memory once, then each thread combines its rows: about
/// a third of the loads of computing each output pixel's 2-D footprint. Larger scales, whose rows
/// would not fit, take the per-pixel path; both give the same bits.

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

inline constexpr int block_x = 32;  ///< threads across: one output column each
inline constexpr int block_y = 8;   ///< threads down
inline constexpr int tile_rows = 16;  ///< output rows per block: two per thread
/// Filter taps kept per output column/row on the per-pixel path: a source scale up to 32 (taps <= 2 s + 2).
inline constexpr int max_taps = 66;
/// The separable path: source scale up to 4, taps up to 10, and the source rows of 16 output rows.
inline constexpr float separable_scale = 4.0f;
inline constexpr int separable_taps = 12;  ///< taps per column/row kept on the separable path
inline constexpr int separable_rows = 72;  ///< source rows of a tile: 15 s + 2 s + 2 for s = 4, rounded up

namespace detail {

/// Copies one element of `bytes` bytes.
__device__ inline void copy_element(std::byte* dst, const std::byte* src, std::int64_t i, int bytes) {
  switch (bytes) {
    case 1: reinterpret_cast<std::uint8_t*>(dst)[i] = reinterpret_cast<const std::uint8_t*>(src)[i]; break;
    case 2: reinterpret_cast<std::uint16_t*>(dst)[i] = reinterpret_cast<const std::uint16_t*>(src)[i]; break;
    default: reinterpret_cast<std::uint32_t*>(dst)[i] = reinterpret_cast<const std::uint32_t*>(src)[i]; break;
  }
}

/// Shared memory, used by one path or the other (one block runs one path: it is uniform per sample).
struct SeparableShared {
  ops::AxisTaps taps_x[block_x];
  ops::AxisTaps taps_y[tile_rows];
  float weights_x[block_x * separable_taps];
  float weights_y[tile_rows * separable_taps];
  float rows[separable_rows * block_x * 3];  // horizontal sums of the tile's source rows
};
struct DirectShared {
  ops::AxisTaps taps_x[block_x];
  ops::AxisTaps taps_y[tile_rows];
  float weights_x[block_x * max_taps];
  float weights_y[tile_rows * max_taps];
};
inline constexpr std::size_t shared_bytes =
    sizeof(SeparableShared) > sizeof(DirectShared) ? sizeof(SeparableShared) : sizeof(DirectShared);

/// Threads of row 0 compute the column taps, threads of row 1 the row taps, `stride` weights apart.
__device__ inline void compute_taps(const ops::SamplePlan& p, int ox, int tile_y0, ops::AxisTaps* taps_x,
                                    ops::AxisTaps* taps_y, float* weights_x, float* weights_y, int stride) {
  if (threadIdx.y == 0) {
    const ops::AxisTaps t = ox < p.out_width ? ops::axis_taps(p.x, ox) : ops::AxisTaps{};
    taps_x[threadIdx.x] = t;
    for (int j = 0; j < t.count; ++j) weights_x[threadIdx.x * stride + j] = ops::tap_weight(t, j);
  } else if (threadIdx.y == 1 && threadIdx.x < tile_rows) {
    const int row = tile_y0 + static_cast<int>(threadIdx.x);
    const ops::AxisTaps t = row < p.out_height ? ops::axis_taps(p.y, row) : ops::AxisTaps{};
    taps_y[threadIdx.x] = t;
    for (int j = 0; j < t.count; ++j) weights_y[threadIdx.x * stride + j] = ops::tap_weight(t, j);
  }
}

__device__ inline void store_pixel(std::byte* out, const ops::SamplePlan& p, const ops::OutputParams& params, int ox,
                                   int oy, const float acc[3]) {
  const int dx = p.flip ? p.out_width - 1 - ox : ox;
  for (int c = 0; c < 3; ++c)
    ops::store(out, ops::element_index(params.layout, c, oy, dx, p.out_height, p.out_width), ops::to_u8(acc[c]), c,
               params);
}

}  // namespace detail

/// grid (tiles across, tiles down, samples), block (block_x, block_y).
__global__ void __launch_bounds__(block_x* block_y)
    augment_batch(const std::byte* __restrict__ arena, const ops::SamplePlan* __restrict__ plans,
                  std::byte* __restrict__ out, std::size_t sample_bytes, ops::OutputParams params) {
  // Raw storage: __shared__ variables cannot have constructors, and AxisTaps has member defaults.
  __shared__ alignas(16) unsigned char shared[detail::shared_bytes];

  const ops::SamplePlan p = plans[blockIdx.z];
  const int ox = static_cast<int>(blockIdx.x) * block_x + static_cast<int>(threadIdx.x);
  const int tile_y0 = static_cast<int>(blockIdx.y) * tile_rows;
  std::byte* sample_out = out + blockIdx.z * sample_bytes;
  const auto* src = reinterpret_cast<const std::uint8_t*>(arena + p.src.offset);

  if (p.precomputed) {  // finished on the CPU: copy it (uniform per block, so no barrier is skipped)
    const int esize = static_cast<int>(dtype_size(params.dtype));
    for (int k = 0; k < tile_rows / block_y; ++k) {
      const int oy = tile_y0 + static_cast<int>(threadIdx.y) + k * block_y;
      if (ox < p.out_width && oy < p.out_height)
        for (int c = 0; c < 3; ++c)
          detail::copy_element(sample_out, arena + p.src.offset,
                               ops::element_index(params.layout, c, oy, ox, p.out_height, p.out_width), esize);
    }
    return;
  }

  if (p.x.scale <= separable_scale && p.y.scale <= separable_scale) {
    auto& s = *reinterpret_cast<detail::SeparableShared*>(shared);
    detail::compute_taps(p, ox, tile_y0, s.taps_x, s.taps_y, s.weights_x, s.weights_y, separable_taps);
    __syncthreads();
    // The source rows (relative to src_begin) any of the tile's output rows reads.
    int lo = 1 << 30, hi = 0;
    for (int t = 0; t < tile_rows; ++t)
      if (s.taps_y[t].count > 0) {
        lo = min(lo, s.taps_y[t].first);
        hi = max(hi, s.taps_y[t].first + s.taps_y[t].count);
      }
    const int rows = hi > lo ? hi - lo : 0;
    // Horizontal pass: warps take whole source rows, 32 consecutive columns each.
    const ops::AxisTaps tx = s.taps_x[threadIdx.x];
    const std::uint8_t* column = src + std::int64_t{p.x.src_begin + tx.first} * p.src.x_stride;
    for (int r = static_cast<int>(threadIdx.y); r < rows; r += block_y)
      ops::row_sum(column + std::int64_t{p.y.src_begin + lo + r} * p.src.y_stride, p.src.x_stride, tx.count,
                   s.weights_x + threadIdx.x * separable_taps, s.rows + (r * block_x + threadIdx.x) * 3);
    __syncthreads();
    if (ox >= p.out_width) return;
    for (int k = 0; k < tile_rows / block_y; ++k) {
      const int t = static_cast<int>(threadIdx.y) + k * block_y;
      const int oy = tile_y0 + t;
      if (oy >= p.out_height) break;
      const ops::AxisTaps ty = s.taps_y[t];
      const float* wy = s.weights_y + t * separable_taps;
      float acc[3] = {0.0f, 0.0f, 0.0f};
      for (int j = 0; j < ty.count; ++j) {
        const float* rgb = s.rows + ((ty.first + j - lo) * block_x + threadIdx.x) * 3;
        for (int c = 0; c < 3; ++c) acc[c] = fmaf(wy[j], rgb[c], acc[c]);
      }
      detail::store_pixel(sample_out, p, params, ox, oy, acc);
    }
    return;
  }

  // Per-pixel path: each output pixel filters its own rows.
  auto& s = *reinterpret_cast<detail::DirectShared*>(shared);
  detail::compute_taps(p, ox, tile_y0, s.taps_x, s.taps_y, s.weights_x, s.weights_y, max_taps);
  __syncthreads();
  if (ox >= p.out_width) return;
  const ops::AxisTaps tx = s.taps_x[threadIdx.x];
  const float* wx = s.weights_x + threadIdx.x * max_taps;
  const std::uint8_t* column = src + std::int64_t{p.x.src_begin + tx.first} * p.src.x_stride;
  for (int k = 0; k < tile_rows / block_y; ++k) {
    const int t = static_cast<int>(threadIdx.y) + k * block_y;
    const int oy = tile_y0 + t;
    if (oy >= p.out_height) break;
    const ops::AxisTaps ty = s.taps_y[t];
    const float* wy = s.weights_y + t * max_taps;
    float acc[3] = {0.0f, 0.0f, 0.0f};
    for (int j = 0; j < ty.count; ++j) {
      float rgb[3];
      ops::row_sum(column + std::int64_t{p.y.src_begin + ty.first + j} * p.src.y_stride, p.src.x_stride, tx.count, wx,
                   rgb);
      for (int c = 0; c < 3; ++c) acc[c] = fmaf(wy[j], rgb[c], acc[c]);
    }
    detail::store_pixel(sample_out, p, params, ox, oy, acc);
  }
}

/// Launches `augment_batch` for `count` samples of `out_width` x `out_height` on `stream`.
/// @throws CudaError when the launch fails.
inline void launch_augment(const std::byte* arena, const ops::SamplePlan* plans, std::byte* out, std::size_t count,
                           std::size_t sample_bytes, const ops::OutputParams& params, int out_width, int out_height,
                           cudaStream_t stream) {
  const dim3 block(block_x, block_y);
  const dim3 grid(static_cast<unsigned>((out_width + block_x - 1) / block_x),
                  static_cast<unsigned>((out_height + tile_rows - 1) / tile_rows), static_cast<unsigned>(count));
  augment_batch<<<grid, block, 0, stream>>>(arena, plans, out, sample_bytes, params);
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
