#pragma once
/// @file
/// `ShardShuffleSampler`: an order that keeps reads sequential for sharded datasets. Each epoch the
/// shards are permuted, taken `window` at a time, and the samples of a window permuted among
/// themselves, so at any moment a loader reads from `window` shards (FFCV's quasi-random order,
/// WebDataset's shard shuffle with a shuffle buffer), and the order is still a pure function of
/// (seed, epoch). Over ranks it keeps DistributedSampler's promise: the epoch's order is padded by
/// wrapping to a multiple of the world size (or cut, with drop_last), and each rank takes one
/// contiguous part of it, so every rank gets the same number of samples, and its part of each
/// window stays in a few shards.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/core/samplers.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct ShardShuffleOptions {
  std::uint64_t seed = 0;
  /// Shards whose samples are shuffled together (1: within each shard only).
  std::uint64_t window = 4;
  std::uint64_t num_replicas = 1;  ///< world size
  std::uint64_t rank = 0;
  bool drop_last = false;
};

class ShardShuffleSampler {
 public:
  /// Shards of `shard_sizes[s]` samples each, numbered shard by shard (as `TarShards` and
  /// `TFRecordDataset` number them: their `shard_sizes()`).
  /// @throws ConfigError for an empty dataset, a window of 0, or a rank outside the world.
  ShardShuffleSampler(std::vector<std::uint64_t> shard_sizes, ShardShuffleOptions options)
      : sizes_(std::move(shard_sizes)), o_(options) {
    if (o_.window == 0) throw ConfigError("ShardShuffleSampler: window must be >= 1, got 0");
    if (o_.num_replicas == 0) throw ConfigError("ShardShuffleSampler: num_replicas must be > 0, got 0");
    if (o_.rank >= o_.num_replicas)
      throw ConfigError("ShardShuffleSampler: rank " + std::to_string(o_.rank) + " is out of range for num_replicas " +
                        std::to_string(o_.num_replicas));
    starts_.resize(sizes_.size());
    std::exclusive_scan(sizes_.begin(), sizes_.end(), starts_.begin(), std::uint64_t{0});
    n_ = std::accumulate(sizes_.begin(), sizes_.end(), std::uint64_t{0});
    if (n_ == 0) throw ConfigError("ShardShuffleSampler: the dataset is empty");
    per_rank_ = o_.drop_last ? n_ / o_.num_replicas : (n_ + o_.num_replicas - 1) / o_.num_replicas;
    if (per_rank_ == 0)
      throw ConfigError("ShardShuffleSampler: drop_last leaves no sample for " + std::to_string(o_.num_replicas) +
                        " replicas of " + std::to_string(n_) + " samples");
  }

  /// Indices this rank gets per epoch.
  [[nodiscard]] std::uint64_t size() const noexcept { return per_rank_; }

  /// This rank's indices for `epoch`.
  [[nodiscard]] std::vector<std::uint64_t> indices(std::uint64_t epoch) const {
    const std::vector<std::uint64_t> shards = detail::permutation(sizes_.size(), o_.seed, epoch);
    std::vector<std::uint64_t> order;
    order.reserve(n_);
    for (std::uint64_t w = 0; w * o_.window < shards.size(); ++w) {
      const std::size_t first = order.size();
      const std::uint64_t end = std::min<std::uint64_t>(shards.size(), (w + 1) * o_.window);
      for (std::uint64_t k = w * o_.window; k < end; ++k)
        for (std::uint64_t i = 0; i < sizes_[shards[k]]; ++i) order.push_back(starts_[shards[k]] + i);
      // Fisher-Yates within the window, from the window's own stream.
      CounterRng rng(o_.seed, epoch, w, RngOp::sampler_window);
      for (std::size_t i = order.size() - first; i > 1; --i) std::swap(order[first + i - 1], order[first + rng.below(i)]);
    }
    std::vector<std::uint64_t> mine;
    mine.reserve(per_rank_);
    for (std::uint64_t p = o_.rank * per_rank_; p < (o_.rank + 1) * per_rank_; ++p) mine.push_back(order[p % n_]);
    return mine;
  }

 private:
  std::vector<std::uint64_t> sizes_, starts_;
  ShardShuffleOptions o_;
  std::uint64_t n_ = 0, per_rank_ = 0;
};

}  // namespace v0
}  // namespace conveyor
