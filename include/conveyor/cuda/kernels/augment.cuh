#pragma once
/// @file
/// The fused augmentation kernel: one launch per batch turns every sample's decoded region into
/// its output (resample, flip, normalise, convert, store) with the CPU backend's weights and
/// integer arithmetic (`ops/resample.hpp`), so the bits are the same.
///
/// Each block makes a 32 x 64 tile of one sample. Usually (source scale <= 3.5 on both axes; DCT-
/// scaled decoding leaves at most 2) it runs separably like the CPU: the horizontal pass of every
/// source row the tile needs goes to shared memory once, rounded to u8, then each thread combines
/// the rows of its output pixels (up to four adjacent columns, see `vertical_columns`). Larger
/// scales, whose rows would not fit, take the per-pixel path; both give the same bits. Every pixel
/// of a tile gets the same number of taps (see `TapWindows`), so the tap loops unroll with the
/// weights in registers. A small kernel lays out the windows and a header per sample once per batch
/// beforehand (`layout_taps`; the CUDA backend runs it on its load stream, after the upload), so
/// the tiles start filtering at once instead of computing weights and waiting at a barrier.
///
/// The tap loops are built around `dp2a`: two 16-bit weights times two bytes plus a 32-bit sum in
/// one instruction. A byte permute pairs a channel's bytes of two taps, so two taps of three
/// channels cost two permutes and three `dp2a` (six float instructions per tap and channel when
/// the arithmetic was fp32). On an H200 the horizontal pass bounds the kernel, by its instructions
/// and by its row loads' latency, which its loop hides four rows deep once every row has been
/// asked of L2 (`prefetch_l2`): with no source loads at all the u8 kernel still takes 83 % of its
/// time, and variants with fewer instructions but longer dependency chains, fewer loads in flight
/// or more L1 lookups (rows staged through shared memory, the pass on the tensor cores, two tiles
/// a block) measured slower (`benchmarks/LOG.md`).

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment.cuh needs a CUDA compiler"
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
// The warp reductions (__reduce_*_sync) are compute capability 8.0's.
#error "conveyor's CUDA kernels need compute capability 8.0 or later: set CMAKE_CUDA_ARCHITECTURES >= 80"
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
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline_primitives.h>

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
inline constexpr double separable_scale = 3.5;
inline constexpr int separable_taps = 8;
inline constexpr int separable_pairs = separable_taps / 2;  ///< weights are stored two to a word
inline constexpr int separable_rows = 232;
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

