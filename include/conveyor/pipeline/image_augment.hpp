#pragma once
/// @file
/// `ImageAugment`: the built-in transform from an encoded image (JPEG, PNG, PGM/PPM) to a normalised
/// image tensor.

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/nvtx.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/device/staging.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/pipeline/augment/cpu_program.hpp>
#include <conveyor/pipeline/augment/decode_job.hpp>
#include <conveyor/pipeline/augment/device_staging.hpp>
#include <conveyor/pipeline/augment/geometry.hpp>
#include <conveyor/pipeline/augment/workspace.hpp>
#include <conveyor/transforms/program.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Decode, crop (random or centred), resize, flip, run pixel transforms, normalise and convert one
/// image, with torchvision's semantics. Every random decision comes from the sample's own
/// counter-based streams (seed, epoch, index, op).
///
/// ```
/// conveyor::ImageAugment train{.crop = conveyor::RandomResizedCrop{.size = 224},
///                              .flip = {.p = 0.5},
///                              .transforms = {conveyor::ColorJitter{.brightness = 0.4, .hue = 0.1},
///                                             conveyor::RandomGrayscale{.p = 0.2}},
///                              .normalize = conveyor::Normalize::imagenet(),
///                              .dtype = conveyor::DType::bf16};
/// conveyor::ImageAugment eval{.crop = conveyor::CenterCrop{224}, .resize = conveyor::Resize{256}};
/// ```
struct ImageAugment {
  /// Which crop: random-resized for training, centred for evaluation, or a random box of the
  /// (padded) image (CIFAR's RandomCrop(32, padding=4), with any of torchvision's padding modes).
  Crop crop = RandomResizedCrop{};
  /// Resize before a `CenterCrop` or a `RandomCrop`; not allowed with `RandomResizedCrop`.
  std::optional<Resize> resize{};
  /// The resize's filter and arithmetic (`ops/filters.hpp`): torchvision's on uint8 tensors
  /// (bilinear, bicubic), or Pillow's (`pil_*`: torchvision v1's, on PIL images). The kernel runs
  /// each but Hamming and Lanczos, whose samples a device pipeline finishes on the CPU (the same
  /// bits either way; `detail::device_resamples`).
  ops::Resampling resampling = ops::Resampling::bilinear;
  /// A second filter: each sample resizes with `resampling` or this one, with even odds drawn from
  /// its own stream (timm's `interpolation="random"`, `random.choice` of bilinear and bicubic).
  std::optional<ops::Resampling> random_resampling{};
  /// Horizontal flip probability (0: never).
  HorizontalFlip flip{.p = 0.0};
  /// Pixel transforms after the crop and flip, in order: torchvision v2's classes with their
  /// arguments (transforms/registry.hpp lists them). Each sample draws its own program from them.
  /// RandomErasing, which applies to the normalised output, comes last.
  std::vector<PixelTransform> transforms{};
  /// How many of `transforms`, from the first, see a PIL image (torchvision v1's, or v2's before
  /// ToImage): they run as torchvision's PIL functionals do, with Pillow's arithmetic
  /// (ImageEnhance, ImageOps, convert); the rest as its uint8 tensor kernels.
  std::size_t pil_transforms = 0;
  /// Normalisation for float outputs; without it floats are pixels / 255. Not allowed with u8.
  std::optional<Normalize> normalize{};
  DType dtype = DType::f32;
  Layout layout = Layout::NCHW;
  /// Apply the Exif orientation before cropping (DALI's default). Off by default, as
  /// torchvision's ImageFolder ignores it.
  bool exif_orientation = false;
  /// Decode only the window the crop reads (libjpeg-turbo's crop and skip; PNG rows down to the
  /// window's last); off: the whole image.
  /// Either way the pixels are the same.
  bool roi = true;
  /// Decode at the smallest DCT scale (1/8, 1/4, 1/2) that keeps at least one source pixel per
  /// output pixel (less work for large images, pixels within about 0.6 LSB of a full decode's on
  /// average); off: full resolution. Unset: on for `RandomResizedCrop` (training), off for
  /// `CenterCrop`, so evaluation is torchvision's bit for bit unless asked otherwise.
  std::optional<bool> decode_scaling{};
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

