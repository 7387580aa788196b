// The datasets' Python classes: ImageFolder, FileList, TarShards, TFRecordDataset, InMemory, and
// their base Dataset. Opening a folder or indexing shards runs without the GIL.

#include "datasets.hpp"
#include "paths.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

namespace conveyor_ext {

using namespace nb::literals;

nb::bytes Dataset::read(std::uint64_t i) const {
  conveyor::ByteBuffer b;
  {
    nb::gil_scoped_release release;
    any_.read(checked(i), b);
  }
  return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

nb::str Dataset::name(std::uint64_t i) const { return fs_str(any_.name(checked(i))); }

nb::typed<nb::list, nb::str> ImageFolder::classes() const {
  nb::typed<nb::list, nb::str> out;
  for (const std::string& c : f_->classes()) out.append(fs_str(c));
  return out;
}

nb::str ImageFolder::root() const { return fs_str(f_->root()); }

nb::str FileList::root() const { return fs_str(f_->root()); }

std::uint64_t Dataset::checked(std::uint64_t i) const {
  if (i >= any_.size())
    throw nb::index_error(("index " + std::to_string(i) + " out of range for " + std::to_string(any_.size()) +
                           " samples").c_str());
  return i;
}

void InMemory::add(nb::bytes bytes, std::int64_t label) {
  if (frozen_)
    throw conveyor::ConfigError("InMemory.add: the dataset is read by a Loader; add every sample before making one");
  m_->add({reinterpret_cast<const std::byte*>(bytes.c_str()), bytes.size()}, label);
}

void bind_datasets(nb::module_& m) {
  nb::class_<Dataset>(m, "Dataset",
                      "Base of conveyor's datasets: len(), and per sample its label, its name (a path for "
                      "files, as os.fsdecode gives it) and its encoded bytes.")
      .def("__len__", &Dataset::size)
      .def("label", &Dataset::label, "index"_a, "The label of sample `index`.")
      .def("name", &Dataset::name, "index"_a, "The name of sample `index`: its path for files.")
      .def("read", &Dataset::read, "index"_a, "The encoded bytes of sample `index`.");
  nb::class_<ImageFolder, Dataset>(m, "ImageFolder")
      .def("__init__",
           [](ImageFolder* self, const nb::bytes& root) {
             std::shared_ptr<const conveyor::ImageFolder> f;
             const std::string folder = fs_path(root);
             {
               nb::gil_scoped_release release;
               f = std::make_shared<const conveyor::ImageFolder>(folder);
             }
             new (self) ImageFolder(std::move(f));
           },
           "root"_a)
      .def_prop_ro("classes", &ImageFolder::classes)
      .def_prop_ro("root", &ImageFolder::root);
  nb::class_<FileList, Dataset>(m, "FileList")
      .def("__init__",
           [](FileList* self, const nb::bytes& path, std::optional<nb::bytes> root) {
             std::shared_ptr<const conveyor::FileList> f;
             const std::string list = fs_path(path), folder = root ? fs_path(*root) : std::string();
             {
               nb::gil_scoped_release release;
               f = root ? std::make_shared<const conveyor::FileList>(list, folder)
                        : std::make_shared<const conveyor::FileList>(list);
             }
             new (self) FileList(std::move(f));
           },
           "path"_a, "root"_a = nb::none())
      .def_prop_ro("root", &FileList::root);
  nb::class_<ShardDataset, Dataset>(m, "ShardDataset",
                                     "Base of the datasets read from shards (TarShards, TFRecordDataset), which a "
                                     "Loader's shard_window can shuffle shard by shard.")
      .def_prop_ro("shard_sizes", &ShardDataset::shard_sizes, "Samples in each shard, in shard order.")
      .def_prop_ro("open_seconds", &ShardDataset::open_seconds, "Seconds spent opening and indexing the shards.");
  nb::class_<TarShards, ShardDataset>(m, "TarShards")
      .def("__init__",
           [](TarShards* self, const nb::bytes& pattern, std::vector<std::string> image_extensions,
              const std::string& label_extension, bool use_index) {
             std::shared_ptr<const conveyor::TarShards> d;
             const std::string files = fs_path(pattern);
             {
               nb::gil_scoped_release release;
               d = std::make_shared<const conveyor::TarShards>(
                   files, conveyor::TarShardsOptions{std::move(image_extensions), label_extension, use_index});
             }
             new (self) TarShards(std::move(d));
           },
           "pattern"_a, "image_extensions"_a = std::vector<std::string>{"jpg", "jpeg", "png"}, "label"_a = "cls",
           "use_index"_a = true);
  nb::class_<TFRecordDataset, ShardDataset>(m, "TFRecordDataset")
      .def("__init__",
           [](TFRecordDataset* self, const nb::bytes& pattern, const std::string& image_key,
              const std::string& label_key, std::int64_t label_offset, bool use_index) {
             std::shared_ptr<const conveyor::TFRecordDataset> d;
             const std::string files = fs_path(pattern);
             {
               nb::gil_scoped_release release;
               d = std::make_shared<const conveyor::TFRecordDataset>(
                   files, conveyor::TFRecordOptions{image_key, label_key, label_offset, use_index});
             }
             new (self) TFRecordDataset(std::move(d));
           },
           "pattern"_a, "image_key"_a = "image/encoded", "label_key"_a = "image/class/label", "label_offset"_a = 0,
           "use_index"_a = true);
  nb::class_<InMemory, Dataset>(m, "InMemory")
      .def(nb::init<>())
      .def("add", &InMemory::add, "data"_a, "label"_a, "Appends one sample's encoded bytes and its label.");
}

}  // namespace conveyor_ext
