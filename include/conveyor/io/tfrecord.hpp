#pragma once
/// @file
/// `TFRecordDataset`: TFRecord files of `tf.train.Example`s as a random-access `Dataset`. Opening
/// lists every record's offset, from DALI's `tfrecord2idx` index ("<offset> <size>" lines, the
/// `tfrecord` package's too) beside a file when there is one, else by walking the length fields;
/// `read(i)` is then one positioned read of the record.
///
/// Each record is framed as little-endian u64 length, masked CRC-32C of the length, the data,
/// masked CRC-32C of the data. Both CRCs are checked on every read (DALI does not): a corrupt
/// record is an error naming the file and its offset, never an image decoded from wrong bytes.
/// The Example's `image_key` BytesList holds the image, its `label_key` Int64List the label.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/clock.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/crc32c.hpp>
#include <conveyor/io/example_proto.hpp>
#include <conveyor/io/shard_files.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct TFRecordOptions {
  std::string image_key = "image/encoded";
  std::string label_key = "image/class/label";
  /// Added to every label: TF's ImageNet TFRecords count classes from 1, so -1 makes them 0-based.
  std::int64_t label_offset = 0;
  /// Read `<file>.idx` or `<file>.index` (offset and size a line) when one exists.
  bool use_index = true;
  std::size_t max_open_files = 64;
};

