// conveyor._conveyor: the Python binding. It type-erases the shipped datasets, samplers and
// transforms into one AnyPipeline and holds no logic beyond that and Python's own needs: the
// GIL released around every wait and every piece of C++ work, Ctrl-C seen while waiting, a
// clear error instead of a hang when kept tensors hold every slot or after fork(), exceptions
// that keep their fields, and a DLPack producer that honours the consumer's stream. Batches
// become torch tensors or numpy arrays in the package's Python code (python/conveyor/).

#include "bindings.hpp"

#include <conveyor/device/backend.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/device/step.hpp>

namespace {

bool has_cuda_backend() { return conveyor::detail::cuda_backend_factory().load() != nullptr; }
bool has_gpu_decoding() { return conveyor::detail::device_step_maker<conveyor::DecodeJpegs>().load() != nullptr; }

}  // namespace

NB_MODULE(_conveyor, m) {
  m.doc() = "conveyor's C++ core; use the conveyor package";
  conveyor_ext::bind_errors(m);
  conveyor_ext::bind_datasets(m);
  conveyor_ext::bind_decode(m);
  conveyor_ext::bind_pixel_transforms(m);
  conveyor_ext::bind_transforms(m);
  conveyor_ext::bind_batches(m);
  conveyor_ext::bind_loader(m);
  conveyor_ext::bind_preprocessor(m);
  conveyor_ext::bind_pixel_ops(m);
  m.def("has_cuda_backend", &has_cuda_backend, "Whether this build can make loaders on a CUDA device.");
  m.def("has_gpu_decoding", &has_gpu_decoding,
        "Whether this build's CUDA loaders can decode JPEGs on the GPU's engines (decode=\"gpu\" or \"auto\").");
}
