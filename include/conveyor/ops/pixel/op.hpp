#pragma once
/// @file
/// The pixel ops' plain data: one op's record, a sample's program of records, and what the
/// executors share with the ops (their kinds, the image statistics, torchvision's conversions to
/// uint8). Records are drawn on the host and read alike by the CPU executor
/// (`ops/cpu/pixel_program.hpp`) and the kernel (`cuda/kernels/pixel_program.cuh`).

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/convert.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <math.h>
#include <string>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// What an op reads, which decides how the executors run it.
enum class OpKind : std::int32_t {
  point,          ///< a pixel from itself: `apply(op, rgb)`
  statistic,      ///< a channel value through a table made from a whole-image integer statistic
  neighbourhood,  ///< a pixel from other pixels, into a second buffer
  scaled,         ///< an output element's float value between its scaling (ToDtype) and normalisation
  erase,          ///< output elements replaced after normalisation
  mix,            ///< a pixel with its saved value and float sums beside the image (AugMix's mixing, mix.hpp)
};

/// One op with its parameters, made by the op's factory (e.g. `adjust_hue(0.1)`). Float
/// parameters are the float32 values torchvision computes with; what each field holds is the
/// op's business (see its file).
struct PixelOp {
  std::int32_t code = 0;  ///< the op's `code` (registry.hpp); executors skip codes no op has
  std::int32_t i[7] = {};
  float f[9] = {};
  double d[6] = {};  ///< for an op whose arithmetic is in double (Pillow's affine engines)
};

/// The most ops a sample's program holds.
inline constexpr int max_program_ops = 16;

/// One sample's pixel ops, applied in order to its u8 image after resampling; the scaled ops
/// apply to its float values before normalisation, the erase ops to its normalised output
/// (ops/pixel/output.hpp).
struct PixelProgram {
  std::int32_t count = 0;
  PixelOp ops[max_program_ops] = {};
};

/// Appends `op` to `program`.
/// @throws ConfigError when the program is full.
inline void append(PixelProgram& program, const PixelOp& op) {
  if (program.count >= max_program_ops)
    throw ConfigError("a pixel program holds at most " + std::to_string(max_program_ops) + " ops");
  program.ops[program.count++] = op;
}

/// The whole-image statistics a statistic op may ask for (its `statistics` bits). All integers:
/// exact in any summation order, so both backends agree.
enum Statistic : unsigned {
  gray_sum = 1u,           ///< the sum of floor(grey) (`rgb_to_grayscale`'s float grey)
  channel_min_max = 2u,    ///< each channel's least and greatest value
  channel_histogram = 4u,  ///< each channel's histogram
  luma_sum = 8u,           ///< the sum of Pillow's `convert("L")` greys (pil_blend.hpp's `pil_luma`)
  v1_gray_sum = 16u,       ///< the sum of torchvision v1's uint8 greys (v1_color.hpp's `v1::gray`)
};

struct ImageStats {
  std::uint64_t gray_sum = 0;
  std::uint64_t luma_sum = 0;
  std::uint64_t v1_gray_sum = 0;
  std::int32_t min[3] = {255, 255, 255};
  std::int32_t max[3] = {0, 0, 0};
  std::uint32_t histogram[3][256] = {};
  std::int64_t pixels = 0;
};

/// torchvision's `clamp_(0, 255)`, and NaN (an affine map whose float32 theta overflowed) to 0, as
/// torch's `.to(torch.uint8)` of it gives on x86: never a NaN into an int conversion.
[[nodiscard]] CONVEYOR_HD inline float clamp_255(float v) noexcept { return v > 0.0f ? (v < 255.0f ? v : 255.0f) : 0.0f; }

/// torchvision's `.to(torch.uint8)` of a value already in [0, 255]: truncation.
[[nodiscard]] CONVEYOR_HD inline std::uint8_t truncate_u8(float v) noexcept {
  return static_cast<std::uint8_t>(static_cast<int>(v));
}

/// `clamp_(0, 255).to(torch.uint8)`, the end of most of torchvision's uint8 ops.
[[nodiscard]] CONVEYOR_HD inline std::uint8_t saturate_u8(float v) noexcept { return truncate_u8(clamp_255(v)); }

/// `round_().to(torch.uint8)` (half to even), clamped so a sum a hair above 255 cannot wrap.
[[nodiscard]] CONVEYOR_HD inline std::uint8_t round_u8(float v) noexcept { return truncate_u8(clamp_255(rintf(v))); }

/// A u8 value as torchvision's float32 image holds it.
[[nodiscard]] CONVEYOR_HD inline float to_float(std::uint8_t v) noexcept { return static_cast<float>(v); }

/// Stores `v`, a value that replaces a normalised one (erasing), as element `i` of `out`: converted
/// as `store` converts a normalised value; for u8 output truncated and clamped to [0, 255].
CONVEYOR_HD inline void store_value(void* out, std::int64_t i, float v, DType dtype) noexcept {
  switch (dtype) {
    case DType::u8: static_cast<std::uint8_t*>(out)[i] = saturate_u8(v); break;
    case DType::f32: static_cast<float*>(out)[i] = v; break;
    case DType::f16: static_cast<std::uint16_t*>(out)[i] = to_f16_bits(v); break;
    case DType::bf16: static_cast<std::uint16_t*>(out)[i] = to_bf16_bits(v); break;
    default: break;
  }
}

namespace detail {

/// Throws `ConfigError("<op>: <what>, got <value>")` unless `ok`: the factories' checks.
inline void expect(bool ok, const char* op, const char* what, double value,
                   SourceLocation where = SourceLocation::current()) {
  if (ok) return;
  char number[32];
  std::snprintf(number, sizeof number, "%.9g", value);
  throw ConfigError(std::string(op) + ": " + what + ", got " + number, where);
}

}  // namespace detail

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor
