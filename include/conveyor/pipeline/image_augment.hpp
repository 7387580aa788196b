#pragma once
/// @file
/// `ImageAugment`: the built-in transform from JPEG bytes to a normalised image tensor.

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/io/jpeg.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/resample.hpp>
#include <conveyor/pipeline/detail/arena.hpp>
#include <conveyor/pipeline/detail/nvtx.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <variant>

namespace conveyor {
inline namespace v0 {

/// Decode, crop (random or centred), resize, flip, normalise and convert one JPEG, with
/// torchvision's semantics. Every random decision comes from the sample's own counter-based
/// streams (seed, epoch, index, op).
///
/// ```
/// conveyor::ImageAugment train{.crop = conveyor::RandomResizedCrop{.size = 224},
///                              .flip = {.p = 0.5}, .normalize = conveyor::Normalize::imagenet(),
///                              .dtype = conveyor::DType::bf16};
/// conveyor::ImageAugment eval{.crop = conveyor::CenterCrop{224}, .resize = conveyor::Resize{256}};
/// ```
struct ImageAugment {
  /// Which crop: random-resized for training, centred for evaluation.
  std::variant<RandomResizedCrop, CenterCrop> crop = RandomResizedCrop{};
  /// Resize (shorter side) before a `CenterCrop`; not allowed with `RandomResizedCrop`.
  std::optional<Resize> resize{};
  /// Horizontal flip probability (0: never).
  HorizontalFlip flip{.p = 0.0};
  /// Normalisation for float outputs; without it floats are pixels / 255. Not allowed with u8.
  std::optional<Normalize> normalize{};
  DType dtype = DType::f32;
  Layout layout = Layout::NCHW;
  /// Apply the Exif orientation before cropping (DALI's default). Off by default, as
  /// torchvision's ImageFolder ignores it.
  bool exif_orientation = false;
  /// Strictness and the decompression-bomb guard.
  DecodeOptions decode{};

  /// RandomResizedCrop(size) + flip(0.5) + ImageNet normalisation, as f32 NCHW.
  [[nodiscard]] static ImageAugment train(int size = 224) {
    return {.crop = RandomResizedCrop{.size = size}, .flip = {.p = 0.5}, .normalize = Normalize::imagenet()};
  }
  /// Resize(resize) + CenterCrop(crop) + ImageNet normalisation, as f32 NCHW.
  [[nodiscard]] static ImageAugment eval(int resize = 256, int crop = 224) {
    return {.crop = CenterCrop{.size = crop}, .resize = Resize{.size = resize}, .normalize = Normalize::imagenet()};
  }

  /// Output side length.
  [[nodiscard]] int output_size() const noexcept {
    return std::visit([](const auto& c) { return c.size; }, crop);
  }

  /// @throws ConfigError naming the offending option.
  void validate() const {
    const int size = output_size();
    if (size <= 0) throw ConfigError("ImageAugment: crop size must be > 0, got " + std::to_string(size));
    if (const auto* rrc = std::get_if<RandomResizedCrop>(&crop)) {
      if (resize) throw ConfigError("ImageAugment: resize applies before CenterCrop only, not RandomResizedCrop");
      if (!(rrc->scale[0] > 0 && rrc->scale[0] <= rrc->scale[1] && rrc->scale[1] <= 1))
        throw ConfigError("ImageAugment: RandomResizedCrop scale must satisfy 0 < lo <= hi <= 1, got (" +
                          std::to_string(rrc->scale[0]) + ", " + std::to_string(rrc->scale[1]) + ")");
      if (!(rrc->ratio[0] > 0 && rrc->ratio[0] <= rrc->ratio[1]))
        throw ConfigError("ImageAugment: RandomResizedCrop ratio must satisfy 0 < lo <= hi, got (" +
                          std::to_string(rrc->ratio[0]) + ", " + std::to_string(rrc->ratio[1]) + ")");
    }
    if (resize && resize->size <= 0)
      throw ConfigError("ImageAugment: resize size must be > 0, got " + std::to_string(resize->size));
    if (!(flip.p >= 0 && flip.p <= 1)) throw ConfigError("ImageAugment: flip.p must be in [0, 1], got " + std::to_string(flip.p));
    if (dtype == DType::i64) throw ConfigError("ImageAugment: dtype must be u8, f32, f16 or bf16");
    if (dtype == DType::u8 && normalize) throw ConfigError("ImageAugment: u8 output cannot be normalized");
    if (normalize)
      for (float s : normalize->std)
        if (!(s > 0)) throw ConfigError("ImageAugment: normalize std must be > 0, got " + std::to_string(s));
  }

  /// Shape of one output image: {3, size, size} (NCHW) or {size, size, 3} (NHWC).
  [[nodiscard]] SampleSpec sample_spec() const noexcept {
    const std::int64_t s = output_size();
    return layout == Layout::NCHW ? SampleSpec{dtype, 3, {3, s, s}} : SampleSpec{dtype, 3, {s, s, 3}};
  }

  /// Per-channel scale and bias of the output conversion.
  [[nodiscard]] ops::OutputParams output_params() const noexcept {
    ops::OutputParams p;
    p.dtype = dtype;
    p.layout = layout;
    const Normalize n = normalize.value_or(Normalize{});
    for (int c = 0; c < 3; ++c) {
      p.scale[c] = 1.0f / (255.0f * n.std[c]);
      p.bias[c] = -n.mean[c] / n.std[c];
    }
    return p;
  }

  /// The plan of sample `ctx.index` for an (oriented) source of `width` x `height` pixels. The
  /// source view is left for the caller, who knows where the pixels are.
  [[nodiscard]] ops::SamplePlan plan(const SampleContext& ctx, int width, int height) const {
    ops::SamplePlan p;
    const int size = output_size();
    p.out_width = p.out_height = size;
    if (const auto* rrc = std::get_if<RandomResizedCrop>(&crop)) {
      CounterRng rng(ctx.seed, ctx.epoch, ctx.index, RngOp::crop);
      const ops::CropBox box = ops::random_resized_crop_box(*rrc, width, height, rng);
      p.x = {0.0f, float(box.width) / float(size), 0, size, box.left, box.left + box.width};
      p.y = {0.0f, float(box.height) / float(size), 0, size, box.top, box.top + box.height};
    } else {
      const int crop_size = std::get<CenterCrop>(crop).size;
      int rw = width, rh = height;
      if (resize) {
        const auto wh = ops::resize_shorter_side(resize->size, width, height);
        rw = wh[0];
        rh = wh[1];
      }
      p.x = {0.0f, float(width) / float(rw), ops::center_crop_offset(rw, crop_size), rw, 0, width};
      p.y = {0.0f, float(height) / float(rh), ops::center_crop_offset(rh, crop_size), rh, 0, height};
    }
    if (flip.p > 0) {
      CounterRng rng(ctx.seed, ctx.epoch, ctx.index, RngOp::flip);
      p.flip = rng.uniform() < flip.p ? 1 : 0;
    }
    return p;
  }

  /// Per-worker state: a decoder and buffers, reused for every sample.
  struct Workspace {
    JpegDecoder decoder;
    std::vector<std::uint8_t> pixels;
    ops::cpu::ResampleScratch scratch;
  };
  [[nodiscard]] Workspace make_workspace() const { return Workspace{JpegDecoder(decode), {}, {}}; }

  /// Decodes `jpeg` and writes the augmented image to `out` (`sample_spec().bytes()` bytes).
  /// @throws DecodeError when the bytes are not a decodable JPEG.
  void apply(const SampleContext& ctx, std::span<const std::byte> jpeg, std::span<std::byte> out, Workspace& ws) const {
    const ops::SamplePlan p = decode_planned(ctx, jpeg, ws);
    StageTimer timer(ctx, Stage::augment);
    detail::NvtxRange range("augment");
    ops::cpu::resample(ws.pixels.data(), p, output_params(), out.data(), ws.scratch);
  }

  /// Source scale above which a sample is finished on the CPU instead of by a device: the kernel
  /// keeps each output pixel's filter taps in shared memory, sized for this.
  static constexpr float max_device_scale = 32.0f;

  /// The host half of the device path: decodes `jpeg`, copies the pixels the plan reads (the crop
  /// box, upright) into `area`, and returns the plan rewritten for them. A sample that does not
  /// fit, or needs more taps than the kernel holds, is finished here on the CPU instead, into its
  /// reserve, and marked `precomputed`: the result is the same bits either way.
  /// @throws DecodeError when the bytes are not a decodable JPEG.
  [[nodiscard]] ops::SamplePlan stage(const SampleContext& ctx, std::span<const std::byte> jpeg,
                                      detail::StagingArea& area, Workspace& ws) const {
    ops::SamplePlan p = decode_planned(ctx, jpeg, ws);
    StageTimer timer(ctx, Stage::stage);
    detail::NvtxRange range("stage");
    const auto x = needed_range(p.x, p.out_width), y = needed_range(p.y, p.out_height);
    const std::int32_t w = x[1] - x[0], h = y[1] - y[0];
    std::optional<std::size_t> at;
    if (p.x.scale <= max_device_scale && p.y.scale <= max_device_scale)
      at = area.allocator->try_allocate(std::size_t(w) * std::size_t(h) * 3);
    if (!at) {
      const std::size_t off = area.allocator->allocate_reserve();
      ops::cpu::resample(ws.pixels.data(), p, output_params(), area.data + off, ws.scratch);
      p.precomputed = 1;
      p.src = {static_cast<std::int64_t>(off), 3, 0, 0, 0};
      return p;
    }
    std::uint8_t* dst = reinterpret_cast<std::uint8_t*>(area.data + *at);
    const std::uint8_t* src = ws.pixels.data() + p.src.offset;
    for (std::int32_t r = 0; r < h; ++r) {
      const std::uint8_t* line = src + std::int64_t{y[0] + r} * p.src.y_stride + std::int64_t{x[0]} * p.src.x_stride;
      std::uint8_t* out = dst + std::size_t(r) * std::size_t(w) * 3;
      if (p.src.x_stride == 3) {
        std::memcpy(out, line, std::size_t(w) * 3);
      } else {
        for (std::int32_t c = 0; c < w; ++c, line += p.src.x_stride, out += 3) std::memcpy(out, line, 3);
      }
    }
    p.src = {static_cast<std::int64_t>(*at), 3, std::int64_t{w} * 3, w, h};
    p.x.src_begin -= x[0];
    p.x.src_end -= x[0];
    p.y.src_begin -= y[0];
    p.y.src_end -= y[0];
    return p;
  }

  /// Reads the header, plans, and decodes the whole image into the workspace; the plan's source
  /// view points into `ws.pixels`.
  ops::SamplePlan decode_planned(const SampleContext& ctx, std::span<const std::byte> jpeg, Workspace& ws) const {
    StageTimer timer(ctx, Stage::decode);
    detail::NvtxRange range("decode");
    const JpegInfo info = ws.decoder.read_header(jpeg);
    const int orientation = exif_orientation ? info.orientation : 1;
    const bool swap = orientation >= 5;
    ops::SamplePlan p = plan(ctx, swap ? info.height : info.width, swap ? info.width : info.height);
    const std::size_t row = std::size_t(info.width) * 3;
    ws.pixels.resize(row * std::size_t(info.height));
    ws.decoder.decode(ws.pixels.data(), row);
    p.src = oriented_view(orientation, info.width, info.height, static_cast<std::int64_t>(row));
    return p;
  }

  /// The source pixels [lo, hi) along one axis that any output pixel's taps read.
  [[nodiscard]] static std::array<std::int32_t, 2> needed_range(const ops::AxisPlan& a, std::int32_t out) noexcept {
    std::int32_t lo = a.src_end, hi = a.src_begin;
    for (std::int32_t o = 0; o < out; ++o) {
      const ops::AxisTaps t = ops::axis_taps(a, o);
      if (t.count == 0) continue;
      lo = std::min(lo, a.src_begin + t.first);
      hi = std::max(hi, a.src_begin + t.first + t.count);
    }
    if (lo >= hi) return {a.src_begin, a.src_begin};
    return {lo, hi};
  }

  /// The view of a `width` x `height` RGB image (rows `row` bytes apart) shown upright under Exif
  /// `orientation` (1..8).
  [[nodiscard]] static ops::SourceView oriented_view(int orientation, int width, int height, std::int64_t row) noexcept {
    const std::int64_t right = std::int64_t{width - 1} * 3, bottom = std::int64_t{height - 1} * row;
    switch (orientation) {
      case 2: return {right, -3, row, width, height};                 // mirrored
      case 3: return {right + bottom, -3, -row, width, height};       // rotated 180
      case 4: return {bottom, 3, -row, width, height};                // mirrored vertically
      case 5: return {0, row, 3, height, width};                      // transposed
      case 6: return {bottom, -row, 3, height, width};                // rotate 90 clockwise to view
      case 7: return {right + bottom, -row, -3, height, width};       // transversed
      case 8: return {right, row, -3, height, width};                 // rotate 90 counter-clockwise to view
      default: return {0, 3, row, width, height};
    }
  }
};

static_assert(Transform<ImageAugment>);

}  // namespace v0
}  // namespace conveyor
