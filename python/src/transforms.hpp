#pragma once
// A transform made by image_augment() or raw_tensor(), type-erased for loaders and preprocessors.

#include "bindings.hpp"

#include <conveyor/pipeline/any.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace conveyor_ext {

/// A transform made by image_augment() or raw_tensor().
struct Transform {
  conveyor::AnyTransform any;
  std::vector<std::int64_t> shape;  // one sample's
  std::string dtype;
  std::optional<conveyor::ImageAugment> augment{};  ///< the transform, when it is one (drawn_calls reads it)
};

}  // namespace conveyor_ext
