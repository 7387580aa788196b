#pragma once
/// @file
/// The fused augmentation kernel's tap layout (`augment.cuh`): its block and tile shapes, where
/// its fixed-point sums keep their bytes, each sample's header and each tile's filter windows
/// (`TapTable`), and `layout_taps`, the small kernel that lays them out once per batch from the
/// plans.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment_layout.cuh needs a CUDA compiler"
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
// The warp reductions (__reduce_*_sync) are compute capability 8.0's.
#error "conveyor's CUDA kernels need compute capability 8.0 or later: set CMAKE_CUDA_ARCHITECTURES >= 80"
#endif

#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/resample.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

inline constexpr int block_x = 32;  ///< threads across: one output column each
inline constexpr int block_y = 8;   ///< threads down
inline constexpr int tile_rows = 64;  ///< output rows per block: eight per thread
/// Filter taps kept per output column/row on the per-pixel path: a filter half width (support x
/// source scale) s up to 32, `detail::max_device_support` (taps <= 2 s + 2).
inline constexpr int max_taps = 66;
/// The separable path: source scale up to 3.5, so taps up to 8 (2 s + 1), and the 65 s + 2 source
/// rows of 64 output rows (six blocks of them fit an SM).
inline constexpr double separable_scale = 3.5;
inline constexpr int separable_taps = 8;
inline constexpr int separable_pairs = separable_taps / 2;  ///< weights are stored two to a word
inline constexpr int separable_rows = 232;
/// The general path (`augment_general.cuh`): a filter half width (support x source scale) up to
/// `general_support`, so taps up to `general_taps` (2 s + 2).
inline constexpr int general_taps = 24;
inline constexpr double general_support = (general_taps - 2) / 2.0;
/// Tap counts up to this get straight-line code (a source scale up to about 2.5, the usual case
/// after DCT-scaled decoding); larger ones loop.
inline constexpr int unrolled_taps = 6;

namespace detail {

/// Where the separable path's sums keep their rounded byte: bits 16-23, whatever the axis'
/// precision p. Its weights are the fixed-point ones times 2^(16 - p) (`pass_weight`) and its sums
/// start from 2^15, so (sum + 2^15) >> 16 is torch's (sum + 2^(p-1)) >> p, and packing a pass'
/// bytes or making one a float is a byte permute, not a shift and a permute (bf16 NCHW 73.6 ->
/// 70.9 us a batch, u8 NCHW 66.7 -> 63.4 on an H200, with the horizontal pass' row addresses
/// stepped). There p is 14 to 16: torch keeps weights below 2^15, and at scales up to 3.5 the
/// first resized pixel's window, cut at the box's start, has a weight of at least 0.27 (the
/// resample tests check both).
inline constexpr int pass_shift = 16;
inline constexpr std::uint32_t pass_half = 1u << (pass_shift - 1);

/// A weight of `precision` fraction bits, scaled for `pass_shift`: below 2^16, but for a weight
/// of exactly one at p = 14 (2^14 scaled by 4). That one becomes 65535, a unit less, which takes
/// at most 255 from a sum whose low 16 bits are then at least 2^15 (the other weights round to at
/// most one unit, 4 scaled, between them), so the rounded byte is the same.
__device__ __forceinline__ std::uint32_t pass_weight(std::uint32_t fixed, int precision) {
  return min(fixed << (pass_shift - precision), 0xFFFFu);
}

/// Where the vertical pass' sums start: half a unit, with 2^23's float bits above. No carry
/// reaches the top byte (the sums stay below 2^24), so it is still 0x4B when the pass ends and
/// the sum's float, 2^23 + byte, is one permute away (`sum_float`).
inline constexpr std::uint32_t output_start = 0x4B000000u | pass_half;

/// The byte of an output sum (see `output_start`) as a float, without a conversion instruction:
/// the bits of 2^23 + byte, minus 2^23. (A conversion, `I2F.U16` of the sum's high half, is fewer
/// instructions but runs on a narrow pipe: f32 NHWC 88.4 us a batch against 85.3 on an H200.)
__device__ __forceinline__ float sum_float(std::uint32_t sum) {
  return __fsub_rn(__uint_as_float(__byte_perm(sum, 0u, 0x3442u)), 8388608.0f);
}

/// Every pixel of a tile's axis gets the same number of taps, `taps` (the largest count among
/// them), starting at its own `start` (relative to the axis' src_begin): its own weights where its
/// taps are, zeros elsewhere. A zero-weight tap adds nothing to an integer sum, so the bits are
/// those of the CPU's loops; a count uniform across the block lets the tap loops unroll without
/// predicated-off taps.
struct TapWindows {
  int taps;    ///< per pixel, uniform
  int lo, hi;  ///< source range the windows of pixels with taps cover
};

/// One warp, `N` output pixels per lane (`first + lane + k * 32`, those below `end` in the
/// output) of axis `a` whose weights have `precision` fraction bits: writes each pixel's window
/// start to `start[i]` and its fixed-point weights to `weights`, taps below `max(taps, fill)`
/// (taps from `taps` on are zeros): with `Pairs` (the separable path's), scaled by `pass_weight`,
/// taps 2m and 2m + 1 as the low and high half of `weights[m * jstride + i * istride]`, else tap j
/// at `weights[j * jstride + i * istride]`. `parts` warps share the work, this one doing words
/// `part`, `part + parts`, ... Windows stay inside the source (shifted left at its far edge);
/// pixels without taps (outside the output, or padding) start at the lowest window.
template <int N, bool Pairs>
__device__ inline TapWindows uniform_taps(const ops::AxisPlan& a, int precision, int first, int end, int* start,
                                          std::uint32_t* weights, int jstride, int istride, int part, int parts,
                                          int fill = 0) {
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
  const int words = Pairs ? (max(taps, fill) + 1) / 2 : max(taps, fill);
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int i = lane + k * block_x;
    if (t[k].count == 0) s[k] = lo;
    if (part == 0) start[i] = s[k];
    const auto weight = [&](int j) -> std::uint32_t {
      const int q = s[k] + j - t[k].first;
      return j < taps && q >= 0 && q < t[k].count ? ops::fixed_weight(ops::tap_weight(t[k], q), precision) : 0;
    };
    for (int m = part; m < words; m += parts)
      weights[m * jstride + i * istride] =
          Pairs ? pass_weight(weight(2 * m), precision) | pass_weight(weight(2 * m + 1), precision) << 16 : weight(m);
  }
  return {taps, lo, hi};
}

