#pragma once
/// @file
/// The pixel ops' registry: one type list and one dispatch. A new op is its file (its struct
/// with a unique `code`, `kind` and the functions its kind calls, and its factory) plus one line
/// in `PixelOps`; the executors never name an op.
///
/// What each kind provides (all `CONVEYOR_HD`, none may allocate or throw):
///   point          `apply(op, rgb)`: one pixel in place
///   statistic      `statistics` (Statistic bits) and `table(op, stats, channel, lut)`: the
///                  channel's 256-entry table, from the image's statistics
///   neighbourhood  `Prepared`, `prepare(op, width, height, prepared)` once per image (one
///                  thread), `apply(op, prepared, src, width, height, x, y, rgb)`: pixel (x, y)
///                  of the result from the source image
///   scaled         `scaled(op, channel, x, y, width, height, value)`: element (channel, x, y)'s
///                  float value (ToDtype's, in [0, 1]) before normalisation
///   erase          `covers(op, x, y)` and `value(op, channel, x, y)`
///   mix            `apply(op, rgb, saved, sum)`: one pixel with its saved copy and its three float
///                  sums, which the executors keep beside the image (mix.hpp)
/// and optionally a host `check(op, width, height)` that throws ConfigError when the record
/// cannot apply to an image of that size, and `pillow = true` for an op with Pillow's arithmetic
/// (`ops::pixel::pil::`: torchvision's functional on a PIL image, named as the functional; `v1::`,
/// torchvision v1's tensor functional where its numbers differ from v2's).

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/ops/pixel/adjust_brightness.hpp>
#include <conveyor/ops/pixel/adjust_contrast.hpp>
#include <conveyor/ops/pixel/adjust_hue.hpp>
#include <conveyor/ops/pixel/adjust_saturation.hpp>
#include <conveyor/ops/pixel/adjust_sharpness.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/autocontrast.hpp>
#include <conveyor/ops/pixel/equalize.hpp>
#include <conveyor/ops/pixel/erase.hpp>
#include <conveyor/ops/pixel/flip.hpp>
#include <conveyor/ops/pixel/gaussian_blur.hpp>
#include <conveyor/ops/pixel/gaussian_noise.hpp>
#include <conveyor/ops/pixel/invert.hpp>
#include <conveyor/ops/pixel/mix.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/permute_channels.hpp>
#include <conveyor/ops/pixel/perspective.hpp>
#include <conveyor/ops/pixel/pil_adjust_brightness.hpp>
#include <conveyor/ops/pixel/pil_adjust_contrast.hpp>
#include <conveyor/ops/pixel/pil_adjust_hue.hpp>
#include <conveyor/ops/pixel/pil_adjust_saturation.hpp>
#include <conveyor/ops/pixel/pil_adjust_sharpness.hpp>
#include <conveyor/ops/pixel/pil_affine.hpp>
#include <conveyor/ops/pixel/pil_autocontrast.hpp>
#include <conveyor/ops/pixel/pil_perspective.hpp>
#include <conveyor/ops/pixel/pil_rgb_to_grayscale.hpp>
#include <conveyor/ops/pixel/posterize.hpp>
#include <conveyor/ops/pixel/rgb_to_grayscale.hpp>
#include <conveyor/ops/pixel/solarize.hpp>
#include <conveyor/ops/pixel/solarize_add.hpp>
#include <conveyor/ops/pixel/v1_color.hpp>

#include <cstdint>
#include <string>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

template <class... Ops>
struct OpList {};

using PixelOps = OpList<AdjustBrightness, AdjustContrast, AdjustSaturation, AdjustHue, RgbToGrayscale, Invert,
                        Posterize, Solarize, Autocontrast, Equalize, AdjustSharpness, GaussianBlur, Affine, Erase, Flip,
                        PilAdjustBrightness, PilAdjustSaturation, PilAdjustContrast, PilAdjustSharpness, PilAdjustHue,
                        PilRgbToGrayscale, PilAutocontrast, PilAffine, PermuteChannels, Perspective, PilPerspective, GaussianNoise, GaussianNoiseFloat,
                        SolarizeAdd, Mix, v1::AdjustSaturation, v1::AdjustContrast, v1::AdjustSharpness,
                        v1::Autocontrast>;

