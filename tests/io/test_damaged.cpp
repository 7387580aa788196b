// Every damaged file gives a clear DecodeError, or, when decoding leniently and libjpeg can
// recover, an image of the size the header declares. Never a crash, a hang or a print.

#include <conveyor/io/file.hpp>
#include <conveyor/io/jpeg.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"

#include <string>

using namespace conveyor;

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
    // A decode that succeeds must fill exactly the declared size; a failure must say why.
    auto attempt = [&](JpegDecoder& d) -> bool {
      try {
        const JpegInfo info = d.read_header(bytes.span());
        std::vector<std::uint8_t> out(std::size_t(info.width) * info.height * 3);
        d.decode(out.data(), std::size_t(info.width) * 3);
        return true;
      } catch (const DecodeError& e) {
        CHECK(std::string(e.what()).size() > 10);
        return false;
      }
    };
    const bool huge = name.find("60000x60000") != std::string::npos;  // refused by max_image_pixels
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
