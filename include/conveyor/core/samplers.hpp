#pragma once
/// @file
/// Samplers: the order in which an epoch visits dataset indices. A sampler is a pure function of
/// the epoch; `indices(epoch)` returns the same list on every platform and standard library.
/// Samplers keep no epoch: the pipeline passes its own (`BatchPipeline::set_epoch`), so there is
/// no `sampler.set_epoch` to call and be ignored, as code ported from torch would.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// Fisher-Yates over [0, n) driven by a counter-based stream: portable, unlike std::shuffle.
inline std::vector<std::uint64_t> permutation(std::uint64_t n, std::uint64_t seed, std::uint64_t epoch) {
  std::vector<std::uint64_t> p(n);
  std::iota(p.begin(), p.end(), std::uint64_t{0});
  CounterRng rng(seed, epoch, 0, RngOp::sampler);
  for (std::uint64_t i = n; i > 1; --i) {
    const std::uint64_t j = rng.below(i);
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

}  // namespace detail

/// Visits 0, 1, ..., size-1 every epoch.
class SequentialSampler {
 public:
  explicit SequentialSampler(std::uint64_t size) : size_(size) {}
  /// Indices per epoch.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  /// The indices of `epoch`, in order.
  [[nodiscard]] std::vector<std::uint64_t> indices(std::uint64_t /*epoch*/) const {
    std::vector<std::uint64_t> v(size_);
    std::iota(v.begin(), v.end(), std::uint64_t{0});
    return v;
  }

 private:
  std::uint64_t size_;
};

/// Options of `RandomSampler`.
struct RandomSamplerOptions {
  std::uint64_t seed = 0;
};

/// A fresh permutation of [0, size) every epoch, fixed by (seed, epoch) alone.
class RandomSampler {
 public:
  explicit RandomSampler(std::uint64_t size, RandomSamplerOptions options = {}) : size_(size), seed_(options.seed) {}
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }
  /// The permutation of `epoch`.
  [[nodiscard]] std::vector<std::uint64_t> indices(std::uint64_t epoch) const {
    return detail::permutation(size_, seed_, epoch);
  }

 private:
  std::uint64_t size_;
  std::uint64_t seed_;
};

/// Where this process sits in a data-parallel job, as its launcher announced it.
struct LaunchEnvironment {
  std::uint64_t rank = 0;
  std::uint64_t world_size = 1;
  std::uint64_t local_rank = 0;  ///< the process's index on its node: its GPU
  std::string source;            ///< "torchrun", "Open MPI" or "SLURM"
};

