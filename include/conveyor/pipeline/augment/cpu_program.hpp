#pragma once
/// @file
/// A sample's pixel program on the CPU: its window resampled into its program image
/// (program_image.hpp), the program's ops run on it, then the image normalised, converted and
/// stored with the program's erasing (`ops/cpu/pixel_program.hpp`, the function the GPU kernel
/// matches bit for bit).

#include <conveyor/config.hpp>
#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/pipeline/augment/program_image.hpp>
#include <conveyor/pipeline/augment/workspace.hpp>

#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// Resamples the workspace's window as `p` says into `image` (`program_image_bytes(p)` bytes).
inline void resample_program_image(const ops::SamplePlan& p, std::uint8_t* image, AugmentWorkspace& ws) {
  ops::cpu::resample(ws.pixels.data(), p, program_image_params(), image, ws.scratch);
}

/// The workspace's window through `p` and `program` into `out`, in `params`' dtype and layout.
inline void run_program_on_cpu(const ops::SamplePlan& p, const ops::pixel::PixelProgram& program,
                               const ops::OutputParams& params, std::byte* out, AugmentWorkspace& ws) {
  ws.image.resize(program_image_bytes(p));
  resample_program_image(p, ws.image.data(), ws);
  ops::cpu::run_pixel_program(program, ws.image.data(), p.out_width, p.out_height, params, out, ws.pixel_scratch);
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor
