#pragma once
/// @file
/// torchvision.transforms.v2.functional.gaussian_blur on uint8 (GaussianBlur), equal to torch's
/// CPU result with its AVX-512 kernels (what x86 servers run), bit for bit.
///
/// torchvision builds a 1-D kernel per axis, `softmax(-(linspace(-lim, lim, k) / sigma)^2)` with
/// `lim = (k - 1) / (2 sqrt 2)`, in float32; the 2-D kernel is their outer product; the image is
/// reflect-padded and convolved with the full 2-D kernel (conv2d, oneDNN's depthwise kernel: a
/// chain of fused multiply-adds over the rows of the kernel, each row left to right), then
/// rounded half to even. The kernel's float32 values are torch's own: its linspace (fused
/// multiply-adds from either end), Sleef's `expf` (`expf_u10`, reproduced here operation for
/// operation) inside the softmax, and the softmax's sum in torch's order (one by one below 16
/// values; above, 16 lanes, then halves added pairwise). torch on AVX2-only machines sums 8 lanes
/// and can give a kernel a bit apart. The kernel's outer rows and columns whose weight underflows
/// to zero are skipped: adding 0 to a non-negative sum leaves it unchanged.

#include <conveyor/config.hpp>
#include <conveyor/ops/convert.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>
#include <math.h>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// The largest kernel size gaussian_blur takes.
inline constexpr int max_blur_kernel = 63;

namespace detail {

/// Sleef's single-precision `expf` (xexpf, 1 ULP), as torch's vectorised `exp` runs it with FMA.
[[nodiscard]] CONVEYOR_HD inline float sleef_expf(float d) noexcept {
  using namespace exact;
  if (!(d >= -104.0f)) return 0.0f;  // Sleef's underflow to zero (and no int conversion out of range)
  // Sleef's constants: the float literals as written there, the double ones rounded to float
  const float r_ln2 = 1.442695040888963407359924681001892137426645954152985934135449406931f;
  const float l2u = 0.693145751953125f, l2l = 1.428606765330187045e-06f;
  const int q = static_cast<int>(rintf(mul(d, r_ln2)));
  const float qf = static_cast<float>(q);
  float s = fma(qf, -l2u, d);
  s = fma(qf, -l2l, s);
  float u = static_cast<float>(0.000198527617612853646278381);
  u = fma(u, s, static_cast<float>(0.00139304355252534151077271));
  u = fma(u, s, static_cast<float>(0.00833336077630519866943359));
  u = fma(u, s, static_cast<float>(0.0416664853692054748535156));
  u = fma(u, s, static_cast<float>(0.166666671633720397949219));
  u = fma(u, s, 0.5f);
  u = add(1.0f, fma(mul(s, s), u, s));
  // ldexp in two halves, as Sleef's vldexp2 does (each a power of two built from its exponent bits)
  const int half = q >> 1;
  u = mul(u, bits_float(static_cast<std::uint32_t>(half + 127) << 23));
  return mul(u, bits_float(static_cast<std::uint32_t>(q - half + 127) << 23));
}

/// torch's float32 `softmax(-(linspace(-lim, lim, k) / sigma)^2)` into `w[0, k)`.
CONVEYOR_HD inline void gaussian_kernel(int k, float lim, float sigma, float* w) noexcept {
  using namespace exact;
  // linspace: from the start below the middle, from the end from it on
  const float start = -lim, end = lim;
  const float step = div(sub(end, start), static_cast<float>(k - 1 > 0 ? k - 1 : 1));
  float top = -INFINITY;
  for (int i = 0; i < k; ++i) {
    const float x = k == 1 ? start
                    : i < k / 2 ? fma(step, static_cast<float>(i), start)
                                : fma(-step, static_cast<float>(k - 1 - i), end);
    const float t = div(x, sigma);
    w[i] = -mul(t, t);
    top = w[i] > top ? w[i] : top;
  }
  for (int i = 0; i < k; ++i) w[i] = sleef_expf(sub(w[i], top));
  // the sum in torch's vec::reduce_all order for 16-lane vectors
  float sum;
  if (k < 16) {
    sum = w[0];
    for (int i = 1; i < k; ++i) sum = add(sum, w[i]);
  } else {
    float lanes[16];
    for (int l = 0; l < 16; ++l) lanes[l] = w[l];
    int d = 16;
    for (; d + 16 <= k; d += 16)
      for (int l = 0; l < 16; ++l) lanes[l] = add(lanes[l], w[d + l]);
    for (int l = 0; d + l < k; ++l) lanes[l] = add(lanes[l], w[d + l]);
    for (int width = 8; width >= 1; width /= 2)
      for (int l = 0; l < width; ++l) lanes[l] = add(lanes[l], lanes[l + width]);
    sum = lanes[0];
  }
  const float inv = div(1.0f, sum);
  for (int i = 0; i < k; ++i) w[i] = mul(w[i], inv);
}

/// Reflect padding's source index of `i` on an axis of `n` values (valid for -n < i < 2n - 1).
[[nodiscard]] CONVEYOR_HD inline int reflect(int i, int n) noexcept {
  return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
}

}  // namespace detail

