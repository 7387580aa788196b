// libFuzzer target: any bytes as a WebDataset tar shard (with or without a wds2idx index), a
// TFRecord file (with or without a tfrecord2idx index), or a serialized tf.train.Example. Opening
// walks the headers or reads the index; every sample is then read (and for TFRecords its CRCs
// checked and its Example parsed). Every failure must be a DecodeError or an IoError; a crash, a
// sanitizer report, another exception or a read past the file is a finding.
//
// Input layout: a settings byte (low two bits: 0 tar, 1 TFRecord, 2 Example; bit 2: an index
// follows), then for an index its length as two little-endian bytes and its text, then the shard.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude fuzz/fuzz_shards.cpp -ljpeg -lpng
//   ./a.out -max_total_time=60 corpus/

#include <conveyor/conveyor.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <unistd.h>

namespace {

enum Kind : unsigned { tar = 0, tfrecord = 1, example = 2 };
constexpr unsigned with_index = 4;
constexpr std::uint64_t max_reads = 64;

void write(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
}

/// A directory of this process's own, on tmpfs where there is one.
const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    auto d = base / ("conveyor-fuzz-shards-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

template <class D>
void read_all(const D& d) {
  conveyor::ByteBuffer buf;
  for (std::uint64_t i = 0; i < d.size() && i < max_reads; ++i) {
    try {
      (void)conveyor::read_labeled(d, i, buf);
      (void)d.name(i);
    } catch (const conveyor::DecodeError&) {  // one bad record: the others still read
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned settings = data[0];
  ++data, --size;
  const unsigned kind = settings & 3;
  if (kind == example) {
    try {
      (void)conveyor::proto::read_example({reinterpret_cast<const std::byte*>(data), size}, "image/encoded",
                                          "image/class/label");
    } catch (const conveyor::DecodeError&) {
    }
    return 0;
  }
  std::size_t index_size = 0;
  if (settings & with_index) {
    if (size < 2) return 0;
    index_size = std::min<std::size_t>(data[0] | std::size_t(data[1]) << 8, size - 2);
    data += 2, size -= 2;
  }
  const auto shard = scratch() / (kind == tar ? "s.tar" : "s.tfrecord");
  const auto index = kind == tar ? scratch() / "s.idx" : scratch() / "s.tfrecord.idx";
  std::filesystem::remove(scratch() / "s.idx");
  std::filesystem::remove(scratch() / "s.tfrecord.idx");
  if (index_size) write(index, data, index_size);
  write(shard, data + index_size, size - index_size);
  try {
    if (kind == tar)
      read_all(conveyor::TarShards(std::vector<std::string>{shard.string()}));
    else
      read_all(conveyor::TFRecordDataset(std::vector<std::string>{shard.string()}));
  } catch (const conveyor::DecodeError&) {
  } catch (const conveyor::IoError&) {
  }
  return 0;
}
