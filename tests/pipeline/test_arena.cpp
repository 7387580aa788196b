// The staging arena (device/staging.hpp): its allocator on its own, and the device pipeline's host
// side around it (staging, replacements under on_error = skip, the guard after the data section)
// through a device backend in host memory (support/host_device.hpp), against the CPU backend.

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/digest.hpp"
#include "support/host_device.hpp"
#include "support/images.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

using namespace conveyor;
using conveyor_test::digests;

TEST_CASE("a failed claim gives its room back and the replacement claims in its place", "[arena]") {
  ArenaAllocator a;
  a.reset(992, 2, 160);
  {
    ArenaClaim failed(a, 0);
    CHECK(failed.try_allocate(320) == 0u);
    CHECK(a.used() == 320);
  }  // its decode threw: no commit
  CHECK(a.used() == 0);
  ArenaClaim replacement(a, 0);
  CHECK(replacement.try_allocate(480) == 0u);
  replacement.commit();
  ArenaClaim next(a, 1);
  CHECK(next.try_allocate(512) == 480u);  // all that is left: nothing of the failed claim is lost
  next.commit();
  CHECK(a.used() == 992);
}

TEST_CASE("a sample that fails under others keeps its block and every reserve stays covered", "[arena]") {
  ArenaAllocator a;
  a.reset(600, 3, 160);  // three samples, each guaranteed 160 bytes
  auto first = std::make_unique<ArenaClaim>(a, 0);
  CHECK(first->try_allocate(144) == 0u);  // a block of a reserve's length, to fall back into
  ArenaClaim second(a, 1);
  CHECK(second.try_allocate(208) == 160u);
  second.commit();
  first.reset();  // position 0's decode failed: its block lies under position 1's, so it keeps it
  ArenaClaim replacement(a, 0);
  // 208 more would leave position 2 without its reserve.
  CHECK_FALSE(replacement.try_allocate(208));
  CHECK(replacement.allocate_reserve() == 0u);
  replacement.commit();
  ArenaClaim last(a, 2);
  CHECK_FALSE(last.try_allocate(300));
  CHECK(last.allocate_reserve() == 368u);
  last.commit();
  CHECK(a.used() == 528);  // within the 600, where the replacement used to be added after the rest
}

TEST_CASE("the room a finished sample does not use goes to the next", "[arena]") {
  ArenaAllocator a;
  a.reset(1000, 3, 160);
  ArenaClaim small(a, 0), big(a, 1);
  CHECK(small.try_allocate(48) == 0u);  // a reserve's length is held while it decodes
  CHECK(big.try_allocate(400) == 160u);
  small.commit();  // its 112 unused bytes lie under `big`'s: they wait for a request that fits
  big.commit();
  ArenaClaim tiny(a, 2);
  CHECK(tiny.try_allocate(96) == 48u);
  tiny.commit();
  CHECK(a.used() == 560);
}

TEST_CASE("an arena whose reserves do not fit is refused", "[arena]") {
  ArenaAllocator a;
  CHECK_THROWS_WITH(a.reset(300, 2, 160), Catch::Contains("2 reserves of 160 bytes do not fit in 300"));
  a.reset(320, 2, 160);
  ArenaClaim c(a, 2);
  CHECK_THROWS_WITH(c.allocate_reserve(), Catch::Contains("position 2 of a batch of 2 is outside it"));
}

// Workers claim, fail, replace, finish elsewhere and commit in any interleaving: whatever happens,
// no block passes the capacity, no two samples' bytes overlap, and every sample gets its room.
TEST_CASE("no interleaving of claims failures and commits passes the capacity or overlaps", "[arena]") {
  struct Live {
    std::unique_ptr<ArenaClaim> claim;
    std::size_t at = 0, size = 0;  // size 0: nothing placed in the section
  };
  ArenaAllocator a;
  for (std::uint64_t round = 0; round < 3000; ++round) {
    CounterRng rng(11, round, 0, RngOp::user);
    const std::size_t n = 1 + rng.below(12), reserve = 16 * (1 + rng.below(20));
    const std::size_t capacity = n * reserve + 16 * rng.below(4 * n * 20);
    a.reset(capacity, n, reserve);
    std::vector<Live> live(n);
    std::vector<std::pair<std::size_t, std::size_t>> done;  // the committed samples' bytes
    std::size_t finished = 0;
    const auto overlaps = [&](std::size_t at, std::size_t size, std::size_t self) {
      for (const auto& [b, s] : done)
        if (at < b + s && b < at + size) return true;
      for (std::size_t p = 0; p < n; ++p)
        if (p != self && live[p].claim && live[p].size && at < live[p].at + live[p].size && live[p].at < at + size)
          return true;
      return false;
    };
    while (finished < n) {
      const std::size_t p = rng.below(n);
      Live& l = live[p];
      if (l.claim == nullptr) {
        if (l.size == SIZE_MAX) continue;  // done
        l.claim = std::make_unique<ArenaClaim>(a, p);
        l.size = 0;
      }
      switch (rng.below(5)) {
        case 0: {  // a window
          const std::size_t want = 1 + rng.below(3 * reserve);
          const auto at = l.claim->try_allocate(want);  // replaces what it had, placed or not
          l.at = at.value_or(0);
          l.size = at ? want : 0;
          break;
        }
        case 1:  // finished on the CPU
          l.at = l.claim->allocate_reserve();
          l.size = reserve;
          break;
        case 2:  // sent to the device decoder
          l.claim->forgo();
          l.size = 0;
          break;
        case 3:  // failed
          l.claim.reset();
          l.size = 0;
          break;
        default:  // done
          if (l.size) done.emplace_back(l.at, l.size);
          l.claim->commit();
          l.claim.reset();
          l.size = SIZE_MAX;
          ++finished;
          continue;
      }
      if (l.size) {
        INFO("round " << round << ": position " << p << " got " << l.size << " bytes at " << l.at << " of "
                      << capacity);
        REQUIRE(l.at + l.size <= capacity);
        REQUIRE(a.used() <= capacity);
        REQUIRE_FALSE(overlaps(l.at, l.size, p));
      }
    }
  }
}

namespace {

/// A batch's worth of real photos, 448 x 448 (the bundled samples' centres), with one of them cut
/// in half: its header parses and its scan data ends early, so it fails only once decoding.
InMemory photos_with_cut_file(std::size_t cut_at) {
  const auto photos = conveyor_test::square_photos(conveyor_test::sample_photos() / "samples", 448);
  REQUIRE(photos.size() >= 6);
  InMemory d;
  for (std::size_t i = 0; i < photos.size(); ++i) {
    const std::size_t n = i == cut_at ? photos[i].size() / 2 : photos[i].size();
    d.add(std::span(photos[i].data(), n), std::int64_t(i));
  }
  return d;
}

template <class T>
std::vector<std::uint64_t> batches(const InMemory& data, const T& transform, PipelineOptions o) {
  BatchPipeline pipe(data, SequentialSampler(data.size()), transform, o);
  std::vector<std::uint64_t> d = digests(pipe, 1);
  if (o.on_error == OnError::skip) REQUIRE(pipe.skipped().size() == 1);
  return d;
}

}  // namespace

// The replay from the report: batch 4, CenterCrop 224 after Resize 230, 448 x 448 JPEGs, the file at
// position 0 cut in half, f32 (whose default arena has no room to spare): its claim used to stay
// taken while the replacement claimed again, and the batch's last sample took a reserve past the
// data section. Every position and every dtype, with workers preparing positions in any order.
TEST_CASE("a file that fails after its claim leaves the device arena whole at every position", "[arena][pipeline]") {
  const conveyor_test::HostDevice device;
  ImageAugment aug{.crop = CenterCrop{224}, .resize = Resize{230}};
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::u8})
    for (std::size_t cut : {0, 1, 2, 3})
      for (int workers : {0, 3}) {
        INFO("dtype " << to_string(dtype) << ", position " << cut << " cut, " << workers << " workers");
        aug.dtype = dtype;
        aug.normalize = dtype == DType::u8 ? std::nullopt : std::optional(Normalize::imagenet());
        const InMemory data = photos_with_cut_file(cut);
        const PipelineOptions o{.batch_size = 4, .workers = workers, .on_error = OnError::skip};
        PipelineOptions on_device = o;
        on_device.device = 0;
        REQUIRE(batches(data, aug, on_device) == batches(data, aug, o));
      }
}

namespace {

/// Stages 8-byte samples, and writes one byte `overrun` bytes into its arena's data section
/// for sample 0: past the end when `overrun` is the section's size.
struct Overrunning {
  std::size_t overrun = 0;
  struct Workspace {};
  [[nodiscard]] SampleSpec sample_spec() const { return {DType::u8, 1, {8, 0, 0}}; }
  [[nodiscard]] Workspace make_workspace() const { return {}; }
  void apply(const SampleContext&, std::span<const std::byte> in, std::span<std::byte> out, Workspace&) const {
    std::memcpy(out.data(), in.data(), 8);
  }
  [[nodiscard]] DeviceWork device_work() const {
    return {DeviceWork::Placement::staged, 8, 8, {DeviceStepSpec::of(CopySamples{})}, std::nullopt};
  }
  [[nodiscard]] ops::SamplePlan stage(const SampleContext& ctx, std::span<const std::byte> in, StagingArea& area,
                                      Workspace&) const {
    const std::size_t at = area.claim->allocate_reserve();
    std::memcpy(area.data + at, in.data(), 8);
    if (ctx.index == 0) area.data[overrun] = std::byte{0x5A};
    return {};
  }
};
static_assert(DeviceTransform<Overrunning>);

}  // namespace

TEST_CASE("a sample written past the arena's data section fails the pipeline at its batch", "[arena][pipeline]") {
  const conveyor_test::HostDevice device;
  // arena_bytes 64 and 16 bytes of alignment slack a sample: a data section of 128 bytes.
  const PipelineOptions o{.batch_size = 4, .workers = 2, .device = 0, .arena_bytes = 64};
  const conveyor_test::IndexDataset data(12);
  {
    BatchPipeline pipe(data, SequentialSampler(12), Overrunning{127}, o);  // its last byte: in bounds
    std::size_t seen = 0;
    for (const Batch& b : pipe) seen += b.size();
    CHECK(seen == 12);
  }
  BatchPipeline pipe(data, SequentialSampler(12), Overrunning{128}, o);  // the guard's first byte
  CHECK_THROWS_WITH([&] {
    for (const Batch& b : pipe) (void)b;
  }(), Catch::Contains("written past the data section of slot 0") && Catch::Contains("(128 bytes)"));
}