namespace detail {

template <class... Ops>
constexpr bool codes_unique(OpList<Ops...>) {
  const std::int32_t codes[] = {Ops::code...};
  for (std::size_t a = 0; a < sizeof...(Ops); ++a) {
    if (codes[a] <= 0) return false;
    for (std::size_t b = a + 1; b < sizeof...(Ops); ++b)
      if (codes[a] == codes[b]) return false;
  }
  return true;
}
static_assert(codes_unique(PixelOps{}), "pixel op codes must be positive and unique");

// The dispatch serves host-only callers too (`check`, the CPU executor): nvcc must not object to a
// __host__ __device__ template calling a host lambda in the instantiations only the host runs.
#if defined(__CUDACC__) && !defined(__clang__)
#pragma nv_exec_check_disable
#endif
template <class F, class... Ops>
CONVEYOR_HD bool visit_in(OpList<Ops...>, std::int32_t code, F& f) {
  return ((code == Ops::code ? (f.template operator()<Ops>(), true) : false) || ...);
}

}  // namespace detail

/// Calls `f.template operator()<Op>()` with the registered op whose code is `code`; false
/// (and no call) when no op has it.
#if defined(__CUDACC__) && !defined(__clang__)
#pragma nv_exec_check_disable
#endif
template <class F>
CONVEYOR_HD bool visit(std::int32_t code, F&& f) {
  return detail::visit_in(PixelOps{}, code, f);
}

/// The op's name (torchvision's functional), or "unknown".
[[nodiscard]] inline const char* op_name(std::int32_t code) {
  const char* name = "unknown";
  visit(code, [&]<class Op>() { name = Op::name; });
  return name;
}

/// The kind of the op with `code`.
/// @throws ConfigError for a code no op has.
[[nodiscard]] inline OpKind op_kind(std::int32_t code) {
  OpKind kind{};
  if (!visit(code, [&]<class Op>() { kind = Op::kind; }))
    throw ConfigError("pixel op code " + std::to_string(code) + " is not registered");
  return kind;
}

/// Checks that `program` can run on a `width` x `height` image: a known code in every record,
/// every op's own condition, and its mixing steps in order (`check_mixing`).
/// @throws ConfigError naming the first record that cannot, and why.
inline void check(const PixelProgram& program, int width, int height) {
  if (program.count < 0 || program.count > max_program_ops)
    throw ConfigError("a pixel program holds 0 to " + std::to_string(max_program_ops) + " ops, not " +
                      std::to_string(program.count));
  if (width <= 0 || height <= 0)
    throw ConfigError("pixel programs apply to images of positive size, not " + std::to_string(width) + " x " +
                      std::to_string(height));
  for (int k = 0; k < program.count; ++k) {
    const PixelOp& op = program.ops[k];
    try {
      if (!visit(op.code, [&]<class Op>() {
            if constexpr (requires { Op::check(op, width, height); }) Op::check(op, width, height);
          }))
        throw ConfigError("code " + std::to_string(op.code) + " is not a registered pixel op");
    } catch (const ConfigError& e) {
      throw ConfigError("pixel op " + std::to_string(k) + " of the program on a " + std::to_string(width) + " x " +
                        std::to_string(height) + " image: " + std::string(::conveyor::detail::split_location(e.what()).second));
    }
  }
  check_mixing(program);
}

/// Whether `program` holds a mixing step: its executor needs the saved image and the sums.
[[nodiscard]] CONVEYOR_HD inline bool mixes(const PixelProgram& program) noexcept {
  for (int k = 0; k < program.count && k < max_program_ops; ++k)
    if (program.ops[k].code == Mix::code) return true;
  return false;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor
