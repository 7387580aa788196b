// The datasets' Python classes: ImageFolder, FileList, TarShards, TFRecordDataset, InMemory, and
// their base Dataset. Opening a folder or indexing shards runs without the GIL.

#include "datasets.hpp"

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
  nb::class_<Dataset>(m, "Dataset")
      .def("__len__", &Dataset::size)
      .def("label", &Dataset::label, "index"_a)
      .def("name", &Dataset::name, "index"_a)
      .def("read", &Dataset::read, "index"_a, "The encoded bytes of sample `index`.");
  nb::class_<ImageFolder, Dataset>(m, "ImageFolder")
      .def("__init__",
           [](ImageFolder* self, const std::string& root) {
             std::shared_ptr<const conveyor::ImageFolder> f;
             {
               nb::gil_scoped_release release;
               f = std::make_shared<const conveyor::ImageFolder>(root);
             }
             new (self) ImageFolder(std::move(f));
           },
           "root"_a)
      .def_prop_ro("classes", &ImageFolder::classes)
      .def_prop_ro("root", &ImageFolder::root);
  nb::class_<FileList, Dataset>(m, "FileList")
      .def("__init__",
           [](FileList* self, const std::string& path, std::optional<std::string> root) {
             std::shared_ptr<const conveyor::FileList> f;
             {
               nb::gil_scoped_release release;
               f = root ? std::make_shared<const conveyor::FileList>(path, *root)
                        : std::make_shared<const conveyor::FileList>(path);
             }
             new (self) FileList(std::move(f));
           },
           "path"_a, "root"_a = nb::none())
      .def_prop_ro("root", &FileList::root);
  nb::class_<ShardDataset, Dataset>(m, "ShardDataset")
      .def_prop_ro("shard_sizes", &ShardDataset::shard_sizes)
      .def_prop_ro("open_seconds", &ShardDataset::open_seconds);
  nb::class_<TarShards, ShardDataset>(m, "TarShards")
      .def("__init__",
           [](TarShards* self, const std::string& pattern, std::vector<std::string> image_extensions,
              const std::string& label_extension, bool use_index) {
             std::shared_ptr<const conveyor::TarShards> d;
             {
               nb::gil_scoped_release release;
               d = std::make_shared<const conveyor::TarShards>(
                   pattern, conveyor::TarShardsOptions{std::move(image_extensions), label_extension, use_index});
             }
             new (self) TarShards(std::move(d));
           },
           "pattern"_a, "image_extensions"_a = std::vector<std::string>{"jpg", "jpeg", "png"}, "label"_a = "cls",
           "use_index"_a = true);
  nb::class_<TFRecordDataset, ShardDataset>(m, "TFRecordDataset")
      .def("__init__",
           [](TFRecordDataset* self, const std::string& pattern, const std::string& image_key,
              const std::string& label_key, std::int64_t label_offset, bool use_index) {
             std::shared_ptr<const conveyor::TFRecordDataset> d;
             {
               nb::gil_scoped_release release;
               d = std::make_shared<const conveyor::TFRecordDataset>(
                   pattern, conveyor::TFRecordOptions{image_key, label_key, label_offset, use_index});
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
