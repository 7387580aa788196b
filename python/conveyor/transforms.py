"""torchvision.transforms.v2's transforms, with its names, arguments and defaults, for users
without torchvision. The pixel transforms go into `ImageAugment(transforms=[...])`: they run after
the crop and flip, in the order given, each sample drawing its own parameters with torchvision's
distributions from its (seed, epoch, index) streams; `ImageAugment.drawn_calls` lists what a sample
drew as torchvision functional calls. A whole pipeline (Compose, with the crop, ToDtype and
Normalize) goes to a Loader or a Preprocessor as it is, or to `ImageAugment.from_transforms`, as a
torchvision v2 Compose does:

    from conveyor import transforms as T
    recipe = T.Compose([T.RandomResizedCrop(176), T.RandomHorizontalFlip(), T.TrivialAugmentWide(),
                        T.PILToTensor(), T.ToDtype("float32", scale=True),
                        T.Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)),
                        T.RandomErasing(0.1)])

Grayscale keeps three channels (`num_output_channels=3`, the only count a batch of RGB images
holds). RandomErasing erases the output (normalised, when Normalize comes before it), so it comes
after every other transform. interpolation: "nearest" or "bilinear", or torchvision's
InterpolationMode; fill: None, a number, or one per channel.
"""
import dataclasses
from typing import Any, Dict, NamedTuple, Optional, Sequence, Tuple, Union

# The pixel transforms, made from their C++ declarations (_pixel_transforms.py says how).
from ._pixel_transforms import *  # noqa: F401,F403
from ._pixel_transforms import PIXEL_TRANSFORMS as _PIXEL_TRANSFORMS, Fill, Jitter, Numbers, PixelTransform, native_list
from ._pixel_transforms import __all__ as _pixel_transform_names


# Batch transforms, for Loader(batch_transform=...): they mix a finished batch, pairing sample i
# with sample i - 1, and make the labels soft targets [N, num_classes]. RandomChoice picks one of
# them per batch, as torchvision's reference recipe does.

@dataclasses.dataclass
class MixUp:
    """Each image blended with the one before it: `lam * x + (1 - lam) * partner`, lam drawn from
    Beta(alpha, alpha) per batch; the one-hot labels blended alike."""

    alpha: float = 1.0
    num_classes: Optional[int] = None


@dataclasses.dataclass
class CutMix:
    """A box of each image replaced by the same box of the one before it (its side sqrt(1 - lam) of
    the image's, lam drawn from Beta(alpha, alpha) per batch); the one-hot labels blended by the area
    each keeps."""

    alpha: float = 1.0
    num_classes: Optional[int] = None


# The rest of a pipeline, for Compose: the crop that gives every sample of a batch one size, what
# conveyor's decode already gives (torchvision.io.decode_image's uint8 CHW tensor), the conversion
# to float and the normalisation. ImageAugment.from_transforms reads them.

@dataclasses.dataclass
class RandomResizedCrop:
    """A random box of `scale` of the area, aspect in `ratio`, resized to `size` (an int for a
    square, or (height, width))."""

    size: Union[int, Sequence[int]]
    scale: Tuple[float, float] = (0.08, 1.0)
    ratio: Tuple[float, float] = (3 / 4, 4 / 3)
    interpolation: Any = "bilinear"
    antialias: Optional[bool] = True


@dataclasses.dataclass
class Resize:
    """An int: the shorter side to `size` (the longer at most `max_size`), before a CenterCrop or a
    RandomCrop; (height, width): exactly that size, alone or before either."""

    size: Union[None, int, Sequence[int]]
    interpolation: Any = "bilinear"
    max_size: Optional[int] = None
    antialias: Optional[bool] = True


@dataclasses.dataclass
class CenterCrop:
    size: Union[int, Sequence[int]]


@dataclasses.dataclass
class RandomCrop:
    """A `size` box at a random place of the image padded by `padding` (an int, (left/right,
    top/bottom) or (left, top, right, bottom)) and, with `pad_if_needed`, on both sides by what it
    still lacks of the crop; after a Resize or not. `padding_mode`: "constant" (with fill=0: conveyor
    pads with zeros), "edge", "reflect" or "symmetric"."""

    size: Union[int, Sequence[int]]
    padding: Union[None, int, Sequence[int]] = None
    pad_if_needed: bool = False
    fill: Any = 0
    padding_mode: str = "constant"


@dataclasses.dataclass
class Pad:
    """torchvision's Pad, right before a RandomCrop: the crop's padding (the same draws and pixels
    as RandomCrop(size, padding=padding, padding_mode=padding_mode)); fill=0."""

    padding: Union[int, Sequence[int]]
    fill: Any = 0
    padding_mode: str = "constant"


@dataclasses.dataclass
class FiveCrop:
    """The four corners and the centre, `size` each, of the (resized) image: five views
    (conveyor.Views), which the loop yields as five tensors, as the DataLoader collates
    torchvision's tuple; only conversions, ToDtype and Normalize may follow it."""

    size: Union[int, Sequence[int]]


@dataclasses.dataclass
class TenCrop:
    """FiveCrop of the image and of its mirror image (flipped top to bottom with `vertical_flip`):
    ten views."""

    size: Union[int, Sequence[int]]
    vertical_flip: bool = False


@dataclasses.dataclass
class ToImage:
    pass


@dataclasses.dataclass
class PILToTensor:
    pass


@dataclasses.dataclass
class ToPureTensor:
    pass


@dataclasses.dataclass
class ToTensor:
    """torchvision's deprecated ToTensor: float32 pixels divided by 255 (`to_tensor` of a PIL image;
    ToDtype(float32, scale=True) multiplies by 1/255, one bit apart for about half the values)."""


@dataclasses.dataclass
class ToDtype:
    """To `dtype` ("float32", or "uint8" for none, or torch's); `scale=True` divides by 255."""

    dtype: Any
    scale: bool = False


@dataclasses.dataclass
class Normalize:
    mean: Sequence[float]
    std: Sequence[float]
    inplace: bool = False


@dataclasses.dataclass
class Compose:
    transforms: Sequence[Any]


class DrawnCall(NamedTuple):
    """A torchvision.transforms.v2.functional call with the arguments conveyor drew for a sample:
    `getattr(F, call.function)(image, **call.kwargs)` (an erasing with random values names its
    normal values' `key` where torchvision would draw a tensor)."""

    function: str
    kwargs: Dict[str, Any]


__all__ = [
    "CenterCrop", "Compose", "CutMix", "DrawnCall", "FiveCrop", "MixUp", "Normalize", "PILToTensor", "Pad",
    "PixelTransform", "RandomCrop", "RandomResizedCrop", "Resize", "TenCrop", "ToDtype", "ToImage", "ToPureTensor",
    "ToTensor",
] + _pixel_transform_names
