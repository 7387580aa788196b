// libFuzzer target: any bytes through what a worker does with a sample — header parse, Exif,
// augmentation plan, window decode (with and without DCT scaling and ROI, so the crop and skip
// paths and the DC-scan filter run too), CPU resampling — with a small max_image_pixels so no
// input can make it allocate much. Every failure must be a DecodeError; anything else (a crash, a
// sanitizer report, another exception) is a finding.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude fuzz/fuzz_decode.cpp -ljpeg
//   ./a.out -max_total_time=60 corpus/

#include <conveyor/conveyor.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  (void)conveyor::exif_orientation(bytes);
  std::vector<unsigned char> dc;
  (void)conveyor::drop_ac_scans(bytes, dc);
  static const conveyor::DecodeOptions guard{.max_image_pixels = 1 << 22};
  // The first byte picks the variant, so the corpus explores all of them.
  const unsigned variant = size > 0 ? data[0] : 0;
  conveyor::ImageAugment aug = variant & 1 ? conveyor::ImageAugment::train(32) : conveyor::ImageAugment::eval(40, 32);
  aug.roi = (variant & 2) == 0;
  aug.decode_scaling = (variant & 4) == 0;
  aug.exif_orientation = (variant & 8) != 0;
  aug.decode = guard;
  aug.decode.lenient = (variant & 16) != 0;
  aug.dtype = static_cast<conveyor::DType>((variant >> 5) & 3);
  if (aug.dtype == conveyor::DType::u8) aug.normalize.reset();
  static thread_local auto ws = aug.make_workspace();
  ws.decoder.set_options(aug.decode);
  std::vector<std::byte> out(aug.sample_spec().bytes());
  try {
    aug.apply({.seed = 1, .epoch = 0, .index = variant}, bytes, out, ws);
  } catch (const conveyor::DecodeError&) {
  }
  return 0;
}
