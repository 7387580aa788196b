// conveyor-serve: an example inference front end. It preprocesses the JPEGs of each HTTP request
// into one normalised batch with a conveyor::Preprocessor (the eval preset) and answers with the
// batch's shape and checksum, where a model would run on it; GET /metrics serves the request
// path's Prometheus metrics. The HTTP part is cpp-httplib (Debian: libcpp-httplib-dev); the
// library itself does not depend on it.
//
//   conveyor-serve [--port P] [--host H] [--device cpu|cuda] [--workers N] [--lanes L]
//                  [--max-images M] [--timeout-ms T] [--size PX]
//
//   POST /preprocess  multipart/form-data, one image per part, all under one field name, in
//                     order (curl -F image=@a.jpg -F image=@b.jpg), or one image as the whole body. 200 {"images": n, "shape": [...], "dtype": "f32",
//                     "checksum": "<fnv1a64 of the tensor's bytes, hex>"}; 400 no image; 413 more
//                     than max-images; 422 a bad image (its position and reason); 503 overloaded;
//                     504 past the timeout.
//   GET /metrics      Prometheus text exposition.
//   GET /healthz      "ok".
//
// Prints "listening on HOST:PORT" once it accepts connections (port 0: one the system picks);
// SIGINT or SIGTERM stop it.

#include <conveyor/conveyor.hpp>
#if CONVEYOR_CUDA_COMPILATION()
#include <conveyor/cuda/all.cuh>
#endif

#include <httplib.h>

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Args {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string device = "cpu";
  int workers = -1;
  std::size_t lanes = 2;
  std::size_t max_images = 32;
  int timeout_ms = 1000;
  int size = 224;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "conveyor-serve: " << why << "\n"
            << "usage: conveyor-serve [--port P] [--host H] [--device cpu|cuda] [--workers N] [--lanes L]\n"
            << "         [--max-images M] [--timeout-ms T] [--size PX]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string v = argv[++i];
    const auto number = [&] {
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 0) usage(flag + " wants a non-negative integer, got '" + v + "'");
      return n;
    };
    if (flag == "--host") a.host = v;
    else if (flag == "--port") a.port = static_cast<int>(number());
    else if (flag == "--device") a.device = v;
    else if (flag == "--workers") a.workers = static_cast<int>(number());
    else if (flag == "--lanes") a.lanes = static_cast<std::size_t>(number());
    else if (flag == "--max-images") a.max_images = static_cast<std::size_t>(number());
    else if (flag == "--timeout-ms") a.timeout_ms = static_cast<int>(number());
    else if (flag == "--size") a.size = static_cast<int>(number());
    else usage("unknown flag " + flag);
  }
  if (a.device != "cpu" && a.device != "cuda") usage("--device: cpu or cuda");
  return a;
}

/// A JSON string literal of `s` (quotes, backslashes and control characters escaped).
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", c);
      out += u;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void answer(httplib::Response& res, int status, const std::string& json) {
  res.status = status;
  res.set_content(json + "\n", "application/json");
}

std::string error_json(std::string_view what) { return "{\"error\": " + json_string(what) + "}"; }

/// The images tensor's bytes on the host: a copy that follows the batch on the consumer's stream.
std::vector<std::byte> host_bytes(const conveyor::TensorView& t, [[maybe_unused]] CUstream_st* stream) {
  std::vector<std::byte> out(t.nbytes());
  if (t.device.kind == conveyor::Device::Kind::cpu) {
    std::memcpy(out.data(), t.data, out.size());
  } else {
#if CONVEYOR_CUDA_COMPILATION()
    CONVEYOR_CUDA_TRY(cudaMemcpyAsync(out.data(), t.data, out.size(), cudaMemcpyDeviceToHost, stream));
    CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream));
#endif
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  // SIGINT and SIGTERM go to one thread that stops the server (stopping it is not
  // async-signal-safe): blocked here, before any thread exists, so every thread inherits that.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  try {
    conveyor::ImageAugment eval = conveyor::ImageAugment::eval(a.size * 256 / 224, a.size);
    CUstream_st* stream = nullptr;
