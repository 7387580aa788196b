"""conveyor.open_dataset: the dataset a path or pattern names, as conveyor-bench's --data reads it."""
import os

from . import _args
from . import _conveyor
from ._datasets import FileList, ImageFolder, TarShards, TFRecordDataset

_KINDS = ("auto", "folder", "wds", "tfrecord", "list")


def open_dataset(spec: _args.PathLike, format: str = "auto") -> _conveyor.Dataset:
    """A folder (ImageFolder), a tar shard pattern or .tar (TarShards: `train-{000000..001281}.tar`),
    TFRecord files (TFRecordDataset: `*.tfrecord`, `*.tfrecords`, `train-{00000..01023}-of-01024`)
    or a file of "path label" lines (FileList); `format` says which when the name does not."""
    path = os.fsdecode(_args.path("open_dataset", "spec", spec))
    kind = _args.choice("open_dataset", "format", format, _KINDS)
    if kind == "auto":
        name = os.path.basename(path)  # the file name decides, not the folders above it
        if os.path.isdir(path):
            kind = "folder"
        elif name.endswith(".tar") or ("{" in name and ".tar" in name):
            kind = "wds"
        elif name.endswith((".tfrecord", ".tfrecords")) or "-of-" in name:
            kind = "tfrecord"
        elif os.path.isfile(path):
            kind = "list"
        else:
            kind = "folder"  # nothing there: ImageFolder says so
    opened: _conveyor.Dataset = {"folder": ImageFolder, "wds": TarShards, "tfrecord": TFRecordDataset,
                                 "list": FileList}[kind](path)
    return opened
