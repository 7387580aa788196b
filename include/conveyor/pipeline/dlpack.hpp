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

namespace conveyor {
inline namespace v0 {

/// Which tensor of a batch.
enum class BatchTensor : std::uint8_t { images, labels };

namespace detail {

/// One exported tensor: the DLPack struct, its shape and strides, and a copy of the Batch, which
/// keeps the slot (and so the memory) from being reused until the consumer calls the deleter.
struct DlpackExport {
  DLManagedTensor managed{};
  std::array<std::int64_t, TensorView::max_rank> shape{};
  std::array<std::int64_t, TensorView::max_rank> strides{};
  Batch batch;
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

}  // namespace detail

/// A DLPack tensor viewing `batch`'s images or labels, without a copy. The tensor shares the
/// batch: its slot is not refilled until the tensor's deleter runs (libtorch runs it when the
/// last `at::Tensor` made from it dies), even after the loop has advanced. For a device batch the
/// memory is ready in order on the pipeline's stream.
/// @throws ConfigError for an empty batch.
[[nodiscard]] inline DLManagedTensor* to_dlpack(const Batch& batch, BatchTensor which = BatchTensor::images) {
  CONVEYOR_EXPECTS(!batch.empty(), "to_dlpack: the batch is empty");
  auto e = std::make_unique<detail::DlpackExport>();
  e->batch = batch;
  const TensorView& v = which == BatchTensor::images ? e->batch.images() : e->batch.labels();
  e->shape = v.shape;
  e->strides = v.strides;
  DLTensor& t = e->managed.dl_tensor;
  t.data = v.data;
  t.device = v.device.kind == Device::Kind::cuda ? DLDevice{kDLCUDA, v.device.id} : DLDevice{kDLCPU, 0};
  t.ndim = v.rank;
  t.dtype = detail::dlpack_dtype(v.dtype);
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = [](DLManagedTensor* self) { delete static_cast<detail::DlpackExport*>(self->manager_ctx); };
  return &e.release()->managed;
}

}  // namespace v0
}  // namespace conveyor

#endif  // CONVEYOR_HAS_DLPACK()