  /// Whether large images are decoded at a DCT scale: `decode_scaling`, or its default for the crop.
  [[nodiscard]] bool scaled_decoding() const noexcept {
    return decode_scaling.value_or(std::holds_alternative<RandomResizedCrop>(crop));
  }

  /// The output's size: the crop's.
  [[nodiscard]] Size output_size() const noexcept {
    return std::visit([](const auto& c) { return c.size; }, crop);
  }

  /// @throws ConfigError naming the offending option.
  void validate() const {
    const Size size = output_size();
    if (size.height <= 0 || size.width <= 0)
      throw ConfigError("ImageAugment: crop size must be > 0, got " + std::to_string(size.height) + " x " +
                        std::to_string(size.width) + " (height x width)");
    if (std::uint64_t(size.height) * std::uint64_t(size.width) > decode.max_image_pixels)
      throw ConfigError("ImageAugment: a crop of " + std::to_string(size.width) + " x " + std::to_string(size.height) +
                        " has more pixels than decode.max_image_pixels (" + std::to_string(decode.max_image_pixels) + ")");
    if (const auto* rrc = std::get_if<RandomResizedCrop>(&crop)) {
      if (resize) throw ConfigError("ImageAugment: resize applies before CenterCrop only, not RandomResizedCrop");
      // torchvision draws from both ranges with torch's uniform_ (min <= max, finite), the ratio's
      // logs in float32; a box larger than the image just fails a try
      if (!(rrc->scale[0] >= 0 && rrc->scale[0] <= rrc->scale[1] && std::isfinite(static_cast<float>(rrc->scale[1]))))
        throw ConfigError("ImageAugment: RandomResizedCrop scale must satisfy 0 <= lo <= hi, finite, got (" +
                          std::to_string(rrc->scale[0]) + ", " + std::to_string(rrc->scale[1]) + ")");
      if (!(static_cast<float>(rrc->ratio[0]) > 0 && rrc->ratio[0] <= rrc->ratio[1] &&
            std::isfinite(static_cast<float>(rrc->ratio[1]))))
        throw ConfigError("ImageAugment: RandomResizedCrop ratio must satisfy 0 < lo <= hi, each positive and finite "
                          "in float32, got (" + std::to_string(rrc->ratio[0]) + ", " + std::to_string(rrc->ratio[1]) + ")");
    }
    if (const auto* rc = std::get_if<RandomCrop>(&crop))
      for (const int pad : rc->padding)
        if (pad < 0 || pad > (1 << 20))
          throw ConfigError("ImageAugment: RandomCrop padding must be in [0, 2^20] pixels a side, got " +
                            std::to_string(pad));
    if (resize && !resize->size && !(resize->max_size && *resize->max_size > 0))
      throw ConfigError("ImageAugment: a resize without a size (the longer side to max_size) needs max_size > 0");
    if (resize && resize->size) {
      const Size& s = *resize->size;
      if (s.height <= 0 || s.width <= 0)
        throw ConfigError("ImageAugment: resize size must be > 0, got " + std::to_string(s.height) +
                          (s.pair ? " x " + std::to_string(s.width) : std::string()));
      // torchvision's Resize: max_size bounds the longer side of a shorter-side resize, above it
      if (resize->max_size && s.pair)
        throw ConfigError("ImageAugment: resize max_size applies to a shorter-side size (an int), not (height, width)");
      if (resize->max_size && *resize->max_size <= s.height)
        throw ConfigError("ImageAugment: resize max_size = " + std::to_string(*resize->max_size) +
                          " must be strictly greater than the requested size for the smaller edge size (" +
                          std::to_string(s.height) + ")");
    }
    if (!(flip.p >= 0 && flip.p <= 1)) throw ConfigError("ImageAugment: flip.p must be in [0, 1], got " + std::to_string(flip.p));
    if (dtype == DType::i64) throw ConfigError("ImageAugment: dtype must be u8, f32, f16 or bf16");
    if (dtype == DType::u8 && normalize) throw ConfigError("ImageAugment: u8 output cannot be normalized");
    if (static_cast<std::size_t>(resampling) >= ops::enum_names(resampling).size())
      throw ConfigError("ImageAugment: resampling " + std::to_string(static_cast<int>(resampling)) + " is not one of ops::Resampling's");
    if (random_resampling && static_cast<std::size_t>(*random_resampling) >= ops::enum_names(resampling).size())
      throw ConfigError("ImageAugment: random_resampling " + std::to_string(static_cast<int>(*random_resampling)) +
                        " is not one of ops::Resampling's");
    if (normalize && normalize->divide_by_255 && !normalize->torchvision_rounding)
      throw ConfigError("ImageAugment: normalize.divide_by_255 is one of torchvision's roundings: set torchvision_rounding too");
    if (normalize && normalize->rescale != Normalize{}.rescale &&
        (!normalize->torchvision_rounding || normalize->divide_by_255 || !(normalize->rescale > 0.0f) ||
         !std::isfinite(normalize->rescale)))
      throw ConfigError("ImageAugment: normalize.rescale (" + std::to_string(normalize->rescale) +
                        ") is a factor of torchvision's roundings, finite and > 0: set torchvision_rounding, not "
                        "divide_by_255");
    if (normalize)
      for (float s : normalize->std)
        if (!(s > 0)) throw ConfigError("ImageAugment: normalize std must be > 0, got " + std::to_string(s));
    validate_transforms(transforms);
    validate_pil_transforms(transforms, pil_transforms);
    validate_for_image(transforms, {size.width, size.height, dtype});
  }

