// conveyor-make-dataset: a deterministic ImageNet-like ImageFolder tree cut from a folder of
// photos, for benchmarks that need nothing but photos.
//
//   conveyor-make-dataset --photos DIR --out DIR [--count N] [--classes K] [--seed S] [--jobs J]
//                         [--dense | --native] [--png]
//
// Image i is a random crop of one photo (class k draws from photos p with p % K == k, so the
// classes are learnable; with more classes than photos every class draws from all of them, and
// the labels carry nothing to learn: a throughput set, and the tool says so), rescaled (antialiased) to ImageNet's size distribution (long side 500 px
// for 40%, 160..499 for 50%, 500..1500 for 10%; aspect 4:3, 3:2, 1:1, 16:9 or 5:4, 22% portrait)
// (never upscaled: a crop smaller than its target keeps its size; mean about 390 x 330) and
// encoded like ImageNet's files (quality 75..95; 88% 4:2:0, 10% 4:4:4, 2% 4:2:2; 5% progressive;
// 1% grayscale). Every choice for image i comes from a counter-based stream keyed by (seed, i), so
// the bytes do not depend on --jobs. Prints the mean size and bits per pixel: smooth photos give
// fewer bits per pixel than ImageNet's (about 4.5), and that is reported, not faked. --dense keeps
// more detail: each image is downscaled from 80..100% of the largest box (not 35..100%) and
// encoded at quality 90..95, closer to ImageNet's bits per pixel. --native cuts each image from its
// photo at the photo's own resolution (a window of the drawn size, pixel for pixel, no resampling;
// shrunk to fit a photo smaller than it) and encodes it at quality 90..95: the photos' full detail
// per pixel, as a camera's ImageNet file has. --png writes the same pixels as
// PNG files instead (libpng, zlib's default level 6 as Pillow's save; 8-bit RGB, or grey for the
// grayscale 1%), for the PNG benchmarks.

#include <conveyor/conveyor.hpp>

#include <png.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Args {
  std::string photos, out;
  int count = 1000, classes = 10, jobs = 0;
  std::uint64_t seed = 0;
  bool dense = false, native = false, png = false;
};

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "conveyor-make-dataset: " << error << "\n"
            << "usage: conveyor-make-dataset --photos DIR --out DIR [--count N] [--classes K] [--seed S] [--jobs J]\n"
               "                             [--dense | --native] [--png]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view f = argv[i];
    if (f == "--dense" || f == "--native" || f == "--png") {
      (f == "--png" ? a.png : f == "--native" ? a.native : a.dense) = true;
      continue;
    }
    if (i + 1 >= argc) usage(std::string(f) + " needs a value");
    const std::string v = argv[++i];
    try {
      if (f == "--photos") a.photos = v;
      else if (f == "--out") a.out = v;
      else if (f == "--count") a.count = std::stoi(v);
      else if (f == "--classes") a.classes = std::stoi(v);
      else if (f == "--seed") a.seed = std::stoull(v);
      else if (f == "--jobs") a.jobs = std::stoi(v);
      else usage("unknown option '" + std::string(f) + "'");
    } catch (const std::logic_error&) {
      usage(std::string(f) + " expects a number, got '" + v + "'");
    }
  }
  if (a.photos.empty() || a.out.empty()) usage("--photos and --out are required");
  if (a.count < 1 || a.classes < 1) usage("--count and --classes must be >= 1");
  if (a.dense && a.native) usage("--dense and --native are two different sets: give one");
  return a;
}

/// Writes 8-bit RGB or grey pixels as a PNG file (libpng's simplified API, zlib's default level).
void write_png(const fs::path& path, const std::uint8_t* pixels, int width, int height, int channels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  if (!png_image_write_to_file(&image, path.c_str(), 0, pixels, width * channels, nullptr))
    throw std::runtime_error(path.string() + ": " + image.message);
}

/// One decoded source photo (colour only: grayscale outputs are made by the encoder).
struct Photo {
  std::string name;
  conveyor::RgbImage image;
};