/// Whether a sample takes the separable path: the default filter's unsigned 16-bit weights, at
/// source scales whose windows fit its tiles.
__device__ __forceinline__ bool separable(const ops::SamplePlan& p) {
  return !p.precomputed && p.x.filter == ops::Resampling::bilinear && p.x.scale <= separable_scale &&
         p.y.scale <= separable_scale;
}

/// Whether a sample that is not separable takes the general path: every window fits `general_taps`.
__device__ __forceinline__ bool general(const ops::SamplePlan& p) {
  const auto support = [](const ops::AxisPlan& a) {
    return ops::filter_support(a.filter) * (a.scale >= 1.0 && !ops::unwidened(a.filter) ? a.scale : 1.0);
  };
  return max(support(p.x), support(p.y)) <= general_support;
}

}  // namespace detail

/// The windows of one tile's `N` columns (`N` = block_x) or rows (`N` = tile_rows) on the
/// separable path, as `layout_taps` leaves them, weights two to a word (see `uniform_taps`): pair
/// m of column i at `pairs[m * N + i]` (a warp's loads of one pair are one transaction), of row i
/// at `pairs[i * separable_pairs + m]` (a row's weights in one 16-byte load). Taps from `w.taps`
/// to `separable_taps` are zeros.
template <int N>
struct alignas(16) AxisTile {
  detail::TapWindows w;
  alignas(16) int start[std::size_t(N)];  // copied 16 bytes at a time, as `pairs`
  std::uint32_t pairs[std::size_t(separable_pairs * N)];
};
using ColumnTile = AxisTile<block_x>;
using RowTile = AxisTile<tile_rows>;
static_assert(offsetof(RowTile, pairs) % 16 == 0 && offsetof(ColumnTile, pairs) % 16 == 0);

/// How `augment_batch` makes a sample.
enum class SamplePath : std::uint8_t {
  separable,    ///< the default filter, source scale <= separable_scale on both axes
  general,      ///< any other filter (or scale) whose windows fit `general_taps`
  direct,       ///< per pixel, laying out its own windows
  precomputed,  ///< finished on the CPU: copied
};

/// What `augment_batch` needs of a sample's plan, as `layout_taps` leaves it: a few loads from
/// one 32-byte record instead of a dozen of the plan's fields, each with its address made anew
/// (about 45 instructions less per warp). Strides fit 32 bits: a JPEG row is at most 65,535
/// pixels.
struct alignas(16) SampleHeader {
  std::int64_t box;  ///< arena offset of the crop box's first pixel (the output, if precomputed)
  std::int32_t x_stride, y_stride;
  std::int32_t out_width, out_height;
  SamplePath path;
  bool flip;
  std::uint8_t precision_x, precision_y;  ///< of the axes' weights (`ops::axis_precision`)
  bool flip_y;
};
static_assert(sizeof(SampleHeader) == 32, "the tiles after it stay 16-byte aligned");

/// A batch's tap windows in device memory: per sample, its header, its column tiles, then its row
/// tiles (separable samples only). `bytes` says how much memory a batch needs.
struct TapTable {
  std::byte* data = nullptr;
  int tiles_x = 0, tiles_y = 0;

  TapTable(std::byte* d, int out_width, int out_height)
      : data(d), tiles_x((out_width + block_x - 1) / block_x), tiles_y((out_height + tile_rows - 1) / tile_rows) {}

