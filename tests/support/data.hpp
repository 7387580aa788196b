#pragma once
// Locating the real test images, and the message printed when they are absent.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace conveyor_test {

/// The real-image folder (../shared/data next to the repository, or $CONVEYOR_TEST_DATA), or
/// nothing when it is absent.
inline std::optional<std::filesystem::path> shared_data() {
  const char* env = std::getenv("CONVEYOR_TEST_DATA");
  std::filesystem::path p = env && *env ? env : CONVEYOR_TEST_DATA_DIR;
  std::error_code ec;
  if (std::filesystem::is_directory(p / "conformance", ec)) return p;
  return std::nullopt;
}

/// The photos bundled with the repository for the demo (always present).
inline std::filesystem::path sample_photos() { return std::filesystem::path(CONVEYOR_SOURCE_DIR) / "examples" / "data"; }

/// Rows of a tab-separated file, with the header row's names as keys.
inline std::vector<std::map<std::string, std::string>> read_tsv(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::vector<std::string> names;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string f;
    while (std::getline(ss, f, '\t')) out.push_back(f);
    return out;
  };
  if (std::getline(in, line)) names = split(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto fields = split(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < names.size() && i < fields.size(); ++i) row[names[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace conveyor_test

/// Ends the test as skipped, with the reason: CTest's SKIP_REGULAR_EXPRESSION matches the
/// "SKIPPED: " this prints (tests/CMakeLists.txt), so it is reported as skipped, not passed.
#define CONVEYOR_SKIP(reason) \
  do {                        \
    WARN("SKIPPED: " reason); \
    return;                   \
  } while (0)

/// Skips the test when the real-image folder is absent.
#define CONVEYOR_REQUIRE_SHARED_DATA(var)                                                \
  const auto var##_opt = ::conveyor_test::shared_data();                                 \
  if (!var##_opt) CONVEYOR_SKIP("real test images not found (../shared/data or $CONVEYOR_TEST_DATA)"); \
  const std::filesystem::path& var = *var##_opt
