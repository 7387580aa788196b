"""The transforms, as Python dataclasses with the C++ ImageAugment's and RawTensor's fields."""
import dataclasses
from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _args
from . import _conveyor
from .transforms import DrawnCall, PixelTransform, native_list

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


_NORMALIZE = "normalize must be 'imagenet', None or (mean, std) with 3 values each"


def _normalization(normalize: Any) -> Optional[Tuple[List[float], List[float]]]:
    """(mean, std) as lists of 3 floats, or None."""
    if normalize is None:
        return None
    if isinstance(normalize, str):
        if normalize != "imagenet":
            raise _conveyor.ConfigError(f"ImageAugment: {_NORMALIZE}, got {normalize!r}")
        return list(IMAGENET_MEAN), list(IMAGENET_STD)
    try:
        mean, std = normalize
        pair = [float(v) for v in mean], [float(v) for v in std]
    except (TypeError, ValueError):
        raise _conveyor.ConfigError(f"ImageAugment: {_NORMALIZE}, got {normalize!r}") from None
    if len(pair[0]) != 3 or len(pair[1]) != 3:
        raise _conveyor.ConfigError(f"ImageAugment: {_NORMALIZE}, got {normalize!r}")
    return pair


def _pair(name: str, value: Any) -> Tuple[float, float]:
    try:
        low, high = value
        return _args.real("ImageAugment", name, low), _args.real("ImageAugment", name, high)
    except (TypeError, ValueError):
        raise TypeError(f"ImageAugment: {name} must be a pair of numbers, got {value!r}") from None


def _size(name: str, value: Any) -> List[int]:
    """torchvision's size: an int, or (height, width) (a sequence of one int is that int)."""
    values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        sizes = [_args.integer("ImageAugment", name, v, 1) for v in values]
    except TypeError:
        raise TypeError(f"ImageAugment: {name} must be an int or (height, width), got {value!r}") from None
    if len(sizes) not in (1, 2):
        raise _conveyor.ConfigError(f"ImageAugment: {name} must be an int or (height, width), got {value!r}")
    return sizes


def _padding(value: Any) -> List[int]:
    """torchvision's padding (an int, (left/right, top/bottom) or (left, top, right, bottom)) as
    [left, top, right, bottom]."""
    values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        pads = [_args.integer("ImageAugment", "padding", v, 0) for v in values]
    except TypeError:
        raise TypeError(f"ImageAugment: padding must be an int or a sequence of 1, 2 or 4 ints, got {value!r}") from None
    if len(pads) not in (1, 2, 4):
        raise _conveyor.ConfigError(f"ImageAugment: padding must be an int or a sequence of 1, 2 or 4 ints, got "
                                    f"{value!r}")
    return pads * 4 if len(pads) == 1 else pads * 2 if len(pads) == 2 else pads


# The options that take one of named choices, as C++ declares them (enum_names), in their order.
_CHOICES = _conveyor.option_choices()["ImageAugment"]
# FiveCrop's crops in torchvision's order, as ImageAugment's crop names them (those from top_left
# on, C++'s FiveCrop::Part), and what they are of (FiveCrop::Of).
_FIVE_CROP_PARTS = _CHOICES["crop"][_CHOICES["crop"].index("top_left"):_CHOICES["crop"].index("five_center") + 1]
_FIVE_CROP_OF = _CHOICES["five_crop_of"]

# ImageAugment's fields that C++ declares as other options (_conveyor.option_schema()): normalize is
# its mean and std.
_SPELLED_OTHERWISE = {"normalize": ("mean", "std")}


