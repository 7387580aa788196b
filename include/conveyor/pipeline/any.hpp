#pragma once
/// @file
/// Type-erased datasets, samplers and transforms, for loaders whose parts are chosen at run time
/// (a language binding, a service configured from a file): `AnyPipeline` is one `BatchPipeline`
/// type over every combination.
///
/// ```
/// conveyor::AnyPipeline pipe(conveyor::AnyDataset(conveyor::ImageFolder(root)),
///                            conveyor::AnySampler(conveyor::RandomSampler(n, {.seed = 1})),
///                            conveyor::AnyTransform(conveyor::ImageAugment::train()), {.batch_size = 256});
/// ```
///
/// The cost is one virtual call per sample and stage (read, label, apply or stage), and one per
/// epoch for the order: nothing next to a decode (benchmarks/pipeline/bench_any.cpp).

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/device/staging.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/pipeline/batch_pipeline.hpp>

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Any `Dataset`, held (moved in) or shared. Copies share it; calls are as thread-safe as its own.
class AnyDataset {
 public:
  // Not a copy or move of AnyDataset (checked first: Dataset<AnyDataset> needs AnyDataset copyable).
  template <class D>
    requires(!std::same_as<std::remove_cvref_t<D>, AnyDataset> && Dataset<D>)
  explicit AnyDataset(D dataset) : AnyDataset(std::make_shared<const D>(std::move(dataset))) {}
  template <Dataset D>
  explicit AnyDataset(std::shared_ptr<const D> dataset) : d_(std::make_shared<const Model<D>>(std::move(dataset))) {}

  [[nodiscard]] std::uint64_t size() const { return d_->size(); }
  void read(std::uint64_t i, ByteBuffer& out) const { d_->read(i, out); }
  std::int64_t read_labeled(std::uint64_t i, ByteBuffer& out) const { return d_->read_labeled(i, out); }
  [[nodiscard]] std::int64_t label(std::uint64_t i) const { return d_->label(i); }
  [[nodiscard]] std::string name(std::uint64_t i) const { return d_->name(i); }

 private:
  struct Interface {
    virtual ~Interface() = default;
    virtual std::uint64_t size() const = 0;
    virtual void read(std::uint64_t i, ByteBuffer& out) const = 0;
    virtual std::int64_t read_labeled(std::uint64_t i, ByteBuffer& out) const = 0;
    virtual std::int64_t label(std::uint64_t i) const = 0;
    virtual std::string name(std::uint64_t i) const = 0;
  };
  template <class D>
  struct Model final : Interface {
    explicit Model(std::shared_ptr<const D> held) : d(std::move(held)) {}
    std::uint64_t size() const override { return d->size(); }
    void read(std::uint64_t i, ByteBuffer& out) const override { d->read(i, out); }
    std::int64_t read_labeled(std::uint64_t i, ByteBuffer& out) const override {
      return conveyor::read_labeled(*d, i, out);
    }
    std::int64_t label(std::uint64_t i) const override { return d->label(i); }
    std::string name(std::uint64_t i) const override { return d->name(i); }
    std::shared_ptr<const D> d;
  };
  std::shared_ptr<const Interface> d_;
};

/// Any `Sampler`. Copies share it.
class AnySampler {
 public:
  // Not a copy or move of AnySampler (checked first: Sampler<AnySampler> needs AnySampler copyable).
  template <class S>
    requires(!std::same_as<std::remove_cvref_t<S>, AnySampler> && Sampler<S>)
  explicit AnySampler(S sampler) : s_(std::make_shared<const Model<S>>(std::move(sampler))) {}

  [[nodiscard]] std::uint64_t size() const { return s_->size(); }
  [[nodiscard]] std::vector<std::uint64_t> indices(std::uint64_t epoch) const { return s_->indices(epoch); }

 private:
  struct Interface {
    virtual ~Interface() = default;
    virtual std::uint64_t size() const = 0;
    virtual std::vector<std::uint64_t> indices(std::uint64_t epoch) const = 0;
  };
  template <class S>
  struct Model final : Interface {
    explicit Model(S held) : s(std::move(held)) {}
    std::uint64_t size() const override { return s.size(); }
    std::vector<std::uint64_t> indices(std::uint64_t epoch) const override { return s.indices(epoch); }
    S s;
  };
  std::shared_ptr<const Interface> s_;
};

