#pragma once
/// @file
/// The resampling filters a resize runs, each as the library the user came from defines it:
/// torch's antialiased bilinear and bicubic on uint8 tensors (torchvision v2 on tensors), and
/// Pillow's six (`Image.resize`: torchvision v1, and v2 on PIL images). Each expression is its
/// library's own, term for term (Pillow's libImaging/Resample.c; torch's UpSample.h): a weight is
/// rounded to fixed point afterwards, and a product rounded another way can move it by a unit. The
/// cubics' products are spelled with `exact::` (one rounding each, never fused), so the kernel,
/// which computes its weights on the device, and a consumer built with contraction get the same.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>

#include <cstdint>
#include <math.h>
#include <span>

namespace conveyor {
inline namespace v0 {
namespace ops {

/// Whose resize, with which filter. The torch filters weigh at the precision torch picks per
/// axis (16-bit weights); Pillow's at 22 fraction bits, so the same filter gives other bits.
enum class Resampling : std::uint8_t {
  bilinear = 0,  ///< torchvision v2 on uint8 tensors, BILINEAR with antialias (the default)
  bicubic,       ///< torchvision v2 on uint8 tensors, BICUBIC with antialias: Keys' cubic, a = -0.5
  nearest,       ///< torchvision v2 on tensors, NEAREST: the source pixel floor(o * (in / out)), in float32
  nearest_exact, ///< NEAREST_EXACT: floor((o + 0.5) * (in / out)), the product in double rounded to float32
  /// BILINEAR with antialias=False (or None): the triangle not widened when shrinking, as torch's
  /// uint8 path computes it (the one torchvision takes on AVX2, AVX-512 and Arm CPUs)
  bilinear_no_antialias,
  /// BICUBIC with antialias=False (or None): Keys' cubic with a = -0.75 (torch's float bicubic's),
  /// not widened, in torch's uint8 path (taps cut at the image's edges and renormalised)
  bicubic_no_antialias,
  pil_nearest,   ///< Pillow's NEAREST: the pixel under each output centre
  pil_box,       ///< Pillow's BOX
  pil_bilinear,  ///< Pillow's BILINEAR (torchvision v1's default)
  pil_hamming,   ///< Pillow's HAMMING
  pil_bicubic,   ///< Pillow's BICUBIC
  pil_lanczos,   ///< Pillow's LANCZOS
};

namespace detail {
inline constexpr const char* resampling_names[] = {
    "bilinear",    "bicubic",     "nearest",      "nearest_exact", "bilinear_no_antialias", "bicubic_no_antialias",
    "pil_nearest", "pil_box",     "pil_bilinear", "pil_hamming",   "pil_bicubic",           "pil_lanczos"};
}  // namespace detail

/// The names, in the enum's order: "bilinear", ..., "pil_lanczos".
[[nodiscard]] constexpr std::span<const char* const> enum_names(Resampling) noexcept {
  return detail::resampling_names;
}

/// Whether `f` is Pillow's: 22-bit weights, and the pipeline's images are PIL images.
[[nodiscard]] CONVEYOR_HD constexpr bool is_pil(Resampling f) noexcept { return f >= Resampling::pil_nearest; }

/// Whether `f` takes the one source pixel under each output pixel (weight 1), torch's or Pillow's.
[[nodiscard]] CONVEYOR_HD constexpr bool is_nearest(Resampling f) noexcept {
  return f == Resampling::nearest || f == Resampling::nearest_exact || f == Resampling::pil_nearest;
}

/// Whether the filter keeps its width when shrinking (no antialiasing): its taps are those of
/// scale 1 wherever the source is.
[[nodiscard]] CONVEYOR_HD constexpr bool unwidened(Resampling f) noexcept {
  return f == Resampling::bilinear_no_antialias || f == Resampling::bicubic_no_antialias;
}

/// Whether taps outside the image give their weights to the edge pixel instead of being dropped:
/// torch's uint8 BICUBIC without antialias keeps the float path's four taps floor(x) - 1 .. floor(x)
/// + 2 about x = (o + 0.5) * scale - 0.5, indices clamped into the image.
[[nodiscard]] CONVEYOR_HD constexpr bool merges_edges(Resampling f) noexcept {
  return f == Resampling::bicubic_no_antialias;
}

/// Whether a device computes `f`'s weights with the same bits as the host: sums and products do
/// (the cubics' spelled with `exact::`); Hamming's and Lanczos' take sin and cos, which CUDA's
/// functions may round other than the C library's, so their samples are resampled on the CPU.
[[nodiscard]] CONVEYOR_HD constexpr bool exact_on_device(Resampling f) noexcept {
  return f != Resampling::pil_hamming && f != Resampling::pil_lanczos;
}

/// The filter's half width at scale 1 (Pillow's `support`, torch's `interp_size / 2`).
[[nodiscard]] CONVEYOR_HD constexpr double filter_support(Resampling f) noexcept {
  switch (f) {
    case Resampling::bicubic:
    case Resampling::bicubic_no_antialias:
    case Resampling::pil_bicubic: return 2.0;
    case Resampling::nearest:
    case Resampling::nearest_exact:
    case Resampling::pil_nearest:
    case Resampling::pil_box: return 0.5;
    case Resampling::pil_lanczos: return 3.0;
    default: return 1.0;
  }
}

namespace detail {

inline constexpr double pi = 3.14159265358979323846;  // M_PI, which Pillow uses

[[nodiscard]] CONVEYOR_HD inline double sinc(double x) noexcept {
  if (x == 0.0) return 1.0;
  x = x * pi;
  return sin(x) / x;
}

}  // namespace detail

/// Filter `f` at `x` (source pixels from the centre, divided by the filter's scale). The nearest
/// filters take one tap of weight 1 (`tap_weight`) and never ask.
[[nodiscard]] CONVEYOR_HD inline double filter_value(Resampling f, double x) noexcept {
  switch (f) {
    case Resampling::bicubic:  // torch's aa_filter: cubic_convolution1 and 2, A = -0.5 (-0.75 without antialias)
    case Resampling::bicubic_no_antialias: {
      using namespace exact;
      const double A = f == Resampling::bicubic ? -0.5 : -0.75;  // A + 2, A + 3, 5A, 8A, 4A exact either way
      x = fabs(x);
      if (x < 1.0) return add(mul(mul(sub(mul(A + 2, x), A + 3), x), x), 1.0);  // ((A + 2) x - (A + 3)) x x + 1
      if (x < 2.0) return sub(mul(add(mul(sub(mul(A, x), 5 * A), x), 8 * A), x), 4 * A);  // ((A x - 5A) x + 8A) x - 4A
      return 0.0;
    }
    case Resampling::pil_box:
    case Resampling::pil_nearest: return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
    case Resampling::pil_hamming:
      if (x < 0.0) x = -x;
      if (x == 0.0) return 1.0;
      if (x >= 1.0) return 0.0;
      x = x * detail::pi;
      return sin(x) / x * (0.54f + 0.46f * cos(x));  // float constants, as Pillow writes them
    case Resampling::pil_bicubic: {
      using namespace exact;
      constexpr double a = -0.5;
      if (x < 0.0) x = -x;
      if (x < 1.0) return add(mul(mul(sub(mul(a + 2.0, x), a + 3.0), x), x), 1.0);  // ((a + 2) x - (a + 3)) x x + 1
      if (x < 2.0) return mul(sub(mul(add(mul(sub(x, 5.0), x), 8.0), x), 4.0), a);  // (((x - 5) x + 8) x - 4) a
      return 0.0;
    }
    case Resampling::pil_lanczos:
      return -3.0 <= x && x < 3.0 ? detail::sinc(x) * detail::sinc(x / 3) : 0.0;
    default:  // bilinear, bilinear_no_antialias, pil_bilinear: the triangle, written alike in both
      x = fabs(x);
      return x < 1.0 ? 1.0 - x : 0.0;
  }
}

}  // namespace ops
}  // namespace v0
}  // namespace conveyor
