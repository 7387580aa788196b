#pragma once
/// @file
/// A program's output stage, which both executors call per element (the same bits): the u8 value
/// scaled to float as ToDtype or ToTensor does, the scaled ops (GaussianNoise after ToDtype) in
/// order, the normalisation, then the erase ops (the last that covers the element gives its
/// value). Without scaled ops an element is stored as `ops::store` stores it.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/registry.hpp>

#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// Where a program's output ops are, found once per sample.
struct OutputOps {
  std::int32_t scaled[max_program_ops];
  std::int32_t erasing[max_program_ops];
  int scaled_count = 0;
  int erase_count = 0;
};

/// The output ops among the first `count` of `program` (`count` clamped to its capacity by the caller).
[[nodiscard]] CONVEYOR_HD inline OutputOps output_ops(const PixelProgram& program, int count) noexcept {
  OutputOps o;
  for (int k = 0; k < count; ++k)
    visit(program.ops[k].code, [&]<class Op>() {
      if constexpr (Op::kind == OpKind::scaled) o.scaled[o.scaled_count++] = k;
      else if constexpr (Op::kind == OpKind::erase) o.erasing[o.erase_count++] = k;
    });
  return o;
}

/// Stores element (`channel`, `x`, `y`) of a `width` x `height` sample, whose u8 value after the
/// pixel ops is `v`, as element `i` of `out`. With scaled ops, the normalisation is torchvision's
/// where `p` carries a divisor and otherwise the fused form's one `fmaf` of the scaled value
/// (ImageAugment gives scaled ops torchvision's roundings).
CONVEYOR_HD inline void store_output(const PixelProgram& program, const OutputOps& o, void* out, std::int64_t i,
                                     std::uint8_t v, int channel, int x, int y, int width, int height,
                                     const OutputParams& p) noexcept {
  for (int e = o.erase_count; e-- > 0;) {
    const PixelOp& op = program.ops[o.erasing[e]];
    bool covered = false;
    float value = 0.0f;
    visit(op.code, [&]<class Op>() {
      if constexpr (Op::kind == OpKind::erase)
        if (Op::covers(op, x, y)) covered = true, value = Op::value(op, channel, x, y);
    });
    if (covered) {
      store_value(out, i, value, p.dtype);
      return;
    }
  }
  if (o.scaled_count == 0 || p.dtype == DType::u8) {
    store(out, i, v, channel, p);
    return;
  }
  const float x255 = static_cast<float>(v);
  float value = p.divide ? exact::div(x255, 255.0f)
                         : exact::mul(x255, p.divisor[channel] != 0.0f ? p.scale[channel] : 1.0f / 255.0f);
  for (int s = 0; s < o.scaled_count; ++s) {
    const PixelOp& op = program.ops[o.scaled[s]];
    visit(op.code, [&]<class Op>() {
      if constexpr (Op::kind == OpKind::scaled) value = Op::scaled(op, channel, x, y, width, height, value);
    });
  }
  value = p.divisor[channel] != 0.0f ? exact::div(exact::sub(value, p.bias[channel]), p.divisor[channel])
                                     : fmaf(value, exact::mul(p.scale[channel], 255.0f), p.bias[channel]);
  store_value(out, i, value, p.dtype);
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor
