// WebDataset tar shards and TFRecord files: written and read back with and without their
// indices, through the pipeline, and every kind of damage named by file and offset or key.
// (Files written by the webdataset and tfrecord packages, and ours read by them, are
// tests/python/test_formats.py's; tar's own ustar, PAX and GNU long names are checked here.)

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/temp_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

using namespace conveyor;
using conveyor_test::TempDir;

namespace {

using Members = std::vector<std::pair<std::string, std::span<const std::byte>>>;

/// A view of a literal's or a live string's bytes.
std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s)); }

/// `shards` tars of `per` samples each: KEY.jpg (a seeded JPEG) and KEY.cls (the sample's number
/// mod 7); returns the JPEGs in sample order.
std::vector<std::vector<std::byte>> write_tars(const std::filesystem::path& dir, int shards, int per) {
  std::vector<std::vector<std::byte>> images;
  for (int s = 0; s < shards; ++s) {
    TarWriter tar((dir / ("shard-" + std::to_string(s) + ".tar")).string());
    for (int i = 0; i < per; ++i) {
      const int n = s * per + i;
      images.push_back(conveyor_test::random_jpeg(20 + n % 13, 16 + n % 9, std::uint64_t(n)));
      const std::string cls = std::to_string(n % 7);
      const Members m = {{"jpg", images.back()}, {"cls", bytes_of(cls)}};
      tar.add("sample" + std::to_string(n), m);
    }
  }
  return images;
}

std::vector<std::vector<std::byte>> write_tfrecords(const std::filesystem::path& dir, int files, int per) {
  std::vector<std::vector<std::byte>> images;
  for (int f = 0; f < files; ++f) {
    TFRecordWriter w((dir / ("train-" + std::to_string(f) + "-of-" + std::to_string(files))).string());
    for (int i = 0; i < per; ++i) {
      const int n = f * per + i;
      images.push_back(conveyor_test::random_jpeg(20 + n % 11, 18 + n % 5, std::uint64_t(100 + n)));
      const Members b = {{"image/encoded", images.back()}, {"image/format", bytes_of("jpeg")}};
      const std::pair<std::string, std::int64_t> l[] = {{"image/class/label", n % 5 + 1}};
      w.add(b, l);
    }
  }
  return images;
}

template <class D>
void require_samples(const D& d, const std::vector<std::vector<std::byte>>& images, std::int64_t mod, std::int64_t add) {
  REQUIRE(d.size() == images.size());
  ByteBuffer b;
  for (std::uint64_t i = 0; i < d.size(); ++i) {
    INFO("sample " << i << " " << d.name(i));
    CHECK(read_labeled(d, i, b) == std::int64_t(i) % mod + add);
    CHECK(std::equal(b.span().begin(), b.span().end(), images[i].begin(), images[i].end()));
    CHECK(d.label(i) == std::int64_t(i) % mod + add);
  }
}

void corrupt(const std::filesystem::path& p, std::uint64_t offset, unsigned char value) {
  std::fstream f(p, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(std::streamoff(offset));
  f.put(static_cast<char>(value));
}

void truncate(const std::filesystem::path& p, std::uint64_t size) { std::filesystem::resize_file(p, size); }

}  // namespace

TEST_CASE("tar shards read the same with the index, without it, and through braces", "[io][shards][tar]") {
  TempDir t;
  const auto images = write_tars(t.path(), 3, 17);
  const std::string pattern = (t.path() / "shard-{0..2}.tar").string();
  const TarShards indexed(pattern);
  require_samples(indexed, images, 7, 0);
  CHECK(indexed.shard_sizes() == std::vector<std::uint64_t>{17, 17, 17});
  CHECK(indexed.name(18) == (t.path() / "shard-1.tar").string() + ":sample18");
  const TarShards walked(pattern, {.use_index = false});
  require_samples(walked, images, 7, 0);
  CHECK(expand_braces("a-{08..10}-{x,y}.tar") ==
        std::vector<std::string>{"a-08-x.tar", "a-08-y.tar", "a-09-x.tar", "a-09-y.tar", "a-10-x.tar", "a-10-y.tar"});
  CHECK_THROWS_WITH(expand_braces("a-{3..1}.tar"), Catch::Contains("backwards"));
  CHECK_THROWS_WITH(expand_braces("a-{3..1.tar"), Catch::Contains("never closed"));
}

