#pragma once
/// @file
/// The CPU backend's resample-flip-normalize loop for one sample. Separable: each source row the
/// output needs is filtered horizontally once (and rounded to u8), then the columns are combined,
/// with `ops/resample.hpp`'s weights and integer arithmetic, so results equal the kernel's.

#include <conveyor/config.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/resample.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace ops::cpu {

/// Buffers reused across samples by one worker.
struct ResampleScratch {
  std::vector<AxisTaps> tx, ty;
  std::vector<std::int32_t> wx, wy;  // fixed-point weights, taps of pixel o at [w_at[o], w_at[o] + count)
  std::vector<std::int32_t> wx_at, wy_at;
  std::vector<std::uint8_t> rows;    // horizontal sums: needed source rows x out_width x 3
  std::vector<std::int32_t> sums;    // one output row's vertical sums, out_width x 3
};

namespace detail {

/// The taps and fixed-point weights of `n` output pixels of axis `a`; returns the axis' precision.
inline int axis_weights(const AxisPlan& a, std::int32_t n, std::vector<AxisTaps>& taps, std::vector<std::int32_t>& w,
                        std::vector<std::int32_t>& at) {
  const int precision = axis_precision(a);
  taps.resize(n);
  at.resize(n);
  w.clear();
  for (std::int32_t o = 0; o < n; ++o) {
    taps[o] = axis_taps(a, o);
    at[o] = static_cast<std::int32_t>(w.size());
    for (std::int32_t j = 0; j < taps[o].count; ++j) w.push_back(fixed_weight(tap_weight(taps[o], j), precision));
  }
  return precision;
}

}  // namespace detail

/// Writes one output sample (3 x H x W or H x W x 3 elements of `params.dtype`) to `out` from the
/// source pixels at `src` (the buffer `plan.src` is relative to).
CONVEYOR_CPU_CLONES inline void resample(const std::uint8_t* src, const SamplePlan& plan, const OutputParams& params,
                                         void* out, ResampleScratch& s) {
  const std::int32_t ow = plan.out_width, oh = plan.out_height;
  const int px = detail::axis_weights(plan.x, ow, s.tx, s.wx, s.wx_at);
  const int py = detail::axis_weights(plan.y, oh, s.ty, s.wy, s.wy_at);

  // Source rows any output row reads, relative to plan.y.src_begin.
  std::int32_t row_lo = INT32_MAX, row_hi = 0;
  for (const AxisTaps& t : s.ty)
    if (t.count > 0) {
      row_lo = std::min(row_lo, t.first);
      row_hi = std::max(row_hi, t.first + t.count);
    }
  if (row_lo > row_hi) row_lo = row_hi = 0;  // all padding
  const std::int64_t row_elems = std::int64_t{ow} * 3;
  s.rows.resize(static_cast<std::size_t>((row_hi - row_lo) * row_elems));

  const std::uint8_t* base = src + plan.src.offset;
  const std::int64_t xs = plan.src.x_stride;
  for (std::int32_t r = row_lo; r < row_hi; ++r) {
    const std::uint8_t* line = base + std::int64_t{plan.y.src_begin + r} * plan.src.y_stride;
    std::uint8_t* dst = s.rows.data() + (r - row_lo) * row_elems;
    for (std::int32_t ox = 0; ox < ow; ++ox) {
      const AxisTaps& t = s.tx[ox];
      const std::uint8_t* first = line + std::int64_t{plan.x.src_begin + t.first} * xs;
      const std::int32_t* w = s.wx.data() + s.wx_at[ox];
      std::int32_t a0 = fixed_half(px), a1 = a0, a2 = a0;
      for (std::int32_t j = 0; j < t.count; ++j, first += xs) {
        a0 += w[j] * first[0];
        a1 += w[j] * first[1];
        a2 += w[j] * first[2];
      }
      dst[ox * 3] = fixed_to_u8(a0, px);
      dst[ox * 3 + 1] = fixed_to_u8(a1, px);
      dst[ox * 3 + 2] = fixed_to_u8(a2, px);
    }
  }

  // Vertical pass a whole row of sums at a time (a loop the compiler vectorises), then stored.
  s.sums.resize(static_cast<std::size_t>(row_elems));
  std::int32_t* sums = s.sums.data();
  for (std::int32_t oy = 0; oy < oh; ++oy) {
    const AxisTaps& t = s.ty[oy];
    const std::int32_t* w = s.wy.data() + s.wy_at[oy];
    // Padding rows (no taps) sum to half a unit: 0, as torchvision's CenterCrop pads.
    std::fill(sums, sums + row_elems, fixed_half(py));
    for (std::int32_t j = 0; j < t.count; ++j) {
      const std::uint8_t* row = s.rows.data() + (t.first + j - row_lo) * row_elems;
      for (std::int64_t e = 0; e < row_elems; ++e) sums[e] += w[j] * row[e];
    }
    for (std::int32_t ox = 0; ox < ow; ++ox) {
      const std::int32_t dx = plan.flip ? ow - 1 - ox : ox;
      for (int c = 0; c < 3; ++c)
        store(out, element_index(params.layout, c, oy, dx, oh, ow), fixed_to_u8(sums[ox * 3 + c], py), c, params);
    }
  }
}

}  // namespace ops::cpu
}  // namespace v0
}  // namespace conveyor