/// Whether a sample takes the separable path.
__device__ __forceinline__ bool separable(const ops::SamplePlan& p) {
  return !p.precomputed && p.x.scale <= separable_scale && p.y.scale <= separable_scale;
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
  separable,    ///< source scale <= separable_scale on both axes
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

/// grid (samples), block (block_x, Warps): the block finds the weight precision of the sample's
/// axes (the least over every resized pixel, as `ops::axis_precision`) and writes its header,
/// then, for a separable sample, each warp lays out column and row tiles in turn. (A template, as
/// every kernel here: a header's plain kernel would be defined again by each translation unit
/// that includes it.)
template <int Warps>
__global__ void __launch_bounds__(block_x* Warps)
    layout_taps(const ops::SamplePlan* __restrict__ plans, TapTable table) {
  __shared__ int precision[2];
  const int sample = static_cast<int>(blockIdx.x);
  const ops::SamplePlan p = plans[sample];
  const int thread = static_cast<int>(threadIdx.y * block_x + threadIdx.x);
  if (p.precomputed) {
    if (thread == 0)
      table.header(sample) = {p.src.offset, 0, 0, p.out_width, p.out_height, SamplePath::precomputed, p.flip != 0, 0, 0};
    return;
  }
  if (thread < 2) precision[thread] = 22;
  __syncthreads();
  int px = 22, py = 22;
  for (int r = thread; r < p.x.resized; r += block_x * Warps)
    px = min(px, ops::weight_precision(ops::max_weight(ops::resized_taps(p.x, r))));
  for (int r = thread; r < p.y.resized; r += block_x * Warps)
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
                            separable ? SamplePath::separable : SamplePath::direct,
                            p.flip != 0,
                            static_cast<std::uint8_t>(precision[0]),
                            static_cast<std::uint8_t>(precision[1])};
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

namespace detail {

/// Shared memory of a separable tile: its row windows (copied from its `RowTile`) and the
/// horizontal sums of the source rows [wy.lo, wy.hi), rounded, as packed RGB (byte 3 zero).
struct SeparableShared {
  alignas(16) std::uint32_t pairs_y[tile_rows * separable_pairs];
  alignas(16) int start_y[tile_rows];
  std::uint32_t rows[separable_rows][block_x];
};

/// Shared memory of a per-pixel tile: the windows of its columns and rows, laid out by the tile.
struct DirectShared {
  std::uint32_t weights_x[max_taps * block_x];  // tap j of column x at j * block_x + x
  std::uint32_t weights_y[tile_rows * max_taps];
  int start_x[block_x], start_y[tile_rows];
  TapWindows wx, wy;
};
inline constexpr std::size_t shared_bytes = std::max(sizeof(SeparableShared), sizeof(DirectShared));

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

/// The word whose bytes are bytes `b0`..`b3` of `w` (all within 8 bytes from a word boundary; the
/// positions are compile-time once the tap loops unroll, so this is one byte permute).
template <std::size_t Words>
__device__ __forceinline__ std::uint32_t gather(const std::uint32_t (&w)[Words], int b0, int b1, int b2, int b3) {
  const int q = min(min(b0, b1), min(b2, b3)) / 4;
  const auto at = [&](int b) { return static_cast<unsigned>(b - 4 * q); };
  return __byte_perm(w[q], w[q + 1 < static_cast<int>(Words) ? q + 1 : q], at(b0) | at(b1) << 4 | at(b2) << 8 | at(b3) << 12);
}

/// Three channel sums' bytes (bits 16-23, see `pass_shift`) packed as bytes 0-2 of a word, byte 3
/// zero (the sums are below 2^24).
__device__ __forceinline__ std::uint32_t pack_rgb(const std::uint32_t v[3]) {
  return __byte_perm(__byte_perm(v[0], v[1], 0x0062u), v[2], 0x7610u);
}

/// A word of source pixels, as `__ldg` loads it but asking L2 to fetch the 256 bytes around it:
/// the column tiles beside this one read the rest of the row (2-3 % faster on an H200).
__device__ __forceinline__ std::uint32_t load_word(const std::uint32_t* p) {
  std::uint32_t v;
  asm("ld.global.nc.L2::256B.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

/// Asks L2 for the line holding `p`, which the block reads soon.
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

/// One source row's window of `Taps` upright pixels (3 bytes each, any alignment) as the words
/// that hold it: aligned 32-bit loads, a third as many as byte loads, then funnel shifts line the
/// window up. Words past the window are not read (the window may end the buffer).
template <int Taps>
struct RowWindow {
  static constexpr int bytes = 3 * Taps;
  static constexpr int words = (bytes + 6) / 4;  // the most any alignment touches
  static constexpr int aligned = (bytes + 3) / 4;
  std::uint32_t w[std::size_t(aligned)];

  /// The window at byte `misalign` (0-3) of the word `words_at`.
  __device__ __forceinline__ RowWindow(const std::uint32_t* words_at, int misalign) {
    std::uint32_t raw[words + 1];
#pragma unroll
    for (int k = 0; k < words; ++k) raw[k] = 4 * k < misalign + bytes ? load_word(words_at + k) : 0u;
    raw[words] = 0u;
#pragma unroll
    for (int m = 0; m < aligned; ++m) w[m] = __funnelshift_r(raw[m], raw[m + 1], 8u * static_cast<unsigned>(misalign));
  }

  /// Adds the window's taps with the weight pairs `wp` to the channel sums `acc`: per pair, one
  /// permute gathers the red and green bytes of both taps, one the blue ones.
  __device__ __forceinline__ void sum(const std::uint32_t (&wp)[std::size_t((Taps + 1) / 2)], std::uint32_t acc[3]) const {
#pragma unroll
    for (int m = 0; m < (Taps + 1) / 2; ++m) {
      const int a = 6 * m, b = 2 * m + 1 < Taps ? a + 3 : a;  // an odd count's last pair: weight 0 on b
      const std::uint32_t rg = gather(w, a, b, a + 1, b + 1), bb = gather(w, a + 2, b + 2, a + 2, b + 2);
      acc[0] = __dp2a_lo(wp[m], rg, acc[0]);
      acc[1] = __dp2a_hi(wp[m], rg, acc[1]);
      acc[2] = __dp2a_lo(wp[m], bb, acc[2]);
    }
  }
};

/// The horizontal sums of `rows` source rows of an upright image (3-byte pixels) starting at
/// `first` (a column's window start, rows `y_stride` apart), `Taps` taps each with the weight
/// pairs `w` (`block_x` apart, see `pass_weight`), rounded into `out[r][threadIdx.x]`; warps take
/// rows in turn. No clamp: with at most 8 weights, each at most half a unit of precision p >= 14
/// above its exact value, a sum is at most 255 (2^16 + 4 * 2^(16-p)) + 2^15, below 256 * 2^16.
/// (Two rows a warp at a time, or the next row's loads issued before this row is filtered,
/// measured 4 % and 17 % slower on an H200.)
template <int Taps>
__device__ __forceinline__ void horizontal_rows(const std::uint8_t* first, std::int64_t y_stride,
                                                const std::uint32_t* w, int rows, std::uint32_t (*out)[block_x]) {
  static_assert(Taps <= separable_taps, "the no-clamp bound above");
  static_assert(block_y % 4 == 0, "a thread's rows, block_y apart, share one alignment");
  std::uint32_t wp[(Taps + 1) / 2];
#pragma unroll
  for (int m = 0; m < (Taps + 1) / 2; ++m) wp[m] = w[m * block_x];
  const std::uint8_t* row = first + static_cast<int>(threadIdx.y) * y_stride;
  const int misalign = static_cast<int>(reinterpret_cast<std::uintptr_t>(row) & 3u);
  const auto* words = reinterpret_cast<const std::uint32_t*>(row - misalign);
  const std::int64_t step = block_y / 4 * y_stride;  // in words
  for (int r = static_cast<int>(threadIdx.y); r < rows; r += block_y, words += step) {
    std::uint32_t acc[3] = {pass_half, pass_half, pass_half};
    RowWindow<Taps>(words, misalign).sum(wp, acc);
    out[r][threadIdx.x] = pack_rgb(acc);
  }
}

/// `horizontal_rows` for any pixel step (an oriented view) or tap count: a loop of byte loads.
__device__ inline void horizontal_rows_any(const std::uint8_t* first, std::int64_t x_stride, std::int64_t y_stride,
                                           int taps, const std::uint32_t* w, int rows,
                                           std::uint32_t (*out)[block_x]) {
  for (int r = static_cast<int>(threadIdx.y); r < rows; r += block_y) {
    const std::uint8_t* q = first + r * y_stride;
    std::uint32_t acc[3] = {pass_half, pass_half, pass_half};
#pragma unroll 2
    for (int j = 0; j < taps; ++j) {
      const std::uint32_t weight = w[j / 2 * block_x] >> (j % 2 * 16) & 0xFFFFu;
#pragma unroll
      for (int c = 0; c < 3; ++c) acc[c] += weight * q[j * x_stride + c];
    }
    out[r][threadIdx.x] = pack_rgb(acc);
  }
}

/// Calls `f` with the tap count `taps` as a `std::integral_constant` where it is 1 to
/// `unrolled_taps`, for straight-line tap loops, and with -1 (a loop over `taps`) otherwise.
template <class F>
__device__ __forceinline__ void with_tap_count(int taps, F&& f) {
  static_assert(unrolled_taps == 6, "the cases below unroll up to unrolled_taps");
  switch (taps) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    default: return f(std::integral_constant<int, -1>{});
  }
}

/// The horizontal pass: straight-line code for upright images with up to `unrolled_taps` taps.
__device__ inline void horizontal_pass(const std::uint8_t* first, std::int64_t x_stride, std::int64_t y_stride,
                                       TapWindows wx, const std::uint32_t* w, int rows,
                                       std::uint32_t (*out)[block_x]) {
  with_tap_count(x_stride == 3 ? wx.taps : -1, [&](auto taps) {
    if constexpr (constexpr int n = decltype(taps)::value; n > 0) horizontal_rows<n>(first, y_stride, w, rows, out);
    else horizontal_rows_any(first, x_stride, y_stride, wx.taps, w, rows, out);
  });
}

/// `ops::normalized` of the byte of output sum `v` (see `output_start`) of channel `c`.
__device__ __forceinline__ float normalized_sum(const ops::OutputParams& params, int c, std::uint32_t v) {
  return fmaf(sum_float(v), params.scale[c], params.bias[c]);
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

/// Output columns a thread of the separable path's vertical pass makes, side by side, so a row's
/// weights, window and store addresses serve them all and the stores are vectors. On an H200 (us
/// a batch): two columns instead of one made bf16 NCHW 75.7 -> 73.1 and u8 NCHW 74.5 -> 66.2; four
/// instead of two, bf16 NCHW 66.5-67.0 -> 64.9-65.1, u8 NCHW 59.4-60.3 -> 58.2-58.7, u8 NHWC
/// 61.3-61.8 -> 58.0-59.1, but bf16 NHWC 67.5-68.9 -> 70.0-70.7 (a lane's 24 bytes in three
/// 8-byte stores) and f32 NCHW no faster. f32 NHWC keeps one: its pairs are 24 bytes a lane, and
/// those stores measured slower (92.5) than 12-byte pixels (86.5).
template <DType D, Layout L>
inline constexpr int vertical_columns = L == Layout::NCHW ? (D == DType::f32 ? 2 : 4)
                                        : D == DType::u8  ? 4
                                        : D == DType::f32 ? 1
                                                          : 2;

/// A thread's output pixels of the tile: `Cols` adjacent columns from `ox` (a multiple of `Cols`),
/// rows `row`, `row + step`, ... where `step` is the rows between a thread's (`Cols * block_y`).
/// `combine(t, v)` sets row `t`'s pixels (three output sums each, see `output_start`), which are
/// then flipped as planned and stored; where the output width is a multiple of `Cols` the pixels
/// (flipped or not) are an aligned run, stored together.
template <int Cols, DType D, Layout L, class Combine>
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
  for (int k = 0; k < tile_rows / step; ++k) {
    const int t = row + k * step;
    const int oy = tile_y0 + t;
    if (oy >= h.out_height) break;
    std::uint32_t v[Cols][3];
    combine(t, v);
    const int pixel = oy * h.out_width + dx;
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

/// The vertical pass of the separable path, for `Cols` adjacent columns from the tile's column
/// `column` (output column `ox`) and the output rows `row`, `row + Cols * block_y`, ...: `Taps`
/// taps of the rounded rows (from source row `lo` on) per output pixel (< 0: a loop of `taps`).
/// Per pair of rows, one load per row fetches every column, and per column one permute gathers
/// both rows' red and green bytes, one their blue ones. No clamp, as in `horizontal_rows`.
template <int Cols, int Taps, DType D, Layout L>
__device__ __forceinline__ void vertical_rows(const SampleHeader& h, const ops::OutputParams& params, std::byte* out,
                                              int ox, int column, int row, int tile_y0, TapWindows wy,
                                              const SeparableShared& s) {
  using Words = std::conditional_t<Cols == 1, std::uint32_t, std::conditional_t<Cols == 2, uint2, uint4>>;
  constexpr int stride = block_x / Cols;  // a source row, in Words
  output_columns<Cols, D, L>(h, params, out, ox, row, tile_y0, [&](int t, std::uint32_t (&v)[Cols][3]) {
    const std::uint32_t* pairs = s.pairs_y + t * separable_pairs;
    const uint4 p4 = *reinterpret_cast<const uint4*>(pairs);  // a row's weights in one load
    const auto weights = [&](int m) {  // compile-time m where the loop unrolls
      if constexpr (Taps > 0) return m == 0 ? p4.x : m == 1 ? p4.y : m == 2 ? p4.z : p4.w;
      else return pairs[m];
    };
    const auto* words = reinterpret_cast<const Words*>(&s.rows[s.start_y[t] - wy.lo][column]);
    const auto word = [](const Words& w, int j) {
      if constexpr (Cols == 1) return w;
      else if constexpr (Cols == 2) return j == 0 ? w.x : w.y;
      else return j == 0 ? w.x : j == 1 ? w.y : j == 2 ? w.z : w.w;
    };
    const int n = Taps > 0 ? Taps : wy.taps;
#pragma unroll
    for (int j = 0; j < Cols; ++j) v[j][0] = v[j][1] = v[j][2] = output_start;
#pragma unroll
    for (int m = 0; m < (n + 1) / 2; ++m) {
      const Words a = words[2 * m * stride], b = 2 * m + 1 < n ? words[(2 * m + 1) * stride] : a;
      const std::uint32_t w = weights(m);
#pragma unroll
      for (int j = 0; j < Cols; ++j) {
        const std::uint32_t rg = __byte_perm(word(a, j), word(b, j), 0x5140u);
        const std::uint32_t bb = __byte_perm(word(a, j), word(b, j), 0x0062u);
        v[j][0] = __dp2a_lo(w, rg, v[j][0]);
        v[j][1] = __dp2a_hi(w, rg, v[j][1]);
        v[j][2] = __dp2a_lo(w, bb, v[j][2]);
      }
    }
  });
}

/// What a thread of a separable tile reads of its `ColumnTile` and `RowTile` first. (For other
/// samples the table holds no tiles; what this reads there is not used.)
struct TileWindows {
  TapWindows wx, wy;
  int start_x;

  __device__ __forceinline__ static TileWindows load(const TapTable& table, int sample) {
    const ColumnTile& columns = table.columns(sample, static_cast<int>(blockIdx.x));
    return {columns.w, table.rows(sample, static_cast<int>(blockIdx.y)).w, columns.start[threadIdx.x]};
  }
};

/// The separable path, for one block's tile, with its windows from `layout_taps`.
template <DType D, Layout L>
__device__ void separable_tile(const SampleHeader& h, const std::uint8_t* box, std::byte* out,
                               const ops::OutputParams& params, int tile_y0, TileWindows windows,
                               const ColumnTile& columns, const RowTile& row_tile, SeparableShared& s) {
  // The row windows go to shared memory for the vertical pass, after the barrier between passes.
  const int thread = static_cast<int>(threadIdx.y * block_x + threadIdx.x);
  // Copied asynchronously (16 bytes a thread), so no thread waits for it before the horizontal
  // pass; 3 % faster on an H200 than through registers.
  constexpr int pair_chunks = tile_rows * separable_pairs / 4, start_chunks = tile_rows / 4;
  if (thread < pair_chunks)
    __pipeline_memcpy_async(s.pairs_y + 4 * thread, row_tile.pairs + 4 * thread, 16);
  else if (thread < pair_chunks + start_chunks)
    __pipeline_memcpy_async(s.start_y + 4 * (thread - pair_chunks), row_tile.start + 4 * (thread - pair_chunks), 16);
  __pipeline_commit();
  const TapWindows wx = windows.wx, wy = windows.wy;
  const int rows = wy.taps > 0 ? wy.hi - wy.lo : 0;
  // Each source row's first line asked of L2 at once, a thread a row, so their misses overlap
  // rather than arrive four rows a warp at a time: bf16 NCHW 64.9-66.4 -> 64.0-65.3 us a batch,
  // u8 and f32 NCHW 1-3 % less, NHWC within noise, on an H200. (Two lines a row measured slower;
  // evict-last prefetches, outputs stored evict-first, and row loads with a 128-byte or no L2
  // fetch hint, no faster.)
  static_assert(separable_rows <= block_x * block_y, "a thread a row");
  if (thread < rows)
    prefetch_l2(box + std::int64_t{wx.lo} * h.x_stride + std::int64_t{wy.lo + thread} * h.y_stride);
  // Horizontal pass: warps take whole source rows, 32 consecutive columns each.
  const std::uint8_t* first =
      box + std::int64_t{windows.start_x} * h.x_stride + std::int64_t{wy.lo} * h.y_stride;
  horizontal_pass(first, h.x_stride, h.y_stride, wx, columns.pairs + threadIdx.x, rows, s.rows);
  __pipeline_wait_prior(0);
  __syncthreads();
  // Vertical pass: each thread combines the rows of its columns' output rows.
  constexpr int cols = vertical_columns<D, L>;
  const int column = cols * (thread % (block_x / cols)), row = thread / (block_x / cols);
  const int ox = static_cast<int>(blockIdx.x) * block_x + column;
  if (ox >= h.out_width) return;
  with_tap_count(wy.taps, [&](auto taps) {
    vertical_rows<cols, decltype(taps)::value, D, L>(h, params, out, ox, column, row, tile_y0, wy, s);
  });
}

/// The per-pixel path (source scale > separable_scale on an axis): each output pixel filters its
/// own rows, as the CPU's loops do (up to 66 taps: the sums clamp).
template <DType D, Layout L>
__device__ void direct_tile(const ops::SamplePlan& p, const SampleHeader& h, const std::uint8_t* src,
                            std::byte* out, const ops::OutputParams& params, int ox, int tile_y0, DirectShared& s) {
  const int px = h.precision_x, py = h.precision_y;
  tile_taps(p, px, py, tile_y0, s);
  if (ox >= p.out_width) return;
  const int tx = s.wx.taps, ty = s.wy.taps;
  const std::uint32_t* wx = s.weights_x + threadIdx.x;
  const std::uint8_t* column = src + std::int64_t{p.x.src_begin + s.start_x[threadIdx.x]} * p.src.x_stride;
  output_columns<1, D, L>(h, params, out, ox, static_cast<int>(threadIdx.y), tile_y0, [&](int t, std::uint32_t (&v)[1][3]) {
    const std::uint32_t* wy = s.weights_y + t * max_taps;
    std::int32_t acc[3];
    acc[0] = acc[1] = acc[2] = ops::fixed_half(py);
    for (int j = 0; j < ty; ++j) {
      const std::uint8_t* q = column + std::int64_t{p.y.src_begin + s.start_y[t] + j} * p.src.y_stride;
      std::int32_t a[3];
      a[0] = a[1] = a[2] = ops::fixed_half(px);
      for (int i = 0; i < tx; ++i)
#pragma unroll
        for (int c = 0; c < 3; ++c) a[c] += static_cast<std::int32_t>(wx[i * block_x]) * q[i * p.src.x_stride + c];
#pragma unroll
      for (int c = 0; c < 3; ++c) acc[c] += static_cast<std::int32_t>(wy[j]) * ops::fixed_to_u8(a[c], px);
    }
#pragma unroll
    for (int c = 0; c < 3; ++c) v[0][c] = output_start | std::uint32_t{ops::fixed_to_u8(acc[c], py)} << pass_shift;
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

/// grid (tiles across, tiles down, samples), block (block_x, block_y), after `layout_taps` has
/// filled `table` for the same plans. Six blocks per SM (40 registers, a few values spilled
/// outside the tap loops): on an H200, 70-71 us a bf16 batch against 76 at five blocks (48
/// registers, fewer spills); 135 against 142 and 158 at four in an earlier form.
template <DType D, Layout L>
__global__ void __launch_bounds__(block_x* block_y, 6)
    augment_batch(const std::byte* __restrict__ arena, const ops::SamplePlan* __restrict__ plans, TapTable table,
                  std::byte* __restrict__ out, std::size_t sample_bytes, ops::OutputParams params) {
  // Raw storage: __shared__ variables cannot have constructors, and AxisTaps has member defaults.
  __shared__ alignas(16) unsigned char shared[detail::shared_bytes];

  const int sample = static_cast<int>(blockIdx.z);
  // Loaded with the header rather than after it (the addresses need only the block's place), so
  // a tile waits for one round trip before its first row loads, not two: 3 % on an H200.
  const detail::TileWindows windows = detail::TileWindows::load(table, sample);
  const SampleHeader h = table.header(sample);
  const int ox = static_cast<int>(blockIdx.x) * block_x + static_cast<int>(threadIdx.x);
  const int tile_y0 = static_cast<int>(blockIdx.y) * tile_rows;
  std::byte* sample_out = out + sample * sample_bytes;

  // The path is uniform per block, so no barrier is skipped.
  if (h.path == SamplePath::separable) {
    detail::separable_tile<D, L>(h, reinterpret_cast<const std::uint8_t*>(arena + h.box), sample_out, params, tile_y0,
                                 windows, table.columns(sample, static_cast<int>(blockIdx.x)),
                                 table.rows(sample, static_cast<int>(blockIdx.y)),
                                 *reinterpret_cast<detail::SeparableShared*>(shared));
  } else if (h.path == SamplePath::direct) {
    const ops::SamplePlan& p = plans[sample];
    detail::direct_tile<D, L>(p, h, reinterpret_cast<const std::uint8_t*>(arena + p.src.offset), sample_out, params, ox,
                              tile_y0, *reinterpret_cast<detail::DirectShared*>(shared));
  } else {
    constexpr int esize = static_cast<int>(dtype_size(D));
    for (int k = 0; k < tile_rows / block_y; ++k) {
      const int oy = tile_y0 + static_cast<int>(threadIdx.y) + k * block_y;
      if (ox < h.out_width && oy < h.out_height)
        for (int c = 0; c < 3; ++c)
          detail::copy_element(sample_out, arena + h.box, ops::element_index(L, c, oy, ox, h.out_height, h.out_width),
                               esize);
    }
  }
}

/// Calls `f` with the `augment_batch` instantiation for `params`' dtype and layout.
template <class F>
void with_augment_kernel(const ops::OutputParams& params, F&& f) {
  const auto pick = [&]<DType D>() {
    if (params.layout == Layout::NCHW) f(augment_batch<D, Layout::NCHW>);
    else f(augment_batch<D, Layout::NHWC>);
  };
  switch (params.dtype) {
    case DType::u8: pick.template operator()<DType::u8>(); break;
    case DType::f16: pick.template operator()<DType::f16>(); break;
    case DType::bf16: pick.template operator()<DType::bf16>(); break;
    default: pick.template operator()<DType::f32>(); break;
  }
}

/// Loads the kernels `launch_augment` runs for `params` on the current device now, so the first
/// batch does not wait for CUDA's lazy module loading.
/// @throws CudaError when they cannot be loaded.
inline void load_augment_kernels(const ops::OutputParams& params) {
  cudaFuncAttributes attributes{};
  CONVEYOR_CUDA_TRY(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(layout_taps<layout_warps>)));
  with_augment_kernel(params, [&](auto kernel) {
    CONVEYOR_CUDA_TRY(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel)));
  });
}

/// Launches `layout_taps` for `count` samples of `out_width` x `out_height` on `stream`: it
/// fills `taps`, device memory of `TapTable::bytes(count, out_width, out_height)` bytes.
/// @throws CudaError when the launch fails.
inline void launch_layout(const ops::SamplePlan* plans, std::byte* taps, std::size_t count, int out_width,
                          int out_height, cudaStream_t stream) {
  const TapTable table(taps, out_width, out_height);
  layout_taps<layout_warps><<<static_cast<unsigned>(count), dim3(block_x, layout_warps), 0, stream>>>(plans, table);
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

/// Launches `augment_batch` for `count` samples of `out_width` x `out_height` on `stream`, once
/// `launch_layout` has filled `taps` for the same plans (on `stream` before, or ordered before it
/// by an event) and until it has run (no other launch writes `taps` meanwhile). `out` is 16-byte
/// aligned (the kernel stores up to four values at once), as `cudaMalloc` leaves it.
/// @throws CudaError when the launch fails.
inline void launch_augment(const std::byte* arena, const ops::SamplePlan* plans, const std::byte* taps,
                           std::byte* out, std::size_t count, std::size_t sample_bytes,
                           const ops::OutputParams& params, int out_width, int out_height, cudaStream_t stream) {
  const TapTable table(const_cast<std::byte*>(taps), out_width, out_height);
  const dim3 grid(static_cast<unsigned>(table.tiles_x), static_cast<unsigned>(table.tiles_y),
                  static_cast<unsigned>(count));
  with_augment_kernel(params, [&](auto kernel) {
    kernel<<<grid, dim3(block_x, block_y), 0, stream>>>(arena, plans, table, out, sample_bytes, params);
  });
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