TEST_CASE("GNU tar's ustar, PAX and long-name members group by WebDataset's keys", "[io][shards][tar]") {
  if (std::system("tar --version > /dev/null 2>&1") != 0) CONVEYOR_SKIP("GNU tar not found");
  TempDir t;
  const std::string deep = "very/long/" + std::string(120, 'd');
  std::vector<std::vector<std::byte>> images;
  for (int i = 0; i < 3; ++i) {
    images.push_back(conveyor_test::random_jpeg(24, 20, std::uint64_t(40 + i)));
    const std::filesystem::path base = t.path() / "in" / deep / ("k" + std::to_string(i));
    conveyor_test::write_file(base.string() + ".png", images.back());  // the first image extension wins: png
    conveyor_test::write_file(base.string() + ".seg.jpg", conveyor_test::random_jpeg(8, 8, 3));
    conveyor_test::write_text(base.string() + ".cls", " " + std::to_string(10 + i) + "\n");
    conveyor_test::write_text(base.string() + ".json", "{}");
  }
  for (const char* format : {"pax", "gnu", "ustar"}) {
    INFO(format);
    const std::string tar = (t.path() / (std::string(format) + ".tar")).string();
    // Sorted names keep each key's members adjacent, as WebDataset requires.
    const std::string cmd = "cd '" + (t.path() / "in").string() + "' && tar --format=" + format +
                            " --sort=name -cf '" + tar + "' very 2> /dev/null";
    if (std::system(cmd.c_str()) != 0) {
      CHECK(std::string(format) == "ustar");  // ustar cannot hold a 130-byte name: tar refuses
      continue;
    }
    const TarShards d(tar, {.image_extensions = {"png", "jpg"}});
    REQUIRE(d.size() == 3);
    ByteBuffer b;
    for (std::uint64_t i = 0; i < 3; ++i) {
      CHECK(d.key(i) == deep + "/k" + std::to_string(i));
      CHECK(d.label(i) == std::int64_t(10 + i));
      d.read(i, b);
      CHECK(std::equal(b.span().begin(), b.span().end(), images[i].begin(), images[i].end()));
    }
  }
}