  [[nodiscard]] static std::size_t bytes(std::size_t count, int out_width, int out_height) {
    return count * TapTable(nullptr, out_width, out_height).sample_bytes();
  }
  [[nodiscard]] __host__ __device__ std::size_t sample_bytes() const {
    return sizeof(SampleHeader) + std::size_t(tiles_x) * sizeof(ColumnTile) + std::size_t(tiles_y) * sizeof(RowTile);
  }
  [[nodiscard]] __device__ SampleHeader& header(int sample) const {
    return *reinterpret_cast<SampleHeader*>(data + sample * sample_bytes());
  }
  [[nodiscard]] __device__ ColumnTile& columns(int sample, int tile) const {
    return reinterpret_cast<ColumnTile*>(data + sample * sample_bytes() + sizeof(SampleHeader))[tile];
  }
  [[nodiscard]] __device__ RowTile& rows(int sample, int tile) const {
    return reinterpret_cast<RowTile*>(data + sample * sample_bytes() + sizeof(SampleHeader) +
                                      std::size_t(tiles_x) * sizeof(ColumnTile))[tile];
  }
};

inline constexpr int layout_warps = 8;  ///< warps per block of `layout_taps`

/// grid (samples: `copies.count` per sample of the batch), block (block_x, Warps): the block finds
/// the weight precision of the sample's axes (as `ops::axis_precision`: Pillow's 22, or torch's
/// least over every resized pixel) and writes its header,
/// then, for a separable sample, each warp lays out column and row tiles in turn. (A template, as
/// every kernel here: a header's plain kernel would be defined again by each translation unit
/// that includes it.)
template <int Warps>
__global__ void __launch_bounds__(block_x* Warps)
    layout_taps(const ops::SamplePlan* __restrict__ plans, TapTable table, ops::CopyRange copies) {
  __shared__ int precision[2];
  const int sample = static_cast<int>(blockIdx.x);
  const ops::SamplePlan p = plans[copies.entry(sample)];
  const int thread = static_cast<int>(threadIdx.y * block_x + threadIdx.x);
  if (p.precomputed) {
    if (thread == 0)
      table.header(sample) = {p.src.offset, 0, 0, p.out_width, p.out_height, SamplePath::precomputed, p.flip != 0, 0, 0,
                              p.flip_y != 0};
    return;
  }
  if (thread < 2) precision[thread] = 22;
  __syncthreads();
  int px = 22, py = 22;  // Pillow's, whatever the weights (`ops::pil_precision`)
  for (int r = thread; !ops::is_pil(p.x.filter) && r < p.x.resized; r += block_x * Warps)
    px = min(px, ops::weight_precision(ops::max_weight(ops::resized_taps(p.x, r))));
  for (int r = thread; !ops::is_pil(p.y.filter) && r < p.y.resized; r += block_x * Warps)
    py = min(py, ops::weight_precision(ops::max_weight(ops::resized_taps(p.y, r))));
  px = __reduce_min_sync(0xFFFFFFFFu, px);
  py = __reduce_min_sync(0xFFFFFFFFu, py);
  if (threadIdx.x == 0) atomicMin(&precision[0], px), atomicMin(&precision[1], py);
  __syncthreads();
  const bool separable = detail::separable(p);
  if (thread == 0)
    table.header(sample) = {p.src.offset + p.x.src_begin * p.src.x_stride + p.y.src_begin * p.src.y_stride,
                            static_cast<std::int32_t>(p.src.x_stride),
                            static_cast<std::int32_t>(p.src.y_stride),
                            p.out_width,
                            p.out_height,
                            separable            ? SamplePath::separable
                            : detail::general(p) ? SamplePath::general
                                                 : SamplePath::direct,
                            p.flip != 0,
                            static_cast<std::uint8_t>(precision[0]),
                            static_cast<std::uint8_t>(precision[1]),
                            p.flip_y != 0};
  if (!separable) return;
  for (int k = static_cast<int>(threadIdx.y); k < table.tiles_x + table.tiles_y; k += Warps) {
    if (k < table.tiles_x) {
      ColumnTile& t = table.columns(sample, k);
      const detail::TapWindows w = detail::uniform_taps<1, true>(p.x, precision[0], k * block_x, p.out_width, t.start,
                                                                 t.pairs, block_x, 1, 0, 1, separable_taps);
      if (threadIdx.x == 0) t.w = w;
    } else {
      RowTile& t = table.rows(sample, k - table.tiles_x);
      const int first = (k - table.tiles_x) * tile_rows;
      const detail::TapWindows w = detail::uniform_taps<tile_rows / block_x, true>(
          p.y, precision[1], first, p.out_height, t.start, t.pairs, 1, separable_pairs, 0, 1, separable_taps);
      if (threadIdx.x == 0) t.w = w;
    }
  }
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
