#pragma once
/// @file
/// The batch-mixing kernel: a batch's output mixed in place as its draw says, with the element
/// functions the CPU backend uses (`MixUp::blend_value`; CutMix copies), so the same bits.
///
/// One thread per element of a sample that the op touches (every element for MixUp, the box's for
/// CutMix), walking the batch: pairing i with i - 1 it carries the previous sample's unmixed value
/// down the batch (the first sample's partner is the last, read before anything is written);
/// pairing i with N - 1 - i it mixes each pair at once. No thread reads what another writes. With
/// a draw per sample (timm's 'pair' and 'elem' modes) one thread mixes one element of one pair, each
/// sample by its own draw from the slot's table in device memory.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/mix.cuh needs a CUDA compiler"
#endif

#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/batch/mixup.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/cuda/error.hpp>

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

/// The elements of one sample an op touches: all of them, or CutMix's box, as offsets in a sample.
struct MixElements {
  std::int64_t channels = 0, height = 0, width = 0;
  std::int64_t x1 = 0, y1 = 0, box_width = 0, box_height = 0;
  bool whole = true, nchw = true;

  [[nodiscard]] CONVEYOR_HD std::int64_t count() const noexcept {
    return whole ? channels * height * width : channels * box_height * box_width;
  }
  /// The offset in a sample (in elements) of the op's `t`-th element.
  [[nodiscard]] CONVEYOR_HD std::int64_t offset(std::int64_t t) const noexcept {
    if (whole) return t;
    if (nchw) {
      const std::int64_t plane = box_height * box_width, c = t / plane, y = t % plane / box_width, x = t % box_width;
      return c * height * width + (y1 + y) * width + x1 + x;
    }
    const std::int64_t row = box_width * channels, y = t / row, r = t % row;
    return (y1 + y) * width * channels + x1 * channels + r;
  }
};

template <class T, bool Blend>
__global__ void mix_batch(T* out, std::int64_t sample_elems, int count, MixElements el, bool mirror, float own,
                          float other, bool half) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= el.count()) return;
  T* x = out + el.offset(t);
  const auto mixed = [&](T a, T partner) -> T {
    if constexpr (!Blend)
      return partner;  // CutMix: the box comes from the partner
    else if constexpr (sizeof(T) == 4)
      return MixUp::blend_value(a, partner, own, other);
    else
      return MixUp::blend_value(a, partner, own, other, half);
  };
  if (mirror) {
    for (int p = 0, q = count - 1; p <= q; ++p, --q) {
      const T a = x[p * sample_elems], b = x[q * sample_elems];
      x[p * sample_elems] = mixed(a, b);
      if (q != p) x[q * sample_elems] = mixed(b, a);
    }
    return;
  }
  // Eight samples' values in flight at a time: loads of one group do not wait for its stores.
  constexpr int group = 8;
  T previous = x[std::int64_t(count - 1) * sample_elems];
  for (int i = 0; i < count; i += group) {
    T v[group];
#pragma unroll
    for (int k = 0; k < group; ++k)
      if (i + k < count) v[k] = x[std::int64_t(i + k) * sample_elems];
#pragma unroll
    for (int k = 0; k < group; ++k)
      if (i + k < count) {
        x[std::int64_t(i + k) * sample_elems] = mixed(v[k], previous);
        previous = v[k];
      }
  }
}

/// Whether element `e` of a sample (counted in elements) lies in `m`'s box.
[[nodiscard]] __device__ inline bool in_box(const MixGeometry& g, const BatchMix& m, std::int64_t e) noexcept {
  const bool chw = g.layout == Layout::NCHW;
  const std::int64_t x = chw ? e % g.width : e / g.channels % g.width;
  const std::int64_t y = chw ? e / g.width % g.height : e / (g.channels * g.width);
  return x >= m.x1 && x < m.x2 && y >= m.y1 && y < m.y2;
}

/// Element `e` of a sample, `self`, mixed with its partner's by the sample's own draw `m`.
template <class T>
[[nodiscard]] __device__ T mixed_by(const MixGeometry& g, const BatchMix& m, std::int64_t e, T self, T partner, bool half) {
  if (m.kind == BatchMix::Kind::cutmix) return in_box(g, m, e) ? partner : self;
  if (m.kind != BatchMix::Kind::mixup) return self;
  const float own = static_cast<float>(m.lam), other = static_cast<float>(1.0 - m.lam);
  if constexpr (sizeof(T) == 4)
    return MixUp::blend_value(self, partner, own, other);
  else if constexpr (sizeof(T) == 2)
    return MixUp::blend_value(self, partner, own, other, half);
  else
    return self;  // uint8 images are never blended (validated)
}