TEST_CASE("damaged tar shards are named by shard and offset or key", "[io][shards][tar][errors]") {
  TempDir t;
  const auto fresh = [&](const char* name) {
    TarWriter w((t.path() / name).string());
    for (int i = 0; i < 4; ++i) {
      const auto jpeg = conveyor_test::random_jpeg(16, 16, std::uint64_t(i));
      const std::string cls = std::to_string(i);
      const Members m = {{"jpg", jpeg}, {"cls", bytes_of(cls)}};
      w.add("s" + std::to_string(i), m);
    }
    w.close();
    std::filesystem::remove(t.path() / (std::string(name).substr(0, std::string(name).find('.')) + ".idx"));
    return t.path() / name;
  };
  const auto open = [&](const std::filesystem::path& p) { return TarShards(p.string(), {.use_index = false}); };
  auto cut = fresh("cut.tar");
  truncate(cut, 512 + 100);  // inside the first member's data
  CHECK_THROWS_WITH(open(cut), Catch::Contains("cut.tar") && Catch::Contains("at byte 0") &&
                                   Catch::Contains("past the end of the shard"));
  auto header_cut = fresh("header.tar");
  truncate(header_cut, 200);  // inside the first header
  CHECK_THROWS_WITH(open(header_cut), Catch::Contains("header.tar") && Catch::Contains("cut short"));
  auto sum = fresh("sum.tar");
  corrupt(sum, 1, 'Z');  // a name byte of the first header
  CHECK_THROWS_WITH(open(sum), Catch::Contains("sum.tar") && Catch::Contains("at byte 0") && Catch::Contains("bad checksum"));
  auto lie = fresh("lie.tar");  // a size field rewritten, its checksum fixed: the next header is garbage
  {
    std::fstream f(lie, std::ios::binary | std::ios::in | std::ios::out);
    std::vector<char> h(512);
    f.read(h.data(), 512);
    const auto size = std::stoul(std::string(h.data() + 124, 11), nullptr, 8);
    std::snprintf(h.data() + 124, 12, "%011lo", size + 700);
    std::memset(h.data() + 148, ' ', 8);
    unsigned s = 0;
    for (char c : h) s += static_cast<unsigned char>(c);
    std::snprintf(h.data() + 148, 8, "%06o", s);
    f.seekp(0);
    f.write(h.data(), 512);
  }
  CHECK_THROWS_WITH(open(lie), Catch::Contains("lie.tar") && (Catch::Contains("bad checksum") || Catch::Contains("past the end") ||
                                                               Catch::Contains("no 'cls' member")));
  {
    TarWriter w((t.path() / "missing.tar").string());
    const auto jpeg = conveyor_test::random_jpeg(16, 16, 1);
    const Members a = {{"jpg", jpeg}, {"cls", bytes_of("1")}}, b = {{"jpg", jpeg}, {"json", bytes_of("{}")}};
    w.add("a", a);
    w.add("b", b);
  }
  CHECK_THROWS_WITH(TarShards((t.path() / "missing.tar").string()),
                    Catch::Contains("missing.tar") && Catch::Contains("'b'") && Catch::Contains("no 'cls' member"));
  {
    TarWriter w((t.path() / "noimage.tar").string());
    const Members a = {{"txt", bytes_of("hi")}, {"cls", bytes_of("1")}};
    w.add("a", a);
  }
  CHECK_THROWS_WITH(TarShards((t.path() / "noimage.tar").string()), Catch::Contains("no image member (jpg, jpeg, png)"));
  {
    TarWriter w((t.path() / "twice.tar").string());
    const auto jpeg = conveyor_test::random_jpeg(16, 16, 1);
    const Members a = {{"jpg", jpeg}, {"cls", bytes_of("1")}}, b = {{"jpg", jpeg}, {"cls", bytes_of("2")}};
    w.add("a", a);
    w.add("b", b);
    w.add("a", a);
  }
  CHECK_THROWS_WITH(TarShards((t.path() / "twice.tar").string()), Catch::Contains("key 'a' appears again"));
  {
    TarWriter w((t.path() / "label.tar").string());
    const auto jpeg = conveyor_test::random_jpeg(16, 16, 1);
    const Members a = {{"jpg", jpeg}, {"cls", bytes_of("seven")}};
    w.add("a", a);
  }
  // Labels are read with their samples: the shard opens, the sample's read names shard and key.
  const TarShards bad_label((t.path() / "label.tar").string());
  ByteBuffer out;
  const auto not_integer = Catch::Contains("label.tar: sample 'a': label 'seven' at byte 2048 is not an integer");
  CHECK_THROWS_WITH(read_labeled(bad_label, 0, out), not_integer);
  CHECK_THROWS_WITH(bad_label.label(0), not_integer);
  CHECK_NOTHROW(bad_label.read(0, out));
  conveyor_test::write_text(t.path() / "text.tar", std::string(2048, 'x'));
  CHECK_THROWS_WITH(TarShards((t.path() / "text.tar").string()), Catch::Contains("bad checksum"));
  auto idx = fresh("idx.tar");
  conveyor_test::write_text(t.path() / "idx.idx", "v1.2 1\njpg 99999999 10 s0.jpg cls 0 1 s0.cls\n");
  CHECK_THROWS_WITH(TarShards(idx.string()), Catch::Contains("idx.idx") && Catch::Contains("past the end"));
}

