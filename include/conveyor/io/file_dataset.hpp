#pragma once
/// @file
/// The part `ImageFolder` and `FileList` share: samples that are files under a root folder.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/file.hpp>
#include <conveyor/io/path_table.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// Relative paths (or absolute ones) and labels; reads build the full path in a per-thread
/// buffer, so a read allocates nothing once that buffer is long enough.
class FileSamples {
 public:
  explicit FileSamples(std::string root) : root_(std::move(root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  }

  [[nodiscard]] std::uint64_t size() const noexcept { return paths_.size(); }
  [[nodiscard]] std::int64_t label(std::uint64_t i) const noexcept { return labels_[i]; }
  /// The path as given (relative to the root unless absolute).
  [[nodiscard]] std::string_view relative_path(std::uint64_t i) const noexcept { return paths_[i]; }
  /// The full path.
  [[nodiscard]] std::string name(std::uint64_t i) const {
    std::string p;
    full_path(i, p);
    return p;
  }
  [[nodiscard]] const std::string& root() const noexcept { return root_; }
  /// @throws IoError when the file cannot be read.
  void read(std::uint64_t i, ByteBuffer& out) const {
    thread_local std::string path;
    full_path(i, path);
    read_file(path, out);
  }

 protected:
  void add(std::string_view rel, std::int64_t label) {
    paths_.push_back(rel);
    labels_.push_back(static_cast<std::int32_t>(label));
  }
  void reserve(std::size_t n, std::size_t chars) {
    paths_.reserve(n, chars);
    labels_.reserve(n);
  }

 private:
  void full_path(std::uint64_t i, std::string& out) const {
    const std::string_view rel = paths_[i];
    if (!rel.empty() && rel.front() == '/') {
      out.assign(rel);
      return;
    }
    out.assign(root_);
    out += '/';
    out += rel;
  }

  std::string root_;
  PathTable paths_;
  std::vector<std::int32_t> labels_;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor
