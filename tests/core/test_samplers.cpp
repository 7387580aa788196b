#include <conveyor/core/samplers.hpp>
#include <conveyor/core/shard_sampler.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace conveyor;
using V = std::vector<std::uint64_t>;

TEST_CASE("SequentialSampler visits 0..n-1 every epoch", "[core][sampler]") {
  SequentialSampler s(5);
  CHECK(s.size() == 5);
  CHECK(s.indices(0) == V{0, 1, 2, 3, 4});
  CHECK(s.indices(7) == V{0, 1, 2, 3, 4});
  CHECK(SequentialSampler(0).indices(0).empty());
}

TEST_CASE("RandomSampler draws a permutation fixed by seed and epoch", "[core][sampler]") {
  RandomSampler s(1000, {.seed = 42});
  const V e0 = s.indices(0);
  V sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  V iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  CHECK(sorted == iota);
  CHECK(s.indices(0) == e0);
  CHECK(s.indices(1) != e0);
  CHECK(RandomSampler(1000, {.seed = 43}).indices(0) != e0);
  CHECK(e0 != iota);
}

TEST_CASE("RandomSampler's permutation is pinned across platforms", "[core][sampler]") {
  // Fisher-Yates over Philox, recorded once as literals: the same with any compiler and standard
  // library, and a change in the draw is a failure here.
  CHECK(RandomSampler(10, {.seed = 42}).indices(3) == V{4, 0, 6, 1, 8, 9, 7, 2, 3, 5});
  CHECK(RandomSampler(20, {.seed = 7}).indices(0) == V{16, 10, 5, 19, 2, 7, 3, 13, 11, 4, 12, 8, 1, 6, 18, 9, 15, 0, 14, 17});
  CHECK(DistributedSampler(11, {.num_replicas = 3, .rank = 1, .seed = 5}).indices(2) == V{3, 2, 1, 0});
}

TEST_CASE("DistributedSampler pads by wrapping as torch does", "[core][sampler][distributed]") {
  // torch: n=10, world=3 -> num_samples=4, total=12, order 0..9 + [0, 1], rank r takes r::3.
  auto rank = [](std::uint64_t r) { return DistributedSampler(10, {.num_replicas = 3, .rank = r, .shuffle = false}); };
  CHECK(rank(0).size() == 4);
  CHECK(rank(0).total_size() == 12);
  CHECK(rank(0).indices(0) == V{0, 3, 6, 9});
  CHECK(rank(1).indices(0) == V{1, 4, 7, 0});
  CHECK(rank(2).indices(0) == V{2, 5, 8, 1});
}

TEST_CASE("DistributedSampler truncates with drop_last as torch does", "[core][sampler][distributed]") {
  // torch: n=10, world=3, drop_last -> num_samples=ceil(7/3)=3, total=9, order 0..8.
  auto rank = [](std::uint64_t r) {
    return DistributedSampler(10, {.num_replicas = 3, .rank = r, .shuffle = false, .drop_last = true});
  };
  CHECK(rank(0).indices(0) == V{0, 3, 6});
  CHECK(rank(1).indices(0) == V{1, 4, 7});
  CHECK(rank(2).indices(0) == V{2, 5, 8});
}

TEST_CASE("DistributedSampler repeats the dataset when padding exceeds it", "[core][sampler][distributed]") {
  // torch: n=2, world=5 -> padding 3 > 2, so indices*ceil(3/2) -> [0,1,0,1][:3]; order [0,1,0,1,0].
  const V expect[] = {{0}, {1}, {0}, {1}, {0}};
  for (std::uint64_t r = 0; r < 5; ++r)
    CHECK(DistributedSampler(2, {.num_replicas = 5, .rank = r, .shuffle = false}).indices(0) == expect[r]);
  // torch gives every rank 0 samples here; conveyor refuses instead of silently training on nothing.
  CHECK_THROWS_AS(DistributedSampler(2, {.num_replicas = 5, .rank = 0, .drop_last = true}), ConfigError);
}

