"""conveyor: batches of images decoded, cropped, flipped, normalised and handed to a loop, on the
CPU or already on the GPU, from the same C++ library as the C++ API.

    import conveyor
    train = conveyor.ImageFolder("/data/imagenet/train")
    loader = conveyor.Loader(train, batch_size=256, shuffle=True, seed=42, workers=12, device="cuda",
                             transform=conveyor.ImageAugment.train(224, dtype="bf16"))
    for epoch in range(90):
        loader.set_epoch(epoch)           # optional: each new loop starts the next epoch anyway
        for images, labels in loader:   # torch tensors on cuda:0, ready on torch's current stream
            ...
"""
from ._conveyor import (
    Batch,
    ConfigError,
    CudaError,
    DeadlineExceeded,
    DecodeError,
    Error,
    IoError,
    Overloaded,
    SampleError,
    Tensor,
    has_cuda_backend,
    has_gpu_decoding,
)
from ._datasets import Dataset, FileList, ImageFolder, InMemory, ShardDataset, TarShards, TFRecordDataset
from ._decode import decode_image
from ._loader import Loader, Skipped
from ._open import open_dataset
from ._preprocessor import Preprocessor
from ._transforms import ImageAugment, RawTensor, Views

__version__ = "0.1.0"

# Shown as conveyor.X in tracebacks and reprs, where users import them from.
for _error in (ConfigError, CudaError, DeadlineExceeded, DecodeError, Error, IoError, Overloaded, SampleError):
    _error.__module__ = __name__
del _error

__all__ = [
    "Batch", "ConfigError", "CudaError", "Dataset", "DeadlineExceeded", "DecodeError", "Error", "FileList",
    "ImageAugment", "ImageFolder", "InMemory", "IoError", "Loader", "Overloaded", "Preprocessor", "RawTensor",
    "SampleError", "ShardDataset", "Skipped", "TarShards", "Tensor", "TFRecordDataset", "Views", "decode_image",
    "has_cuda_backend", "has_gpu_decoding", "open_dataset",
]
