#include <conveyor/io/file_list.hpp>
#include <conveyor/io/image_folder.hpp>
#include <conveyor/io/in_memory.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/images.hpp"
#include "support/temp_dir.hpp"

#include <string>
#include <vector>

using namespace conveyor;
using conveyor_test::TempDir;
using conveyor_test::write_text;

namespace {

std::vector<std::string> relative_paths(const ImageFolder& d) {
  std::vector<std::string> v;
  for (std::uint64_t i = 0; i < d.size(); ++i) v.emplace_back(d.relative_path(i));
  return v;
}

}  // namespace

TEST_CASE("ImageFolder labels sorted class folders and orders files as torchvision does", "[io][dataset]") {
  TempDir t;
  for (const char* f : {"zebra/b.jpg", "zebra/a.JPEG", "ant/x.jpg", "ant/sub/y.jpg", "ant/sub-x/z.jpg",
                        "ant/sub/deep/w.Jpg", "ant/notes.txt", "ant/image.png", "ant/jpg", "Bee/q.jpeg",
                        "ant/photo.PPM", "ant/scan.tiff", "ant/x.webp", "ant/b.bmp", "ant/g.gif", "ant/m.pgm",
                        "ant/t.TIF"})
    write_text(t.path() / f, "data");
  const ImageFolder d(t.str());
  CHECK(d.classes() == std::vector<std::string>{"Bee", "ant", "zebra"});  // byte order: upper case first
  // os.walk's folders sorted by path ("ant" < "ant/sub" < "ant/sub-x" < "ant/sub/deep"), files by name;
  // torchvision's IMG_EXTENSIONS in any case (no .gif, .txt or names without one).
  CHECK(relative_paths(d) == std::vector<std::string>{"Bee/q.jpeg", "ant/b.bmp", "ant/image.png", "ant/m.pgm",
                                                      "ant/photo.PPM", "ant/scan.tiff", "ant/t.TIF", "ant/x.jpg",
                                                      "ant/x.webp", "ant/sub/y.jpg", "ant/sub-x/z.jpg",
                                                      "ant/sub/deep/w.Jpg", "zebra/a.JPEG", "zebra/b.jpg"});
  const std::vector<std::int64_t> labels = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2};
  for (std::uint64_t i = 0; i < d.size(); ++i) CHECK(d.label(i) == labels[i]);
  CHECK(d.name(0) == t.str() + "/Bee/q.jpeg");
  ByteBuffer b;
  d.read(1, b);
  CHECK(std::string(reinterpret_cast<const char*>(b.data()), b.size()) == "data");
}

TEST_CASE("ImageFolder gives clear errors for missing or empty or class-less folders", "[io][dataset][errors]") {
  TempDir t;
  CHECK_THROWS_WITH(ImageFolder((t.path() / "nope").string()), Catch::Contains("not a folder") && Catch::Contains("nope"));
  CHECK_THROWS_WITH(ImageFolder(t.str()), Catch::Contains("no class folder"));
  write_text(t.path() / "cat/a.jpg", "x");
  write_text(t.path() / "dog/readme.txt", "x");
  CHECK_THROWS_WITH(ImageFolder(t.str()), Catch::Contains("dog"));
  const ImageFolder ok(t.str(), {.allow_empty = true});
  CHECK(ok.size() == 1);
  CHECK(ok.classes().size() == 2);
}

TEST_CASE("reading a file deleted after listing names the path", "[io][dataset][errors]") {
  TempDir t;
  write_text(t.path() / "c/a.jpg", "x");
  write_text(t.path() / "c/b.jpg", "y");
  const ImageFolder d(t.str());
  std::filesystem::remove(t.path() / "c/b.jpg");
  ByteBuffer b;
  CHECK_THROWS_AS(d.read(1, b), IoError);
  CHECK_THROWS_WITH(d.read(1, b), Catch::Contains("b.jpg") && Catch::Contains("No such file"));
}

