#pragma once
/// @file
/// The fused augmentation kernel's general path (`augment.cuh`), for the filters other than the
/// default (signed or 22-bit weights, 32-bit multiply-adds) and for the default one past
/// `separable_scale`, while a filter's half width stays within `general_taps`: each tile lays out
/// its own windows, then, 32 output rows at a time, runs the first pass of every source row (or,
/// where Pillow filters columns first, `ops::vertical_first`, every source column) the rows need
/// into shared memory, rounded to u8, and the second pass from there, as the CPU's loops do. Each
/// rounded first-pass value is made once for the tile instead of once per output pixel (the
/// per-pixel path's cost: bicubic 727 against bilinear's 87 us a batch on an H100).

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment_general.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/tensor.hpp>
#include <conveyor/cuda/kernels/augment_direct.cuh>
#include <conveyor/cuda/kernels/augment_layout.cuh>
#include <conveyor/cuda/kernels/augment_separable.cuh>
#include <conveyor/cuda/kernels/augment_store.cuh>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/resample.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

/// Output rows the general path makes per first pass: one warp's lanes lay out their windows.
inline constexpr int chunk_rows = block_x;

namespace detail {

/// First-pass values a tile keeps: 190 source rows of 32 columns (or 32 rows of 190 columns), as
/// many as fit beside the windows in the separable path's shared memory, so six blocks still fit
/// an SM. A chunk whose windows span more (source scales above about 5.2) is made per pixel.
inline constexpr int general_words = 190 * block_x;

/// Shared memory of a general tile: its column windows, the current chunk's row windows, and the
/// chunk's first-pass values as packed RGB (byte 3 zero).
struct GeneralShared {
  std::uint32_t weights_x[general_taps * block_x];  // tap j of column x at j * block_x + x
  std::uint32_t weights_y[chunk_rows * general_taps];
  int start_x[block_x], start_y[chunk_rows];
  TapWindows wx, wy;
  std::uint32_t values[general_words];
};
static_assert(sizeof(GeneralShared) <= sizeof(SeparableShared), "the kernel's shared memory, and so its occupancy, stays");

/// One pass' sum of `taps` taps (signed weights `w`, `w_step` apart; sources `d` bytes apart from
/// `q`), from half a unit of `precision`, as a packed RGB word of rounded bytes.
__device__ __forceinline__ std::uint32_t first_pass(const std::uint8_t* q, std::int64_t d, const std::uint32_t* w,
                                                     int w_step, int taps, int precision) {
  std::int32_t a[3];
  a[0] = a[1] = a[2] = ops::fixed_half(precision);
  for (int j = 0; j < taps; ++j) {
    const auto weight = static_cast<std::int32_t>(w[j * w_step]);
#pragma unroll
    for (int c = 0; c < 3; ++c) a[c] += weight * q[j * d + c];
  }
  return std::uint32_t{ops::fixed_to_u8(a[0], precision)} | std::uint32_t{ops::fixed_to_u8(a[1], precision)} << 8 |
         std::uint32_t{ops::fixed_to_u8(a[2], precision)} << 16;
}

/// The second pass over packed first-pass values `values` (`v_step` words apart), as the kernel's
/// output sums (see `output_start`).
__device__ __forceinline__ void second_pass(const std::uint32_t* values, int v_step, const std::uint32_t* w,
                                            int w_step, int taps, int precision, std::uint32_t (&v)[1][3]) {
  std::int32_t a[3];
  a[0] = a[1] = a[2] = ops::fixed_half(precision);
  for (int j = 0; j < taps; ++j) {
    const auto weight = static_cast<std::int32_t>(w[j * w_step]);
    const std::uint32_t rgb = values[j * v_step];
#pragma unroll
    for (int c = 0; c < 3; ++c) a[c] += weight * static_cast<std::int32_t>(rgb >> (8 * c) & 0xFFu);
  }
#pragma unroll
  for (int c = 0; c < 3; ++c) v[0][c] = output_start | std::uint32_t{ops::fixed_to_u8(a[c], precision)} << pass_shift;
}

/// The general path for one block's tile. Not inlined (nor is `direct_tile`): in the kernel their
/// registers would spill in the separable path's loops (about 500 bytes against 30 alone).
template <DType D, Layout L>
__device__ __noinline__ void general_tile(const ops::SamplePlan& p, const SampleHeader& h, const std::uint8_t* src,
                             std::byte* out, const ops::OutputParams& params, int ox, int tile_y0, GeneralShared& s) {
  const int warp = static_cast<int>(threadIdx.y), lane = static_cast<int>(threadIdx.x);
  const int px = h.precision_x, py = h.precision_y;
  const std::int64_t xs = p.src.x_stride, ys = p.src.y_stride;
  const bool columns_first = ops::vertical_first(p);  // uniform per sample
  for (int c0 = 0; c0 < tile_rows && tile_y0 + c0 < p.out_height; c0 += chunk_rows) {
    // Windows: the columns' once (warps 0-3, a quarter of the taps each), each chunk's rows (the
    // other warps; all of them after the first chunk, once the previous one is done with them).
    if (c0 > 0) __syncthreads();
    const bool columns = c0 == 0 && warp < 4;
    const int part = c0 == 0 ? warp % 4 : warp, parts = c0 == 0 ? 4 : block_y;
    if (columns) {
      const TapWindows w = uniform_taps<1, false>(p.x, px, static_cast<int>(blockIdx.x) * block_x, p.out_width,
                                                  s.start_x, s.weights_x, block_x, 1, part, parts);
      if (part == 0 && lane == 0) s.wx = w;
    } else {
      const TapWindows w = uniform_taps<1, false>(p.y, py, tile_y0 + c0, p.out_height, s.start_y, s.weights_y, 1,
                                                  general_taps, part, parts);
      if (part == 0 && lane == 0) s.wy = w;
    }
    __syncthreads();
    const TapWindows wx = s.wx, wy = s.wy;
    const std::uint8_t* column = src + std::int64_t{p.x.src_begin + s.start_x[lane]} * xs;
    const std::uint32_t* weights_x = s.weights_x + lane;
    const TapWindows first = columns_first ? wx : wy;
    const int span = first.taps > 0 ? first.hi - first.lo : 0;
    if (span * chunk_rows > general_words) {  // too wide to stage: per pixel, as the direct path
      if (ox < p.out_width)
        output_columns<1, D, L, chunk_rows>(h, params, out, ox, warp, tile_y0 + c0, [&](int t, std::uint32_t (&v)[1][3]) {
          const std::uint32_t* wy_t = s.weights_y + t * general_taps;
          const std::uint8_t* q = column + std::int64_t{p.y.src_begin + s.start_y[t]} * ys;
          if (columns_first) two_passes(q, wy_t, 1, wy.taps, ys, py, weights_x, block_x, wx.taps, xs, px, v);
          else two_passes(q, weights_x, block_x, wx.taps, xs, px, wy_t, 1, wy.taps, ys, py, v);
        });
      continue;
    }
    if (columns_first) {
      // Source columns [wx.lo, wx.hi) of each chunk row, filtered vertically: values[r * span + k].
      const std::uint8_t* corner = src + std::int64_t{p.x.src_begin + wx.lo} * xs;
      for (int r = warp; r < chunk_rows; r += block_y) {
        const std::uint8_t* row = corner + std::int64_t{p.y.src_begin + s.start_y[r]} * ys;
        for (int k = lane; k < span; k += block_x)
          s.values[r * span + k] = first_pass(row + k * xs, ys, s.weights_y + r * general_taps, 1, wy.taps, py);
      }
    } else {
      // Source rows [wy.lo, wy.hi) of each tile column, filtered horizontally: values[k * 32 + x].
      for (int k = warp; k < span; k += block_y)
        s.values[k * block_x + lane] =
            first_pass(column + std::int64_t{p.y.src_begin + wy.lo + k} * ys, xs, weights_x, block_x, wx.taps, px);
    }
    __syncthreads();
    if (ox < p.out_width)
      output_columns<1, D, L, chunk_rows>(h, params, out, ox, warp, tile_y0 + c0, [&](int t, std::uint32_t (&v)[1][3]) {
        if (columns_first)
          second_pass(s.values + t * span + s.start_x[lane] - wx.lo, 1, weights_x, block_x, wx.taps, px, v);
        else
          second_pass(s.values + (s.start_y[t] - wy.lo) * block_x + lane, block_x, s.weights_y + t * general_taps, 1,
                      wy.taps, py, v);
      });
  }
}

}  // namespace detail

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
