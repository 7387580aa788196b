#pragma once
/// @file
/// torchvision.transforms.v2.Identity: the image as it is (a placeholder in a recipe, a choice that
/// changes nothing inside RandomChoice).

#include <conveyor/config.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>

namespace conveyor {
inline namespace v0 {

struct Identity {
  static constexpr const char* name = "Identity";
  static constexpr const char* summary = "The image unchanged (a placeholder, or a choice that changes nothing).";
  static constexpr std::array<FieldName, 0> fields{};

  void validate() const {}
  void validate_pil() const {}
  [[nodiscard]] int max_ops() const { return 0; }
  void draw(ProgramDraw&, int) const {}
};

}  // namespace v0
}  // namespace conveyor
