#pragma once
/// @file
/// `FileList`: samples listed in a text file, one `path label` per line.

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/file_dataset.hpp>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace conveyor {
inline namespace v0 {

/// Samples listed in a text file: one `path label` per line, the label (an integer) last, so
/// paths may contain spaces. Relative paths are relative to `root` (by default the list file's
/// folder). Blank lines and lines starting with '#' are ignored. Files are not opened until read.
class FileList : public detail::FileSamples {
 public:
  /// @throws IoError when the list cannot be read; ConfigError naming file and line for a
  ///         malformed line, and when the list is empty.
  explicit FileList(const std::string& list_file, std::string root = {})
      : FileSamples(root.empty() ? default_root(list_file) : std::move(root)) {
    std::ifstream in(list_file, std::ios::binary);
    if (!in) throw IoError("FileList: cannot open list file", list_file);
    refuse_binary(in, list_file);
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
      std::string_view s(line);
      while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
      while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
      if (s.empty() || s.front() == '#') continue;
      const auto cut = s.find_last_of(" \t");
      std::int32_t label = 0;
      const std::string_view tail = cut == std::string_view::npos ? std::string_view{} : s.substr(cut + 1);
      const auto [end, err] = std::from_chars(tail.data(), tail.data() + tail.size(), label);
      if (cut == std::string_view::npos || err != std::errc() || end != tail.data() + tail.size())
        throw ConfigError("FileList: " + list_file + ":" + std::to_string(number) +
                          ": expected '<path> <integer label>', got '" + std::string(s) + "'");
      std::string_view path = s.substr(0, cut);
      while (!path.empty() && (path.back() == ' ' || path.back() == '\t')) path.remove_suffix(1);
      add(path, label);
    }
    if (in.bad()) throw IoError("FileList: cannot read list file", list_file);
    if (size() == 0) throw ConfigError("FileList: no sample in " + list_file);
  }

 private:
  /// A list is text: a NUL byte in its first 8 KiB (git's test for binary files) means an image,
  /// an archive or a TFRecord was passed as the list, which the line parser would quote as garbage.
  static void refuse_binary(std::ifstream& in, const std::string& list_file) {
    char head[8192];
    in.read(head, sizeof head);
    if (std::string_view(head, static_cast<std::size_t>(in.gcount())).find('\0') != std::string_view::npos)
      throw ConfigError("FileList: " + list_file +
                        " is not a list of '<path> <integer label>' lines but binary data (an image, a tar shard "
                        "or a TFRecord?): open a folder with ImageFolder, shards with TarShards or TFRecordDataset");
    in.clear();
    in.seekg(0);
  }

  static std::string default_root(const std::string& list_file) {
    const auto parent = std::filesystem::path(list_file).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
  }
};

static_assert(Dataset<FileList>);

}  // namespace v0
}  // namespace conveyor