  /// Shape of one output image: {3, height, width} (NCHW) or {height, width, 3} (NHWC).
  [[nodiscard]] SampleSpec sample_spec() const noexcept {
    const std::int64_t h = output_size().height, w = output_size().width;
    return layout == Layout::NCHW ? SampleSpec{dtype, 3, {3, h, w}} : SampleSpec{dtype, 3, {h, w, 3}};
  }

  /// Per-channel scale and bias of the output conversion: torchvision's roundings where the
  /// Normalize asks for them or a transform adds to the float image before it (GaussianNoise).
  [[nodiscard]] ops::OutputParams output_params() const noexcept {
    ops::OutputParams p;
    p.dtype = dtype;
    p.layout = layout;
    const Normalize n = normalize.value_or(Normalize{});
    bool scaled = false;
    auto see = [&](const char*, Stage stage) { scaled = scaled || stage == Stage::scaled; };
    detail::for_each_leaf(transforms, see);
    for (std::size_t c = 0; c < 3; ++c) {
      if (n.torchvision_rounding || scaled) {
        p.scale[c] = n.rescale;  // torch's float32 multiply by the double 1/255, or 1 (Hugging Face's)
        p.bias[c] = n.mean[c];
        p.divisor[c] = n.std[c];
        p.divide = n.divide_by_255 ? 1 : 0;
      } else {
        p.scale[c] = 1.0f / (255.0f * n.std[c]);
        p.bias[c] = -n.mean[c] / n.std[c];
      }
    }
    return p;
  }

  /// The pixel program of sample `ctx.index`: `transforms` drawn for its output image (empty
  /// without transforms), checked record by record against that image (`ops::pixel::check`), so no
  /// record reaches an executor that would read outside it.
  /// @throws ConfigError naming the record that cannot run (validation refuses the transforms that
  /// could draw one; a pipeline reports it as the sample's error).
  [[nodiscard]] SampleProgram program(const SampleContext& ctx) const {
    if (transforms.empty()) return {};
    const Size size = output_size();
    SampleProgram drawn =
        draw_program(transforms, ctx.seed, ctx.epoch, ctx.index, size.width, size.height, nullptr, pil_transforms);
    ops::pixel::check(drawn.pixels, size.width, size.height);
    return drawn;
  }

  /// The filter sample `ctx.index` resizes with: `resampling`, or with `random_resampling` one of
  /// the two, even odds, from the sample's own stream.
  [[nodiscard]] ops::Resampling filter(const SampleContext& ctx) const noexcept {
    if (!random_resampling) return resampling;
    CounterRng rng(ctx.seed, ctx.epoch, ctx.index, RngOp::interpolation);
    return rng.below(2) == 0 ? resampling : *random_resampling;
  }

