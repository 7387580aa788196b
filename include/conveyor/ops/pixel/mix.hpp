#pragma once
/// @file
/// AugMix's mixing (torchvision's AugMix, timm's AugMixAugment): the image is saved, each chain of
/// ops runs from the saved image and its result is added, weighted, into a float32 sum per
/// channel value, and the sum becomes the image. One op, `Mix`, in steps a program holds in order
/// (`check_mixing` says which orders run):
///   begin(w)        saved = image; sum = w * image          (torchvision's `m[:, 0] * batch`)
///   add(w)          sum += w * image; image = saved         (`mix.add_(w * aug)`, numpy's `mixed += mw * aug`)
///   blend_add(w)    sum = Image.blend(sum, image, w); image = saved   (timm's blended chains)
///   end             image = sum.to(uint8)                   (truncated, clamped to [0, 255])
///   end_blend(m)    image = Image.blend(saved, clip(sum).astype(uint8), m)   (timm's `_apply_basic`)
/// Each product and sum is rounded to float32 on its own, as torch's and numpy's separate ops do.
/// The executors keep `saved` (3 bytes a pixel) and `sum` (3 floats a pixel) beside the image.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/pil_blend.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct Mix {
  static constexpr std::int32_t code = 30;
  static constexpr OpKind kind = OpKind::mix;
  static constexpr const char* name = "mix";
  enum Step : std::int32_t { begin, add, blend_add, end, end_blend, steps };
  // i[0]: the step; f[0]: its weight (float32, as torch's and numpy's float32 weights are)
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb, std::uint8_t* saved, float* sum) noexcept {
    const float w = op.f[0];
    for (int c = 0; c < 3; ++c) switch (op.i[0]) {
        case begin:
          saved[c] = rgb[c];
          sum[c] = exact::mul(w, to_float(rgb[c]));
          break;
        case add:
          sum[c] = exact::add(sum[c], exact::mul(w, to_float(rgb[c])));
          rgb[c] = saved[c];
          break;
        case blend_add:  // the running image is a u8 image held in the sum
          sum[c] = to_float(pil_blend(truncate_u8(sum[c]), rgb[c], w));
          rgb[c] = saved[c];
          break;
        case end: rgb[c] = saturate_u8(sum[c]); break;
        case end_blend: rgb[c] = pil_blend(saved[c], saturate_u8(sum[c]), w); break;
        default: break;
      }
  }
};

/// The record of mixing step `step` with weight `w` (rounded to float32).
/// @throws ConfigError for an unknown step or a weight that is not finite.
[[nodiscard]] inline PixelOp mix(Mix::Step step, double w = 0.0) {
  detail::expect(step >= 0 && step < Mix::steps, Mix::name, "the step must be begin, add, blend_add, end or end_blend",
                 step);
  detail::expect(std::isfinite(w), Mix::name, "the weight must be finite", w);
  PixelOp op{.code = Mix::code};
  op.i[0] = step;
  op.f[0] = static_cast<float>(w);
  return op;
}

/// Checks that the mixing steps of `program` come in an order the executors run: a begin, then
/// adds or blend_adds (each after a chain), then an end or end_blend, before the next begin, so
/// that no step reads a saved image or sum its program did not write.
/// @throws ConfigError naming the first step out of place.
inline void check_mixing(const PixelProgram& program) {
  bool open = false;
  for (int k = 0; k < program.count; ++k) {
    const PixelOp& op = program.ops[k];
    if (op.code != Mix::code) continue;
    const std::int32_t step = op.i[0];
    const bool ok = step == Mix::begin ? !open : step > Mix::begin && step < Mix::steps && open;
    if (!ok)
      throw ConfigError("pixel op " + std::to_string(k) + " (mix step " + std::to_string(step) + ") is out of place: " +
                        "a program mixes in steps begin, add or blend_add, then end or end_blend");
    open = step == Mix::begin || step == Mix::add || step == Mix::blend_add;
  }
  if (open) throw ConfigError("a pixel program's mixing begins and never ends (end or end_blend)");
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor
