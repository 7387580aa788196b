"""torchvision.transforms.v2's pixel transforms, with its names, arguments and defaults, for
`ImageAugment(transforms=[...])`: they run after the crop and flip, in the order given, each
sample drawing its own parameters with torchvision's distributions from its (seed, epoch, index)
streams. `ImageAugment.drawn_calls` lists what a sample drew as torchvision functional calls.

Grayscale keeps three channels (`num_output_channels=3`, the only count a batch of RGB images
holds). RandomErasing erases the normalised output, so it comes after every other transform.
"""
import dataclasses
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import _args
from . import _conveyor

Jitter = Union[None, float, Tuple[float, float]]


def _jitter(name: str, value: Jitter) -> Union[None, float, Tuple[float, float]]:
    if value is None or isinstance(value, (int, float)):
        return None if value is None else _args.real("ColorJitter", name, value)
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"ColorJitter: {name} must be None, a number or a (min, max) pair, got {value!r}") from None
    return _args.real("ColorJitter", name, low), _args.real("ColorJitter", name, high)


@dataclasses.dataclass
class RandomVerticalFlip:
    """Flips the image top to bottom with probability `p`."""

    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_vertical_flip(p=_args.real("RandomVerticalFlip", "p", self.p))


@dataclasses.dataclass
class ColorJitter:
    """Brightness, contrast, saturation and hue factors drawn uniformly from their ranges (a number
    v: [max(0, 1 - v), 1 + v], hue [-v, v]; or a (min, max) pair), applied in a random order."""

    brightness: Jitter = None
    contrast: Jitter = None
    saturation: Jitter = None
    hue: Jitter = None

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.color_jitter(
            brightness=_jitter("brightness", self.brightness), contrast=_jitter("contrast", self.contrast),
            saturation=_jitter("saturation", self.saturation), hue=_jitter("hue", self.hue))


@dataclasses.dataclass
class Grayscale:
    """The image's luma (torchvision's weights) in all three channels."""

    num_output_channels: int = 3

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.grayscale(
            num_output_channels=_args.integer("Grayscale", "num_output_channels", self.num_output_channels))


@dataclasses.dataclass
class RandomGrayscale:
    """Grayscale with probability `p`."""

    p: float = 0.1

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_grayscale(p=_args.real("RandomGrayscale", "p", self.p))


@dataclasses.dataclass
class RandomInvert:
    """255 - v with probability `p`."""

    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_invert(p=_args.real("RandomInvert", "p", self.p))


@dataclasses.dataclass
class RandomPosterize:
    """Keeps the `bits` high bits of every value with probability `p`."""

    bits: int
    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_posterize(bits=_args.integer("RandomPosterize", "bits", self.bits),
                                          p=_args.real("RandomPosterize", "p", self.p))


@dataclasses.dataclass
class RandomSolarize:
    """Inverts the values at or above `threshold` with probability `p`."""

    threshold: float
    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_solarize(threshold=_args.real("RandomSolarize", "threshold", self.threshold),
                                         p=_args.real("RandomSolarize", "p", self.p))


@dataclasses.dataclass
class RandomErasing:
    """With probability `p`, a rectangle of the normalised output (`scale` of its area, height to
    width in `ratio`) becomes `value`: a number, one per channel, or "random" (standard normal
    values)."""

    p: float = 0.5
    scale: Tuple[float, float] = (0.02, 0.33)
    ratio: Tuple[float, float] = (0.3, 3.3)
    value: Union[float, Sequence[float], str] = 0.0

    def _native(self) -> _conveyor.PixelTransform:
        who = "RandomErasing"
        value: Union[float, List[float], str]
        if isinstance(self.value, str):
            value = self.value
        elif isinstance(self.value, (int, float)):
            value = _args.real(who, "value", self.value)
        else:
            value = [_args.real(who, "value", v) for v in self.value]
        return _conveyor.random_erasing(p=_args.real(who, "p", self.p), scale=_pair(who, "scale", self.scale),
                                        ratio=_pair(who, "ratio", self.ratio), value=value)


@dataclasses.dataclass
class RandomApply:
    """The `transforms`, in order, with probability `p`; none of them otherwise."""

    transforms: Sequence["PixelTransform"]
    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_apply(transforms=native_list("RandomApply", self.transforms),
                                      p=_args.real("RandomApply", "p", self.p))


PixelTransform = Union[RandomVerticalFlip, ColorJitter, Grayscale, RandomGrayscale, RandomInvert, RandomPosterize,
                       RandomSolarize, RandomErasing, RandomApply]
_PIXEL_TRANSFORMS = (RandomVerticalFlip, ColorJitter, Grayscale, RandomGrayscale, RandomInvert, RandomPosterize,
                     RandomSolarize, RandomErasing, RandomApply)


class DrawnCall(NamedTuple):
    """A torchvision.transforms.v2.functional call with the arguments conveyor drew for a sample:
    `getattr(F, call.function)(image, **call.kwargs)` (an erasing with random values names its
    normal values' `key` where torchvision would draw a tensor)."""

    function: str
    kwargs: Dict[str, Any]


def _pair(who: str, name: str, value: Any) -> Tuple[float, float]:
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"{who}: {name} must be a pair of numbers, got {value!r}") from None
    return _args.real(who, name, low), _args.real(who, name, high)


def native_list(who: str, transforms: Optional[Sequence[Any]]) -> List[_conveyor.PixelTransform]:
    """`transforms` as the extension takes them; a TypeError names the first that is not one."""
    if transforms is None:
        return []
    out = []
    for k, t in enumerate(transforms):
        if not isinstance(t, _PIXEL_TRANSFORMS):
            raise TypeError(f"{who}: transforms[{k}] must be one of conveyor.transforms' classes "
                            f"({', '.join(c.__name__ for c in _PIXEL_TRANSFORMS)}), got {type(t).__name__}")
        out.append(t._native())
    return out


__all__ = ["ColorJitter", "DrawnCall", "Grayscale", "PixelTransform", "RandomApply", "RandomErasing",
           "RandomGrayscale", "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomVerticalFlip"]
