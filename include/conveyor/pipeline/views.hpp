#pragma once
/// @file
/// `Views`: several augmented views of each image (self-supervised multi-crop: DINO's global and
/// local crops, SimCLR's and BYOL's pairs), decoded once.

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/hash.hpp>
#include <conveyor/core/nvtx.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/device/staging.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/io/decode_options.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/pipeline/augment/decode_job.hpp>
#include <conveyor/pipeline/augment/device_staging.hpp>
#include <conveyor/pipeline/augment/workspace.hpp>
#include <conveyor/pipeline/image_augment.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// One kind of view: its augmentation (crop, flip, pixel transforms, output) and how many copies
/// of it each sample gets, each with its own draws.
struct View {
  ImageAugment augment{};
  int count = 1;
};

namespace detail {

/// What `Views` keeps per view copy while it prepares a sample.
struct ViewCopy {
  SampleProgram drawn{};
  ops::SamplePlan plan{};  ///< in the oriented image, before the decode's scale
  DecodeJob job{};
};

/// Per-worker state of `Views`: one decoder and its buffers for every view, and the copies' plans.
struct ViewsWorkspace {
  AugmentWorkspace augment;
  std::vector<ViewCopy> copies{};
};

}  // namespace detail

/// Several augmented views of each image, decoded once: a sample is one blob holding its view
/// copies one after another, in view order (a view's `count` copies consecutively), each in its
/// `ImageAugment`'s own dtype, layout and size (every view shares one dtype and layout).
///
/// ```
/// conveyor::ImageAugment global{.crop = conveyor::RandomResizedCrop{.size = 224, .scale = {0.4, 1.0}}, ...};
/// conveyor::ImageAugment local{.crop = conveyor::RandomResizedCrop{.size = 96, .scale = {0.05, 0.4}}, ...};
/// conveyor::Views dino{{{global, 2}, {local, 8}}};
/// for (const conveyor::Batch& b : pipeline) {
///   const auto groups = dino.group_tensors(b.images());  // [N, 2, 3, 224, 224], [N, 8, 3, 96, 96]
/// }
/// ```
///
/// Streams: copy k (counted over views and their counts) of sample `index` draws everything (crop,
/// flip, pixel program) from the streams of `copy_context(ctx, k)`: copy 0 from the sample's own
/// context, so `Views{{View{a}}}` is `a` bit for bit, and copy k > 0 under `copy_seed(seed, k)`, so
/// appending views changes no earlier copy's draws.
///
/// Decoding: the header is read once, every copy planned, and the union of the copies' windows
/// decoded once, at the DCT scale that the least scaled copy would choose alone; each copy then
/// resamples its part of that window. Without decode scaling (`CenterCrop`'s default, or
/// `decode_scaling = false`) every copy is, bit for bit, its `ImageAugment` run alone with its
/// context. With decode scaling a copy may be decoded at a larger scale than it would choose alone
/// (another copy needs more pixels), and then differs from its lone run as two DCT scales' decodes
/// of one crop differ (a few levels at most on average, tested); where it is decoded at its own
/// scale it is its lone run still. Either way the output is a function of (seed, epoch, index) alone.
///
/// On a device the worker reads the header, plans every copy and decodes the union window into the
/// slot once; a device step per view resamples its copies from that window and runs their
/// programs, each copy's plan and program in the slot's tables (`device_work`). The bytes are the
/// CPU backend's.
struct Views {
  std::vector<View> views{};

  /// @throws ConfigError naming the view (its index) and what is wrong: no views, a count below 1,
  /// an invalid augmentation, or a dtype, layout or decode options unlike view 0's.
  void validate() const {
    if (views.empty()) throw ConfigError("Views: no views (give at least one View)");
    const ImageAugment& first = views.front().augment;
    for (std::size_t v = 0; v < views.size(); ++v) {
      const ImageAugment& a = views[v].augment;
      const std::string which = "Views: view " + std::to_string(v);
      if (views[v].count < 1) throw ConfigError(which + ": count must be >= 1, got " + std::to_string(views[v].count));
      try {
        a.validate();
      } catch (const ConfigError& e) {
        throw ConfigError(which + ": " + std::string(detail::split_location(e.what()).second));
      }
      if (a.dtype != first.dtype)
        throw ConfigError(which + ": dtype " + std::string(to_string(a.dtype)) + " differs from view 0's " +
                          std::string(to_string(first.dtype)) + " (every view shares one dtype and layout)");
      if (a.layout != first.layout)
        throw ConfigError(which + ": layout " + std::string(to_string(a.layout)) + " differs from view 0's " +
                          std::string(to_string(first.layout)) + " (every view shares one dtype and layout)");
      if (!(a.decode == first.decode))
        throw ConfigError(which + ": decode options differ from view 0's (one decoder decodes every view)");
    }
  }

  /// Copies per sample: the views' counts summed.
  [[nodiscard]] std::size_t copy_count() const noexcept {
    std::size_t n = 0;
    for (const View& v : views) n += static_cast<std::size_t>(std::max(v.count, 0));
    return n;
  }

  /// The view of copy `k` (copies counted over views and their counts).
  [[nodiscard]] std::size_t view_of(std::size_t k) const noexcept {
    std::size_t v = 0;
    for (; v + 1 < views.size(); ++v) {
      const auto count = static_cast<std::size_t>(std::max(views[v].count, 0));
      if (k < count) break;
      k -= count;
    }
    return v;
  }

  /// A sample's blob: its copies' elements in the shared dtype, as a rank-1 spec.
  [[nodiscard]] SampleSpec sample_spec() const noexcept {
    std::int64_t numel = 0;
    for (const View& v : views) numel += std::int64_t{std::max(v.count, 0)} * v.augment.sample_spec().numel();
    return {views.empty() ? DType::u8 : views.front().augment.dtype, 1, {numel, 0, 0}};
  }

  /// The byte offset of each copy within a sample's blob, in copy order.
  [[nodiscard]] std::vector<std::size_t> view_offsets() const {
    std::vector<std::size_t> offsets;
    offsets.reserve(copy_count());
    std::size_t at = 0;
    for_each_copy([&](std::size_t, const ImageAugment& a) {
      offsets.push_back(at);
      at += a.sample_spec().bytes();
    });
    return offsets;
  }

  /// `f(k, augment)` for each copy k, in order, with its view's augmentation.
  template <class F>
  void for_each_copy(F f) const {
    std::size_t k = 0;
    for (const View& v : views)
      for (int c = 0; c < v.count; ++c) f(k++, v.augment);
  }

  /// Consecutive copies of one image size: copies [first, first + count).
  struct Group {
    std::size_t first = 0;
    std::size_t count = 0;
  };
  /// The runs of consecutive copies of one image size, in order (DINO: the globals, the locals).
  [[nodiscard]] std::vector<Group> groups() const {
    std::vector<Group> out;
    std::size_t k = 0;
    for (const View& v : views)
      for (int c = 0; c < v.count; ++c, ++k) {
        if (!out.empty() && views[view_of(out.back().first)].augment.sample_spec() == v.augment.sample_spec())
          ++out.back().count;
        else
          out.push_back({k, 1});
      }
    return out;
  }

  /// One tensor per copy of a batch's images (a `Batch::images()` of this transform's samples,
  /// [N, blob]): [N, C, H, W] or [N, H, W, C] in the batch's memory, strided (its batch stride is
  /// the whole blob's). No copy is made; the views live as long as the batch.
  /// @throws ConfigError when `images` is not this transform's batch.
  [[nodiscard]] std::vector<TensorView> copy_tensors(const TensorView& images) const {
    check_batch(images);
    const std::vector<std::size_t> offsets = view_offsets();
    std::vector<TensorView> out;
    out.reserve(offsets.size());
    for (std::size_t k = 0; k < offsets.size(); ++k) {
      const SampleSpec s = views[view_of(k)].augment.sample_spec();
      const std::array<std::int64_t, 4> shape{images.shape[0], s.shape[0], s.shape[1], s.shape[2]};
      TensorView t = TensorView::contiguous(static_cast<std::byte*>(images.data) + offsets[k], s.dtype, shape,
                                            images.device);
      t.strides[0] = images.strides[0];
      out.push_back(t);
    }
    return out;
  }

  /// One tensor per group of consecutive same-size copies (`groups()`) of a batch's images:
  /// [N, count, C, H, W] or [N, count, H, W, C] in the batch's memory, strided as `copy_tensors`.
  /// @throws ConfigError when `images` is not this transform's batch.
  [[nodiscard]] std::vector<TensorView> group_tensors(const TensorView& images) const {
    check_batch(images);
    const std::vector<std::size_t> offsets = view_offsets();
    std::vector<TensorView> out;
    for (const Group& g : groups()) {
      const SampleSpec s = views[view_of(g.first)].augment.sample_spec();
      const std::array<std::int64_t, 5> shape{images.shape[0], static_cast<std::int64_t>(g.count), s.shape[0],
                                              s.shape[1], s.shape[2]};
      TensorView t = TensorView::contiguous(static_cast<std::byte*>(images.data) + offsets[g.first], s.dtype, shape,
                                            images.device);
      t.strides[0] = images.strides[0];
      out.push_back(t);
    }
    return out;
  }

  /// The seed copy `k` > 0 of every sample draws under: `seed` and `k` hashed (FNV-1a over their
  /// little-endian bytes), so each copy's streams are its own and no other copy's change them.
  [[nodiscard]] static std::uint64_t copy_seed(std::uint64_t seed, std::size_t k) noexcept {
    std::array<std::byte, 16> key{};
    const auto index = static_cast<std::uint64_t>(k);
    for (std::size_t i = 0; i < 8; ++i) {
      key[i] = static_cast<std::byte>(seed >> (8 * i));
      key[8 + i] = static_cast<std::byte>(index >> (8 * i));
    }
    return fnv1a64(key);
  }
  /// The context copy `k` of the sample of `ctx` draws from: `ctx` itself for copy 0, else `ctx`
  /// under `copy_seed(ctx.seed, k)`. Running the copy's `ImageAugment` alone with it gives the copy's
  /// draws (and, without decode scaling, its bytes).
  [[nodiscard]] static SampleContext copy_context(const SampleContext& ctx, std::size_t k) noexcept {
    SampleContext c = ctx;
    if (k > 0) c.seed = copy_seed(ctx.seed, k);
    return c;
  }

  /// ImageAugment's stages: "decode" (the header, every copy's plan and the one decode, a sample
  /// each) and "augment" (a copy each).
  [[nodiscard]] std::span<const std::string_view> stage_names() const noexcept {
    return std::span<const std::string_view>(ImageAugment::stage_name_list).first(2);
  }

  using Workspace = detail::ViewsWorkspace;
  [[nodiscard]] Workspace make_workspace() const {
    return Workspace{.augment = {.decoder = ImageDecoder(views.empty() ? DecodeOptions{} : views.front().augment.decode)}};
  }

  /// Decodes `image` once and writes every copy to its place in `out` (`sample_spec().bytes()`).
  /// @throws DecodeError when the bytes are not a decodable image.
  void apply(const SampleContext& ctx, std::span<const std::byte> image, std::span<std::byte> out, Workspace& ws) const {
    const std::pair<ImageInfo, DecodeRegion> planned = plan_copies(ctx, image, ws);
    const ImageInfo& info = planned.first;  // not structured bindings: lambdas capture these
    const DecodeRegion& window = planned.second;
    decode_to_workspace(ctx, info, window, ws);
    std::size_t at = 0;
    for_each_copy([&](std::size_t k, const ImageAugment& a) {
      const detail::ViewCopy& copy = ws.copies[k];
      const ops::SamplePlan p = detail::on_window(copy.job, info, window).finish(0);
      if (copy.drawn.pixels.count == 0)
        a.resample_on_cpu(ctx, p, out.data() + at, ws.augment);
      else
        a.run_program(ctx, p, copy.drawn.pixels, out.data() + at, ws.augment);
      at += a.sample_spec().bytes();
    });
  }