template <class T>
__global__ void mix_pairs_each(T* out, std::int64_t sample_elems, int count, MixGeometry g, const BatchMix* mixes,
                               bool half) {
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= sample_elems) return;
  const int p = static_cast<int>(blockIdx.y), q = count - 1 - p;
  T* x = out + std::int64_t(p) * sample_elems + e;
  T* y = out + std::int64_t(q) * sample_elems + e;
  const T a = *x, b = *y;
  *x = mixed_by(g, mixes[p], e, a, b, half);
  if (q != p) *y = mixed_by(g, mixes[q], e, b, a, half);
}

/// Mixes the `count` samples of `out` (`g`'s images, contiguous) as `m` says, on `stream`; with
/// `m.per_sample`, by each sample's own draw from `sample_mixes` (device memory).
inline void launch_mix(void* out, int count, const MixGeometry& g, const BatchMix& m, const BatchMix* sample_mixes,
                       cudaStream_t stream) {
  if (count <= 0) return;
  if (m.per_sample) {
    constexpr int threads = 256;
    const std::int64_t sample_elems = g.channels * g.height * g.width;
    const dim3 blocks(static_cast<unsigned>((sample_elems + threads - 1) / threads), static_cast<unsigned>((count + 1) / 2));
    const bool half = g.dtype == DType::f16;
    const std::size_t size = dtype_size(g.dtype);
    if (size == 4)
      mix_pairs_each<float><<<blocks, threads, 0, stream>>>(static_cast<float*>(out), sample_elems, count, g, sample_mixes, half);
    else if (size == 2)
      mix_pairs_each<std::uint16_t><<<blocks, threads, 0, stream>>>(static_cast<std::uint16_t*>(out), sample_elems, count, g,
                                                                     sample_mixes, half);
    else
      mix_pairs_each<std::uint8_t><<<blocks, threads, 0, stream>>>(static_cast<std::uint8_t*>(out), sample_elems, count, g,
                                                                    sample_mixes, half);
    CONVEYOR_CUDA_TRY(cudaGetLastError());
    return;
  }
  if (m.kind == BatchMix::Kind::none) return;
  MixElements el{g.channels, g.height, g.width};
  el.nchw = g.layout == Layout::NCHW;
  if (m.kind == BatchMix::Kind::cutmix) {
    el.whole = false;
    el.x1 = m.x1;
    el.y1 = m.y1;
    el.box_width = m.x2 > m.x1 ? m.x2 - m.x1 : 0;
    el.box_height = m.y2 > m.y1 ? m.y2 - m.y1 : 0;
  }
  const std::int64_t n = el.count();
  if (n == 0) return;
  constexpr int threads = 256;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  const std::int64_t sample_elems = g.channels * g.height * g.width;
  const bool mirror = m.pairing == BatchMix::Pairing::mirror, half = g.dtype == DType::f16;
  const float own = static_cast<float>(m.lam), other = static_cast<float>(1.0 - m.lam);
  const std::size_t size = dtype_size(g.dtype);
  if (m.kind == BatchMix::Kind::mixup && size == 4)
    mix_batch<float, true><<<blocks, threads, 0, stream>>>(static_cast<float*>(out), sample_elems, count, el, mirror, own, other, half);
  else if (m.kind == BatchMix::Kind::mixup)
    mix_batch<std::uint16_t, true><<<blocks, threads, 0, stream>>>(static_cast<std::uint16_t*>(out), sample_elems, count, el,
                                                                  mirror, own, other, half);
  else if (size == 4)
    mix_batch<std::uint32_t, false><<<blocks, threads, 0, stream>>>(static_cast<std::uint32_t*>(out), sample_elems, count, el,
                                                                   mirror, own, other, half);
  else if (size == 2)
    mix_batch<std::uint16_t, false><<<blocks, threads, 0, stream>>>(static_cast<std::uint16_t*>(out), sample_elems, count, el,
                                                                   mirror, own, other, half);
  else
    mix_batch<std::uint8_t, false><<<blocks, threads, 0, stream>>>(static_cast<std::uint8_t*>(out), sample_elems, count, el,
                                                                  mirror, own, other, half);
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
