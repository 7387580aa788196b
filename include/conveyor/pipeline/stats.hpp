#pragma once
/// @file
/// `PipelineStats`: where a pipeline's time went, as numbers, a table and JSON.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/histogram.hpp>
#include <conveyor/core/linear_fit.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/device/backend.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// `s` as a JSON string: quoted, with quotes, backslashes and control characters escaped.
[[nodiscard]] inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + '"';
}

}  // namespace detail

/// Totals of one stage over all workers.
struct StageStats {
  std::string name;         ///< "read", then the transform's (`stage_names()`)
  std::uint64_t count = 0;  ///< samples through the stage
  double seconds = 0;       ///< worker time spent in it, summed over workers
};

/// A pipeline's counters since construction.
struct PipelineStats {
  int workers = 0;
  std::uint64_t epochs = 0;   ///< epochs started
  std::uint64_t batches = 0;  ///< batches delivered
  std::uint64_t images = 0;   ///< samples delivered
  double elapsed_seconds = 0;  ///< from the first iterator's creation to the last delivery
  double images_per_second = 0;
  double consumer_wait_seconds = 0;  ///< time the consumer blocked for a batch not ready yet
  double starvation = 0;             ///< consumer_wait_seconds / elapsed_seconds
  LatencyHistogram batch_wait;       ///< the consumer's wait for each delivered batch
  std::vector<StageStats> stages;  ///< in StageId order
  std::uint64_t skipped = 0;  ///< samples replaced under OnError::skip
  std::uint64_t host_bytes = 0;  ///< held by the slot ring (pinned arenas included)
  std::uint64_t device_bytes = 0;    ///< device arenas and outputs
  std::uint64_t bytes_uploaded = 0;  ///< host to device
  double h2d_seconds = 0;            ///< upload time, from device events
  double kernel_seconds = 0;         ///< augmentation kernel time, from device events
  double kernel_max_seconds = 0;     ///< the longest batch's kernel time
  std::size_t prefetch = 0;          ///< the slots the pipeline keeps (`PipelineOptions::prefetch`)
  std::string prefetch_reason;       ///< why that many (asked, or what `auto_prefetch` weighed)
  std::string decode = "cpu";        ///< where JPEGs are decoded (`PipelineOptions::decode`)
  double gpu_share = 0;              ///< the current device share of the JPEGs the engines take
  std::uint64_t gpu_decoded = 0;     ///< JPEGs decoded on the device
  std::uint64_t gpu_decode_fallbacks = 0;  ///< sent to the device, refused there, decoded on the CPU
  double gpu_decode_seconds = 0;     ///< the device decodes' time, from device events
  double submit_seconds = 0;         ///< host time the stager thread spent submitting batches
  double gpu_decode_call_seconds = 0;  ///< of that, host time inside the device decoder's calls
  /// Each slot's batched decode call, host seconds against its images: `intercept()` is the
  /// call's fixed cost, `slope()` its cost an image.
  LinearFit gpu_decode_calls;

  /// The stage called `name`. @throws Error when there is none.
  [[nodiscard]] const StageStats& stage(std::string_view name) const {
    for (const StageStats& s : stages)
      if (s.name == name) return s;
    throw Error("PipelineStats: no stage '" + std::string(name) + "'");
  }

