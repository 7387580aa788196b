// Batch transforms (MixUp, CutMix, a choice of them) on the CPU backend: the draws' distributions,
// and a pipeline's mixed batches against the same pipeline's unmixed ones mixed by a plain,
// out-of-place reference, for worker counts that cut batches into uneven chunks, a short last
// batch, every dtype and both layouts, and a resumed epoch. torchvision's own MixUp and CutMix are
// the reference of tests/parity/test_batch_transforms.py. On a device (the host backend of
// support/host_device.hpp, whose mixing step uses the CPU's functions): the soft targets and draws
// the workers write into the pinned arena, the step after the transform's, the targets' copies.

#include <conveyor/conveyor.hpp>

#include "support/datasets.hpp"
#include "support/host_device.hpp"
#include "support/statistics.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <array>
#include <cstring>
#include <string>
#include <vector>

using namespace conveyor;

namespace {

/// The regularised incomplete beta function I_x(a, b) (Lentz's continued fraction), the CDF of
/// Beta(a, b), for the distribution test.
double beta_cdf(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - beta_cdf(1 - x, b, a);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x)) / a;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double numerator;
    if (i == 0)
      numerator = 1;
    else if (i % 2 == 0)
      numerator = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
    else
      numerator = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + numerator * d;
    d = std::abs(d) < 1e-300 ? 1e-300 : d;
    d = 1 / d;
    c = 1 + numerator / c;
    c = std::abs(c) < 1e-300 ? 1e-300 : c;
    const double cd = c * d;
    f *= cd;
    if (std::abs(1 - cd) < 1e-15) break;
  }
  return front * (f - 1);
}

MixGeometry image(std::int64_t h, std::int64_t w, DType dtype = DType::f32, Layout layout = Layout::NCHW) {
  return {dtype, layout, 3, h, w};
}

using Pipe = BatchPipeline<InMemory, SequentialSampler, ImageAugment>;

ImageAugment augment(DType dtype, Layout layout, int size = 20) {
  ImageAugment a = ImageAugment::train(size);
  a.dtype = dtype;
  a.layout = layout;
  if (dtype == DType::u8) a.normalize.reset();
  return a;
}

struct Epoch {
  std::vector<std::vector<std::byte>> images;  // one per batch
  std::vector<std::vector<std::int64_t>> labels;
  std::vector<std::vector<float>> targets;
  std::vector<BatchMix> mixes;
};

Epoch run(Pipe& pipe, std::uint64_t epoch, std::uint64_t first = 0) {
  Epoch e;
  pipe.set_epoch(epoch, first);
  for (const Batch& b : pipe) {
    const auto* p = static_cast<const std::byte*>(b.images().data);
    e.images.emplace_back(p, p + b.images().nbytes());
    const auto* l = static_cast<const std::int64_t*>(b.labels().data);
    e.labels.emplace_back(l, l + b.size());
    if (b.targets().data) {
      const auto* t = static_cast<const float*>(b.targets().data);
      e.targets.emplace_back(t, t + b.targets().numel());
    }
    e.mixes.push_back(b.mix());
  }
  return e;
}

/// torchvision's MixUp and CutMix (and timm's, whose pairs differ) written out of place, sample by
/// sample, on an unmixed batch.
std::vector<std::byte> mixed_by_reference(const std::vector<std::byte>& x, const MixGeometry& g, const BatchMix& m) {
  const std::size_t bytes = g.sample_bytes(), n = x.size() / bytes;
  std::vector<std::byte> out = x;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::byte> self(x.begin() + std::ptrdiff_t(i * bytes), x.begin() + std::ptrdiff_t((i + 1) * bytes));
    const std::byte* partner = x.data() + m.partner(i, n) * bytes;
    mix_sample(self.data(), partner, g, m);
    std::memcpy(out.data() + i * bytes, self.data(), bytes);
  }
  return out;
}

}  // namespace

