#pragma once
/// @file
/// The fused augmentation kernel: one launch per batch turns every sample's decoded region into
/// its output (resample, flip, normalise, convert, store) with the arithmetic of the CPU backend's
/// per-pixel functions, in the same order, so the bits are the same.
///
/// Each block makes a 32 x 64 tile of one sample. Usually (source scale <= 3.5 on both axes; DCT-
/// scaled decoding leaves at most 2) it runs separably like the CPU: the horizontal pass of every
/// source row the tile needs goes to shared memory once, rounded to u8 as the CPU rounds it, then
/// each thread combines its rows. Larger scales, whose rows would not fit, take the per-pixel path;
/// both give the same bits. Every pixel of a tile gets the same number of taps (see `TapWindows`),
/// so the tap loops unroll with the weights in registers.
///
/// On an H200 the kernel is bound by instruction issue and load latency, not bandwidth (Nsight
/// Compute, 32-row tiles: about 220 instructions per output pixel, issue slots 64 % busy, the
/// largest stall the horizontal pass's loads). Rounding and float-to-integer conversion
/// instructions run on a narrow pipe there, so bytes become floats and floats become rounded bytes
/// through the float format instead (2^23 + b is exact; adding 2^23 rounds to an integer).

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment.cuh needs a CUDA compiler"
#endif

#include <conveyor/cuda/error.hpp>
#include <conveyor/ops/convert.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/resample.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

inline constexpr int block_x = 32;  ///< threads across: one output column each
inline constexpr int block_y = 8;   ///< threads down
inline constexpr int tile_rows = 64;  ///< output rows per block: eight per thread
/// Filter taps kept per output column/row on the per-pixel path: a source scale up to 32 (taps <= 2 s + 2).
inline constexpr int max_taps = 66;
/// The separable path: source scale up to 3.5, so taps up to 8 (2 s + 1), and the 65 s + 2 source
/// rows of 64 output rows (six blocks of them fit an SM).
inline constexpr float separable_scale = 3.5f;
inline constexpr int separable_taps = 8;
inline constexpr int separable_rows = 232;
/// Tap counts up to this get straight-line code (a source scale up to about 2.5, the usual case
/// after DCT-scaled decoding); larger ones loop.
inline constexpr int unrolled_taps = 6;

