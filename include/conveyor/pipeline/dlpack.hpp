#pragma once
/// @file
/// Batches as DLPack tensors, so libtorch (`at::fromDLPack`), CuPy and JAX take them without a
/// copy. Needs DLPack's header: Debian's libdlpack-dev, or one already included (libtorch's
/// ATen/dlpack.h, when <torch/torch.h> comes first); without either this header declares nothing.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/pipeline/batch.hpp>

#if defined(DLPACK_DLPACK_H_)  // the include guard every copy of dlpack.h uses
#define CONVEYOR_HAS_DLPACK() 1
#elif defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#define CONVEYOR_HAS_DLPACK() 1
#endif
#endif
#ifndef CONVEYOR_HAS_DLPACK
#define CONVEYOR_HAS_DLPACK() 0
#endif

#if CONVEYOR_HAS_DLPACK()

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Which tensor of a batch.
enum class BatchTensor : std::uint8_t { images, labels, targets };

namespace detail {

/// One exported tensor: the DLPack struct, its shape and strides, and what owns its memory until
/// the consumer calls the deleter: a copy of the Batch (images: the slot is not reused meanwhile)
/// or a copy of the labels or soft targets (which holds no slot).
struct DlpackExport {
  DLManagedTensor managed{};
  std::array<std::int64_t, TensorView::max_rank> shape{};
  std::array<std::int64_t, TensorView::max_rank> strides{};
  Batch batch;
  TensorCopy copy;
};

[[nodiscard]] inline DLDataType dlpack_dtype(DType t) {
  switch (t) {
    case DType::u8: return {kDLUInt, 8, 1};
    case DType::f32: return {kDLFloat, 32, 1};
    case DType::f16: return {kDLFloat, 16, 1};
    case DType::bf16: return {kDLBfloat, 16, 1};
    case DType::i64: return {kDLInt, 64, 1};
  }
  throw Error("dlpack: unknown dtype");
}

/// `e` as a DLPack tensor of `v` (which `e` owns): shape, strides, type and the deleter that frees `e`.
[[nodiscard]] inline DLManagedTensor* exported(std::unique_ptr<DlpackExport> e, const TensorView& v) {
  e->shape = v.shape;
  e->strides = v.strides;
  DLTensor& t = e->managed.dl_tensor;
  t.data = v.data;
  t.device = v.device.kind == Device::Kind::cuda ? DLDevice{kDLCUDA, v.device.id} : DLDevice{kDLCPU, 0};
  t.ndim = v.rank;
  t.dtype = dlpack_dtype(v.dtype);
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = [](DLManagedTensor* self) { delete static_cast<DlpackExport*>(self->manager_ctx); };
  return &e.release()->managed;
}

}  // namespace detail

/// A DLPack tensor of `batch`'s images or labels, ready in order on `stream` (a `cudaStream_t` of a
/// device batch's device, handed the batch as by `Batch::wait_async`; nullptr: the pipeline's
/// stream), with no host wait. Images are viewed without a copy: the tensor shares the batch, and
/// its slot is not refilled until the tensor's deleter runs (libtorch runs it when the last
/// `at::Tensor` made from it dies), even after the loop has advanced. Labels are copied
/// (`Batch::copy_labels`, on `stream`): the tensor holds no slot, so labels kept for every batch
/// (an evaluation loop's targets) never stall the pipeline; so are a batch transform's soft targets
/// (`Batch::copy_targets`).
/// @throws ConfigError for an empty batch; CudaError when the device work cannot be queued; Error
///         for more streams per batch than the backend records.
[[nodiscard]] inline DLManagedTensor* to_dlpack(const Batch& batch, BatchTensor which = BatchTensor::images,
                                                CUstream_st* stream = nullptr) {
  CONVEYOR_EXPECTS(!batch.empty(), "to_dlpack: the batch is empty");
  auto e = std::make_unique<detail::DlpackExport>();
  if (which == BatchTensor::images) {
    batch.wait_async(stream);
    e->batch = batch;
  } else if (which == BatchTensor::labels) {
    e->copy = batch.copy_labels(stream);
  } else {
    CONVEYOR_EXPECTS(batch.targets().data != nullptr,
                     "to_dlpack: the batch has no soft targets (the pipeline has no batch_transform)");
    e->copy = batch.copy_targets(stream);
  }
  const TensorView& v = which == BatchTensor::images ? e->batch.images() : e->copy.view();  // in *e, which stays put
  return detail::exported(std::move(e), v);
}

/// A DLPack tensor of `copy` (labels kept past their batch: `KeptLabels::copy`), which it owns
/// until the consumer calls the deleter; ready in order on the stream the copy was made on.
[[nodiscard]] inline DLManagedTensor* to_dlpack(TensorCopy copy) {
  auto e = std::make_unique<detail::DlpackExport>();
  e->copy = std::move(copy);
  const TensorView& v = e->copy.view();
  return detail::exported(std::move(e), v);
}

}  // namespace v0
}  // namespace conveyor

#endif  // CONVEYOR_HAS_DLPACK()
