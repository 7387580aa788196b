// Batch and Tensor: a batch's images and labels handed to torch, numpy or any DLPack consumer
// without a copy, ordered on the consumer's stream without a host wait.

#include "batch.hpp"

#include <conveyor/batch/batch_transform.hpp>

#include <array>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace conveyor_ext {

namespace {

/// What `ops` ((kind, arguments), as batch_op takes them) with weights `p` draw for batch
/// `batch` of `epoch` of images height x width: the Batch.mix tuple, for the draws' tests.
Batch::Mix batch_mix_draw(const std::vector<std::pair<std::string, std::vector<double>>>& ops,
                          const std::vector<double>& p, std::uint64_t seed, std::uint64_t epoch, std::uint64_t batch,
                          std::int64_t height, std::int64_t width) {
  const conveyor::MixGeometry g{conveyor::DType::f32, conveyor::Layout::NCHW, 3, height, width};
  const conveyor::BatchTransform t(batch_ops(ops), p);
  t.validate(g);
  return Batch::mix_of(t.draw(seed, epoch, batch, g));
}

/// Each sample's draw for a batch of `count` (timm's modes 'pair' and 'elem'; empty otherwise), as
/// Batch.sample_mixes gives them: for the draws' tests.
std::vector<Batch::Mix> batch_sample_mixes_draw(const std::vector<std::pair<std::string, std::vector<double>>>& ops,
                                                const std::vector<double>& p, std::uint64_t seed, std::uint64_t epoch,
                                                std::uint64_t batch, std::int64_t height, std::int64_t width,
                                                std::size_t count) {
  const conveyor::MixGeometry g{conveyor::DType::f32, conveyor::Layout::NCHW, 3, height, width};
  const conveyor::BatchTransform t(batch_ops(ops), p);
  t.validate(g);
  std::vector<Batch::Mix> out;
  for (const conveyor::BatchMix& m : t.draw_samples(seed, epoch, batch, g, count)) out.push_back(Batch::mix_of(m));
  return out;
}

}  // namespace

conveyor::BatchOp batch_op(const std::string& kind, const std::vector<double>& a) {
  const auto classes = [&](std::size_t k) { return static_cast<std::int64_t>(a.at(k)); };
  if (kind == "mixup" && a.size() == 2) return conveyor::MixUp{.alpha = a[0], .num_classes = classes(1)};
  if (kind == "cutmix" && a.size() == 2) return conveyor::CutMix{.alpha = a[0], .num_classes = classes(1)};
  if (kind == "timm" && (a.size() == 9 || a.size() == 10)) {
    using Mode = conveyor::TimmMixup::Mode;
    const double mode = a.size() == 10 ? a[9] : 0.0;
    if (mode != 0.0 && mode != 1.0 && mode != 2.0)
      throw conveyor::ConfigError("timm Mixup: mode must be 0 (batch), 1 (pair) or 2 (elem), got " + std::to_string(mode));
    conveyor::TimmMixup t{.mixup_alpha = a[0], .cutmix_alpha = a[1], .prob = a[4], .switch_prob = a[5],
                          .correct_lam = a[6] != 0.0, .label_smoothing = a[7], .num_classes = classes(8),
                          .mode = mode == 1.0 ? Mode::pair : mode == 2.0 ? Mode::elem : Mode::batch};
    if (a[2] >= 0.0) t.cutmix_minmax = std::array{a[2], a[3]};
    return t;
  }
  throw conveyor::ConfigError("unknown batch transform '" + kind + "' with " + std::to_string(a.size()) +
                              " arguments (mixup or cutmix: alpha, num_classes; timm: mixup_alpha, cutmix_alpha, "
                              "minmax low and high or -1, prob, switch_prob, correct_lam, label_smoothing, num_classes[, mode])");
}

