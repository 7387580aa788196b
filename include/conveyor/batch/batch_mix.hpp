#pragma once
/// @file
/// What a batch transform drew for one batch (`BatchMix`), and the batch's images as a batch
/// transform sees them (`MixGeometry`). torchvision's MixUp and CutMix pair sample i with sample
/// i - 1 (the first with the last: `roll(1, 0)`), timm's Mixup with sample N - 1 - i (`flip(0)`).

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/convert.hpp>
#include <conveyor/ops/exact_float.hpp>

#include <array>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <string>

namespace conveyor {
inline namespace v0 {

/// One batch's draw. `Batch::mix()` gives it, so a user can build targets of their own: sample i
/// is mixed with `partner(i, N)`, its label weighs `label_lam` and the partner's `1 - label_lam`.
struct BatchMix {
  enum class Kind : std::uint8_t { none, mixup, cutmix };
  enum class Pairing : std::uint8_t { previous, mirror };
  Kind kind = Kind::none;
  Pairing pairing = Pairing::previous;
  double lam = 1.0;        ///< MixUp: the sample's own weight in its pixels (as the reference's Python float)
  double label_lam = 1.0;  ///< the sample's own weight in its target: MixUp's lam, CutMix's area outside the box
  std::int64_t x1 = 0, y1 = 0, x2 = 0, y2 = 0;  ///< CutMix: columns [x1, x2) of rows [y1, y2) come from the partner
  float on_value = 1.0f, off_value = 0.0f;       ///< a label's one-hot values (timm's label smoothing)
  /// timm's 'pair' and 'elem' modes draw per sample (`Batch::sample_mixes()`; the batch's own
  /// draw then only says so). Their targets' lambdas are a tensor of the images' dtype
  /// (`images_dtype`), in which `1 - lambda` is computed too.
  bool per_sample = false;
  DType images_dtype = DType::f32;

  /// The sample sample `i` of a batch of `count` is mixed with.
  [[nodiscard]] constexpr std::size_t partner(std::size_t i, std::size_t count) const noexcept {
    if (pairing == Pairing::mirror) return count - 1 - i;
    return i == 0 ? count - 1 : i - 1;
  }

  /// The weights of a sample's own label and of its partner's in its soft target, as float32, as
  /// the references make them: a Python float's `lam` and `1 - lam` cast to float32; per sample,
  /// `lam` as a float32 rounded to the images' dtype and `1 - lam` computed in that dtype.
  [[nodiscard]] std::array<float, 2> label_weights() const noexcept {
    if (!per_sample) return {static_cast<float>(label_lam), static_cast<float>(1.0 - label_lam)};
    const auto in_dtype = [this](float v) {
      if (images_dtype == DType::bf16) return ops::bf16_to_float(ops::to_bf16_bits(v));
      if (images_dtype == DType::f16) return ops::f16_to_float(ops::to_f16_bits(v));
      return v;
    };
    const float own = in_dtype(static_cast<float>(label_lam));
    return {own, in_dtype(ops::exact::sub(1.0f, own))};
  }
};

/// A batch's images, as a batch transform needs to know them.
struct MixGeometry {
  DType dtype = DType::f32;
  Layout layout = Layout::NCHW;
  std::int64_t channels = 3, height = 0, width = 0;

  [[nodiscard]] std::size_t sample_bytes() const noexcept {
    return static_cast<std::size_t>(channels * height * width) * dtype_size(dtype);
  }
};

namespace detail {

/// torchvision's MixUp's and CutMix's arguments: Beta's alpha > 0, and the targets' width.
/// @throws ConfigError naming `op` and the argument.
inline void validate_mix_arguments(const char* op, double alpha, std::int64_t num_classes) {
  if (!(alpha > 0.0 && std::isfinite(alpha)))
    throw ConfigError(std::string(op) + ": alpha must be positive and finite, got " + std::to_string(alpha));
  if (num_classes <= 0)
    throw ConfigError(std::string(op) + ": num_classes must be positive, got " + std::to_string(num_classes));
}

}  // namespace detail

}  // namespace v0
}  // namespace conveyor
