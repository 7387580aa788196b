#pragma once
/// @file
/// `ImageFolder`: torchvision.datasets.ImageFolder's layout, ordering and image extensions.

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/file_dataset.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Options of `ImageFolder`.
struct ImageFolderOptions {
  /// Accept class folders without any image (torchvision's allow_empty); by default they are an error.
  bool allow_empty = false;
};

/// A folder of class folders of images, read as torchvision's ImageFolder reads it: the classes
/// are the sorted names of the root's sub-folders (symbolic links followed) and label i is the
/// i-th; each class folder is walked recursively, its sub-folders in sorted order and the files in
/// each sorted by name; the files listed are torchvision's IMG_EXTENSIONS in any case (`is_image_name`),
/// so indices and labels are torchvision's. The codecs decode JPEG, PNG, PGM and PPM (told apart
/// by their bytes); a BMP, TIFF or WebP is a DecodeError naming its format when read. Paths are
/// kept in one buffer, not as one string per file.
class ImageFolder : public detail::FileSamples {
 public:
  /// Lists `root`.
  /// @throws IoError when root is not a readable folder or has no class folder;
  ///         ConfigError when a class folder holds no image (unless allow_empty) or nothing is found.
  explicit ImageFolder(std::string root, ImageFolderOptions options = {}) : FileSamples(std::move(root)) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path base(this->root());
    if (!fs::is_directory(base, ec)) throw IoError("ImageFolder: not a folder", this->root());
    std::error_code entry_ec;  // a broken link is not a folder, and no reason to stop listing
    for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(entry_ec)) classes_.push_back(it->path().filename().string());
    if (ec) throw IoError("ImageFolder: cannot list folder: " + ec.message(), this->root());
    std::sort(classes_.begin(), classes_.end());
    if (classes_.empty()) throw IoError("ImageFolder: no class folder found in", this->root());

    std::vector<std::string> empty;
    std::vector<std::pair<std::string, std::string>> files;  // (folder relative to root, file name)
    for (std::size_t k = 0; k < classes_.size(); ++k) {
      files.clear();
      const fs::path cls = base / classes_[k];
      constexpr auto opts = fs::directory_options::follow_directory_symlink;
      for (fs::recursive_directory_iterator it(cls, opts, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(entry_ec)) continue;
        const std::string file = it->path().filename().string();
        if (is_image_name(file)) files.emplace_back(it->path().parent_path().lexically_relative(base).string(), file);
      }
      if (ec) throw IoError("ImageFolder: cannot list folder: " + ec.message(), cls.string());
      // torchvision sorts os.walk's folders by path, then the files within each by name.
      std::sort(files.begin(), files.end());
      if (files.empty()) empty.push_back(classes_[k]);
      for (const auto& [dir, file] : files) add(dir + '/' + file, static_cast<std::int64_t>(k));
    }
    if (!empty.empty() && !options.allow_empty) {
      std::string list;
      for (const auto& c : empty) list += (list.empty() ? "" : ", ") + c;
      throw ConfigError("ImageFolder: no image file (" + std::string(extension_list) + ") in class folder(s) " + list +
                        " of " + this->root());
    }
    if (size() == 0) throw ConfigError("ImageFolder: no image file (" + std::string(extension_list) + ") under " + this->root());
  }

  /// Class names; label i is classes()[i].
  [[nodiscard]] const std::vector<std::string>& classes() const noexcept { return classes_; }

  /// torchvision's IMG_EXTENSIONS, as its messages list them.
  static constexpr std::string_view extension_list = ".jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp";

  /// Whether torchvision's ImageFolder lists `file`: one of its IMG_EXTENSIONS, in any case.
  [[nodiscard]] static bool is_image_name(std::string_view file) noexcept {
    for (std::string_view ext : {".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"})
      if (ends_with_lower(file, ext)) return true;
    return false;
  }
  /// Whether `file` is named as a JPEG (.jpg/.jpeg, any case).
  [[nodiscard]] static bool is_jpeg_name(std::string_view file) noexcept {
    return ends_with_lower(file, ".jpg") || ends_with_lower(file, ".jpeg");
  }

 private:
  static bool ends_with_lower(std::string_view file, std::string_view ext) noexcept {
    if (file.size() < ext.size()) return false;
    for (std::size_t i = 0; i < ext.size(); ++i) {
      char c = file[file.size() - ext.size() + i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != ext[i]) return false;
    }
    return true;
  }

  std::vector<std::string> classes_;
};

static_assert(Dataset<ImageFolder>);

}  // namespace v0
}  // namespace conveyor
