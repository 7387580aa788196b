// Batch and Tensor: a batch's images and labels handed to torch, numpy or any DLPack consumer
// without a copy, ordered on the consumer's stream without a host wait.

#include "batch.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace conveyor_ext {

std::tuple<int, int> Tensor::dlpack_device() const {
  const conveyor::Device d = view().device;
  return d.kind == conveyor::Device::Kind::cuda ? std::tuple{int(kDLCUDA), d.id} : std::tuple{int(kDLCPU), 0};
}

nb::object Tensor::dlpack(nb::object stream, nb::object max_version, nb::object dl_device, nb::object copy) const {
  (void)max_version;  // a consumer asking for a versioned capsule accepts the legacy one too
  if (!copy.is_none() && nb::cast<bool>(copy))
    throw nb::buffer_error("conveyor batches are views of the loader's memory: copy=True is not supported");
  if (!dl_device.is_none() && nb::cast<std::tuple<int, int>>(dl_device) != dlpack_device())
    throw nb::buffer_error("conveyor cannot move a batch to another device through DLPack");
  if (view().device.kind == conveyor::Device::Kind::cuda) {
    const std::int64_t s = stream.is_none() ? 1 : nb::cast<std::int64_t>(stream);
    if (s == 0) throw nb::value_error("__dlpack__: stream 0 is ambiguous for CUDA (use 1 or 2)");
    if (s != -1) {
      // cudaStreamLegacy and cudaStreamPerThread are the handles 1 and 2 themselves.
      batch_.wait_async(reinterpret_cast<CUstream_st*>(static_cast<std::uintptr_t>(s)));
    }
  }
  DLManagedTensor* managed = conveyor::to_dlpack(batch_, which_);
  PyObject* capsule = PyCapsule_New(managed, "dltensor", [](PyObject* self) {
    // Still named "dltensor": no consumer took it, so its deleter is ours to run.
    if (PyCapsule_IsValid(self, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, "dltensor"));
      if (m->deleter) m->deleter(m);
    }
  });
  if (!capsule) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

void bind_batches(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<Tensor>(m, "Tensor")
      .def("__dlpack__", &Tensor::dlpack, "stream"_a = nb::none(), "max_version"_a = nb::none(),
           "dl_device"_a = nb::none(), "copy"_a = nb::none())
      .def("__dlpack_device__", &Tensor::dlpack_device)
      .def_prop_ro("shape", &Tensor::shape)
      .def_prop_ro("dtype", &Tensor::dtype);
  nb::class_<Batch>(m, "Batch")
      .def_prop_ro("images", &Batch::images)
      .def_prop_ro("labels", &Batch::labels)
      .def_prop_ro("indices", &Batch::indices)
      .def_prop_ro("epoch", &Batch::epoch)
      .def_prop_ro("number", &Batch::number)
      .def("__len__", &Batch::size);
}

}  // namespace conveyor_ext