TEST_CASE("MixUp's lambda follows Beta(alpha, alpha), rounded to float32 as torch's sample is", "[batch_transform]") {
  for (const double alpha : {0.2, 1.0, 2.5}) {
    CAPTURE(alpha);
    const BatchTransform t = MixUp{.alpha = alpha, .num_classes = 10};
    std::vector<double> lams;
    for (std::uint64_t b = 0; b < 20000; ++b) {
      const BatchMix m = t.draw(7, 3, b, image(224, 224));
      REQUIRE(m.kind == BatchMix::Kind::mixup);
      REQUIRE(m.label_lam == m.lam);
      // The variate itself, before float32 rounds it: a Beta(0.2, 0.2) puts 1.6 % of its mass within
      // float32's half ulp of 1, which the rounding turns into an atom at 1.
      CounterRng rng(7, 3, b, RngOp::batch_transform);
      const double lam = detail::beta_variate(rng, alpha, alpha);
      REQUIRE(m.lam == double(static_cast<float>(lam)));
      REQUIRE((lam >= 0.0 && lam <= 1.0));
      lams.push_back(lam);
    }
    const double d = conveyor_test::ks_distance(lams, [&](double x) { return beta_cdf(x, alpha, alpha); });
    CHECK(d < conveyor_test::ks_bound(lams.size(), 1e-4));
  }
}

TEST_CASE("CutMix's box has half sizes int(r W) and int(r H), is clamped to the image, and sets the labels' lambda",
          "[batch_transform]") {
  const BatchTransform t = CutMix{.alpha = 1.0, .num_classes = 10};
  const MixGeometry g = image(37, 53);
  for (std::uint64_t b = 0; b < 20000; ++b) {
    const BatchMix m = t.draw(1, 0, b, g);
    REQUIRE(m.kind == BatchMix::Kind::cutmix);
    REQUIRE(0 <= m.x1);
    REQUIRE(m.x1 <= m.x2);
    REQUIRE(m.x2 <= g.width);
    REQUIRE(0 <= m.y1);
    REQUIRE(m.y1 <= m.y2);
    REQUIRE(m.y2 <= g.height);
    const double r = 0.5 * std::sqrt(1.0 - double(m.lam));
    const auto half_w = std::int64_t(r * double(g.width)), half_h = std::int64_t(r * double(g.height));
    // An unclamped side is the whole 2 x half size; a clamped one is shorter.
    CHECK(m.x2 - m.x1 <= 2 * half_w);
    CHECK(m.y2 - m.y1 <= 2 * half_h);
    if (m.x1 > 0 && m.x2 < g.width) CHECK(m.x2 - m.x1 == 2 * half_w);
    if (m.y1 > 0 && m.y2 < g.height) CHECK(m.y2 - m.y1 == 2 * half_h);
    CHECK(m.label_lam == 1.0 - double((m.x2 - m.x1) * (m.y2 - m.y1)) / double(g.width * g.height));
  }
}

TEST_CASE("timm's Mixup mixes with probability prob, CutMix with switch_prob, and pairs i with N - 1 - i",
          "[batch_transform]") {
  const BatchTransform t = TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .prob = 0.6, .switch_prob = 0.25,
                                     .label_smoothing = 0.1, .num_classes = 10};
  std::size_t mixed = 0, cut = 0;
  const std::size_t n = 40000;
  for (std::uint64_t b = 0; b < n; ++b) {
    const BatchMix m = t.draw(3, 0, b, image(32, 48));
    REQUIRE(m.pairing == BatchMix::Pairing::mirror);
    REQUIRE(m.partner(0, 6) == 5);
    REQUIRE(m.partner(2, 5) == 2);
    REQUIRE(m.off_value == float(0.1 / 10));
    REQUIRE(m.on_value == float(1.0 - 0.1 + 0.1 / 10));
    if (m.kind == BatchMix::Kind::none) {
      REQUIRE(m.lam == 1.0);
      continue;
    }
    ++mixed;
    if (m.kind != BatchMix::Kind::cutmix) continue;
    ++cut;
    // rand_bbox: rows [cy - cut // 2, cy + (cut + 1) // 2) clipped; correct_lam from the clipped area.
    const auto cut_h = std::int64_t(32 * std::sqrt(1.0 - m.lam));
    CHECK(m.y2 - m.y1 <= cut_h);
    if (m.y1 > 0 && m.y2 < 32) CHECK(m.y2 - m.y1 == cut_h);
    CHECK(m.label_lam == 1.0 - double((m.y2 - m.y1) * (m.x2 - m.x1)) / (32.0 * 48.0));
  }
  CHECK(conveyor_test::binomial_fits(mixed, n, 0.6));
  CHECK(conveyor_test::binomial_fits(cut, mixed, 0.25));
}

TEST_CASE("timm's pair and elem modes draw each pair or sample as its batch mode draws a batch, lambda in float32",
          "[batch_transform]") {
  const MixGeometry g = image(32, 48, DType::bf16);
  for (const auto mode : {TimmMixup::Mode::elem, TimmMixup::Mode::pair}) {
    CAPTURE(int(mode));
    const BatchTransform t = TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .prob = 0.6, .switch_prob = 0.25,
                                       .num_classes = 10, .mode = mode};
    std::size_t draws = 0, mixed = 0, cut = 0;
    std::vector<double> lams;
    for (std::uint64_t b = 0; b < 4000; ++b) {
      const BatchMix whole = t.draw(3, 0, b, g);
      REQUIRE((whole.per_sample && whole.kind == BatchMix::Kind::none && whole.images_dtype == DType::bf16));
      const std::vector<BatchMix> each = t.draw_samples(3, 0, b, g, 9);
      REQUIRE(each.size() == 9);
      REQUIRE(t.draw_samples(3, 0, b, g, 9)[4].lam == each[4].lam);  // a function of the batch
      const std::size_t units = mode == TimmMixup::Mode::pair ? 4 : 9;
      if (mode == TimmMixup::Mode::pair) REQUIRE(each[4].kind == BatchMix::Kind::none);  // an odd batch's middle
      for (std::size_t i = 0; i < units; ++i) {
        const BatchMix& m = each[i];
        REQUIRE((m.per_sample && m.pairing == BatchMix::Pairing::mirror));
        if (mode == TimmMixup::Mode::pair)
          REQUIRE((each[8 - i].kind == m.kind && each[8 - i].lam == m.lam && each[8 - i].x1 == m.x1 && each[8 - i].y2 == m.y2));
        ++draws;
        if (m.kind == BatchMix::Kind::none) {
          REQUIRE((m.lam == 1.0 && m.label_lam == 1.0));
          continue;
        }
        ++mixed;
        REQUIRE(m.lam == double(float(m.lam)));  // numpy's float32 array
        REQUIRE(m.label_lam == double(float(m.label_lam)));
        if (m.kind == BatchMix::Kind::cutmix) {
          ++cut;
          CHECK(m.label_lam == double(float(1.0 - double((m.y2 - m.y1) * (m.x2 - m.x1)) / (32.0 * 48.0))));
        } else {
          lams.push_back(m.lam);
        }
      }
    }
    CHECK(conveyor_test::binomial_fits(mixed, draws, 0.6));
    CHECK(conveyor_test::binomial_fits(cut, mixed, 0.25));
    const double d = conveyor_test::ks_distance(lams, [](double x) { return beta_cdf(x, 0.8, 0.8); });
    CHECK(d < conveyor_test::ks_bound(lams.size(), 1e-4) + 1e-6);  // float32's rounding
  }
}

TEST_CASE("Per-sample targets weigh labels as a tensor of the images' dtype", "[batch_transform]") {
  BatchMix m{.kind = BatchMix::Kind::mixup, .pairing = BatchMix::Pairing::mirror, .lam = 0.3f, .label_lam = 0.3f};
  CHECK(m.label_weights() == std::array{0.3f, float(1.0 - double(0.3f))});
  m.per_sample = true;
  m.images_dtype = DType::f32;
  CHECK(m.label_weights() == std::array{0.3f, 1.0f - 0.3f});
  m.images_dtype = DType::bf16;  // torch.tensor([0.3]).to(dtype) and 1 - it: 0.30078125 and 0.69921875
  CHECK(m.label_weights() == std::array{0.30078125f, 0.69921875f});
  m.images_dtype = DType::f16;  // torch: 0.300048828125 and 0.7001953125
  CHECK(m.label_weights() == std::array{0.300048828125f, 0.7001953125f});
}