  /// On a device: a step per view (`ProgramSamples` for a view with pixel transforms, else
  /// `ResampleSamples`) makes that view's copies of every sample from the window `stage` decoded,
  /// into their places in the sample's blob. A sample's reserve holds every copy finished on the
  /// CPU (a view with transforms: its u8 image, whose program the device still runs); its budget
  /// is a window of 4x the largest view's pixels, as `ImageAugment`'s. No device JPEG decoding:
  /// the window is the CPU's.
  /// @throws ConfigError when a copy of an even size (which the kernel stores 2 or 4 elements at
  /// once) would not start at a multiple of 4 elements: an odd size before it, or in the blob.
  [[nodiscard]] DeviceWork device_work() const {
    validate();
    const SampleSpec spec = sample_spec();
    const std::size_t element = dtype_size(spec.dtype);
    const std::vector<std::size_t> offsets = view_offsets();
    DeviceWork work;
    work.placement = DeviceWork::Placement::staged;
    work.copies = copy_count();
    std::size_t k = 0, largest = 0;
    for (std::size_t v = 0; v < views.size(); ++v) {
      const ImageAugment& a = views[v].augment;
      const Size size = a.output_size();
      const std::size_t bytes = a.sample_spec().bytes();
      // a device stores an even width's pixels in aligned runs
      if (size.width % 2 == 0 && offsets[k] % (4 * element) != 0)
        throw ConfigError("Views: view " + std::to_string(v) + " starts " + std::to_string(offsets[k]) +
                          " bytes into a sample, not a multiple of 4 elements, where a device stores it: give the "
                          "views before it even sizes");
      if (size.width % 2 == 0 && spec.bytes() % (4 * element) != 0)
        throw ConfigError("Views: a sample of " + std::to_string(spec.bytes()) +
                          " bytes is not a multiple of 4 elements, where a device stores the next one's view " +
                          std::to_string(v) + ": give every view an even size");
      work.steps.push_back(a.device_step({static_cast<std::int32_t>(k), views[v].count,
                                          static_cast<std::int32_t>(work.copies), offsets[k], bytes}));
      work.programs = work.programs || !a.transforms.empty();
      largest = std::max(largest, std::size_t(size.width) * std::size_t(size.height));
      k += static_cast<std::size_t>(views[v].count);
    }
    for_each_copy([&](std::size_t, const ImageAugment& a) { work.reserve += cpu_copy_bytes(a); });
    work.budget = std::max(work.reserve, 3 * 4 * largest);
    return work;
  }

  /// The host half of the device path: draws and plans every copy (`area.program` gets their
  /// programs), decodes the union window into `area` and writes the copies' plans on it (copy 0's
  /// returned, the others' in `area.plans`). When the window does not fit, or a copy needs more
  /// filter taps than the kernel holds, every copy is finished on the CPU into the sample's reserve
  /// (a view with transforms to its u8 image) and marked `precomputed`: the same bits either way.
  /// @throws DecodeError when the bytes are not a decodable image.
  [[nodiscard]] ops::SamplePlan stage(const SampleContext& ctx, std::span<const std::byte> image, StagingArea& area,
                                      Workspace& ws) const {
    const std::pair<ImageInfo, DecodeRegion> planned = plan_copies(ctx, image, ws);
    const ImageInfo& info = planned.first;  // not structured bindings: lambdas capture these
    const DecodeRegion& window = planned.second;
    const std::size_t copies = ws.copies.size();
    if (area.plans.size() != copies)
      throw Error("Views::stage: the slot holds " + std::to_string(area.plans.size()) + " plans a sample, not " +
                  std::to_string(copies));
    if (area.program)
      for (std::size_t k = 0; k < copies; ++k) area.program[k] = ws.copies[k].drawn.pixels;
    const detail::DecodeJob decode = detail::on_window(ws.copies.front().job, info, window);
    bool device = true;
    for (const detail::ViewCopy& copy : ws.copies) device = device && detail::device_resamples(copy.job.plan);
    if (const std::optional<std::size_t> at = device ? area.claim->try_allocate(decode.bytes()) : std::nullopt) {
      {
        StageTimer timer(ctx, ImageAugment::decode_stage);
        detail::NvtxRange range("decode");
        detail::decode_window(ws.augment.decoder, decode, reinterpret_cast<std::uint8_t*>(area.data + *at));
      }
      for (std::size_t k = 0; k < copies; ++k)
        area.plans[k] = detail::on_window(ws.copies[k].job, info, window).finish(static_cast<std::int64_t>(*at));
      return area.plans[0];
    }
    decode_to_workspace(ctx, info, window, ws);
    std::size_t off = area.claim->allocate_reserve();
    for_each_copy([&](std::size_t k, const ImageAugment& a) {
      ops::SamplePlan p = detail::on_window(ws.copies[k].job, info, window).finish(0);
      if (a.transforms.empty()) a.resample_on_cpu(ctx, p, area.data + off, ws.augment);
      else a.resample_program_image(ctx, p, area.data + off, ws.augment);
      p.precomputed = 1;
      p.src = {static_cast<std::int64_t>(off), 3, 0, 0, 0};
      area.plans[k] = p;
      off += cpu_copy_bytes(a);
    });
    return area.plans[0];
  }

