#pragma once
// A pixel transform built by one of pixel_transforms.cpp's factories, for ImageAugment's list.

#include "bindings.hpp"

#include <conveyor/transforms/program.hpp>

namespace conveyor_ext {

/// One of conveyor's pixel transforms (a C++ aggregate of conveyor/transforms/), checked when an
/// ImageAugment takes it.
struct PixelTransform {
  conveyor::PixelTransform held;
};

}  // namespace conveyor_ext
