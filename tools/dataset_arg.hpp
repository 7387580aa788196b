#pragma once
// The dataset a tool's --data names: a folder (ImageFolder), a shard pattern or .tar (TarShards),
// TFRecord files (TFRecordDataset) or a list of "path label" lines (FileList); --format says which
// when the name does not.

#include <conveyor/conveyor.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace conveyor_tools {

struct OpenedDataset {
  conveyor::AnyDataset data;
  std::string kind;                                         // "folder", "wds", "tfrecord", "list"
  std::optional<std::vector<std::uint64_t>> shard_sizes;  // for shard datasets
  double open_seconds = 0;
};

/// Opens `spec` as `format` ("auto", "folder", "wds", "tfrecord" or "list").
/// @throws conveyor::ConfigError for an unknown format, and what the dataset throws.
inline OpenedDataset open_dataset(const std::string& spec, const std::string& format) {
  std::string kind = format;
  if (kind == "auto") {
    const std::string name = std::filesystem::path(spec).filename().string();  // not the folders above it
    const auto ends = [&](const char* s) {
      const std::string x(s);
      return name.size() >= x.size() && name.compare(name.size() - x.size(), x.size(), x) == 0;
    };
    if (std::filesystem::is_directory(spec)) kind = "folder";
    else if (ends(".tar") || (name.find('{') != std::string::npos && name.find(".tar") != std::string::npos)) kind = "wds";
    else if (ends(".tfrecord") || ends(".tfrecords") || name.find("-of-") != std::string::npos) kind = "tfrecord";
    else if (std::filesystem::is_regular_file(spec)) kind = "list";
    else kind = "folder";  // nothing there: ImageFolder says "not a folder"
  }
  if (kind == "folder") return {conveyor::AnyDataset(conveyor::ImageFolder(spec)), kind, std::nullopt, 0};
  if (kind == "list") return {conveyor::AnyDataset(conveyor::FileList(spec)), kind, std::nullopt, 0};
  if (kind == "wds") {
    auto d = std::make_shared<const conveyor::TarShards>(spec);
    return {conveyor::AnyDataset(d), kind, d->shard_sizes(), d->open_seconds()};
  }
  if (kind == "tfrecord") {
    auto d = std::make_shared<const conveyor::TFRecordDataset>(spec);
    return {conveyor::AnyDataset(d), kind, d->shard_sizes(), d->open_seconds()};
  }
  throw conveyor::ConfigError("--format expects auto, folder, wds, tfrecord or list, got '" + format + "'");
}

}  // namespace conveyor_tools