 private:
  /// Reads the header, draws and plans every copy (`ws.copies`), and returns the image's header
  /// and the union of the copies' windows at the scale of the least scaled copy (the largest any
  /// copy would choose alone, so none has fewer source pixels per output pixel than alone).
  std::pair<ImageInfo, DecodeRegion> plan_copies(const SampleContext& ctx, std::span<const std::byte> image,
                                                 Workspace& ws) const {
    const std::size_t copies = copy_count();
    if (copies == 0) throw ConfigError("Views: no views (give at least one View)");
    ws.copies.resize(copies);
    StageTimer timer(ctx, ImageAugment::decode_stage, StageTimer::Counts::time);  // the decode counts the sample
    const ImageInfo info = ws.augment.decoder.read_header(image);
    int n = 1;
    for_each_copy([&](std::size_t k, const ImageAugment& a) {
      detail::ViewCopy& copy = ws.copies[k];
      const SampleContext c = copy_context(ctx, k);
      const auto [width, height] = detail::oriented_size(info, a.exif_orientation ? info.orientation : 1);
      copy.drawn = a.program(c);
      copy.plan = a.plan(c, width, height, copy.drawn);
      n = std::max(n, detail::dct_scale(info, copy.plan, a.scaled_decoding()));
    });
    DecodeRegion window;
    for_each_copy([&](std::size_t k, const ImageAugment& a) {
      detail::ViewCopy& copy = ws.copies[k];
      copy.job = detail::decode_job_at(info, a.exif_orientation ? info.orientation : 1, copy.plan, n, a.roi);
      window = k == 0 ? copy.job.region : detail::region_union(window, copy.job.region);
    });
    return {info, window};
  }

  /// Decodes the union `window` into the workspace.
  void decode_to_workspace(const SampleContext& ctx, const ImageInfo& info, const DecodeRegion& window,
                           Workspace& ws) const {
    const detail::DecodeJob decode = detail::on_window(ws.copies.front().job, info, window);
    StageTimer timer(ctx, ImageAugment::decode_stage);
    detail::NvtxRange range("decode");
    ws.augment.pixels.resize(decode.bytes());
    detail::decode_window(ws.augment.decoder, decode, ws.augment.pixels.data());
  }

  /// A copy's bytes in a sample's reserve when the CPU finishes it: the u8 image a device program
  /// runs on (a view with transforms), else the finished copy; 16-byte aligned.
  [[nodiscard]] static std::size_t cpu_copy_bytes(const ImageAugment& a) noexcept {
    const Size size = a.output_size();
    const std::size_t bytes =
        a.transforms.empty() ? a.sample_spec().bytes() : std::size_t(size.width) * std::size_t(size.height) * 3;
    return (bytes + ArenaAllocator::alignment - 1) / ArenaAllocator::alignment * ArenaAllocator::alignment;
  }

  void check_batch(const TensorView& images) const {
    const SampleSpec s = sample_spec();
    if (images.rank != 2 || images.dtype != s.dtype || images.shape[1] != s.shape[0] || images.strides[1] != 1)
      throw ConfigError("Views: expected a batch of this transform's samples, [N, " + std::to_string(s.shape[0]) +
                        "] of " + std::string(to_string(s.dtype)) + " with contiguous samples");
  }
};

static_assert(Transform<Views>);
static_assert(DeviceTransform<Views>);

}  // namespace v0
}  // namespace conveyor
