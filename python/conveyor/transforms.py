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
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import _args
from . import _conveyor

Jitter = Union[None, float, Tuple[float, float]]
Numbers = Union[float, Sequence[float]]
Fill = Union[None, float, Sequence[float]]


def _jitter(name: str, value: Jitter) -> Union[None, float, Tuple[float, float]]:
    if value is None or isinstance(value, (int, float)):
        return None if value is None else _args.real("ColorJitter", name, value)
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"ColorJitter: {name} must be None, a number or a (min, max) pair, got {value!r}") from None
    return _args.real("ColorJitter", name, low), _args.real("ColorJitter", name, high)


def _numbers(who: str, name: str, value: Any, sizes: Optional[Sequence[int]] = None) -> List[float]:
    """A number or a sequence of numbers, as a list; a sequence of one of `sizes` long, where given
    (torchvision refuses `degrees=[10]`, though it takes `degrees=10`)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    try:
        numbers = [_args.real(who, name, v) for v in value]
    except TypeError:
        raise TypeError(f"{who}: {name} must be a number or a sequence of numbers, got {value!r}") from None
    if sizes is not None and len(numbers) not in sizes:
        lengths = " or ".join(str(n) for n in sizes)
        raise _conveyor.ConfigError(f"{who}: {name} as a sequence must be of length {lengths}, got {value!r}")
    return numbers


def _fill(who: str, value: Any) -> Optional[List[float]]:
    return None if value is None else _numbers(who, "fill", value)


def _optional_pair(who: str, name: str, value: Any) -> Optional[Tuple[float, float]]:
    return None if value is None else _pair(who, name, value)


def _interpolation(who: str, value: Any) -> str:
    """"nearest" or "bilinear", from a string or torchvision's InterpolationMode (whose value is one)."""
    return _args.choice(who, "interpolation", str(getattr(value, "value", value)).lower(), ("nearest", "bilinear"))


class _Checked:
    """A pixel transform's arguments are checked as it is made, as torchvision checks its own: a
    ConfigError (or a TypeError) names the transform, the argument and the value. (RandomApply,
    RandomChoice and RandomOrder may hold a whole Compose, which a pipeline opens: they are checked
    with the pipeline.)"""

    def _native(self) -> _conveyor.PixelTransform:
        raise NotImplementedError

    def __post_init__(self) -> None:
        self._native()


@dataclasses.dataclass
class RandomHorizontalFlip(_Checked):
    """Flips the image left to right with probability `p` (right after the crop, ImageAugment's own
    `flip`; elsewhere in a pipeline, in its place)."""

    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_horizontal_flip(p=_args.real("RandomHorizontalFlip", "p", self.p))


@dataclasses.dataclass
class RandomVerticalFlip(_Checked):
    """Flips the image top to bottom with probability `p`."""

    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_vertical_flip(p=_args.real("RandomVerticalFlip", "p", self.p))


@dataclasses.dataclass
class ColorJitter(_Checked):
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
class Grayscale(_Checked):
    """The image's luma (torchvision's weights) in all three channels."""

    num_output_channels: int = 3

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.grayscale(
            num_output_channels=_args.integer("Grayscale", "num_output_channels", self.num_output_channels))


@dataclasses.dataclass
class RandomGrayscale(_Checked):
    """Grayscale with probability `p`."""

    p: float = 0.1

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_grayscale(p=_args.real("RandomGrayscale", "p", self.p))


@dataclasses.dataclass
class RandomInvert(_Checked):
    """255 - v with probability `p`."""

    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_invert(p=_args.real("RandomInvert", "p", self.p))


@dataclasses.dataclass
class RandomPosterize(_Checked):
    """Keeps the `bits` high bits of every value with probability `p`."""

    bits: int
    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_posterize(bits=_args.integer("RandomPosterize", "bits", self.bits),
                                          p=_args.real("RandomPosterize", "p", self.p))


@dataclasses.dataclass
class RandomSolarize(_Checked):
    """Inverts the values at or above `threshold` with probability `p`."""

    threshold: float
    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_solarize(threshold=_args.real("RandomSolarize", "threshold", self.threshold),
                                         p=_args.real("RandomSolarize", "p", self.p))


@dataclasses.dataclass
class RandomAdjustSharpness(_Checked):
    """adjust_sharpness(sharpness_factor) with probability `p` (0 blurs, 1 keeps, 2 sharpens)."""

    sharpness_factor: float
    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        who = "RandomAdjustSharpness"
        return _conveyor.random_adjust_sharpness(
            sharpness_factor=_args.real(who, "sharpness_factor", self.sharpness_factor), p=_args.real(who, "p", self.p))


