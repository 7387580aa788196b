#pragma once
/// @file
/// torchvision.transforms.v2.RandomChannelPermutation: the channels in an order drawn uniformly
/// for every sample (`torch.randperm(3)`), `permute_channels(image, permutation)`. On a PIL image
/// torchvision permutes its tensor: the same op.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/permute_channels.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cstdint>
#include <utility>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// Adds a uniformly drawn permutation of the channels (`torch.randperm(3)`), and describes it.
inline void add_channel_permutation(ProgramDraw& d, CounterRng& rng) {
  std::array<int, 3> order{0, 1, 2};  // any uniform permutation
  for (int i = 2; i > 0; --i) std::swap(order[std::size_t(i)], order[rng.below(static_cast<std::uint64_t>(i + 1))]);
  d.add(ops::pixel::permute_channels(order));
  if (d.describing()) d.describe({"permute_channels", {DrawnArg::integers("permutation", {order[0], order[1], order[2]})}});
}

}  // namespace detail

struct RandomChannelPermutation {
  static constexpr const char* name = "RandomChannelPermutation";
  static constexpr const char* summary = "The channels in a random order, drawn uniformly for every sample.";
  static constexpr std::array<FieldName, 0> fields{};

  void validate() const {}
  void validate_pil() const {}
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    detail::add_channel_permutation(d, rng);
  }
};

}  // namespace v0
}  // namespace conveyor