  /// A human-readable table: per stage, worker time per sample and share of worker time.
  [[nodiscard]] std::string table() const {
    std::string out;
    char line[200];
    double busy = 0;
    for (const StageStats& s : stages) busy += s.seconds;
    std::snprintf(line, sizeof line, "%-14s %12s %14s %10s\n", "stage", "samples", "us/sample", "share");
    out += line;
    for (const StageStats& s : stages) {
      std::snprintf(line, sizeof line, "%-14s %12llu %14.1f %9.1f%%\n", s.name.c_str(),
                    static_cast<unsigned long long>(s.count), s.count ? 1e6 * s.seconds / double(s.count) : 0.0,
                    busy > 0 ? 100.0 * s.seconds / busy : 0.0);
      out += line;
    }
    if (batches > 0 && (h2d_seconds > 0 || kernel_seconds > 0)) {
      std::snprintf(line, sizeof line, "%-14s %12llu %14.1f %10s  %.1f MB, %.1f GB/s\n", "h2d (device)",
                    static_cast<unsigned long long>(batches), 1e6 * h2d_seconds / double(batches), "per batch",
                    double(bytes_uploaded) / 1e6, h2d_seconds > 0 ? double(bytes_uploaded) / h2d_seconds / 1e9 : 0.0);
      out += line;
      std::snprintf(line, sizeof line, "%-14s %12llu %14.1f %10s  longest %.1f us\n", "kernel (device)",
                    static_cast<unsigned long long>(batches), 1e6 * kernel_seconds / double(batches), "per batch",
                    1e6 * kernel_max_seconds);
      out += line;
      std::snprintf(line, sizeof line, "%-14s %12llu %14.1f %10s  %.1f us of it in device decoder calls\n",
                    "submit (host)", static_cast<unsigned long long>(batches), 1e6 * submit_seconds / double(batches),
                    "per batch", 1e6 * gpu_decode_call_seconds / double(batches));
      out += line;
    }
    if (decode != "cpu") {
      std::snprintf(line, sizeof line, "%-14s %12llu %14.1f %10s  decode %s, share %.3f, %llu fell back to the CPU\n",
                    "jpeg (device)", static_cast<unsigned long long>(gpu_decoded),
                    gpu_decoded ? 1e6 * gpu_decode_seconds / double(gpu_decoded) : 0.0, "per image", decode.c_str(),
                    gpu_share, static_cast<unsigned long long>(gpu_decode_fallbacks));
      out += line;
      std::snprintf(line, sizeof line, "%-14s %12llu %14.1f %10s  %.1f us + %.1f us an image (fit)\n", "decode calls",
                    static_cast<unsigned long long>(gpu_decode_calls.count),
                    gpu_decode_calls.count ? 1e6 * gpu_decode_calls.sum_y / double(gpu_decode_calls.count) : 0.0,
                    "per call", 1e6 * gpu_decode_calls.intercept(), 1e6 * gpu_decode_calls.slope());
      out += line;
    }
    std::snprintf(line, sizeof line, "%-14s %12s %14.3f s %8.1f%% of wall time\n", "consumer wait", "",
                  consumer_wait_seconds, 100.0 * starvation);
    out += line;
    std::snprintf(line, sizeof line,
                  "%llu images in %llu batches, %.3f s, %.1f img/s with %d workers; %llu skipped; %.1f MB held\n",
                  static_cast<unsigned long long>(images), static_cast<unsigned long long>(batches), elapsed_seconds,
                  images_per_second, workers, static_cast<unsigned long long>(skipped), double(host_bytes) / 1e6);
    out += line;
    return out;
  }

  /// The same numbers as one JSON object.
  [[nodiscard]] std::string json() const {
    std::string out = "{";
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "\"workers\": %d, \"epochs\": %llu, \"batches\": %llu, \"images\": %llu, \"elapsed_seconds\": %.6f, "
                  "\"images_per_second\": %.3f, \"consumer_wait_seconds\": %.6f, \"starvation\": %.6f, ",
                  workers, static_cast<unsigned long long>(epochs), static_cast<unsigned long long>(batches),
                  static_cast<unsigned long long>(images), elapsed_seconds, images_per_second, consumer_wait_seconds,
                  starvation);
    out += buf;
    out += "\"stages\": {";
    for (std::size_t i = 0; i < stages.size(); ++i) {
      out += (i ? ", " : "") + detail::json_string(stages[i].name);  // a transform's names, any bytes
      std::snprintf(buf, sizeof buf, ": {\"count\": %llu, \"seconds\": %.6f}",
                    static_cast<unsigned long long>(stages[i].count), stages[i].seconds);
      out += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "}, \"skipped\": %llu, \"host_bytes\": %llu, \"device_bytes\": %llu, \"bytes_uploaded\": %llu, "
                  "\"h2d_seconds\": %.6f, \"kernel_seconds\": %.6f, \"kernel_max_seconds\": %.6f, \"decode\": ",
                  static_cast<unsigned long long>(skipped), static_cast<unsigned long long>(host_bytes),
                  static_cast<unsigned long long>(device_bytes), static_cast<unsigned long long>(bytes_uploaded),
                  h2d_seconds, kernel_seconds, kernel_max_seconds);
    out += buf + detail::json_string(decode);
    out += ", \"prefetch\": " + std::to_string(prefetch) + ", \"prefetch_reason\": " + detail::json_string(prefetch_reason);
    std::snprintf(buf, sizeof buf,
                  ", \"gpu_share\": %.6f, \"gpu_decoded\": %llu, \"gpu_decode_fallbacks\": %llu, "
                  "\"gpu_decode_seconds\": %.6f, \"submit_seconds\": %.6f, \"gpu_decode_call_seconds\": %.6f, "
                  "\"gpu_decode_calls\": %llu, \"gpu_decode_call_fixed_seconds\": %.9f, "
                  "\"gpu_decode_call_image_seconds\": %.9f}",
                  gpu_share, static_cast<unsigned long long>(gpu_decoded),
                  static_cast<unsigned long long>(gpu_decode_fallbacks), gpu_decode_seconds, submit_seconds,
                  gpu_decode_call_seconds, static_cast<unsigned long long>(gpu_decode_calls.count),
                  gpu_decode_calls.intercept(), gpu_decode_calls.slope());
    out += buf;
    return out;
  }
};