namespace detail {

inline constexpr float two23 = 8388608.0f;  // 2^23: floats from here to 2^24 are the integers

/// A byte (0..255, zero-extended) as a float, without a conversion instruction: the bits of
/// 2^23 + b, minus 2^23.
__device__ __forceinline__ float byte_float(std::uint32_t b) { return __fsub_rn(__uint_as_float(0x4B000000u | b), two23); }

/// Byte `k` of `w` as a float, the same way (one byte permute builds 2^23 + byte).
__device__ __forceinline__ float word_byte_float(std::uint32_t w, int k) {
  return __fsub_rn(__uint_as_float(__byte_perm(w, 0x4B00u, 0x5440u | static_cast<unsigned>(k))), two23);
}

/// `ops::to_u8(v)` plus 2^23: clamped to [0, 255], then rounded to nearest even by adding 2^23
/// (clamping first gives the same integer: rounding is monotonic and 0 and 255 are integers).
/// Its low byte is the rounded value; minus 2^23 it is that value as a float.
__device__ __forceinline__ float round_u8_biased(float v) { return __fadd_rn(fminf(fmaxf(v, 0.0f), 255.0f), two23); }
__device__ __forceinline__ float unbias(float t) { return __fsub_rn(t, two23); }

/// Three rounded values (biased, as `round_u8_biased` gives them) packed as bytes 0-2 of a word
/// (byte 3 is not read).
__device__ __forceinline__ std::uint32_t pack_rgb(const float a[3]) {
  const float t[3] = {round_u8_biased(a[0]), round_u8_biased(a[1]), round_u8_biased(a[2])};
  const std::uint32_t rg = __byte_perm(__float_as_uint(t[0]), __float_as_uint(t[1]), 0x0040u);
  return __byte_perm(rg, __float_as_uint(t[2]), 0x7410u);
}

/// Every pixel of a tile's axis gets the same number of taps, `taps` (the largest count among
/// them), starting at its own `start` (relative to the axis' src_begin): its own weights where its
/// taps are, zeros elsewhere. A zero-weight tap leaves an `fmaf` chain's value as it was (0 times
/// a byte is +0, and the chains start at +0), so the bits are those of `ops::row_sum`; a count
/// uniform across the block lets the tap loops unroll without predicated-off taps.
struct TapWindows {
  int taps;    ///< per pixel, uniform
  int lo, hi;  ///< source range the windows of pixels with taps cover
};

/// One warp, `N` output pixels per lane (`first + lane + k * 32`, those below `end` in the
/// output) of axis `a`: writes each pixel's window start to `start[i]` and its weights to
/// `weights[j * jstride + i * istride]`, taps j = part, part + parts, ... (`parts` warps share the
/// work). Windows stay inside the source (shifted left at its far edge); pixels without taps
/// (outside the output, or padding) start at the lowest window.
template <int N>
__device__ inline TapWindows uniform_taps(const ops::AxisPlan& a, int first, int end, int* start, float* weights,
                                          int jstride, int istride, int part, int parts) {
  const int lane = static_cast<int>(threadIdx.x);
  ops::AxisTaps t[N];
  int taps = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int o = first + lane + k * block_x;
    t[k] = o < end ? ops::axis_taps(a, o) : ops::AxisTaps{};
    taps = max(taps, t[k].count);
  }
  taps = __reduce_max_sync(0xFFFFFFFFu, taps);
  const int size = a.src_end - a.src_begin;
  int s[N], lo = INT_MAX, hi = INT_MIN;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    s[k] = t[k].first + taps > size ? size - taps : t[k].first;
    if (t[k].count > 0) lo = min(lo, s[k]), hi = max(hi, s[k] + taps);
  }
  lo = __reduce_min_sync(0xFFFFFFFFu, lo);
  hi = __reduce_max_sync(0xFFFFFFFFu, hi);
  if (taps == 0) lo = hi = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int i = lane + k * block_x;
    if (t[k].count == 0) s[k] = lo;
    if (part == 0) start[i] = s[k];
    for (int j = part; j < taps; j += parts) {
      const int q = s[k] + j - t[k].first;
      weights[j * jstride + i * istride] = q >= 0 && q < t[k].count ? ops::tap_weight(t[k], q) : 0.0f;
    }
  }
  return {taps, lo, hi};
}

/// Shared memory of a tile, the separable path's or the per-pixel path's (one block runs one: the
/// path is uniform per sample): the windows of its columns and rows (`Taps`: the most taps per
/// pixel, the weights' row stride), and on the separable path the horizontal sums of the source
/// rows [wy.lo, wy.hi), rounded, as packed RGB.
template <int Taps, int Rows>
struct TileShared {
  static constexpr int taps = Taps;
  float weights_x[Taps * block_x];  // tap j of column x at j * block_x + x
  float weights_y[tile_rows * Taps];
  int start_x[block_x], start_y[tile_rows];
  TapWindows wx, wy;
  std::uint32_t rows[Rows][block_x];
};
using SeparableShared = TileShared<separable_taps, separable_rows>;
using DirectShared = TileShared<max_taps, 1>;
inline constexpr std::size_t shared_bytes = std::max(sizeof(SeparableShared), sizeof(DirectShared));

/// Warps 0-3 lay out the tile's column windows, warps 4-7 its row windows, each warp of a group
/// every fourth tap's weights (so the block waits for a quarter of each pixel's divisions), then
/// the block syncs.
template <class Shared>
__device__ inline void tile_taps(const ops::SamplePlan& p, int tile_y0, Shared& s) {
  static_assert(block_y == 8 && tile_rows % block_x == 0, "two groups of four warps, whole warps of rows");
  const int warp = static_cast<int>(threadIdx.y), part = warp % 4;
  if (warp < 4) {
    const int x0 = static_cast<int>(blockIdx.x) * block_x;
    const TapWindows w = uniform_taps<1>(p.x, x0, p.out_width, s.start_x, s.weights_x, block_x, 1, part, 4);
    if (warp == 0 && threadIdx.x == 0) s.wx = w;
  } else {
    const TapWindows w = uniform_taps<tile_rows / block_x>(p.y, tile_y0, p.out_height, s.start_y, s.weights_y, 1,
                                                           Shared::taps, part, 4);
    if (warp == 4 && threadIdx.x == 0) s.wy = w;
  }
  __syncthreads();
}

/// The horizontal sums (`ops::row_sum`) of `rows` source rows starting at `first` (a column's
/// window start, rows `y_stride` apart), `Taps` taps each with the weights `w` (`block_x` apart),
/// rounded into `out[r][threadIdx.x]`; warps take rows in turn. `Taps` < 0: a loop of `taps`
/// taps. `Step`: the pixel stride when known (3: an upright image), else 0 and `x_stride`.
template <int Taps, int Step>
__device__ __forceinline__ void horizontal_rows(const std::uint8_t* first, std::int64_t x_stride, std::int64_t y_stride,
                                                int taps, const float* w, int rows, std::uint32_t (*out)[block_x]) {
  const std::int64_t step = Step != 0 ? Step : x_stride;
  float wr[Taps > 0 ? Taps : 1];
  if constexpr (Taps > 0) {
#pragma unroll
    for (int j = 0; j < Taps; ++j) wr[j] = w[j * block_x];
  }
  for (int r = static_cast<int>(threadIdx.y); r < rows; r += block_y) {
    const std::uint8_t* q = first + r * y_stride;
    float a[3] = {0.0f, 0.0f, 0.0f};
    if constexpr (Taps > 0) {
#pragma unroll
      for (int j = 0; j < Taps; ++j)
#pragma unroll
        for (int c = 0; c < 3; ++c) a[c] = fmaf(wr[j], byte_float(q[j * step + c]), a[c]);
    } else {
#pragma unroll 2
      for (int j = 0; j < taps; ++j)
#pragma unroll
        for (int c = 0; c < 3; ++c) a[c] = fmaf(w[j * block_x], byte_float(q[j * step + c]), a[c]);
    }
    out[r][threadIdx.x] = pack_rgb(a);
  }
}

/// `horizontal_rows` with the tap count as a compile-time constant where it is small.
template <int Step>
__device__ inline void horizontal_pass(const std::uint8_t* first, std::int64_t x_stride, std::int64_t y_stride,
                                       int taps, const float* w, int rows, std::uint32_t (*out)[block_x]) {
  switch (taps) {
#define CONVEYOR_TAPS_CASE(n) \
  case n: horizontal_rows<n, Step>(first, x_stride, y_stride, taps, w, rows, out); break;
    CONVEYOR_TAPS_CASE(1) CONVEYOR_TAPS_CASE(2) CONVEYOR_TAPS_CASE(3)
    CONVEYOR_TAPS_CASE(4) CONVEYOR_TAPS_CASE(5) CONVEYOR_TAPS_CASE(6)
#undef CONVEYOR_TAPS_CASE
    default: horizontal_rows<-1, Step>(first, x_stride, y_stride, taps, w, rows, out); break;
  }
  static_assert(unrolled_taps == 6, "the cases above unroll up to unrolled_taps");
}

/// `ops::store` of a pixel's three rounded values (biased, see `round_u8_biased`) at element
/// `i` (channel 0) of a sample, channels `channel_step` elements apart; dtype and layout are
/// compile-time. f16 and bf16 use the hardware's round-to-nearest-even conversions: for finite
/// values, which these are, they give `ops::to_f16_bits` and `ops::to_bf16_bits`.
template <DType D>
__device__ __forceinline__ void store_pixel(std::byte* out, const ops::OutputParams& params, int i, int channel_step,
                                            const float v[3]) {
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const int e = i + c * channel_step;
    if constexpr (D == DType::u8) {
      reinterpret_cast<std::uint8_t*>(out)[e] = static_cast<std::uint8_t>(__float_as_uint(v[c]));
    } else {
      const float x = fmaf(unbias(v[c]), params.scale[c], params.bias[c]);
      if constexpr (D == DType::f32) reinterpret_cast<float*>(out)[e] = x;
      else if constexpr (D == DType::f16) reinterpret_cast<__half*>(out)[e] = __float2half_rn(x);
      else reinterpret_cast<__nv_bfloat16*>(out)[e] = __float2bfloat16_rn(x);
    }
  }
}

