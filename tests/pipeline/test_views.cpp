// Views: several augmented views of each image, decoded once. Without decode scaling every view
// copy is its ImageAugment run alone with the copy's context, bit for bit (the union of the copies'
// windows decoded once changes no pixel), on seeded JPEGs, PNGs and the real photos, Exif-rotated
// ones among them; appending views leaves the earlier copies alone; with decode scaling the output
// is deterministic and a copy decoded at its own scale is still its lone run. Batches through the
// pipeline, the per-copy and per-group tensors, the stats and the validation.

#include <conveyor/conveyor.hpp>
#include <conveyor/pipeline/views.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/digest.hpp"
#include "support/host_device.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace conveyor;
namespace fs = std::filesystem;

namespace {

void add_file(InMemory& d, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!bytes.empty());
  d.add(std::as_bytes(std::span(bytes)), static_cast<std::int64_t>(d.size() % 5));
}

/// Seeded JPEGs of assorted sizes and samplings (grey and progressive among them), a few PNGs and
/// the smaller real photos (grey, progressive, 4:2:2, 4:4:4).
InMemory mixed_images(const fs::path& data) {
  InMemory d = conveyor_test::jpeg_dataset(14, 3);
  for (const char* name : {"basn2c08.png", "basn0g08.png"}) add_file(d, data / "png" / "pngsuite" / name);
  for (const char* name : {"darktable_style_image-1.jpg", "gimp_beavis.jpg", "pillow_flower.jpg", "pillow_iptc.jpg",
                           "skimage_rocket.jpg", "jpegdecoder_tower_progressive.jpg"})
    add_file(d, data / "photos" / name);
  return d;
}

/// The photos tagged with each Exif orientation 1 to 8 (landscape and portrait, 1800 x 1200).
InMemory exif_photos(const fs::path& data) {
  InMemory d;
  for (const char* kind : {"Landscape", "Portrait"})
    for (int o = 1; o <= 8; ++o) add_file(d, data / "photos" / ("exif_" + std::string(kind) + "_" + std::to_string(o) + ".jpg"));
  return d;
}

/// A few larger photos (1 to 5 megapixels), where decode scaling picks scales below 8/8.
InMemory large_photos(const fs::path& data) {
  InMemory d;
  for (const char* name : {"mate_GreenMeadow.jpg", "skimage_hubble_deep_field.jpg", "mate_Storm.jpg", "opencv_fruits.jpg"})
    add_file(d, data / "photos" / name);
  return d;
}

/// DINO's recipe at small sizes: two global views (64, scale (0.4, 1)) with their own pixel
/// transforms, then `locals` local views (32, scale (0.05, 0.4)).
Views dino(DType dtype, Layout layout, bool scaling, int locals = 6) {
  const auto jitter = [] {
    return RandomApply{.transforms = {ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.2, .hue = 0.1}},
                       .p = 0.8};
  };
  ImageAugment global{.crop = RandomResizedCrop{.size = 64, .scale = {0.4, 1.0}}, .flip = {.p = 0.5}, .dtype = dtype,
                      .layout = layout, .decode_scaling = scaling};
  if (dtype != DType::u8) global.normalize = Normalize::imagenet();
  ImageAugment first = global, second = global, local = global;
  first.transforms = {jitter(), RandomGrayscale{.p = 0.2}, GaussianBlur{.kernel_size = 7, .sigma = Numbers{0.1, 2.0}}};
  second.transforms = {jitter(), RandomGrayscale{.p = 0.2},
                       RandomApply{.transforms = {GaussianBlur{.kernel_size = 7, .sigma = Numbers{0.1, 2.0}}}, .p = 0.1},
                       RandomSolarize{.threshold = 128.0, .p = 0.2}};
  local.crop = RandomResizedCrop{.size = 32, .scale = {0.05, 0.4}};
  local.transforms = {jitter(), RandomGrayscale{.p = 0.2},
                      RandomApply{.transforms = {GaussianBlur{.kernel_size = 5, .sigma = Numbers{0.1, 2.0}}}, .p = 0.5}};
  Views v{{View{first}, View{second}, View{local, locals}}};
  v.validate();
  return v;
}

