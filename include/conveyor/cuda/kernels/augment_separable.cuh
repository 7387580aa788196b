#pragma once
/// @file
/// The fused augmentation kernel's separable path (`augment.cuh`), for source scales up to
/// `separable_scale`: the horizontal pass of every source row a tile needs into shared memory,
/// rounded to u8, then the vertical pass of each thread's output columns, both built around `dp2a`.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment_separable.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/tensor.hpp>
#include <conveyor/cuda/kernels/augment_layout.cuh>
#include <conveyor/cuda/kernels/augment_store.cuh>
#include <conveyor/ops/normalize.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_pipeline_primitives.h>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

namespace detail {

/// Shared memory of a separable tile: its row windows (copied from its `RowTile`) and the
/// horizontal sums of the source rows [wy.lo, wy.hi), rounded, as packed RGB (byte 3 zero).
struct SeparableShared {
  alignas(16) std::uint32_t pairs_y[tile_rows * separable_pairs];
  alignas(16) int start_y[tile_rows];
  std::uint32_t rows[separable_rows][block_x];
};

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

}  // namespace detail

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
