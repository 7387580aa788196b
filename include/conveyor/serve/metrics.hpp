#pragma once
/// @file
/// A `Preprocessor`'s stats in Prometheus' text format, for a service's `/metrics`: the request
/// outcomes as one counter labelled by outcome, the queue and lanes as gauges, request latency
/// and queue wait as histograms, and the lanes' summed pipeline work, written as a pipeline's is
/// (`detail::write_pipeline_work`).
///
/// ```
/// std::string body = conveyor::prometheus_text(pre.stats(), {{"service", "resnet50"}});
/// ```

#include <conveyor/config.hpp>
#include <conveyor/pipeline/prometheus.hpp>
#include <conveyor/serve/preprocessor.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

[[nodiscard]] inline std::string prometheus_text(const PreprocessorStats& stats,
                                                 const std::vector<std::pair<std::string, std::string>>& labels = {},
                                                 std::string_view prefix = "conveyor_") {
  detail::PrometheusWriter w(prefix, labels);
  w.family("requests_total", "counter",
           "Requests by outcome: answered, bad_image, error, overloaded, deadline, cancelled.");
  w.sample("requests_total", double(stats.requests), "outcome=\"answered\"");
  w.sample("requests_total", double(stats.failed), "outcome=\"bad_image\"");
  w.sample("requests_total", double(stats.errors), "outcome=\"error\"");
  w.sample("requests_total", double(stats.overloaded), "outcome=\"overloaded\"");
  w.sample("requests_total", double(stats.deadline_exceeded), "outcome=\"deadline\"");
  w.sample("requests_total", double(stats.cancelled), "outcome=\"cancelled\"");
  w.metric("request_images_total", "counter", "Images in answered requests.", double(stats.images));
  w.metric("requests_in_flight", "gauge", "Requests on a lane now.", double(stats.in_flight));
  w.metric("requests_waiting", "gauge", "Requests waiting for a lane now.", double(stats.waiting));
  w.metric("lanes", "gauge", "Lanes: requests prepared at once.", double(stats.lanes));
  w.metric("slots_held", "gauge", "Delivered batches still held by their callers.", double(stats.slots_held));
  w.histogram("request_latency_seconds", "Seconds from submit to the batch handed out, answered requests.",
              stats.latency);
  w.histogram("request_queue_wait_seconds", "Seconds from submit to a lane, requests that got one.",
              stats.queue_wait);
  detail::write_pipeline_work(w, stats.pipelines);  // the lanes' work, summed, as a pipeline's reads
  return w.take();
}

}  // namespace v0
}  // namespace conveyor
