#pragma once
/// @file
/// How a pixel transform (ColorJitter, RandomErasing, ...: torchvision v2's classes as aggregates,
/// one file each, registry.hpp) draws one sample's share of its pixel program.
///
/// A transform is a plain aggregate with torchvision's arguments as its fields, in torchvision's
/// order and with its defaults, and:
///   static constexpr const char* name;           torchvision's class name
///   static constexpr const char* summary;        what it does, in a sentence (its Python docstring)
///   static constexpr FieldName fields[];         its fields' names (fields.hpp)
///   void validate() const;                       ConfigError naming the transform and argument
///   int max_ops() const;                         the most pixel ops one draw appends
///   void draw(ProgramDraw& d, int position) const;
/// `draw` takes its random numbers from `d.stream(position)` only (a stream of its own, keyed by
/// its place in the list, so adding a transform after it changes none of its draws), appends its
/// pixel op records in torchvision's order (`d.add`, `d.flip`), and, when `d.describing()`,
/// records the torchvision functional calls they stand for (`d.describe`). Optional:
/// `int nodes() const` (a container's count of itself and what it holds, for the positions after
/// it), `Stage stage() const` (where its ops apply, when not to the u8 image: GaussianNoise after
/// ToDtype to the float image, RandomErasing to the normalised output) and
/// `void validate_for(const ProgramImage& image) const` (ConfigError when it cannot run on the image
/// every sample has when the transforms see it, or write into the output it becomes), and
/// `void validate_pil() const`: it runs on PIL images as torchvision's PIL functionals do (drawing
/// Pillow's ops where `d.pil(position)`; ConfigError for arguments Pillow refuses); a transform
/// without it is refused on a PIL image; `void validate_tensor() const`: ConfigError for arguments
/// it takes on PIL images only.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/pixel/flip.hpp>
#include <conveyor/ops/pixel/registry.hpp>
#include <conveyor/transforms/fields.hpp>

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Where a transform's ops apply, in the order the output is made: the transforms of a list come
/// in this order (ImageAugment's validation).
enum class Stage : std::int8_t {
  uint8,       ///< the u8 image after the crop (every transform but those below)
  scaled,      ///< the float image between ToDtype and Normalize (GaussianNoise there)
  normalised,  ///< the normalised output (RandomErasing)
};

/// Where `stage` applies, as messages say it.
[[nodiscard]] constexpr const char* stage_text(Stage stage) noexcept {
  switch (stage) {
    case Stage::uint8: return "the uint8 image";
    case Stage::scaled: return "the float image before Normalize";
    case Stage::normalised: return "the normalised output";
  }
  return "";
}

/// What every sample's pixel program meets: the image the transforms see (the output's size) and
/// the output's element type (erasing writes into it).
struct ProgramImage {
  int width = 0;
  int height = 0;
  DType dtype = DType::f32;
};

/// One sample's drawn pixel transforms: the ops its image goes through after resampling (and
/// erasing after normalisation), and the flips folded into its plan instead (the resampler's
/// store mirrors them, as it does RandomHorizontalFlip's).
struct SampleProgram {
  ops::pixel::PixelProgram pixels{};
  std::int32_t flip_x = 0;
  std::int32_t flip_y = 0;
};

/// One argument of a torchvision functional call: an integer (a position, a bit count), a 64-bit
/// key, a number, numbers (one per channel), integers (a size), a word, a flag, or none (Python's None).
struct DrawnArg {
  using Value =
      std::variant<std::int64_t, std::uint64_t, double, std::vector<double>, std::vector<std::int64_t>, std::string,
                   bool, std::monostate>;
  std::string name;
  Value value;

  [[nodiscard]] static DrawnArg integer(std::string name, std::int64_t v) { return {std::move(name), v}; }
  [[nodiscard]] static DrawnArg key(std::string name, std::uint64_t v) { return {std::move(name), v}; }
  [[nodiscard]] static DrawnArg number(std::string name, double v) { return {std::move(name), v}; }
  [[nodiscard]] static DrawnArg list(std::string name, std::vector<double> v) { return {std::move(name), std::move(v)}; }
  [[nodiscard]] static DrawnArg integers(std::string name, std::vector<std::int64_t> v) {
    return {std::move(name), std::move(v)};
  }
  [[nodiscard]] static DrawnArg text(std::string name, std::string v) { return {std::move(name), std::move(v)}; }
  [[nodiscard]] static DrawnArg flag(std::string name, bool v) { return {std::move(name), v}; }
  [[nodiscard]] static DrawnArg none(std::string name) { return {std::move(name), std::monostate{}}; }
};

/// A torchvision.transforms.v2.functional call with the arguments conveyor drew for a sample
/// (`adjust_hue(hue_factor=-0.0731)`): feeding torchvision the same calls in order reproduces what
/// conveyor computes.
struct DrawnCall {
  std::string function;
  std::vector<DrawnArg> args{};
};