@dataclasses.dataclass
class RandomAutocontrast(_Checked):
    """Stretches each channel to [0, 255] with probability `p`."""

    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_autocontrast(p=_args.real("RandomAutocontrast", "p", self.p))


@dataclasses.dataclass
class RandomEqualize(_Checked):
    """Equalizes each channel's histogram with probability `p`."""

    p: float = 0.5

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_equalize(p=_args.real("RandomEqualize", "p", self.p))


@dataclasses.dataclass
class GaussianBlur(_Checked):
    """A Gaussian blur of `kernel_size` (one odd size, or (width, height)), sigma drawn uniformly
    from `sigma` (a (min, max) pair, or one value) for every sample."""

    kernel_size: Union[int, Sequence[int]]
    sigma: Numbers = (0.1, 2.0)

    def _native(self) -> _conveyor.PixelTransform:
        who = "GaussianBlur"
        sizes = [self.kernel_size] if isinstance(self.kernel_size, int) else list(self.kernel_size)
        if len(sizes) not in (1, 2):
            raise _conveyor.ConfigError(f"{who}: kernel_size should be an int or a pair, got {self.kernel_size!r}")
        width = _args.integer(who, "kernel_size", sizes[0])
        return _conveyor.gaussian_blur(kernel_size=(width, _args.integer(who, "kernel_size", sizes[-1])),
                                       sigma=_numbers(who, "sigma", self.sigma, (1, 2)))


@dataclasses.dataclass
class RandomRotation(_Checked):
    """A rotation by an angle uniform in `degrees` (d: [-d, d]; counter-clockwise) about `center`
    (the image's by default); `expand=True` is refused (a batch's size is fixed)."""

    degrees: Numbers
    interpolation: Any = "nearest"
    expand: bool = False
    center: Optional[Sequence[float]] = None
    fill: Fill = 0

    def _native(self) -> _conveyor.PixelTransform:
        who = "RandomRotation"
        return _conveyor.random_rotation(
            degrees=_numbers(who, "degrees", self.degrees, (2,)), interpolation=_interpolation(who, self.interpolation),
            expand=_args.flag(who, "expand", self.expand), center=_optional_pair(who, "center", self.center),
            fill=_fill(who, self.fill))


@dataclasses.dataclass
class RandomAffine(_Checked):
    """An affine map drawn as torchvision draws it: angle in `degrees`, shifts up to `translate`
    (fractions of the width and height), a factor in `scale`, shears in `shear` (degrees)."""

    degrees: Numbers
    translate: Optional[Sequence[float]] = None
    scale: Optional[Sequence[float]] = None
    shear: Optional[Numbers] = None
    interpolation: Any = "nearest"
    fill: Fill = 0
    center: Optional[Sequence[float]] = None

    def _native(self) -> _conveyor.PixelTransform:
        who = "RandomAffine"
        return _conveyor.random_affine(
            degrees=_numbers(who, "degrees", self.degrees, (2,)),
            translate=_optional_pair(who, "translate", self.translate),
            scale=_optional_pair(who, "scale", self.scale),
            shear=None if self.shear is None else _numbers(who, "shear", self.shear, (2, 4)),
            interpolation=_interpolation(who, self.interpolation), fill=_fill(who, self.fill),
            center=_optional_pair(who, "center", self.center))


@dataclasses.dataclass
class TrivialAugmentWide(_Checked):
    """One op of TrivialAugment's wide space, at a random magnitude bin, for every sample."""

    num_magnitude_bins: int = 31
    interpolation: Any = "nearest"
    fill: Fill = None

    def _native(self) -> _conveyor.PixelTransform:
        who = "TrivialAugmentWide"
        return _conveyor.trivial_augment_wide(
            num_magnitude_bins=_args.integer(who, "num_magnitude_bins", self.num_magnitude_bins),
            interpolation=_interpolation(who, self.interpolation), fill=_fill(who, self.fill))


@dataclasses.dataclass
class RandAugment(_Checked):
    """`num_ops` ops of RandAugment's space, each at bin `magnitude` of `num_magnitude_bins`."""

    num_ops: int = 2
    magnitude: int = 9
    num_magnitude_bins: int = 31
    interpolation: Any = "nearest"
    fill: Fill = None

    def _native(self) -> _conveyor.PixelTransform:
        who = "RandAugment"
        return _conveyor.rand_augment(
            num_ops=_args.integer(who, "num_ops", self.num_ops), magnitude=_args.integer(who, "magnitude", self.magnitude),
            num_magnitude_bins=_args.integer(who, "num_magnitude_bins", self.num_magnitude_bins),
            interpolation=_interpolation(who, self.interpolation), fill=_fill(who, self.fill))