TEST_CASE("A choice of batch transforms picks each with its weight, from the batch's own stream", "[batch_transform]") {
  const BatchTransform t({MixUp{.alpha = 0.2, .num_classes = 5}, CutMix{.alpha = 1.0, .num_classes = 5}}, {1.0, 3.0});
  double cutmix = 0;
  const int n = 40000;
  for (std::uint64_t b = 0; b < std::uint64_t(n); ++b) cutmix += t.draw(2, 1, b, image(16, 16)).kind == BatchMix::Kind::cutmix;
  CHECK(conveyor_test::binomial_fits(std::size_t(cutmix), std::size_t(n), 0.75));
  const BatchTransform uniform({MixUp{.alpha = 0.2, .num_classes = 5}, CutMix{.alpha = 1.0, .num_classes = 5}});
  double mixup = 0;
  for (std::uint64_t b = 0; b < std::uint64_t(n); ++b) mixup += uniform.draw(2, 1, b, image(16, 16)).kind == BatchMix::Kind::mixup;
  CHECK(conveyor_test::binomial_fits(std::size_t(mixup), std::size_t(n), 0.5));
  // The same batch of the same epoch draws the same; another batch or epoch draws anew.
  const BatchMix a = t.draw(2, 1, 9, image(16, 16)), b = t.draw(2, 1, 9, image(16, 16));
  CHECK((a.kind == b.kind && a.lam == b.lam && a.x1 == b.x1 && a.y2 == b.y2));
  CHECK(t.draw(2, 1, 10, image(16, 16)).lam != a.lam);
  CHECK(t.draw(2, 2, 9, image(16, 16)).lam != a.lam);
}

TEST_CASE("Soft targets are torchvision's one-hot mix in float32, also when a sample is paired with its own class",
          "[batch_transform]") {
  const std::vector<std::int64_t> labels{3, 3, 0, 4};
  BatchMix m;
  m.kind = BatchMix::Kind::mixup;
  m.lam = 0.3f;
  m.label_lam = double(m.lam);
  const float own = 0.3f, other = float(1.0 - double(0.3f));
  std::vector<float> row(5);
  mix_target(labels, 0, row.data(), 5, m);  // partner: the last sample, class 4
  CHECK(row == std::vector<float>{0, 0, 0, own, other});
  mix_target(labels, 1, row.data(), 5, m);  // partner: class 3, its own
  CHECK(row == std::vector<float>{0, 0, 0, other + own, 0});
  mix_target(labels, 2, row.data(), 5, m);
  CHECK(row == std::vector<float>{own, 0, 0, other, 0});
  // timm's smoothed rows: every class off * lam + off * (1 - lam), the two labels on in their turn.
  m.on_value = float(1.0 - 0.1 + 0.1 / 5);
  m.off_value = float(0.1 / 5);
  m.pairing = BatchMix::Pairing::mirror;  // sample 0 with sample 3 (class 4)
  mix_target(labels, 0, row.data(), 5, m);
  const float off = m.off_value * other + m.off_value * own;
  CHECK(row == std::vector<float>{off, off, off, m.off_value * other + m.on_value * own, m.on_value * other + m.off_value * own});
  const std::vector<std::int64_t> bad{1, 5};
  CHECK_THROWS_WITH(mix_target(bad, 0, row.data(), 5, m), Catch::Contains("batch position 1 has label 5"));
}

