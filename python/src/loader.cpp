// Loader and Epoch: an AnyPipeline over the type-erased dataset, sampler and transform, iterated
// one epoch at a time. Every wait runs without the GIL and sees Ctrl-C; a ring whose slots are all
// held by tensors, and a loader used after fork(), raise instead of hanging.

#include "batch.hpp"
#include "datasets.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "transforms.hpp"

#include <conveyor/core/samplers.hpp>
#include <conveyor/core/shard_sampler.hpp>
#include <conveyor/pipeline/any.hpp>
#include <conveyor/pipeline/prometheus.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

namespace conveyor_ext {
namespace {

using SkippedRecord = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, nb::str, nb::str>;

/// What a loader and its live epoch share: the pipeline lives until both are gone.
struct Core {
  std::unique_ptr<conveyor::AnyPipeline> pipe;
  std::size_t prefetch = 0;
  pid_t pid = 0;  // the process that made it: its threads exist only there

  void check_process() const {
    if (getpid() != pid)
      throw conveyor::Error("conveyor.Loader: this loader was made in process " + std::to_string(pid) +
                            " and its worker threads do not exist after fork(); make the loader in this process");
  }
};

/// One epoch being iterated.
class Epoch {
 public:
  /// Starts `epoch` at batch `first_batch`.
  Epoch(std::shared_ptr<Core> core, std::uint64_t epoch, std::uint64_t first_batch) : core_(std::move(core)) {
    nb::gil_scoped_release release;
    core_->pipe->set_epoch(epoch, first_batch);
    it_.emplace(core_->pipe->begin());
  }
  Epoch(const Epoch&) = delete;
  Epoch& operator=(const Epoch&) = delete;
  ~Epoch() {
    if (core_ && getpid() != core_->pid) {  // after fork(): never touch the parent's threads
      new std::shared_ptr<Core>(std::move(core_));
      (void)it_.release_without_finishing();
    }
  }

  /// The next batch; raises StopIteration at the epoch's end. A batch position is consumed once
  /// its batch is handed out or its SampleError raised; a wait cut short (Ctrl-C, every slot held)
  /// consumes nothing, so the next call waits for the same batch again.
  Batch next() {
    if (!it_) throw nb::stop_iteration();
    core_->check_process();
    if (advance_) {
      nb::gil_scoped_release release;
      ++*it_;
      advance_ = false;
    }
    if (*it_ == std::default_sentinel) {
      close();
      finished_ = true;
      throw nb::stop_iteration();
    }
    using namespace std::chrono_literals;
    for (;;) {
      bool ready = false;
      {
        nb::gil_scoped_release release;
        ready = it_->wait_ready(50ms);
      }
      if (ready) break;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();  // Ctrl-C: KeyboardInterrupt
      if (core_->pipe->slots_held() >= core_->prefetch)
        throw conveyor::Error(
            "conveyor.Loader: all " + std::to_string(core_->prefetch) +
            " batches in flight are held by tensors still alive, so no batch can be made: delete tensors of "
            "earlier batches (or copy them with .clone()) before asking for the next, or make the Loader with a "
            "larger prefetch");
    }
    advance_ = true;
    ++consumed_;
    nb::gil_scoped_release release;
    return Batch(**it_);
  }

  /// Batch positions consumed so far: handed out or failed.
  [[nodiscard]] std::uint64_t consumed() const noexcept { return consumed_; }
  /// Whether the loop ran to its end (raised StopIteration).
  [[nodiscard]] bool finished() const noexcept { return finished_; }

  /// Ends the epoch (work in flight is finished and dropped); the next `next()` stops.
  void close() {
    if (!it_) return;
    if (getpid() != core_->pid) {
      (void)it_.release_without_finishing();
      return;
    }
    nb::gil_scoped_release release;
    it_.reset();
  }

 private:
  /// The pipeline's iterator, which a fork()ed child must not destroy (it would wait for workers
  /// that do not exist there).
  class Held {
   public:
    void emplace(conveyor::AnyPipeline::Iterator it) { p_ = std::make_unique<conveyor::AnyPipeline::Iterator>(std::move(it)); }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    conveyor::AnyPipeline::Iterator& operator*() { return *p_; }
    conveyor::AnyPipeline::Iterator* operator->() { return p_.get(); }
    void reset() { p_.reset(); }
    conveyor::AnyPipeline::Iterator* release_without_finishing() { return p_.release(); }

   private:
    std::unique_ptr<conveyor::AnyPipeline::Iterator> p_;
  };

  std::shared_ptr<Core> core_;
  Held it_;
  bool advance_ = false;  // the current position is consumed: move past it first
  std::uint64_t consumed_ = 0;
  bool finished_ = false;
};

class Loader {
 public:
  /// `device` for "the GPU of this process's local rank" (distributed="env"; else GPU 0).
  static constexpr int local_rank_device = -2;

  Loader(Dataset& dataset, const Transform& transform, const conveyor::PipelineOptions& options, const LoaderSampling& sampling)
      : core_(std::make_shared<Core>()) {
    conveyor::PipelineOptions o = options;
    const auto& [shuffle, distributed, rank, world_size, shard_window] = sampling;
    const std::uint64_t seed = o.seed;
    const bool drop_last = o.drop_last;
    conveyor::AnyDataset data = dataset.use();
    const std::uint64_t n = data.size();
    std::optional<conveyor::AnySampler> sampler;
    std::uint64_t world = 1, me = 0;
    if (distributed == "env") {
      const conveyor::LaunchEnvironment env = conveyor::launch_environment();
      world = env.world_size;
      me = env.rank;
    } else if (distributed == "explicit" && rank && world_size) {
      world = *world_size;
      me = *rank;
    }
    if (shard_window > 0) {
      const auto* shards = dynamic_cast<const ShardDataset*>(&dataset);
      if (!shards) throw conveyor::ConfigError("Loader: shard_window needs a TarShards or TFRecordDataset");
      if (!shuffle) throw conveyor::ConfigError("Loader: shard_window shuffles: it needs shuffle=True");
      if (distributed == "env") local_rank_ = conveyor::launch_environment().local_rank;
      sampler.emplace(conveyor::ShardShuffleSampler(
          shards->shard_sizes(),
          {.seed = seed, .window = shard_window, .num_replicas = world, .rank = me, .drop_last = drop_last}));
    } else if (distributed == "env") {
      const auto d = conveyor::DistributedSampler::from_env(n, {.shuffle = shuffle, .seed = seed, .drop_last = drop_last});
      local_rank_ = static_cast<std::uint64_t>(d.local_rank());
      sampler.emplace(d);
    } else if (distributed == "explicit") {
      if (!rank || !world_size) throw conveyor::ConfigError("Loader: distributed needs rank and world_size");
      sampler.emplace(conveyor::DistributedSampler(
          n, {.num_replicas = *world_size, .rank = *rank, .shuffle = shuffle, .seed = seed, .drop_last = drop_last}));
    } else if (distributed.empty()) {
      if (shuffle)
        sampler.emplace(conveyor::RandomSampler(n, {.seed = seed}));
      else
        sampler.emplace(conveyor::SequentialSampler(n));
    } else {
      throw conveyor::ConfigError("Loader: distributed must be False, 'env' or (rank, world_size), got '" + distributed + "'");
    }
    if (o.device == local_rank_device) o.device = local_rank_ ? static_cast<int>(*local_rank_) : 0;
    core_->pid = getpid();
    nb::gil_scoped_release release;
    core_->pipe = std::make_unique<conveyor::AnyPipeline>(std::move(data), std::move(*sampler), transform.any, o);
    core_->prefetch = core_->pipe->stats().prefetch;  // the slots chosen, where prefetch is auto
  }
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;
  ~Loader() {
    if (getpid() != core_->pid) new std::shared_ptr<Core>(std::move(core_));  // after fork(): leak, never join
    else {
      if (const auto live = live_.lock()) live->close();
      nb::gil_scoped_release release;
      core_.reset();
    }
  }

  [[nodiscard]] std::uint64_t batches_per_epoch() const { return core_->pipe->batches_per_epoch(); }
  /// Starts `epoch` at batch `first_batch`. The package's Loader chooses the epoch and ends a loop
  /// still open first, so that it can tell that loop why it ended.
  std::shared_ptr<Epoch> iterate(std::uint64_t epoch, std::uint64_t first_batch) {
    core_->check_process();
    if (const auto live = live_.lock()) live->close();
    auto e = std::make_shared<Epoch>(core_, epoch, first_batch);
    live_ = e;
    return e;
  }
  [[nodiscard]] std::string stats_json() const { return core_->pipe->stats().json(); }
  void set_gpu_share(double share) { core_->pipe->set_gpu_share(share); }
  [[nodiscard]] std::string prometheus(const std::vector<std::pair<std::string, std::string>>& labels) const {
    return conveyor::prometheus_text(core_->pipe->stats(), labels);
  }
  [[nodiscard]] std::vector<SkippedRecord> skipped() const {
    std::vector<SkippedRecord> out;
    for (const conveyor::SkippedSample& s : core_->pipe->skipped())
      out.emplace_back(s.epoch, s.index, s.replacement, fs_str(s.name), message_str(s.reason));
    return out;
  }
  [[nodiscard]] std::size_t slots_held() const { return core_->pipe->slots_held(); }
  [[nodiscard]] std::optional<std::uint64_t> local_rank() const { return local_rank_; }
  [[nodiscard]] std::uint64_t dataset_size() const { return core_->pipe->dataset().size(); }

 private:
  std::shared_ptr<Core> core_;
  std::weak_ptr<Epoch> live_;
  std::optional<std::uint64_t> local_rank_;
};

}  // namespace

void bind_loader(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<Epoch>(m, "Epoch")
      .def("next", &Epoch::next)
      .def("close", &Epoch::close)
      .def_prop_ro("consumed", &Epoch::consumed)
      .def_prop_ro("finished", &Epoch::finished);
  nb::class_<Loader>(m, "Loader")
      .def(
          "__init__",
          [](Loader* self, Dataset& dataset, const Transform& transform, const nb::kwargs& given) {
            OptionReader reader("Loader", given);
            conveyor::PipelineOptions options;
            LoaderSampling sampling;
            reader.read(options);
            reader.read(sampling);
            reader.finish();
            new (self) Loader(dataset, transform, options, sampling);
          },
          nb::sig("def __init__(self, dataset: Dataset, transform: Transform, /, **options: typing.Any) -> None"),
          "A loader of `dataset` through `transform`, with PipelineOptions' declared options and the sampling's "
          "(shuffle, distributed, rank, world_size, shard_window) by name.")
      .def("set_gpu_share", &Loader::set_gpu_share, "share"_a)
      .def("prometheus", &Loader::prometheus, "labels"_a)
      .def("batches_per_epoch", &Loader::batches_per_epoch)
      .def("iterate", &Loader::iterate, "epoch"_a, "first_batch"_a)
      .def("stats_json", &Loader::stats_json)
      .def("skipped", &Loader::skipped)
      .def("slots_held", &Loader::slots_held)
      .def_prop_ro("local_rank", &Loader::local_rank)
      .def_prop_ro("dataset_size", &Loader::dataset_size);
}

}  // namespace conveyor_ext