@dataclasses.dataclass
class AutoAugment(_Checked):
    """One of the learned `policy`'s sub-policies ("imagenet", "cifar10", "svhn", or torchvision's
    AutoAugmentPolicy) for every sample."""

    policy: Any = "imagenet"
    interpolation: Any = "nearest"
    fill: Fill = None

    def _native(self) -> _conveyor.PixelTransform:
        who = "AutoAugment"
        return _conveyor.auto_augment(
            policy=_args.choice(who, "policy", str(getattr(self.policy, "value", self.policy)).lower(),
                                ("imagenet", "cifar10", "svhn")),
            interpolation=_interpolation(who, self.interpolation), fill=_fill(who, self.fill))


@dataclasses.dataclass
class RandomErasing(_Checked):
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


@dataclasses.dataclass
class RandomChoice:
    """One of the `transforms`, picked with probability `p[k] / sum(p)`; every one equally likely
    when `p` is None. Their transforms all erase (nothing but RandomErasing), or none does."""

    transforms: Sequence["PixelTransform"]
    p: Optional[Sequence[float]] = None

    def _native(self) -> _conveyor.PixelTransform:
        p = None if self.p is None else [_args.real("RandomChoice", "p", w) for w in self.p]
        return _conveyor.random_choice(transforms=native_list("RandomChoice", self.transforms), p=p)


@dataclasses.dataclass
class RandomOrder:
    """All the `transforms`, in a uniformly random order; none of them may erase (RandomErasing
    comes after every other transform)."""

    transforms: Sequence["PixelTransform"]

    def _native(self) -> _conveyor.PixelTransform:
        return _conveyor.random_order(transforms=native_list("RandomOrder", self.transforms))


PixelTransform = Union[RandomHorizontalFlip, RandomVerticalFlip, ColorJitter, Grayscale, RandomGrayscale, RandomInvert,
                       RandomPosterize, RandomSolarize, RandomAdjustSharpness, RandomAutocontrast, RandomEqualize,
                       GaussianBlur, RandomRotation, RandomAffine, TrivialAugmentWide, RandAugment, AutoAugment,
                       RandomErasing, RandomApply, RandomChoice, RandomOrder]
_PIXEL_TRANSFORMS = (RandomHorizontalFlip, RandomVerticalFlip, ColorJitter, Grayscale, RandomGrayscale, RandomInvert,
                     RandomPosterize, RandomSolarize, RandomAdjustSharpness, RandomAutocontrast, RandomEqualize,
                     GaussianBlur, RandomRotation, RandomAffine, TrivialAugmentWide, RandAugment, AutoAugment,
                     RandomErasing, RandomApply, RandomChoice, RandomOrder)



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
    """A random box of `scale` of the area, aspect in `ratio`, resized to size x size."""

    size: Union[int, Sequence[int]]
    scale: Tuple[float, float] = (0.08, 1.0)
    ratio: Tuple[float, float] = (3 / 4, 4 / 3)
    interpolation: Any = "bilinear"
    antialias: Optional[bool] = True


@dataclasses.dataclass
class Resize:
    """The shorter side to `size`, before a CenterCrop."""

    size: Union[int, Sequence[int]]
    interpolation: Any = "bilinear"
    max_size: Optional[int] = None
    antialias: Optional[bool] = True


@dataclasses.dataclass
class CenterCrop:
    size: Union[int, Sequence[int]]


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


__all__ = [
    "AutoAugment", "CenterCrop", "ColorJitter", "Compose", "CutMix", "DrawnCall", "GaussianBlur", "Grayscale", "MixUp",
    "Normalize", "PILToTensor", "PixelTransform", "RandAugment", "RandomAdjustSharpness", "RandomAffine",
    "RandomApply", "RandomAutocontrast", "RandomChoice", "RandomEqualize", "RandomErasing", "RandomGrayscale",
    "RandomHorizontalFlip", "RandomInvert", "RandomOrder", "RandomPosterize", "RandomResizedCrop", "RandomRotation",
    "RandomSolarize", "RandomVerticalFlip", "Resize", "ToDtype", "ToImage", "ToPureTensor", "TrivialAugmentWide",
]