/// Reads the launcher's variables: torchrun's RANK, WORLD_SIZE, LOCAL_RANK; else Open MPI's
/// OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK; else SLURM's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID.
/// The first launcher whose variables are present wins: under `srun torchrun`, SLURM's describe the
/// torchrun agents and torchrun's the workers, so they differ by design.
/// @throws ConfigError when none is set, or a launcher's values are partial, not numbers, or
///         contradict each other (rank beyond the world, local rank beyond the rank).
[[nodiscard]] inline LaunchEnvironment launch_environment() {
  struct Source {
    const char* name;
    const char* rank;
    const char* size;
    const char* local;
  };
  static constexpr Source sources[] = {{"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
                                       {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                        "OMPI_COMM_WORLD_LOCAL_RANK"},
                                       {"SLURM", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}};
  for (const Source& src : sources) {
    const char* values[3] = {std::getenv(src.rank), std::getenv(src.size), std::getenv(src.local)};
    if (!values[0] && !values[1] && !values[2]) continue;
    const char* names[3] = {src.rank, src.size, src.local};
    std::uint64_t parsed[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      const bool optional = i == 2 && std::string_view(src.name) == "torchrun";  // LOCAL_RANK may be absent
      if (!values[i]) {
        if (optional) continue;
        throw ConfigError(std::string(src.name) + " environment is partial: " + names[i] + " is not set");
      }
      const std::string_view v(values[i]);
      const auto [end, err] = std::from_chars(v.data(), v.data() + v.size(), parsed[i]);
      if (err != std::errc() || end != v.data() + v.size())
        throw ConfigError(std::string(src.name) + " environment: " + names[i] + "='" + values[i] + "' is not a number");
    }
    if (parsed[1] == 0) throw ConfigError(std::string(src.name) + " environment: " + names[1] + " is 0");
    if (parsed[0] >= parsed[1])
      throw ConfigError(std::string(src.name) + " environment: " + names[0] + "=" + std::to_string(parsed[0]) +
                        " is not below " + names[1] + "=" + std::to_string(parsed[1]));
    if (parsed[2] > parsed[0])
      throw ConfigError(std::string(src.name) + " environment: " + names[2] + "=" + std::to_string(parsed[2]) +
                        " exceeds " + names[0] + "=" + std::to_string(parsed[0]));
    return {parsed[0], parsed[1], parsed[2], src.name};
  }
  throw ConfigError(
      "no launcher environment: set RANK and WORLD_SIZE (torchrun), OMPI_COMM_WORLD_RANK and _SIZE (mpirun) "
      "or SLURM_PROCID and SLURM_NTASKS (srun)");
}

/// Options of `DistributedSampler`, named as torch names them.
struct DistributedSamplerOptions {
  std::uint64_t num_replicas = 1;  ///< world size
  std::uint64_t rank = 0;
  bool shuffle = true;
  std::uint64_t seed = 0;
  bool drop_last = false;
};

/// One rank's share of every epoch, with torch.utils.data.DistributedSampler's semantics: the
/// epoch's order (a permutation fixed by (seed, epoch) when shuffling, else 0..n-1) is padded by
/// wrapping around to a multiple of the world size, or truncated with `drop_last`; rank r takes
/// positions r, r + world, r + 2 world, ... Every rank gets the same number of indices.
class DistributedSampler {
 public:
  /// @throws ConfigError when the world size is 0, the rank is out of range, or nothing is left.
  DistributedSampler(std::uint64_t dataset_size, DistributedSamplerOptions options) : n_(dataset_size), o_(options) {
    if (o_.num_replicas == 0) throw ConfigError("DistributedSampler: num_replicas must be > 0, got 0");
    if (o_.rank >= o_.num_replicas)
      throw ConfigError("DistributedSampler: rank " + std::to_string(o_.rank) + " is out of range for num_replicas " +
                        std::to_string(o_.num_replicas));
    if (n_ == 0) throw ConfigError("DistributedSampler: the dataset is empty");
    const std::uint64_t w = o_.num_replicas;
    // torch: ceil((n - w) / w) per rank with drop_last (that is floor(n / w)), else ceil(n / w).
    num_samples_ = o_.drop_last ? n_ / w : (n_ + w - 1) / w;
    if (num_samples_ == 0)
      throw ConfigError("DistributedSampler: drop_last leaves no sample for " + std::to_string(w) +
                        " replicas of a dataset of " + std::to_string(n_));
  }

  /// A sampler for this process's share, from the launcher's environment (`launch_environment()`);
  /// `options`' rank and world size are replaced, the rest kept.
  /// @throws ConfigError as `launch_environment()` does, or for impossible arguments.
  [[nodiscard]] static DistributedSampler from_env(std::uint64_t dataset_size, DistributedSamplerOptions options = {}) {
    const LaunchEnvironment env = launch_environment();
    options.rank = env.rank;
    options.num_replicas = env.world_size;
    DistributedSampler s(dataset_size, options);
    s.local_rank_ = env.local_rank;
    return s;
  }

  /// This process's index on its node (from the environment; 0 otherwise): the GPU it should use.
  [[nodiscard]] int local_rank() const noexcept { return static_cast<int>(local_rank_); }

  /// Indices this rank gets per epoch.
  [[nodiscard]] std::uint64_t size() const noexcept { return num_samples_; }
  /// Indices of all ranks together per epoch (size() * num_replicas).
  [[nodiscard]] std::uint64_t total_size() const noexcept { return num_samples_ * o_.num_replicas; }
  [[nodiscard]] const DistributedSamplerOptions& options() const noexcept { return o_; }

  /// This rank's indices for `epoch`.
  [[nodiscard]] std::vector<std::uint64_t> indices(std::uint64_t epoch) const {
    std::vector<std::uint64_t> order(n_);
    if (o_.shuffle)
      order = detail::permutation(n_, o_.seed, epoch);
    else
      std::iota(order.begin(), order.end(), std::uint64_t{0});
    const std::uint64_t total = total_size();
    std::vector<std::uint64_t> mine;
    mine.reserve(num_samples_);
    // Position p of the padded order is order[p % n]: torch's `indices += indices[:padding]`,
    // repeated as often as needed when the padding exceeds the dataset.
    for (std::uint64_t p = o_.rank; p < total; p += o_.num_replicas) mine.push_back(order[p % n_]);
    return mine;
  }

 private:
  std::uint64_t n_;
  DistributedSamplerOptions o_;
  std::uint64_t num_samples_ = 0;
  std::uint64_t local_rank_ = 0;
};

}  // namespace v0
}  // namespace conveyor
