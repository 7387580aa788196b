"""conveyor.Loader: the PyTorch DataLoader's place in a training loop."""
import json
import os
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

from . import _conveyor
from ._open import open_dataset
from ._transforms import ImageAugment, RawTensor


class Skipped(NamedTuple):
    """A sample replaced under on_error="skip"."""

    epoch: int
    index: int
    replacement: int
    path: str
    reason: str


_LOCAL_RANK_GPU = -2  # the C++ loader's device for "the GPU of this process's local rank"


def _device_index(device: Any, distributed: Any) -> int:
    """-1 for the CPU, a CUDA ordinal, or the local rank's GPU for "cuda" under distributed="env"."""
    if isinstance(device, int):
        return device
    kind = getattr(device, "type", None)  # a torch.device
    if kind is not None:
        return -1 if kind == "cpu" else (device.index if device.index is not None else _device_index("cuda", distributed))
    name = str(device)
    if name == "cpu":
        return -1
    if name == "cuda":
        return _LOCAL_RANK_GPU if distributed == "env" else 0
    if name.startswith("cuda:") and name[5:].isdigit():
        return int(name[5:])
    raise _conveyor.ConfigError(f"Loader: device must be 'cpu', 'cuda', 'cuda:N', an int or a torch.device, got {device!r}")


def _stream_handle(stream: Any) -> int:
    """A cudaStream_t as an int: from a torch.cuda.Stream, an int, or None (the legacy default stream)."""
    if stream is None:
        return 0
    return int(getattr(stream, "cuda_stream", stream))


