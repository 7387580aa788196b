#pragma once
/// @file
/// The three concepts `BatchPipeline` is written against. Each lists exactly what the pipeline
/// calls; every type conveyor ships is checked against them where it is defined.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/sample.hpp>

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// A random-access collection of samples: encoded bytes, a label and a name per index.
/// Workers call these concurrently on one const object, so they must be safe for that.
template <class D>
concept Dataset = requires(const D& d, std::uint64_t i, ByteBuffer& out) {
  /// Number of samples.
  { d.size() } -> std::convertible_to<std::uint64_t>;
  /// Replaces `out` with sample i's bytes; throws (e.g. `IoError`) when it cannot.
  d.read(i, out);
  /// Sample i's class label.
  { d.label(i) } -> std::convertible_to<std::int64_t>;
  /// What error messages call sample i: a path for files.
  { d.name(i) } -> std::convertible_to<std::string>;
};

/// Sample `i`'s bytes into `out`, and its label: from one read where the dataset keeps both in
/// one record (`read_labeled`, as TFRecord does), else `read` then `label`.
template <Dataset D>
std::int64_t read_labeled(const D& d, std::uint64_t i, ByteBuffer& out) {
  if constexpr (requires { { d.read_labeled(i, out) } -> std::convertible_to<std::int64_t>; }) {
    return d.read_labeled(i, out);
  } else {
    d.read(i, out);
    return d.label(i);
  }
}

/// The order of an epoch: a pure function of the epoch number.
template <class S>
concept Sampler = requires(const S& s, std::uint64_t epoch) {
  /// Indices per epoch.
  { s.size() } -> std::convertible_to<std::uint64_t>;
  /// The indices of `epoch`, in the order batches will hold them.
  { s.indices(epoch) } -> std::convertible_to<std::vector<std::uint64_t>>;
};

/// Turns one sample's bytes into one fixed-shape tensor. `apply` runs on worker threads, each
/// with its own `Workspace` (decoders, scratch buffers) made once by `make_workspace()`.
template <class T>
concept Transform = std::copy_constructible<T> &&
    requires(const T& t, typename T::Workspace& ws, const SampleContext& ctx, std::span<const std::byte> in,
             std::span<std::byte> out) {
  /// What `apply` writes: the same for every sample.
  { t.sample_spec() } -> std::same_as<SampleSpec>;
  { t.make_workspace() } -> std::same_as<typename T::Workspace>;
  /// Writes exactly `sample_spec().bytes()` bytes to `out`; throws on bad input.
  t.apply(ctx, in, out, ws);
};

}  // namespace v0
}  // namespace conveyor
