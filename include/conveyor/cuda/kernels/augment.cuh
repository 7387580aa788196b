#pragma once
/// @file
/// The fused augmentation kernel: one launch per batch turns every sample's decoded region into
/// its output (resample, flip, normalise, convert, store) with the arithmetic of the CPU backend's
/// per-pixel functions, in the same order, so the bits are the same.
///
/// Each block makes a 32 x 32 tile of one sample. Usually (source scale <= 4 on both axes, the
/// case after DCT-scaled decoding) it runs separably like the CPU: the horizontal pass of every
/// source row the tile needs goes to shared memory once, rounded to u8 as the CPU rounds it, then
/// each thread combines its rows. Larger scales, whose rows would not fit, take the per-pixel path;
/// both give the same bits.
///
/// The kernel is bound by instruction issue, not memory (about 360 instructions per output pixel
/// on an H200, three quarters of the issue slots busy). Rounding and float-to-integer conversion
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

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

inline constexpr int block_x = 32;  ///< threads across: one output column each
inline constexpr int block_y = 8;   ///< threads down
inline constexpr int tile_rows = 32;  ///< output rows per block: four per thread
/// Filter taps kept per output column/row on the per-pixel path: a source scale up to 32 (taps <= 2 s + 2).
inline constexpr int max_taps = 66;
/// The separable path: source scale up to 4, so taps up to 10, and the source rows of 32 output rows.
inline constexpr float separable_scale = 4.0f;
inline constexpr int separable_taps = 12;   ///< taps per column/row kept on the separable path
inline constexpr int separable_rows = 136;  ///< source rows of a tile: 31 s + 2 s + 2 for s = 4, rounded up

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
__device__ __forceinline__ std::uint32_t pack_rgb(const float t[3]) {
  const std::uint32_t rg = __byte_perm(__float_as_uint(t[0]), __float_as_uint(t[1]), 0x0040u);
  return __byte_perm(rg, __float_as_uint(t[2]), 0x7410u);
}

/// `ops::row_sum`: each channel's fmaf chain in tap order, rounded to u8 (biased, see
/// `round_u8_biased`). `w` is the column's first weight in the transposed table (`compute_taps`),
/// so its taps are `block_x` floats apart. A loop with the thread's own trip count: unrolled to
/// the largest count, the taps past it would be issued too, predicated off. `Step` is the pixel
/// stride when known at compile time (3: an upright image), else 0 and `x_stride` gives it.
template <int Step>
__device__ __forceinline__ void row_sum(const std::uint8_t* first, std::int64_t x_stride, int count, const float* w,
                                        float out[3]) {
  const std::int64_t step = Step != 0 ? Step : x_stride;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f;
#pragma unroll 2
  for (int j = 0; j < count; ++j) {
    const std::uint8_t* q = first + j * step;
    const float wj = w[j * block_x];
    a0 = fmaf(wj, byte_float(q[0]), a0);
    a1 = fmaf(wj, byte_float(q[1]), a1);
    a2 = fmaf(wj, byte_float(q[2]), a2);
  }
  out[0] = round_u8_biased(a0);
  out[1] = round_u8_biased(a1);
  out[2] = round_u8_biased(a2);
}