/// A uniform float32 in [lo, hi) the way torch's CPU generator makes one for `uniform_` (24 random
/// bits scaled, then `from + x (to - from)` rounded to float32), as a double: what torchvision's
/// transforms hand their functionals (`float(torch.empty(1).uniform_(lo, hi))`).
[[nodiscard]] inline double uniform_float32(CounterRng& rng, double lo, double hi) noexcept {
  const float from = static_cast<float>(lo), to = static_cast<float>(hi);
  const double x = static_cast<double>(rng.next_u32() & 0xFFFFFFu) * 0x1p-24;
  return static_cast<double>(static_cast<float>(x * static_cast<double>(to - from) + static_cast<double>(from)));
}

/// Whether a transform applied with probability `p` applies: torchvision's `torch.rand(1) >= p`
/// skips it.
[[nodiscard]] inline bool applies(CounterRng& rng, double p) noexcept { return uniform_float32(rng, 0.0, 1.0) < p; }

/// What one sample's transforms draw into.
class ProgramDraw {
 public:
  /// Draws for sample `index` of `epoch` under `seed`, whose image is `width` x `height` when the
  /// transforms see it (the output's size); describes the calls into `calls` when it is set.
  /// The transforms at positions below `pil_positions` see a PIL image.
  ProgramDraw(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index, int width, int height,
              std::vector<DrawnCall>* calls = nullptr, int pil_positions = 0) noexcept
      : seed_(seed), epoch_(epoch), index_(index), width_(width), height_(height), pil_positions_(pil_positions),
        calls_(calls) {}

  /// The random stream of the transform at `position` (in order, nested transforms counted).
  [[nodiscard]] CounterRng stream(int position) const noexcept {
    return {seed_, epoch_, index_, static_cast<RngOp>(static_cast<std::uint32_t>(RngOp::pixel_transform) +
                                                      static_cast<std::uint32_t>(position))};
  }
  [[nodiscard]] int width() const noexcept { return width_; }
  [[nodiscard]] int height() const noexcept { return height_; }
  /// Whether the transform at `position` sees a PIL image (torchvision v1's, or v2's before
  /// ToImage): it draws the ops torchvision's PIL functionals stand for (`ops::pixel::pil::`,
  /// Pillow's arithmetic) where they differ from the tensor kernels'.
  [[nodiscard]] bool pil(int position) const noexcept { return position < pil_positions_; }

  /// Appends `op`, after every op drawn so far.
  /// @throws ConfigError when the program is full (validation bounds `max_ops`, so it is not).
  void add(const ops::pixel::PixelOp& op) { ops::pixel::append(program_.pixels, op); }

  /// A flip of the image at this point of the order (`vertical`: top to bottom). Folded into the
  /// plan (the resampler's store mirrors it, before any op runs) when every op drawn so far gives
  /// the same bits on a mirrored image (per pixel, or from whole-image integer statistics, or
  /// another flip); after any other (a neighbourhood op such as a blur reads its neighbours in an
  /// order a flip changes), kept in order as a flip op.
  void flip(bool vertical) {
    for (int k = 0; k < program_.pixels.count; ++k)
      if (!commutes_with_flip(program_.pixels.ops[k])) {
        add(vertical ? ops::pixel::vertical_flip() : ops::pixel::horizontal_flip());
        return;
      }
    (vertical ? program_.flip_y : program_.flip_x) ^= 1;
  }

  /// Whether the transforms record the calls they draw.
  [[nodiscard]] bool describing() const noexcept { return calls_ != nullptr; }
  /// Records a call (when describing; nothing otherwise).
  void describe(DrawnCall call) {
    if (calls_) calls_->push_back(std::move(call));
  }

  [[nodiscard]] const SampleProgram& program() const noexcept { return program_; }

  /// Whether `op` gives the same bits on a mirrored image, mirrored.
  [[nodiscard]] static bool commutes_with_flip(const ops::pixel::PixelOp& op) {
    if (op.code == ops::pixel::Flip::code) return true;
    const ops::pixel::OpKind kind = ops::pixel::op_kind(op.code);
    return kind == ops::pixel::OpKind::point || kind == ops::pixel::OpKind::statistic;
  }

 private:
  std::uint64_t seed_, epoch_, index_;
  int width_, height_;
  int pil_positions_;
  std::vector<DrawnCall>* calls_;
  SampleProgram program_{};
};

/// What the pipeline asks of a pixel transform (see the file's comment).
template <class T>
concept PixelTransformType = NamedFields<T> && requires(const T& t, ProgramDraw& d, int position) {
  { T::name } -> std::convertible_to<const char*>;
  { T::summary } -> std::convertible_to<const char*>;
  t.validate();
  { t.max_ops() } -> std::same_as<int>;
  t.draw(d, position);
};