TEST_CASE("DistributedSampler shuffles one permutation shared by all ranks", "[core][sampler][distributed]") {
  // n=7, world=2: order p (the seed/epoch permutation) + [p0]; rank 0 = p0 p2 p4 p6, rank 1 = p1 p3 p5 p0.
  const V p = RandomSampler(7, {.seed = 5}).indices(2);
  const V r0 = DistributedSampler(7, {.num_replicas = 2, .rank = 0, .seed = 5}).indices(2);
  const V r1 = DistributedSampler(7, {.num_replicas = 2, .rank = 1, .seed = 5}).indices(2);
  CHECK(r0 == V{p[0], p[2], p[4], p[6]});
  CHECK(r1 == V{p[1], p[3], p[5], p[0]});
  CHECK(DistributedSampler(7, {.num_replicas = 2, .rank = 1, .seed = 5}).indices(3) != r1);
}

TEST_CASE("DistributedSampler ranks cover the dataset exactly once without padding", "[core][sampler][distributed]") {
  for (std::uint64_t world : {1, 2, 4, 8, 16}) {
    V all;
    for (std::uint64_t r = 0; r < world; ++r) {
      const V mine = DistributedSampler(64, {.num_replicas = world, .rank = r, .seed = 9}).indices(4);
      CHECK(mine.size() == 64 / world);
      all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    V iota(64);
    std::iota(iota.begin(), iota.end(), 0);
    CHECK(all == iota);
  }
}

TEST_CASE("DistributedSampler rejects impossible arguments by name", "[core][sampler][distributed]") {
  CHECK_THROWS_WITH(DistributedSampler(10, {.num_replicas = 0}), Catch::Contains("num_replicas"));
  CHECK_THROWS_WITH(DistributedSampler(10, {.num_replicas = 2, .rank = 2}), Catch::Contains("rank 2"));
  CHECK_THROWS_WITH(DistributedSampler(0, {.num_replicas = 2}), Catch::Contains("empty"));
}

namespace {

/// Sets environment variables for one scope and restores them after.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const char* name : all) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::unsetenv(name);
    }
    for (auto [k, v] : vars) ::setenv(k, v, 1);
  }
  ~ScopedEnv() {
    for (auto& [k, v] : saved_)
      if (v) ::setenv(k, v->c_str(), 1);
      else ::unsetenv(k);
  }

 private:
  static constexpr const char* all[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
                                        "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_PROCID",
                                        "SLURM_NTASKS", "SLURM_LOCALID"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

}  // namespace

TEST_CASE("the launcher's environment gives rank and world size", "[core][sampler][distributed]") {
  {
    ScopedEnv env({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}});
    const LaunchEnvironment e = launch_environment();
    CHECK(e.rank == 3);
    CHECK(e.world_size == 4);
    CHECK(e.local_rank == 1);
    CHECK(e.source == "torchrun");
    const auto s = DistributedSampler::from_env(10, {.shuffle = false});
    CHECK(s.options().rank == 3);
    CHECK(s.options().num_replicas == 4);
    CHECK(s.local_rank() == 1);
    CHECK(s.indices(0) == V{3, 7, 1});  // torch: order 0..9 + [0, 1], rank 3 takes 3, 7, 11 -> 1
  }
  {
    ScopedEnv env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
    CHECK(launch_environment().source == "Open MPI");
  }
  {
    ScopedEnv env({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}});
    const LaunchEnvironment e = launch_environment();
    CHECK(e.source == "SLURM");
    CHECK(e.rank == 5);
  }
  {  // srun torchrun: torchrun's workers, not SLURM's agents
    ScopedEnv env({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"},
                   {"RANK", "6"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "2"}});
    CHECK(launch_environment().rank == 6);
  }
}

