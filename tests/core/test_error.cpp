#include <conveyor/core/error.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

using namespace conveyor;

TEST_CASE("split_location takes apart the location prefix every error message starts with", "[core][error]") {
  const ConfigError e("BatchPipeline: batch_size must be > 0, got 0");
  const auto [where, message] = detail::split_location(e.what());
  CHECK(message == "BatchPipeline: batch_size must be > 0, got 0");
  CHECK(where.starts_with("test_error.cpp:"));
  CHECK(std::string(where) + ": " + std::string(message) == e.what());
  const IoError io("cannot open", "/data/a b:1: c.jpg");
  CHECK(detail::split_location(io.what()).second == "cannot open [/data/a b:1: c.jpg]");
}

TEST_CASE("split_location leaves messages without a location whole", "[core][error]") {
  for (const std::string_view what : {"sample 3 [a.jpg]: Not a JPEG file", "Not a JPEG file: starts with 0x89 0x50",
                                      "FileList: list.txt:3: expected '<path> <integer label>'", "a.hpp:: x",
                                      "a.hpp:12 x", ":12: x", "", "x.hpp:7:"}) {
    const auto [where, message] = detail::split_location(what);
    CHECK(where.empty());
    CHECK(message == what);
  }
}
