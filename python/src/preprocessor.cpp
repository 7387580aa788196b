// Preprocessor: conveyor::Preprocessor for services, one call per request, waiting without the
// GIL and cancelling the request on Ctrl-C.

#include "batch.hpp"
#include "options.hpp"
#include "transforms.hpp"

#include <conveyor/serve/metrics.hpp>
#include <conveyor/serve/preprocessor.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace conveyor_ext {
namespace {

/// conveyor::Preprocessor over the type-erased transform, for services: one call per request.
class Preprocessor {
 public:
  Preprocessor(const Transform& transform, const conveyor::PreprocessorOptions& options) : pid_(getpid()) {
    nb::gil_scoped_release release;
    pre_ = std::make_unique<Impl>(transform.any, options);
  }
  Preprocessor(const Preprocessor&) = delete;
  Preprocessor& operator=(const Preprocessor&) = delete;
  ~Preprocessor() {
    if (getpid() != pid_) (void)pre_.release();  // after fork(): its threads are not here; leak, never join
    nb::gil_scoped_release release;
    pre_.reset();
  }

  /// One request: its images' bytes, read without a copy while the call lasts. Waits without the
  /// GIL, seeing Ctrl-C every 50 ms (which cancels the request).
  Batch run(const std::vector<nb::bytes>& images, std::optional<double> timeout) {
    if (getpid() != pid_)
      throw conveyor::Error("conveyor.Preprocessor: made in process " + std::to_string(pid_) +
                            ", its worker threads do not exist after fork(); make it in this process");
    std::vector<std::span<const std::byte>> spans;
    spans.reserve(images.size());
    for (const nb::bytes& b : images) spans.emplace_back(reinterpret_cast<const std::byte*>(b.c_str()), b.size());
    const auto deadline = timeout ? std::chrono::steady_clock::now() +
                                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                            std::chrono::duration<double>(*timeout))
                                  : std::chrono::steady_clock::time_point::max();
    std::optional<Impl::Pending> pending;
    {
      nb::gil_scoped_release release;
      pending.emplace(pre_->submit(spans, deadline));
    }
    for (;;) {
      bool ready = false;
      {
        nb::gil_scoped_release release;
        const auto now = std::chrono::steady_clock::now();
        const auto step = std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(50),
                                                                         deadline - std::min(deadline, now));
        ready = pending->wait_for(step) || std::chrono::steady_clock::now() >= deadline;
      }
      if (ready) break;
      if (PyErr_CheckSignals() != 0) {
        nb::gil_scoped_release release;
        pending.reset();  // cancelled: its lane goes back
        throw nb::python_error();
      }
    }
    nb::gil_scoped_release release;
    return Batch(pending->get(deadline));
  }

  [[nodiscard]] nb::typed<nb::dict, nb::str, nb::object> stats() const {
    const conveyor::PreprocessorStats s = pre_->stats();
    nb::typed<nb::dict, nb::str, nb::object> d;
    d["requests"] = s.requests;
    d["images"] = s.images;
    d["failed"] = s.failed;
    d["errors"] = s.errors;
    d["overloaded"] = s.overloaded;
    d["deadline_exceeded"] = s.deadline_exceeded;
    d["cancelled"] = s.cancelled;
    d["in_flight"] = s.in_flight;
    d["waiting"] = s.waiting;
    d["lanes"] = s.lanes;
    d["slots_held"] = s.slots_held;
    d["latency_count"] = s.latency.count;
    d["latency_seconds_sum"] = s.latency.sum;
    d["pipelines"] = nb::module_::import_("json").attr("loads")(s.pipelines.json());
    return d;
  }
  [[nodiscard]] std::string prometheus(const std::vector<std::pair<std::string, std::string>>& labels) const {
    return conveyor::prometheus_text(pre_->stats(), labels);
  }

 private:
  using Impl = conveyor::Preprocessor<conveyor::AnyTransform>;
  std::unique_ptr<Impl> pre_;
  pid_t pid_;
};

}  // namespace

void bind_preprocessor(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<Preprocessor>(m, "Preprocessor")
      .def(
          "__init__",
          [](Preprocessor* self, const Transform& transform, const nb::kwargs& given) {
            OptionReader reader("Preprocessor", given);
            conveyor::PreprocessorOptions options;
            reader.read(options);
            reader.finish();
            new (self) Preprocessor(transform, options);
          },
          nb::sig("def __init__(self, transform: Transform, /, **options: typing.Any) -> None"),
          "A preprocessor of `transform` with PreprocessorOptions' declared options (its pipeline's among them) by name.")
      .def("run", &Preprocessor::run, "images"_a, "timeout"_a = nb::none())
      .def("stats", &Preprocessor::stats)
      .def("prometheus", &Preprocessor::prometheus, "labels"_a);
}

}  // namespace conveyor_ext