  /// The plan of sample `ctx.index` for an (oriented) source of `width` x `height` pixels, with the
  /// flips its program folds in. The source view is left for the caller, who knows where the
  /// pixels are.
  [[nodiscard]] ops::SamplePlan plan(const SampleContext& ctx, int width, int height) const {
    return plan(ctx, width, height, program(ctx));
  }
  /// The same, for the sample's program `drawn`.
  [[nodiscard]] ops::SamplePlan plan(const SampleContext& ctx, int width, int height, const SampleProgram& drawn) const {
    ops::SamplePlan p = detail::plan_geometry(crop, resize, flip, ctx, width, height, decode.max_image_pixels);
    p.x.filter = p.y.filter = filter(ctx);
    p.flip ^= drawn.flip_x;
    p.flip_y ^= drawn.flip_y;
    return p;
  }

  /// What conveyor draws for sample `index` of `epoch` under `seed`, whose (oriented) image is
  /// `width` x `height`, as the torchvision.transforms.v2.functional calls that reproduce it in
  /// order: the crop and resize (`resized_crop`, or `resize` and `center_crop`), the flip, then
  /// the pixel transforms' calls (erasing last, on the normalised image). For parity tests.
  [[nodiscard]] std::vector<DrawnCall> drawn_calls(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index,
                                                   int width, int height) const {
    std::vector<DrawnCall> calls;
    detail::describe_geometry(crop, resize, flip, {seed, epoch, index, nullptr}, width, height, decode.max_image_pixels,
                              calls);
    const ops::Resampling f = filter({seed, epoch, index, nullptr});
    if (f != ops::Resampling::bilinear)  // torchvision's InterpolationMode value: "bicubic", "lanczos"
      for (DrawnCall& call : calls)
        if (call.function == "resized_crop" || call.function == "resize") {
          std::string name(ops::enum_names(f)[static_cast<std::size_t>(f)]);
          if (name.starts_with("pil_")) name.erase(0, 4);
          if (ops::unwidened(f)) name.erase(name.find("_no_antialias"));
          if (f == ops::Resampling::nearest_exact) name = "nearest-exact";
          call.args.push_back(DrawnArg::text("interpolation", name));
          if (ops::unwidened(f)) call.args.push_back(DrawnArg::flag("antialias", false));
        }
    if (!transforms.empty())
      (void)draw_program(transforms, seed, epoch, index, output_size().width, output_size().height, &calls,
                         pil_transforms);
    return calls;
  }

  /// The stages a pipeline's stats report for this transform, after its read: decoding (the
  /// header, the plan and the pixels) and augmenting on the CPU (the CPU backend, or a sample a
  /// device cannot take).
  /// In a pipeline with a device JPEG decoder, a sample sent to it spends its worker time in
  /// "offload" (its header, its plan and the copy of its file), and the CPU's decodes of files the
  /// engines could have taken are "decode (engine-able)", apart from the rest's "decode".
  static constexpr StageId decode_stage = 1, augment_stage = 2, offload_stage = 3, engine_able_stage = 4;
  static constexpr std::array<std::string_view, 4> stage_name_list{"decode", "augment", "offload",
                                                                   "decode (engine-able)"};
  [[nodiscard]] std::span<const std::string_view> stage_names() const noexcept { return stage_name_list; }

  /// Per-worker state: a decoder and buffers, reused for every sample.
  using Workspace = detail::AugmentWorkspace;
  using DecodeJob = detail::DecodeJob;
  [[nodiscard]] Workspace make_workspace() const { return Workspace{.decoder = ImageDecoder(decode)}; }

  /// Decodes `image` and writes the augmented image to `out` (`sample_spec().bytes()` bytes).
  /// @throws DecodeError when the bytes are not a decodable image.
  void apply(const SampleContext& ctx, std::span<const std::byte> image, std::span<std::byte> out, Workspace& ws) const {
    const SampleProgram drawn = program(ctx);
    const ops::SamplePlan p = decode_to_workspace(ctx, plan_decode(ctx, image, ws, drawn), ws);
    if (drawn.pixels.count == 0)
      resample_on_cpu(ctx, p, out.data(), ws);
    else
      run_program(ctx, p, drawn.pixels, out.data(), ws);
  }

