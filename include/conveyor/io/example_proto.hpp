#pragma once
/// @file
/// A reader of the protobuf wire format, only as much as `tf.train.Example` needs, with every length
/// checked against the bytes before it is trusted:
///
///   Example  { Features features = 1; }
///   Features { map<string, Feature> feature = 1; }   (entries: key = 1, value = 2)
///   Feature  { oneof { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
///   BytesList { repeated bytes value = 1; }   Int64List { repeated int64 value = 1; }  (packed or not)
///
/// Unknown fields are skipped by wire type; a repeated message arrives in pieces that merge (for
/// the map, a later entry of a key wins), as protobuf parsers merge them.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace conveyor {
inline namespace v0 {
namespace proto {

/// Bytes being read, with the position where a failure is reported.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes, std::size_t base = 0) noexcept : b_(bytes), base_(base) {}
  [[nodiscard]] bool done() const noexcept { return at_ >= b_.size(); }
  [[nodiscard]] std::size_t position() const noexcept { return base_ + at_; }

  /// A varint of at most 10 bytes.
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (at_ >= b_.size()) fail("a varint runs past the end");
      const auto byte = std::to_integer<std::uint64_t>(b_[at_++]);
      if (shift == 63 && byte > 1) fail("a varint does not fit 64 bits");
      v |= (byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
    fail("a varint is longer than 10 bytes");
  }
  /// A length-delimited field's bytes.
  std::span<const std::byte> bytes() {
    const std::uint64_t n = varint();
    if (n > b_.size() - at_) fail("a field of " + std::to_string(n) + " bytes runs past the end");
    const auto out = b_.subspan(at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return out;
  }
  /// A reader over a length-delimited field (positions stay those of the whole record).
  Reader sub() {
    const auto b = bytes();
    return Reader(b, position() - b.size());
  }
  /// Skips a field of wire type `type`.
  void skip(unsigned type) {
    switch (type) {
      case 0: (void)varint(); return;
      case 1: advance(8); return;
      case 2: (void)bytes(); return;
      case 5: advance(4); return;
      default: fail("wire type " + std::to_string(type) + " (groups are not read)");
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw DecodeError("tf.train.Example: " + what + " at byte " + std::to_string(position()));
  }

 private:
  void advance(std::size_t n) {
    if (n > b_.size() - at_) fail("a fixed field runs past the end");
    at_ += n;
  }
  std::span<const std::byte> b_;
  std::size_t base_;
  std::size_t at_ = 0;
};

/// What an Example holds for two keys: the first bytes of one, the first int64 of the other.
struct ExampleFields {
  std::optional<std::span<const std::byte>> bytes;
  std::optional<std::int64_t> int64;
};

namespace detail {

/// A Feature's first bytes and first int64 (its lists may arrive in pieces: they concatenate).
inline ExampleFields read_feature(Reader f) {
  ExampleFields out;
  while (!f.done()) {
    const std::uint64_t tag = f.varint();
    const auto field = tag >> 3;
    const auto type = static_cast<unsigned>(tag & 7);
    if (field == 1 && type == 2) {  // BytesList
      Reader list = f.sub();
      while (!list.done()) {
        const std::uint64_t t = list.varint();
        if ((t >> 3) == 1 && (t & 7) == 2) {
          const auto v = list.bytes();
          if (!out.bytes) out.bytes = v;
        } else {
          list.skip(static_cast<unsigned>(t & 7));
        }
      }
    } else if (field == 3 && type == 2) {  // Int64List
      Reader list = f.sub();
      while (!list.done()) {
        const std::uint64_t t = list.varint();
        if ((t >> 3) == 1 && (t & 7) == 0) {  // unpacked
          const auto v = static_cast<std::int64_t>(list.varint());
          if (!out.int64) out.int64 = v;
        } else if ((t >> 3) == 1 && (t & 7) == 2) {  // packed
          Reader packed = list.sub();
          while (!packed.done()) {
            const auto v = static_cast<std::int64_t>(packed.varint());
            if (!out.int64) out.int64 = v;
          }
        } else {
          list.skip(static_cast<unsigned>(t & 7));
        }
      }
    } else {
      f.skip(type);
    }
  }
  return out;
}

}  // namespace detail

/// Reads `example` (a serialized tf.train.Example) for the feature `bytes_key` (a BytesList) and
/// the feature `int64_key` (an Int64List); either absent leaves its field empty.
/// @throws DecodeError naming the byte where the message is malformed.
[[nodiscard]] inline ExampleFields read_example(std::span<const std::byte> example, std::string_view bytes_key,
                                                std::string_view int64_key) {
  ExampleFields out;
  Reader r(example);
  while (!r.done()) {
    const std::uint64_t tag = r.varint();
    if ((tag >> 3) != 1 || (tag & 7) != 2) {
      r.skip(static_cast<unsigned>(tag & 7));
      continue;
    }
    Reader features = r.sub();
    while (!features.done()) {
      const std::uint64_t t = features.varint();
      if ((t >> 3) != 1 || (t & 7) != 2) {
        features.skip(static_cast<unsigned>(t & 7));
        continue;
      }
      Reader entry = features.sub();
      std::optional<std::string_view> key;
      std::optional<Reader> value;
      while (!entry.done()) {
        const std::uint64_t e = entry.varint();
        if ((e >> 3) == 1 && (e & 7) == 2) {
          const auto k = entry.bytes();
          key = std::string_view(reinterpret_cast<const char*>(k.data()), k.size());
        } else if ((e >> 3) == 2 && (e & 7) == 2) {
          value = entry.sub();
        } else {
          entry.skip(static_cast<unsigned>(e & 7));
        }
      }
      if (!key || !value) continue;
      if (*key == bytes_key) out.bytes = detail::read_feature(*value).bytes;  // a later entry of a key wins
      if (*key == int64_key) out.int64 = detail::read_feature(*value).int64;
    }
  }
  return out;
}

}  // namespace proto
}  // namespace v0
}  // namespace conveyor
