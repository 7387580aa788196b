#pragma once
// What the loader and the preprocessor parse alike from their keyword arguments.

#include <conveyor/core/error.hpp>
#include <conveyor/pipeline/options.hpp>

#include <optional>
#include <string>

namespace conveyor_ext {

/// `decode` ("cpu", "gpu", "auto"), the share to start from (unset: the pipeline's default) and the
/// device decoder's chroma upsampling ("interpolated", "replicated") into `o`.
inline void set_decode(conveyor::PipelineOptions& o, const char* who, const std::string& decode,
                       std::optional<double> gpu_share, const std::string& upsampling) {
  if (decode == "cpu")
    o.decode = conveyor::JpegDecode::cpu;
  else if (decode == "gpu")
    o.decode = conveyor::JpegDecode::gpu;
  else if (decode == "auto")
    o.decode = conveyor::JpegDecode::adaptive;
  else
    throw conveyor::ConfigError(std::string(who) + ": decode must be 'cpu', 'gpu' or 'auto', got '" + decode + "'");
  o.gpu_share = gpu_share;
  o.gpu_upsampling = conveyor::parse_chroma_upsampling(upsampling);
}

}  // namespace conveyor_ext
