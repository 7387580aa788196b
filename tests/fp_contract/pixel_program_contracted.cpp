// Compiled with -O3 -march=native -ffp-contract=fast (tests/CMakeLists.txt): g++ then fuses any
// product with the sum that consumes it unless the code prevents it, as ops/exact_float.hpp does.

#include "pixel_program_contracted.hpp"

#include <conveyor/ops/cpu/pixel_program.hpp>

extern "C" __attribute__((visibility("default"))) void conveyor_test_run_pixel_program_contracted(
    const conveyor::ops::pixel::PixelProgram* program, std::uint8_t* image, int width, int height,
    const conveyor::ops::OutputParams* params, void* out) {
  conveyor::ops::cpu::PixelScratch scratch;
  conveyor::ops::cpu::run_pixel_program(*program, image, width, height, *params, out, scratch);
}
