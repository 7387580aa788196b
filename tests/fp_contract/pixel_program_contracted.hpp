#pragma once
// The CPU pixel-program executor as a build with aggressive floating-point flags compiles it
// (pixel_program_contracted.cpp, its own shared library: its copies of the inline functions are
// its own, not the test binary's).

#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

extern "C" void conveyor_test_run_pixel_program_contracted(const conveyor::ops::pixel::PixelProgram* program,
                                                           std::uint8_t* image, int width, int height,
                                                           const conveyor::ops::OutputParams* params, void* out);
