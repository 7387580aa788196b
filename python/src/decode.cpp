// decode_image: the loader's decoder for one image at full size, for checks and tools.

#include "bindings.hpp"

#include <conveyor/io/image_decoder.hpp>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace conveyor_ext {
namespace {

/// Decodes one image (any codec) at full size: (width, height, RGB bytes).
std::tuple<int, int, nb::bytes> decode_image(nb::bytes data, bool lenient, std::uint64_t max_image_pixels,
                                             const std::string& sixteen_bit) {
  conveyor::ImageDecoder d({.lenient = lenient,
                            .max_image_pixels = max_image_pixels,
                            .sixteen_bit = conveyor::parse_sixteen_bit(sixteen_bit)});
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data.c_str()), data.size());
  std::vector<std::uint8_t> out;
  conveyor::ImageInfo info;
  {
    nb::gil_scoped_release release;
    info = d.read_header(in);
    out.resize(std::size_t(info.width) * std::size_t(info.height) * 3);
    d.decode(out.data(), std::size_t(info.width) * 3);
  }
  return {info.width, info.height, nb::bytes(reinterpret_cast<const char*>(out.data()), out.size())};
}

}  // namespace

void bind_decode(nb::module_& m) {
  using namespace nb::literals;
  m.def("decode_image", &decode_image, "data"_a, "lenient"_a = false, "max_image_pixels"_a = std::uint64_t{1} << 27,
        "sixteen_bit"_a = "refuse");
}

}  // namespace conveyor_ext
