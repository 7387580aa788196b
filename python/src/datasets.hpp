#pragma once
// The shipped datasets as Python sees them: each type-erased into the AnyDataset a loader reads.
// Paths come in as os.fsencode's bytes and go out as os.fsdecode's str (paths.hpp); the package's
// Python classes (python/conveyor/_datasets.py) check the arguments and document them.

#include "bindings.hpp"

#include <conveyor/core/bytes.hpp>
#include <conveyor/io/file_list.hpp>
#include <conveyor/io/image_folder.hpp>
#include <conveyor/io/in_memory.hpp>
#include <conveyor/io/tar_shards.hpp>
#include <conveyor/io/tfrecord.hpp>
#include <conveyor/pipeline/any.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace conveyor_ext {

/// A dataset as Python sees it: one of the shipped ones, type-erased for the loader.
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// The dataset a loader reads (a loader made from an InMemory freezes it).
  virtual conveyor::AnyDataset use() { return any_; }
  [[nodiscard]] std::uint64_t size() const { return any_.size(); }
  [[nodiscard]] std::int64_t label(std::uint64_t i) const { return any_.label(checked(i)); }
  [[nodiscard]] nb::str name(std::uint64_t i) const;
  [[nodiscard]] nb::bytes read(std::uint64_t i) const;

 protected:
  explicit Dataset(conveyor::AnyDataset any) : any_(std::move(any)) {}
  std::uint64_t checked(std::uint64_t i) const;
  conveyor::AnyDataset any_;
};

class ImageFolder final : public Dataset {
 public:
  explicit ImageFolder(std::shared_ptr<const conveyor::ImageFolder> f) : Dataset(conveyor::AnyDataset(f)), f_(std::move(f)) {}
  [[nodiscard]] nb::typed<nb::list, nb::str> classes() const;
  [[nodiscard]] nb::str root() const;

 private:
  std::shared_ptr<const conveyor::ImageFolder> f_;
};

class FileList final : public Dataset {
 public:
  explicit FileList(std::shared_ptr<const conveyor::FileList> f) : Dataset(conveyor::AnyDataset(f)), f_(std::move(f)) {}
  [[nodiscard]] nb::str root() const;

 private:
  std::shared_ptr<const conveyor::FileList> f_;
};

/// A dataset of shards (tar or TFRecord): its shard sizes feed the shard-window sampler.
class ShardDataset : public Dataset {
 public:
  [[nodiscard]] const std::vector<std::uint64_t>& shard_sizes() const { return sizes_; }
  [[nodiscard]] double open_seconds() const { return seconds_; }

 protected:
  template <class D>
  explicit ShardDataset(std::shared_ptr<const D> d)
      : Dataset(conveyor::AnyDataset(d)), sizes_(d->shard_sizes()), seconds_(d->open_seconds()) {}

 private:
  std::vector<std::uint64_t> sizes_;
  double seconds_ = 0;
};

class TarShards final : public ShardDataset {
 public:
  explicit TarShards(std::shared_ptr<const conveyor::TarShards> d) : ShardDataset(std::move(d)) {}
};

class TFRecordDataset final : public ShardDataset {
 public:
  explicit TFRecordDataset(std::shared_ptr<const conveyor::TFRecordDataset> d) : ShardDataset(std::move(d)) {}
};

class InMemory final : public Dataset {
 public:
  InMemory() : InMemory(std::make_shared<conveyor::InMemory>()) {}
  void add(nb::bytes bytes, std::int64_t label);
  conveyor::AnyDataset use() override {
    frozen_ = true;  // workers read it without a lock from now on
    return any_;
  }

 private:
  explicit InMemory(std::shared_ptr<conveyor::InMemory> m)
      : Dataset(conveyor::AnyDataset(std::shared_ptr<const conveyor::InMemory>(m))), m_(std::move(m)) {}
  std::shared_ptr<conveyor::InMemory> m_;
  bool frozen_ = false;
};

}  // namespace conveyor_ext
