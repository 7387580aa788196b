"""conveyor.Loader: the PyTorch DataLoader's place in a training loop."""
import json
import os
import warnings
import weakref
from typing import Any, Callable, Dict, Generic, List, NamedTuple, Optional, Tuple, TypeVar, Union

from . import _args
from . import _conveyor
from ._batch import batch_ops
from ._open import open_dataset
from ._transforms import RawTensor, Views, compiled_transform

T = TypeVar("T")


class Skipped(NamedTuple):
    """A sample replaced under on_error="skip"."""

    epoch: int
    index: int  # type: ignore[assignment]  # the field's name, though tuple has an index method
    replacement: int
    path: str
    reason: str


_LOCAL_RANK_GPU = -2  # the C++ loader's device for "the GPU of this process's local rank"


def _device_index(who: str, device: Any, distributed: Any) -> int:
    """-1 for the CPU, a CUDA ordinal, or the local rank's GPU for "cuda" under distributed="env"."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    kind = getattr(device, "type", None)  # a torch.device
    if isinstance(kind, str):
        index = getattr(device, "index", None)
        return -1 if kind == "cpu" else (index if index is not None else _device_index(who, "cuda", distributed))
    if isinstance(device, str):
        if device == "cpu":
            return -1
        if device == "cuda":
            return _LOCAL_RANK_GPU if distributed == "env" else 0
        if device.startswith("cuda:") and device[5:].isdigit():
            return int(device[5:])
    raise _conveyor.ConfigError(f"{who}: device must be 'cpu', 'cuda', 'cuda:N', an int or a torch.device, "
                                f"got {device!r}")


def _stream_handle(who: str, stream: Any) -> int:
    """A cudaStream_t as an int: from a torch.cuda.Stream, an int, or None (the legacy default stream)."""
    if stream is None:
        return 0
    handle = getattr(stream, "cuda_stream", stream)
    if isinstance(handle, bool) or not isinstance(handle, int):
        raise TypeError(f"{who}: stream must be a torch.cuda.Stream, a cudaStream_t as an int or None, got {stream!r}")
    return handle


def _distributed(distributed: Any) -> Tuple[str, Optional[int], Optional[int]]:
    """(mode, rank, world size) for the C++ loader."""
    if distributed is False or distributed is None:
        return "", None, None
    if isinstance(distributed, str) and distributed == "env":
        return "env", None, None
    if isinstance(distributed, (tuple, list)) and len(distributed) == 2:
        rank = _args.integer("Loader", "distributed's rank", distributed[0], 0, _args.INT64_MAX)
        world = _args.integer("Loader", "distributed's world_size", distributed[1], 1, _args.INT64_MAX)
        if rank >= world:
            raise _conveyor.ConfigError(f"Loader: distributed's rank {rank} must be below its world_size {world}")
        return "explicit", rank, world
    raise _conveyor.ConfigError(f"Loader: distributed must be False, 'env' or (rank, world_size), got {distributed!r}")


def _warn_without_local_rank() -> None:
    """Under torchrun's variables without LOCAL_RANK, "the local rank's GPU" is GPU 0 on every process."""
    env = os.environ
    torchrun = any(name in env for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))  # the launcher read first
    if torchrun and "LOCAL_RANK" not in env:
        warnings.warn(f"conveyor.Loader: distributed='env' found torchrun's RANK={env.get('RANK')} and "
                      f"WORLD_SIZE={env.get('WORLD_SIZE')} but no LOCAL_RANK, so device='cuda' is cuda:0, as for "
                      f"every process of this node; set LOCAL_RANK (torchrun does) or pass device='cuda:N'",
                      stacklevel=3)


