#pragma once
/// @file
/// A contact sheet: a batch of host images laid out in a grid and saved as one JPEG, so a person
/// can look at the crops and flips an augmentation produced.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/io/jpeg_encoder.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/ops/convert.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Renders host images ([N, 3, H, W] or [N, H, W, 3], any dtype) into a grid of `columns`,
/// undoing `normalize` for float images (pixels = (x * std + mean) * 255), and returns the JPEG.
/// @throws ConfigError when `images` is not a host batch of RGB images.
[[nodiscard]] inline std::vector<std::byte> contact_sheet(const TensorView& images, Layout layout,
                                                          const Normalize& normalize = {}, int columns = 8,
                                                          int gap = 4) {
  CONVEYOR_EXPECTS(images.device.kind == Device::Kind::cpu, "contact_sheet: images must be in host memory");
  CONVEYOR_EXPECTS(images.rank == 4, "contact_sheet: images must be [N, 3, H, W] or [N, H, W, 3]");
  const bool chw = layout == Layout::NCHW;
  const auto n = static_cast<int>(images.shape[0]);
  const auto h = static_cast<int>(chw ? images.shape[2] : images.shape[1]);
  const auto w = static_cast<int>(chw ? images.shape[3] : images.shape[2]);
  CONVEYOR_EXPECTS((chw ? images.shape[1] : images.shape[3]) == 3, "contact_sheet: images must have 3 channels");
  CONVEYOR_EXPECTS(n > 0 && columns > 0, "contact_sheet: nothing to draw");
  const int cols = n < columns ? n : columns, rows = (n + cols - 1) / cols;
  const int sw = cols * w + (cols + 1) * gap, sh = rows * h + (rows + 1) * gap;
  std::vector<std::uint8_t> sheet(std::size_t(sw) * std::size_t(sh) * 3, 255);
  auto value = [&](std::int64_t i, int c) -> std::uint8_t {
    float x = 0;
    switch (images.dtype) {
      case DType::u8: return images.as<const std::uint8_t>()[i];
      case DType::f32: x = images.as<const float>()[i]; break;
      case DType::f16: x = ops::f16_to_float(images.as<const std::uint16_t>()[i]); break;
      case DType::bf16: x = ops::bf16_to_float(images.as<const std::uint16_t>()[i]); break;
      default: return 0;
    }
    return ops::to_u8((x * normalize.std[std::size_t(c)] + normalize.mean[std::size_t(c)]) * 255.0f);
  };
  for (int k = 0; k < n; ++k) {
    const int x0 = gap + (k % cols) * (w + gap), y0 = gap + (k / cols) * (h + gap);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c) {
          const std::int64_t i = chw ? ((std::int64_t(k) * 3 + c) * h + y) * w + x : ((std::int64_t(k) * h + y) * w + x) * 3 + c;
          sheet[std::size_t((std::int64_t(y0 + y) * sw + x0 + x) * 3 + c)] = value(i, c);
        }
  }
  return encode_jpeg(sheet.data(), sw, sh, 3, std::size_t(sw) * 3, {.quality = 92, .subsampling = ChromaSubsampling::s444});
}

/// Writes `bytes` to `path`. @throws IoError when the file cannot be written.
inline void write_file(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw IoError("cannot write file", path);
}

}  // namespace v0
}  // namespace conveyor
