// libFuzzer target: transform programs (tests/support/program_fuzz.hpp). Any bytes become an
// ImageAugment with any crop, output and decode settings and random pixel transforms of every
// registered kind with any arguments, nested in RandomApply/RandomChoice/RandomOrder, maybe a
// second view, and images from 1 x 1 up; what validation accepts runs on the CPU and through the
// device path in host memory, which must agree. Findings: a sanitizer report (a read or write
// outside a buffer, undefined behaviour), an exception after validation, or a difference.
//
//   fuzz/seeds/programs: cases found, kept as regression seeds (the test suite replays them too).

#include "support/program_fuzz.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)conveyor_test::run_program_case(std::span(data, size));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_program: finding: %s\n", e.what());
    std::abort();
  }
  return 0;
}
