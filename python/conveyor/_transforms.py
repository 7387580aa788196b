"""The transforms, as Python dataclasses with the C++ ImageAugment's and RawTensor's fields."""
import dataclasses
from typing import Any, Optional, Sequence, Tuple, Union

from . import _conveyor

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

_DTYPES = {
    "u8": "u8", "uint8": "u8",
    "f32": "f32", "float32": "f32", "float": "f32",
    "f16": "f16", "float16": "f16", "half": "f16",
    "bf16": "bf16", "bfloat16": "bf16",
}


def dtype_name(dtype: Any) -> str:
    """conveyor's name for `dtype`: "u8", "f32", "f16", "bf16", or a torch or numpy dtype of those."""
    name = str(dtype)
    for prefix in ("torch.", "<class 'numpy.", "numpy."):
        if name.startswith(prefix):
            name = name[len(prefix):].rstrip("'>")
    if name not in _DTYPES:
        raise _conveyor.ConfigError(f"unknown dtype {dtype!r} (expected u8, f32, f16, bf16 or a torch dtype of those)")
    return _DTYPES[name]


@dataclasses.dataclass
class ImageAugment:
    """Decode, crop, resize, flip, normalise and convert each JPEG, with torchvision's semantics.

    crop: "random_resized" (RandomResizedCrop(size, scale, ratio)) or "center" (CenterCrop(size),
    after Resize(resize) when resize is set). flip: the horizontal flip's probability. normalize:
    (mean, std) on pixels / 255, "imagenet", or None (floats are pixels / 255; u8 is never
    normalised). dtype: "u8", "f32", "f16", "bf16" or a torch dtype. layout: "nchw" or "nhwc".
    decode_scaling: None decodes at a DCT scale for random crops and at full size for center
    crops (exact torchvision evaluation); True or False forces it.
    """

    crop: str = "random_resized"
    size: int = 224
    scale: Tuple[float, float] = (0.08, 1.0)
    ratio: Tuple[float, float] = (3 / 4, 4 / 3)
    resize: Optional[int] = None
    flip: float = 0.0
    normalize: Union[None, str, Tuple[Sequence[float], Sequence[float]]] = None
    dtype: Any = "f32"
    layout: str = "nchw"
    exif_orientation: bool = False
    roi: bool = True
    decode_scaling: Optional[bool] = None
    lenient: bool = False
    max_image_pixels: int = 1 << 27

    @classmethod
    def train(cls, size: int = 224, **fields) -> "ImageAugment":
        """RandomResizedCrop(size) + flip(0.5) + ImageNet normalisation (none for u8)."""
        fields.setdefault("normalize", None if dtype_name(fields.get("dtype", "f32")) == "u8" else "imagenet")
        return cls(crop="random_resized", size=size, flip=fields.pop("flip", 0.5), **fields)

    @classmethod
    def eval(cls, resize: int = 256, crop: int = 224, **fields) -> "ImageAugment":
        """Resize(resize) + CenterCrop(crop) + ImageNet normalisation (none for u8)."""
        fields.setdefault("normalize", None if dtype_name(fields.get("dtype", "f32")) == "u8" else "imagenet")
        return cls(crop="center", size=crop, resize=resize, **fields)

    def _native(self):
        if self.normalize is None:
            mean = std = None
        elif self.normalize == "imagenet":
            mean, std = IMAGENET_MEAN, IMAGENET_STD
        else:
            mean, std = self.normalize
        return _conveyor.image_augment(
            crop=self.crop, size=self.size, scale=tuple(self.scale), ratio=tuple(self.ratio), resize=self.resize,
            flip=float(self.flip), mean=None if mean is None else [float(v) for v in mean],
            std=None if std is None else [float(v) for v in std], dtype=dtype_name(self.dtype),
            layout=str(self.layout).lower(), exif_orientation=self.exif_orientation, roi=self.roi,
            decode_scaling=self.decode_scaling, lenient=self.lenient, max_image_pixels=int(self.max_image_pixels))


@dataclasses.dataclass
class RawTensor:
    """Samples that are already fixed-shape arrays: each sample's bytes become one tensor of
    `shape` and `dtype` as they are."""

    shape: Sequence[int]
    dtype: Any = "f32"

    def _native(self):
        return _conveyor.raw_tensor(shape=[int(v) for v in self.shape], dtype=dtype_name(self.dtype))
