#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <catch2/catch.hpp>

#include "support/images.hpp"

#include <cmath>
#include <cstring>
#include <vector>

using namespace conveyor;
using conveyor_test::random_image;

namespace {

/// A plan that crops box (left, top, bw, bh) of a packed w x h RGB image and resizes it to ow x oh.
ops::SamplePlan crop_plan(int w, int h, int left, int top, int bw, int bh, int ow, int oh, bool flip = false) {
  ops::SamplePlan p;
  p.out_width = ow;
  p.out_height = oh;
  p.x = {0.0, double(bw) / ow, 0, ow, left, left + bw};
  p.y = {0.0, double(bh) / oh, 0, oh, top, top + bh};
  p.src = {0, 3, std::int64_t{w} * 3, w, h};
  p.flip = flip;
  return p;
}

std::vector<std::uint8_t> run_u8(const std::vector<std::uint8_t>& img, const ops::SamplePlan& p,
                                 Layout layout = Layout::NHWC) {
  ops::OutputParams params;
  params.dtype = DType::u8;
  params.layout = layout;
  std::vector<std::uint8_t> out(std::size_t(p.out_width) * p.out_height * 3, 0xCD);
  ops::cpu::ResampleScratch s;
  ops::cpu::resample(img.data(), p, params, out.data(), s);
  return out;
}

/// torch's uint8 antialiased bilinear resize (aten's `UpSampleKernelAVXAntialias.h`, after
/// Pillow-SIMD) of the cropped box, written from its description: double weights per output
/// pixel, one precision per axis from the largest weight, int16 weights, a horizontal pass and a
/// vertical one, each `(sum + half) >> precision` clamped. An independent reference for the
/// weights, bounds and rounding of ops/resample.hpp.
std::vector<std::uint8_t> reference(const std::vector<std::uint8_t>& img, int w, int left, int top, int bw, int bh,
                                    int ow, int oh) {
  struct Axis { std::vector<int> lo, n; std::vector<std::vector<int>> k; int precision = 0; };
  auto axis = [](int in, int out) {
    Axis a;
    std::vector<std::vector<double>> kk;
    const double scale = double(in) / out, support = scale >= 1 ? scale : 1.0, inv = scale >= 1 ? 1 / scale : 1.0;
    double wt_max = 0;
    for (int o = 0; o < out; ++o) {
      const double center = scale * (o + 0.5);
      const int lo = std::max(int(center - support + 0.5), 0);
      const int n = std::min(int(center + support + 0.5), in) - lo;
      std::vector<double> k(n);
      double total = 0;
      for (int j = 0; j < n; ++j) {
        const double t = std::fabs((j + lo - center + 0.5) * inv);
        total += k[j] = t < 1 ? 1 - t : 0;
      }
      for (double& v : k) wt_max = std::max(wt_max, v /= total);
      a.lo.push_back(lo);
      a.n.push_back(n);
      kk.push_back(k);
    }
    while (a.precision < 22 && int(0.5 + wt_max * (1 << (a.precision + 1))) < (1 << 15)) ++a.precision;
    for (const auto& k : kk) {
      a.k.emplace_back();
      for (double v : k) a.k.back().push_back(int(0.5 + v * (1 << a.precision)));
    }
    return a;
  };
  const auto shift = [](long sum, int precision) { return std::uint8_t(std::clamp(sum >> precision, 0L, 255L)); };
  const Axis ax = axis(bw, ow), ay = axis(bh, oh);
  std::vector<std::uint8_t> mid(std::size_t(bh) * ow * 3);
  for (int y = 0; y < bh; ++y)
    for (int o = 0; o < ow; ++o)
      for (int c = 0; c < 3; ++c) {
        long acc = 1L << (ax.precision - 1);
        for (int j = 0; j < ax.n[o]; ++j) acc += ax.k[o][j] * img[((top + y) * std::size_t(w) + left + ax.lo[o] + j) * 3 + c];
        mid[(std::size_t(y) * ow + o) * 3 + c] = shift(acc, ax.precision);
      }
  std::vector<std::uint8_t> out(std::size_t(ow) * oh * 3);
  for (int o = 0; o < oh; ++o)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < 3; ++c) {
        long acc = 1L << (ay.precision - 1);
        for (int j = 0; j < ay.n[o]; ++j) acc += ay.k[o][j] * mid[((ay.lo[o] + j) * std::size_t(ow) + x) * 3 + c];
        out[(std::size_t(o) * ow + x) * 3 + c] = shift(acc, ay.precision);
      }
  return out;
}

}  // namespace

TEST_CASE("a 1:1 plan copies the crop box exactly", "[ops][resample]") {
  const int w = 57, h = 41;
  const auto img = random_image(w, h, 3, 21);
  const auto out = run_u8(img, crop_plan(w, h, 5, 7, 30, 20, 30, 20));
  for (int y = 0; y < 20; ++y)
    for (int x = 0; x < 30; ++x)
      for (int c = 0; c < 3; ++c) REQUIRE(out[(y * 30 + x) * 3 + c] == img[((y + 7) * w + x + 5) * 3 + c]);
}

TEST_CASE("resampling matches torch's fixed-point reference bit for bit", "[ops][resample]") {
  CounterRng rng(77, 0, 0, RngOp::user);
  for (int trial = 0; trial < 40; ++trial) {
    const int w = 20 + int(rng.below(400)), h = 20 + int(rng.below(300));
    const auto img = random_image(w, h, 3, 100 + trial);
    const int bw = 1 + int(rng.below(w)), bh = 1 + int(rng.below(h));
    const int left = int(rng.below(w - bw + 1)), top = int(rng.below(h - bh + 1));
    const int ow = 1 + int(rng.below(120)), oh = 1 + int(rng.below(120));
    INFO("image " << w << "x" << h << " box " << bw << "x" << bh << "+" << left << "+" << top << " -> " << ow << "x" << oh);
    const auto ours = run_u8(img, crop_plan(w, h, left, top, bw, bh, ow, oh));
    const auto ref = reference(img, w, left, top, bw, bh, ow, oh);
    CHECK(ours == ref);
  }
}

TEST_CASE("up to a source scale of 3.5, weights have 14 to 16 fraction bits", "[ops][resample]") {
  // The CUDA kernel's separable path (scales <= 3.5) scales its weights by 2^(16 - precision):
  // the first resized pixel's window is cut at the box's start, which keeps its largest weight at
  // 0.27 or more, so the precision never exceeds 16.
  for (int i = 1; i <= 700; ++i)
    for (int k = 0; k < 8; ++k)
      for (const int resized : {1, 2, 3, 50}) {
        ops::AxisPlan a;
        a.scale = 3.5 * i / 700;
        a.origin = k / 8.0;
        a.resized = resized;
        a.src_end = static_cast<std::int32_t>(std::ceil(a.origin + resized * a.scale));
        INFO("scale " << a.scale << " origin " << a.origin << " resized " << resized);
        const int p = ops::axis_precision(a);
        REQUIRE(p >= 14);
        REQUIRE(p <= 16);
      }
}

TEST_CASE("flip mirrors the output and layouts transpose it", "[ops][resample]") {
  const int w = 64, h = 48;
  const auto img = random_image(w, h, 3, 22);
  const auto plain = run_u8(img, crop_plan(w, h, 3, 2, 50, 40, 33, 29));
  const auto flipped = run_u8(img, crop_plan(w, h, 3, 2, 50, 40, 33, 29, true));
  const auto chw = run_u8(img, crop_plan(w, h, 3, 2, 50, 40, 33, 29), Layout::NCHW);
  const auto chw_flipped = run_u8(img, crop_plan(w, h, 3, 2, 50, 40, 33, 29, true), Layout::NCHW);
  for (int y = 0; y < 29; ++y)
    for (int x = 0; x < 33; ++x)
      for (int c = 0; c < 3; ++c) {
        REQUIRE(flipped[(y * 33 + x) * 3 + c] == plain[(y * 33 + (32 - x)) * 3 + c]);
        REQUIRE(chw[(c * 29 + y) * 33 + x] == plain[(y * 33 + x) * 3 + c]);
        REQUIRE(chw_flipped[(c * 29 + y) * 33 + x] == plain[(y * 33 + (32 - x)) * 3 + c]);
      }
}