@dataclasses.dataclass
class ImageAugment:
    """Decode, crop, resize, flip, normalise and convert each image, with torchvision's semantics.

    The presets: `ImageAugment.train(size)` is RandomResizedCrop(size) + a horizontal flip with
    p=0.5 + ImageNet normalisation; `ImageAugment.eval(resize, crop)` is Resize(resize) +
    CenterCrop(crop) + ImageNet normalisation, deterministic (a Loader's and a Preprocessor's
    default). Both normalise whatever the dtype, as C++'s presets do: u8 output cannot be
    normalised, so with dtype="u8" pass normalize=None (pixels as decoded).

    The fields, whose defaults are those of a bare `ImageAugment()` (a random-resized crop to 224,
    no flip, no normalisation, f32):
    crop: "random_resized" (RandomResizedCrop(size, scale, ratio)), "center" (CenterCrop(size)) or
    "random" (RandomCrop(size, padding, pad_if_needed, padding_mode=padding_mode): padding an int,
    (left/right, top/bottom) or (left, top, right, bottom); padding_mode "constant" (zeros), "edge",
    "reflect" or "symmetric", whose mirror image torchvision makes once), or one of FiveCrop's
    "center_truncated" (CenterCrop with Hugging Face's truncated offset, where torchvision rounds), or
    "top_left", "top_right", "bottom_left", "bottom_right", "five_center" (of the image, or with
    five_crop_of "horizontal_flip" or "vertical_flip" of its mirror image: TenCrop's), the last four after
    Resize(resize, max_size) when resize is set (v2's Resize(None, max_size) when only max_size
    is); sizes as torchvision takes them, an int (a
    square; for resize the shorter side) or (height, width). flip: the horizontal flip's probability. normalize:
    (mean, std) on pixels / 255, "imagenet", or None (floats are pixels / 255). dtype: "u8",
    "f32", "f16", "bf16" or a torch dtype. layout: "nchw" or "nhwc". exif_orientation: apply the
    Exif orientation (torchvision's ImageFolder ignores it). roi: decode only the crop's rows and
    columns. decode_scaling: None decodes at a DCT scale for random crops and at full size for
    center crops (exact torchvision evaluation); True or False forces it. lenient: accept what
    libjpeg only warns about. max_image_pixels: a larger image is refused before decoding.
    sixteen_bit: "refuse" a 16-bit PNG (torchvision.io.decode_image gives uint16, which 8-bit
    samples cannot keep), or "high_byte" (Pillow's convert("RGB"): torchvision's ImageFolder).
    transforms: pixel transforms (conveyor.transforms, torchvision v2's names and arguments) run
    after the crop and flip in order, each sample drawing its own; `drawn_calls` says what one drew.
    pil_transforms: how many of them, from the first, see a PIL image (torchvision v1's, or v2's
    before ToImage): they run as torchvision's PIL functionals do, with Pillow's arithmetic
    (ImageEnhance, ImageOps, convert); a transform conveyor does not run on PIL images is refused.

    torchvision_rounding: normalise as torchvision v2's ToDtype(float32, scale=True) and Normalize
    round (a multiply, a subtract and a divide), bit for bit theirs; by default one fused
    multiply-add an element, within a few ulps of that and cheaper on the CPU. divide_by_255: with
    it, scale as ToTensor does a PIL image (x / 255) rather than as ToDtype (x * (1/255)). rescale:
    with torchvision_rounding, the factor before the subtraction: ToDtype's 1/255, or 1 where mean and
    std are on the 0-255 scale (Hugging Face's image processors fold their rescale into them).

    resampling: the resize's filter and arithmetic: torchvision's on uint8 tensors, "bilinear" or
    "bicubic" (antialiased), "nearest", "nearest_exact" or "bilinear_no_antialias" (antialias=False),
    or Pillow's "pil_nearest", "pil_box", "pil_bilinear", "pil_hamming",
    "pil_bicubic", "pil_lanczos" (torchvision v1, and v2 on PIL images). random_resampling: a second
    filter, each sample resizing with one of the two at even odds (timm's interpolation="random"). On a GPU the kernel resizes
    with each of them but "pil_hamming" and "pil_lanczos" (whose weights take sin and cos), whose
    samples the workers resize; the same bits either way.

    `ImageAugment.from_transforms(pipeline)` compiles a whole torchvision v2 Compose (or
    conveyor.transforms') into one; a Loader or a Preprocessor does that with a Compose given as
    its transform.
    """

    crop: str = "random_resized"
    size: Union[int, Tuple[int, int]] = 224
    scale: Tuple[float, float] = (0.08, 1.0)
    ratio: Tuple[float, float] = (3 / 4, 4 / 3)
    resize: Union[None, int, Tuple[int, int]] = None
    flip: float = 0.0
    normalize: Union[None, str, Tuple[Sequence[float], Sequence[float]]] = None
    dtype: Any = "f32"
    layout: str = "nchw"
    exif_orientation: bool = False
    roi: bool = True
    decode_scaling: Optional[bool] = None
    lenient: bool = False
    max_image_pixels: int = 1 << 27
    sixteen_bit: str = "refuse"
    transforms: Sequence[PixelTransform] = ()
    torchvision_rounding: bool = False
    max_size: Optional[int] = None
    resampling: str = "bilinear"
    divide_by_255: bool = False
    rescale: float = 0.003921568859368563  # 1/255 in float32, as C++ holds it
    padding: Union[int, Sequence[int]] = 0
    pad_if_needed: bool = False
    padding_mode: str = "constant"
    five_crop_of: str = "image"
    pil_transforms: int = 0
    random_resampling: Optional[str] = None

    @classmethod
    def train(cls, size: int = 224, **fields: Any) -> "ImageAugment":
        """RandomResizedCrop(size) + flip(0.5) + ImageNet normalisation; `fields` override."""
        fields.setdefault("normalize", "imagenet")
        fields.setdefault("flip", 0.5)
        return cls(crop="random_resized", size=size, **fields)

    @classmethod
    def eval(cls, resize: int = 256, crop: int = 224, **fields: Any) -> "ImageAugment":
        """Resize(resize) + CenterCrop(crop) + ImageNet normalisation; `fields` override."""
        fields.setdefault("normalize", "imagenet")
        return cls(crop="center", size=crop, resize=resize, **fields)

    @classmethod
    def from_transforms(cls, pipeline: Any, image_backend: Optional[_args.ImageBackend] = None) -> "ImageAugment":
        """The ImageAugment that runs `pipeline`, a torchvision Compose (or one transform) or
        conveyor.transforms' equivalent, equal to torchvision bit for bit on the images its dataset
        would give it: `torchvision.io.decode_image(path, mode=ImageReadMode.RGB)` with
        image_backend="tensor", `Image.open(path).convert("RGB")` (torchvision's ImageFolder) with
        "pil", whose resizes are Pillow's; by default "pil" for a torchvision v1 (torchvision.transforms)
        pipeline, else "tensor". The crop first (RandomResizedCrop, CenterCrop, or Resize and
        CenterCrop), then flips and pixel transforms on uint8, then ToTensor or ToDtype(float32,
        scale=True), Normalize and RandomErasing. It decodes at full size (decode_scaling=False), as
        torchvision does. A ConfigError names the first transform it cannot run, where it is and why."""
        from . import _compose  # which builds ImageAugments
        return _compose.image_augment(pipeline, image_backend)

    def _native(self) -> _conveyor.Transform:
        who = "ImageAugment"
        normalize = _normalization(self.normalize)
        dtype = dtype_name(self.dtype)
        if dtype == "u8" and normalize is not None:
            raise _conveyor.ConfigError(
                "ImageAugment: u8 output cannot be normalized: pass normalize=None with dtype='u8' "
                "(train() and eval() normalise with ImageNet's mean and std unless told otherwise)")
        # every field by its name, as C++ declares the options (ImageAugmentOptions), which checks
        # the rest: those written torchvision's way here in the form C++ reads
        options = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _SPELLED_OTHERWISE}
        options.update(
            crop=_args.choice(who, "crop", self.crop, _CHOICES["crop"]),
            five_crop_of=_args.choice(who, "five_crop_of", self.five_crop_of, _FIVE_CROP_OF),
            padding=_padding(self.padding),
            padding_mode=_args.choice(who, "padding_mode", self.padding_mode, _CHOICES["padding_mode"]),
            size=_size("size", self.size), scale=_pair("scale", self.scale), ratio=_pair("ratio", self.ratio),
            resize=None if self.resize is None else _size("resize", self.resize),
            max_size=_args.optional_integer(who, "max_size", self.max_size, 1),
            mean=None if normalize is None else normalize[0], std=None if normalize is None else normalize[1],
            dtype=dtype, layout=_args.choice(who, "layout", str(self.layout).lower(), _CHOICES["layout"]),
            max_image_pixels=_args.integer(who, "max_image_pixels", self.max_image_pixels, 1, _args.UINT64_MAX),
            sixteen_bit=_args.choice(who, "sixteen_bit", self.sixteen_bit, _CHOICES["sixteen_bit"]),
            resampling=_args.choice(who, "resampling", str(self.resampling), _CHOICES["resampling"]),
            transforms=native_list(who, self.transforms),
            pil_transforms=_args.integer(who, "pil_transforms", self.pil_transforms, 0, len(self.transforms)),
            random_resampling=None if self.random_resampling is None else _args.choice(
                who, "random_resampling", str(self.random_resampling), _CHOICES["resampling"]))
        return _conveyor.image_augment(**options)

    def drawn_calls(self, seed: int, epoch: int, index: int, width: int, height: int) -> List[DrawnCall]:
        """What sample `index` of `epoch` draws under a loader's `seed` from an image of `width` x
        `height` (after Exif orientation): the torchvision.transforms.v2.functional calls that
        reproduce its output, in order (the crop and resize, the flip, then the pixel transforms',
        erasing last on the normalised image)."""
        who = "ImageAugment.drawn_calls"
        calls = _conveyor.drawn_calls(self._native(), seed=_args.integer(who, "seed", seed, 0, _args.UINT64_MAX),
                                      epoch=_args.integer(who, "epoch", epoch, 0, _args.UINT64_MAX),
                                      index=_args.integer(who, "index", index, 0, _args.UINT64_MAX),
                                      width=_args.integer(who, "width", width, 1),
                                      height=_args.integer(who, "height", height, 1))
        return [DrawnCall(function, kwargs) for function, kwargs in calls]


