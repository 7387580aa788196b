// conveyor-latency: request latency of a Preprocessor, measured as a service measures it: from a
// request's encoded bytes in memory to its batch ready on the consumer's stream (on the host, for
// the CPU backend), over request sizes and numbers of concurrent clients.
//
//   conveyor-latency --data DIR [--device cpu|cuda] [--workers N] [--lanes L] [--sizes 1,8,32]
//                    [--clients 1,32] [--requests R] [--files K] [--size PX] [--dtype u8|f32|f16|bf16]
//                    [--decode cpu|gpu|auto] [--gpu-share F] [--seed S] [--json FILE] [--table]
//                    [--soak N [--bad F] [--cancel F]]
//
// Each client sends R requests back to back, each of `size` images drawn from the first K files
// of DIR (read into memory first). The eval preset: Resize(size * 256 / 224), CenterCrop(size),
// normalize, NCHW. One line per (size, clients):
//   size 32, clients 1: 500 requests, p50 3.1 ms, p99 4.0 ms, max 5.2 ms, 10321 img/s
// so the last line is the last configuration's. --table prints, before each line, the lanes'
// pipeline table (worker time per stage, upload, kernel and submit time per batch) and the mean
// wait for a lane.
//
// --soak N: instead, the clients (the largest --clients) send N requests of 1 to the largest
// --sizes images in all, a share --bad (default 0.01) with one truncated image at a random
// position and a share --cancel (0.01) dropped before their batch is taken. Every answer is
// checked image by image against that file's own batch, every refusal for its position and
// reason; the resident set size at every tenth of the requests, the slots still held and the
// requests in flight are reported last. Exit status 1 on any wrong answer, leaked slot or
// request left in flight.

#include <conveyor/conveyor.hpp>

#include "dataset_arg.hpp"
#include "host_copy.hpp"
#if CONVEYOR_CUDA_COMPILATION()
#include <conveyor/cuda/all.cuh>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

struct Args {
  std::string data;
  std::string device = "cpu";
  int workers = -1;
  std::size_t lanes = 0;  // 0: as many as the largest number of clients, at most 4
  std::vector<std::size_t> sizes{1, 8, 32};
  std::vector<std::size_t> clients{1};
  std::size_t requests = 200;
  std::size_t files = 512;
  int size = 224;
  conveyor::DType dtype = conveyor::DType::bf16;
  conveyor::JpegDecode decode = conveyor::JpegDecode::cpu;
  double gpu_share = 1.0;
  std::uint64_t seed = 0;
  std::string json;
  bool table = false;
  std::size_t soak = 0;
  double bad = 0.01, cancel = 0.01;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "conveyor-latency: " << why << "\n"
            << "usage: conveyor-latency --data DIR [--device cpu|cuda] [--workers N] [--lanes L] [--sizes 1,8,32]\n"
            << "         [--clients 1,32] [--requests R] [--files K] [--size PX] [--dtype u8|f32|f16|bf16]\n"
            << "         [--decode cpu|gpu|auto] [--gpu-share F] [--seed S] [--json FILE] [--table]\n"
            << "         [--soak N [--bad F] [--cancel F]]\n";
  std::exit(2);
}

std::uint64_t to_uint(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end || v[0] == '-') usage(flag + " wants a non-negative integer, got '" + v + "'");
  return n;
}