std::vector<Photo> load_photos(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (conveyor::ImageFolder::is_jpeg_name(e.path().filename().string())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<Photo> photos;
  conveyor::ByteBuffer bytes;
  conveyor::JpegDecoder decoder;
  for (const auto& f : files) {
    conveyor::read_file(f.string(), bytes);
    const conveyor::JpegInfo info = decoder.read_header(bytes.span());
    if (info.components != 3) continue;  // grayscale sources would make grey classes
    photos.push_back({f.filename().string(), conveyor::decode_jpeg(bytes.span())});
  }
  if (photos.empty()) throw conveyor::ConfigError("no colour JPEG photo in " + dir);
  return photos;
}

struct Made {
  std::size_t bytes = 0;
  std::size_t pixels = 0;
};

/// Cuts the image from 35..100% (dense: 80..100%) of the largest box of the output's aspect inside
/// the photo and rescales it (antialiased) to `ow` x `oh`, or keeps a crop smaller than that.
void resample_crop(const Args& a, const Photo& src, conveyor::CounterRng& rng, int& ow, int& oh,
                   std::vector<std::uint8_t>& pixels, conveyor::ops::cpu::ResampleScratch& scratch) {
  const int W = src.image.width, H = src.image.height;
  const double box_aspect = double(ow) / oh;
  double bw = W, bh = W / box_aspect;
  if (bh > H) bh = H, bw = H * box_aspect;
  const double f = a.dense ? 0.8 + 0.2 * rng.uniform() : 0.35 + 0.65 * rng.uniform();
  const int cw = std::max(1, int(bw * f)), ch = std::max(1, int(bh * f));
  const int left = int(rng.below(std::uint64_t(W - cw + 1))), top = int(rng.below(std::uint64_t(H - ch + 1)));
  if (cw < ow) {  // photographs are not upscaled: a small crop keeps its size
    ow = cw;
    oh = ch;
  }

  conveyor::ops::SamplePlan plan;
  plan.out_width = ow;
  plan.out_height = oh;
  plan.x = {0.0f, float(cw) / float(ow), 0, ow, left, left + cw};
  plan.y = {0.0f, float(ch) / float(oh), 0, oh, top, top + ch};
  plan.src = {0, 3, std::int64_t{W} * 3, W, H};
  conveyor::ops::OutputParams params;
  params.dtype = conveyor::DType::u8;
  params.layout = conveyor::Layout::NHWC;
  pixels.resize(std::size_t(ow) * oh * 3);
  conveyor::ops::cpu::resample(src.image.pixels.data(), plan, params, pixels.data(), scratch);
}

/// Encodes image `i` of class `k` like ImageNet's files (see the top) and writes it.
Made encode(const Args& a, conveyor::CounterRng& rng, int k, int i, std::vector<std::uint8_t>& pixels, int ow, int oh) {
  conveyor::EncodeOptions enc;
  enc.quality = a.dense || a.native ? 90 + int(rng.below(6)) : 75 + int(rng.below(21));
  const double s = rng.uniform();
  enc.subsampling = s < 0.88 ? conveyor::ChromaSubsampling::s420
                             : s < 0.98 ? conveyor::ChromaSubsampling::s444 : conveyor::ChromaSubsampling::s422;
  enc.progressive = rng.uniform() < 0.05;
  int channels = 3;
  if (rng.uniform() < 0.01) {  // grayscale: BT.601 luma
    for (std::size_t p = 0; p < std::size_t(ow) * oh; ++p)
      pixels[p] = static_cast<std::uint8_t>(
          (299 * pixels[p * 3] + 587 * pixels[p * 3 + 1] + 114 * pixels[p * 3 + 2] + 500) / 1000);
    channels = 1;
  }
  char cls[16], name[48];
  std::snprintf(cls, sizeof cls, "n%08d", 1000000 + k);
  std::snprintf(name, sizeof name, "%s_%d.%s", cls, i, a.png ? "png" : "JPEG");
  const fs::path path = fs::path(a.out) / cls / name;
  if (a.png) {
    write_png(path, pixels.data(), ow, oh, channels);
    return {std::size_t(fs::file_size(path)), std::size_t(ow) * oh};
  }
  const auto jpeg = conveyor::encode_jpeg(pixels.data(), ow, oh, channels, std::size_t(ow) * channels, enc);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(jpeg.data()),
                                              static_cast<std::streamsize>(jpeg.size()));
  return {jpeg.size(), std::size_t(ow) * oh};
}

/// Image i: its class, photo and size drawn from its own stream, cut (natively or rescaled) and encoded.
Made make_one(const Args& a, const std::vector<Photo>& photos, int i, conveyor::ops::cpu::ResampleScratch& scratch) {
  conveyor::CounterRng rng(a.seed, 0, static_cast<std::uint64_t>(i), conveyor::RngOp::user);
  const int k = i % a.classes;
  std::vector<std::size_t> pool;  // class k's photos
  for (std::size_t p = 0; p < photos.size(); ++p)
    if (static_cast<int>(p % static_cast<std::size_t>(a.classes)) == k || a.classes > static_cast<int>(photos.size()))
      pool.push_back(p);
  const Photo& src = photos[pool[rng.below(pool.size())]];

  // Output size: ImageNet-like long side and aspect.
  static constexpr double aspects[] = {4.0 / 3, 3.0 / 2, 1.0, 16.0 / 9, 5.0 / 4};
  const double aspect = aspects[rng.below(5)];
  const double u = rng.uniform();
  const int long_side = u < 0.4 ? 500 : u < 0.9 ? 160 + int(rng.below(340)) : 500 + int(rng.below(1001));
  const bool portrait = rng.uniform() < 0.22;
  int ow = long_side, oh = std::max(1, int(long_side / aspect + 0.5));
  if (portrait) std::swap(ow, oh);

  const int W = src.image.width, H = src.image.height;
  std::vector<std::uint8_t> pixels;
  if (a.native) {  // a window at the photo's resolution: shrunk to fit, then copied pixel for pixel
    const double fit = std::min({1.0, double(W) / ow, double(H) / oh});
    ow = std::max(1, int(ow * fit));
    oh = std::max(1, int(oh * fit));
    const int left = int(rng.below(std::uint64_t(W - ow + 1))), top = int(rng.below(std::uint64_t(H - oh + 1)));
    pixels.resize(std::size_t(ow) * oh * 3);
    for (int y = 0; y < oh; ++y)
      std::copy_n(src.image.pixels.data() + (std::size_t(top + y) * W + left) * 3, std::size_t(ow) * 3,
                  pixels.data() + std::size_t(y) * ow * 3);
  } else {
    resample_crop(a, src, rng, ow, oh, pixels, scratch);
  }
  return encode(a, rng, k, i, pixels, ow, oh);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    const std::vector<Photo> photos = load_photos(a.photos);
    for (int k = 0; k < a.classes; ++k) {
      char cls[16];
      std::snprintf(cls, sizeof cls, "n%08d", 1000000 + k);
      fs::create_directories(fs::path(a.out) / cls);
    }
    const int jobs = a.jobs > 0 ? a.jobs : std::max(1, int(std::thread::hardware_concurrency()));
    std::atomic<int> next{0};
    std::atomic<std::size_t> bytes{0}, pixels{0};
    std::mutex error_mutex;
    std::string error;
    std::vector<std::thread> threads;
    for (int t = 0; t < jobs; ++t)
      threads.emplace_back([&] {
        conveyor::ops::cpu::ResampleScratch scratch;
        for (int i = next++; i < a.count; i = next++) {
          try {
            const Made m = make_one(a, photos, i, scratch);
            bytes += m.bytes;
            pixels += m.pixels;
          } catch (const std::exception& e) {
            std::lock_guard lock(error_mutex);
            error = e.what();
          }
        }
      });
    for (auto& t : threads) t.join();
    if (!error.empty()) throw std::runtime_error(error);
    std::printf("%d images in %d classes from %zu photos: mean %.3f megapixels, %.1f KB, %.2f bits per pixel\n",
                a.count, a.classes, photos.size(), double(pixels) / a.count / 1e6, double(bytes) / a.count / 1024,
                8.0 * double(bytes) / double(pixels));
    if (a.classes > static_cast<int>(photos.size()))
      std::printf("more classes than photos: every class draws from all of them, so the labels are not learnable\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conveyor-make-dataset: %s\n", e.what());
    return 1;
  }
}