/// This thread's output rows of the tile (every block_y-th): `combine(t, acc)` sums output row
/// `t`'s vertical taps into `acc`, then the pixel is rounded, flipped as planned and stored.
template <DType D, Layout L, class Combine>
__device__ __forceinline__ void output_rows(const ops::SamplePlan& p, const ops::OutputParams& params, std::byte* out,
                                            int ox, int tile_y0, Combine&& combine) {
  const int dx = p.flip ? p.out_width - 1 - ox : ox;
  const int channel_step = L == Layout::NCHW ? p.out_width * p.out_height : 1;
#pragma unroll
  for (int k = 0; k < tile_rows / block_y; ++k) {
    const int t = static_cast<int>(threadIdx.y) + k * block_y;
    const int oy = tile_y0 + t;
    if (oy >= p.out_height) break;
    float acc[3] = {0.0f, 0.0f, 0.0f};
    combine(t, acc);
    const float v[3] = {round_u8_biased(acc[0]), round_u8_biased(acc[1]), round_u8_biased(acc[2])};
    const int pixel = oy * p.out_width + dx;
    store_pixel<D>(out, params, L == Layout::NCHW ? pixel : pixel * 3, channel_step, v);
  }
}

/// The vertical pass of the separable path: `Taps` taps of the rounded rows per output pixel
/// (< 0: a loop of `taps`).
template <int Taps, DType D, Layout L>
__device__ __forceinline__ void vertical_rows(const ops::SamplePlan& p, const ops::OutputParams& params, std::byte* out,
                                              int ox, int tile_y0, int taps, const SeparableShared& s) {
  output_rows<D, L>(p, params, out, ox, tile_y0, [&](int t, float acc[3]) {
    const float* wy = s.weights_y + t * SeparableShared::taps;
    const std::uint32_t* column = &s.rows[s.start_y[t] - s.wy.lo][threadIdx.x];
    const int n = Taps > 0 ? Taps : taps;
#pragma unroll
    for (int j = 0; j < n; ++j) {
      const std::uint32_t rgb = column[j * block_x];
#pragma unroll
      for (int c = 0; c < 3; ++c) acc[c] = fmaf(wy[j], word_byte_float(rgb, c), acc[c]);
    }
  });
}

/// The separable path, for one block's tile.
template <DType D, Layout L, int Step>
__device__ void separable_tile(const ops::SamplePlan& p, const std::uint8_t* src, std::byte* out,
                               const ops::OutputParams& params, int ox, int tile_y0, SeparableShared& s) {
  tile_taps(p, tile_y0, s);
  const int lo = s.wy.lo, rows = s.wy.taps > 0 ? s.wy.hi - lo : 0;
  // Horizontal pass: warps take whole source rows, 32 consecutive columns each.
  const std::uint8_t* first =
      src + std::int64_t{p.x.src_begin + s.start_x[threadIdx.x]} * p.src.x_stride + std::int64_t{p.y.src_begin + lo} * p.src.y_stride;
  horizontal_pass<Step>(first, p.src.x_stride, p.src.y_stride, s.wx.taps, s.weights_x + threadIdx.x, rows, s.rows);
  __syncthreads();
  if (ox >= p.out_width) return;
  // Vertical pass: each thread combines the rows of its eight output rows.
  switch (s.wy.taps) {
#define CONVEYOR_TAPS_CASE(n) \
  case n: vertical_rows<n, D, L>(p, params, out, ox, tile_y0, n, s); break;
    CONVEYOR_TAPS_CASE(1) CONVEYOR_TAPS_CASE(2) CONVEYOR_TAPS_CASE(3)
    CONVEYOR_TAPS_CASE(4) CONVEYOR_TAPS_CASE(5) CONVEYOR_TAPS_CASE(6)
#undef CONVEYOR_TAPS_CASE
    default: vertical_rows<-1, D, L>(p, params, out, ox, tile_y0, s.wy.taps, s); break;
  }
}