template <class T>
std::vector<std::byte> run_views(const T& t, std::span<const std::byte> image, const SampleContext& ctx) {
  auto ws = t.make_workspace();
  std::vector<std::byte> out(t.sample_spec().bytes());
  t.apply(ctx, image, out, ws);
  return out;
}

/// Copy `k`'s bytes in a sample's blob.
std::vector<std::byte> copy_bytes(const Views& v, const std::vector<std::byte>& blob, std::size_t k) {
  const std::size_t at = v.view_offsets()[k], n = v.views[v.view_of(k)].augment.sample_spec().bytes();
  return {blob.begin() + std::ptrdiff_t(at), blob.begin() + std::ptrdiff_t(at + n)};
}

/// Every copy of `v` on every sample of `d` equals its ImageAugment alone with its context.
void require_copies_are_lone_runs(const Views& v, const InMemory& d, std::uint64_t seed, std::uint64_t epoch) {
  auto ws = v.make_workspace();  // one workspace for every sample, as a worker's
  std::vector<std::byte> blob(v.sample_spec().bytes());
  for (std::uint64_t i = 0; i < d.size(); ++i) {
    const SampleContext ctx{seed, epoch, i, nullptr};
    v.apply(ctx, d.bytes(i), blob, ws);
    for (std::size_t k = 0; k < v.copy_count(); ++k) {
      INFO("sample " << i << ", copy " << k);
      REQUIRE(copy_bytes(v, blob, k) == run_views(v.views[v.view_of(k)].augment, d.bytes(i), Views::copy_context(ctx, k)));
    }
  }
}

/// The element at (n, i...) of a strided tensor, as bytes.
std::vector<std::byte> element(const TensorView& t, std::span<const std::int64_t> at) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < at.size(); ++d) off += at[d] * t.strides[d];
  const std::size_t size = dtype_size(t.dtype);
  const auto* p = static_cast<const std::byte*>(t.data) + off * std::int64_t(size);
  return {p, p + size};
}

/// A copy tensor's sample `n`, gathered through its strides into the layout ImageAugment writes.
std::vector<std::byte> gather(const TensorView& t, std::int64_t n) {
  REQUIRE(t.rank == 4);
  std::vector<std::byte> out;
  for (std::int64_t a = 0; a < t.shape[1]; ++a)
    for (std::int64_t b = 0; b < t.shape[2]; ++b)
      for (std::int64_t c = 0; c < t.shape[3]; ++c) {
        const std::array<std::int64_t, 4> at{n, a, b, c};
        const auto e = element(t, at);
        out.insert(out.end(), e.begin(), e.end());
      }
  return out;
}

}  // namespace

TEST_CASE("Views: each copy is its ImageAugment run alone with the copy's context, without decode scaling",
          "[views]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory images = mixed_images(data);
  for (const DType dtype : {DType::f32, DType::bf16, DType::u8})
    for (const Layout layout : {Layout::NCHW, Layout::NHWC}) {
      INFO("dtype " << to_string(dtype) << ", layout " << to_string(layout));
      const Views v = dino(dtype, layout, false);
      REQUIRE(v.copy_count() == 8);
      require_copies_are_lone_runs(v, images, 7, 1);
    }
  // The copies draw apart: the local copies of a sample are not one image repeated.
  const Views v = dino(DType::u8, Layout::NHWC, false);
  int differing = 0;
  for (std::uint64_t i = 0; i < images.size(); ++i) {
    const auto blob = run_views(v, images.bytes(i), {7, 1, i, nullptr});
    differing += copy_bytes(v, blob, 2) != copy_bytes(v, blob, 3);
  }
  CHECK(differing >= int(images.size()) - 1);
}

