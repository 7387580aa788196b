#pragma once
/// @file
/// The files of a sharded dataset: shard patterns with brace expansion, and positioned reads
/// (`pread`) from a bounded set of open files, so a sample is one system call and a million-sample
/// dataset holds a few dozen descriptors, not one per shard.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/file.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace conveyor {
inline namespace v0 {

/// DALI's `wds2idx` index beside a tar shard: the shard's path up to the first dot of its file
/// name, then `.idx` (`train-000001.tar` → `train-000001.idx`), as `TarShards` reads and
/// `TarWriter` writes it.
[[nodiscard]] inline std::string wds_index_path(std::string_view shard) {
  const std::size_t slash = shard.rfind('/');
  const std::size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const std::size_t dot = shard.find('.', base + 1);
  return std::string(dot == std::string_view::npos ? shard : shard.substr(0, dot)) + ".idx";
}

/// Expands `pattern`'s braces, as WebDataset and bash do: `{000..127}` (a numeric range, padded to
/// the width of its first bound), `{a,b,c}` (a list); several braces give every combination, in
/// order. A pattern without braces is itself.
/// @throws ConfigError for an unclosed brace or a range running backwards.
[[nodiscard]] inline std::vector<std::string> expand_braces(std::string_view pattern) {
  const std::size_t open = pattern.find('{');
  if (open == std::string_view::npos) return {std::string(pattern)};
  const std::size_t close = pattern.find('}', open);
  if (close == std::string_view::npos)
    throw ConfigError("shard pattern '" + std::string(pattern) + "': '{' at byte " + std::to_string(open) + " is never closed");
  const std::string_view body = pattern.substr(open + 1, close - open - 1);
  std::vector<std::string> choices;
  const std::size_t dots = body.find("..");
  if (dots != std::string_view::npos) {
    const std::string_view lo = body.substr(0, dots), hi = body.substr(dots + 2);
    const auto number = [&](std::string_view s) {
      if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string_view::npos)
        throw ConfigError("shard pattern '" + std::string(pattern) + "': '" + std::string(body) + "' is not a range of numbers");
      return std::stoull(std::string(s));
    };
    const std::uint64_t a = number(lo), b = number(hi);
    if (a > b) throw ConfigError("shard pattern '" + std::string(pattern) + "': range {" + std::string(body) + "} runs backwards");
    for (std::uint64_t v = a; v <= b; ++v) {
      std::string s = std::to_string(v);
      if (s.size() < lo.size()) s.insert(0, lo.size() - s.size(), '0');
      choices.push_back(std::move(s));
    }
  } else {
    for (std::size_t at = 0;;) {
      const std::size_t comma = body.find(',', at);
      choices.emplace_back(body.substr(at, comma - at));
      if (comma == std::string_view::npos) break;
      at = comma + 1;
    }
  }
  const std::vector<std::string> tails = expand_braces(pattern.substr(close + 1));
  std::vector<std::string> out;
  for (const std::string& c : choices)  // the first brace outermost, as bash orders them
    for (const std::string& rest : tails) out.push_back(std::string(pattern.substr(0, open)) + c + rest);
  return out;
}

/// Positioned reads from many files through at most `max_open` descriptors at a time (the least
/// recently used one closed first, never while a read uses it). Thread-safe.
class ShardFiles {
 public:
  explicit ShardFiles(std::vector<std::string> paths, std::size_t max_open = 64)
      : paths_(std::move(paths)), files_(paths_.size()), max_open_(max_open ? max_open : 1) {}
  ShardFiles(const ShardFiles&) = delete;
  ShardFiles& operator=(const ShardFiles&) = delete;
  ~ShardFiles() {
    for (File& f : files_)
      if (f.fd >= 0) ::close(f.fd);
  }

  [[nodiscard]] std::size_t size() const noexcept { return paths_.size(); }
  [[nodiscard]] const std::string& path(std::size_t shard) const noexcept { return paths_[shard]; }

  /// Bytes of shard `shard`. @throws IoError naming it when it cannot be opened or is not a file.
  [[nodiscard]] std::uint64_t file_size(std::size_t shard) const {
    const Use use(*this, shard);
    struct stat st {};
    if (::fstat(use.fd, &st) != 0) detail::throw_errno("cannot stat file", paths_[shard].c_str(), errno);
    if (!S_ISREG(st.st_mode)) throw IoError("not a regular file", paths_[shard]);
    return static_cast<std::uint64_t>(st.st_size);
  }

  /// Replaces `out` with `size` bytes at `offset` of shard `shard`: one `pread`.
  /// @throws IoError naming the shard and the offset when fewer bytes are there.
  void read(std::size_t shard, std::uint64_t offset, std::size_t size, ByteBuffer& out) const {
    const Use use(*this, shard);
    out.resize(size);
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pread(use.fd, out.data() + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        detail::throw_errno("cannot read file", paths_[shard].c_str(), errno);
      }
      if (n == 0)
        throw IoError("premature end: " + std::to_string(size) + " bytes expected at byte " + std::to_string(offset) +
                          ", " + std::to_string(done) + " there",
                      paths_[shard]);
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  struct File {
    int fd = -1;
    int users = 0;
    std::uint64_t last_use = 0;
  };

  /// An open descriptor of one shard for the duration of a read.
  class Use {
   public:
    Use(const ShardFiles& files, std::size_t shard) : files_(files), shard_(shard), fd(files.acquire(shard)) {}
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    ~Use() { files_.release(shard_); }

   private:
    const ShardFiles& files_;
    std::size_t shard_;

   public:
    const int fd;
  };

  int acquire(std::size_t shard) const {
    std::lock_guard lock(m_);
    File& f = files_[shard];
    if (f.fd < 0) {
      if (open_ >= max_open_) evict();
      f.fd = ::open(paths_[shard].c_str(), O_RDONLY | O_CLOEXEC);
      if (f.fd < 0) detail::throw_errno("cannot open file", paths_[shard].c_str(), errno);
      ++open_;
    }
    ++f.users;
    f.last_use = ++clock_;
    return f.fd;
  }
  void release(std::size_t shard) const noexcept {
    std::lock_guard lock(m_);
    --files_[shard].users;
  }
  /// Closes the least recently used descriptor no read is using (none: one more stays open).
  void evict() const noexcept {
    File* oldest = nullptr;
    for (File& f : files_)
      if (f.fd >= 0 && f.users == 0 && (!oldest || f.last_use < oldest->last_use)) oldest = &f;
    if (!oldest) return;
    ::close(oldest->fd);
    oldest->fd = -1;
    --open_;
  }

  std::vector<std::string> paths_;
  mutable std::vector<File> files_;
  std::size_t max_open_;
  mutable std::size_t open_ = 0;
  mutable std::uint64_t clock_ = 0;
  mutable std::mutex m_;
};

}  // namespace v0
}  // namespace conveyor
