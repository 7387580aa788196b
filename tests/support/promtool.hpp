#pragma once
// `promtool check metrics` (Debian's prometheus package) over a metrics text.

#include "support/temp_dir.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

namespace conveyor_test {

struct PromtoolVerdict {
  int status = 0;
  std::string said;  ///< its output: empty when it has nothing to object to
};

/// What promtool says of `text`, or nothing when promtool is not installed.
inline std::optional<PromtoolVerdict> promtool_check(const std::string& text) {
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) return std::nullopt;
  TempDir dir;
  const auto metrics = dir.path() / "metrics.txt", report = dir.path() / "report.txt";
  std::ofstream(metrics) << text;
  const std::string cmd = "promtool check metrics < '" + metrics.string() + "' > '" + report.string() + "' 2>&1";
  PromtoolVerdict v;
  v.status = std::system(cmd.c_str());
  std::ifstream r(report);
  v.said.assign(std::istreambuf_iterator<char>(r), {});
  return v;
}

}  // namespace conveyor_test
