"""conveyor.open_dataset: the dataset a path or pattern names, as conveyor-bench's --data reads it."""
import os
from typing import Union

from . import _conveyor

_KINDS = ("auto", "folder", "wds", "tfrecord", "list")


def open_dataset(spec: Union[str, os.PathLike], format: str = "auto") -> _conveyor.Dataset:
    """A folder (ImageFolder), a tar shard pattern or .tar (TarShards: `train-{000000..001281}.tar`),
    TFRecord files (TFRecordDataset: `*.tfrecord`, `*.tfrecords`, `train-{00000..01023}-of-01024`)
    or a file of "path label" lines (FileList); `format` says which when the name does not."""
    spec = os.fspath(spec)
    if format not in _KINDS:
        raise _conveyor.ConfigError(f"open_dataset: format must be one of {', '.join(_KINDS)}, got {format!r}")
    kind = format
    if kind == "auto":
        name = os.path.basename(spec)  # the file name decides, not the folders above it
        if os.path.isdir(spec):
            kind = "folder"
        elif name.endswith(".tar") or ("{" in name and ".tar" in name):
            kind = "wds"
        elif name.endswith((".tfrecord", ".tfrecords")) or "-of-" in name:
            kind = "tfrecord"
        elif os.path.isfile(spec):
            kind = "list"
        else:
            kind = "folder"  # nothing there: ImageFolder says so
    return {"folder": _conveyor.ImageFolder, "wds": _conveyor.TarShards, "tfrecord": _conveyor.TFRecordDataset,
            "list": _conveyor.FileList}[kind](spec)
