// PipelineStats: its JSON, and the counters several pipelines add up to (a Preprocessor's lanes).

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/json.hpp"

#include <string>

using namespace conveyor;

TEST_CASE("stats as JSON escape any stage name and read back as JSON", "[stats]") {
  PipelineStats st;
  st.workers = 3;
  const std::string odd = "a \"quoted\" back\\slash,\ttab\nline \x01 end";
  st.stages = {{"read", 12, 0.5}, {odd, 7, 0.25}, {std::string(1500, 'x'), 2, 0.125}};
  st.decode = "gpu \"x\"";
  const conveyor_test::Json j = conveyor_test::parse_json(st.json());
  CHECK(j["workers"].number() == 3);
  CHECK(j["stages"]["read"]["count"].number() == 12);
  CHECK(j["stages"][odd]["count"].number() == 7);
  CHECK(j["stages"][odd]["seconds"].number() == 0.25);
  CHECK(j["stages"][std::string(1500, 'x')]["count"].number() == 2);  // longer than any fixed buffer
  CHECK(j["decode"].string() == "gpu \"x\"");
  CHECK(j["gpu_decode_calls"].number() == 0);
}

TEST_CASE("the counters of several pipelines add up, their device decodes included", "[stats]") {
  PipelineStats a, b;
  a.workers = 2;
  b.workers = 3;
  a.images = 10;
  b.images = 5;
  a.stages = {{"read", 10, 1.0}};
  b.stages = {{"read", 5, 0.5}};
  a.kernel_max_seconds = 0.25;
  b.kernel_max_seconds = 0.5;
  a.gpu_decoded = 8;
  b.gpu_decoded = 4;
  a.gpu_decode_fallbacks = 2;
  b.gpu_decode_fallbacks = 1;
  a.gpu_decode_calls.add(8, 0.003);
  b.gpu_decode_calls.add(4, 0.002);
  b.gpu_decode_calls.add(2, 0.0015);
  PipelineStats sum;
  detail::add_counters(sum, a);
  detail::add_counters(sum, b);
  CHECK(sum.workers == 5);
  CHECK(sum.images == 15);
  CHECK(sum.stages[0].count == 15);
  CHECK(sum.kernel_max_seconds == 0.5);
  CHECK(sum.gpu_decoded == 12);
  CHECK(sum.gpu_decode_fallbacks == 3);
  CHECK(sum.gpu_decode_calls.count == 3);
  CHECK(sum.gpu_decode_calls.sum_x == 14);
  CHECK(sum.gpu_decode_calls.sum_y == Approx(0.0065));
}
