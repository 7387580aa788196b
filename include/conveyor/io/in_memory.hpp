#pragma once
/// @file
/// `InMemory`: encoded samples already in memory (a shard, a database blob, a test fixture).

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Encoded blobs and their labels, stored back to back in one buffer.
class InMemory {
 public:
  InMemory() { offsets_.push_back(0); }
  /// Takes `blobs[i]` with label `labels[i]`.
  /// @throws ConfigError when the two lists differ in length.
  InMemory(const std::vector<std::vector<std::byte>>& blobs, const std::vector<std::int64_t>& labels) : InMemory() {
    if (blobs.size() != labels.size())
      throw ConfigError("InMemory: " + std::to_string(blobs.size()) + " blobs but " + std::to_string(labels.size()) +
                        " labels");
    for (std::size_t i = 0; i < blobs.size(); ++i) add(blobs[i], labels[i]);
  }

  /// Appends one sample.
  void add(std::span<const std::byte> bytes, std::int64_t label) {
    data_.insert(data_.end(), bytes.begin(), bytes.end());
    offsets_.push_back(data_.size());
    labels_.push_back(label);
  }

  [[nodiscard]] std::uint64_t size() const noexcept { return labels_.size(); }
  [[nodiscard]] std::int64_t label(std::uint64_t i) const noexcept { return labels_[i]; }
  [[nodiscard]] std::string name(std::uint64_t i) const { return "memory[" + std::to_string(i) + "]"; }
  /// The bytes of sample i, without copying.
  [[nodiscard]] std::span<const std::byte> bytes(std::uint64_t i) const noexcept {
    return {data_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]};
  }
  void read(std::uint64_t i, ByteBuffer& out) const { out.assign(bytes(i)); }

 private:
  std::vector<std::byte> data_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::int64_t> labels_;
};

static_assert(Dataset<InMemory>);

}  // namespace v0
}  // namespace conveyor