  /// On a device: each sample's decoded window is staged (`stage`) for the fused kernel. A slot
  /// gives a sample 4 bytes per output element on average (a window of 4x the output's pixels, 3
  /// bytes each; DCT scaling keeps most below that), and guarantees each the finished sample's size.
  /// A device JPEG decoder gets windows of up to 786,432 pixels (or 4x the output's, if more):
  /// ImageNet's files whole, so a crop of any of them fits. With pixel transforms, each sample's
  /// program travels in the slot's program table and the device resamples into u8 images, runs the
  /// programs and stores (`ProgramSamples`); without, the fused kernel alone makes the batch.
  [[nodiscard]] DeviceWork device_work() const {
    const SampleSpec spec = sample_spec();
    const std::size_t out = spec.bytes();
    const std::size_t window_pixels =
        std::max<std::size_t>(1024 * 768, 4 * std::size_t(output_size().width) * std::size_t(output_size().height));
    const bool programs = !transforms.empty();
    return {DeviceWork::Placement::staged,
            out,
            std::max<std::size_t>(out, 4 * static_cast<std::size_t>(spec.numel())),
            {device_step()},
            DeviceWork::JpegStaging{3 * window_pixels, decode},
            programs};
  }

  /// The device step that makes this augmentation's outputs from staged windows: `ProgramSamples`
  /// with pixel transforms, else `ResampleSamples`; of a multi-view transform's samples, the
  /// copies `copies` names.
  [[nodiscard]] DeviceStepSpec device_step(ops::CopyRange copies = {}) const {
    const Size size = output_size();
    if (transforms.empty()) return DeviceStepSpec::of(ResampleSamples{output_params(), size.width, size.height, copies});
    return DeviceStepSpec::of(ProgramSamples{output_params(), size.width, size.height, copies, may_mix(transforms)});
  }

  /// The host half of the device path: draws the sample's program (into `area.program`, with
  /// transforms), plans from the header, then decodes the window the plan reads straight into
  /// `area` (in stored order: the plan's view applies the orientation) and returns the plan for it.
  /// A sample that does not fit, or needs more filter taps than the kernel holds, is resampled
  /// here on the CPU instead, into its reserve, and marked `precomputed`: finished, or with
  /// transforms its u8 image, whose program the device runs as the others'. The result is the same
  /// bits either way.
  /// @throws DecodeError when the bytes are not a decodable image.
  [[nodiscard]] ops::SamplePlan stage(const SampleContext& ctx, std::span<const std::byte> image,
                                      StagingArea& area, Workspace& ws) const {
    const SampleProgram drawn = program(ctx);
    if (!transforms.empty()) {
      if (!area.program) throw Error("ImageAugment::stage: the slot has no program table for the transforms' programs");
      *area.program = drawn.pixels;
    }
    if (area.device_jpeg && area.device_jpeg->drawn)
      if (const std::optional<ops::SamplePlan> p = stage_for_device_decode(ctx, image, *area.device_jpeg, area, ws, drawn))
        return *p;
    const DecodeJob job = plan_decode(ctx, image, ws, drawn);
    const bool engine_able = area.device_jpeg && !area.device_jpeg->drawn && detail::engine_takes(ws.decoder) &&
                             detail::engine_plan(job.plan);
    if (const std::optional<std::size_t> at = detail::claim_window(job, area)) {
      decode_into(ctx, job, reinterpret_cast<std::uint8_t*>(area.data + *at), ws,
                  engine_able ? engine_able_stage : decode_stage);
      return job.finish(static_cast<std::int64_t>(*at));
    }
    ops::SamplePlan p = decode_to_workspace(ctx, job, ws);
    const std::size_t off = area.claim->allocate_reserve();
    if (transforms.empty()) resample_on_cpu(ctx, p, area.data + off, ws);
    else resample_program_image(ctx, p, area.data + off, ws);
    p.precomputed = 1;
    p.src = {static_cast<std::int64_t>(off), 3, 0, 0, 0};
    return p;
  }