TEST_CASE("Views: one view is its ImageAugment bit for bit, with decode scaling or without", "[views]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  InMemory images = mixed_images(data);
  const InMemory large = large_photos(data);
  for (std::uint64_t i = 0; i < large.size(); ++i) images.add(large.bytes(i), 0);
  ImageAugment train = ImageAugment::train(48);  // decode scaling on, as RandomResizedCrop's default
  train.transforms = {ColorJitter{.brightness = 0.4, .saturation = 0.4}, RandomSolarize{.threshold = 100.0, .p = 0.5}};
  ImageAugment eval = ImageAugment::eval(56, 48);
  eval.layout = Layout::NHWC;
  eval.dtype = DType::bf16;
  for (const ImageAugment& a : {train, ImageAugment::train(40), eval}) {
    const Views alone{{View{a}}};
    alone.validate();
    REQUIRE(alone.sample_spec().bytes() == a.sample_spec().bytes());
    for (std::uint64_t i = 0; i < images.size(); ++i) {
      INFO("sample " << i);
      REQUIRE(run_views(alone, images.bytes(i), {4, 2, i, nullptr}) == run_views(a, images.bytes(i), {4, 2, i, nullptr}));
    }
  }
}

TEST_CASE("Views: appending views, or copies, leaves the earlier copies' bytes alone", "[views]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory images = mixed_images(data);
  const Views full = dino(DType::f32, Layout::NCHW, false, 4);
  const Views globals{{full.views[0], full.views[1]}};
  const Views fewer_locals{{full.views[0], full.views[1], View{full.views[2].augment, 2}}};
  Views more = full;
  more.views.push_back(View{full.views[0].augment, 2});
  for (std::uint64_t i = 0; i < images.size(); ++i) {
    INFO("sample " << i);
    const SampleContext ctx{9, 0, i, nullptr};
    const auto all = run_views(more, images.bytes(i), ctx);
    for (const Views* prefix : {&globals, &fewer_locals, &full}) {
      const auto part = run_views(*prefix, images.bytes(i), ctx);
      REQUIRE(std::equal(part.begin(), part.end(), all.begin()));
    }
  }
}

TEST_CASE("Views: with decode scaling the copies are deterministic, and one decoded at its own scale is its lone run",
          "[views]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  InMemory images = large_photos(data);
  const InMemory small = mixed_images(data);
  for (std::uint64_t i = 0; i < small.size(); i += 3) images.add(small.bytes(i), 0);
  const Views v = dino(DType::u8, Layout::NHWC, true);
  auto ws = v.make_workspace();
  int own_scale = 0, larger_scale = 0;
  for (std::uint64_t i = 0; i < images.size(); ++i) {
    INFO("sample " << i);
    const SampleContext ctx{11, 0, i, nullptr};
    std::vector<std::byte> reused(v.sample_spec().bytes());
    v.apply(ctx, images.bytes(i), reused, ws);  // after the other samples, in the same workspace
    const auto fresh = run_views(v, images.bytes(i), ctx);
    REQUIRE(fresh == reused);
    // The scale each copy would choose alone; the sample is decoded at the largest.
    std::vector<int> scales;
    for (std::size_t k = 0; k < v.copy_count(); ++k) {
      const ImageAugment& a = v.views[v.view_of(k)].augment;
      auto lone_ws = a.make_workspace();
      const SampleContext c = Views::copy_context(ctx, k);
      scales.push_back(a.plan_decode(c, images.bytes(i), lone_ws, a.program(c)).region.scale_num);
    }
    const int n = *std::max_element(scales.begin(), scales.end());
    for (std::size_t k = 0; k < v.copy_count(); ++k) {
      INFO("copy " << k << " alone at " << scales[k] << "/8, decoded at " << n << "/8");
      const auto lone = run_views(v.views[v.view_of(k)].augment, images.bytes(i), Views::copy_context(ctx, k));
      const auto got = copy_bytes(v, fresh, k);
      if (scales[k] == n) {
        ++own_scale;
        REQUIRE(got == lone);
      } else {
        // More source pixels than alone: the same crop, within a few levels on average.
        ++larger_scale;
        double diff = 0;
        for (std::size_t b = 0; b < got.size(); ++b)
          diff += std::abs(std::to_integer<int>(got[b]) - std::to_integer<int>(lone[b]));
        CHECK(diff / double(got.size()) < 4.0);
      }
    }
  }
  CHECK(own_scale > 0);
  CHECK(larger_scale > 0);  // the large photos make the local copies choose smaller scales alone
}

