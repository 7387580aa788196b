// A pipeline's stats as Prometheus text: the numbers it reports, the format's rules, and
// `promtool check metrics` (Debian's prometheus package; skipped where it is not installed).

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/promtool.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

using namespace conveyor;

namespace {

/// name{labels} -> value, for every sample line.
std::map<std::string, double> samples_of(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})?) (\S+)$)");
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) continue;
    std::smatch m;
    INFO(line);
    REQUIRE(std::regex_match(line, m, sample));
    out[m[1]] = std::stod(m[3]);
  }
  return out;
}

}  // namespace

TEST_CASE("pipeline stats as Prometheus text report what the pipeline delivered", "[prometheus]") {
  const InMemory data = conveyor_test::jpeg_dataset(20);
  BatchPipeline pipe(data, SequentialSampler(data.size()), ImageAugment::train(32), {.batch_size = 4, .workers = 2});
  for (int e = 0; e < 2; ++e) {
    pipe.set_epoch(e);
    for (const Batch& b : pipe) (void)b;
  }
  const PipelineStats st = pipe.stats();
  const std::string text = prometheus_text(st, {{"pipeline", "train \"a\"\n"}});
  const auto s = samples_of(text);
  const std::string labels = R"({pipeline="train \"a\"\n"})";
  CHECK(s.at("conveyor_batches_total" + labels) == 10);
  CHECK(s.at("conveyor_images_total" + labels) == 40);
  CHECK(s.at("conveyor_epochs_total" + labels) == 2);
  CHECK(s.at("conveyor_workers" + labels) == 2);
  CHECK(s.at(R"(conveyor_stage_samples_total{pipeline="train \"a\"\n",stage="read"})") == 40);
  CHECK(s.at(R"(conveyor_stage_seconds_total{pipeline="train \"a\"\n",stage="decode"})") == Approx(st.stage("decode").seconds));
  // One observation per batch, cumulative buckets that never fall, +Inf equal to the count.
  CHECK(s.at(R"(conveyor_batch_wait_seconds_count{pipeline="train \"a\"\n"})") == 10);
  double last = 0;
  for (double le : LatencyHistogram::bounds) {
    char key[160];
    std::snprintf(key, sizeof key, R"(conveyor_batch_wait_seconds_bucket{pipeline="train \"a\"\n",le="%g"})", le);
    const double n = s.at(key);
    CHECK(n >= last);
    last = n;
  }
  CHECK(s.at(R"(conveyor_batch_wait_seconds_bucket{pipeline="train \"a\"\n",le="+Inf"})") == 10);
  CHECK(s.at(R"(conveyor_batch_wait_seconds_sum{pipeline="train \"a\"\n"})") == Approx(st.consumer_wait_seconds));
  // Every family has HELP and TYPE lines, and counters end in _total.
  std::istringstream in(text);
  std::string line;
  int families = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    ++families;
    std::istringstream f(line.substr(7));
    std::string name, type;
    f >> name >> type;
    INFO(name);
    if (type == "counter") CHECK(name.size() > 6);
    if (type == "counter") CHECK(name.substr(name.size() - 6) == "_total");
    CHECK(text.find("# HELP " + name + " ") != std::string::npos);
  }
  CHECK(families == 22);
}

TEST_CASE("promtool accepts a pipeline's metrics", "[prometheus]") {
  std::string text;
  {  // the pipeline's threads are gone before promtool is started
    const InMemory data = conveyor_test::jpeg_dataset(8);
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 2}), ImageAugment::eval(40, 32),
                       {.batch_size = 3, .workers = 1});
    for (const Batch& b : pipe) (void)b;
    text = prometheus_text(pipe.stats(), {{"pipeline", "eval"}});
  }
  const auto verdict = conveyor_test::promtool_check(text);
  if (!verdict) CONVEYOR_SKIP("promtool not installed (Debian: prometheus)");
  INFO(verdict->said);
  CHECK(verdict->status == 0);
  CHECK(verdict->said.empty());
}