std::vector<std::size_t> to_list(const std::string& flag, const std::string& v) {
  std::vector<std::size_t> out;
  std::size_t at = 0;
  while (at <= v.size()) {
    const std::size_t comma = std::min(v.find(',', at), v.size());
    out.push_back(static_cast<std::size_t>(to_uint(flag, v.substr(at, comma - at))));
    if (out.back() == 0) usage(flag + " values must be > 0");
    at = comma + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--data") a.data = value();
    else if (flag == "--device") a.device = value();
    else if (flag == "--workers") a.workers = static_cast<int>(to_uint(flag, value()));
    else if (flag == "--lanes") a.lanes = static_cast<std::size_t>(to_uint(flag, value()));
    else if (flag == "--sizes") a.sizes = to_list(flag, value());
    else if (flag == "--clients") a.clients = to_list(flag, value());
    else if (flag == "--requests") a.requests = static_cast<std::size_t>(to_uint(flag, value()));
    else if (flag == "--files") a.files = static_cast<std::size_t>(to_uint(flag, value()));
    else if (flag == "--size") a.size = static_cast<int>(to_uint(flag, value()));
    else if (flag == "--seed") a.seed = to_uint(flag, value());
    else if (flag == "--json") a.json = value();
    else if (flag == "--table") a.table = true;
    else if (flag == "--soak") a.soak = static_cast<std::size_t>(to_uint(flag, value()));
    else if (flag == "--bad") a.bad = std::strtod(value().c_str(), nullptr);
    else if (flag == "--cancel") a.cancel = std::strtod(value().c_str(), nullptr);
    else if (flag == "--gpu-share") a.gpu_share = std::strtod(value().c_str(), nullptr);
    else if (flag == "--dtype") {
      const std::string v = value();
      if (v == "u8") a.dtype = conveyor::DType::u8;
      else if (v == "f32") a.dtype = conveyor::DType::f32;
      else if (v == "f16") a.dtype = conveyor::DType::f16;
      else if (v == "bf16") a.dtype = conveyor::DType::bf16;
      else usage("--dtype: u8, f32, f16 or bf16");
    } else if (flag == "--decode") {
      const std::string v = value();
      if (v == "cpu") a.decode = conveyor::JpegDecode::cpu;
      else if (v == "gpu") a.decode = conveyor::JpegDecode::gpu;
      else if (v == "auto") a.decode = conveyor::JpegDecode::adaptive;
      else usage("--decode: cpu, gpu or auto");
    } else usage("unknown flag " + flag);
  }
  if (a.data.empty()) usage("--data is required");
  if (a.device != "cpu" && a.device != "cuda") usage("--device: cpu or cuda");
  if (a.requests == 0 || a.files == 0) usage("--requests and --files must be > 0");
  return a;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t at = static_cast<std::size_t>(q * double(v.size() - 1) + 0.5);
  return v[std::min(at, v.size() - 1)];
}

/// A client's wait for its batch on the consumer's stream: an event recorded on the stream after
/// the batch was handed out, so the wait is for the work queued before it, not after.
class Waiter {
 public:
#if CONVEYOR_CUDA_COMPILATION()
  /// `stream`: the device's consumer stream, or nullptr on the CPU backend.
  explicit Waiter(CUstream_st* stream) : stream_(stream) {
    if (stream_) CONVEYOR_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  }
  ~Waiter() {
    if (event_) (void)cudaEventDestroy(event_);
  }
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;
  void wait(const conveyor::Batch& b) {
    if (!event_ || b.images().device.kind != conveyor::Device::Kind::cuda) return;
    CONVEYOR_CUDA_TRY(cudaEventRecord(event_, stream_));
    CONVEYOR_CUDA_TRY(cudaEventSynchronize(event_));
  }

 private:
  CUstream_st* stream_;
  cudaEvent_t event_ = nullptr;
#else
  explicit Waiter(CUstream_st*) {}
  void wait(const conveyor::Batch&) {}  // host batches are ready when handed out
#endif
};

/// The consumer's stream: a non-blocking one on the device, so the legacy stream's implicit
/// synchronisation stays out of the figures.
CUstream_st* consumer_stream([[maybe_unused]] const Args& a) {
#if CONVEYOR_CUDA_COMPILATION()
  if (a.device == "cuda") {
    cudaStream_t s = nullptr;
    CONVEYOR_CUDA_TRY(cudaSetDevice(0));
    CONVEYOR_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }
#endif
  return nullptr;
}

double rss_mb() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / 1e6;
}

/// --soak: see the file's comment.
int soak(const Args& a, const std::vector<conveyor::ByteBuffer>& files, const conveyor::ImageAugment& eval,
         CUstream_st* stream, std::size_t lanes) {
  const std::size_t clients = *std::max_element(a.clients.begin(), a.clients.end());
  const std::size_t max_images = *std::max_element(a.sizes.begin(), a.sizes.end());
  conveyor::Preprocessor pre(eval, {.max_images = max_images, .lanes = lanes, .max_waiting = clients + 1,
                                    .pipeline = {.workers = a.workers, .seed = a.seed,
                                                 .device = a.device == "cuda" ? 0 : conveyor::cpu_device,
                                                 .stream = stream}});
  std::vector<std::uint64_t> reference(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::vector<std::span<const std::byte>> one{files[i].span()};
    reference[i] = conveyor::fnv1a64(conveyor_tools::to_host(pre(one).images(), stream));
  }
  std::atomic<std::size_t> next{0}, answered{0}, wrong{0}, refused{0}, misrefused{0}, cancelled{0};
  std::vector<std::atomic<double>> rss(10);  // at each tenth of the requests
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      conveyor::CounterRng rng(a.seed, 1000 + c, 0, conveyor::RngOp::user);
      std::vector<std::size_t> picks;
      std::vector<std::span<const std::byte>> req;
      std::vector<std::byte> truncated;
      try {
        for (std::size_t r; (r = next++) < a.soak;) {
          if (a.soak >= 10 && r % (a.soak / 10) == 0 && r / (a.soak / 10) < 10) rss[r / (a.soak / 10)] = rss_mb();
          const std::size_t n = 1 + rng.below(max_images);
          picks.resize(n);
          req.resize(n);
          for (std::size_t k = 0; k < n; ++k) req[k] = files[picks[k] = rng.below(files.size())].span();
          const bool bad = rng.uniform() < a.bad;
          const std::size_t at = bad ? rng.below(n) : n;
          if (bad) {  // a header and part of the entropy-coded data: the decoder runs out
            truncated.assign(req[at].begin(), req[at].begin() + std::min<std::size_t>(req[at].size(), 300));
            req[at] = truncated;
          }
          if (rng.uniform() < a.cancel) {
            auto pending = pre.submit(req);
            if (rng.below(2)) (void)pending.wait_for(std::chrono::microseconds(rng.below(3000)));
            ++cancelled;
            continue;
          }
          try {
            const conveyor::Batch b = pre(req);
            if (bad) {
              ++misrefused;
              continue;
            }
            const std::vector<std::byte> bytes = conveyor_tools::to_host(b.images(), stream);
            const std::size_t each = bytes.size() / n;
            bool ok = b.size() == n;
            for (std::size_t k = 0; ok && k < n; ++k)
              ok = conveyor::fnv1a64(std::span(bytes).subspan(k * each, each)) == reference[picks[k]];
            ++(ok ? answered : wrong);
          } catch (const conveyor::SampleError& e) {
            ++(bad && e.index() == at && !e.reason().empty() ? refused : misrefused);
          }
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "conveyor-latency: soak client %zu: %s\n", c, e.what());
        ++wrong;
      }
    });
  for (std::thread& t : threads) t.join();
  const conveyor::PreprocessorStats st = pre.stats();
  std::printf("soak: %zu requests from %zu clients: %zu answered right, %zu wrong; %zu bad refused with their "
              "position and reason, %zu not; %zu cancelled\n",
              a.soak, clients, answered.load(), wrong.load(), refused.load(), misrefused.load(), cancelled.load());
  std::string tenths;
  for (std::size_t i = 1; i < rss.size(); ++i) tenths += std::to_string(static_cast<int>(rss[i].load() + 0.5)) + " ";
  std::printf("soak: RSS in MB at each tenth from 10 %%: %sand %.0f at the end; %zu slots held, %zu requests in "
              "flight, %llu counted cancelled\n",
              tenths.c_str(), rss_mb(), st.slots_held, st.in_flight, static_cast<unsigned long long>(st.cancelled));
  return wrong || misrefused || st.slots_held || st.in_flight ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
#if !CONVEYOR_CUDA_COMPILATION()
    if (a.device == "cuda") throw conveyor::ConfigError("--device cuda: this conveyor-latency was built without the CUDA backend");
#endif
    const conveyor_tools::OpenedDataset opened = conveyor_tools::open_dataset(a.data, "auto");
    std::vector<conveyor::ByteBuffer> files(std::min<std::uint64_t>(a.files, opened.data.size()));
    for (std::size_t i = 0; i < files.size(); ++i) opened.data.read(i, files[i]);
    conveyor::ImageAugment eval = conveyor::ImageAugment::eval(a.size * 256 / 224, a.size);
    eval.dtype = a.dtype;
    if (a.dtype == conveyor::DType::u8) eval.normalize.reset();
    const std::size_t most_clients = *std::max_element(a.clients.begin(), a.clients.end());
    const std::size_t max_images = *std::max_element(a.sizes.begin(), a.sizes.end());
    const std::size_t lanes = a.lanes ? a.lanes : std::min<std::size_t>(most_clients, 4);

    CUstream_st* const stream = consumer_stream(a);
    if (a.soak) return soak(a, files, eval, stream, lanes);
    std::string json = "[";
    for (std::size_t clients : a.clients) {
      for (std::size_t size : a.sizes) {
        conveyor::PipelineOptions po{.workers = a.workers, .prefetch = 3, .seed = a.seed,
                                     .device = a.device == "cuda" ? 0 : conveyor::cpu_device, .stream = stream,
                                     .decode = a.decode, .gpu_share = a.gpu_share};
        conveyor::Preprocessor pre(eval, {.max_images = max_images, .lanes = lanes, .max_waiting = clients + 1,
                                          .pipeline = po});
        // Warm up every lane (first allocations, first device work) before timing.
        {
          std::vector<std::thread> warm;
          for (std::size_t l = 0; l < lanes; ++l)
            warm.emplace_back([&] {
              Waiter waiter(stream);
              std::vector<std::span<const std::byte>> req;
              for (std::size_t i = 0; i < size; ++i) req.emplace_back(files[i % files.size()].span());
              for (int r = 0; r < 3; ++r) waiter.wait(pre(req));
            });
          for (std::thread& t : warm) t.join();
        }
        std::vector<std::vector<double>> per_client(clients);
        std::atomic<bool> failed{false};
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::thread> threads;
        for (std::size_t c = 0; c < clients; ++c)
          threads.emplace_back([&, c] {
            conveyor::CounterRng rng(a.seed, c, size, conveyor::RngOp::user);
            std::vector<std::span<const std::byte>> req(size);
            try {
              Waiter waiter(stream);
              for (std::size_t r = 0; r < a.requests; ++r) {
                for (auto& s : req) s = files[rng.below(files.size())].span();
                const auto start = std::chrono::steady_clock::now();
                const conveyor::Batch b = pre(req);
                waiter.wait(b);
                per_client[c].push_back(conveyor::seconds_since(start));
              }
            } catch (const std::exception& e) {
              std::fprintf(stderr, "conveyor-latency: client %zu: %s\n", c, e.what());
              failed = true;
            }
          });
        for (std::thread& t : threads) t.join();
        if (failed) return 1;
        const double wall = conveyor::seconds_since(t0);
        std::vector<double> all;
        for (const auto& v : per_client) all.insert(all.end(), v.begin(), v.end());
        const double p50 = 1e3 * percentile(all, 0.5), p99 = 1e3 * percentile(all, 0.99),
                     worst = 1e3 * *std::max_element(all.begin(), all.end());
        const double rate = double(all.size() * size) / wall;
        if (a.table) {
          const conveyor::PreprocessorStats st = pre.stats();
          std::printf("%s", st.pipelines.table().c_str());
          std::printf("lane wait: %.3f ms mean over %llu requests\n",
                      st.queue_wait.count ? 1e3 * st.queue_wait.sum / double(st.queue_wait.count) : 0.0,
                      static_cast<unsigned long long>(st.queue_wait.count));
        }
        std::printf("size %zu, clients %zu: %zu requests, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %.0f img/s\n", size,
                    clients, all.size(), p50, p99, worst, rate);
        std::fflush(stdout);
        char row[256];
        std::snprintf(row, sizeof row,
                      "%s{\"size\": %zu, \"clients\": %zu, \"requests\": %zu, \"p50_ms\": %.4f, \"p99_ms\": %.4f, "
                      "\"max_ms\": %.4f, \"images_per_second\": %.1f}",
                      json.size() > 1 ? ", " : "", size, clients, all.size(), p50, p99, worst, rate);
        json += row;
      }
    }
    if (!a.json.empty()) std::ofstream(a.json) << json << "]\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conveyor-latency: %s\n", e.what());
    return 1;
  }
}