class Loader:
    """Batches of `dataset` through `transform`, prepared by worker threads in C++, in order.
    `dataset` is a conveyor dataset, or a path or pattern `open_dataset` opens (a folder, tar
    shards, TFRecords, a file list).

    Iterating yields `(images, labels)`: torch tensors when torch is installed (on the GPU for a
    CUDA device, ready on torch's current stream when the batch is yielded, with no host wait),
    numpy arrays for host batches without torch, or objects with `__dlpack__` otherwise (or as
    `output` says: "torch", "numpy", "dlpack"). Images view the loader's memory without a copy: a
    batch's slot is reused only once every image tensor of it is gone, and at most `prefetch` batches
    can be alive at a time; asking for another while `prefetch` are held raises an Error saying so
    (delete or .clone() what you keep). Labels are copies of their own, which hold no slot.

    shuffle: a new permutation every epoch, a pure function of (seed, epoch); `seed` also keys every
    random augmentation. workers: threads (-1: one per core; 0: the iterating thread decodes).
    on_error: "raise" (a SampleError at the failing sample's batch) or "skip" (replaced, listed in
    `skipped`). device: "cpu", "cuda", "cuda:N", an int or a torch.device. stream: the CUDA stream
    batches are handed to by default (torch's current stream still gets each batch it asks for).
    distributed: False; "env" (torch's DistributedSampler semantics, the rank and world size from
    torchrun's, Open MPI's or SLURM's variables; device "cuda" is then the local rank's GPU); or
    (rank, world_size). shard_window: for TarShards and TFRecordDataset with shuffle=True, shuffle
    shards and then samples within a window of that many shards, so each worker reads a few shards
    sequentially rather than every shard at random (0: a full permutation of samples).
    decode: where a device loader decodes JPEGs: "cpu" (the workers, bit-exact), "gpu" (gpu_share,
    default 1, of the files the GPU's hardware JPEG engines take go to them) or "auto" (the share
    set between epochs from measured rates, starting at gpu_share, by default the model's best
    share for the worker count at rates measured on an H200; `stats()` says it and `state_dict`
    keeps it). Needs a build with nvJPEG. gpu_upsampling: how the engines fill in subsampled chroma,
    "interpolated" (libjpeg-turbo's fancy upsampling, the closest to the CPU's pixels) or
    "replicated" (each chroma sample repeated; a third to a half of the stager's time a file, so the
    engines take more, within a wider tolerance: the README's exactness section).
    """

    def __init__(self, dataset: Union[_conveyor.Dataset, str, os.PathLike], batch_size: int = 256, shuffle: bool = False, seed: int = 0,
                 transform: Union[ImageAugment, RawTensor, None] = None, workers: int = -1, prefetch: int = 3,
                 drop_last: bool = False, on_error: str = "raise", device: Any = "cpu", stream: Any = None,
                 distributed: Union[bool, str, Tuple[int, int]] = False, output: Optional[str] = None,
                 shard_window: int = 0, decode: str = "cpu", gpu_share: Optional[float] = None,
                 gpu_upsampling: str = "interpolated"):
        if isinstance(dataset, (str, os.PathLike)):
            dataset = open_dataset(dataset)
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.transform = transform if transform is not None else ImageAugment()
        if distributed is False or distributed is None:
            mode, rank, world = "", None, None
        elif distributed == "env":
            mode, rank, world = "env", None, None
        else:
            mode, (rank, world) = "explicit", distributed
        self._impl = _conveyor.Loader(
            dataset, self.transform._native(), batch_size=batch_size, shuffle=shuffle, seed=seed, workers=workers,
            prefetch=prefetch, drop_last=drop_last, on_error=on_error, device=_device_index(device, distributed),
            stream=_stream_handle(stream), distributed=mode, rank=rank, world_size=world, shard_window=shard_window,
            decode=decode, gpu_share=gpu_share, gpu_upsampling=gpu_upsampling)
        self.decode = decode
        self._convert = self._converter(output, _device_index(device, distributed) != -1)
        self._resume: Optional[Tuple[int, int]] = None  # (epoch, batches done) from load_state_dict
        self._done = 0  # batches yielded in the current epoch

    @staticmethod
    def _converter(output: Optional[str], on_device: bool):
        if output not in (None, "torch", "numpy", "dlpack"):
            raise _conveyor.ConfigError(f"Loader: output must be 'torch', 'numpy' or 'dlpack', got {output!r}")
        if output in (None, "torch"):
            try:
                import torch
                return torch.from_dlpack
            except ImportError:
                if output == "torch":
                    raise
        if output in (None, "numpy") and not on_device:
            try:
                import numpy
                return numpy.from_dlpack
            except ImportError:
                if output == "numpy":
                    raise
        if output == "numpy":
            raise _conveyor.ConfigError("Loader: numpy arrays are host memory; a device loader yields torch or DLPack")
        return lambda tensor: tensor

    def __len__(self) -> int:
        """Batches per epoch (for learning-rate schedules)."""
        return self._impl.batches_per_epoch()

    @property
    def epoch(self) -> int:
        return self._impl.epoch

    def set_epoch(self, epoch: int) -> None:
        """Selects the epoch the next loop iterates: its order and its augmentation. After
        `load_state_dict`, selecting the saved epoch keeps its resume point."""
        first = self._resume[1] if self._resume and self._resume[0] == epoch else 0
        if not first:
            self._resume = None
        self._impl.set_epoch(epoch, first)

    def batches(self) -> "_Epoch":
        """The selected epoch's batches as Batch objects (images, labels, indices, epoch, number)."""
        return _Epoch(self, lambda batch: batch)

    def __iter__(self) -> "_Epoch":
        return _Epoch(self, lambda batch: (self._convert(batch.images), self._convert(batch.labels)))

    def state_dict(self) -> Dict[str, Any]:
        """Where the loop is: the epoch and the batches of it already yielded (torchdata's
        StatefulDataLoader convention). `load_state_dict` resumes at the next batch, exactly."""
        state = {"epoch": self.epoch, "batches_done": self._done, "dataset_size": len(self.dataset),
                 "batch_size": self.batch_size, "seed": self.seed, "shuffle": int(self.shuffle)}
        if self.decode != "cpu":  # which samples the GPU decodes: the epoch's share
            state["gpu_share"] = self.stats()["gpu_share"]
        return state

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        for key, mine in (("dataset_size", len(self.dataset)), ("batch_size", self.batch_size), ("seed", self.seed),
                          ("shuffle", int(self.shuffle))):
            if state.get(key) != mine:
                raise _conveyor.ConfigError(f"Loader.load_state_dict: the state has {key} {state.get(key)}, "
                                            f"this loader {mine}: it would not resume the same batches")
        self._resume = (int(state["epoch"]), int(state["batches_done"]))
        self._impl.set_epoch(*self._resume)
        if "gpu_share" in state:
            self._impl.set_gpu_share(float(state["gpu_share"]))

    def metrics(self, **labels: str) -> str:
        """`stats()` in Prometheus' text exposition format, every sample labelled with `labels`
        (`loader.metrics(pipeline="train")`), for a `/metrics` endpoint."""
        return self._impl.prometheus(sorted((k, str(v)) for k, v in labels.items()))

    def stats(self) -> Dict[str, Any]:
        """Per-stage counts and times, images/s, the consumer's waiting, bytes held (PipelineStats)."""
        return json.loads(self._impl.stats_json())

    @property
    def skipped(self) -> List[Skipped]:
        """Every sample replaced under on_error="skip" in the batches delivered so far."""
        return [Skipped(*record) for record in self._impl.skipped()]

    @property
    def local_rank(self) -> Optional[int]:
        """This process's local rank under distributed="env"."""
        return self._impl.local_rank


class _Epoch:
    """One loop over a loader's selected epoch. An iterator class rather than a generator: a
    SampleError leaves it usable (the next call moves past that batch), and it keeps nothing of a
    batch it handed out, so only what the caller keeps holds a slot. Dropping it (a `break`) ends
    the epoch; so does starting another loop over the same loader."""

    def __init__(self, loader: Loader, make):
        self._loader = loader
        self._make = make
        self._epoch = loader._impl.iterate()
        loader._done = loader._resume[1] if loader._resume else 0
        loader._resume = None

    def __iter__(self) -> "_Epoch":
        return self

    def __next__(self):
        if self._epoch is None:
            raise StopIteration
        try:
            batch = self._epoch.next()
        except StopIteration:
            self.close()
            raise
        self._loader._done += 1
        return self._make(batch)

    def close(self) -> None:
        """Ends the epoch now (work in flight is finished and dropped)."""
        if self._epoch is not None:
            self._epoch.close()
            self._epoch = None

    def __del__(self):
        self.close()
