#pragma once
/// @file
/// The fused augmentation kernel: one launch per batch turns every sample's decoded region into
/// its output (resample, flip, normalise, convert, store) with the CPU backend's weights and
/// integer arithmetic (`ops/resample.hpp`), so the bits are the same.
///
/// Each block makes a 32 x 64 tile of one sample. Usually (source scale <= 3.5 on both axes; DCT-
/// scaled decoding leaves at most 2) it runs separably like the CPU: the horizontal pass of every
/// source row the tile needs goes to shared memory once, rounded to u8, then each thread combines
/// the rows of its output pixels (up to four adjacent columns, see `vertical_columns`). The other
/// filters, and larger scales, take the general path (the same two passes with 32-bit weights,
/// 32 output rows at a time) while their windows fit it, else the per-pixel path; all give the
/// same bits. Every pixel
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
///
/// Its parts: the tap layout (`augment_layout.cuh`), the separable path (`augment_separable.cuh`),
/// the general path (`augment_general.cuh`), the per-pixel path (`augment_direct.cuh`) and the store (`augment_store.cuh`); this file holds
/// the kernel that picks a path per sample, and its launches.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/augment.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/tensor.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/cuda/kernels/augment_direct.cuh>
#include <conveyor/cuda/kernels/augment_general.cuh>
#include <conveyor/cuda/kernels/augment_layout.cuh>
#include <conveyor/cuda/kernels/augment_separable.cuh>
#include <conveyor/cuda/kernels/augment_store.cuh>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

namespace detail {

inline constexpr std::size_t shared_bytes =
    std::max({sizeof(SeparableShared), sizeof(GeneralShared), sizeof(DirectShared)});

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
/// filled `table` for the same plans and `copies` (where a sample's plan is and its output goes). Six blocks per SM (40 registers, a few values spilled
/// outside the tap loops): on an H200, 70-71 us a bf16 batch against 76 at five blocks (48
/// registers, fewer spills); 135 against 142 and 158 at four in an earlier form.
template <DType D, Layout L>
__global__ void __launch_bounds__(block_x* block_y, 6)
    augment_batch(const std::byte* __restrict__ arena, const ops::SamplePlan* __restrict__ plans, TapTable table,
                  std::byte* __restrict__ out, std::size_t sample_bytes, ops::OutputParams params,
                  ops::CopyRange copies) {
  // Raw storage: __shared__ variables cannot have constructors, and AxisTaps has member defaults.
  __shared__ alignas(16) unsigned char shared[detail::shared_bytes];

  const int sample = static_cast<int>(blockIdx.z);
  // Loaded with the header rather than after it (the addresses need only the block's place), so
  // a tile waits for one round trip before its first row loads, not two: 3 % on an H200.
  const detail::TileWindows windows = detail::TileWindows::load(table, sample);
  const SampleHeader h = table.header(sample);
  const int ox = static_cast<int>(blockIdx.x) * block_x + static_cast<int>(threadIdx.x);
  const int tile_y0 = static_cast<int>(blockIdx.y) * tile_rows;
  std::byte* sample_out = out + copies.output(sample, sample_bytes);

  // The path is uniform per block, so no barrier is skipped.
  if (h.path == SamplePath::separable) {
    detail::separable_tile<D, L>(h, reinterpret_cast<const std::uint8_t*>(arena + h.box), sample_out, params, tile_y0,
                                 windows, table.columns(sample, static_cast<int>(blockIdx.x)),
                                 table.rows(sample, static_cast<int>(blockIdx.y)),
                                 *reinterpret_cast<detail::SeparableShared*>(shared));
  } else if (h.path == SamplePath::general) {
    const ops::SamplePlan& p = plans[copies.entry(sample)];
    detail::general_tile<D, L>(p, h, reinterpret_cast<const std::uint8_t*>(arena + p.src.offset), sample_out, params,
                               ox, tile_y0, *reinterpret_cast<detail::GeneralShared*>(shared));
  } else if (h.path == SamplePath::direct) {
    const ops::SamplePlan& p = plans[copies.entry(sample)];
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

/// Launches `layout_taps` for `count` samples of `out_width` x `out_height` on `stream` (the
/// copies `copies` names of each: `count * copies.count` in all): it fills `taps`, device memory
/// of `TapTable::bytes(count * copies.count, out_width, out_height)` bytes.
/// @throws CudaError when the launch fails.
inline void launch_layout(const ops::SamplePlan* plans, std::byte* taps, std::size_t count, int out_width,
                          int out_height, cudaStream_t stream, ops::CopyRange copies = {}) {
  const TapTable table(taps, out_width, out_height);
  const auto blocks = static_cast<unsigned>(count * static_cast<std::size_t>(copies.count));
  layout_taps<layout_warps><<<blocks, dim3(block_x, layout_warps), 0, stream>>>(plans, table, copies);
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

/// Launches `augment_batch` for `count` samples of `out_width` x `out_height` on `stream`, once
/// `launch_layout` has filled `taps` for the same plans (on `stream` before, or ordered before it
/// by an event) and until it has run (no other launch writes `taps` meanwhile). `out` is 16-byte
/// aligned (the kernel stores up to four values at once), as `cudaMalloc` leaves it, and so is
/// each copy's place when `copies` names several.
/// @throws CudaError when the launch fails.
inline void launch_augment(const std::byte* arena, const ops::SamplePlan* plans, const std::byte* taps,
                           std::byte* out, std::size_t count, std::size_t sample_bytes,
                           const ops::OutputParams& params, int out_width, int out_height, cudaStream_t stream,
                           ops::CopyRange copies = {}) {
  const TapTable table(const_cast<std::byte*>(taps), out_width, out_height);
  const dim3 grid(static_cast<unsigned>(table.tiles_x), static_cast<unsigned>(table.tiles_y),
                  static_cast<unsigned>(count * static_cast<std::size_t>(copies.count)));
  with_augment_kernel(params, [&](auto kernel) {
    kernel<<<grid, dim3(block_x, block_y), 0, stream>>>(arena, plans, table, out, sample_bytes, params, copies);
  });
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
