#pragma once
// A transform made by image_augment() or raw_tensor(), type-erased for loaders and preprocessors.

#include "bindings.hpp"

#include <conveyor/pipeline/any.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace conveyor_ext {

/// A transform made by image_augment() or raw_tensor().
struct Transform {
  conveyor::AnyTransform any;
  std::vector<std::int64_t> shape;  // one sample's
  std::string dtype;
};

}  // namespace conveyor_ext
