#pragma once
/// @file
/// The geometry of a sample's plan: the crop box (RandomResizedCrop's draw, or Resize and then
/// CenterCrop or RandomCrop's draw), the output size and the horizontal flip, from the (oriented)
/// image size alone; and the torchvision calls they stand for.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// Where FiveCrop's box starts in a `width` x `height` image, {left, top}: its corner, or
/// center_crop's offset; of a mirror image, the box whose mirror that crop is.
/// @throws ConfigError where the box is larger than the image (torchvision's five_crop refuses it).
[[nodiscard]] inline std::array<int, 2> five_crop_place(const FiveCrop& c, int width, int height) {
  const int cw = c.size.width, ch = c.size.height;
  if (cw > width || ch > height)
    throw ConfigError("FiveCrop: requested crop size (" + std::to_string(ch) + ", " + std::to_string(cw) +
                      ") is bigger than input size (" + std::to_string(height) + ", " + std::to_string(width) + ")");
  using P = FiveCrop::Part;
  int left = c.part == P::top_right || c.part == P::bottom_right ? width - cw : 0;
  int top = c.part == P::bottom_left || c.part == P::bottom_right ? height - ch : 0;
  if (c.part == P::center) left = ops::center_crop_offset(width, cw), top = ops::center_crop_offset(height, ch);
  if (c.of == FiveCrop::Of::horizontal_flip) left = width - cw - left;
  if (c.of == FiveCrop::Of::vertical_flip) top = height - ch - top;
  return {left, top};
}

/// The plan of sample `ctx.index` for an (oriented) source of `width` x `height` pixels: `crop`
/// (after `resize`, for a `CenterCrop`, a `RandomCrop` or a `FiveCrop`) and `flip`, each drawn from the sample's
/// own stream. The source view is left for the caller, who knows where the pixels are.
/// @throws ConfigError when the crop box is empty (a ratio too extreme for this image: torchvision
/// cannot resize it either), a RandomCrop larger than the padded image, or padded deeper than its
/// padding_mode mirrors (torchvision refuses both);
/// DecodeError when `resize` makes an image of more than `max_pixels` (torchvision would make it
/// whole; conveyor refuses it as it refuses a decompression bomb).
[[nodiscard]] inline ops::SamplePlan plan_geometry(const Crop& crop,
                                                   const std::optional<Resize>& resize, const HorizontalFlip& flip,
                                                   const SampleContext& ctx, int width, int height,
                                                   std::uint64_t max_pixels) {
  ops::SamplePlan p;
  const Size size = std::visit([](const auto& c) { return c.size; }, crop);
  p.out_width = size.width;
  p.out_height = size.height;
  if (const auto* rrc = std::get_if<RandomResizedCrop>(&crop)) {
    CounterRng rng(ctx.seed, ctx.epoch, ctx.index, RngOp::crop);
    const ops::CropBox box = ops::random_resized_crop_box(*rrc, width, height, rng);
    if (box.width <= 0 || box.height <= 0)
      throw ConfigError("RandomResizedCrop: ratio (" + std::to_string(rrc->ratio[0]) + ", " +
                        std::to_string(rrc->ratio[1]) + ") leaves an empty crop box of this " + std::to_string(width) +
                        " x " + std::to_string(height) + " image (" + std::to_string(box.width) + " x " +
                        std::to_string(box.height) + ")");
    p.x = {0.0, double(box.width) / size.width, 0, size.width, box.left, box.left + box.width};
    p.y = {0.0, double(box.height) / size.height, 0, size.height, box.top, box.top + box.height};
  } else {
    int rw = width, rh = height;
    if (resize) {
      const auto wh = ops::resized_size(*resize, width, height);
      if (wh[0] == 0 || wh[1] == 0 || std::uint64_t(wh[0]) * std::uint64_t(wh[1]) > max_pixels)
        throw DecodeError("Resize to " + std::to_string(wh[0]) + " x " + std::to_string(wh[1]) + " of this " +
                          std::to_string(width) + " x " + std::to_string(height) +
                          " image makes more than max_image_pixels (" + std::to_string(max_pixels) +
                          ") pixels, or more than an int holds (0)");
      rw = wh[0];
      rh = wh[1];
    }
    const auto* center = std::get_if<CenterCrop>(&crop);
    const bool truncated = center && center->truncated_offset;
    int offset_x = ops::center_crop_offset(rw, size.width, truncated),
        offset_y = ops::center_crop_offset(rh, size.height, truncated);
    if (const auto* rc = std::get_if<RandomCrop>(&crop)) {
      // the box in the padded image, less the padding before it: where it starts in the image's
      // own pixels (negative in the padding, which is zeros as CenterCrop's is)
      CounterRng rng(ctx.seed, ctx.epoch, ctx.index, RngOp::crop);
      const ops::PaddedCrop c = ops::random_crop_box(*rc, rw, rh, rng);
      if (!c.fits)
        throw ConfigError("RandomCrop: required crop size (" + std::to_string(size.height) + ", " +
                          std::to_string(size.width) + ") is larger than the padded input image size (" +
                          std::to_string(c.padded_height) + ", " + std::to_string(c.padded_width) + ")");
      if (std::max(c.padding[0], c.padding[2]) > ops::max_padding(rc->padding_mode, rw) ||
          std::max(c.padding[1], c.padding[3]) > ops::max_padding(rc->padding_mode, rh))
        throw ConfigError("RandomCrop: padding_mode='" +
                          std::string(ops::enum_names(rc->padding_mode)[std::size_t(rc->padding_mode)]) +
                          "' mirrors an image once: padding (" + std::to_string(c.padding[0]) + ", " +
                          std::to_string(c.padding[1]) + ", " + std::to_string(c.padding[2]) + ", " +
                          std::to_string(c.padding[3]) + ") is deeper than this " + std::to_string(rw) + " x " +
                          std::to_string(rh) + " image allows (torch refuses it on tensors)");
      offset_x = static_cast<int>(c.left - c.padding[0]);
      offset_y = static_cast<int>(c.top - c.padding[1]);
    } else if (const auto* five = std::get_if<FiveCrop>(&crop)) {
      const std::array<int, 2> at = five_crop_place(*five, rw, rh);
      offset_x = at[0];
      offset_y = at[1];
      p.flip = five->of == FiveCrop::Of::horizontal_flip;
      p.flip_y = five->of == FiveCrop::Of::vertical_flip;
    }
    p.x = {0.0, double(width) / rw, offset_x, rw, 0, width};
    p.y = {0.0, double(height) / rh, offset_y, rh, 0, height};
    if (const auto* rc = std::get_if<RandomCrop>(&crop)) p.x.padding = p.y.padding = rc->padding_mode;
  }
  if (flip.p > 0) {
    CounterRng rng(ctx.seed, ctx.epoch, ctx.index, RngOp::flip);
    p.flip ^= rng.uniform() < flip.p ? 1 : 0;  // a flipped image's flip (TenCrop's) undone
  }
  return p;
}

