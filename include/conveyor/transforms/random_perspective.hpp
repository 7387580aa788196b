#pragma once
/// @file
/// torchvision.transforms.v2.RandomPerspective(distortion_scale=0.5, p=0.5,
/// interpolation=BILINEAR, fill=0): with probability p (skipped when `torch.rand(1) >= p`),
/// `perspective(image, startpoints, endpoints, interpolation, fill)` from the image's corners to
/// four drawn as v2's `make_params` (_geometry.py) and v1's `get_params` draw them: for
/// `bound = int(distortion_scale * (size // 2)) + 1` on each axis, `torch.randint` in this order:
/// top-left x in [0, bound_w), y in [0, bound_h); top-right x in [w - bound_w, w), y in [0, bound_h);
/// bottom-right x in [w - bound_w, w), y in [h - bound_h, h); bottom-left x in [0, bound_w), y in
/// [h - bound_h, h). NEAREST and BILINEAR; on a PIL image Pillow's `Image.transform`.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/perspective.hpp>
#include <conveyor/ops/pixel/pil_perspective.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct RandomPerspective {
  static constexpr const char* name = "RandomPerspective";
  static constexpr const char* summary =
      "With probability `p`, the image's corners moved inwards by up to `distortion_scale` of half its size each "
      "and the image mapped onto them.";
  static constexpr FieldName fields[] = {"distortion_scale", "p", "interpolation", "fill"};
  double distortion_scale = 0.5;  ///< in [0, 1]
  double p = 0.5;
  ops::pixel::Interpolation interpolation = ops::pixel::Interpolation::bilinear;
  Fill fill = 0.0;

  void validate() const {
    detail::expect_transform(distortion_scale >= 0.0 && distortion_scale <= 1.0, name,
                             "distortion_scale should be between 0 and 1, got " + detail::shown(distortion_scale));
    detail::expect_probability(name, p);
    detail::expect_fill(name, fill);
  }
  void validate_pil() const {}  // ops::pixel::pil::perspective: Image.transform
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    const std::int64_t w = d.width(), h = d.height();
    const auto bound = [&](std::int64_t size) {
      return static_cast<std::int64_t>(distortion_scale * static_cast<double>(size / 2)) + 1;
    };
    const std::int64_t bw = bound(w), bh = bound(h);
    const auto randint = [&](std::int64_t lo, std::int64_t hi) {
      return lo + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(hi - lo)));
    };
    ops::pixel::Corners end{};
    end[0] = {randint(0, bw), randint(0, bh)};
    end[1] = {randint(w - bw, w), randint(0, bh)};
    end[2] = {randint(w - bw, w), randint(h - bh, h)};
    end[3] = {randint(0, bw), randint(h - bh, h)};
    const std::array<float, 8> c = ops::pixel::perspective_coefficients(ops::pixel::image_corners(d.width(), d.height()), end);
    d.add(d.pil(position) ? ops::pixel::pil::perspective(c, interpolation, fill.values(), d.width(), d.height())
                          : ops::pixel::perspective(c, interpolation, fill.values(), d.width(), d.height()));
    if (d.describing()) {  // as v2's transform calls it: with the coefficients it solved for
      DrawnCall call{"perspective", {DrawnArg::none("startpoints"), DrawnArg::none("endpoints"),
                                     DrawnArg::list("coefficients", std::vector<double>(c.begin(), c.end()))}};
      detail::describe_sampling(call, interpolation, fill, std::nullopt);
      d.describe(std::move(call));
    }
  }
};

}  // namespace v0
}  // namespace conveyor