/// Whether the transform `T` runs on PIL images (`validate_pil`), or holds transforms that may.
template <class T>
inline constexpr bool runs_on_pil = requires(const T& t) { t.validate_pil(); } || requires(const T& t) { t.transforms; };

namespace detail {

/// `t.nodes()`, or 1 for a transform that holds no others.
template <class T>
[[nodiscard]] int transform_nodes(const T& t) {
  if constexpr (requires { t.nodes(); }) return t.nodes();
  else return 1;
}

/// `t.stage()`, or the u8 image's.
template <class T>
[[nodiscard]] Stage transform_stage(const T& t) {
  if constexpr (requires { t.stage(); }) return t.stage();
  else return Stage::uint8;
}

/// `v` as a message shows it: shortest of %.9g.
[[nodiscard]] inline std::string shown(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

/// Throws `ConfigError("<transform>: <what>")` unless `ok`.
inline void expect_transform(bool ok, const char* transform, const std::string& what,
                             SourceLocation where = SourceLocation::current()) {
  if (!ok) throw ConfigError(std::string(transform) + ": " + what, where);
}

/// "p must be in [0, 1], got <p>" unless it is.
inline void expect_probability(const char* transform, double p, SourceLocation where = SourceLocation::current()) {
  expect_transform(p >= 0.0 && p <= 1.0, transform, "p must be in [0, 1], got " + shown(p), where);
}

/// A container's (RandomApply's, ...) check of the transforms it holds: at least one, each valid;
/// an inner error reads "<container>: transforms[k]: <what>".
template <class Transform>
void validate_inner(const char* container, const std::vector<Transform>& transforms) {
  expect_transform(!transforms.empty(), container, "pass at least one transform");
  for (std::size_t k = 0; k < transforms.size(); ++k) {
    try {
      std::visit([](const auto& x) { x.validate(); }, transforms[k]);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string(container) + ": transforms[" + std::to_string(k) +
                        "]: " + std::string(split_location(e.what()).second));
    }
  }
}

/// The positions a container takes: its own and those of the transforms it holds.
template <class Transform>
[[nodiscard]] int container_nodes(const std::vector<Transform>& transforms) {
  int n = 1;
  for (const Transform& t : transforms) n += std::visit([](const auto& x) { return transform_nodes(x); }, t);
  return n;
}

/// The position of a container's transform `k`, the container being at `position`: the ones after
/// it, in order, each taking its own and its nested ones'.
template <class Transform>
[[nodiscard]] int inner_position(const std::vector<Transform>& transforms, int position, std::size_t k) {
  int at = position + 1;
  for (std::size_t j = 0; j < k; ++j) at += std::visit([](const auto& x) { return transform_nodes(x); }, transforms[j]);
  return at;
}

/// The most pixel ops `transforms` may draw when all of them run.
template <class Transform>
[[nodiscard]] int ops_of_all(const std::vector<Transform>& transforms) {
  int n = 0;
  for (const Transform& t : transforms) n += std::visit([](const auto& x) { return x.max_ops(); }, t);
  return n;
}

/// Draws `transforms` (a range of variants) in order, the first at `position`, each after the
/// positions of the one before and those it holds.
template <class Transforms>
void draw_in_order(const Transforms& transforms, ProgramDraw& d, int position) {
  for (const auto& t : transforms)
    std::visit(
        [&](const auto& x) {
          x.draw(d, position);
          position += transform_nodes(x);
        },
        t);
}

/// Where the ops of the transform `t` (a variant) apply.
template <class Transform>
[[nodiscard]] Stage stage(const Transform& t) {
  return std::visit([](const auto& x) { return transform_stage(x); }, t);
}

/// The latest stage of `transforms` (a range of variants), the uint8 image's when empty.
template <class Transforms>
[[nodiscard]] Stage latest_stage(const Transforms& transforms) {
  Stage last = Stage::uint8;
  for (const auto& t : transforms) last = std::max(last, stage(t));
  return last;
}

/// Calls `f(name, stage)` for every transform that holds no others in `transforms` (a range of
/// variants), in order.
template <class Transforms, class F>
void for_each_leaf(const Transforms& transforms, F& f) {
  for (const auto& t : transforms)
    std::visit(
        [&](const auto& x) {
          if constexpr (requires { x.transforms; })
            for_each_leaf(x.transforms, f);
          else
            f(std::remove_cvref_t<decltype(x)>::name, transform_stage(x));
        },
        t);
}

/// The class name of `t` (a variant).
template <class Transform>
[[nodiscard]] const char* variant_name(const Transform& t) {
  return std::visit([](const auto& x) -> const char* { return std::remove_cvref_t<decltype(x)>::name; }, t);
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor
