#pragma once
/// @file
/// A pipeline's stats in Prometheus' text exposition format (version 0.0.4), for a `/metrics`
/// endpoint: counters end in `_total`, units are in the names (`_seconds`, `_bytes`), per-stage
/// worker time is one metric labelled by stage, and the consumer's wait for each batch is a
/// histogram. `promtool check metrics` accepts it (tests/pipeline/test_prometheus.cpp).
///
/// ```
/// std::string body = conveyor::prometheus_text(pipe.stats(), {{"pipeline", "train"}});
/// ```

#include <conveyor/config.hpp>
#include <conveyor/core/histogram.hpp>
#include <conveyor/pipeline/stats.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// A label value with backslash, double quote and line feed escaped, as the format asks.
inline std::string prometheus_escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class PrometheusWriter {
 public:
  PrometheusWriter(std::string_view prefix, const std::vector<std::pair<std::string, std::string>>& labels)
      : prefix_(prefix) {
    for (const auto& [k, v] : labels) base_ += (base_.empty() ? "" : ",") + k + "=\"" + prometheus_escape(v) + "\"";
  }

  /// One metric family: its HELP and TYPE lines.
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP " + prefix_ + std::string(name) + ' ' + std::string(help) + '\n';
    out_ += "# TYPE " + prefix_ + std::string(name) + ' ' + std::string(type) + '\n';
  }
  /// One sample of the family `name` (with `suffix`, e.g. "_bucket"), with extra labels.
  void sample(std::string_view name, double value, std::string_view extra = {}, std::string_view suffix = {}) {
    std::string labels = base_;
    if (!extra.empty()) labels += (labels.empty() ? "" : ",") + std::string(extra);
    char number[64];
    std::snprintf(number, sizeof number, "%.17g", value);
    out_ += prefix_ + std::string(name) + std::string(suffix) + (labels.empty() ? "" : "{" + labels + "}") + ' ' +
            number + '\n';
  }
  void metric(std::string_view name, std::string_view type, std::string_view help, double value) {
    family(name, type, help);
    sample(name, value);
  }
  /// Worker seconds per stage: one family, labelled by stage.
  void stage_seconds(const std::vector<StageStats>& stages) {
    family("stage_seconds_total", "counter", "Worker seconds spent in each stage, summed over workers.");
    for (const StageStats& s : stages) sample("stage_seconds_total", s.seconds, "stage=\"" + prometheus_escape(s.name) + "\"");
  }
  /// A histogram family: cumulative buckets, +Inf, sum and count.
  void histogram(std::string_view name, std::string_view help, const LatencyHistogram& h) {
    family(name, "histogram", help);
    for (std::size_t i = 0; i < LatencyHistogram::bounds.size(); ++i) {
      char le[48];
      std::snprintf(le, sizeof le, "le=\"%g\"", LatencyHistogram::bounds[i]);
      sample(name, double(h.cumulative(i)), le, "_bucket");
    }
    sample(name, double(h.count), "le=\"+Inf\"", "_bucket");
    sample(name, h.sum, {}, "_sum");
    sample(name, double(h.count), {}, "_count");
  }

  [[nodiscard]] std::string take() { return std::move(out_); }

 private:
  std::string prefix_;
  std::string base_;
  std::string out_;
};

/// The work behind a pipeline's batches, or a `Preprocessor`'s lanes' summed (`add_counters`): its
/// workers and their time per stage, memory, uploads, kernels and device JPEG decoding. One
/// writer, so the two expositions name and describe these alike.
inline void write_pipeline_work(PrometheusWriter& w, const PipelineStats& stats) {
  w.metric("workers", "gauge", "Worker threads preparing samples.", stats.workers);
  w.stage_seconds(stats.stages);
  w.family("stage_samples_total", "counter", "Samples through each stage.");
  for (const StageStats& s : stats.stages)
    w.sample("stage_samples_total", double(s.count), "stage=\"" + prometheus_escape(s.name) + "\"");
  w.metric("host_bytes", "gauge", "Host memory held by the slots, pinned arenas included.", double(stats.host_bytes));
  w.metric("device_bytes", "gauge", "Device memory held by the slots and their device steps.", double(stats.device_bytes));
  w.metric("uploaded_bytes_total", "counter", "Bytes copied host to device.", double(stats.bytes_uploaded));
  w.metric("h2d_seconds_total", "counter", "Device seconds of the uploads, from CUDA events.", stats.h2d_seconds);
  w.metric("kernel_seconds_total", "counter", "Device seconds of the batches' kernels, from CUDA events.",
           stats.kernel_seconds);
  w.metric("gpu_decoded_images_total", "counter", "JPEGs decoded by the device's JPEG engines.", double(stats.gpu_decoded));
  w.metric("gpu_decode_fallbacks_total", "counter", "JPEGs the engines refused, decoded on the CPU.",
           double(stats.gpu_decode_fallbacks));
  w.metric("gpu_decode_seconds_total", "counter", "Device seconds of the JPEG engines' decodes, from CUDA events.",
           stats.gpu_decode_seconds);
  w.metric("submit_seconds_total", "counter", "Host seconds the stager threads spent submitting batches.",
           stats.submit_seconds);
  w.metric("gpu_decode_call_seconds_total", "counter", "Host seconds inside the device JPEG decoder's calls.",
           stats.gpu_decode_call_seconds);
  w.metric("gpu_decode_calls_total", "counter", "Batched calls of the device JPEG decoder.",
           double(stats.gpu_decode_calls.count));
}

}  // namespace detail

/// `stats` as Prometheus text, every name starting with `prefix` (default "conveyor_") and every
/// sample carrying `labels` (a pipeline's name, say).
[[nodiscard]] inline std::string prometheus_text(const PipelineStats& stats,
                                                 const std::vector<std::pair<std::string, std::string>>& labels = {},
                                                 std::string_view prefix = "conveyor_") {
  detail::PrometheusWriter w(prefix, labels);
  w.metric("epochs_total", "counter", "Epochs started.", double(stats.epochs));
  w.metric("batches_total", "counter", "Batches delivered.", double(stats.batches));
  w.metric("images_total", "counter", "Samples delivered in batches.", double(stats.images));
  w.metric("skipped_samples_total", "counter", "Samples replaced under on_error skip.", double(stats.skipped));
  w.metric("elapsed_seconds", "gauge", "Seconds from the first iterator's creation to the last delivery.",
           stats.elapsed_seconds);
  w.metric("consumer_wait_seconds_total", "counter", "Seconds the consumer waited for batches not ready yet.",
           stats.consumer_wait_seconds);
  detail::write_pipeline_work(w, stats);
  w.metric("gpu_share_ratio", "gauge", "Share of the JPEGs the engines take that is sent to them.", stats.gpu_share);
  w.histogram("batch_wait_seconds", "Seconds the consumer waited for each batch (0 when it was ready).",
              stats.batch_wait);
  return w.take();
}

}  // namespace v0
}  // namespace conveyor