TEST_CASE("TFRecords read the same with the index and without, CRCs checked on every read", "[io][shards][tfrecord]") {
  TempDir t;
  const auto images = write_tfrecords(t.path(), 2, 15);
  const std::string pattern = (t.path() / "train-{0..1}-of-2").string();
  const TFRecordDataset indexed(pattern);
  require_samples(indexed, images, 5, 1);
  const TFRecordDataset walked(pattern, {.use_index = false});
  require_samples(walked, images, 5, 1);
  const TFRecordDataset zero_based(pattern, {.label_offset = -1});
  CHECK(zero_based.label(3) == 3);
  CHECK(walked.shard_sizes() == std::vector<std::uint64_t>{15, 15});
  // One flipped byte in a record's data: its read fails naming file and offset; the others read.
  const auto file = t.path() / "train-1-of-2";
  const TFRecordDataset before(file.string(), {.use_index = false});
  const std::uint64_t second = std::stoull(before.name(1).substr(before.name(1).find('@') + 1));
  corrupt(file, second + 40, 0x5A);
  const TFRecordDataset after(file.string(), {.use_index = false});
  ByteBuffer b;
  CHECK_NOTHROW(after.read(0, b));
  CHECK_THROWS_WITH(after.read(1, b), Catch::Contains("train-1-of-2") && Catch::Contains("at byte " + std::to_string(second)) &&
                                          Catch::Contains("bad data CRC"));
  // A cut file and a length CRC broken are found when it is walked.
  truncate(file, second + 30);
  CHECK_THROWS_WITH(TFRecordDataset(file.string(), {.use_index = false}),
                    Catch::Contains("at byte " + std::to_string(second)) && Catch::Contains("past the end"));
  corrupt(t.path() / "train-0-of-2", 9, 0x11);
  CHECK_THROWS_WITH(TFRecordDataset((t.path() / "train-0-of-2").string(), {.use_index = false}),
                    Catch::Contains("at byte 0") && Catch::Contains("bad length CRC"));
  // An Example without the label key.
  {
    TFRecordWriter w((t.path() / "nolabel").string());
    const Members b2 = {{"image/encoded", images[0]}};
    w.add(b2, {});
  }
  CHECK_THROWS_WITH(TFRecordDataset((t.path() / "nolabel").string()).read(0, b), Catch::Contains("no int64 feature 'image/class/label'"));
  CHECK_THROWS_WITH(TFRecordDataset((t.path() / "nolabel").string(), {.image_key = "image/raw"}).read(0, b),
                    Catch::Contains("no bytes feature 'image/raw'"));
}