/// `ops::store` of a pixel's three rounded values (biased, see `round_u8_biased`), flipped as
/// planned; the dtype and layout are compile-time.
template <DType D, Layout L>
__device__ __forceinline__ void store_pixel(std::byte* out, const ops::SamplePlan& p, const ops::OutputParams& params,
                                            int ox, int oy, const float v[3]) {
  const int dx = p.flip ? p.out_width - 1 - ox : ox;
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const std::int64_t i = ops::element_index(L, c, oy, dx, p.out_height, p.out_width);
    if constexpr (D == DType::u8) {
      reinterpret_cast<std::uint8_t*>(out)[i] = static_cast<std::uint8_t>(__float_as_uint(v[c]));
    } else {
      const float x = fmaf(unbias(v[c]), params.scale[c], params.bias[c]);
      if constexpr (D == DType::f32) reinterpret_cast<float*>(out)[i] = x;
      else if constexpr (D == DType::f16) reinterpret_cast<std::uint16_t*>(out)[i] = ops::to_f16_bits(x);
      else reinterpret_cast<std::uint16_t*>(out)[i] = ops::to_bf16_bits(x);
    }
  }
}

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
  float weights_x[separable_taps * block_x];  // tap j of column x at j * block_x + x
  float weights_y[tile_rows * separable_taps];
  int lo, hi;  // the source rows the tile reads, relative to src_begin
  std::uint32_t rows[separable_rows][block_x];  // horizontal sums of those rows, rounded, as packed RGB
};
struct DirectShared {
  ops::AxisTaps taps_x[block_x];
  ops::AxisTaps taps_y[tile_rows];
  float weights_x[max_taps * block_x];  // tap j of column x at j * block_x + x
  float weights_y[tile_rows * max_taps];
};
inline constexpr std::size_t shared_bytes =
    sizeof(SeparableShared) > sizeof(DirectShared) ? sizeof(SeparableShared) : sizeof(DirectShared);

/// Warp 0 computes the column taps, warp 1 the row taps: tap j of column x goes to
/// weights_x[j * block_x + x] (a transposed table, so a warp's loads hit distinct banks), of row t
/// to weights_y[t * y_stride + j].
__device__ inline void compute_taps(const ops::SamplePlan& p, int ox, int tile_y0, ops::AxisTaps* taps_x,
                                    ops::AxisTaps* taps_y, float* weights_x, float* weights_y, int y_stride) {
  static_assert(tile_rows == block_x, "one warp computes the row taps");
  if (threadIdx.y == 0) {
    const ops::AxisTaps t = ox < p.out_width ? ops::axis_taps(p.x, ox) : ops::AxisTaps{};
    taps_x[threadIdx.x] = t;
    for (int j = 0; j < t.count; ++j) weights_x[j * block_x + threadIdx.x] = ops::tap_weight(t, j);
  } else if (threadIdx.y == 1) {
    const int row = tile_y0 + static_cast<int>(threadIdx.x);
    const ops::AxisTaps t = row < p.out_height ? ops::axis_taps(p.y, row) : ops::AxisTaps{};
    taps_y[threadIdx.x] = t;
    for (int j = 0; j < t.count; ++j) weights_y[threadIdx.x * y_stride + j] = ops::tap_weight(t, j);
  }
}

/// This thread's output rows of the tile (every block_y-th): `combine(ty, wy, acc)` sums the row's
/// vertical taps into `acc`, then the pixel is rounded and stored.
template <DType D, Layout L, int YStride, class Combine>
__device__ __forceinline__ void output_rows(const ops::SamplePlan& p, const ops::OutputParams& params, std::byte* out,
                                            int ox, int tile_y0, const ops::AxisTaps* taps_y, const float* weights_y,
                                            Combine&& combine) {
#pragma unroll
  for (int k = 0; k < tile_rows / block_y; ++k) {
    const int t = static_cast<int>(threadIdx.y) + k * block_y;
    const int oy = tile_y0 + t;
    if (oy >= p.out_height) break;
    float acc[3] = {0.0f, 0.0f, 0.0f};
    combine(taps_y[t], weights_y + t * YStride, acc);
    const float v[3] = {round_u8_biased(acc[0]), round_u8_biased(acc[1]), round_u8_biased(acc[2])};
    store_pixel<D, L>(out, p, params, ox, oy, v);
  }
}

/// The separable path, for one block's tile.
template <DType D, Layout L, int Step>
__device__ void separable_tile(const ops::SamplePlan& p, const std::uint8_t* src, std::byte* out,
                               const ops::OutputParams& params, int ox, int tile_y0, SeparableShared& s) {
  compute_taps(p, ox, tile_y0, s.taps_x, s.taps_y, s.weights_x, s.weights_y, separable_taps);
  if (threadIdx.y == 1) {  // the source rows any of the tile's output rows reads: a warp reduction
    const ops::AxisTaps& t = s.taps_y[threadIdx.x];
    int lo = t.count > 0 ? t.first : 1 << 30, hi = t.count > 0 ? t.first + t.count : 0;
    for (int d = 16; d > 0; d >>= 1) {
      lo = min(lo, __shfl_xor_sync(0xFFFFFFFFu, lo, d));
      hi = max(hi, __shfl_xor_sync(0xFFFFFFFFu, hi, d));
    }
    if (threadIdx.x == 0) {
      s.lo = lo;
      s.hi = hi;
    }
  }
  __syncthreads();
  const int lo = s.lo, rows = s.hi > lo ? s.hi - lo : 0;
  // Horizontal pass: warps take whole source rows, 32 consecutive columns each.
  const ops::AxisTaps tx = s.taps_x[threadIdx.x];
  const float* wx = s.weights_x + threadIdx.x;
  const std::uint8_t* column = src + std::int64_t{p.x.src_begin + tx.first} * p.src.x_stride;
  for (int r = static_cast<int>(threadIdx.y); r < rows; r += block_y) {
    float rgb[3];
    row_sum<Step>(column + std::int64_t{p.y.src_begin + lo + r} * p.src.y_stride, p.src.x_stride, tx.count, wx, rgb);
    s.rows[r][threadIdx.x] = pack_rgb(rgb);
  }
  __syncthreads();
  if (ox >= p.out_width) return;
  // Vertical pass: each thread combines the rows of its four output rows.
  output_rows<D, L, separable_taps>(p, params, out, ox, tile_y0, s.taps_y, s.weights_y,
                                    [&](const ops::AxisTaps& ty, const float* wy, float acc[3]) {
                                      for (int j = 0; j < ty.count; ++j) {
                                        const std::uint32_t rgb = s.rows[ty.first + j - lo][threadIdx.x];
#pragma unroll
                                        for (int c = 0; c < 3; ++c)
                                          acc[c] = fmaf(wy[j], word_byte_float(rgb, c), acc[c]);
                                      }
                                    });
}

/// The per-pixel path (source scale > 4 on an axis): each output pixel filters its own rows.
template <DType D, Layout L>
__device__ void direct_tile(const ops::SamplePlan& p, const std::uint8_t* src, std::byte* out,
                            const ops::OutputParams& params, int ox, int tile_y0, DirectShared& s) {
  compute_taps(p, ox, tile_y0, s.taps_x, s.taps_y, s.weights_x, s.weights_y, max_taps);
  __syncthreads();
  if (ox >= p.out_width) return;
  const ops::AxisTaps tx = s.taps_x[threadIdx.x];
  const float* wx = s.weights_x + threadIdx.x;
  const std::uint8_t* column = src + std::int64_t{p.x.src_begin + tx.first} * p.src.x_stride;
  output_rows<D, L, max_taps>(p, params, out, ox, tile_y0, s.taps_y, s.weights_y,
                              [&](const ops::AxisTaps& ty, const float* wy, float acc[3]) {
                                for (int j = 0; j < ty.count; ++j) {
                                  float rgb[3];
                                  row_sum<0>(column + std::int64_t{p.y.src_begin + ty.first + j} * p.src.y_stride,
                                             p.src.x_stride, tx.count, wx, rgb);
                                  for (int c = 0; c < 3; ++c) acc[c] = fmaf(wy[j], unbias(rgb[c]), acc[c]);
                                }
                              });
}

}  // namespace detail

/// grid (tiles across, tiles down, samples), block (block_x, block_y). Six blocks per SM (40
/// registers): measured 3-12 % faster on an H200 than the 47-55 registers the compiler picks alone.
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
