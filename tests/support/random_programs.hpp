#pragma once
// Random augmentations from bytes, for the transform-program fuzzer (fuzz/fuzz_program.cpp) and its
// fixed run in the test suite (tests/transforms/test_random_programs.cpp): an ImageAugment with any
// crop, output and decode settings, and 0 to 4 pixel transforms of every registered kind, nested
// in RandomApply, RandomChoice and RandomOrder, their arguments anything including extremes; and
// an encoded image of any size from 1 x 1 up. Every transform is made by looping over the registry
// (`PixelTransforms`) and filling each of its fields from its type alone (its named fields,
// conveyor/transforms/fields.hpp), so a transform added to the registry is fuzzed with no line here.
// The same bytes give the same augmentation and image everywhere; bytes run out as zeros.

#include <conveyor/core/rng.hpp>
#include <conveyor/io/jpeg_encoder.hpp>
#include <conveyor/pipeline/image_augment.hpp>
#include <conveyor/transforms/program.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace conveyor_test {

/// Choices read from bytes, little by little; zeros once they run out.
class Choices {
 public:
  explicit Choices(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}

  /// A number in [0, n) (n >= 1), from as few bytes as it needs.
  std::uint32_t below(std::uint32_t n) noexcept {
    std::uint64_t v = 0;
    for (std::uint64_t range = 1; range < n; range <<= 8) v = (v << 8) | next();
    return static_cast<std::uint32_t>(v % n);
  }
  bool coin() noexcept { return below(2) == 1; }
  /// True with probability about k / 8.
  bool eighths(std::uint32_t k) noexcept { return below(8) < k; }
  /// An integer in [lo, hi].
  int between(int lo, int hi) noexcept {
    return lo + static_cast<int>(below(static_cast<std::uint32_t>(static_cast<std::int64_t>(hi) - lo + 1)));
  }
  std::uint64_t u64() noexcept {
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = (v << 8) | next();
    return v;
  }
  /// A number as arguments meet them: often in [0, 1] or a small range, sometimes an edge (0, 1,
  /// 255, 256, 360), a huge, tiny, negative or non-finite value.
  double number() noexcept {
    constexpr double inf = std::numeric_limits<double>::infinity();
    static constexpr double edges[] = {0.0,  1.0,   0.5,    -1.0, 2.0,  255.0, 256.0,  360.0, 1e-30, -1e-30, 1e9,
                                       -1e9, 1e300, 3e38,   inf,  -inf, std::numeric_limits<double>::quiet_NaN(),
                                       0.1,  180.0, -180.0, 90.0, 45.0, 1e-7,  0.999999, 128.0};
    switch (below(8)) {
      case 0: return edges[below(std::size(edges))];
      case 1: case 2: case 3: return below(1 << 16) / 65536.0;  // [0, 1): probabilities, fractions
      case 4: return (static_cast<double>(below(1 << 16)) - 32768.0) / 8192.0;  // [-4, 4)
      case 5: return static_cast<double>(between(-400, 400));
      case 6: return below(1 << 24) / 65536.0;  // [0, 256)
      default: return std::ldexp(static_cast<double>(below(1 << 16)) - 32768.0, between(-60, 60));
    }
  }
  /// An integer as arguments meet them: mostly small, sometimes an edge.
  int integer() noexcept {
    static constexpr int edges[] = {0, 1, -1, 2, 3, 8, 9, 10, 31, 63, 64, 65, 255, 256, 1 << 20,
                                    std::numeric_limits<int>::max(), std::numeric_limits<int>::min()};
    return eighths(2) ? edges[below(std::size(edges))] : between(-3, 70);
  }

