// conveyor-bench: runs a BatchPipeline over a dataset (a folder, WebDataset shards, TFRecord
// files or a file list) and reports throughput, per-stage times, checksums or the batches
// themselves.
//
//   conveyor-bench --data DIR [--device cpu|cuda] [--workers N] [--batch B] [--epochs E] [--seed S]
//                  [--transform train|eval] [--recipe plain|trivial|color] [--size PX] [--dtype u8|f32|f16|bf16] [--layout nchw|nhwc]
//                  [--prefetch P|auto] [--on-error raise|skip] [--checksum] [--dump DIR] [--stats-json FILE]
//                  [--roi on|off] [--decode-scaling auto|on|off] [--shard-from-env] [--print-indices]
//                  [--decode cpu|gpu|auto] [--gpu-share F] [--gpu-upsampling interpolated|replicated] [--gpu-part N]
//                  [--device-sync spin|yield|blocking] [--format auto|folder|wds|tfrecord|list] [--shard-window W]
//                  [--batch-transform none|mixup|cutmix|choice|timm|timm-elem] [--classes N]
//                  [--local-views N]
//
// The last line is "<N> img/s": every image delivered, from the first iterator's creation to the
// end of the last epoch, nothing excluded.

#include <conveyor/conveyor.hpp>
#include <conveyor/core/clock.hpp>

#include "dataset_arg.hpp"
#include "host_copy.hpp"
#if CONVEYOR_CUDA_COMPILATION()  // built by nvcc when the CUDA backend is on: --device cuda works
#include <conveyor/cuda/all.cuh>
#endif

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Args {
  std::string data;
  std::string device = "cpu";
  int workers = -1;
  std::size_t batch = 256;
  int epochs = 1;
  std::uint64_t seed = 0;
  std::string transform = "train";
  int size = 224;
  conveyor::DType dtype = conveyor::DType::f32;
  conveyor::Layout layout = conveyor::Layout::NCHW;
  std::size_t prefetch = conveyor::auto_prefetch;
  conveyor::OnError on_error = conveyor::OnError::raise;
  bool checksum = false;
  std::string dump;
  std::string stats_json;
  bool roi = true;
  std::optional<bool> decode_scaling;  // unset: the transform's default
  bool shard_from_env = false;
  std::string format = "auto";
  std::uint64_t shard_window = 0;  // 0: a random permutation; else ShardShuffleSampler's window
  bool print_indices = false;
  conveyor::JpegDecode decode = conveyor::JpegDecode::cpu;
  std::optional<double> gpu_share;  // unset: the pipeline's default (1 for gpu; auto: starting_gpu_share)
  conveyor::ChromaUpsampling gpu_upsampling = conveyor::ChromaUpsampling::interpolated;
  std::size_t gpu_part = conveyor::PipelineOptions{}.gpu_part_images;
  std::string device_sync;          // empty: CUDA's default (spin while there are idle cores)
  std::string recipe = "plain";     // pixel transforms after the crop and flip (train only)
  std::string batch_transform = "none";  // what is done to each finished batch
  std::int64_t classes = 1000;           // the soft targets' width, with a batch transform
  int local_views = -1;                  // >= 0: DINO's multi-crop, 2 global views and this many 96 px ones
};

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "conveyor-bench: " << error << "\n"
            << "usage: conveyor-bench --data DIR [--device cpu|cuda] [--workers N] [--batch B] [--epochs E]\n"
               "         [--seed S] [--transform train|eval] [--size PX] [--dtype u8|f32|f16|bf16]\n"
               "         [--layout nchw|nhwc] [--prefetch P|auto] [--on-error raise|skip] [--checksum]\n"
               "         [--dump DIR] [--stats-json FILE] [--roi on|off] [--decode-scaling auto|on|off]\n"
               "         [--shard-from-env] [--print-indices] [--format auto|folder|wds|tfrecord|list]\n"
               "         [--shard-window W] [--decode cpu|gpu|auto] [--gpu-share F]\n"
               "         [--gpu-upsampling interpolated|replicated] [--gpu-part N] [--device-sync spin|yield|blocking]\n"
               "         [--recipe plain|trivial|color] [--batch-transform none|mixup|cutmix|choice|timm|timm-elem]\n"
               "         [--classes N] [--local-views N]\n";
  std::exit(2);
}