TEST_CASE("float outputs are the u8 result normalised by one fmaf then converted", "[ops][resample]") {
  const int w = 90, h = 70;
  const auto img = random_image(w, h, 3, 23);
  ImageAugment aug{.normalize = Normalize::imagenet()};
  for (const Layout layout : {Layout::NCHW, Layout::NHWC}) {
    for (const bool flip : {false, true}) {
      for (DType t : {DType::f32, DType::f16, DType::bf16}) {
        CAPTURE(layout == Layout::NCHW, flip, int(t));
        const auto plan = crop_plan(w, h, 0, 0, w, h, 32, 24, flip);
        const auto u8 = run_u8(img, plan, layout);
        aug.dtype = t;
        aug.layout = layout;
        const ops::OutputParams params = aug.output_params();
        std::vector<std::byte> out(u8.size() * dtype_size(t));
        ops::cpu::ResampleScratch s;
        ops::cpu::resample(img.data(), plan, params, out.data(), s);
        for (std::size_t i = 0; i < u8.size(); ++i) {
          const int c = static_cast<int>(layout == Layout::NCHW ? i / (32 * 24) : i % 3);
          const float expect = std::fmaf(float(u8[i]), params.scale[c], params.bias[c]);
          CHECK(std::fabs(expect - ((float(u8[i]) / 255.0f - aug.normalize->mean[c]) / aug.normalize->std[c])) < 1e-5f);
          if (t == DType::f32) {
            float got;
            std::memcpy(&got, out.data() + i * 4, 4);
            REQUIRE(got == expect);
          } else {
            std::uint16_t got;
            std::memcpy(&got, out.data() + i * 2, 2);
            REQUIRE(got == (t == DType::f16 ? ops::to_f16_bits(expect) : ops::to_bf16_bits(expect)));
          }
        }
      }
    }
  }
}

TEST_CASE("CenterCrop pads an image smaller than the crop with zeros", "[ops][resample]") {
  const int w = 10, h = 6;
  const auto img = random_image(w, h, 3, 24);
  const ImageAugment aug{.crop = CenterCrop{16}, .dtype = DType::u8, .layout = Layout::NHWC};
  ops::SamplePlan p = aug.plan({}, w, h);
  p.src = {0, 3, w * 3, w, h};
  const auto out = run_u8(img, p);
  // torchvision pads (16 - 10) // 2 = 3 columns left and (16 - 6) // 2 = 5 rows on top.
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x)
      for (int c = 0; c < 3; ++c) {
        const bool inside = x >= 3 && x < 13 && y >= 5 && y < 11;
        REQUIRE(out[(y * 16 + x) * 3 + c] == (inside ? img[((y - 5) * w + x - 3) * 3 + c] : 0));
      }
}

TEST_CASE("every Exif orientation view shows the upright image", "[ops][resample][exif]") {
  const int W = 13, H = 7;  // the upright picture
  const auto up = random_image(W, H, 3, 25);
  auto U = [&](int x, int y, int c) { return up[(y * W + x) * 3 + c]; };
  for (int o = 1; o <= 8; ++o) {
    INFO("orientation " << o);
    const bool swap = o >= 5;
    const int sw = swap ? H : W, sh = swap ? W : H;  // stored size
    std::vector<std::uint8_t> stored(std::size_t(sw) * sh * 3);
    for (int b = 0; b < sh; ++b)
      for (int a = 0; a < sw; ++a)
        for (int c = 0; c < 3; ++c) {
          int x = a, y = b;  // stored (a, b) holds upright (x, y)
          switch (o) {
            case 2: x = W - 1 - a; break;
            case 3: x = W - 1 - a; y = H - 1 - b; break;
            case 4: y = H - 1 - b; break;
            case 5: x = b; y = a; break;
            case 6: x = W - 1 - b; y = a; break;
            case 7: x = W - 1 - b; y = H - 1 - a; break;
            case 8: x = b; y = H - 1 - a; break;
            default: break;
          }
          stored[(b * sw + a) * 3 + c] = U(x, y, c);
        }
    const ops::SourceView v = detail::oriented_view(o, sw, sh, sw * 3);
    REQUIRE(v.width == W);
    REQUIRE(v.height == H);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        for (int c = 0; c < 3; ++c) REQUIRE(stored[v.offset + x * v.x_stride + y * v.y_stride + c] == U(x, y, c));
  }
}
