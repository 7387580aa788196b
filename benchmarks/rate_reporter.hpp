#pragma once
// Google Benchmark's console output, plus each benchmark's items/s kept by name for the ratio
// tables the benchmarks print last.

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace conveyor_bench {

class RateReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> rate;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (!r.error_occurred && r.counters.count("items_per_second"))
        rate[r.run_name.function_name] = r.counters.at("items_per_second");
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace conveyor_bench