long long to_int(std::string_view flag, const std::string& v) {
  try {
    std::size_t used = 0;
    const long long x = std::stoll(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return x;
  } catch (const std::exception&) {
    usage(std::string(flag) + " expects an integer, got '" + v + "'");
  }
}

Args parse(int argc, char** argv) try {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(std::string(flag) + " needs a value");
      return argv[++i];
    };
    if (flag == "--data") a.data = value();
    else if (flag == "--device") a.device = value();
    else if (flag == "--workers") a.workers = static_cast<int>(to_int(flag, value()));
    else if (flag == "--batch") a.batch = static_cast<std::size_t>(to_int(flag, value()));
    else if (flag == "--epochs") a.epochs = static_cast<int>(to_int(flag, value()));
    else if (flag == "--seed") a.seed = static_cast<std::uint64_t>(to_int(flag, value()));
    else if (flag == "--transform") a.transform = value();
    else if (flag == "--size") a.size = static_cast<int>(to_int(flag, value()));
    else if (flag == "--dtype") a.dtype = conveyor::parse_dtype(value());
    else if (flag == "--layout") a.layout = conveyor::parse_layout(value());
    else if (flag == "--prefetch") {
      const std::string v = value();
      a.prefetch = v == "auto" ? conveyor::auto_prefetch : static_cast<std::size_t>(to_int(flag, v));
    }
    else if (flag == "--on-error") a.on_error = conveyor::parse_enum<conveyor::OnError>(flag, value());
    else if (flag == "--roi") {
      const std::string v = value();
      if (v != "on" && v != "off") usage("--roi expects on or off, got '" + v + "'");
      a.roi = v == "on";
    } else if (flag == "--decode-scaling") {
      const std::string v = value();
      if (v != "auto" && v != "on" && v != "off") usage("--decode-scaling expects auto, on or off, got '" + v + "'");
      if (v != "auto") a.decode_scaling = v == "on";
    } else if (flag == "--checksum") a.checksum = true;
    else if (flag == "--shard-from-env") a.shard_from_env = true;
    else if (flag == "--format") a.format = value();
    else if (flag == "--shard-window") a.shard_window = static_cast<std::uint64_t>(to_int(flag, value()));
    else if (flag == "--print-indices") a.print_indices = true;
    else if (flag == "--decode") a.decode = conveyor::parse_enum<conveyor::JpegDecode>(flag, value());
    else if (flag == "--gpu-share") {
      const std::string v = value();
      char* end = nullptr;
      a.gpu_share = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0') usage("--gpu-share expects a number in [0, 1], got '" + v + "'");
    } else if (flag == "--gpu-upsampling") a.gpu_upsampling = conveyor::parse_chroma_upsampling(value());
    else if (flag == "--gpu-part") a.gpu_part = static_cast<std::size_t>(to_int(flag, value()));
    else if (flag == "--device-sync") a.device_sync = value();
    else if (flag == "--recipe") a.recipe = value();
    else if (flag == "--batch-transform") a.batch_transform = value();
    else if (flag == "--classes") a.classes = to_int(flag, value());
    else if (flag == "--local-views") a.local_views = static_cast<int>(to_int(flag, value()));
    else if (flag == "--dump") a.dump = value();
    else if (flag == "--stats-json") a.stats_json = value();
    else if (flag == "--help" || flag == "-h") usage("help");
    else usage("unknown option '" + std::string(flag) + "'");
  }
  if (a.data.empty()) usage("--data is required");
  if (a.device != "cpu" && a.device != "cuda") usage("--device expects cpu or cuda, got '" + a.device + "'");
  if (a.transform != "train" && a.transform != "eval") usage("--transform expects train or eval");
  if (a.epochs < 1) usage("--epochs must be >= 1");
  if (a.recipe != "plain" && a.recipe != "trivial" && a.recipe != "color")
    usage("--recipe expects plain, trivial or color, got '" + a.recipe + "'");
  if (a.recipe != "plain" && a.transform != "train") usage("--recipe " + a.recipe + " needs --transform train");
  if (a.batch_transform != "none" && a.batch_transform != "mixup" && a.batch_transform != "cutmix" &&
      a.batch_transform != "choice" && a.batch_transform != "timm" && a.batch_transform != "timm-elem")
    usage("--batch-transform expects none, mixup, cutmix, choice, timm or timm-elem, got '" + a.batch_transform + "'");
  return a;
} catch (const conveyor::ConfigError& e) {  // a named choice's parser (dtype, layout, decode, ...)
  usage(e.what());
}

/// A .npy file (format 1.0) of `bytes` with numpy type `descr` and `shape`.
void write_npy(const std::filesystem::path& path, std::string_view descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes) {
  std::string dims;
  for (std::int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  const char le[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
  out.write(le, 2);
  out << header;
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw conveyor::IoError("cannot write", path.string());
}

std::string_view npy_descr(conveyor::DType t) {
  switch (t) {
    case conveyor::DType::u8: return "|u1";
    case conveyor::DType::f32: return "<f4";
    case conveyor::DType::f16: return "<f2";
    case conveyor::DType::bf16: return "<u2";  // numpy has no bfloat16: the raw bits
    case conveyor::DType::i64: return "<i8";
  }
  return "|u1";
}

/// The pixel transforms of --recipe, as the targets in benchmarks/RESULTS.md name them: trivial is
/// torchvision's 2021 reference (TrivialAugmentWide, RandomErasing 0.25); color adds the
/// self-supervised colour and blur ops (ColorJitter 0.4/0.4/0.4/0.1, RandomGrayscale 0.2,
/// GaussianBlur 23, RandomSolarize 128 at 0.2).
std::vector<conveyor::PixelTransform> recipe_transforms(const std::string& recipe) {
  using namespace conveyor;
  if (recipe == "plain") return {};
  if (recipe == "trivial") return {TrivialAugmentWide{}, RandomErasing{.p = 0.25}};
  return {TrivialAugmentWide{},
          ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1},
          RandomGrayscale{.p = 0.2},
          GaussianBlur{.kernel_size = 23},
          RandomSolarize{.threshold = 128.0, .p = 0.2},
          RandomErasing{.p = 0.25}};
}

/// --batch-transform as torchvision's reference recipe has it: MixUp(0.2), CutMix(1.0), or a
/// uniform choice of the two; or timm's Mixup as DeiT configures it (mixup 0.8, cutmix 1.0,
/// label smoothing 0.1), in its 'batch' or 'elem' mode.
std::optional<conveyor::BatchTransform> batch_transform(const Args& a) {
  using namespace conveyor;
  const MixUp mixup{.alpha = 0.2, .num_classes = a.classes};
  const CutMix cutmix{.alpha = 1.0, .num_classes = a.classes};
  if (a.batch_transform == "mixup") return BatchTransform(mixup);
  if (a.batch_transform == "cutmix") return BatchTransform(cutmix);
  if (a.batch_transform == "choice") return BatchTransform({mixup, cutmix});
  TimmMixup timm{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .label_smoothing = 0.1, .num_classes = a.classes};
  if (a.batch_transform == "timm") return BatchTransform(timm);
  timm.mode = TimmMixup::Mode::elem;
  if (a.batch_transform == "timm-elem") return BatchTransform(timm);
  return std::nullopt;
}

void wait_for_device([[maybe_unused]] const Args& a) {
#if CONVEYOR_CUDA_COMPILATION()
  if (a.device == "cuda") CONVEYOR_CUDA_TRY(cudaDeviceSynchronize());
#endif
}

template <class Pipeline>
int run(Pipeline& pipe, const Args& a) {
  if (!a.dump.empty()) std::filesystem::create_directories(a.dump);
  std::uint64_t delivered = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int epoch = 0; epoch < a.epochs; ++epoch) {
    pipe.set_epoch(static_cast<std::uint64_t>(epoch));
    const auto epoch_start = std::chrono::steady_clock::now();
    const std::uint64_t delivered_before = delivered;
    for (const conveyor::Batch& b : pipe) {
      delivered += b.size();
      if (a.print_indices) {
        std::printf("indices:");
        for (std::int64_t i : b.indices()) std::printf(" %lld", static_cast<long long>(i));
        std::printf("\n");
      }
      if (!a.checksum && a.dump.empty()) continue;
      const conveyor::TensorView& im = b.images();
      // Blocking copies on the batches' stream (the legacy default): for --checksum and --dump only.
      const std::vector<std::byte> images = conveyor_tools::to_host(im), labels = conveyor_tools::to_host(b.labels());
      if (a.checksum) {
        std::uint64_t h = conveyor::fnv1a64(images);
        h = conveyor::fnv1a64(labels, h);
        h = conveyor::fnv1a64(std::as_bytes(b.indices()), h);
        if (b.targets().data) h = conveyor::fnv1a64(conveyor_tools::to_host(b.targets()), h);
        std::printf("checksum %d %llu %016llx\n", epoch, static_cast<unsigned long long>(b.number()),
                    static_cast<unsigned long long>(h));
      }
      if (!a.dump.empty()) {
        char stem[64];
        std::snprintf(stem, sizeof stem, "epoch%d_batch%05llu_", epoch, static_cast<unsigned long long>(b.number()));
        const std::filesystem::path dir(a.dump);
        std::vector<std::int64_t> shape(im.shape.begin(), im.shape.begin() + im.rank);
        write_npy(dir / (std::string(stem) + "images.npy"), npy_descr(im.dtype), shape, images.data(), images.size());
        const std::vector<std::int64_t> n{static_cast<std::int64_t>(b.size())};
        write_npy(dir / (std::string(stem) + "labels.npy"), "<i8", n, labels.data(), labels.size());
        write_npy(dir / (std::string(stem) + "indices.npy"), "<i8", n, b.indices().data(), b.size() * 8);
      }
    }
    // Per epoch, for decode = auto, whose first epoch runs at the starting share.
    const double epoch_seconds = conveyor::seconds_since(epoch_start);
    std::printf("epoch %d: %.1f img/s, gpu share %.3f\n", epoch,
                epoch_seconds > 0 ? double(delivered - delivered_before) / epoch_seconds : 0.0, pipe.stats().gpu_share);
  }
  wait_for_device(a);  // the last batch's kernel counts too
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const conveyor::PipelineStats st = pipe.stats();
  std::printf("%s", st.table().c_str());
  const auto skipped = pipe.skipped();
  for (const auto& s : skipped)
    std::printf("skipped %llu %s: %s\n", static_cast<unsigned long long>(s.index), s.name.c_str(), s.reason.c_str());
  if (!skipped.empty()) std::printf("%zu samples skipped\n", skipped.size());
  if (!a.stats_json.empty()) {
    std::ofstream out(a.stats_json);
    out << st.json() << "\n";
  }
  std::printf("%.1f img/s\n", seconds > 0 ? double(delivered) / seconds : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
#if !CONVEYOR_CUDA_COMPILATION()
    if (a.device == "cuda")
      throw conveyor::ConfigError("--device cuda: this conveyor-bench was built without the CUDA backend");
    if (!a.device_sync.empty())
      throw conveyor::ConfigError("--device-sync: this conveyor-bench was built without the CUDA backend");
#else
    // How host threads wait for the device, set before anything makes the context.
    if (!a.device_sync.empty()) conveyor::cuda::set_device_sync(a.device_sync);
#endif
    const conveyor_tools::OpenedDataset opened = conveyor_tools::open_dataset(a.data, a.format);
    const conveyor::AnyDataset& data = opened.data;
    if (opened.shard_sizes)
      std::printf("%s: %llu samples in %zu shards, opened in %.3f s\n", opened.kind.c_str(),
                  static_cast<unsigned long long>(data.size()), opened.shard_sizes->size(), opened.open_seconds);
    conveyor::ImageAugment aug = a.transform == "train" ? conveyor::ImageAugment::train(a.size)
                                                        : conveyor::ImageAugment::eval(a.size * 256 / 224, a.size);
    aug.dtype = a.dtype;
    aug.layout = a.layout;
    aug.roi = a.roi;
    aug.decode_scaling = a.decode_scaling;
    if (a.dtype == conveyor::DType::u8) aug.normalize.reset();
    aug.transforms = recipe_transforms(a.recipe);
    conveyor::PipelineOptions options{.batch_size = a.batch, .workers = a.workers, .prefetch = a.prefetch,
                                      .on_error = a.on_error, .seed = a.seed,
                                      .device = a.device == "cuda" ? 0 : conveyor::cpu_device, .decode = a.decode,
                                      .gpu_share = a.gpu_share, .gpu_upsampling = a.gpu_upsampling,
                                      .gpu_part_images = a.gpu_part, .batch_transform = batch_transform(a)};
    std::optional<conveyor::AnySampler> sampler;
    if (a.shard_window > 0) {
      if (!opened.shard_sizes) throw conveyor::ConfigError("--shard-window needs a shard dataset (wds or tfrecord)");
      conveyor::ShardShuffleOptions so{.seed = a.seed, .window = a.shard_window};
      if (a.shard_from_env) {
        const conveyor::LaunchEnvironment env = conveyor::launch_environment();
        so.num_replicas = env.world_size;
        so.rank = env.rank;
        if (a.device == "cuda") options.device = static_cast<int>(env.local_rank);
      }
      sampler.emplace(conveyor::ShardShuffleSampler(*opened.shard_sizes, so));
    } else if (a.shard_from_env) {  // this process's share, by RANK/WORLD_SIZE (or SLURM / Open MPI)
      const auto d = conveyor::DistributedSampler::from_env(data.size(), {.seed = a.seed});
      if (a.device == "cuda") options.device = d.local_rank();
      sampler.emplace(d);
    } else {
      sampler.emplace(conveyor::RandomSampler(data.size(), {.seed = a.seed}));
    }
    if (a.local_views >= 0) {  // DINO's crops: 2 at scale (0.4, 1), local ones of 96 px at (0.05, 0.4)
      conveyor::ImageAugment global = aug, local = aug;
      global.crop = conveyor::RandomResizedCrop{.size = a.size, .scale = {0.4, 1.0}};
      local.crop = conveyor::RandomResizedCrop{.size = 96, .scale = {0.05, 0.4}};
      conveyor::Views views{{{global, 2}}};
      if (a.local_views > 0) views.views.push_back({local, a.local_views});
      conveyor::BatchPipeline pipe(data, std::move(*sampler), views, options);
      return run(pipe, a);
    }
    conveyor::BatchPipeline pipe(data, std::move(*sampler), aug, options);
    return run(pipe, a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conveyor-bench: %s\n", e.what());
    return 1;
  }
}