TEST_CASE("Views: Exif orientation is applied as each view's ImageAugment applies it", "[views]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory photos = exif_photos(data);
  ImageAugment upright{.crop = RandomResizedCrop{.size = 48, .scale = {0.3, 1.0}}, .flip = {.p = 0.5},
                       .normalize = Normalize::imagenet(), .layout = Layout::NHWC, .exif_orientation = true,
                       .decode_scaling = false};
  ImageAugment local = upright;
  local.crop = RandomResizedCrop{.size = 24, .scale = {0.05, 0.4}};
  local.transforms = {RandomGrayscale{.p = 0.5}};
  ImageAugment stored = upright;  // as stored, ignoring the tag
  stored.exif_orientation = false;
  const Views v{{View{upright}, View{local, 2}, View{stored}}};
  v.validate();
  require_copies_are_lone_runs(v, photos, 5, 0);
  // The tag matters: the same draws on the photo as stored give other bytes for rotated ones.
  const Views untagged{{View{stored}}};
  int differ = 0;
  for (std::uint64_t i = 0; i < photos.size(); ++i)
    differ += run_views(untagged, photos.bytes(i), {5, 0, i, nullptr}) != copy_bytes(v, run_views(v, photos.bytes(i), {5, 0, i, nullptr}), 0);
  CHECK(differ >= 12);
}

TEST_CASE("Views: a pipeline's batches are the same for 0 and 3 workers and through a device's steps, and each "
          "copy tensor holds the lone runs",
          "[views][pipeline]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory images = mixed_images(data);
  const Views v = dino(DType::bf16, Layout::NCHW, false, 3);
  const auto batches = [&](int workers, int device, std::size_t arena_bytes = 0) {
    BatchPipeline pipe(images, RandomSampler(images.size(), {.seed = 2}), v,
                       {.batch_size = 5, .workers = workers, .seed = 13, .device = device, .arena_bytes = arena_bytes});
    return conveyor_test::digests(pipe, 2);
  };
  const auto expected = batches(0, cpu_device);
  CHECK(batches(3, cpu_device) == expected);
  CHECK(batches(1, cpu_device) == expected);
  {
    // On a device the worker decodes the union window into the slot and a step per view makes its
    // copies (here the host stand-in: the CPU's functions in the kernels' places).
    const conveyor_test::HostDevice device;
    const DeviceWork work = device_work_of(v);
    CHECK(work.placement == DeviceWork::Placement::staged);
    CHECK(work.copies == v.copy_count());
    CHECK(work.steps.size() == 3);
    CHECK(batches(3, 0) == expected);
    // Room for little more than the reserves: the photos' windows (full scale) do not fit, and
    // their copies are finished on the CPU into the reserve, the seeded images' still staged.
    CHECK(batches(3, 0, 1) == expected);
  }

  BatchPipeline pipe(images, SequentialSampler(images.size()), v, {.batch_size = 4, .workers = 2, .seed = 13});
  pipe.set_epoch(1);
  std::size_t samples = 0;
  for (const Batch& b : pipe) {
    REQUIRE(b.images().rank == 2);
    REQUIRE(b.images().shape[1] == v.sample_spec().shape[0]);
    const auto copies = v.copy_tensors(b.images());
    const auto groups = v.group_tensors(b.images());
    REQUIRE(copies.size() == 5);
    REQUIRE(groups.size() == 2);
    for (std::size_t j = 0; j < b.size(); ++j, ++samples) {
      const auto index = static_cast<std::uint64_t>(b.indices()[j]);
      for (std::size_t k = 0; k < copies.size(); ++k) {
        INFO("index " << index << ", copy " << k);
        const auto lone = run_views(v.views[v.view_of(k)].augment, images.bytes(index),
                              Views::copy_context({13, 1, index, nullptr}, k));
        REQUIRE(gather(copies[k], std::int64_t(j)) == lone);
        // The group tensor's element (j, k - first, 0, 0, 0) is the copy's first element.
        const std::size_t g = k < 2 ? 0 : 1, within = k < 2 ? k : k - 2;
        const std::array<std::int64_t, 5> at{std::int64_t(j), std::int64_t(within), 0, 0, 0};
        REQUIRE(element(groups[g], at) == std::vector<std::byte>(lone.begin(), lone.begin() + 2));
      }
    }
  }
  CHECK(samples == images.size());
  // The stage table: one decode per sample, one augmentation per copy.
  const PipelineStats st = pipe.stats();
  REQUIRE(st.stages.size() == 3);
  CHECK(st.stages[1].name == "decode");
  CHECK(st.stages[2].name == "augment");
  CHECK(st.stages[1].count == images.size());
  CHECK(st.stages[2].count == images.size() * v.copy_count());
}

TEST_CASE("Views: copy and group tensors view the batch in place, with the blob as their batch stride", "[views]") {
  ImageAugment g{.crop = RandomResizedCrop{.size = 64}}, l{.crop = RandomResizedCrop{.size = 32}};
  const Views v{{View{g, 2}, View{l, 6}}};
  v.validate();
  const std::int64_t blob = 2 * 3 * 64 * 64 + 6 * 3 * 32 * 32;
  REQUIRE(v.sample_spec() == SampleSpec{DType::f32, 1, {blob, 0, 0}});
  const std::vector<std::size_t> offsets = v.view_offsets();
  REQUIRE(offsets.size() == 8);
  CHECK(offsets[0] == 0);
  CHECK(offsets[1] == 3 * 64 * 64 * 4);
  CHECK(offsets[2] == 2 * 3 * 64 * 64 * 4);
  CHECK(offsets[7] == (2 * 3 * 64 * 64 + 5 * 3 * 32 * 32) * 4);
  std::vector<float> memory(std::size_t(3 * blob));
  const TensorView images = TensorView::contiguous(memory.data(), DType::f32, {3, blob});
  const auto copies = v.copy_tensors(images);
  REQUIRE(copies.size() == 8);
  for (std::size_t k = 0; k < 8; ++k) {
    const std::int64_t s = k < 2 ? 64 : 32;
    CHECK(copies[k].rank == 4);
    CHECK(copies[k].dtype == DType::f32);
    CHECK(copies[k].data == static_cast<void*>(reinterpret_cast<std::byte*>(memory.data()) + offsets[k]));
    CHECK(copies[k].shape == std::array<std::int64_t, 5>{3, 3, s, s, 0});
    CHECK(copies[k].strides == std::array<std::int64_t, 5>{blob, s * s, s, 1, 0});
  }
  const auto groups = v.group_tensors(images);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].data == memory.data());
  CHECK(groups[0].rank == 5);
  CHECK(groups[0].shape == std::array<std::int64_t, 5>{3, 2, 3, 64, 64});
  CHECK(groups[0].strides == std::array<std::int64_t, 5>{blob, 3 * 64 * 64, 64 * 64, 64, 1});
  CHECK(groups[1].data == copies[2].data);
  CHECK(groups[1].shape == std::array<std::int64_t, 5>{3, 6, 3, 32, 32});
  CHECK(groups[1].strides == std::array<std::int64_t, 5>{blob, 3 * 32 * 32, 32 * 32, 32, 1});

  // NHWC, and same-size copies of different views in one group; a later copy of that size in another.
  ImageAugment gh = g, lh = l;
  gh.layout = lh.layout = Layout::NHWC;
  ImageAugment other = gh;
  other.flip.p = 0.5;
  const Views w{{View{gh}, View{other}, View{lh, 3}, View{gh}}};
  w.validate();
  const auto runs = w.groups();
  REQUIRE(runs.size() == 3);
  CHECK((runs[0].first == 0 && runs[0].count == 2));
  CHECK((runs[1].first == 2 && runs[1].count == 3));
  CHECK((runs[2].first == 5 && runs[2].count == 1));
  const std::int64_t wblob = 3 * 64 * 64 * 3 + 3 * 32 * 32 * 3;
  std::vector<float> wmemory(std::size_t(2 * wblob));
  const TensorView wimages = TensorView::contiguous(wmemory.data(), DType::f32, {2, wblob});
  const auto wgroups = w.group_tensors(wimages);
  REQUIRE(wgroups.size() == 3);
  CHECK(wgroups[1].shape == std::array<std::int64_t, 5>{2, 3, 32, 32, 3});
  CHECK(wgroups[1].strides == std::array<std::int64_t, 5>{wblob, 32 * 32 * 3, 32 * 3, 3, 1});
  CHECK(wgroups[2].data == static_cast<void*>(reinterpret_cast<std::byte*>(wmemory.data()) + w.view_offsets()[5]));
  const auto wcopies = w.copy_tensors(wimages);
  CHECK(wcopies[4].shape == std::array<std::int64_t, 5>{2, 32, 32, 3, 0});
  CHECK(wcopies[4].strides == std::array<std::int64_t, 5>{wblob, 32 * 3, 3, 1, 0});

  // Another transform's batch is refused.
  const TensorView wrong = TensorView::contiguous(memory.data(), DType::f32, {3, blob - 1});
  CHECK_THROWS_AS(v.copy_tensors(wrong), ConfigError);
  const TensorView wrong_dtype = TensorView::contiguous(memory.data(), DType::bf16, {3, blob});
  CHECK_THROWS_AS(v.group_tensors(wrong_dtype), ConfigError);
}

