#pragma once
/// @file
/// The pixel-program kernel: one launch per batch applies each sample's program (`ops/pixel/`)
/// to its u8 image and stores the result through the program's output stage (scaled ops,
/// normalisation, erasing: `ops/pixel/output.hpp`),
/// calling the op functions the CPU executor calls (`ops/cpu/pixel_program.hpp`): the same bits.
///
/// One block per sample. Ops run one after the other, with a barrier between: a point op over the
/// block's pixels; a statistic op as a reduction into shared memory (integer atomics: exact in any
/// order), a table per channel made by three threads, then a pass through the tables; a
/// neighbourhood op from the image into the sample's scratch image, which then becomes the image;
/// a mixing step over the block's pixels with their saved values and sums (`mix_saved`, `mix_sums`).
/// The images stay in global memory (L1 and L2 serve the neighbourhoods), except GaussianBlur's
/// tiles (`pixel_gaussian_blur.cuh`): its hundreds of taps a pixel from global memory took a
/// whole batch period.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/kernels/pixel_program.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/tensor.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/cuda/kernels/pixel_gaussian_blur.cuh>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/pixel/output.hpp>
#include <conveyor/ops/pixel/registry.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda::kernels {

/// Threads per sample.
inline constexpr int pixel_threads = 256;

/// One batch of the pixel-program pass, all pointers device memory.
struct PixelBatch {
  const ops::pixel::PixelProgram* programs = nullptr;  ///< the slot's table, read at `copies.entry`
  std::uint8_t* images = nullptr;   ///< count x height x width x 3 u8 (NHWC): the input, overwritten
  std::uint8_t* scratch = nullptr;  ///< as large as `images` (`pixel_scratch_bytes`), overwritten
  std::uint8_t* mix_saved = nullptr;  ///< as large as `images`: the mixing steps' saved images, where programs mix
  float* mix_sums = nullptr;          ///< count x height x width x 3 float sums, where programs mix
  std::byte* out = nullptr;         ///< count samples of `sample_bytes`, in `params`' dtype and layout
  std::size_t sample_bytes = 0;
  ops::CopyRange copies{};  ///< which copies of each sample (`count` counts each copy)
  ops::OutputParams params{};
  std::int32_t width = 0;
  std::int32_t height = 0;
  std::int32_t count = 0;
};

/// The scratch a batch of `count` images of `width` x `height` needs.
[[nodiscard]] inline std::size_t pixel_scratch_bytes(std::size_t count, int width, int height) noexcept {
  return count * static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3;
}

namespace pixel_detail {

template <class Op>
constexpr std::size_t prepared_bytes() {
  if constexpr (Op::kind == ops::pixel::OpKind::neighbourhood) return sizeof(typename Op::Prepared);
  else return 1;
}
template <class... Ops>
constexpr std::size_t max_prepared_bytes(ops::pixel::OpList<Ops...>) {
  std::size_t m = 1;
  ((m = prepared_bytes<Ops>() > m ? prepared_bytes<Ops>() : m), ...);
  return m;
}
inline constexpr std::size_t prepared_storage_bytes = max_prepared_bytes(ops::pixel::PixelOps{});

/// The block's image statistics for `Op`, into `s`.
template <class Op>
__device__ void reduce_statistics(const std::uint8_t* image, std::int64_t pixels, ops::pixel::ImageStats& s) {
  using namespace ops::pixel;
  const int tid = static_cast<int>(threadIdx.x);
  for (int i = tid; i < 3 * 256; i += blockDim.x) (&s.histogram[0][0])[i] = 0;
  if (tid == 0) {
    s.gray_sum = 0;
    s.luma_sum = 0;
    s.v1_gray_sum = 0;
    for (int c = 0; c < 3; ++c) s.min[c] = 255, s.max[c] = 0;
    s.pixels = pixels;
  }
  __syncthreads();
  unsigned long long gray = 0, luma = 0, v1_gray = 0;
  int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
  for (std::int64_t p = tid; p < pixels; p += blockDim.x) {
    const std::uint8_t* rgb = image + p * 3;
    if constexpr ((Op::statistics & gray_sum) != 0) gray += gray_floor(rgb);
    if constexpr ((Op::statistics & luma_sum) != 0) luma += pil_luma(rgb);
    if constexpr ((Op::statistics & v1_gray_sum) != 0) v1_gray += v1::gray(rgb);
    for (int c = 0; c < 3; ++c) {
      if constexpr ((Op::statistics & channel_min_max) != 0) {
        lo[c] = rgb[c] < lo[c] ? rgb[c] : lo[c];
        hi[c] = rgb[c] > hi[c] ? rgb[c] : hi[c];
      }
      if constexpr ((Op::statistics & channel_histogram) != 0) atomicAdd(&s.histogram[c][rgb[c]], 1u);
    }
  }
  if constexpr ((Op::statistics & gray_sum) != 0) atomicAdd(reinterpret_cast<unsigned long long*>(&s.gray_sum), gray);
  if constexpr ((Op::statistics & luma_sum) != 0) atomicAdd(reinterpret_cast<unsigned long long*>(&s.luma_sum), luma);
  if constexpr ((Op::statistics & v1_gray_sum) != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(&s.v1_gray_sum), v1_gray);
  if constexpr ((Op::statistics & channel_min_max) != 0)
    for (int c = 0; c < 3; ++c) {
      atomicMin(&s.min[c], lo[c]);
      atomicMax(&s.max[c], hi[c]);
    }
  __syncthreads();
}

}  // namespace pixel_detail

