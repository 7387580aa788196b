"""The datasets: the C++ ones, with their arguments checked and named and their paths passed as
os.fsencode gives them, so file names in any encoding work (names and paths come back as
os.fsdecode gives them)."""
from typing import Optional, Sequence, Union

from . import _args
from . import _conveyor

Dataset = _conveyor.Dataset
ShardDataset = _conveyor.ShardDataset


class ImageFolder(_conveyor.ImageFolder):
    """torchvision's ImageFolder: `root` holds one folder per class; the classes are their sorted
    names and label i is the i-th; each class folder is walked recursively in sorted order, and
    torchvision's image extensions are listed (in any case), so indices and labels are
    torchvision's. JPEG, PNG, PGM and PPM files decode (told apart by their bytes).

    `.classes` are the class names, `.root` the folder; `len()`, `.label(i)`, `.name(i)` (the
    file's path) and `.read(i)` (its bytes) as every Dataset. An IoError names a folder that
    cannot be listed."""

    def __init__(self, root: _args.PathLike) -> None:
        super().__init__(_args.path("ImageFolder", "root", root))


class FileList(_conveyor.FileList):
    """Samples listed in a text file, one `path label` line each (the integer label last, so paths
    may hold spaces; blank lines and lines starting with '#' are skipped). Relative paths are
    relative to `root`, by default the list file's folder. A line that does not parse is a
    ConfigError naming the file and the line."""

    def __init__(self, path: _args.PathLike, root: Optional[_args.PathLike] = None) -> None:
        super().__init__(_args.path("FileList", "path", path),
                         None if root is None else _args.path("FileList", "root", root))


class TarShards(_conveyor.TarShards):
    """WebDataset tar shards: `pattern` names them (`train-{000000..001281}.tar`, or one file).
    A sample is the members sharing a name up to the first dot: its image is the member with the
    first of `image_extensions` it has, its label the `label` member (an ASCII integer). A shard's
    `.idx` index (DALI's wds2idx) is read when it exists and `use_index` is true; otherwise the
    shard's headers are walked once when opened."""

    def __init__(self, pattern: _args.PathLike, image_extensions: Sequence[str] = ("jpg", "jpeg", "png"),
                 label: str = "cls", use_index: bool = True) -> None:
        if isinstance(image_extensions, str) or not all(isinstance(e, str) for e in image_extensions):
            raise TypeError(f"TarShards: image_extensions must be a sequence of str, got {image_extensions!r}")
        super().__init__(_args.path("TarShards", "pattern", pattern), list(image_extensions),
                         _args.text("TarShards", "label", label), _args.flag("TarShards", "use_index", use_index))


class TFRecordDataset(_conveyor.TFRecordDataset):
    """TFRecord files of tf.train.Example records: `pattern` names them (`*.tfrecord`,
    `train-{00000..01023}-of-01024`); the image is the `image_key` bytes feature, the label the
    `label_key` int64 feature plus `label_offset` (TF's ImageNet records count classes from 1:
    -1 makes them 0-based). A `.idx` or `.index` file beside a record file is read when it exists
    and `use_index` is true; otherwise the file is walked once when opened, CRCs checked."""

    def __init__(self, pattern: _args.PathLike, image_key: str = "image/encoded",
                 label_key: str = "image/class/label", label_offset: int = 0, use_index: bool = True) -> None:
        who = "TFRecordDataset"
        super().__init__(_args.path(who, "pattern", pattern), _args.text(who, "image_key", image_key),
                         _args.text(who, "label_key", label_key), _args.integer(who, "label_offset", label_offset, _args.INT64_MIN, _args.INT64_MAX),
                         _args.flag(who, "use_index", use_index))


class InMemory(_conveyor.InMemory):
    """Encoded samples held in memory, added one by one with `add(data, label)` before a Loader is
    made from it (a Loader reads it without a lock, so adding afterwards is an error). With a
    RawTensor transform the samples are raw arrays instead of images."""

    def add(self, data: Union[bytes, bytearray, memoryview], label: int) -> None:
        """Appends one sample's bytes and its label."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"InMemory.add: data must be bytes, got {type(data).__name__} (use .tobytes() for arrays)")
        super().add(bytes(data), _args.integer("InMemory.add", "label", label, _args.INT64_MIN, _args.INT64_MAX))
