#pragma once
/// @file
/// `RawTensor`: the transform for datasets whose samples are already fixed-shape arrays.

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/sample.hpp>

#include <cstring>
#include <span>
#include <string>

namespace conveyor {
inline namespace v0 {

/// Hands each sample's bytes through unchanged, as a tensor of `spec`: for datasets of
/// fixed-shape arrays (features, pre-decoded images) rather than encoded images.
struct RawTensor {
  SampleSpec spec{};

  /// Nothing to keep between samples.
  struct Workspace {};
  [[nodiscard]] Workspace make_workspace() const noexcept { return {}; }
  [[nodiscard]] SampleSpec sample_spec() const noexcept { return spec; }
  void validate() const {
    if (spec.rank < 1 || spec.rank > 3 || spec.numel() <= 0)
      throw ConfigError("RawTensor: the sample shape must have 1 to 3 positive dimensions");
  }
  /// @throws DecodeError when the sample is not exactly `spec.bytes()` long.
  void apply(const SampleContext&, std::span<const std::byte> in, std::span<std::byte> out, Workspace&) const {
    if (in.size() != out.size())
      throw DecodeError("sample has " + std::to_string(in.size()) + " bytes, expected " + std::to_string(out.size()));
    std::memcpy(out.data(), in.data(), in.size());
  }
};

static_assert(Transform<RawTensor>);

}  // namespace v0
}  // namespace conveyor
