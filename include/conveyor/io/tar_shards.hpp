#pragma once
/// @file
/// `TarShards`: WebDataset tar shards as a random-access `Dataset`. Opening lists every sample's
/// image and label members (offsets and sizes), from DALI's `wds2idx` index beside each shard when
/// there is one, else by walking the shard's tar headers; it reads no sample, so opening costs one
/// read per shard with indices. `read(i)` is then one positioned read of the image's bytes, and
/// `read_labeled(i)` (what the pipeline calls) one read spanning the image and its label, which
/// are adjacent; a label that is not an integer fails that sample's read, naming shard and key.
///
/// WebDataset's rules: a member's key is its path up to the first dot of its file name, the rest
/// its extension; a sample is the members with one key, adjacent in the shard. The image is the
/// sample's member of the first of `image_extensions` it has, the label its `label_extension`
/// member, an ASCII integer. Tar: POSIX ustar (with its name prefix), PAX extended headers (path,
/// size) and GNU long names, as Python's tarfile and GNU tar write them.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/clock.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/shard_files.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct TarShardsOptions {
  /// The image is the sample's member of the first of these extensions it has.
  std::vector<std::string> image_extensions{"jpg", "jpeg", "png"};
  /// The member holding the label, an ASCII integer.
  std::string label_extension = "cls";
  /// Read `<shard without its extension>.idx` (DALI's wds2idx, v1.2) when it exists.
  bool use_index = true;
  /// Shards open at once.
  std::size_t max_open_files = 64;
};