def compiled_transform(who: str, transform: Any, image_backend: Optional[str]) -> Any:
    """A Loader's or Preprocessor's `transform` as it runs: ImageAugment.eval() for None, Views
    for a list, a Compose compiled with `image_backend` (Views of its crops with a FiveCrop or a
    TenCrop), the others as they are."""
    if transform is None:
        transform = ImageAugment.eval()
    if isinstance(transform, (ImageAugment, RawTensor, Views)):
        if image_backend is not None:
            raise _conveyor.ConfigError(f"{who}: image_backend applies to a torchvision Compose, not to "
                                        f"{type(transform).__name__}, which is conveyor's already (ImageAugment's "
                                        "resampling and pil_transforms say what a Compose's image_backend would)")
        return transform
    if isinstance(transform, list):
        views = Views(transform, image_backend=image_backend)
        try:
            views.parts()
        except _conveyor.ConfigError as e:
            single = next((v for v in transform if _one_transform(v)), None)
            if single is None:
                raise
            raise _conveyor.ConfigError(
                f"{who}: transform is a list, which conveyor reads as views (one pipeline each, as DINO's crops), "
                f"and one of them fails, but it holds single transforms ({type(single).__name__}): for one "
                f"pipeline, wrap the list in transforms.Compose([...]). The view's error: {e}") from None
        return views
    from . import _compose  # which builds ImageAugments
    a = _compose.image_augment(transform, image_backend, five_crop=True)
    if a.crop not in _FIVE_CROP_PARTS:
        return a
    # FiveCrop (TenCrop): a view per crop, in torchvision's order, as the DataLoader collates its tuple
    flips = ("image",) if a.five_crop_of == "image" else ("image", a.five_crop_of)
    return Views([dataclasses.replace(a, crop=part, five_crop_of=of) for of in flips for part in _FIVE_CROP_PARTS])


def _one_transform(v: Any) -> bool:
    """Whether `v` is one of torchvision's or timm's transforms, not a pipeline of them."""
    module = type(v).__module__
    return type(v).__name__ != "Compose" and (module.startswith("torchvision.transforms") or module.startswith("timm."))


@dataclasses.dataclass
class RawTensor:
    """Samples that are already fixed-shape arrays: each sample's bytes become one tensor of
    `shape` and `dtype` as they are."""

    shape: Sequence[int]
    dtype: Any = "f32"

    def _native(self) -> _conveyor.Transform:
        try:
            shape = [_args.integer("RawTensor", "shape", v, 1) for v in self.shape]
        except TypeError:
            raise TypeError(f"RawTensor: shape must be a sequence of ints, got {self.shape!r}") from None
        return _conveyor.raw_tensor(shape=shape, dtype=dtype_name(self.dtype))


@dataclasses.dataclass
class Views:
    """Several augmented views of each image, decoded once (self-supervised multi-crop: DINO's
    global and local crops, SimCLR's pair). `views` lists each view as an image transform (an
    ImageAugment, or a torchvision v2 Compose as `transform=` takes it) or a (transform, count)
    pair; every view shares one output dtype and layout. The loop yields `(views, labels)`: one
    tensor per view copy ([N, C, H, W]), or with `grouped` one per view ([N, count, C, H, W]).

    Copy 0 draws as its transform alone would (the same batches as a Loader with that transform);
    copy k > 0 from a stream of its own, so appending views changes no earlier copy. Each image is
    decoded once, the union of its copies' windows; without DCT scaling (a Compose's) every copy
    is, bit for bit, its transform run alone on its stream. image_backend: how a Compose among
    them is compiled (`ImageAugment.from_transforms`)."""

    views: Sequence[Any]
    grouped: bool = False
    image_backend: Optional[_args.ImageBackend] = None

    def parts(self) -> List[Tuple[Any, int]]:
        """(ImageAugment, count) for each view."""
        if isinstance(self.views, (str, bytes)) or not isinstance(self.views, Sequence) or not self.views:
            raise _conveyor.ConfigError(f"Views: views must be a non-empty list of transforms, got {self.views!r}")
        out = []
        for k, v in enumerate(self.views):
            transform, count = v if isinstance(v, tuple) else (v, 1)
            if isinstance(transform, (RawTensor, Views)):
                raise _conveyor.ConfigError(f"Views: view {k} is not an image transform (an ImageAugment or a "
                                            f"torchvision v2 Compose), got {type(transform).__name__}")
            if not isinstance(transform, ImageAugment):
                transform = ImageAugment.from_transforms(transform, self.image_backend)
            out.append((transform, _args.integer(f"Views: view {k}", "count", count, 1)))
        return out

    def _native(self) -> _conveyor.Transform:
        return _conveyor.views([(t._native(), n) for t, n in self.parts()])

    def split(self, images: Any) -> List[Any]:
        """A batch's images, [N, elements] as the loader makes them, as one tensor (or array) per
        view copy, or per view when `grouped`; views of the batch's memory, no copy."""
        if not hasattr(self, "_shapes"):  # each view's sample shape and count, made once
            self._shapes = [(list(t._native().sample_shape), n) for t, n in self.parts()]
        out, at, n = [], 0, images.shape[0]
        for shape, count in self._shapes:
            size = 1
            for d in shape:
                size *= d
            if self.grouped:
                out.append(images[:, at:at + count * size].reshape(n, count, *shape))
            else:
                out.extend(images[:, at + k * size:at + (k + 1) * size].reshape(n, *shape) for k in range(count))
            at += count * size
        return out