std::vector<conveyor::BatchOp> batch_ops(const std::vector<std::pair<std::string, std::vector<double>>>& ops) {
  std::vector<conveyor::BatchOp> out;
  for (const auto& [kind, arguments] : ops) out.push_back(batch_op(kind, arguments));
  return out;
}

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
  CUstream_st* order = nullptr;  // -1 (no ordering): the pipeline's stream, for labels' copies
  if (view().device.kind == conveyor::Device::Kind::cuda) {
    const std::int64_t s = stream.is_none() ? 1 : nb::cast<std::int64_t>(stream);
    if (s == 0) throw nb::value_error("__dlpack__: stream 0 is ambiguous for CUDA (use 1 or 2)");
    // cudaStreamLegacy and cudaStreamPerThread are the handles 1 and 2 themselves.
    if (s != -1) order = reinterpret_cast<CUstream_st*>(static_cast<std::uintptr_t>(s));
  }
  DLManagedTensor* managed = kept_ ? conveyor::to_dlpack(kept_->copy(order)) : conveyor::to_dlpack(batch_, which_, order);
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
  nb::class_<Tensor>(m, "Tensor",
                     "One tensor of a batch (its images or its labels), viewing the loader's memory: hand it to "
                     "torch.from_dlpack, numpy.from_dlpack or any DLPack consumer. The batch's slot is reused only "
                     "once every tensor made from it is gone.")
      .def("__dlpack__", &Tensor::dlpack, "stream"_a = nb::none(), "max_version"_a = nb::none(),
           "dl_device"_a = nb::none(), "copy"_a = nb::none(),
           "A DLPack capsule; a CUDA `stream` (None or 1: the legacy default stream, 2: per-thread, else a "
           "cudaStream_t; -1: no ordering) is made to wait for the batch on the device.")
      .def("__dlpack_device__", &Tensor::dlpack_device, "(device type, device id) as DLPack numbers them.")
      .def_prop_ro("shape", &Tensor::shape, "The tensor's shape.")
      .def_prop_ro("dtype", &Tensor::dtype, "conveyor's name for the element type: u8, f32, f16, bf16 or i64.");
  nb::class_<Batch>(m, "Batch",
                    "One batch as Loader.batches() yields it: its images and labels as Tensors, the dataset index "
                    "of each sample, the epoch and the batch's number in it; len() is its sample count.")
      .def_prop_ro("images", &Batch::images, "The images, [N, 3, H, W] or [N, H, W, 3] (or RawTensor's shape).")
      .def_prop_ro("labels", &Batch::labels, "The labels, int64 [N] (as the dataset gave them, also when mixed).")
      .def_prop_ro("targets", &Batch::targets,
                   "With a batch_transform: the soft targets, float32 [N, num_classes], a copy of their own.")
      .def_prop_ro("mix", &Batch::mix,
                   "With a batch_transform, what it drew for this batch: (op, lam, label_lam, (x1, y1, x2, y2)), op "
                   "'MixUp' or 'CutMix'; sample i is mixed with sample i - 1 (the first with the last), its label "
                   "weighing label_lam. (None, 1.0, 1.0, (0, 0, 0, 0)) without one.")
      .def_prop_ro("sample_mixes", &Batch::sample_mixes,
                   "With timm's Mixup in mode 'pair' or 'elem': each sample's draw, a tuple as Batch.mix's (its "
                   "partner sample N - 1 - i); empty otherwise (Batch.mix is then the batch's).")
      .def_prop_ro("indices", &Batch::indices, "The dataset index of each sample.")
      .def_prop_ro("epoch", &Batch::epoch, "The epoch the batch belongs to.")
      .def_prop_ro("number", &Batch::number, "The batch's position in its epoch, from 0.")
      .def("__len__", &Batch::size);
  m.def("batch_mix_draw", &batch_mix_draw, "ops"_a, "p"_a, "seed"_a, "epoch"_a, "batch"_a, "height"_a, "width"_a,
        "What a batch transform draws for one batch (Batch.mix's tuple): for the draws' tests.");
  m.def("batch_sample_mixes_draw", &batch_sample_mixes_draw, "ops"_a, "p"_a, "seed"_a, "epoch"_a, "batch"_a, "height"_a,
        "width"_a, "count"_a, "What a batch transform draws for each sample of one batch (Batch.sample_mixes): for the "
        "draws' tests.");
}

}  // namespace conveyor_ext