/// One block of `Threads` per sample of `b`: the program's ops in order, then the output stage.
template <int Threads>
__global__ void __launch_bounds__(Threads) pixel_program_batch(PixelBatch b) {
  using namespace ops::pixel;
  // Raw storage: __shared__ variables cannot have constructors, and ImageStats has member defaults.
  __shared__ alignas(16) unsigned char stats_storage[sizeof(ImageStats)];
  __shared__ alignas(16) unsigned char prepared_storage[pixel_detail::prepared_storage_bytes];
  __shared__ std::uint8_t lut[3][256];
  __shared__ BlurShared blur;
  ImageStats& stats = *reinterpret_cast<ImageStats*>(stats_storage);

  const int tid = static_cast<int>(threadIdx.x), sample = static_cast<int>(blockIdx.x);
  const int width = b.width, height = b.height;
  const std::int64_t pixels = std::int64_t{width} * height;
  const PixelProgram& program = b.programs[b.copies.entry(sample)];
  const int count = program.count < 0 ? 0 : (program.count > max_program_ops ? max_program_ops : program.count);
  std::uint8_t* image = b.images + sample * pixels * 3;
  std::uint8_t* other = b.scratch + sample * pixels * 3;
  // The mixing buffers exist where the pipeline's transforms can mix (ProgramSamples::mixes): a
  // program that mixes without them runs none of its ops rather than write where nothing is.
  const bool runs = b.mix_saved != nullptr || !mixes(program);

  // Every branch below is uniform per block (one program), so no barrier is skipped.
  for (int k = 0; runs && k < count; ++k) {
    const PixelOp op = program.ops[k];
    visit(op.code, [&]<class Op>() {
      if constexpr (Op::kind == OpKind::point) {
        for (std::int64_t p = tid; p < pixels; p += blockDim.x) Op::apply(op, image + p * 3);
      } else if constexpr (Op::kind == OpKind::statistic) {
        pixel_detail::reduce_statistics<Op>(image, pixels, stats);
        if (tid < 3) Op::table(op, stats, tid, lut[tid]);
        __syncthreads();
        for (std::int64_t i = tid; i < pixels * 3; i += blockDim.x) image[i] = lut[i % 3][image[i]];
      } else if constexpr (Op::kind == OpKind::neighbourhood) {
        auto& prepared = *reinterpret_cast<typename Op::Prepared*>(prepared_storage);
        if (tid == 0) Op::prepare(op, width, height, prepared);
        __syncthreads();
        if constexpr (std::is_same_v<Op, ops::pixel::GaussianBlur>)  // hundreds of taps a pixel: tiles in shared memory
          gaussian_blur_block(op, prepared, image, width, height, other, blur);
        else
          for (std::int64_t p = tid; p < pixels; p += blockDim.x)
            Op::apply(op, prepared, image, width, height, static_cast<int>(p % width), static_cast<int>(p / width),
                      other + p * 3);
        std::uint8_t* done = other;
        other = image;
        image = done;
      } else if constexpr (Op::kind == OpKind::mix) {
        std::uint8_t* saved = b.mix_saved + sample * pixels * 3;
        float* sums = b.mix_sums + sample * pixels * 3;
        for (std::int64_t p = tid; p < pixels; p += blockDim.x) Op::apply(op, image + p * 3, saved + p * 3, sums + p * 3);
      }
    });
    __syncthreads();
  }

  const OutputOps output = output_ops(program, count);
  std::byte* out = b.out + b.copies.output(sample, b.sample_bytes);
  const bool nchw = b.params.layout == Layout::NCHW;
  for (std::int64_t e = tid; e < pixels * 3; e += blockDim.x) {  // in output order: coalesced stores
    const int c = static_cast<int>(nchw ? e / pixels : e % 3);
    const std::int64_t p = nchw ? e % pixels : e / 3;
    store_output(program, output, out, e, image[p * 3 + c], c, static_cast<int>(p % width), static_cast<int>(p / width),
                 width, height, b.params);
  }
}

/// Loads `pixel_program_batch` on the current device now, so the first batch does not wait for
/// CUDA's lazy module loading.
/// @throws CudaError when it cannot be loaded.
inline void load_pixel_program_kernel() {
  cudaFuncAttributes attributes{};
  CONVEYOR_CUDA_TRY(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(pixel_program_batch<pixel_threads>)));
}

/// Launches `pixel_program_batch` for `b.count` samples on `stream`. Never blocks.
/// @throws CudaError when the launch fails.
inline void launch_pixel_program(const PixelBatch& b, cudaStream_t stream) {
  if (b.count <= 0) return;
  pixel_program_batch<pixel_threads><<<static_cast<unsigned>(b.count), pixel_threads, 0, stream>>>(b);
  CONVEYOR_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda::kernels
}  // namespace v0
}  // namespace conveyor