TEST_CASE("the Example reader takes packed and unpacked lists, pieces and unknown fields", "[io][shards][proto]") {
  const auto varint = [](std::string& s, std::uint64_t v) {
    do {
      const auto byte = static_cast<unsigned char>(v & 0x7F);
      v >>= 7;
      s.push_back(static_cast<char>(v ? byte | 0x80 : byte));
    } while (v);
  };
  const auto field = [&](std::string& s, unsigned n, const std::string& bytes) {
    varint(s, std::uint64_t{n} << 3 | 2);
    varint(s, bytes.size());
    s += bytes;
  };
  const auto entry = [&](std::string& features, const std::string& key, unsigned kind, const std::string& list) {
    std::string feature, e;
    field(feature, kind, list);
    field(e, 1, key);
    field(e, 2, feature);
    field(features, 1, e);
  };
  std::string unpacked;  // Int64List { value: -3 (a 10-byte varint), 9 } unpacked
  varint(unpacked, 1 << 3 | 0);
  varint(unpacked, static_cast<std::uint64_t>(std::int64_t{-3}));
  varint(unpacked, 1 << 3 | 0);
  varint(unpacked, 9);
  std::string image_a, image_b;
  field(image_a, 1, "first");
  field(image_b, 1, "second");
  std::string features;
  varint(features, 7 << 3 | 0);  // an unknown varint field
  varint(features, 12345);
  entry(features, "label", 3, unpacked);
  std::string feature_pieces;  // one Feature whose BytesList comes in two pieces: values concatenate
  field(feature_pieces, 1, image_a);
  field(feature_pieces, 1, image_b);
  std::string e;
  field(e, 1, "img");
  field(e, 2, feature_pieces);
  field(features, 1, e);
  std::string example;
  field(example, 1, features);
  varint(example, 5 << 3 | 5);  // an unknown fixed32
  example += "abcd";
  const auto f = proto::read_example(std::as_bytes(std::span(example)), "img", "label");
  REQUIRE(f.bytes);
  CHECK(std::string(reinterpret_cast<const char*>(f.bytes->data()), f.bytes->size()) == "first");
  CHECK(f.int64 == -3);
  // Packed, and a later map entry of the key wins.
  std::string packed_values, packed, later;
  varint(packed_values, 42);
  varint(packed_values, 7);
  field(packed, 1, packed_values);
  entry(later, "label", 3, packed);
  std::string example2 = example;
  field(example2, 1, later);
  CHECK(proto::read_example(std::as_bytes(std::span(example2)), "img", "label").int64 == 42);
  // Every truncation fails cleanly or reads less, never past the end.
  for (std::size_t n = 0; n < example.size(); ++n) {
    const std::vector<std::byte> cut(std::as_bytes(std::span(example)).begin(),
                                     std::as_bytes(std::span(example)).begin() + std::ptrdiff_t(n));
    try {
      (void)proto::read_example(cut, "img", "label");
    } catch (const DecodeError& err) {
      CHECK_THAT(err.what(), Catch::Contains("at byte"));
    }
  }
  std::string long_varint(11, '\x80');
  CHECK_THROWS_WITH(proto::read_example(std::as_bytes(std::span(long_varint)), "img", "label"), Catch::Contains("varint"));
}

TEST_CASE("shards through the pipeline: skip replaces a corrupt record, nothing lost or doubled", "[io][shards][pipeline]") {
  TempDir t;
  const auto images = write_tfrecords(t.path(), 3, 10);
  const auto file = t.path() / "train-2-of-3";
  const TFRecordDataset clean(file.string());
  const std::uint64_t third = std::stoull(clean.name(3).substr(clean.name(3).find('@') + 1));
  corrupt(file, third + 50, 0x77);
  const TFRecordDataset data((t.path() / "train-{0..2}-of-3").string());
  BatchPipeline pipe(data, ShardShuffleSampler(data.shard_sizes(), {.seed = 3, .window = 2}),
                     ImageAugment::train(16), {.batch_size = 4, .workers = 3, .on_error = OnError::skip});
  std::multiset<std::int64_t> seen;
  std::size_t skips = 0;
  for (const Batch& b : pipe) {
    seen.insert(b.indices().begin(), b.indices().end());
    for (const SkippedSample& s : b.skipped()) {
      CHECK(s.index == 23);
      CHECK_THAT(s.reason, Catch::Contains("bad data CRC") && Catch::Contains("train-2-of-3"));
      ++skips;
    }
  }
  CHECK(skips == 1);
  CHECK(seen.size() == 30);
  CHECK(seen.count(23) == 0);
  const TarShards tars = [&] {
    (void)write_tars(t.path(), 2, 9);
    return TarShards((t.path() / "shard-{0..1}.tar").string());
  }();
  BatchPipeline over_tars(tars, ShardShuffleSampler(tars.shard_sizes(), {.seed = 1}), ImageAugment::eval(24, 16),
                          {.batch_size = 5, .workers = 2});
  std::set<std::int64_t> all;
  for (const Batch& b : over_tars) all.insert(b.indices().begin(), b.indices().end());
  CHECK(all.size() == 18);
}