struct GaussianBlur {
  static constexpr std::int32_t code = 12;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "gaussian_blur";
  // i[0], i[1]: kernel width and height; f[0], f[1]: float32(sigma) across and down;
  // f[2], f[3]: float32(lim) across and down
  struct Prepared {
    float x[max_blur_kernel];
    float y[max_blur_kernel];
    int x_first, y_first;  ///< the first tap with a non-zero weight (the kernels are symmetric)
  };
  CONVEYOR_HD static void prepare(const PixelOp& op, int, int, Prepared& p) noexcept {
    detail::gaussian_kernel(op.i[0], op.f[2], op.f[0], p.x);
    detail::gaussian_kernel(op.i[1], op.f[3], op.f[1], p.y);
    p.x_first = 0;
    while (p.x_first < op.i[0] / 2 && p.x[p.x_first] == 0.0f) ++p.x_first;
    p.y_first = 0;
    while (p.y_first < op.i[1] / 2 && p.y[p.y_first] == 0.0f) ++p.y_first;
  }
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared& p, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    const int kx = op.i[0], ky = op.i[1], rx = kx / 2, ry = ky / 2;
    const int j0 = p.x_first, j1 = kx - p.x_first;
    const bool inside = x - rx + j0 >= 0 && x - rx + j1 <= width;  // no tap of the row needs reflecting
    float acc[3] = {0.0f, 0.0f, 0.0f};
    for (int i = p.y_first; i < ky - p.y_first; ++i) {
      const std::uint8_t* line = src + std::int64_t{detail::reflect(y + i - ry, height)} * width * 3;
      const float wy = p.y[i];
      for (int j = j0; j < j1; ++j) {
        const float w = exact::mul(wy, p.x[j]);
        const std::uint8_t* px = line + (inside ? x + j - rx : detail::reflect(x + j - rx, width)) * 3;
        for (int c = 0; c < 3; ++c) acc[c] = exact::fma(to_float(px[c]), w, acc[c]);
      }
    }
    for (int c = 0; c < 3; ++c) rgb[c] = round_u8(acc[c]);
  }
  /// Kernel sizes the prepared weights hold, and reflect padding: the kernel's half size below the
  /// image's (`reflect` is valid there only; beyond, torchvision refuses the image too).
  static void check(const PixelOp& op, int width, int height) {
    for (int k : {op.i[0], op.i[1]})
      detail::expect(k >= 1 && k <= max_blur_kernel && k % 2 == 1, name, "kernel sizes must be odd and in [1, 63]", k);
    detail::expect(op.i[0] / 2 < width && op.i[1] / 2 < height, name,
                   "the kernel's half size must be less than the image's width and height (reflect padding)",
                   op.i[0] / 2 < width ? op.i[1] : op.i[0]);
  }
};

/// Whether torch's float32 kernel of `kernel_size` taps at `sigma` is a number at every tap: a
/// sigma so small that every tap's `(x / sigma)^2` overflows (0 in float32, or below about 1e-26
/// where the middle tap is not exactly 0) makes the softmax 0 / 0, which torchvision turns into
/// undefined pixels. Smaller sigmas only make more taps overflow.
[[nodiscard]] inline bool gaussian_kernel_finite(int kernel_size, double sigma) {
  float w[max_blur_kernel];
  detail::gaussian_kernel(kernel_size, static_cast<float>((kernel_size - 1) / (2.0 * std::sqrt(2.0))),
                          static_cast<float>(sigma), w);
  for (int i = 0; i < kernel_size; ++i)
    if (!std::isfinite(w[i])) return false;
  return true;
}

/// The record of `gaussian_blur(image, kernel_size=[kernel_width, kernel_height], sigma=[sigma_x, sigma_y])`.
/// @throws ConfigError unless the kernel sizes are odd, in [1, 63], and the sigmas finite, > 0 and
/// large enough for a kernel of numbers (`gaussian_kernel_finite`).
[[nodiscard]] inline PixelOp gaussian_blur(int kernel_width, int kernel_height, double sigma_x, double sigma_y) {
  for (int k : {kernel_width, kernel_height})
    detail::expect(k >= 1 && k <= max_blur_kernel && k % 2 == 1, GaussianBlur::name,
                   "kernel sizes must be odd and in [1, 63]", k);
  for (double s : {sigma_x, sigma_y})
    detail::expect(std::isfinite(s) && s > 0.0, GaussianBlur::name, "sigma must be finite and > 0", s);
  detail::expect(gaussian_kernel_finite(kernel_width, sigma_x) && gaussian_kernel_finite(kernel_height, sigma_y),
                 GaussianBlur::name, "sigma is too small for a kernel of numbers in float32",
                 gaussian_kernel_finite(kernel_width, sigma_x) ? sigma_y : sigma_x);
  PixelOp op{.code = GaussianBlur::code};
  op.i[0] = kernel_width;
  op.i[1] = kernel_height;
  op.f[0] = static_cast<float>(sigma_x);
  op.f[1] = static_cast<float>(sigma_y);
  op.f[2] = static_cast<float>((kernel_width - 1) / (2.0 * std::sqrt(2.0)));
  op.f[3] = static_cast<float>((kernel_height - 1) / (2.0 * std::sqrt(2.0)));
  return op;
}

/// torchvision's default sigma for a kernel size: 0.15 k + 0.35.
[[nodiscard]] inline double gaussian_blur_default_sigma(int kernel_size) noexcept { return kernel_size * 0.15 + 0.35; }

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor
