"""conveyor: batches of images decoded, cropped, flipped, normalised and handed to a loop, on the
CPU or already on the GPU, from the same C++ library as the C++ API.

    import conveyor
    train = conveyor.ImageFolder("/data/imagenet/train")
    loader = conveyor.Loader(train, batch_size=256, shuffle=True, seed=42, workers=12, device="cuda",
                             transform=conveyor.ImageAugment.train(224, dtype="bf16"))
    for epoch in range(90):
        loader.set_epoch(epoch)
        for images, labels in loader:   # torch tensors on cuda:0, ready on torch's current stream
            ...
"""
from ._conveyor import (
    ConfigError,
    CudaError,
    Dataset,
    DeadlineExceeded,
    DecodeError,
    Error,
    FileList,
    ImageFolder,
    InMemory,
    IoError,
    Overloaded,
    SampleError,
    ShardDataset,
    TarShards,
    TFRecordDataset,
    has_cuda_backend,
)
from ._decode import decode_image
from ._loader import Loader, Skipped
from ._open import open_dataset
from ._preprocessor import Preprocessor
from ._transforms import ImageAugment, RawTensor

__version__ = "0.1.0"

__all__ = [
    "ConfigError", "CudaError", "Dataset", "DeadlineExceeded", "DecodeError", "Error", "FileList", "ImageAugment",
    "ImageFolder", "InMemory", "IoError", "Loader", "Overloaded", "Preprocessor", "RawTensor", "SampleError",
    "ShardDataset", "Skipped", "TarShards", "TFRecordDataset", "decode_image", "has_cuda_backend", "open_dataset",
]
