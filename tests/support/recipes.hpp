#pragma once
// Recipes for tests that run one list of pixel transforms into every output type: a uint8 output
// holds only erasing values torch's cast to uint8 defines (RandomErasing::validate_for), so its
// erasings get values of [0, 255] instead of normal values or negative ones.

#include <conveyor/core/tensor.hpp>
#include <conveyor/transforms/program.hpp>

#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace conveyor_test {

/// `transforms` (nested ones too) with each RandomErasing's value replaced by one a `dtype` output
/// holds: unchanged unless `dtype` is u8.
inline std::vector<conveyor::PixelTransform> for_output(std::vector<conveyor::PixelTransform> transforms,
                                                        conveyor::DType dtype) {
  if (dtype != conveyor::DType::u8) return transforms;
  for (conveyor::PixelTransform& t : transforms)
    std::visit(
        [](auto& x) {
          using T = std::remove_cvref_t<decltype(x)>;
          if constexpr (std::is_same_v<T, conveyor::RandomErasing>) x.value = conveyor::ErasingValue{10.0, 200.5, 97.0};
          else if constexpr (requires { x.transforms; }) x.transforms = for_output(std::move(x.transforms), conveyor::DType::u8);
        },
        t);
  return transforms;
}

}  // namespace conveyor_test