TEST_CASE("A pipeline's mixed batches are its unmixed batches mixed as torchvision does, for any worker count",
          "[batch_transform][pipeline]") {
  const InMemory data = conveyor_test::jpeg_dataset(23, 4);
  struct Case {
    DType dtype;
    Layout layout;
    BatchTransform transform;
  };
  const std::vector<Case> cases{
      {DType::f32, Layout::NCHW, MixUp{.alpha = 0.4, .num_classes = 5}},
      {DType::bf16, Layout::NHWC, MixUp{.alpha = 1.0, .num_classes = 5}},
      {DType::f16, Layout::NCHW, MixUp{.alpha = 1.0, .num_classes = 5}},
      {DType::u8, Layout::NHWC, CutMix{.alpha = 1.0, .num_classes = 5}},
      {DType::f32, Layout::NCHW, BatchTransform({MixUp{.alpha = 0.2, .num_classes = 5}, CutMix{.alpha = 1.0, .num_classes = 5}})},
      {DType::f32, Layout::NHWC, TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .prob = 0.9, .num_classes = 5}},
      {DType::bf16, Layout::NCHW, TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 0.0, .num_classes = 5}},
      {DType::u8, Layout::NCHW, TimmMixup{.mixup_alpha = 0.0, .cutmix_minmax = std::array{0.2, 0.8}, .num_classes = 5}},
  };
  for (const Case& c : cases) {
    CAPTURE(to_string(c.dtype), to_string(c.layout));
    const ImageAugment aug = augment(c.dtype, c.layout);
    const MixGeometry g = detail::mix_geometry(aug, aug.sample_spec());
    Pipe plain(data, SequentialSampler(data.size()), aug, {.batch_size = 8, .workers = 2, .seed = 11});
    const Epoch reference = run(plain, 2);
    std::vector<BatchMix> first_mixes;
    for (const int workers : {0, 1, 3, 5}) {
      CAPTURE(workers);
      Pipe mixed(data, SequentialSampler(data.size()), aug,
                 {.batch_size = 8, .workers = workers, .seed = 11, .batch_transform = c.transform});
      const Epoch e = run(mixed, 2);
      REQUIRE(e.images.size() == 3);  // 8 + 8 + 7
      for (std::size_t b = 0; b < e.images.size(); ++b) {
        CAPTURE(b);
        const BatchMix& m = e.mixes[b];
        if (m.kind == BatchMix::Kind::none) CHECK(m.pairing == BatchMix::Pairing::mirror);  // timm's prob
        const BatchMix drawn = c.transform.draw(11, 2, b, g);
        CHECK((m.kind == drawn.kind && m.lam == drawn.lam && m.x1 == drawn.x1 && m.y1 == drawn.y1 && m.x2 == drawn.x2 &&
               m.y2 == drawn.y2));
        CHECK(e.images[b] == mixed_by_reference(reference.images[b], g, m));
        CHECK((e.images[b] != reference.images[b]) == (m.kind != BatchMix::Kind::none));
        CHECK(e.labels[b] == reference.labels[b]);
        const std::size_t n = e.labels[b].size();
        REQUIRE(e.targets[b].size() == n * 5);
        for (std::size_t i = 0; i < n; ++i) {
          std::vector<float> row(5);
          mix_target(e.labels[b], i, row.data(), 5, m);
          CHECK(std::equal(row.begin(), row.end(), e.targets[b].begin() + std::ptrdiff_t(i * 5)));
        }
      }
      // Resuming at batch 1 mixes batches 1 and 2 as the whole epoch did.
      const Epoch resumed = run(mixed, 2, 1);
      REQUIRE(resumed.images.size() == 2);
      CHECK(resumed.images[0] == e.images[1]);
      CHECK(resumed.targets[1] == e.targets[2]);
      // The stats time the batch transform as a stage of its own, counting the samples it mixed.
      std::uint64_t mixed_samples = 0;
      for (const Epoch* run_ : {&e, &resumed})
        for (std::size_t k = 0; k < run_->mixes.size(); ++k)
          if (run_->mixes[k].kind != BatchMix::Kind::none) mixed_samples += run_->labels[k].size();
      const PipelineStats st = mixed.stats();
      REQUIRE(st.stages.back().name == "batch_transform");
      CHECK(st.stages.back().count == mixed_samples);
      CHECK(st.stages.back().seconds > 0);
    }
  }
}