TEST_CASE("Views: copy streams are keyed by (seed, copy): copy 0 the sample's own, the others apart", "[views]") {
  const SampleContext ctx{42, 3, 17, nullptr};
  CHECK(Views::copy_context(ctx, 0).seed == 42);
  CHECK(Views::copy_context(ctx, 1).seed == Views::copy_seed(42, 1));
  CHECK(Views::copy_context(ctx, 1).epoch == 3);
  CHECK(Views::copy_context(ctx, 1).index == 17);
  std::vector<std::uint64_t> seeds{42};
  for (std::size_t k = 1; k < 64; ++k) seeds.push_back(Views::copy_seed(42, k));
  std::sort(seeds.begin(), seeds.end());
  CHECK(std::adjacent_find(seeds.begin(), seeds.end()) == seeds.end());
  CHECK(Views::copy_seed(42, 1) != Views::copy_seed(43, 1));
}

TEST_CASE("Views: validation names the view and what is wrong", "[views]") {
  const auto message = [](const Views& v) {
    try {
      v.validate();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const ImageAugment a = ImageAugment::train(32);
  CHECK_THAT(message(Views{}), Catch::Contains("Views: no views"));
  CHECK_THAT(message(Views{{View{a}, View{a, 0}}}), Catch::Contains("Views: view 1: count must be >= 1, got 0"));
  ImageAugment bf = a;
  bf.dtype = DType::bf16;
  CHECK_THAT(message(Views{{View{a}, View{a}, View{bf}}}),
             Catch::Contains("Views: view 2: dtype bf16 differs from view 0's f32"));
  ImageAugment nhwc = a;
  nhwc.layout = Layout::NHWC;
  CHECK_THAT(message(Views{{View{a}, View{nhwc, 2}}}),
             Catch::Contains("Views: view 1: layout nhwc differs from view 0's nchw"));
  ImageAugment bad = a;
  bad.crop = RandomResizedCrop{.size = 0};
  CHECK_THAT(message(Views{{View{a}, View{bad}}}), Catch::Contains("Views: view 1: ImageAugment: crop size must be > 0"));
  ImageAugment u8 = a;
  u8.dtype = DType::u8;  // and still normalised
  CHECK_THAT(message(Views{{View{u8}}}), Catch::Contains("Views: view 0: ImageAugment: u8 output cannot be normalized"));
  ImageAugment lenient = a;
  lenient.decode.lenient = true;
  CHECK_THAT(message(Views{{View{a}, View{lenient}}}), Catch::Contains("Views: view 1: decode options differ"));
  ImageAugment sized = a;  // sizes may differ
  sized.crop = RandomResizedCrop{.size = 16};
  CHECK(message(Views{{View{a}, View{sized, 3}}}) == "no error");

  // The pipeline validates it, and refuses a batch transform for its blob.
  const InMemory d = conveyor_test::jpeg_dataset(4);
  CHECK_THROWS_AS(BatchPipeline(d, SequentialSampler(d.size()), Views{{View{a}, View{bf}}}, {.batch_size = 2}), ConfigError);
  CHECK_THROWS_AS(BatchPipeline(d, SequentialSampler(d.size()), Views{{View{a}}},
                                {.batch_size = 2, .batch_transform = BatchTransform{MixUp{.num_classes = 5}}}),
                  ConfigError);
}

TEST_CASE("Views on a device: views without pixel transforms resampled by their own step, u8 and f32, NHWC and NCHW",
          "[views][pipeline]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory images = mixed_images(data);
  for (const DType dtype : {DType::u8, DType::f32})
    for (const Layout layout : {Layout::NHWC, Layout::NCHW}) {
      INFO(to_string(dtype) << " " << to_string(layout));
      const Views d = dino(dtype, layout, true, 2);
      ImageAugment plain = d.views[2].augment;
      plain.transforms.clear();
      plain.crop = RandomResizedCrop{.size = 36, .scale = {0.1, 0.5}};
      // Three kinds: transforms (a program step), none (a resampling step of 3 copies), transforms.
      const Views v{{d.views[0], View{plain, 3}, View{d.views[2].augment, 2}}};
      const auto batches = [&](int device, std::size_t arena_bytes = 0) {
        BatchPipeline pipe(images, RandomSampler(images.size(), {.seed = 5}), v,
                           {.batch_size = 4, .workers = 3, .seed = 21, .device = device, .arena_bytes = arena_bytes});
        return conveyor_test::digests(pipe, 2);
      };
      const auto expected = batches(cpu_device);
      const conveyor_test::HostDevice device;
      CHECK(batches(0) == expected);
      CHECK(batches(0, 1) == expected);
    }
}

TEST_CASE("Views on a device: a copy placed where the kernel's vector stores cannot go is refused, naming the view",
          "[views]") {
  ImageAugment odd{.crop = RandomResizedCrop{.size = 33}, .dtype = DType::u8}, even = odd;
  even.crop = RandomResizedCrop{.size = 32};
  ImageAugment other = even;
  other.crop = RandomResizedCrop{.size = 34};
  CHECK(Views{{View{even, 2}, View{other}}}.device_work().copies == 3);
  CHECK(Views{{View{odd}}}.device_work().copies == 1);  // no vector stores for an odd size
  const Views odd_first{{View{odd}, View{even}}}, odd_last{{View{even, 2}, View{odd}}};
  CHECK_THROWS_WITH(odd_first.device_work(), Catch::Contains("view 1 starts 3267 bytes into a sample"));
  CHECK_THROWS_WITH(odd_last.device_work(), Catch::Contains("a sample of 9411 bytes is not a multiple of 4 elements"));
}
