#pragma once
/// @file
/// Writing shards: WebDataset tars (POSIX ustar, with DALI's `wds2idx` index) and TFRecord files
/// of `tf.train.Example`s (with DALI's `tfrecord2idx` index), byte for byte the same for the same
/// samples (every tar header's time, owner and mode fixed). What `conveyor-pack` writes and
/// `TarShards` and `TFRecordDataset` read.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/crc32c.hpp>
#include <conveyor/io/shard_files.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// A tar of WebDataset samples, and its index beside it (`<path without extension>.idx`).
class TarWriter {
 public:
  /// @throws IoError when the files cannot be created.
  explicit TarWriter(std::string path) : path_(std::move(path)), out_(path_, std::ios::binary | std::ios::trunc) {
    if (!out_) throw IoError("cannot create file", path_);
  }
  TarWriter(const TarWriter&) = delete;
  TarWriter& operator=(const TarWriter&) = delete;
  ~TarWriter() {
    try {
      close();
    } catch (...) {  // destructors do not throw: close() explicitly to see a failure
    }
  }

  /// Adds a sample: one member `key.ext` for each (ext, bytes) pair, in order. `key` has no dot.
  void add(std::string_view key, std::span<const std::pair<std::string, std::span<const std::byte>>> members) {
    if (key.find('.') != std::string_view::npos) throw ConfigError("TarWriter: key '" + std::string(key) + "' has a dot");
    std::string line;
    for (const auto& [ext, bytes] : members) {
      const std::string name = std::string(key) + "." + ext;
      if (name.size() > 100) throw ConfigError("TarWriter: member name '" + name + "' is longer than 100 bytes");
      header(name, bytes.size());
      const std::uint64_t data = offset_;
      write(bytes.data(), bytes.size());
      pad();
      line += (line.empty() ? "" : " ") + ext + " " + std::to_string(data) + " " + std::to_string(bytes.size()) + " " + name;
    }
    index_.push_back(std::move(line));
  }

  /// Ends the archive (two zero blocks) and writes the index.
  /// @throws IoError when a write failed.
  void close() {
    if (closed_) return;
    closed_ = true;
    static const char zeros[1024] = {};
    write(zeros, sizeof zeros);
    out_.close();
    if (!out_) throw IoError("cannot write file", path_);
    const std::string index = wds_index_path(path_);
    std::ofstream idx(index, std::ios::trunc);
    idx << "v1.2 " << index_.size() << "\n";
    for (const std::string& l : index_) idx << l << "\n";
    if (!idx) throw IoError("cannot write file", index);
  }

 private:
  void header(const std::string& name, std::size_t size) {
    unsigned char h[512] = {};
    std::memcpy(h, name.data(), name.size());
    std::snprintf(reinterpret_cast<char*>(h + 100), 8, "%07o", 0644u);
    std::snprintf(reinterpret_cast<char*>(h + 108), 8, "%07o", 0u);
    std::snprintf(reinterpret_cast<char*>(h + 116), 8, "%07o", 0u);
    std::snprintf(reinterpret_cast<char*>(h + 124), 12, "%011llo", static_cast<unsigned long long>(size));
    std::snprintf(reinterpret_cast<char*>(h + 136), 12, "%011o", 0u);
    h[156] = '0';
    std::memcpy(h + 257, "ustar", 6);  // POSIX: "ustar\0" then version "00"
    h[263] = '0';
    h[264] = '0';
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    std::snprintf(reinterpret_cast<char*>(h + 148), 8, "%06o", sum);  // six digits, NUL, space
    h[155] = ' ';
    write(h, sizeof h);
  }
  void pad() {
    static const char zeros[512] = {};
    if (offset_ % 512) write(zeros, 512 - offset_ % 512);
  }
  void write(const void* p, std::size_t n) {
    out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    offset_ += n;
  }

  std::string path_;
  std::ofstream out_;
  std::uint64_t offset_ = 0;
  std::vector<std::string> index_;
  bool closed_ = false;
};

/// A TFRecord file of Examples, and its index beside it (`<path>.idx`).
class TFRecordWriter {
 public:
  explicit TFRecordWriter(std::string path) : path_(std::move(path)), out_(path_, std::ios::binary | std::ios::trunc) {
    if (!out_) throw IoError("cannot create file", path_);
  }
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;
  ~TFRecordWriter() {
    try {
      close();
    } catch (...) {
    }
  }

  /// Adds an Example with a BytesList feature per (key, bytes) and an Int64List per (key, value).
  void add(std::span<const std::pair<std::string, std::span<const std::byte>>> bytes_features,
           std::span<const std::pair<std::string, std::int64_t>> int64_features) {
    std::string features;
    for (const auto& [key, bytes] : bytes_features) {
      std::string list;  // BytesList { value = 1 }
      field(list, 1, bytes);
      entry(features, key, 1, list);
    }
    for (const auto& [key, value] : int64_features) {
      std::string packed, list;  // Int64List { repeated int64 value = 1 [packed] }
      varint(packed, static_cast<std::uint64_t>(value));
      field(list, 1, std::as_bytes(std::span(packed)));
      entry(features, key, 3, list);
    }
    std::string example;  // Example { Features features = 1 }
    field(example, 1, std::as_bytes(std::span(features)));
    record(example);
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    out_.close();
    if (!out_) throw IoError("cannot write file", path_);
    std::ofstream idx(path_ + ".idx", std::ios::trunc);
    for (const auto& [offset, size] : index_) idx << offset << " " << size << "\n";
    if (!idx) throw IoError("cannot write file", path_ + ".idx");
  }

 private:
  static void varint(std::string& out, std::uint64_t v) {
    do {
      const auto byte = static_cast<unsigned char>(v & 0x7F);
      v >>= 7;
      out.push_back(static_cast<char>(v ? byte | 0x80 : byte));
    } while (v);
  }
  static void field(std::string& out, unsigned number, std::span<const std::byte> bytes) {
    varint(out, std::uint64_t{number} << 3 | 2);
    varint(out, bytes.size());
    out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  /// A Features map entry: key = 1, value = 2 (a Feature with its list as field `kind`).
  static void entry(std::string& features, const std::string& key, unsigned kind, const std::string& list) {
    std::string feature, e;
    field(feature, kind, std::as_bytes(std::span(list)));
    field(e, 1, std::as_bytes(std::span(key)));
    field(e, 2, std::as_bytes(std::span(feature)));
    field(features, 1, std::as_bytes(std::span(e)));
  }
  void record(const std::string& data) {
    const std::uint64_t length = data.size();
    unsigned char head[12];
    std::memcpy(head, &length, 8);  // little-endian hosts
    const std::uint32_t length_crc = masked_crc32c(head, 8), data_crc = masked_crc32c(data.data(), data.size());
    std::memcpy(head + 8, &length_crc, 4);
    index_.emplace_back(offset_, length + 16);
    write(head, 12);
    write(data.data(), data.size());
    write(&data_crc, 4);
  }
  void write(const void* p, std::size_t n) {
    out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    offset_ += n;
  }

  std::string path_;
  std::ofstream out_;
  std::uint64_t offset_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> index_;
  bool closed_ = false;
};

}  // namespace v0
}  // namespace conveyor