TEST_CASE("ImageFolder reads the shared class tree like torchvision", "[io][dataset][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const ImageFolder d((data / "imagefolder").string());
  CHECK(d.classes() == std::vector<std::string>{"building", "flower", "sky"});
  const auto rows = conveyor_test::read_tsv(data / "imagefolder" / "files.tsv");
  REQUIRE(d.size() == rows.size());
  for (std::uint64_t i = 0; i < d.size(); ++i) {
    CHECK(d.relative_path(i) == rows[i].at("path"));
    CHECK(d.label(i) == std::stoll(rows[i].at("class_index")));
  }
}

TEST_CASE("FileList parses path-label lines with spaces and comments and CRLF", "[io][dataset]") {
  TempDir t;
  write_text(t.path() / "list.txt", "# header\n\na b.jpg 3\r\n  sub/c.jpg\t7  \n/abs/d.jpg 0\n");
  const FileList d((t.path() / "list.txt").string());
  REQUIRE(d.size() == 3);
  CHECK(d.relative_path(0) == "a b.jpg");
  CHECK(d.label(0) == 3);
  CHECK(d.relative_path(1) == "sub/c.jpg");
  CHECK(d.label(1) == 7);
  CHECK(d.name(0) == t.str() + "/a b.jpg");
  CHECK(d.name(2) == "/abs/d.jpg");
  const FileList rooted((t.path() / "list.txt").string(), "/data/");
  CHECK(rooted.name(1) == "/data/sub/c.jpg");
}

TEST_CASE("FileList errors name the file and line", "[io][dataset][errors]") {
  TempDir t;
  write_text(t.path() / "bad.txt", "a.jpg 1\nb.jpg one\n");
  CHECK_THROWS_WITH(FileList((t.path() / "bad.txt").string()), Catch::Contains("bad.txt:2"));
  write_text(t.path() / "nolabel.txt", "a.jpg\n");
  CHECK_THROWS_WITH(FileList((t.path() / "nolabel.txt").string()), Catch::Contains("nolabel.txt:1"));
  write_text(t.path() / "empty.txt", "# nothing\n");
  CHECK_THROWS_WITH(FileList((t.path() / "empty.txt").string()), Catch::Contains("no sample"));
  CHECK_THROWS_AS(FileList((t.path() / "missing.txt").string()), IoError);
}

TEST_CASE("FileList says a binary file is not a list instead of quoting it", "[io][dataset][errors]") {
  TempDir t;
  const std::vector<std::byte> jpeg = conveyor_test::random_jpeg(16, 16, 3);
  conveyor_test::write_file(t.path() / "photo.jpg", jpeg);
  CHECK_THROWS_WITH(FileList((t.path() / "photo.jpg").string()),
                    Catch::Contains("photo.jpg is not a list of '<path> <integer label>' lines but binary data"));
  // Text after a long first line still parses: the test reads ahead and rewinds.
  write_text(t.path() / "long.txt", std::string(9000, 'a') + ".jpg 1\nb.jpg 2\n");
  const FileList long_list((t.path() / "long.txt").string());
  CHECK(long_list.size() == 2);
  CHECK(long_list.label(1) == 2);
}

TEST_CASE("InMemory holds blobs back to back", "[io][dataset]") {
  const std::vector<std::vector<std::byte>> blobs = {{std::byte{1}, std::byte{2}}, {}, {std::byte{3}}};
  const InMemory d(blobs, {5, 6, 7});
  REQUIRE(d.size() == 3);
  ByteBuffer b;
  d.read(0, b);
  CHECK(b.size() == 2);
  CHECK(b.data()[1] == std::byte{2});
  d.read(1, b);
  CHECK(b.empty());
  CHECK(d.bytes(2)[0] == std::byte{3});
  CHECK(d.label(2) == 7);
  CHECK(d.name(1) == "memory[1]");
  CHECK_THROWS_WITH(InMemory(blobs, {1}), Catch::Contains("3 blobs but 1 labels"));
}