class TarShards {
 public:
  /// The shards `pattern` names (`train-{000000..001281}.tar`; see `expand_braces`).
  /// @throws IoError or DecodeError naming the shard, the member or key and the byte offset of
  ///         what is wrong; ConfigError for a pattern that names nothing.
  explicit TarShards(std::string_view pattern, TarShardsOptions options = {})
      : TarShards(expand_braces(pattern), std::move(options)) {}
  explicit TarShards(std::vector<std::string> shards, TarShardsOptions options = {})
      : o_(std::move(options)), files_(std::make_unique<ShardFiles>(std::move(shards), o_.max_open_files)) {
    if (files_->size() == 0) throw ConfigError("TarShards: no shard given");
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t s = 0; s < files_->size(); ++s) {
      const std::size_t first = samples_.size();
      if (!(o_.use_index && read_index(s))) walk(s);
      shard_sizes_.push_back(samples_.size() - first);
    }
    open_seconds_ = seconds_since(t0);
  }

  [[nodiscard]] std::uint64_t size() const noexcept { return samples_.size(); }
  void read(std::uint64_t i, ByteBuffer& out) const {
    const Sample& s = samples_[i];
    files_->read(s.shard, s.offset, s.size, out);
  }
  /// The label member's integer, read when asked (one small read).
  /// @throws IoError, or DecodeError naming shard, key and byte for a label that is not an integer.
  [[nodiscard]] std::int64_t label(std::uint64_t i) const {
    const Sample& s = samples_[i];
    ByteBuffer b;
    files_->read(s.shard, s.label_offset, s.label_size, b);
    return parse_label(i, b.span());
  }
  /// `read` and `label` in one positioned read spanning both members (adjacent in a sample); the
  /// image bytes are then moved to the front of `out`.
  std::int64_t read_labeled(std::uint64_t i, ByteBuffer& out) const {
    const Sample& s = samples_[i];
    const std::uint64_t first = std::min(s.offset, s.label_offset);
    const std::uint64_t end = std::max(s.offset + s.size, s.label_offset + s.label_size);
    if (end - first > std::uint64_t(s.size) + s.label_size + max_gap) {  // not adjacent: two reads
      const std::int64_t l = label(i);
      read(i, out);
      return l;
    }
    files_->read(s.shard, first, static_cast<std::size_t>(end - first), out);
    const std::int64_t l = parse_label(i, out.span().subspan(s.label_offset - first, s.label_size));
    std::memmove(out.data(), out.data() + (s.offset - first), s.size);
    out.resize(s.size);
    return l;
  }
  /// "shard:key".
  [[nodiscard]] std::string name(std::uint64_t i) const {
    const Sample& s = samples_[i];
    return files_->path(s.shard) + ":" + std::string(key(i));
  }
  [[nodiscard]] std::string_view key(std::uint64_t i) const noexcept {
    const Sample& s = samples_[i];
    return std::string_view(keys_).substr(s.key, s.key_size);
  }

  /// Samples per shard, in shard order (sample indices run shard by shard).
  [[nodiscard]] const std::vector<std::uint64_t>& shard_sizes() const noexcept { return shard_sizes_; }
  /// Seconds opening took (indices read or headers walked; labels are read with the samples).
  [[nodiscard]] double open_seconds() const noexcept { return open_seconds_; }

 private:
  struct Sample {
    std::uint32_t shard = 0;
    std::uint32_t size = 0;
    std::uint64_t offset = 0;
    std::uint64_t label_offset = 0;
    std::uint32_t label_size = 0;
    std::uint32_t key = 0, key_size = 0;  // in keys_
  };
  /// One regular member of a shard.
  struct Member {
    std::string path;
    std::uint64_t offset = 0;  // of its data
    std::uint64_t size = 0;
  };
  static constexpr std::size_t block = 512;
  /// Bytes between a sample's image and label read through rather than read twice (headers,
  /// padding, another member such as a .json).
  static constexpr std::uint64_t max_gap = 16 * 1024;

  /// Splits `path` into WebDataset's key and extension; nothing for hidden files or names
  /// without a dot.
  static std::optional<std::pair<std::string_view, std::string_view>> split(std::string_view path) noexcept {
    const std::size_t base = path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1;
    const std::size_t dot = path.find('.', base);
    if (dot == std::string_view::npos || dot == base) return std::nullopt;
    return std::pair{path.substr(0, dot), path.substr(dot + 1)};
  }

  [[noreturn]] void fail(std::size_t shard, const std::string& what) const {
    throw DecodeError("TarShards: " + files_->path(shard) + ": " + what);
  }

  /// Groups the members of shard `shard`, in order, into samples.
  void add_samples(std::size_t shard, const std::vector<Member>& members) {
    std::unordered_set<std::string> seen;
    for (std::size_t m = 0; m < members.size();) {
      const auto kv = split(members[m].path);
      if (!kv) {
        ++m;
        continue;
      }
      const std::string k(kv->first);
      if (!seen.insert(k).second)
        fail(shard, "key '" + k + "' appears again at byte " + std::to_string(members[m].offset) +
                        " (a sample's members must be adjacent)");
      const Member* image = nullptr;
      const Member* label = nullptr;
      std::size_t image_rank = o_.image_extensions.size();
      std::string found;
      for (; m < members.size(); ++m) {
        const auto next = split(members[m].path);
        if (!next || next->first != kv->first) break;
        found += (found.empty() ? "" : ", ") + std::string(next->second);
        for (std::size_t e = 0; e < image_rank; ++e)
          if (next->second == o_.image_extensions[e]) {
            image = &members[m];
            image_rank = e;
          }
        if (next->second == o_.label_extension) label = &members[m];
      }
      if (!image) fail(shard, "sample '" + k + "' has no image member (" + joined(o_.image_extensions) + "): it has " + found);
      if (!label) fail(shard, "sample '" + k + "' has no '" + o_.label_extension + "' member: it has " + found);
      if (image->size > UINT32_MAX) fail(shard, "sample '" + k + "': an image of " + std::to_string(image->size) + " bytes");
      if (label->size > 32)
        fail(shard, "sample '" + k + "': its label is " + std::to_string(label->size) + " bytes, not an integer");
      Sample s;
      s.shard = static_cast<std::uint32_t>(shard);
      s.offset = image->offset;
      s.size = static_cast<std::uint32_t>(image->size);
      s.label_offset = label->offset;
      s.label_size = static_cast<std::uint32_t>(label->size);
      s.key = static_cast<std::uint32_t>(keys_.size());
      s.key_size = static_cast<std::uint32_t>(k.size());
      keys_ += k;
      samples_.push_back(s);
    }
  }

  std::int64_t parse_label(std::uint64_t i, std::span<const std::byte> bytes) const {
    std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    while (!text.empty() && std::strchr(" \t\r\n", text.back())) text.remove_suffix(1);
    while (!text.empty() && std::strchr(" \t\r\n", text.front())) text.remove_prefix(1);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      fail(samples_[i].shard, "sample '" + std::string(key(i)) + "': label '" + std::string(text) + "' at byte " +
                                  std::to_string(samples_[i].label_offset) + " is not an integer");
    return v;
  }

  static std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  /// An octal (NUL or space terminated) or base-256 tar number.
  static std::optional<std::uint64_t> tar_number(const unsigned char* p, std::size_t n) noexcept {
    if (p[0] & 0x80) {  // base-256, GNU's form for large sizes
      std::uint64_t v = p[0] & 0x7F;
      for (std::size_t i = 1; i < n; ++i) {
        if (v >> 56) return std::nullopt;
        v = v << 8 | p[i];
      }
      return v;
    }
    std::size_t i = 0;
    while (i < n && p[i] == ' ') ++i;
    std::uint64_t v = 0;
    bool any = false;
    for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i, any = true) {
      if (v >> 60) return std::nullopt;
      v = v * 8 + (p[i] - '0');
    }
    if (!any || (i < n && p[i] != ' ' && p[i] != 0)) return std::nullopt;
    return v;
  }

  static std::string field(const unsigned char* p, std::size_t n) {
    return std::string(reinterpret_cast<const char*>(p), strnlen(reinterpret_cast<const char*>(p), n));
  }

  /// Walks shard `shard`'s headers, checking each, and adds its samples.
  void walk(std::size_t shard) {
    const std::uint64_t file_size = files_->file_size(shard);
    std::vector<Member> members;
    ByteBuffer header, extra;
    std::optional<std::string> long_path;
    std::optional<std::uint64_t> pax_size;
    std::uint64_t at = 0;
    while (at < file_size) {  // a shard may end without tar's two zero blocks, not inside a header
      if (file_size - at < block)
        fail(shard, "is cut short: " + std::to_string(file_size - at) + " bytes of a tar header at byte " + std::to_string(at));
      files_->read(shard, at, block, header);
      const auto* h = reinterpret_cast<const unsigned char*>(header.data());
      if (std::all_of(h, h + block, [](unsigned char c) { return c == 0; })) break;  // the end
      const auto sum = tar_number(h + 148, 8);
      unsigned computed = 0;
      for (std::size_t i = 0; i < block; ++i) computed += (i >= 148 && i < 156) ? ' ' : h[i];
      if (!sum || *sum != computed)
        fail(shard, "the tar header at byte " + std::to_string(at) + " has a bad checksum (not a tar file, or corrupt)");
      const auto size_field = tar_number(h + 124, 12);
      if (!size_field) fail(shard, "the tar header at byte " + std::to_string(at) + " has no valid size");
      const char type = static_cast<char>(h[156]);
      const bool extended = type == 'x' || type == 'g' || type == 'L' || type == 'K';
      const std::uint64_t size = extended ? *size_field : pax_size.value_or(*size_field);  // PAX's for the next member
      const std::uint64_t data = at + block;
      if (size > file_size - data)
        fail(shard, "the member at byte " + std::to_string(at) + " claims " + std::to_string(size) +
                        " bytes, past the end of the shard (" + std::to_string(file_size) + " bytes)");
      if (type == 'x' || type == 'L') {
        if (size > (1u << 20)) fail(shard, "the extended header at byte " + std::to_string(at) + " is too large");
        files_->read(shard, data, static_cast<std::size_t>(size), extra);
        const std::string_view text(reinterpret_cast<const char*>(extra.data()), extra.size());
        if (type == 'L') {
          long_path = std::string(text.substr(0, text.find('\0')));
        } else {
          parse_pax(shard, at, text, long_path, pax_size);
        }
      } else if (type != 'g' && type != 'K') {
        if (type == '0' || type == '\0') {
          std::string path;
          if (long_path) {
            path = *long_path;
          } else {
            path = field(h, 100);
            const bool ustar = std::memcmp(h + 257, "ustar", 5) == 0;
            const std::string prefix = ustar ? field(h + 345, 155) : std::string();
            if (!prefix.empty()) path = prefix + "/" + path;
          }
          members.push_back({std::move(path), data, size});
        }
        long_path.reset();
        pax_size.reset();
      }
      at = data + (size + block - 1) / block * block;
    }
    add_samples(shard, members);
  }

  /// The path and size records of a PAX extended header ("<length> <key>=<value>\n" each).
  void parse_pax(std::size_t shard, std::uint64_t at, std::string_view text, std::optional<std::string>& path,
                 std::optional<std::uint64_t>& size) const {
    while (!text.empty()) {
      std::size_t len = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), len);
      if (ec != std::errc() || len == 0 || len > text.size() || end >= text.data() + len || *end != ' ')
        fail(shard, "the PAX header at byte " + std::to_string(at) + " has a malformed record");
      const std::string_view record = text.substr(static_cast<std::size_t>(end - text.data()) + 1,
                                                  len - static_cast<std::size_t>(end - text.data()) - 2);
      const std::size_t eq = record.find('=');
      if (eq != std::string_view::npos) {
        const std::string_view k = record.substr(0, eq), v = record.substr(eq + 1);
        if (k == "path") path = std::string(v);
        if (k == "size") {
          std::uint64_t n = 0;
          const auto [e, err] = std::from_chars(v.data(), v.data() + v.size(), n);
          if (err != std::errc() || e != v.data() + v.size())
            fail(shard, "the PAX header at byte " + std::to_string(at) + " has a bad size");
          size = n;
        }
      }
      text.remove_prefix(len);
    }
  }

  /// DALI's index of shard `shard`, if there is one: "v1.2 <samples>", then a line a sample of
  /// "<ext> <offset> <size> <name>" per member. Returns false when there is none.
  bool read_index(std::size_t shard) {
    const std::string& path = files_->path(shard);
    const std::string index = wds_index_path(path);
    std::ifstream in(index, std::ios::binary);
    if (!in) return false;
    const std::uint64_t file_size = files_->file_size(shard);
    std::ostringstream whole;
    whole << in.rdbuf();
    const std::string text = std::move(whole).str();
    std::string_view rest(text);
    // Whitespace-separated fields, parsed in place (an index lists every member of a shard).
    const auto next_line = [&rest]() -> std::optional<std::string_view> {
      if (rest.empty()) return std::nullopt;
      const std::size_t nl = rest.find('\n');
      const std::string_view l = rest.substr(0, nl);
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
      return l;
    };
    const auto token = [](std::string_view& l) {
      while (!l.empty() && (l.front() == ' ' || l.front() == '\t' || l.front() == '\r')) l.remove_prefix(1);
      std::size_t n = 0;
      while (n < l.size() && l[n] != ' ' && l[n] != '\t' && l[n] != '\r') ++n;
      const std::string_view t = l.substr(0, n);
      l.remove_prefix(n);
      return t;
    };
    const auto number = [](std::string_view t) -> std::optional<std::uint64_t> {
      std::uint64_t v = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || end != t.data() + t.size() || t.empty()) return std::nullopt;
      return v;
    };
    const auto first = next_line();
    std::string_view head = first.value_or("");
    const std::string_view version = token(head);
    const auto count = number(token(head));
    if (version != "v1.2" || !count)
      throw DecodeError("TarShards: " + index + ": not a wds2idx v1.2 index (first line '" + std::string(first.value_or("")) +
                        "')");
    std::vector<Member> members;
    for (std::uint64_t n = 0; n < *count; ++n) {
      auto l = next_line();
      if (!l)
        throw DecodeError("TarShards: " + index + ": " + std::to_string(*count) + " samples announced, " +
                          std::to_string(n) + " listed");
      for (std::string_view ext = token(*l); !ext.empty(); ext = token(*l)) {
        const auto offset = number(token(*l)), size = number(token(*l));
        const std::string_view name = token(*l);
        if (!offset || !size || name.empty())
          throw DecodeError("TarShards: " + index + ": line " + std::to_string(n + 2) + " is not 'ext offset size name' groups");
        if (*offset > file_size || *size > file_size - *offset)
          throw DecodeError("TarShards: " + index + ": member '" + std::string(name) + "' at byte " + std::to_string(*offset) +
                            " of " + std::to_string(*size) + " bytes is past the end of " + path);
        members.push_back({std::string(name), *offset, *size});
      }
    }
    add_samples(shard, members);
    return true;
  }

  TarShardsOptions o_;
  std::unique_ptr<ShardFiles> files_;  // behind a pointer: the dataset moves, its open files stay
  std::vector<Sample> samples_;
  std::string keys_;
  std::vector<std::uint64_t> shard_sizes_;
  double open_seconds_ = 0;
};

static_assert(Dataset<TarShards>);

}  // namespace v0
}  // namespace conveyor