TEST_CASE("timm's pair and elem modes mix each sample with its partner as it was, by its own draw",
          "[batch_transform][pipeline]") {
  const InMemory data = conveyor_test::jpeg_dataset(23, 4);  // batches of 8, 8 and 7
  for (const auto mode : {TimmMixup::Mode::elem, TimmMixup::Mode::pair})
    for (const DType dtype : {DType::f32, DType::bf16, DType::f16}) {
      const Layout layout = dtype == DType::bf16 ? Layout::NHWC : Layout::NCHW;
      CAPTURE(int(mode), to_string(dtype));
      const ImageAugment aug = augment(dtype, layout);
      const MixGeometry g = detail::mix_geometry(aug, aug.sample_spec());
      const BatchTransform t = TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .prob = 0.8, .num_classes = 5, .mode = mode};
      Pipe plain(data, SequentialSampler(data.size()), aug, {.batch_size = 8, .workers = 2, .seed = 11});
      const Epoch reference = run(plain, 1);
      for (const int workers : {0, 1, 3}) {
        CAPTURE(workers);
        Pipe mixed(data, SequentialSampler(data.size()), aug, {.batch_size = 8, .workers = workers, .seed = 11, .batch_transform = t});
        mixed.set_epoch(1);
        std::size_t b = 0;
        for (const Batch& batch : mixed) {
          CAPTURE(b);
          const std::vector<BatchMix> each = t.draw_samples(11, 1, b, g, batch.size());
          REQUIRE(batch.sample_mixes().size() == batch.size());
          REQUIRE(batch.mix().per_sample);
          // The reference: each sample by its own draw, its partner as it was (timm's x_orig).
          const std::vector<std::byte>& x = reference.images[b];
          const std::size_t bytes = g.sample_bytes(), n = batch.size();
          std::vector<std::byte> expected = x;
          for (std::size_t i = 0; i < n; ++i) {
            CHECK(batch.sample_mixes()[i].lam == each[i].lam);
            std::vector<std::byte> self(x.begin() + std::ptrdiff_t(i * bytes), x.begin() + std::ptrdiff_t((i + 1) * bytes));
            mix_sample(self.data(), x.data() + (n - 1 - i) * bytes, g, each[i]);
            std::memcpy(expected.data() + i * bytes, self.data(), bytes);
          }
          const auto* p = static_cast<const std::byte*>(batch.images().data);
          CHECK(std::vector<std::byte>(p, p + batch.images().nbytes()) == expected);
          const auto* targets = static_cast<const float*>(batch.targets().data);
          for (std::size_t i = 0; i < n; ++i) {
            std::vector<float> row(5);
            mix_target(reference.labels[b], i, row.data(), 5, each[i]);
            CHECK(std::equal(row.begin(), row.end(), targets + i * 5));
          }
          ++b;
        }
        CHECK(b == 3);
      }
    }
}

TEST_CASE("On a device a pipeline mixes what the CPU backend mixes, with its targets in device memory",
          "[batch_transform][pipeline]") {
  const conveyor_test::HostDevice device;
  const InMemory data = conveyor_test::jpeg_dataset(23, 4);
  const std::vector<std::pair<DType, BatchTransform>> cases{
      {DType::f32, MixUp{.alpha = 0.4, .num_classes = 5}},
      {DType::bf16, BatchTransform({MixUp{.alpha = 0.2, .num_classes = 5}, CutMix{.alpha = 1.0, .num_classes = 5}})},
      {DType::u8, CutMix{.alpha = 1.0, .num_classes = 5}},
      {DType::f16, TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .prob = 0.9, .num_classes = 5}},
      {DType::bf16, TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .num_classes = 5, .mode = TimmMixup::Mode::elem}},
      {DType::f32, TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .num_classes = 5, .mode = TimmMixup::Mode::pair}},
  };
  for (const auto& [dtype, transform] : cases)
    for (const Layout layout : {Layout::NCHW, Layout::NHWC})
      for (const int workers : {0, 3}) {
        CAPTURE(to_string(dtype), to_string(layout), workers);
        const ImageAugment aug = augment(dtype, layout);
        const PipelineOptions o{.batch_size = 8, .workers = workers, .seed = 11, .batch_transform = transform};
        PipelineOptions on_device = o;
        on_device.device = 0;
        Pipe cpu(data, SequentialSampler(data.size()), aug, o), dev(data, SequentialSampler(data.size()), aug, on_device);
        const Epoch a = run(cpu, 3), b = run(dev, 3);
        REQUIRE(b.images.size() == 3);
        CHECK(b.images == a.images);
        CHECK(b.targets == a.targets);
        CHECK(b.labels == a.labels);
        for (std::size_t k = 0; k < a.mixes.size(); ++k)
          CHECK((b.mixes[k].kind == a.mixes[k].kind && b.mixes[k].lam == a.mixes[k].lam && b.mixes[k].x1 == a.mixes[k].x1 &&
                 b.mixes[k].y2 == a.mixes[k].y2));
        // The targets sit in the slot's device arena; a copy of them holds no slot.
        dev.set_epoch(3);
        const Batch first = *dev.begin();
        CHECK(first.targets().device.kind == Device::Kind::cuda);
        const TensorCopy copy = first.copy_targets();
        REQUIRE(copy.view().numel() == 8 * 5);
        CHECK(copy.view().data != first.targets().data);
        const auto* t = static_cast<const float*>(copy.view().data);
        CHECK(std::vector<float>(t, t + 40) == a.targets[0]);
      }
}

