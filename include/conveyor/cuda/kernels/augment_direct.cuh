#pragma once
/// @file
/// The fused augmentation kernel's per-pixel path (`augment.cuh`), for windows wider than the
/// general path's (`general_taps`), with any filter (signed or 22-bit weights, 32-bit
/// multiply-adds): each tile lays out its own windows, and each output pixel filters its own rows,
/// or its own columns first where Pillow would (`ops::vertical_first`).

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment_direct.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/tensor.hpp>
#include <conveyor/cuda/kernels/augment_layout.cuh>
#include <conveyor/cuda/kernels/augment_store.cuh>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/resample.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

namespace detail {

/// Shared memory of a per-pixel tile: the windows of its columns and rows, laid out by the tile.
struct DirectShared {
  std::uint32_t weights_x[max_taps * block_x];  // tap j of column x at j * block_x + x
  std::uint32_t weights_y[tile_rows * max_taps];
  int start_x[block_x], start_y[tile_rows];
  TapWindows wx, wy;
};

/// Warps 0-3 lay out the tile's column windows, warps 4-7 its row windows, each warp of a group
/// every fourth tap's weights (so the block waits for a quarter of each pixel's divisions), then
/// the block syncs.
__device__ inline void tile_taps(const ops::SamplePlan& p, int precision_x, int precision_y, int tile_y0,
                                DirectShared& s) {
  static_assert(block_y == 8 && tile_rows % block_x == 0, "two groups of four warps, whole warps of rows");
  const int warp = static_cast<int>(threadIdx.y), part = warp % 4;
  if (warp < 4) {
    const int x0 = static_cast<int>(blockIdx.x) * block_x;
    const TapWindows w =
        uniform_taps<1, false>(p.x, precision_x, x0, p.out_width, s.start_x, s.weights_x, block_x, 1, part, 4);
    if (warp == 0 && threadIdx.x == 0) s.wx = w;
  } else {
    const TapWindows w = uniform_taps<tile_rows / block_x, false>(p.y, precision_y, tile_y0, p.out_height, s.start_y,
                                                                  s.weights_y, 1, max_taps, part, 4);
    if (warp == 4 && threadIdx.x == 0) s.wy = w;
  }
  __syncthreads();
}

/// One output pixel's two passes, as the CPU's loops make them: the inner pass over `inner` taps
/// (weights `wi`, `wi_step` apart, sources `di` bytes apart) rounded to a byte for each of the
/// `outer` taps (weights `wo`, sources `do_` bytes apart), then the outer pass rounded again. Rows
/// first, inner is the horizontal pass; columns first, the vertical one. The weights are signed.
__device__ __forceinline__ void two_passes(const std::uint8_t* q, const std::uint32_t* wi, int wi_step, int inner,
                                           std::int64_t di, int pi, const std::uint32_t* wo, int wo_step, int outer,
                                           std::int64_t do_, int po, std::uint32_t (&v)[1][3]) {
  std::int32_t acc[3];
  acc[0] = acc[1] = acc[2] = ops::fixed_half(po);
  for (int j = 0; j < outer; ++j, q += do_) {
    std::int32_t a[3];
    a[0] = a[1] = a[2] = ops::fixed_half(pi);
    for (int i = 0; i < inner; ++i)
#pragma unroll
      for (int c = 0; c < 3; ++c) a[c] += static_cast<std::int32_t>(wi[i * wi_step]) * q[i * di + c];
#pragma unroll
    for (int c = 0; c < 3; ++c) acc[c] += static_cast<std::int32_t>(wo[j * wo_step]) * ops::fixed_to_u8(a[c], pi);
  }
#pragma unroll
  for (int c = 0; c < 3; ++c) v[0][c] = output_start | std::uint32_t{ops::fixed_to_u8(acc[c], po)} << pass_shift;
}

/// The per-pixel path: each output pixel filters its own rows (or columns), as the CPU's loops do
/// (up to 66 taps an axis: the sums clamp).
template <DType D, Layout L>
__device__ __noinline__ void direct_tile(const ops::SamplePlan& p, const SampleHeader& h, const std::uint8_t* src,
                            std::byte* out, const ops::OutputParams& params, int ox, int tile_y0, DirectShared& s) {
  const int px = h.precision_x, py = h.precision_y;
  tile_taps(p, px, py, tile_y0, s);
  if (ox >= p.out_width) return;
  const int tx = s.wx.taps, ty = s.wy.taps;
  const std::int64_t xs = p.src.x_stride, ys = p.src.y_stride;
  const std::uint32_t* wx = s.weights_x + threadIdx.x;
  const std::uint8_t* column = src + std::int64_t{p.x.src_begin + s.start_x[threadIdx.x]} * xs;
  const bool columns_first = ops::vertical_first(p);  // uniform per sample
  output_columns<1, D, L>(h, params, out, ox, static_cast<int>(threadIdx.y), tile_y0, [&](int t, std::uint32_t (&v)[1][3]) {
    const std::uint32_t* wy = s.weights_y + t * max_taps;
    const std::uint8_t* q = column + std::int64_t{p.y.src_begin + s.start_y[t]} * ys;
    if (columns_first) two_passes(q, wy, 1, ty, ys, py, wx, block_x, tx, xs, px, v);
    else two_passes(q, wx, block_x, tx, xs, px, wy, 1, ty, ys, py, v);
  });
}

}  // namespace detail

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