/// Any `Transform`, keeping what it offers a device (`DeviceTransform`), its stage names and its
/// validation. Copies share it.
class AnyTransform {
  struct WorkspaceBase {
    virtual ~WorkspaceBase() = default;
  };

 public:
  /// One worker's workspace of the held transform.
  struct Workspace {
    std::unique_ptr<WorkspaceBase> held;
  };

  // Not a copy or move of AnyTransform (checked first: Transform<AnyTransform> needs AnyTransform copyable).
  template <class T>
    requires(!std::same_as<std::remove_cvref_t<T>, AnyTransform> && Transform<T>)
  explicit AnyTransform(T transform) : t_(std::make_shared<const Model<T>>(std::move(transform))) {}

  [[nodiscard]] SampleSpec sample_spec() const { return t_->sample_spec(); }
  [[nodiscard]] Workspace make_workspace() const { return {t_->make_workspace()}; }
  void validate() const { t_->validate(); }
  void apply(const SampleContext& ctx, std::span<const std::byte> in, std::span<std::byte> out, Workspace& ws) const {
    t_->apply(ctx, in, out, *ws.held);
  }
  [[nodiscard]] std::span<const std::string_view> stage_names() const { return t_->stage_names(); }
  /// The held transform's image layout (ImageAugment's `layout`), for a batch transform; none for
  /// samples that are not images.
  [[nodiscard]] std::optional<Layout> image_layout() const { return t_->image_layout(); }
  /// The held transform's device work: its own, or its finished samples copied.
  [[nodiscard]] DeviceWork device_work() const { return t_->device_work(); }
  /// The held transform's `stage`; only called when its device work stages samples.
  [[nodiscard]] ops::SamplePlan stage(const SampleContext& ctx, std::span<const std::byte> in, StagingArea& area,
                                      Workspace& ws) const {
    return t_->stage(ctx, in, area, *ws.held);
  }

 private:
  struct Interface {
    virtual ~Interface() = default;
    virtual SampleSpec sample_spec() const = 0;
    virtual std::unique_ptr<WorkspaceBase> make_workspace() const = 0;
    virtual void validate() const = 0;
    virtual void apply(const SampleContext&, std::span<const std::byte>, std::span<std::byte>, WorkspaceBase&) const = 0;
    virtual std::span<const std::string_view> stage_names() const = 0;
    virtual std::optional<Layout> image_layout() const = 0;
    virtual DeviceWork device_work() const = 0;
    virtual ops::SamplePlan stage(const SampleContext&, std::span<const std::byte>, StagingArea&, WorkspaceBase&) const = 0;
  };
  template <class T>
  struct Model final : Interface {
    struct Held final : WorkspaceBase {
      explicit Held(typename T::Workspace held) : w(std::move(held)) {}
      typename T::Workspace w;
    };
    static typename T::Workspace& of(WorkspaceBase& ws) { return static_cast<Held&>(ws).w; }

    explicit Model(T held) : t(std::move(held)) {}
    SampleSpec sample_spec() const override { return t.sample_spec(); }
    std::unique_ptr<WorkspaceBase> make_workspace() const override { return std::make_unique<Held>(t.make_workspace()); }
    void validate() const override {
      if constexpr (requires { t.validate(); }) t.validate();
    }
    void apply(const SampleContext& ctx, std::span<const std::byte> in, std::span<std::byte> out,
               WorkspaceBase& ws) const override {
      t.apply(ctx, in, out, of(ws));
    }
    std::span<const std::string_view> stage_names() const override {
      if constexpr (requires { t.stage_names(); })
        return t.stage_names();
      else
        return {};
    }
    std::optional<Layout> image_layout() const override { return detail::image_layout_of(t); }
    DeviceWork device_work() const override { return device_work_of(t); }
    ops::SamplePlan stage(const SampleContext& ctx, std::span<const std::byte> in, StagingArea& area,
                          WorkspaceBase& ws) const override {
      if constexpr (DeviceTransform<T>)
        return t.stage(ctx, in, area, of(ws));
      else
        throw Error("AnyTransform::stage: the held transform does not stage samples for a device");
    }
    T t;
  };
  std::shared_ptr<const Interface> t_;
};

static_assert(Dataset<AnyDataset>);
static_assert(Sampler<AnySampler>);
static_assert(DeviceTransform<AnyTransform>);

/// A `BatchPipeline` whose dataset, sampler and transform are chosen at run time.
using AnyPipeline = BatchPipeline<AnyDataset, AnySampler, AnyTransform>;

}  // namespace v0
}  // namespace conveyor