/// The torchvision functional calls `plan_geometry` stands for, for the same sample and image:
/// `resized_crop` with the drawn box, or `resize` and `center_crop`, or `resize`, `pad` and `crop`
/// (each where RandomCrop needs it), or `resize` and FiveCrop's `crop` or `center_crop` (after
/// the flip of TenCrop's second five); `horizontal_flip` when drawn.
inline void describe_geometry(const Crop& crop, const std::optional<Resize>& resize,
                              const HorizontalFlip& flip, const SampleContext& ctx, int width, int height,
                              std::uint64_t max_pixels, std::vector<DrawnCall>& calls) {
  if (const auto* rrc = std::get_if<RandomResizedCrop>(&crop)) {
    CounterRng rng(ctx.seed, ctx.epoch, ctx.index, RngOp::crop);
    const ops::CropBox box = ops::random_resized_crop_box(*rrc, width, height, rng);
    calls.push_back({"resized_crop",
                     {DrawnArg::integer("top", box.top), DrawnArg::integer("left", box.left),
                      DrawnArg::integer("height", box.height), DrawnArg::integer("width", box.width),
                      DrawnArg::integers("size", {rrc->size.height, rrc->size.width})}});
  } else {
    if (resize) {
      DrawnCall call{"resize", {DrawnArg::none("size")}};
      if (resize->size) {
        std::vector<std::int64_t> sizes{resize->size->height};
        if (resize->size->pair) sizes.push_back(resize->size->width);
        call.args[0] = DrawnArg::integers("size", std::move(sizes));
      }
      if (resize->max_size) call.args.push_back(DrawnArg::integer("max_size", *resize->max_size));
      calls.push_back(std::move(call));
    }
    if (const auto* rc = std::get_if<RandomCrop>(&crop)) {
      const auto [rw, rh] = resize ? ops::resized_size(*resize, width, height) : std::array<int, 2>{width, height};
      CounterRng rng(ctx.seed, ctx.epoch, ctx.index, RngOp::crop);
      const ops::PaddedCrop c = ops::random_crop_box(*rc, rw, rh, rng);
      const auto& pad = c.padding;
      if (pad[0] || pad[1] || pad[2] || pad[3])
        calls.push_back({"pad",
                         {DrawnArg::integers("padding", {pad[0], pad[1], pad[2], pad[3]}),
                          DrawnArg::text("padding_mode", ops::enum_names(rc->padding_mode)[std::size_t(rc->padding_mode)])}});
      if (c.padded_height > rc->size.height || c.padded_width > rc->size.width)
        calls.push_back({"crop",
                         {DrawnArg::integer("top", c.top), DrawnArg::integer("left", c.left),
                          DrawnArg::integer("height", rc->size.height), DrawnArg::integer("width", rc->size.width)}});
    } else if (const auto* five = std::get_if<FiveCrop>(&crop)) {
      // TenCrop's second five: the flip, then the crop of the flipped image
      if (five->of == FiveCrop::Of::horizontal_flip) calls.push_back({"horizontal_flip"});
      if (five->of == FiveCrop::Of::vertical_flip) calls.push_back({"vertical_flip"});
      const Size size = five->size;
      if (five->part == FiveCrop::Part::center) {
        calls.push_back({"center_crop", {DrawnArg::integers("output_size", {size.height, size.width})}});
      } else {
        const auto [rw, rh] = resize ? ops::resized_size(*resize, width, height) : std::array<int, 2>{width, height};
        const auto [left, top] = five_crop_place({five->size, five->part, FiveCrop::Of::image}, rw, rh);
        calls.push_back({"crop",
                         {DrawnArg::integer("top", top), DrawnArg::integer("left", left),
                          DrawnArg::integer("height", size.height), DrawnArg::integer("width", size.width)}});
      }
    } else {
      const Size size = std::get<CenterCrop>(crop).size;
      calls.push_back({"center_crop", {DrawnArg::integers("output_size", {size.height, size.width})}});
    }
  }
  const auto* five = std::get_if<FiveCrop>(&crop);
  const bool mirrored = five && five->of == FiveCrop::Of::horizontal_flip;  // its flip is described above
  if (plan_geometry(crop, resize, flip, ctx, width, height, max_pixels).flip != mirrored)
    calls.push_back({"horizontal_flip"});
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor
