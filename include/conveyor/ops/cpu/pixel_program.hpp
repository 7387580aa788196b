#pragma once
/// @file
/// The CPU executor of pixel programs (`ops/pixel/`): a sample's ops applied in order to its u8
/// image (after resampling, before normalisation), then the image stored normalised and converted
/// through the program's output stage (`ops/pixel/output.hpp`). The CUDA kernel
/// (`cuda/kernels/pixel_program.cuh`) runs the same op functions and gives the same bits.

#include <conveyor/config.hpp>
#include <conveyor/ops/cpu/gaussian_blur.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/pixel/output.hpp>
#include <conveyor/ops/pixel/registry.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace ops::cpu {

/// Buffers one worker reuses across samples: after the first sample of a size, running a
/// program allocates nothing.
struct PixelScratch {
  std::vector<std::uint8_t> image;  ///< the neighbourhood ops' second image
  BlurBuffers blur;                 ///< GaussianBlur's float rows
  std::vector<std::uint8_t> saved;  ///< the mixing steps' saved image (ops/pixel/mix.hpp)
  std::vector<float> sums;          ///< and their float32 sums
};

namespace detail {

/// Runs one op of the u8 image (every kind except scaled and erase) on `image`. Flattened:
/// the op functions are compiled into each CPU clone, so `fmaf` is one instruction where the
/// clone has FMA rather than a library call per tap.
#if defined(__GNUC__)
__attribute__((flatten))
#endif
CONVEYOR_CPU_CLONES inline void apply_pixel_op(const pixel::PixelOp& op, std::uint8_t* image, int width, int height,
                                               PixelScratch& scratch) {
  using pixel::OpKind;
  const std::int64_t pixels = std::int64_t{width} * height;
  pixel::visit(op.code, [&]<class Op>() {
    if constexpr (Op::kind == OpKind::point) {
      for (std::int64_t p = 0; p < pixels; ++p) Op::apply(op, image + p * 3);
    } else if constexpr (Op::kind == OpKind::statistic) {
      pixel::ImageStats stats;
      stats.pixels = pixels;
      for (std::int64_t p = 0; p < pixels; ++p) {
        const std::uint8_t* rgb = image + p * 3;
        if constexpr ((Op::statistics & pixel::gray_sum) != 0) stats.gray_sum += pixel::gray_floor(rgb);
        if constexpr ((Op::statistics & pixel::luma_sum) != 0) stats.luma_sum += pixel::pil_luma(rgb);
        if constexpr ((Op::statistics & pixel::v1_gray_sum) != 0) stats.v1_gray_sum += pixel::v1::gray(rgb);
        for (int c = 0; c < 3; ++c) {
          if constexpr ((Op::statistics & pixel::channel_min_max) != 0) {
            stats.min[c] = rgb[c] < stats.min[c] ? rgb[c] : stats.min[c];
            stats.max[c] = rgb[c] > stats.max[c] ? rgb[c] : stats.max[c];
          }
          if constexpr ((Op::statistics & pixel::channel_histogram) != 0) ++stats.histogram[c][rgb[c]];
        }
      }
      std::uint8_t lut[3][256];
      for (int c = 0; c < 3; ++c) Op::table(op, stats, c, lut[c]);
      for (std::int64_t p = 0; p < pixels; ++p)
        for (int c = 0; c < 3; ++c) image[p * 3 + c] = lut[c][image[p * 3 + c]];
    } else if constexpr (Op::kind == OpKind::neighbourhood) {
      scratch.image.resize(static_cast<std::size_t>(pixels) * 3);
      std::memcpy(scratch.image.data(), image, scratch.image.size());
      typename Op::Prepared prepared;
      Op::prepare(op, width, height, prepared);
      if constexpr (std::is_same_v<Op, pixel::GaussianBlur>)  // hundreds of taps a pixel: the vectorised pass
        gaussian_blur_image(op, prepared, scratch.image.data(), width, height, image, scratch.blur);
      else
        for (int y = 0; y < height; ++y)
          for (int x = 0; x < width; ++x)
            Op::apply(op, prepared, scratch.image.data(), width, height, x, y, image + (std::int64_t{y} * width + x) * 3);
    } else if constexpr (Op::kind == OpKind::mix) {
      scratch.saved.resize(static_cast<std::size_t>(pixels) * 3);  // a begin step writes both first (check_mixing)
      scratch.sums.resize(static_cast<std::size_t>(pixels) * 3);
      for (std::int64_t p = 0; p < pixels; ++p)
        Op::apply(op, image + p * 3, scratch.saved.data() + p * 3, scratch.sums.data() + p * 3);
    }
  });
}

}  // namespace detail

/// Applies `program`'s ops, in order and except erasing, to `image` in place: `width` x `height`
/// pixels of interleaved RGB, rows packed.
/// @throws ConfigError, before any op runs, when a record cannot run on an image of that size or
/// has a code no op has (`pixel::check`): no record reads outside the image.
inline void apply_pixel_ops(const pixel::PixelProgram& program, std::uint8_t* image, int width, int height,
                            PixelScratch& scratch) {
  pixel::check(program, width, height);
  for (int k = 0; k < program.count; ++k) detail::apply_pixel_op(program.ops[k], image, width, height, scratch);
}

/// Stores `image` (as `apply_pixel_ops` takes it) as one output sample of `params`' dtype and
/// layout through the program's output stage (`pixel::store_output`: scaled ops, normalisation,
/// erasing).
inline void store_pixels(const pixel::PixelProgram& program, const std::uint8_t* image, int width, int height,
                         const OutputParams& params, void* out) {
  const pixel::OutputOps output = pixel::output_ops(program, program.count);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const std::uint8_t* rgb = image + (std::int64_t{y} * width + x) * 3;
      for (int c = 0; c < 3; ++c)
        pixel::store_output(program, output, out, element_index(params.layout, c, y, x, height, width), rgb[c], c, x,
                            y, width, height, params);
    }
}

/// `apply_pixel_ops`, then `store_pixels`: one sample's program from its resampled u8 image to
/// its output. `image` is modified.
inline void run_pixel_program(const pixel::PixelProgram& program, std::uint8_t* image, int width, int height,
                              const OutputParams& params, void* out, PixelScratch& scratch) {
  apply_pixel_ops(program, image, width, height, scratch);
  store_pixels(program, image, width, height, params, out);
}

}  // namespace ops::cpu
}  // namespace v0
}  // namespace conveyor