TEST_CASE("a missing, partial or contradictory launcher environment is refused clearly", "[core][sampler][distributed]") {
  {
    ScopedEnv env({});
    CHECK_THROWS_WITH(launch_environment(), Catch::Contains("no launcher environment"));
  }
  {
    ScopedEnv env({{"RANK", "1"}});
    CHECK_THROWS_WITH(launch_environment(), Catch::Contains("WORLD_SIZE is not set"));
  }
  {
    ScopedEnv env({{"RANK", "4"}, {"WORLD_SIZE", "4"}});
    CHECK_THROWS_WITH(launch_environment(), Catch::Contains("RANK=4 is not below WORLD_SIZE=4"));
  }
  {
    ScopedEnv env({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}});
    CHECK_THROWS_WITH(launch_environment(), Catch::Contains("LOCAL_RANK=2 exceeds RANK=1"));
  }
  {
    ScopedEnv env({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}});
    CHECK_THROWS_WITH(launch_environment(), Catch::Contains("SLURM_PROCID='x' is not a number"));
  }
  {
    ScopedEnv env({{"RANK", "0"}, {"WORLD_SIZE", "1"}});
    CHECK(launch_environment().local_rank == 0);  // LOCAL_RANK may be absent with torchrun
  }
}

TEST_CASE("ShardShuffleSampler permutes shards and windows and keeps reads in a few shards", "[core][sampler][shards]") {
  const std::vector<std::uint64_t> sizes = {5, 3, 8, 4, 6, 2, 7};  // 35 samples
  std::vector<std::uint64_t> shard_of;
  for (std::uint64_t s = 0; s < sizes.size(); ++s) shard_of.insert(shard_of.end(), sizes[s], s);
  const ShardShuffleSampler sampler(sizes, {.seed = 4, .window = 2});
  CHECK(sampler.size() == 35);
  std::vector<V> epochs;
  for (std::uint64_t e = 0; e < 3; ++e) {
    const V order = sampler.indices(e);
    V sorted = order;
    std::sort(sorted.begin(), sorted.end());
    V all(35);
    std::iota(all.begin(), all.end(), 0);
    CHECK(sorted == all);
    // The order reads the shards two at a time: it changes shard pair at most 3 times.
    std::vector<std::set<std::uint64_t>> windows(1);
    for (std::uint64_t i : order) {
      if (windows.back().size() == 2 && !windows.back().count(shard_of[i])) windows.emplace_back();
      windows.back().insert(shard_of[i]);
    }
    CHECK(windows.size() == 4);  // ceil(7 shards / 2)
    epochs.push_back(order);
  }
  CHECK(epochs[0] != epochs[1]);
  CHECK(epochs[0] == sampler.indices(0));
  // Literal values, recorded once.
  CHECK(ShardShuffleSampler({3, 2, 4}, {.seed = 1, .window = 1}).indices(0) == V{0, 2, 1, 5, 7, 8, 6, 4, 3});
}

TEST_CASE("ShardShuffleSampler gives every rank the same count, contiguous parts, all covered", "[core][sampler][shards]") {
  const std::vector<std::uint64_t> sizes = {10, 9, 11, 3};  // 33 samples over 4 ranks: 9 each, 3 padded
  std::multiset<std::uint64_t> seen;
  const V whole = ShardShuffleSampler(sizes, {.seed = 2, .window = 3}).indices(1);
  for (std::uint64_t r = 0; r < 4; ++r) {
    const ShardShuffleSampler rank(sizes, {.seed = 2, .window = 3, .num_replicas = 4, .rank = r});
    const V mine = rank.indices(1);
    CHECK(mine.size() == 9);
    for (std::size_t k = 0; k < mine.size(); ++k) CHECK(mine[k] == whole[(r * 9 + k) % 33]);
    seen.insert(mine.begin(), mine.end());
  }
  for (std::uint64_t i = 0; i < 33; ++i) CHECK(seen.count(i) == (i == whole[0] || i == whole[1] || i == whole[2] ? 2u : 1u));
  CHECK(ShardShuffleSampler(sizes, {.num_replicas = 4, .rank = 3, .drop_last = true}).size() == 8);
  CHECK_THROWS_WITH(ShardShuffleSampler(sizes, {.window = 0}), Catch::Contains("window"));
  CHECK_THROWS_WITH(ShardShuffleSampler(sizes, {.num_replicas = 2, .rank = 2}), Catch::Contains("rank 2"));
  CHECK_THROWS_WITH(ShardShuffleSampler({0, 0}, {}), Catch::Contains("empty"));
}
