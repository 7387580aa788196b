// Every damaged file gives a clear DecodeError, or, when decoding leniently and libjpeg can
// recover, an image of the size the header declares. Never a crash, a hang or a print.

#include <conveyor/io/file.hpp>
#include <conveyor/io/jpeg.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"

#include <cstdio>
#include <string>
#include <vector>

using namespace conveyor;

namespace {

/// The messages of INDEX.tsv's djpeg_messages column ("a | b"; "-" for none).
std::vector<std::string> split_messages(const std::string& column) {
  std::vector<std::string> out;
  if (column == "-" || column.empty()) return out;
  for (std::size_t at = 0;;) {
    const std::size_t bar = column.find(" | ", at);
    out.push_back(column.substr(at, bar - at));
    if (bar == std::string::npos) return out;
    at = bar + 3;
  }
}

}  // namespace

TEST_CASE("damaged files fail cleanly or decode leniently where djpeg recovers", "[io][jpeg][damaged][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const auto dir = data / "damaged";
  const auto rows = conveyor_test::read_tsv(dir / "INDEX.tsv");
  REQUIRE(rows.size() >= 250);
  ByteBuffer bytes;
  JpegDecoder strict, lenient({.lenient = true});
  int ok = 0, warned = 0, failed = 0;
  for (const auto& row : rows) {
    const std::string& name = row.at("file");
    const std::string outcome = row.at("djpeg_2.1.5");
    INFO(name << " (djpeg: " << outcome << ", " << row.at("djpeg_messages") << ")");
    read_file((dir / name).string(), bytes);
    const bool huge = name.find("60000x60000") != std::string::npos;  // refused by max_image_pixels
    // djpeg's messages, in order: a strict decode stops at the first (warnings are errors there),
    // a lenient one at the first error, which is djpeg's last message.
    const std::vector<std::string> messages = split_messages(row.at("djpeg_messages"));
    // A decode that succeeds must fill exactly the declared size; a failure must say why, with
    // libjpeg's own words for what djpeg reported.
    auto attempt = [&](JpegDecoder& d) -> bool {
      try {
        const JpegInfo info = d.read_header(bytes.span());
        std::vector<std::uint8_t> out(std::size_t(info.width) * info.height * 3);
        d.decode(out.data(), std::size_t(info.width) * 3);
        return true;
      } catch (const DecodeError& e) {
        const std::string& reason = e.reason();
        INFO("reason: " << reason);
        CHECK_THAT(e.what(), Catch::EndsWith(reason));
        if (reason.rfind("unsupported colour space with ", 0) == 0) {
          CHECK(outcome == "error");  // refused from the header; djpeg cannot write it either
        } else if (reason.find("exceeds max_image_pixels") != std::string::npos) {
          // The size the header claims, which the INDEX records where djpeg got that far.
          unsigned long long w = 0, h = 0;
          REQUIRE(std::sscanf(reason.c_str(), "image of %llux%llu pixels", &w, &h) == 2);
          CHECK(w * h > d.options().max_image_pixels);
          const std::string declared = row.at("declared_WxH");
          if (declared != "-") CHECK(declared == std::to_string(w) + "x" + std::to_string(h));
        } else if (name == "tensorflow/bad_huffman.jpg") {
          // With the file in memory, libjpeg-turbo's fast Huffman path decodes the bad codes as 0
          // without a warning (djpeg's 4 KB file buffers send their ends through the slow path,
          // which warns): the corruption shows where the scan ends, as the same file's next warning.
          CHECK(reason == "Corrupt JPEG data: 260 extraneous bytes before marker 0xd9");
        } else {
          REQUIRE_FALSE(messages.empty());
          CHECK(reason == (d.options().lenient ? messages.back() : messages.front()));
        }
        return false;
      }
    };
    if (outcome == "ok") {
      CHECK(attempt(strict));
      CHECK(attempt(lenient));
      ++ok;
    } else if (outcome == "warning") {
      CHECK_FALSE(attempt(strict));
      CHECK(attempt(lenient) == !huge);
      ++warned;
    } else {
      CHECK_FALSE(attempt(strict));
      CHECK_FALSE(attempt(lenient));
      ++failed;
    }
  }
  CHECK(ok + warned + failed == static_cast<int>(rows.size()));
}

TEST_CASE("a header claiming 60000x60000 pixels is refused before allocation", "[io][jpeg][damaged][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  ByteBuffer bytes;
  read_file((data / "damaged/generated/tower_dims_60000x60000.jpg").string(), bytes);
  JpegDecoder d({.lenient = true});
  CHECK_THROWS_WITH(d.read_header(bytes.span()), Catch::Contains("60000x60000") && Catch::Contains("max_image_pixels"));
}