namespace detail {

/// What a pipeline counts as it hands batches out (under its ring's mutex).
struct DeliveryCounters {
  std::uint64_t epochs = 0, batches = 0, images = 0;
  std::int64_t wait_ns = 0;  ///< the consumer's waiting
  LatencyHistogram batch_wait;  ///< per delivered batch
  bool started = false;
  std::chrono::steady_clock::time_point first_begin{}, last_out{};
};

/// Adds `s`'s counters that add up across pipelines (a `Preprocessor`'s lanes) to `sum`: sums, the
/// longest kernel, every device decode count and the decode calls' fit; not the rates, wall times
/// and shares, which are each pipeline's own.
inline void add_counters(PipelineStats& sum, const PipelineStats& s) {
  sum.workers += s.workers;
  sum.epochs += s.epochs;
  sum.batches += s.batches;
  sum.images += s.images;
  sum.consumer_wait_seconds += s.consumer_wait_seconds;
  if (sum.stages.empty())
    sum.stages = s.stages;
  else
    for (std::size_t i = 0; i < sum.stages.size() && i < s.stages.size(); ++i) {
      sum.stages[i].count += s.stages[i].count;
      sum.stages[i].seconds += s.stages[i].seconds;
    }
  sum.skipped += s.skipped;
  sum.host_bytes += s.host_bytes;
  sum.device_bytes += s.device_bytes;
  sum.bytes_uploaded += s.bytes_uploaded;
  sum.h2d_seconds += s.h2d_seconds;
  sum.kernel_seconds += s.kernel_seconds;
  sum.kernel_max_seconds = std::max(sum.kernel_max_seconds, s.kernel_max_seconds);
  sum.decode = s.decode;
  sum.prefetch = s.prefetch;
  sum.prefetch_reason = s.prefetch_reason;
  sum.gpu_decoded += s.gpu_decoded;
  sum.gpu_decode_fallbacks += s.gpu_decode_fallbacks;
  sum.gpu_decode_seconds += s.gpu_decode_seconds;
  sum.submit_seconds += s.submit_seconds;
  sum.gpu_decode_call_seconds += s.gpu_decode_call_seconds;
  sum.gpu_decode_calls += s.gpu_decode_calls;
}

/// A pipeline's stats: its workers' clocks, with stage 0 named "read" and the transform's stages
/// after it, and what it delivered; `device` is null on the CPU backend.
[[nodiscard]] inline PipelineStats make_stats(int workers, std::span<const StageClock* const> clocks,
                                              std::span<const std::string_view> stage_names,
                                              const DeliveryCounters& d, std::uint64_t skipped,
                                              std::uint64_t host_bytes, const DeviceStats* device) {
  PipelineStats st;
  st.workers = workers;
  st.stages.resize(1 + stage_names.size());
  st.stages[0].name = "read";
  for (std::size_t i = 0; i < stage_names.size(); ++i) st.stages[i + 1].name = stage_names[i];
  for (const StageClock* c : clocks)
    for (std::size_t i = 0; i < st.stages.size(); ++i) {
      st.stages[i].count += static_cast<std::uint64_t>(c->count(static_cast<StageId>(i)));
      st.stages[i].seconds += 1e-9 * double(c->nanoseconds(static_cast<StageId>(i)));
    }
  st.epochs = d.epochs;
  st.batches = d.batches;
  st.images = d.images;
  st.elapsed_seconds = d.started ? std::chrono::duration<double>(d.last_out - d.first_begin).count() : 0.0;
  if (st.elapsed_seconds < 0) st.elapsed_seconds = 0;
  st.images_per_second = st.elapsed_seconds > 0 ? double(st.images) / st.elapsed_seconds : 0.0;
  st.consumer_wait_seconds = 1e-9 * double(d.wait_ns);
  st.batch_wait = d.batch_wait;
  st.starvation = st.elapsed_seconds > 0 ? st.consumer_wait_seconds / st.elapsed_seconds : 0.0;
  st.skipped = skipped;
  st.host_bytes = host_bytes;
  if (device) {
    st.bytes_uploaded = device->bytes_uploaded;
    st.h2d_seconds = device->h2d_seconds;
    st.kernel_seconds = device->kernel_seconds;
    st.kernel_max_seconds = device->kernel_max_seconds;
    st.gpu_decoded = device->gpu_decoded;
    st.gpu_decode_fallbacks = device->gpu_decode_fallbacks;
    st.gpu_decode_seconds = device->gpu_decode_seconds;
    st.submit_seconds = device->submit_seconds;
    st.gpu_decode_call_seconds = device->gpu_decode_call_seconds;
    st.gpu_decode_calls = device->gpu_decode_calls;
    st.host_bytes += device->pinned_bytes;
    st.device_bytes = device->device_bytes;
  }
  return st;
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor
