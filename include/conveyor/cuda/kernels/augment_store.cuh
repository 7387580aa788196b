#pragma once
/// @file
/// The fused augmentation kernel's store (`augment.cuh`): output sums normalised, converted to
/// the dtype and written in the layout, mirrored where the plan flips, with vector stores where
/// pixels lie side by side.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment_store.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/tensor.hpp>
#include <conveyor/cuda/kernels/augment_layout.cuh>
#include <conveyor/ops/normalize.hpp>

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

namespace detail {

/// `ops::normalized` of the byte of output sum `v` (see `output_start`) of channel `c`: one `fmaf`,
/// or torchvision's three roundings where the params carry a divisor (a compiled Compose's Normalize).
__device__ __forceinline__ float normalized_sum(const ops::OutputParams& params, int c, std::uint32_t v) {
  const float x = sum_float(v);
  if (params.divisor[c] != 0.0f) return ops::torchvision_normalized(x, c, params);
  return fmaf(x, params.scale[c], params.bias[c]);
}

/// `ops::store` of a pixel's three output sums (see `output_start`) at element `i` (channel 0) of a
/// sample, channels `channel_step` elements apart; dtype and layout are compile-time. f16 and
/// bf16 use the hardware's round-to-nearest-even conversions: for finite values, which these
/// are, they give `ops::to_f16_bits` and `ops::to_bf16_bits`.
template <DType D>
__device__ __forceinline__ void store_pixel(std::byte* out, const ops::OutputParams& params, int i, int channel_step,
                                            const std::uint32_t v[3]) {
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const int e = i + c * channel_step;
    if constexpr (D == DType::u8) {
      reinterpret_cast<std::uint8_t*>(out)[e] = static_cast<std::uint8_t>(v[c] >> pass_shift);
    } else {
      const float x = normalized_sum(params, c, v[c]);
      if constexpr (D == DType::f32) reinterpret_cast<float*>(out)[e] = x;
      else if constexpr (D == DType::f16) reinterpret_cast<__half*>(out)[e] = __float2half_rn(x);
      else reinterpret_cast<__nv_bfloat16*>(out)[e] = __float2bfloat16_rn(x);
    }
  }
}

/// `ops::store` of `N` (two or four) values that lie side by side in the output, `v[k]` of channel
/// `c[k]`, from element `e` (a multiple of `N`, so they are an aligned vector): one store.
template <DType D, int N>
__device__ __forceinline__ void store_run(std::byte* out, const ops::OutputParams& params, int e,
                                          const std::uint32_t (&v)[std::size_t(N)], const int (&c)[std::size_t(N)]) {
  static_assert(N == 2 || N == 4, "a pair or four");
  const unsigned at = static_cast<unsigned>(e) / N;
  if constexpr (D == DType::u8) {
    const std::uint32_t first = __byte_perm(v[0], v[1], 0x0062u);  // two bytes (see `pass_shift`)
    if constexpr (N == 2) reinterpret_cast<std::uint16_t*>(out)[at] = static_cast<std::uint16_t>(first);
    else reinterpret_cast<std::uint32_t*>(out)[at] = __byte_perm(first, __byte_perm(v[2], v[3], 0x0062u), 0x5410u);
  } else {
    float x[N];
#pragma unroll
    for (int k = 0; k < N; ++k) x[k] = normalized_sum(params, c[k], v[k]);
    if constexpr (D == DType::f32) {
      if constexpr (N == 2) reinterpret_cast<float2*>(out)[at] = make_float2(x[0], x[1]);
      else reinterpret_cast<float4*>(out)[at] = make_float4(x[0], x[1], x[2], x[3]);
    } else {
      const auto two = [](float a, float b) {  // the bits of a converted pair
        std::uint32_t u;
        if constexpr (D == DType::f16) {
          const __half2 h = __floats2half2_rn(a, b);
          __builtin_memcpy(&u, &h, sizeof u);
        } else {
          const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
          __builtin_memcpy(&u, &h, sizeof u);
        }
        return u;
      };
      if constexpr (N == 2) reinterpret_cast<std::uint32_t*>(out)[at] = two(x[0], x[1]);
      else reinterpret_cast<uint2*>(out)[at] = make_uint2(two(x[0], x[1]), two(x[2], x[3]));
    }
  }
}

/// Stores `N` pixels (three values each) side by side from pixel `pixel` (a multiple of `N`) of a
/// sample whose pixel count is one too, the k-th of them `p[Reverse ? N - 1 - k : k]`: one vector
/// store per channel (NCHW) or three across the pixels' 3 N values (NHWC).
template <DType D, Layout L, int N, bool Reverse>
__device__ __forceinline__ void store_pixels(std::byte* out, const ops::OutputParams& params, int pixel,
                                             int channel_step, const std::uint32_t (&p)[std::size_t(N)][3]) {
  const auto value = [&](int k, int c) { return p[Reverse ? N - 1 - k : k][c]; };
#pragma unroll
  for (int g = 0; g < 3; ++g) {  // a channel (NCHW), or a third of the values (NHWC)
    std::uint32_t v[N];
    int c[N];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const int i = N * g + k;  // NHWC: the i-th value of the run
      v[k] = L == Layout::NCHW ? value(k, g) : value(i / 3, i % 3);
      c[k] = L == Layout::NCHW ? g : i % 3;
    }
    store_run<D, N>(out, params, L == Layout::NCHW ? pixel + g * channel_step : 3 * pixel + N * g, v, c);
  }
}

/// A thread's output pixels of the tile's `Rows` rows from `tile_y0`: `Cols` adjacent columns from
/// `ox` (a multiple of `Cols`), rows `row`, `row + step`, ... where `step` is the rows between a
/// thread's (`Cols * block_y`).
/// `combine(t, v)` sets row `t`'s pixels (three output sums each, see `output_start`), which are
/// then flipped as planned (mirrored columns, rows or both) and stored; where the output width is a multiple of `Cols` the pixels
/// (flipped or not) are an aligned run, stored together.
template <int Cols, DType D, Layout L, int Rows = tile_rows, class Combine>
__device__ __forceinline__ void output_columns(const SampleHeader& h, const ops::OutputParams& params,
                                               std::byte* out, int ox, int row, int tile_y0, Combine&& combine) {
  static_assert(Cols == 1 || Cols == 2 || Cols == 4, "one column, a pair or four");
  constexpr int step = Cols * block_y;
  const int dx = h.flip ? h.out_width - 1 - ox : ox;
  const int channel_step = L == Layout::NCHW ? h.out_width * h.out_height : 1;
  const auto store = [&](int pixel, const std::uint32_t v[3]) {
    store_pixel<D>(out, params, L == Layout::NCHW ? pixel : pixel * 3, channel_step, v);
  };
#pragma unroll
  for (int k = 0; k < Rows / step; ++k) {
    const int t = row + k * step;
    const int oy = tile_y0 + t;
    if (oy >= h.out_height) break;
    std::uint32_t v[Cols][3];
    combine(t, v);
    const int pixel = (h.flip_y ? h.out_height - 1 - oy : oy) * h.out_width + dx;
    if constexpr (Cols == 1) {
      store(pixel, v[0]);
    } else if (h.out_width % Cols == 0) {
      if (h.flip) store_pixels<D, L, Cols, true>(out, params, pixel - (Cols - 1), channel_step, v);
      else store_pixels<D, L, Cols, false>(out, params, pixel, channel_step, v);
    } else {
#pragma unroll
      for (int j = 0; j < Cols; ++j)
        if (ox + j < h.out_width) store(h.flip ? pixel - j : pixel + j, v[j]);
    }
  }
}

}  // namespace detail

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
