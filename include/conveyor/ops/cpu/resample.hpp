#pragma once
/// @file
/// The CPU backend's resample-flip-normalize loop for one sample. Separable: each source row the
/// output needs is filtered horizontally once (and rounded), then the columns are combined. The
/// per-pixel arithmetic is `ops/resample.hpp`'s, in the kernel's order, so results are identical.

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
  std::vector<float> wx, wy;         // normalised weights, taps of pixel o at [w_at[o], w_at[o] + count)
  std::vector<std::int32_t> wx_at, wy_at;
  std::vector<float> rows;           // horizontal sums: needed source rows x out_width x 3
};

namespace detail {

inline void axis_weights(const AxisPlan& a, std::int32_t n, std::vector<AxisTaps>& taps, std::vector<float>& w,
                         std::vector<std::int32_t>& at) {
  taps.resize(n);
  at.resize(n);
  w.clear();
  for (std::int32_t o = 0; o < n; ++o) {
    taps[o] = axis_taps(a, o);
    at[o] = static_cast<std::int32_t>(w.size());
    for (std::int32_t j = 0; j < taps[o].count; ++j) w.push_back(tap_weight(taps[o], j));
  }
}

}  // namespace detail

/// Writes one output sample (3 x H x W or H x W x 3 elements of `params.dtype`) to `out` from the
/// source pixels at `src` (the buffer `plan.src` is relative to).
CONVEYOR_CPU_CLONES inline void resample(const std::uint8_t* src, const SamplePlan& plan, const OutputParams& params, void* out,
                     ResampleScratch& s) {
  const std::int32_t ow = plan.out_width, oh = plan.out_height;
  detail::axis_weights(plan.x, ow, s.tx, s.wx, s.wx_at);
  detail::axis_weights(plan.y, oh, s.ty, s.wy, s.wy_at);

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
  for (std::int32_t r = row_lo; r < row_hi; ++r) {
    const std::uint8_t* line = base + std::int64_t{plan.y.src_begin + r} * plan.src.y_stride;
    float* dst = s.rows.data() + (r - row_lo) * row_elems;
    for (std::int32_t ox = 0; ox < ow; ++ox) {
      const AxisTaps& t = s.tx[ox];
      const std::uint8_t* first = line + std::int64_t{plan.x.src_begin + t.first} * plan.src.x_stride;
      const float* w = s.wx.data() + s.wx_at[ox];
      row_sum(first, plan.src.x_stride, t.count, w, dst + ox * 3);
    }
  }

  for (std::int32_t oy = 0; oy < oh; ++oy) {
    const AxisTaps& t = s.ty[oy];
    const float* w = s.wy.data() + s.wy_at[oy];
    for (std::int32_t ox = 0; ox < ow; ++ox) {
      const std::int32_t dx = plan.flip ? ow - 1 - ox : ox;
      for (int c = 0; c < 3; ++c) {
        float acc = 0.0f;
        for (std::int32_t j = 0; j < t.count; ++j)
          acc = fmaf(w[j], s.rows[(t.first + j - row_lo) * row_elems + ox * 3 + c], acc);
        store(out, element_index(params.layout, c, oy, dx, oh, ow), to_u8(acc), c, params);
      }
    }
  }
}

}  // namespace ops::cpu
}  // namespace v0
}  // namespace conveyor