TEST_CASE("A pipeline refuses a batch transform it cannot run, naming it", "[batch_transform][pipeline]") {
  const InMemory data = conveyor_test::jpeg_dataset(4, 4);
  const auto make = [&](ImageAugment aug, BatchTransform t, int device = cpu_device) {
    Pipe p(data, SequentialSampler(data.size()), std::move(aug), {.batch_size = 2, .workers = 1, .device = device, .batch_transform = std::move(t)});
  };
  CHECK_THROWS_WITH(make(augment(DType::u8, Layout::NCHW), MixUp{.alpha = 1.0, .num_classes = 5}),
                    Catch::Contains("MixUp: the images must be floating point") && Catch::Contains("u8"));
  CHECK_THROWS_WITH(make(augment(DType::f32, Layout::NCHW), MixUp{.alpha = 0.0, .num_classes = 5}),
                    Catch::Contains("choices[0]: ") && Catch::Contains("MixUp: alpha must be positive"));
  CHECK_THROWS_WITH(make(augment(DType::f32, Layout::NCHW), CutMix{.alpha = 1.0}),
                    Catch::Contains("CutMix: num_classes must be positive, got 0"));
  CHECK_THROWS_WITH(make(augment(DType::f32, Layout::NCHW),
                         BatchTransform({MixUp{.alpha = 1.0, .num_classes = 5}, CutMix{.alpha = 1.0, .num_classes = 6}})),
                    Catch::Contains("choices[1] (CutMix) has num_classes 6, choices[0] 5"));
  CHECK_THROWS_WITH(make(augment(DType::f32, Layout::NCHW),
                         BatchTransform({MixUp{.alpha = 1.0, .num_classes = 5}, CutMix{.alpha = 1.0, .num_classes = 5}}, {1.0})),
                    Catch::Contains("p needs one weight per choice (2), got 1"));
  CHECK_THROWS_WITH(make(augment(DType::u8, Layout::NCHW), TimmMixup{.mixup_alpha = 0.8, .num_classes = 5}),
                    Catch::Contains("timm Mixup: with mixup_alpha > 0 the images must be floating point"));
  CHECK_THROWS_WITH(make(augment(DType::f32, Layout::NCHW), TimmMixup{.mixup_alpha = 0.0, .cutmix_alpha = 0.0}),
                    Catch::Contains("one of mixup_alpha > 0, cutmix_alpha > 0 and cutmix_minmax must be set"));
  CHECK_THROWS_WITH(make(augment(DType::f32, Layout::NCHW, 4),
                         TimmMixup{.cutmix_minmax = std::array{0.1, 0.2}, .num_classes = 5}),
                    Catch::Contains("cutmix_minmax gives no box size for a side of 4"));
  CHECK_THROWS_WITH(make(augment(DType::u8, Layout::NCHW),
                         TimmMixup{.mixup_alpha = 0.0, .cutmix_alpha = 1.0, .num_classes = 5, .mode = TimmMixup::Mode::elem}),
                    Catch::Contains("modes 'pair' and 'elem' need floating-point images"));
  CHECK_THROWS_WITH(make(augment(DType::f32, Layout::NCHW), TimmMixup{.prob = 1.5, .num_classes = 5}),
                    Catch::Contains("prob, switch_prob and label_smoothing must be in [0, 1]"));
}

TEST_CASE("A label outside num_classes fails its batch, naming the position, and the loop goes on", "[batch_transform][pipeline]") {
  const InMemory data = conveyor_test::jpeg_dataset(8, 4);  // labels i % 5
  Pipe p(data, SequentialSampler(data.size()), augment(DType::f32, Layout::NCHW),
         {.batch_size = 4, .workers = 2, .batch_transform = MixUp{.alpha = 1.0, .num_classes = 4}});
  auto it = p.begin();
  CHECK((*it).size() == 4);  // labels 0..3
  ++it;
  CHECK_THROWS_WITH(*it, Catch::Contains("batch position 0 has label 4, outside [0, num_classes = 4)"));
  ++it;
  CHECK(it == std::default_sentinel);
}
