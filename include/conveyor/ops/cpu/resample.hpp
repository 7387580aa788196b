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
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace conveyor {
inline namespace v0 {
namespace ops::cpu {

/// Buffers reused across samples by one worker.
struct ResampleScratch {
  std::vector<AxisTaps> tx, ty;
  std::vector<std::int32_t> wx, wy;  // fixed-point weights, taps of pixel o at [w_at[o], w_at[o] + count)
  std::vector<std::int32_t> wx_at, wy_at;
  std::vector<std::int16_t> wx_pairs;     // per output column, its taps two at a time (see `pair_weights`)
  std::vector<std::int32_t> wx_pairs_at;  // column o's pairs from wx_pairs[8 * wx_pairs_at[o]], or -1: scalar
  std::vector<std::uint8_t> wx_split;     // column o's weights split in 11-bit halves (Pillow's 22-bit ones)
  std::vector<std::uint8_t> rows;    // horizontal sums: needed source rows x out_width x 3
  std::vector<std::int32_t> sums;    // one output row's vertical sums, out_width x 3
  std::vector<std::uint8_t> bytes;   // the same row rounded
};

namespace detail {

/// The taps and fixed-point weights of `n` output pixels of axis `a`; returns the axis' precision.
inline int axis_weights(const AxisPlan& a, std::int32_t n, std::vector<AxisTaps>& taps, std::vector<std::int32_t>& w,
                        std::vector<std::int32_t>& at) {
  const int precision = axis_precision(a);
  taps.resize(std::size_t(n));
  at.resize(std::size_t(n));
  w.clear();
  for (std::size_t o = 0; o < taps.size(); ++o) {
    taps[o] = axis_taps(a, static_cast<std::int32_t>(o));
    at[o] = static_cast<std::int32_t>(w.size());
    for (std::int32_t j = 0; j < taps[o].count; ++j) w.push_back(fixed_weight(tap_weight(taps[o], j), precision));
  }
  return precision;
}

#if defined(__SSE2__)
/// Lays out the weights of the columns whose horizontal sums `pair_sums` can make: per pair of
/// taps j, j + 1, eight int16 `w_j w_j+1 w_j w_j+1 w_j w_j+1 0 0` (an odd count's last pair
/// has w_j+1 = 0). `pair_sums` reads 8 bytes a pair, 2 of them from pixel j + 2, so a column
/// qualifies when that pixel is inside the source row and pixels are 3 bytes apart; the others
/// (`at[o]` = -1) take the scalar loop. Weights that do not fit int16 (Pillow's, up to 2^22, signed
/// where a lobe is negative) are split, `w = hi * 2^11 + lo` with lo in [0, 2^11): the column's
/// pairs of `hi`, then those of `lo` (`split[o]`), each half's products fitting `madd`'s 16 bits;
/// torch's `weight_precision` keeps its weights within int16.
inline void pair_weights(const SamplePlan& plan, const std::vector<AxisTaps>& taps, const std::vector<std::int32_t>& w,
                         const std::vector<std::int32_t>& w_at, std::vector<std::int16_t>& pairs,
                         std::vector<std::int32_t>& at, std::vector<std::uint8_t>& split) {
  at.assign(taps.size(), -1);
  split.assign(taps.size(), 0);
  pairs.clear();
  if (plan.src.x_stride != 3) return;
  for (std::size_t o = 0; o < taps.size(); ++o) {
    const AxisTaps& t = taps[o];
    const std::int32_t count = t.count, npairs = (count + 1) / 2;
    if (count == 0 || plan.x.src_begin + t.first + 2 * npairs >= plan.src.width) continue;
    const std::int32_t* wo = w.data() + w_at[o];
    const bool fits = std::all_of(wo, wo + count, [](std::int32_t v) { return v >= INT16_MIN && v <= INT16_MAX; });
    if (!fits && !std::all_of(wo, wo + count, [](std::int32_t v) { return v >= -(1 << 26) && v < (1 << 26); }))
      continue;  // the high halves would not fit int16 either
    at[o] = static_cast<std::int32_t>(pairs.size() / 8);
    split[o] = fits ? 0 : 1;
    const auto weight = [&](std::int32_t j, int half) -> std::int16_t {  // half 0: whole (or hi), 1: lo
      const std::int32_t v = j < count ? wo[j] : 0;
      if (fits) return static_cast<std::int16_t>(v);
      return static_cast<std::int16_t>(half == 0 ? v >> 11 : v & 0x7FF);
    };
    for (int half = 0; half < (fits ? 1 : 2); ++half)
      for (std::int32_t m = 0; m < npairs; ++m) {
        const std::int16_t a = weight(2 * m, half), b = weight(2 * m + 1, half);
        pairs.insert(pairs.end(), {a, b, a, b, a, b, 0, 0});
      }
  }
}

/// One output pixel's horizontal sums (red, green, blue, 0) of `npairs` pairs of taps from `p`
/// (3-byte pixels) with `pair_weights`' weights `w`, on top of `acc`: per pair, the 8 bytes from
/// tap j widened to 16 bits, interleaved with themselves three lanes on (r_j r_j+1 g_j g_j+1
/// b_j b_j+1 ..), then one multiply-add of 16-bit pairs into 32-bit sums.
inline __m128i pair_sums(const std::uint8_t* p, const std::int16_t* w, std::int32_t npairs, __m128i acc) {
  const __m128i zero = _mm_setzero_si128();
  for (std::int32_t m = 0; m < npairs; ++m, p += 6, w += 8) {
    std::int64_t bytes;
    std::memcpy(&bytes, p, sizeof bytes);
    const __m128i v = _mm_unpacklo_epi8(_mm_cvtsi64_si128(bytes), zero);
    const __m128i channels = _mm_unpacklo_epi16(v, _mm_srli_si128(v, 6));
    acc = _mm_add_epi32(acc, _mm_madd_epi16(channels, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
  }
  return acc;
}
#endif

/// One output row's horizontal pass over a source row whose box-relative column `col0` is at
/// `at0` (pixels `xs` bytes apart), into `dst` (out_width x 3 bytes): the SSE pairs where
/// `s.wx_pairs_at` has them, else the scalar loop.
inline void horizontal_row(const std::uint8_t* at0, std::int64_t xs, std::int32_t col0, std::uint8_t* dst,
                           const ResampleScratch& s, int px) {
#if defined(__SSE2__)
  const __m128i half = _mm_set1_epi32(fixed_half(px)), shift = _mm_cvtsi32_si128(px), zero = _mm_setzero_si128();
#endif
  for (std::size_t ox = 0; ox < s.tx.size(); ++ox) {
    const AxisTaps& t = s.tx[ox];
    const std::uint8_t* first = at0 + std::int64_t{t.first - col0} * xs;
#if defined(__SSE2__)
    if (const std::int32_t at = s.wx_pairs_at[ox]; at >= 0) {
      const std::int16_t* w = s.wx_pairs.data() + 8 * std::size_t(at);
      const std::int32_t npairs = (t.count + 1) / 2;
      __m128i sums = half;
      if (s.wx_split[ox]) {  // sum(w p) = 2^11 sum(hi p) + sum(lo p), exactly
        const __m128i high = pair_sums(first, w, npairs, zero);
        sums = pair_sums(first, w + 8 * std::size_t(npairs), npairs, _mm_add_epi32(_mm_slli_epi32(high, 11), half));
      } else {
        sums = pair_sums(first, w, npairs, half);
      }
      // Shifted, then saturated to [0, 255] twice over (32 -> 16 -> 8 bits): `fixed_to_u8`.
      const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(_mm_sra_epi32(sums, shift), zero), zero);
      const auto rgb0 = static_cast<std::uint32_t>(_mm_cvtsi128_si32(bytes));
      std::memcpy(dst + ox * 3, &rgb0, 3);
      continue;
    }
#endif
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

/// The span [lo, hi) of box-relative source indices that taps `t` read ([0, 0) if none).
inline std::array<std::int32_t, 2> tap_span(const std::vector<AxisTaps>& t) {
  std::int32_t lo = INT32_MAX, hi = 0;
  for (const AxisTaps& a : t)
    if (a.count > 0) lo = std::min(lo, a.first), hi = std::max(hi, a.first + a.count);
  return lo > hi ? std::array<std::int32_t, 2>{0, 0} : std::array<std::int32_t, 2>{lo, hi};
}

}  // namespace detail

/// Writes one output sample (3 x H x W or H x W x 3 elements of `params.dtype`) to `out` from the
/// source pixels at `src` (the buffer `plan.src` is relative to).
CONVEYOR_CPU_CLONES inline void resample(const std::uint8_t* src, const SamplePlan& plan, const OutputParams& params,
                                         void* out, ResampleScratch& s) {
  const std::int32_t ow = plan.out_width, oh = plan.out_height;
  const int px = detail::axis_weights(plan.x, ow, s.tx, s.wx, s.wx_at);
  const int py = detail::axis_weights(plan.y, oh, s.ty, s.wy, s.wy_at);
  const std::int64_t row_elems = std::int64_t{ow} * 3;
  const std::uint8_t* base = src + plan.src.offset;
  const std::int64_t xs = plan.src.x_stride, ys = plan.src.y_stride;
  const bool columns_first = vertical_first(plan);
  s.sums.resize(static_cast<std::size_t>(row_elems));
  s.bytes.resize(static_cast<std::size_t>(row_elems));
  std::int32_t* sums = s.sums.data();
  std::uint8_t* bytes = s.bytes.data();

  // Rows first (torch, the kernel, Pillow mostly): each source row the output reads, filtered
  // horizontally once into `rows` (relative to plan.y.src_begin, from row_lo).
  // Columns first (Pillow, `vertical_first`): each output row's source columns are filtered
  // vertically into one packed row (in `rows`, from col_lo), then horizontally, without the SSE
  // pairs (made for torch's weights).
  const std::array<std::int32_t, 2> rows = columns_first ? std::array<std::int32_t, 2>{0, 0} : detail::tap_span(s.ty);
  const std::array<std::int32_t, 2> cols = columns_first ? detail::tap_span(s.tx) : std::array<std::int32_t, 2>{0, 0};
  const std::int32_t row_lo = rows[0], row_hi = rows[1], col_lo = cols[0], col_hi = cols[1];
  s.rows.resize(static_cast<std::size_t>((row_hi - row_lo) * row_elems + (col_hi - col_lo) * 3));
#if defined(__SSE2__)
  if (!columns_first) detail::pair_weights(plan, s.tx, s.wx, s.wx_at, s.wx_pairs, s.wx_pairs_at, s.wx_split);
  else s.wx_pairs_at.assign(s.tx.size(), -1);
#else
  s.wx_pairs_at.assign(s.tx.size(), -1);
#endif
  for (std::int32_t r = row_lo; r < row_hi; ++r) {
    const std::uint8_t* line = base + std::int64_t{plan.y.src_begin + r} * ys + std::int64_t{plan.x.src_begin} * xs;
    detail::horizontal_row(line, xs, 0, s.rows.data() + (r - row_lo) * row_elems, s, px);
  }

  // Output row `oy`, rounded, into `bytes`: its vertical pass (padding rows sum to half a unit:
  // 0, as torchvision's CenterCrop pads), after or before the horizontal one.
  const auto output_row = [&](std::int32_t oy) {
    const AxisTaps& t = s.ty[std::size_t(oy)];
    const std::int32_t* w = s.wy.data() + s.wy_at[std::size_t(oy)];
    if (!columns_first) {
      std::fill(sums, sums + row_elems, fixed_half(py));
      for (std::int32_t j = 0; j < t.count; ++j) {
        const std::uint8_t* row = s.rows.data() + (t.first + j - row_lo) * row_elems;
        for (std::int64_t e = 0; e < row_elems; ++e) sums[e] += w[j] * row[e];
      }
      for (std::int64_t e = 0; e < row_elems; ++e) bytes[e] = fixed_to_u8(sums[e], py);
      return;
    }
    if (t.count == 0) {
      std::fill(bytes, bytes + row_elems, std::uint8_t{0});
      return;
    }
    for (std::int32_t x = col_lo; x < col_hi; ++x)
      for (int c = 0; c < 3; ++c) {
        const std::uint8_t* p = base + std::int64_t{plan.y.src_begin + t.first} * ys +
                                std::int64_t{plan.x.src_begin + x} * xs + c;
        std::int32_t sum = fixed_half(py);
        for (std::int32_t j = 0; j < t.count; ++j, p += ys) sum += w[j] * *p;
        s.rows[std::size_t(x - col_lo) * 3 + std::size_t(c)] = fixed_to_u8(sum, py);
      }
    detail::horizontal_row(s.rows.data(), 3, col_lo, bytes, s, px);
  };

  // Each output row stored channel by channel (NCHW) or pixel by pixel (NHWC) with the dtype's
  // conversion known at compile time: `store`'s arithmetic, and for f16 and bf16 a table of each
  // channel's 256 values made by `store` itself, so the bits are `store`'s either way.
  const auto vertical = [&]<class T>(auto&& value) {  // value(channel, byte) -> T
    T* o = static_cast<T*>(out);
    for (std::int32_t oy = 0; oy < oh; ++oy) {
      output_row(oy);
      const std::int32_t dy = plan.flip_y ? oh - 1 - oy : oy;
      if (params.layout == Layout::NCHW) {
        for (int c = 0; c < 3; ++c) {
          T* line = o + (std::int64_t{c} * oh + dy) * ow;
          if (plan.flip)
            for (std::int32_t ox = 0; ox < ow; ++ox) line[ow - 1 - ox] = value(c, bytes[ox * 3 + c]);
          else
            for (std::int32_t ox = 0; ox < ow; ++ox) line[ox] = value(c, bytes[ox * 3 + c]);
        }
      } else {
        T* line = o + std::int64_t{dy} * row_elems;
        for (std::int32_t ox = 0; ox < ow; ++ox) {
          const std::int64_t at = std::int64_t{plan.flip ? ow - 1 - ox : ox} * 3;
          for (int c = 0; c < 3; ++c) line[at + c] = value(c, bytes[ox * 3 + c]);
        }
      }
    }
  };
  // A converted element depends only on its channel and u8 value: 3 x 256 of them, made once by
  // `store` (the kernel's own conversion, so the same bits), then looked up.
  const auto converted = [&]<class T>() {
    T table[3][256];
    for (int c = 0; c < 3; ++c)
      for (int v = 0; v < 256; ++v) store(&table[c][v], 0, static_cast<std::uint8_t>(v), c, params);
    vertical.template operator()<T>([&](int c, std::uint8_t v) { return table[c][v]; });
  };
  switch (params.dtype) {
    case DType::u8: vertical.template operator()<std::uint8_t>([](int, std::uint8_t v) { return v; }); break;
    case DType::f32: converted.template operator()<float>(); break;
    case DType::f16:
    case DType::bf16: converted.template operator()<std::uint16_t>(); break;
    default: break;  // i64 is not an image dtype (ImageAugment refuses it)
  }
}

}  // namespace ops::cpu
}  // namespace v0
}  // namespace conveyor