  /// Stages a sample that drew the device's JPEG decoder: plans its window at full scale (the
  /// engines do not scale), copies its file to its place and writes its job; the plan reads the
  /// window where the device will decode it. Nothing, when the engines would not decode it exactly
  /// or it does not fit its place: the CPU takes it, as the same function of its bytes always does.
  [[nodiscard]] std::optional<ops::SamplePlan> stage_for_device_decode(const SampleContext& ctx,
                                                                       std::span<const std::byte> image,
                                                                       const DeviceJpegPlace& place, StagingArea& area,
                                                                       Workspace& ws, const SampleProgram& drawn) const {
    if (image.size() > place.max_file_bytes) return std::nullopt;
    // Header, plan and copy are the offload's time, and only a staged sample's: a refused one goes
    // on to the CPU's stages, which time their own header read (auto's model divides the
    // offload's time by the samples staged).
    StageTimer timer(ctx, offload_stage, StageTimer::Counts::when_counted);
    const DecodeJob job = plan_decode({ctx.seed, ctx.epoch, ctx.index, nullptr}, image, ws, drawn, false);
    std::optional<ops::SamplePlan> p = detail::place_for_device_decode(job, ws.decoder, image, place, area);
    if (p) timer.count_sample();
    return p;
  }

  /// Reads the header and plans the sample (whose program is `drawn`) and its window
  /// (`detail::decode_job`), at a DCT scale where `dct_scaling` and `scaled_decoding()` allow,
  /// without decoding a pixel.
  [[nodiscard]] DecodeJob plan_decode(const SampleContext& ctx, std::span<const std::byte> image, Workspace& ws,
                                      const SampleProgram& drawn, bool dct_scaling = true) const {
    StageTimer timer(ctx, decode_stage, StageTimer::Counts::time);  // decode_into counts the sample
    const ImageInfo info = ws.decoder.read_header(image);
    const int orientation = exif_orientation ? info.orientation : 1;
    const auto [width, height] = detail::oriented_size(info, orientation);
    return detail::decode_job(info, orientation, plan(ctx, width, height, drawn), dct_scaling && scaled_decoding(),
                              roi);
  }

  /// Decodes `job`'s window into `dst` (rows packed, 3 bytes a pixel), timed as `stage`.
  void decode_into(const SampleContext& ctx, const DecodeJob& job, std::uint8_t* dst, Workspace& ws,
                   StageId stage = decode_stage) const {
    StageTimer timer(ctx, stage);
    detail::NvtxRange range("decode");
    detail::decode_window(ws.decoder, job, dst);
  }

  /// Decodes `job`'s window into the workspace; returns the plan reading it there.
  ops::SamplePlan decode_to_workspace(const SampleContext& ctx, const DecodeJob& job, Workspace& ws) const {
    ws.pixels.resize(job.bytes());
    decode_into(ctx, job, ws.pixels.data(), ws);
    return job.finish(0);
  }

  /// Resamples, flips, normalises and converts the workspace's pixels as `p` says, into `out`.
  void resample_on_cpu(const SampleContext& ctx, const ops::SamplePlan& p, std::byte* out, Workspace& ws) const {
    StageTimer timer(ctx, augment_stage);
    detail::NvtxRange range("augment");
    ops::cpu::resample(ws.pixels.data(), p, output_params(), out, ws.scratch);
  }

  /// Resamples the workspace's pixels as `p` says into the u8 image a program runs on, at `out`.
  void resample_program_image(const SampleContext& ctx, const ops::SamplePlan& p, std::byte* out, Workspace& ws) const {
    StageTimer timer(ctx, augment_stage);
    detail::NvtxRange range("augment");
    detail::resample_program_image(p, reinterpret_cast<std::uint8_t*>(out), ws);
  }

  /// Resamples the workspace's pixels as `p` says and runs `program` on them, into `out`.
  void run_program(const SampleContext& ctx, const ops::SamplePlan& p, const ops::pixel::PixelProgram& program,
                   std::byte* out, Workspace& ws) const {
    StageTimer timer(ctx, augment_stage);
    detail::NvtxRange range("augment");
    detail::run_program_on_cpu(p, program, output_params(), out, ws);
  }
};

static_assert(DeviceTransform<ImageAugment>);

}  // namespace v0
}  // namespace conveyor