#if CONVEYOR_CUDA_COMPILATION()
    if (a.device == "cuda") {
      cudaStream_t s = nullptr;
      CONVEYOR_CUDA_TRY(cudaSetDevice(0));
      CONVEYOR_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      stream = s;
    }
#else
    if (a.device == "cuda") throw conveyor::ConfigError("--device cuda: this conveyor-serve was built without CUDA");
#endif
    conveyor::Preprocessor pre(eval, {.max_images = a.max_images,
                                      .lanes = a.lanes,
                                      .pipeline = {.workers = a.workers,
                                                   .device = a.device == "cuda" ? 0 : conveyor::cpu_device,
                                                   .stream = stream}});
    httplib::Server server;
    server.Post("/preprocess", [&](const httplib::Request& req, httplib::Response& res) {
      std::vector<std::span<const std::byte>> images;
      if (req.is_multipart_form_data()) {
        // httplib keeps the parts in a multimap by field name, which keeps parts of one name in the
        // order they came: clients send every image under the same name.
        for (const auto& [name, part] : req.files)
          images.emplace_back(reinterpret_cast<const std::byte*>(part.content.data()), part.content.size());
      } else if (!req.body.empty()) {
        images.emplace_back(reinterpret_cast<const std::byte*>(req.body.data()), req.body.size());
      }
      if (images.empty()) return answer(res, 400, error_json("no image in the request"));
      if (images.size() > a.max_images)
        return answer(res, 413, error_json(std::to_string(images.size()) + " images, more than the " +
                                           std::to_string(a.max_images) + " a request may hold"));
      try {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(a.timeout_ms);
        const conveyor::Batch b = pre(images, deadline);
        const conveyor::TensorView& t = b.images();
        const std::vector<std::byte> bytes = host_bytes(t, stream);
        char checksum[17];
        std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(conveyor::fnv1a64(bytes)));
        std::string shape;
        for (int i = 0; i < t.rank; ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
        answer(res, 200, "{\"images\": " + std::to_string(b.size()) + ", \"shape\": [" + shape + "], \"dtype\": \"" +
                             std::string(conveyor::to_string(t.dtype)) + "\", \"checksum\": \"" + checksum + "\"}");
      } catch (const conveyor::SampleError& e) {
        answer(res, 422, "{\"error\": " + json_string(e.what()) + ", \"position\": " + std::to_string(e.index()) +
                             ", \"reason\": " + json_string(e.reason()) + "}");
      } catch (const conveyor::Overloaded& e) {
        answer(res, 503, error_json(e.what()));
      } catch (const conveyor::DeadlineExceeded& e) {
        answer(res, 504, error_json(e.what()));
      } catch (const std::exception& e) {
        answer(res, 500, error_json(e.what()));
      }
    });
    server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(conveyor::prometheus_text(pre.stats(), {{"service", "conveyor-serve"}}),
                      "text/plain; version=0.0.4; charset=utf-8");
    });
    server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });

    const int port = a.port ? (server.bind_to_port(a.host, a.port) ? a.port : -1) : server.bind_to_any_port(a.host);
    if (port < 0) throw conveyor::Error("cannot listen on " + a.host + ":" + std::to_string(a.port));
    std::thread stopper([&] {
      int signal = 0;
      sigwait(&stop_signals, &signal);
      server.stop();
    });
    std::printf("listening on %s:%d\n", a.host.c_str(), port);
    std::fflush(stdout);
    server.listen_after_bind();
    if (stopper.joinable()) {
      pthread_kill(stopper.native_handle(), SIGTERM);  // stopped otherwise: let the stopper go
      stopper.join();
    }
    std::printf("stopped after %llu requests\n", static_cast<unsigned long long>(pre.stats().requests));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conveyor-serve: %s\n", e.what());
    return 1;
  }
}
