// libFuzzer target: any bytes through what a worker does with a sample — header parse, Exif,
// augmentation plan, window decode (with and without DCT scaling and ROI, so the crop and skip
// paths and the DC-scan filter run too), CPU resampling — with a small max_image_pixels so no
// input can make it allocate much. Every failure must be a DecodeError; anything else (a crash, a
// sanitizer report, another exception) is a finding.
//
// The first byte of an input is a settings byte the harness strips, not part of the image: the
// image's own bytes never decide the settings, so a decodable file reaches every path (smoke.sh
// seeds each file with several settings bytes).
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude fuzz/fuzz_decode.cpp -ljpeg
//   ./a.out -max_total_time=60 corpus/

#include <conveyor/conveyor.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

/// What the settings byte selects, bit by bit.
enum Setting : unsigned {
  eval_preset = 1,      ///< Resize + CenterCrop rather than RandomResizedCrop
  whole_image = 2,      ///< roi off
  full_scale = 4,       ///< decode_scaling off
  exif = 8,             ///< apply the Exif orientation
  lenient = 16,         ///< accept libjpeg warnings, and 16-bit PNGs as their high bytes
  dtype_shift = 5,      ///< two bits: u8, f32, f16, bf16
  nhwc = 128,
};

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned settings = data[0];
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  (void)conveyor::exif_orientation(bytes);
  std::vector<unsigned char> dc;
  (void)conveyor::drop_ac_scans(bytes, dc);
  static const conveyor::DecodeOptions guard{.max_image_pixels = 1 << 22};
  conveyor::ImageAugment aug = settings & eval_preset ? conveyor::ImageAugment::eval(40, 32) : conveyor::ImageAugment::train(32);
  aug.roi = (settings & whole_image) == 0;
  aug.decode_scaling = (settings & full_scale) == 0;
  aug.exif_orientation = (settings & exif) != 0;
  aug.decode = guard;
  aug.decode.lenient = (settings & lenient) != 0;
  aug.decode.sixteen_bit = aug.decode.lenient ? conveyor::SixteenBit::high_byte : conveyor::SixteenBit::refuse;
  aug.dtype = static_cast<conveyor::DType>((settings >> dtype_shift) & 3);
  aug.layout = settings & nhwc ? conveyor::Layout::NHWC : conveyor::Layout::NCHW;
  if (aug.dtype == conveyor::DType::u8) aug.normalize.reset();
  static thread_local auto ws = aug.make_workspace();
  ws.decoder.set_options(aug.decode);
  std::vector<std::byte> out(aug.sample_spec().bytes());
  try {
    aug.apply({.seed = 1, .epoch = 0, .index = size}, bytes, out, ws);
  } catch (const conveyor::DecodeError&) {
  }
  return 0;
}
