#pragma once
/// @file
/// Element types, layouts and a non-owning strided tensor view, shared by both backends.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/named_enum.hpp>

#include <array>
#include <initializer_list>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace conveyor {
inline namespace v0 {

/// Element type of a batch's images.
enum class DType : std::uint8_t { u8, f32, f16, bf16, i64 };

/// Memory order of a batch of images: channels first (NCHW) or last (NHWC).
enum class Layout : std::uint8_t { NCHW, NHWC };

/// Size of one element in bytes.
[[nodiscard]] CONVEYOR_HD constexpr std::size_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::u8: return 1;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32: return 4;
    case DType::i64: return 8;
  }
  return 0;
}

namespace detail {
inline constexpr const char* dtype_names[] = {"u8", "f32", "f16", "bf16", "i64"};
inline constexpr const char* layout_names[] = {"nchw", "nhwc"};
}  // namespace detail

/// Lower-case names, as the command-line tools and Python spell them, in the enum's order.
[[nodiscard]] constexpr std::span<const char* const> enum_names(DType) noexcept { return detail::dtype_names; }
[[nodiscard]] constexpr std::span<const char* const> enum_names(Layout) noexcept { return detail::layout_names; }

/// The dtypes an image batch takes: all but i64 (labels'), which is last.
inline constexpr std::size_t image_dtype_count = static_cast<std::size_t>(DType::i64);

[[nodiscard]] constexpr std::string_view to_string(DType t) noexcept { return enum_name(t); }
[[nodiscard]] constexpr std::string_view to_string(Layout l) noexcept { return enum_name(l); }

/// An image dtype from its name: "u8", "f32", "f16", "bf16". @throws ConfigError for anything else.
[[nodiscard]] inline DType parse_dtype(std::string_view s) { return parse_enum<DType>("dtype", s, image_dtype_count); }

/// "nchw" or "nhwc". @throws ConfigError for anything else.
[[nodiscard]] inline Layout parse_layout(std::string_view s) { return parse_enum<Layout>("layout", s); }

/// Where a tensor's memory lives. `id` is the CUDA ordinal for `cuda`, 0 for `cpu`.
struct Device {
  /// Host memory or a CUDA device's.
  enum class Kind : std::uint8_t { cpu, cuda } kind = Kind::cpu;
  int id = 0;
  friend constexpr bool operator==(const Device&, const Device&) = default;
};

/// A non-owning view of a strided tensor of up to 5 dimensions (a batch of groups of images:
/// [N, count, C, H, W]). Strides count elements.
struct TensorView {
  static constexpr int max_rank = 5;

  void* data = nullptr;
  DType dtype = DType::u8;
  int rank = 0;
  std::array<std::int64_t, max_rank> shape{};
  std::array<std::int64_t, max_rank> strides{};
  Device device{};

  /// Number of elements.
  [[nodiscard]] std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[std::size_t(i)];
    return n;
  }
  /// Number of bytes spanned by a contiguous tensor of this shape.
  [[nodiscard]] std::size_t nbytes() const noexcept { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
  /// The data pointer as `T*`; the caller is responsible for `T` matching `dtype`.
  template <class T>
  [[nodiscard]] T* as() const noexcept { return static_cast<T*>(data); }

  /// A contiguous (row-major) view of `shape` (at most `max_rank` dimensions).
  [[nodiscard]] static TensorView contiguous(void* data, DType dtype, std::span<const std::int64_t> shape,
                                             Device device = {}) {
    TensorView v;
    v.data = data;
    v.dtype = dtype;
    v.rank = static_cast<int>(shape.size());
    v.device = device;
    std::size_t i = 0;
    for (std::int64_t s : shape) v.shape[i++] = s;
    std::int64_t stride = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      v.strides[d] = stride;
      stride *= v.shape[d];
    }
    return v;
  }
  [[nodiscard]] static TensorView contiguous(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                                             Device device = {}) {
    return contiguous(data, dtype, std::span<const std::int64_t>(shape.begin(), shape.size()), device);
  }
};

}  // namespace v0
}  // namespace conveyor