/// The per-pixel path (source scale > 4 on an axis): each output pixel filters its own rows.
template <DType D, Layout L>
__device__ void direct_tile(const ops::SamplePlan& p, const std::uint8_t* src, std::byte* out,
                            const ops::OutputParams& params, int ox, int tile_y0, DirectShared& s) {
  tile_taps(p, tile_y0, s);
  if (ox >= p.out_width) return;
  const int tx = s.wx.taps, ty = s.wy.taps;
  const float* wx = s.weights_x + threadIdx.x;
  const std::uint8_t* column = src + std::int64_t{p.x.src_begin + s.start_x[threadIdx.x]} * p.src.x_stride;
  output_rows<D, L>(p, params, out, ox, tile_y0, [&](int t, float acc[3]) {
    const float* wy = s.weights_y + t * max_taps;
    for (int j = 0; j < ty; ++j) {
      const std::uint8_t* q = column + std::int64_t{p.y.src_begin + s.start_y[t] + j} * p.src.y_stride;
      float a[3] = {0.0f, 0.0f, 0.0f};
      for (int i = 0; i < tx; ++i)
#pragma unroll
        for (int c = 0; c < 3; ++c) a[c] = fmaf(wx[i * block_x], byte_float(q[i * p.src.x_stride + c]), a[c]);
#pragma unroll
      for (int c = 0; c < 3; ++c) acc[c] = fmaf(wy[j], unbias(round_u8_biased(a[c])), acc[c]);
    }
  });
}

/// Copies one element of `bytes` bytes.
__device__ inline void copy_element(std::byte* dst, const std::byte* src, std::int64_t i, int bytes) {
  switch (bytes) {
    case 1: reinterpret_cast<std::uint8_t*>(dst)[i] = reinterpret_cast<const std::uint8_t*>(src)[i]; break;
    case 2: reinterpret_cast<std::uint16_t*>(dst)[i] = reinterpret_cast<const std::uint16_t*>(src)[i]; break;
    default: reinterpret_cast<std::uint32_t*>(dst)[i] = reinterpret_cast<const std::uint32_t*>(src)[i]; break;
  }
}

}  // namespace detail

/// grid (tiles across, tiles down, samples), block (block_x, block_y). Six blocks per SM (40
/// registers, a few values spilled outside the tap loops): on an H200, with 32-row tiles, 135 us a
/// batch against 142 at five blocks (48 registers, no spills) and 158 at four; 64-row tiles, which
/// lay out each tile's taps half as often per pixel, 130.
template <DType D, Layout L>
__global__ void __launch_bounds__(block_x* block_y, 6)
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
    constexpr int esize = static_cast<int>(dtype_size(D));
    for (int k = 0; k < tile_rows / block_y; ++k) {
      const int oy = tile_y0 + static_cast<int>(threadIdx.y) + k * block_y;
      if (ox < p.out_width && oy < p.out_height)
        for (int c = 0; c < 3; ++c)
          detail::copy_element(sample_out, arena + p.src.offset,
                               ops::element_index(L, c, oy, ox, p.out_height, p.out_width), esize);
    }
    return;
  }
  auto& separable = *reinterpret_cast<detail::SeparableShared*>(shared);
  if (p.x.scale <= separable_scale && p.y.scale <= separable_scale) {
    if (p.src.x_stride == 3)  // upright: the pixel step known to the compiler
      detail::separable_tile<D, L, 3>(p, src, sample_out, params, ox, tile_y0, separable);
    else
      detail::separable_tile<D, L, 0>(p, src, sample_out, params, ox, tile_y0, separable);
  } else
    detail::direct_tile<D, L>(p, src, sample_out, params, ox, tile_y0, *reinterpret_cast<detail::DirectShared*>(shared));
}

/// Launches `augment_batch` for `count` samples of `out_width` x `out_height` on `stream`.
/// @throws CudaError when the launch fails.
inline void launch_augment(const std::byte* arena, const ops::SamplePlan* plans, std::byte* out, std::size_t count,
                           std::size_t sample_bytes, const ops::OutputParams& params, int out_width, int out_height,
                           cudaStream_t stream) {
  const dim3 block(block_x, block_y);
  const dim3 grid(static_cast<unsigned>((out_width + block_x - 1) / block_x),
                  static_cast<unsigned>((out_height + tile_rows - 1) / tile_rows), static_cast<unsigned>(count));
  const auto launch = [&]<DType D>() {
    if (params.layout == Layout::NCHW)
      augment_batch<D, Layout::NCHW><<<grid, block, 0, stream>>>(arena, plans, out, sample_bytes, params);
    else
      augment_batch<D, Layout::NHWC><<<grid, block, 0, stream>>>(arena, plans, out, sample_bytes, params);
  };
  switch (params.dtype) {
    case DType::u8: launch.template operator()<DType::u8>(); break;
    case DType::f16: launch.template operator()<DType::f16>(); break;
    case DType::bf16: launch.template operator()<DType::bf16>(); break;
    default: launch.template operator()<DType::f32>(); break;
  }
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