class _Sampler:
    """`loader.sampler`: where trainers written for the DataLoader (Lightning's fit loop, mmengine's
    and Accelerate's hooks) call `set_epoch` at each epoch's start. It selects the loader's epoch."""

    def __init__(self, loader: "Loader"):
        self._loader = weakref.ref(loader)  # no cycle: the loader's pipeline goes when the loader does

    def _of(self) -> "Loader":
        loader = self._loader()
        if loader is None:
            raise _conveyor.Error("conveyor.Loader.sampler: its Loader no longer exists")
        return loader

    def set_epoch(self, epoch: int) -> None:
        """`Loader.set_epoch`."""
        self._of().set_epoch(epoch)

    @property
    def epoch(self) -> int:
        """`Loader.epoch`."""
        return self._of().epoch


def _prefetch(who: str, value: Union[int, str]) -> int:
    """`prefetch` for the native loader: "auto" is 0 (the pipeline chooses), else an int >= 2."""
    if isinstance(value, str):
        if value != "auto":
            raise _conveyor.ConfigError(f"{who}: prefetch must be 'auto' or an int >= 2, got {value!r}")
        return 0
    return _args.integer(who, "prefetch", value, 2)


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

    Epochs: every new loop (`iter(loader)`, `batches()`) starts the next epoch, as a DataLoader
    reshuffles on every iteration, unless `set_epoch(e)` chose the epoch for it (also reached as
    `loader.sampler.set_epoch(e)`, where Lightning-style trainers call it); the first loop is epoch
    0. One loop runs at a time: starting another ends the one in progress, and that one then raises
    an Error if asked for more (zip(loader, loader) needs two loaders). `state_dict()` keeps where
    the latest loop stands, and `load_state_dict` resumes there exactly.

    transform: an ImageAugment, a RawTensor, a Views (or a list of image transforms: one view
    copy each; the loop then yields a list of tensors), or a torchvision Compose (v2 on tensors, v1
    on PIL images; conveyor.transforms' too), compiled by `ImageAugment.from_transforms` with
    `image_backend` ("pil": the Compose is fed PIL images, as torchvision's ImageFolder feeds them;
    "tensor": decode_image's tensors; None: "pil" for v1, else "tensor"), or a Hugging Face image
    processor (ViT, CLIP, SigLIP, BiT, ConvNeXt; either backend: its pixel_values); by default `ImageAugment.eval()` (Resize 256,
    CenterCrop 224, ImageNet normalisation, f32): deterministic, what evaluation wants; train with
    `ImageAugment.train(...)`. shuffle: each epoch in its own order, a permutation that is a pure
    function of (seed, epoch) (without it, dataset order every epoch). seed: keys the order and
    every random augmentation, so an epoch's batches are the same in every run. workers: threads
    (-1: one per core, less one where the GPU's engines decode; 0: the iterating thread decodes).
    prefetch: batches in flight, each in its own slot: an int >= 2, or "auto" (6 where the GPU's
    engines decode JPEGs, else 3, fewer where memory_budget, bytes of pinned and device memory for
    the slots as an int or a size such as "8GiB", default 8 GiB, holds fewer;
    `stats()["prefetch_reason"]` says why). on_error: "raise" (a SampleError at the
    failing sample's batch; the loop can go on past it) or "skip" (replaced, listed in `skipped`).
    device: "cpu", "cuda", "cuda:N", an int or a torch.device. stream: the CUDA stream batches are
    handed to by default (torch's current stream still gets each batch it asks for).
    distributed: False; "env" (torch's DistributedSampler semantics, the rank and world size from
    torchrun's, Open MPI's or SLURM's variables; device "cuda" is then the local rank's GPU); or
    (rank, world_size). shard_window: for TarShards and TFRecordDataset with shuffle=True, shuffle
    shards and then samples within a window of that many shards, so each worker reads a few shards
    sequentially rather than every shard at random (0: a full permutation of samples).
    decode: where a device loader decodes JPEGs: "cpu" (the workers, bit-exact), "gpu" (gpu_share,
    default 1, of the files the GPU's hardware JPEG engines take go to them) or "auto" (the share
    set between epochs from measured rates, starting at gpu_share, by default the model's best
    share for the worker count at rates measured on an H200; `stats()` says it and `state_dict`
    keeps it). Needs a build with nvJPEG: `conveyor.has_gpu_decoding()`. gpu_upsampling: how the
    engines fill in subsampled chroma, "interpolated" (libjpeg-turbo's fancy upsampling, the
    closest to the CPU's pixels) or "replicated" (each chroma sample repeated; a third to a half of
    the stager's time a file, so the engines take more, within a wider tolerance: the README's
    exactness section).
    batch_transform: what torchvision's reference scripts apply after the DataLoader, done to each
    finished batch (by the workers on the CPU, by a kernel on a GPU): a torchvision v2 (or
    conveyor.transforms) MixUp or CutMix with num_classes, a RandomChoice of them, or timm's
    `timm.data.Mixup` (modes 'batch', 'pair' and 'elem'; label smoothing, prob, switch_prob,
    cutmix_minmax, correct_lam), drawn from (seed, epoch, batch number). The loop then yields
    `(images, targets)`, targets float32 [N, num_classes] as torchvision's MixUp and CutMix (or
    timm's Mixup) make them, where the images are; `batches()` keeps the integer labels and what
    was drawn (`Batch.mix`, and per sample `Batch.sample_mixes`).
    """

    def __init__(self, dataset: Union[_conveyor.Dataset, _args.PathLike], batch_size: int = 256,
                 shuffle: bool = False, seed: int = 0, transform: Any = None,
                 workers: int = -1, prefetch: Union[int, str] = "auto", memory_budget: Union[int, str] = 0,
                 drop_last: bool = False, on_error: _args.OnError = "raise",
                 device: Any = "cpu", stream: Any = None, distributed: Union[bool, str, Tuple[int, int]] = False,
                 output: Optional[_args.Output] = None, shard_window: int = 0, decode: _args.Decode = "cpu",
                 gpu_share: Optional[float] = None, gpu_upsampling: _args.GpuUpsampling = "interpolated",
                 batch_transform: Any = None, image_backend: Optional[_args.ImageBackend] = None):
        who = "Loader"
        if isinstance(dataset, (str, bytes, os.PathLike)):
            dataset = open_dataset(dataset)
        elif not isinstance(dataset, _conveyor.Dataset):
            raise TypeError(f"Loader: dataset must be a conveyor dataset (ImageFolder, FileList, ...) or a path, "
                            f"got {type(dataset).__name__}")
        transform = compiled_transform(who, transform, image_backend)
        self.dataset = dataset
        self.batch_size = _args.integer(who, "batch_size", batch_size, 0)  # 0: the pipeline says > 0
        self.shuffle = _args.flag(who, "shuffle", shuffle)
        self.seed = _args.integer(who, "seed", seed, 0, _args.UINT64_MAX)
        self.transform = transform
        mixing = batch_ops(batch_transform)
        mode, rank, world = _distributed(distributed)
        index = _device_index(who, device, distributed)
        if index == _LOCAL_RANK_GPU:
            _warn_without_local_rank()
        self._impl = _conveyor.Loader(
            dataset, transform._native(), batch_size=self.batch_size, shuffle=self.shuffle, seed=self.seed,
            workers=_args.integer(who, "workers", workers, -1), prefetch=_prefetch(who, prefetch),
            memory_budget=_args.byte_size(who, "memory_budget", memory_budget),
            drop_last=_args.flag(who, "drop_last", drop_last), on_error=_args.text(who, "on_error", on_error),
            device=index, stream=_stream_handle(who, stream), distributed=mode, rank=rank, world_size=world,
            shard_window=_args.integer(who, "shard_window", shard_window, 0), decode=_args.text(who, "decode", decode),
            gpu_share=_args.optional_real(who, "gpu_share", gpu_share),
            gpu_upsampling=_args.text(who, "gpu_upsampling", gpu_upsampling),
            batch_transform=mixing if mixing and mixing[0] else None)
        self.batch_transform = batch_transform
        self.decode = decode
        self._convert = self._converter(output, index != -1)
        self._next = (0, 0)  # (epoch, first batch) of the next loop
        self._resume: Optional[Tuple[int, int]] = None  # load_state_dict's, which set_epoch of its epoch keeps
        self._gpu_share: Optional[float] = None  # load_state_dict's, for the next loop
        self._loop: Optional["weakref.ref[_Epoch[Any]]"] = None  # the latest loop, while someone holds it
        self._latest: Optional[Tuple[int, int, _conveyor.Epoch]] = None  # its (epoch, first batch, native loop)
        self._chosen = False  # set_epoch or load_state_dict since the latest loop started
        self.sampler = _Sampler(self)

    @staticmethod
    def _converter(output: Optional[str], on_device: bool) -> Callable[[Any], Any]:
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

    def _in_progress(self) -> "Optional[_Epoch[Any]]":
        loop = self._loop() if self._loop is not None else None
        return loop if loop is not None and loop._open else None

    def _position(self) -> Tuple[int, int]:
        """(epoch, batches of it done) where the next batch comes from: the latest loop while it
        runs, and after a break until set_epoch chooses; else where the next loop starts."""
        if self._latest is not None:
            epoch, first, native = self._latest
            if not native.finished and (not self._chosen or self._in_progress() is not None):
                return epoch, first + native.consumed
        return self._next

    @property
    def epoch(self) -> int:
        """The epoch of the latest loop until it has run to its end (or set_epoch chose the next
        one after a break); then the epoch the next loop starts."""
        return self._position()[0]

    def set_epoch(self, epoch: int) -> None:
        """Selects the epoch the next loop iterates: its order and its augmentation (a loop in
        progress goes on with its own). Loops after it go on from there. After `load_state_dict`,
        selecting the saved epoch keeps its resume point."""
        epoch = _args.integer("Loader.set_epoch", "epoch", epoch, 0, _args.UINT64_MAX)
        first = self._resume[1] if self._resume and self._resume[0] == epoch else 0
        if not first:
            self._resume = None
        self._next, self._chosen = (epoch, first), True

    def _start(self, make: Callable[[_conveyor.Batch], T]) -> "_Epoch[T]":
        previous = self._in_progress()
        if previous is not None:
            previous._end("a later iter() over the same Loader")
        epoch, first = self._next
        if self._gpu_share is not None:
            self._impl.set_gpu_share(self._gpu_share)
            self._gpu_share = None
        loop = _Epoch(self, make, epoch, first)
        self._next, self._resume, self._chosen = (epoch + 1, 0), None, False
        self._loop = weakref.ref(loop)
        self._latest = (epoch, first, loop._native)
        return loop

    def batches(self) -> "_Epoch[_conveyor.Batch]":
        """A loop over the next epoch's batches as Batch objects (images, labels, indices, epoch,
        number)."""
        return self._start(lambda batch: batch)

    def __iter__(self) -> "_Epoch[Tuple[Any, Any]]":
        images = self._convert
        if isinstance(self.transform, Views):
            views = self.transform
            images = lambda tensor: views.split(self._convert(tensor))  # noqa: E731
        if self.batch_transform is not None:
            return self._start(lambda batch: (images(batch.images), self._convert(batch.targets)))
        return self._start(lambda batch: (images(batch.images), self._convert(batch.labels)))

    def state_dict(self) -> Dict[str, Any]:
        """Where the latest loop stands, as torchdata's StatefulDataLoader keeps it: its epoch and
        the batches taken from it, failed ones included (after a `break` too, until set_epoch
        chooses the next loop); once it has run to its end, where the next loop starts (the next
        epoch, or the one set_epoch chose). `load_state_dict` resumes there exactly: a state taken
        mid-epoch gives that epoch's remaining batches, one taken after an epoch's end the next
        epoch."""
        epoch, done = self._position()
        state = {"epoch": epoch, "batches_done": done, "dataset_size": len(self.dataset),
                 "batch_size": self.batch_size, "seed": self.seed, "shuffle": int(self.shuffle)}
        if self.decode != "cpu":  # which samples the GPU decodes: the epoch's share
            state["gpu_share"] = self.stats()["gpu_share"]
        return state

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Makes the next loop start where `state` says (a loop in progress goes on with its own)."""
        for key, mine in (("dataset_size", len(self.dataset)), ("batch_size", self.batch_size), ("seed", self.seed),
                          ("shuffle", int(self.shuffle))):
            if state.get(key) != mine:
                raise _conveyor.ConfigError(f"Loader.load_state_dict: the state has {key} {state.get(key)}, "
                                            f"this loader {mine}: it would not resume the same batches")
        epoch = _args.integer("Loader.load_state_dict", "the state's epoch", state.get("epoch"), 0, _args.UINT64_MAX)
        done = _args.integer("Loader.load_state_dict", "the state's batches_done", state.get("batches_done"), 0,
                             _args.UINT64_MAX)
        if done > len(self):
            raise _conveyor.ConfigError(f"Loader.load_state_dict: the state has batches_done {done}, "
                                        f"beyond this loader's {len(self)} batches an epoch")
        self._resume = self._next = (epoch, done)
        self._chosen = True
        if "gpu_share" in state:
            self._gpu_share = float(state["gpu_share"])

    def metrics(self, **labels: str) -> str:
        """`stats()` in Prometheus' text exposition format, every sample labelled with `labels`
        (`loader.metrics(pipeline="train")`), for a `/metrics` endpoint."""
        return self._impl.prometheus(sorted((k, str(v)) for k, v in labels.items()))

    def stats(self) -> Dict[str, Any]:
        """Per-stage counts and times, images/s, the consumer's waiting, bytes held (PipelineStats)."""
        stats: Dict[str, Any] = json.loads(self._impl.stats_json())
        return stats

    @property
    def skipped(self) -> List[Skipped]:
        """Every sample replaced under on_error="skip" in the batches delivered so far."""
        return [Skipped(*record) for record in self._impl.skipped()]

    @property
    def local_rank(self) -> Optional[int]:
        """This process's local rank under distributed="env"."""
        return self._impl.local_rank


class _Epoch(Generic[T]):
    """One loop over one epoch of a loader. An iterator class rather than a generator: an error at
    a batch (a SampleError, Ctrl-C while waiting) leaves it usable, and it keeps nothing of a
    batch it handed out, so only what the caller keeps holds a slot. Dropping it (a `break`) or
    `close()` ends it; a later loop over the same loader ends it too, and then it says so."""

    def __init__(self, loader: Loader, make: Callable[[_conveyor.Batch], T], epoch: int, first: int):
        self._open = False  # first, so that __del__ after a failed start finds nothing to close
        self._ended_by: Optional[str] = None
        self._loader = loader
        self._make = make
        self.epoch = epoch
        self._first = first
        self._native = loader._impl.iterate(epoch, first)
        self._open = True

    def __iter__(self) -> "_Epoch[T]":
        return self

    def __next__(self) -> T:
        if self._ended_by is not None:
            raise _conveyor.Error(
                f"conveyor.Loader: this loop over epoch {self.epoch} was ended by {self._ended_by}, after "
                f"{self._first + self._native.consumed} of its {len(self._loader)} batches: a Loader runs one loop "
                f"at a time, so "
                f"zip(loader, loader) or a loop nested in another over the same Loader needs a second Loader")
        if not self._open:
            raise StopIteration
        try:
            batch = self._native.next()
        except StopIteration:
            self._open = False
            raise
        return self._make(batch)

    def close(self) -> None:
        """Ends the loop now (work in flight is finished and dropped)."""
        if self._open:
            self._open = False
            self._native.close()

    def _end(self, why: str) -> None:
        self.close()
        self._ended_by = why

    def __del__(self) -> None:
        self.close()