 private:
  std::uint8_t next() noexcept { return at_ < bytes_.size() ? bytes_[at_++] : 0; }
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

namespace detail {

template <class E>
constexpr std::uint32_t enum_values() {
  return static_cast<std::uint32_t>(conveyor::enum_names(E{}).size());
}

conveyor::PixelTransform random_transform(Choices& c, int depth);

inline void arbitrary(Choices& c, double& v, int) { v = c.number(); }
inline void arbitrary(Choices& c, int& v, int) { v = c.integer(); }
inline void arbitrary(Choices& c, bool& v, int) { v = c.coin(); }
template <class E>
  requires std::is_enum_v<E>
void arbitrary(Choices& c, E& v, int) {
  v = static_cast<E>(c.below(enum_values<E>()));
}
template <std::size_t N>
void arbitrary(Choices& c, std::array<double, N>& v, int) {
  for (double& x : v) x = c.number();
  if (c.eighths(4) && v[0] > v[N - 1]) std::swap(v[0], v[N - 1]);  // ranges are mostly (min, max)
}
inline void arbitrary(Choices& c, conveyor::Numbers& v, int) {
  switch (c.below(3)) {
    case 0: v = conveyor::Numbers{c.number()}; break;
    case 1: {
      double a = c.number(), b = c.number();
      if (c.eighths(6) && a > b) std::swap(a, b);
      v = conveyor::Numbers{a, b};
      break;
    }
    default: v = conveyor::Numbers{c.number(), c.number(), c.number(), c.number()}; break;
  }
}
inline void arbitrary(Choices& c, conveyor::KernelSize& v, int) {
  // mostly odd sizes up to 63 and beyond: the ones a blur takes, and the ones it refuses
  const auto size = [&] { return c.eighths(7) ? 2 * c.between(0, 33) + 1 : c.integer(); };
  v = c.coin() ? conveyor::KernelSize{size()} : conveyor::KernelSize{size(), size()};
}
inline void arbitrary(Choices& c, conveyor::Fill& v, int) {
  switch (c.below(3)) {
    case 0: v = conveyor::Fill::none(); break;
    case 1: v = conveyor::Fill{c.number()}; break;
    default: v = conveyor::Fill{c.number(), c.number(), c.number()}; break;
  }
}
inline void arbitrary(Choices& c, conveyor::Jitter& v, int) {
  // mostly amounts every factor takes (hue's are at most 0.5)
  const auto amount = [&] { return c.eighths(5) ? c.below(1 << 16) / 131072.0 : c.number(); };
  switch (c.below(3)) {
    case 0: v = conveyor::Jitter{}; break;
    case 1: v = conveyor::Jitter{amount()}; break;
    default: {
      double lo = amount() - 0.25, hi = amount();
      if (c.eighths(6) && lo > hi) std::swap(lo, hi);
      v = conveyor::Jitter{lo, hi};
      break;
    }
  }
}
inline void arbitrary(Choices& c, conveyor::ErasingValue& v, int) {
  switch (c.below(3)) {
    case 0: v = conveyor::ErasingValue::random(); break;
    case 1: v = conveyor::ErasingValue{c.number()}; break;
    default: v = conveyor::ErasingValue{c.number(), c.number(), c.number()}; break;
  }
}
inline void arbitrary(Choices& c, std::vector<double>& v, int) {
  v.resize(c.below(5));
  for (double& x : v) x = c.number();
}
inline void arbitrary(Choices& c, std::vector<conveyor::PixelTransform>& v, int depth) {
  v.clear();
  const std::uint32_t n = c.eighths(1) ? 0 : 1 + c.below(depth >= 2 ? 1 : 3);  // none now and then: refused
  for (std::uint32_t k = 0; k < n; ++k) v.push_back(random_transform(c, depth + 1));
}

template <class T>
void arbitrary(Choices& c, std::optional<T>& v, int depth) {
  if (c.eighths(1)) {
    v.reset();
    return;
  }
  T x = [] {
    if constexpr (std::is_default_constructible_v<T>) return T{};
    else return T{1};  // Numbers, KernelSize
  }();
  arbitrary(c, x, depth);
  v = x;
}
/// `T` with its defaults, each field then kept or made arbitrary.
template <class T>
conveyor::PixelTransform filled(Choices& c, int depth) {
  T t{};
  // a required argument (an empty optional by default) given mostly; others kept now and then, more
  // often where there are many (so that a transform of nine fields is still valid now and then)
  const std::uint32_t odds = std::size(T::fields) > 5 ? 3 : 5;
  conveyor::for_each_field(t, [&](const conveyor::FieldName&, auto& field) {
    bool required = false;
    if constexpr (requires { field.has_value(); }) required = !field.has_value();
    if (c.eighths(required ? 7 : odds)) arbitrary(c, field, depth);
  });
  return t;
}

/// Transform `k` of the registry, `filled`.
template <class... Ts>
conveyor::PixelTransform nth_transform(conveyor::TransformList<Ts...>, std::uint32_t k, Choices& c, int depth) {
  conveyor::PixelTransform out;
  std::uint32_t at = 0;
  (void)((at++ == k ? (out = filled<Ts>(c, depth), true) : false) || ...);
  return out;
}

template <class... Ts>
constexpr std::uint32_t transform_count(conveyor::TransformList<Ts...>) {
  return sizeof...(Ts);
}

/// Whether `t` is valid and runs on a PIL image.
inline bool runs_on_pil(const conveyor::PixelTransform& t) {
  try {
    conveyor::validate_transforms({&t, 1});
    conveyor::validate_pil_transforms({&t, 1}, 1);
    return true;
  } catch (const conveyor::ConfigError&) {
    return false;
  }
}

inline conveyor::PixelTransform random_transform(Choices& c, int depth) {
  constexpr std::uint32_t kinds = transform_count(conveyor::PixelTransforms{});
  return nth_transform(conveyor::PixelTransforms{}, c.below(kinds), c, depth);
}

}  // namespace detail

/// An augmentation from `c`: the crop (RandomResizedCrop with any scale and ratio, or CenterCrop or
/// RandomCrop with any padding in any mode, or one of FiveCrop's, after a Resize or not, to a side or (height, width), with max_size or not), its size (1 to 48,
/// now and then up to 300; a square mostly), the flip, 0 to 4 pixel
/// transforms, the output's dtype, layout and normalisation, the decode settings and the resampling
/// filter. Not validated.
inline conveyor::ImageAugment random_augment(Choices& c) {
  conveyor::ImageAugment a;
  const int side = c.eighths(7) ? c.between(1, 48) : c.between(1, 300);
  // a square, or (height, width) now and then
  const conveyor::Size size = c.eighths(6) ? conveyor::Size{side} : conveyor::Size{side, c.between(1, 64)};
  if (c.coin()) {
    conveyor::RandomResizedCrop crop{.size = size};
    if (c.eighths(2)) crop.scale = {c.number(), c.number()};
    if (c.eighths(2)) crop.ratio = {c.number(), c.number()};
    if (crop.scale[0] > crop.scale[1] && c.eighths(6)) std::swap(crop.scale[0], crop.scale[1]);
    if (crop.ratio[0] > crop.ratio[1] && c.eighths(6)) std::swap(crop.ratio[0], crop.ratio[1]);
    a.crop = crop;
  } else {
    a.crop = conveyor::CenterCrop{size, c.eighths(1)};  // Hugging Face's truncated offset now and then
    if (c.eighths(2)) {  // RandomCrop: padded mostly a little, now and then by anything
      conveyor::RandomCrop crop{.size = size, .pad_if_needed = c.coin()};
      for (int& pad : crop.padding) pad = c.eighths(6) ? c.between(0, 8) : c.integer();
      if (c.coin())  // mirrored or repeated edges (too deep for the image now and then: refused)
        crop.padding_mode = static_cast<conveyor::ops::PadMode>(c.below(std::uint32_t(conveyor::ops::enum_names(crop.padding_mode).size())));
      a.crop = crop;
    } else if (c.eighths(1)) {  // one of FiveCrop's, of the image or a mirror image (larger than the image: refused)
      a.crop = conveyor::FiveCrop{size, static_cast<conveyor::FiveCrop::Part>(c.below(5)),
                                  static_cast<conveyor::FiveCrop::Of>(c.below(3))};
    }
    if (c.coin()) {
      const int n = c.eighths(7) ? c.between(1, 64) : c.integer();
      a.resize = conveyor::Resize{c.eighths(6) ? conveyor::Size{n} : conveyor::Size{n, c.between(1, 64)}};
      if (!a.resize->size->pair && c.eighths(2))  // mostly just above the size: the cap then applies
        a.resize->max_size = c.eighths(7) && n > 0 && n < (1 << 20) ? n + c.between(-2, 64) : c.integer();
    }
  }
  if (c.coin()) a.flip.p = c.eighths(7) ? c.below(5) / 4.0 : c.number();
  for (std::uint32_t n = c.below(5), k = 0; k < n; ++k) a.transforms.push_back(detail::random_transform(c, 0));
  a.dtype = static_cast<conveyor::DType>(c.below(4));  // u8, f32, f16, bf16
  a.layout = c.coin() ? conveyor::Layout::NCHW : conveyor::Layout::NHWC;
  if (a.dtype != conveyor::DType::u8 && c.coin()) a.normalize = conveyor::Normalize::imagenet();
  if (a.normalize && c.eighths(1)) a.normalize->torchvision_rounding = !a.normalize->torchvision_rounding;
  a.exif_orientation = c.eighths(1);
  a.roi = !c.eighths(2);
  if (c.coin()) a.decode_scaling = c.coin();
  a.decode.max_image_pixels = 1 << 22;
  if (c.eighths(3))  // torch's bicubic or one of Pillow's filters: the CPU's loops, whatever the backend
    a.resampling = static_cast<conveyor::ops::Resampling>(c.below(std::uint32_t(conveyor::ops::enum_names(a.resampling).size())));
  if (c.eighths(4)) {  // the first transforms on a PIL image (those of the uint8 image, mostly): Pillow's ops, or refused
    std::uint32_t before_erasing = 0;
    while (before_erasing < a.transforms.size() && conveyor::detail::stage(a.transforms[before_erasing]) == conveyor::Stage::uint8) ++before_erasing;
    std::uint32_t on_pil = 0;  // the longest prefix that runs there (timm's ops run nowhere else)
    while (on_pil < before_erasing && detail::runs_on_pil(a.transforms[on_pil])) ++on_pil;
    a.pil_transforms = c.coin() ? on_pil : c.below((c.eighths(7) ? before_erasing : 7) + 1);
  }
  return a;
}

/// An encoded image from `c`: 1 x 1 to 80 x 80 (now and then up to 700 a side), a seeded random
/// picture, as a JPEG (any subsampling, progressive or not, grey or colour) or a PPM/PGM (exact pixels).
inline std::vector<std::byte> random_encoded_image(Choices& c) {
  const bool large = c.eighths(1);
  const int width = large ? c.between(1, 700) : c.between(1, 80);
  const int height = large ? c.between(1, 700) : c.between(1, 80);
  const int channels = c.eighths(1) ? 1 : 3;
  conveyor::CounterRng rng(c.u64(), 0, 0, conveyor::RngOp::user);
  std::vector<std::uint8_t> px(std::size_t(width) * std::size_t(height) * std::size_t(channels));
  const int smooth = c.between(0, 3);  // noise over gradients, from all noise to none
  for (std::size_t i = 0; i < px.size(); ++i) {
    const auto noise = static_cast<int>(rng.next_u32() & 0xFF);
    const auto ramp = static_cast<int>((i * 7 / std::size_t(channels)) & 0xFF);
    px[i] = static_cast<std::uint8_t>((noise * (3 - smooth) + ramp * smooth) / 3);
  }
  if (c.coin()) {
    const std::string header = std::string(channels == 1 ? "P5" : "P6") + " " + std::to_string(width) + " " +
                               std::to_string(height) + " 255\n";
    std::vector<std::byte> out(header.size() + px.size());
    for (std::size_t i = 0; i < header.size(); ++i) out[i] = static_cast<std::byte>(header[i]);
    for (std::size_t i = 0; i < px.size(); ++i) out[header.size() + i] = static_cast<std::byte>(px[i]);
    return out;
  }
  conveyor::EncodeOptions o;
  o.quality = c.between(1, 100);
  o.subsampling = static_cast<conveyor::ChromaSubsampling>(c.below(3));
  o.progressive = c.eighths(2);
  return conveyor::encode_jpeg(px.data(), width, height, channels, std::size_t(width) * std::size_t(channels), o);
}

}  // namespace conveyor_test
