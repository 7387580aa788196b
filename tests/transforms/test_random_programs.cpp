// The transform-program fuzzer's cases (support/program_fuzz.hpp) as a fixed run in the suite, so
// every CI run, under AddressSanitizer and UndefinedBehaviorSanitizer too, replays the cases the
// fuzzer found (fuzz/seeds/programs) and a few thousand programs of every registered transform on
// images from 1 x 1 up, on the CPU and through the device path in host memory: no finding, and
// the run reaches what it exists for (programs of every op and transform, views, the device path,
// samples refused as torchvision refuses them).

#include "support/fuzz_cases.hpp"
#include "support/program_fuzz.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

namespace {

template <class... Ts>
std::set<std::string> registered_transforms(conveyor::TransformList<Ts...>) {
  return {Ts::name...};
}

template <class... Ops>
std::set<std::int32_t> registered_ops(conveyor::ops::pixel::OpList<Ops...>) {
  return {Ops::code...};
}

}  // namespace

TEST_CASE("the programs the fuzzer found run, or are refused, without a finding", "[transforms][fuzz]") {
  const auto cases = conveyor_test::corpus_cases(CONVEYOR_SOURCE_DIR);
  REQUIRE(!cases.empty());
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK_NOTHROW(conveyor_test::run_program_case(c.bytes));
  }
}

TEST_CASE("random programs of every transform, on images from 1 x 1 up, run on the CPU and through the device path "
          "without a finding",
          "[transforms][fuzz]") {
  conveyor_test::FuzzOutcome total;
  int ran = 0, views = 0, device = 0, refused_samples = 0;
  conveyor::CounterRng rng(20261206, 0, 0, conveyor::RngOp::user);
  const std::set<std::string> transforms = registered_transforms(conveyor::PixelTransforms{});
  const std::set<std::int32_t> ops = registered_ops(conveyor::ops::pixel::PixelOps{});
  const auto covered = [&] {  // every transform ran, every op ran on the CPU and through the device path
    return total.transforms.size() >= transforms.size() && total.ops.size() >= ops.size() &&
           total.device_ops.size() >= ops.size();
  };
  // what the fuzzer's corpus reaches counts (a flip op after a neighbourhood op, on the device path,
  // takes the random cases 12,000 to reach), then 6,000 random cases at least, and on until
  // everything is covered (a transform valid only on PIL images and seldom drawn valid, or an op one
  // transform draws now and then, may need more), 40,000 at most. CONVEYOR_FUZZ_MIN_CASES lowers
  // the 6,000 where the cases cost most (CI's sanitizer run, whose libFuzzer phase runs them too).
  const char* minimum_set = std::getenv("CONVEYOR_FUZZ_MIN_CASES");
  const int minimum = minimum_set ? std::atoi(minimum_set) : 6000;
  const auto add = [&](const conveyor_test::FuzzOutcome& o) {
    total.ops.insert(o.ops.begin(), o.ops.end());
    total.device_ops.insert(o.device_ops.begin(), o.device_ops.end());
    total.transforms.insert(o.transforms.begin(), o.transforms.end());
  };
  for (const auto& c : conveyor_test::corpus_cases(CONVEYOR_SOURCE_DIR)) add(conveyor_test::run_program_case(c.bytes));
  for (int k = 0; k < 40000 && (k < minimum || !covered()); ++k) {
    const std::vector<std::uint8_t> bytes = conveyor_test::random_case(rng);
    INFO("case " << k);
    conveyor_test::FuzzOutcome o;
    REQUIRE_NOTHROW(o = conveyor_test::run_program_case(bytes));
    if (o.refused) continue;
    ++ran;
    views += o.views;
    device += o.device;
    refused_samples += o.refused_samples > 0;
    add(o);
  }
  // what the run exists for: not only refusals
  CHECK(ran > 400);
  CHECK(views > 20);
  CHECK(device > 100);
  CHECK(refused_samples > 0);
  for (const std::string& t : transforms) {
    INFO("transform " << t);
    CHECK(total.transforms.count(t) == 1);
  }
  for (const std::int32_t code : ops) {
    INFO("op " << conveyor::ops::pixel::op_name(code));
    CHECK(total.ops.count(code) == 1);
    CHECK(total.device_ops.count(code) == 1);
  }
}