class TFRecordDataset {
 public:
  /// The files `pattern` names (`train-{00000..01023}-of-01024`; see `expand_braces`).
  /// @throws IoError or DecodeError naming the file and the byte offset of what is wrong.
  explicit TFRecordDataset(std::string_view pattern, TFRecordOptions options = {})
      : TFRecordDataset(expand_braces(pattern), std::move(options)) {}
  explicit TFRecordDataset(std::vector<std::string> files, TFRecordOptions options = {})
      : o_(std::move(options)), files_(std::make_unique<ShardFiles>(std::move(files), o_.max_open_files)) {
    if (files_->size() == 0) throw ConfigError("TFRecordDataset: no file given");
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t f = 0; f < files_->size(); ++f) {
      const std::size_t first = records_.size();
      if (!(o_.use_index && read_index(f))) walk(f);
      shard_sizes_.push_back(records_.size() - first);
    }
    open_seconds_ = seconds_since(t0);
  }

  [[nodiscard]] std::uint64_t size() const noexcept { return records_.size(); }

  /// Replaces `out` with record `i`'s image bytes and returns its label (one read, one parse).
  /// @throws IoError, or DecodeError for a bad CRC, a malformed Example or a missing key, naming
  ///         the file and the record's offset.
  std::int64_t read_labeled(std::uint64_t i, ByteBuffer& out) const {
    const auto fields = parse(i, out, true);
    const std::size_t n = fields.bytes->size();
    std::memmove(out.data(), fields.bytes->data(), n);  // the image, to the buffer's start
    out.resize(n);
    return *fields.int64 + o_.label_offset;
  }
  void read(std::uint64_t i, ByteBuffer& out) const { (void)read_labeled(i, out); }
  /// Record `i`'s label (a read of its own: the pipeline takes it from `read_labeled`).
  [[nodiscard]] std::int64_t label(std::uint64_t i) const {
    ByteBuffer b;
    return *parse(i, b, false).int64 + o_.label_offset;
  }
  /// "file@offset".
  [[nodiscard]] std::string name(std::uint64_t i) const {
    return files_->path(records_[i].file) + "@" + std::to_string(records_[i].offset);
  }

  /// Records per file, in file order (record indices run file by file).
  [[nodiscard]] const std::vector<std::uint64_t>& shard_sizes() const noexcept { return shard_sizes_; }
  [[nodiscard]] double open_seconds() const noexcept { return open_seconds_; }

 private:
  struct Record {
    std::uint32_t file = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;  // framed: 8 + 4 + length + 4
  };
  static constexpr std::size_t frame = 16;

  [[noreturn]] void fail(std::size_t file, std::uint64_t offset, const std::string& what) const {
    throw DecodeError("TFRecordDataset: " + files_->path(file) + ": the record at byte " + std::to_string(offset) + " " + what);
  }

  static std::uint32_t le32(const std::byte* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;  // little-endian hosts only (x86-64, AArch64)
  }
  static std::uint64_t le64(const std::byte* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }

  /// Reads record `i` into `buf`, checks its framing and CRCs, and reads its Example's keys.
  proto::ExampleFields parse(std::uint64_t i, ByteBuffer& buf, bool want_image) const {
    const Record& r = records_[i];
    files_->read(r.file, r.offset, static_cast<std::size_t>(r.size), buf);
    const std::byte* p = buf.data();
    const std::uint64_t length = le64(p);
    if (length != r.size - frame) fail(r.file, r.offset, "is " + std::to_string(length) + " bytes, the index said " + std::to_string(r.size - frame));
    if (le32(p + 8) != masked_crc32c(p, 8)) fail(r.file, r.offset, "has a bad length CRC");
    if (le32(p + 12 + length) != masked_crc32c(p + 12, static_cast<std::size_t>(length)))
      fail(r.file, r.offset, "has a bad data CRC");
    proto::ExampleFields f;
    try {
      f = proto::read_example({p + 12, static_cast<std::size_t>(length)}, want_image ? std::string_view(o_.image_key) : "",
                              o_.label_key);
    } catch (const DecodeError& e) {
      fail(r.file, r.offset, std::string("is not a readable Example: ") + e.reason());
    }
    if (want_image && !f.bytes) fail(r.file, r.offset, "has no bytes feature '" + o_.image_key + "'");
    if (!f.int64) fail(r.file, r.offset, "has no int64 feature '" + o_.label_key + "'");
    return f;
  }

  /// Lists file `file`'s records from their length fields, checking each length's CRC.
  void walk(std::size_t file) {
    const std::uint64_t file_size = files_->file_size(file);
    ByteBuffer head;
    for (std::uint64_t at = 0; at < file_size;) {
      if (file_size - at < 12) fail(file, at, "is cut short: " + std::to_string(file_size - at) + " bytes left of a 12-byte header");
      files_->read(file, at, 12, head);
      const std::uint64_t length = le64(head.data());
      if (le32(head.data() + 8) != masked_crc32c(head.data(), 8)) fail(file, at, "has a bad length CRC (not a TFRecord file, or corrupt)");
      if (length > file_size - at - frame)
        fail(file, at, "claims " + std::to_string(length) + " bytes, past the end of the file (" + std::to_string(file_size) + " bytes)");
      records_.push_back({static_cast<std::uint32_t>(file), at, length + frame});
      at += length + frame;
    }
  }

  bool read_index(std::size_t file) {
    const std::string& path = files_->path(file);
    std::string index = path + ".idx";
    std::ifstream in(index);
    if (!in) in.open(index = path + ".index");
    if (!in) return false;
    const std::uint64_t file_size = files_->file_size(file);
    std::uint64_t offset = 0, size = 0, line = 0;
    while (in >> offset >> size) {
      ++line;
      if (size < frame || offset > file_size || size > file_size - offset)
        throw DecodeError("TFRecordDataset: " + index + ": line " + std::to_string(line) + " (" + std::to_string(offset) +
                          " " + std::to_string(size) + ") is not a record of " + path);
      records_.push_back({static_cast<std::uint32_t>(file), offset, size});
    }
    if (!in.eof()) throw DecodeError("TFRecordDataset: " + index + ": line " + std::to_string(line + 1) + " is not '<offset> <size>'");
    return true;
  }

  TFRecordOptions o_;
  std::unique_ptr<ShardFiles> files_;
  std::vector<Record> records_;
  std::vector<std::uint64_t> shard_sizes_;
  double open_seconds_ = 0;
};

static_assert(Dataset<TFRecordDataset>);

}  // namespace v0
}  // namespace conveyor
