"""A Compose of torchvision transforms (v2, v1, or conveyor.transforms' with v2's names) compiled into
one ImageAugment: the crop (RandomResizedCrop, CenterCrop, or Resize then CenterCrop) and the flip
after it become its geometry, the pixel transforms its program, ToTensor, ToDtype and Normalize its
output (a last ToDtype to a 16-bit float its stored dtype); anything else is refused by name and
position, with the reason.

On PIL images (v1 always; v2 with image_backend="pil"), each transform before the conversion to a
tensor (ToTensor, PILToTensor, ToImage) runs as torchvision's PIL functional does: resizes with
Pillow's filters and arithmetic, flips and crops as Pillow makes them."""
import dataclasses
import math
from typing import Any, List, Optional, Tuple

from . import _conveyor, _hf
from . import transforms as T
from ._transforms import ImageAugment, _padding, dtype_name

# What conveyor's decode already gives: torchvision.io.decode_image's uint8 CHW tensor.
_AS_DECODED = (T.ToImage, T.PILToTensor, T.ToPureTensor)
# What may follow a Resize (the crops that give every sample one size, and a RandomCrop's Pad).
_AFTER_RESIZE = (T.CenterCrop, T.RandomCrop, T.Pad, T.FiveCrop, T.TenCrop)


def _inside(where: str, k: int) -> str:
    """Where the k-th transform inside the one at `where` is."""
    return f"transform {k}" if where == "the pipeline" else f"{where}, transform {k}"


# torchvision v1's transforms conveyor runs: the geometry, flips, the conversions and the erasing
# (which v1 and v2 define alike), the pixel transforms it runs on PIL images (Pillow's ImageEnhance,
# ImageOps, convert and transform, as v1's functionals call them on PIL images), and AugMix, which
# turns a PIL image into a tensor and runs v1's tensor functionals on it, as on a tensor (the other
# pixel transforms' v1 tensor functionals conveyor refuses). Where v1's numbers differ from v2's
# (RandomAffine's matrix, the policies' Solarize magnitudes and signs, v1's tensor blends and greys),
# the transform's `v1` field draws and runs v1's. v1's GaussianBlur takes its kernel's exponentials
# from torch.exp, which MKL's vector library computes on x86 CPUs (v2's softmax takes Sleef's, which
# conveyor's kernel makes bit for bit): it is v2's only.
_V1 = {"Compose", "Resize", "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip",
       "RandomVerticalFlip", "ToTensor", "PILToTensor", "ConvertImageDtype", "Normalize", "RandomErasing", "AugMix"}
_V1_ONLY_V2 = {"GaussianBlur": "its kernel's exponentials are MKL's"}
_V1_ON_PIL = {c.__name__ for c in T._PIXEL_TRANSFORMS if c._on_pil} - _V1 - set(_V1_ONLY_V2)


def _is_v1(t: Any) -> bool:
    module = type(t).__module__
    return module.startswith("torchvision.transforms") and not module.startswith("torchvision.transforms.v2")


# timm's conversions (timm.data.transforms), which its evaluation transforms end with: on a PIL
# image, torchvision's to_tensor and pil_to_tensor.
_TIMM = {"MaybeToTensor": T.ToTensor, "MaybePILToTensor": T.PILToTensor}


def _ours(t: Any, where: str) -> Any:
    """`t` as one of conveyor.transforms' dataclasses: itself, or a torchvision transform's
    arguments read from the attributes it keeps them in (the same names in v1 and v2)."""
    if dataclasses.is_dataclass(t) and type(t).__module__ == T.__name__:
        return t
    module, name = type(t).__module__, type(t).__name__
    if _is_v1(t) and name not in _V1 | _V1_ON_PIL:
        why = f" ({_V1_ONLY_V2[name]})" if name in _V1_ONLY_V2 else ""
        raise _conveyor.ConfigError(
            f"{where} ({name}) is torchvision v1's (torchvision.transforms), whose {name} conveyor does not run "
            f"yet{why}: use torchvision.transforms.v2.{name} after ToImage(), on uint8 tensors (docs/transforms.md "
            "lists what runs where)")
    if module.startswith("timm."):
        if name in _TIMM:
            return _TIMM[name]()
        if name == "RandomErasing":  # timm's own (random_erasing.py), after Normalize as timm places it
            low, high = (math.exp(v) for v in t.log_aspect_ratio)
            return T.TimmRandomErasing(probability=t.probability, min_area=t.min_area, max_area=t.max_area,
                                       min_aspect=low, max_aspect=high, mode=t.mode or "const",
                                       min_count=t.min_count, max_count=t.max_count, num_splits=t.num_splits)
        if name == "RandomResizedCropAndInterpolation":
            # torchvision v1's RandomResizedCrop on a PIL image, but for its draws: timm's get_params
            # draws in double (Python's random), torchvision's and conveyor's in float32
            modes = list(t.interpolation) if isinstance(t.interpolation, (tuple, list)) else [t.interpolation]
            if len(modes) > 2:
                raise _conveyor.ConfigError(
                    f"{where} ({name}): conveyor draws a filter per image from two, got "
                    f"{[getattr(m, 'value', m) for m in modes]}")
            made = T.RandomResizedCrop(size=tuple(t.size), scale=tuple(t.scale), ratio=tuple(t.ratio),
                                       interpolation=modes[0])
            if len(modes) == 2:  # interpolation="random": random.choice of the two, per image
                made._random_interpolation = modes[1]
            return made
        if name == "RandAugment":
            return _timm_rand_augment(t, where)
        if name == "AutoAugment":
            return _timm_auto_augment(t, where)
        if name == "AugMixAugment":
            return _timm_aug_mix(t, where)
        raise _conveyor.ConfigError(
            f"{where} ({name}) is timm's ({module}), which conveyor does not run yet: timm's evaluation "
            "transforms run, and its training transforms with auto_augment \"rand-...\", \"augmix-...\", "
            "\"original\", \"originalr\", \"v0\", \"v0r\" or none (its RandomResizedCropAndInterpolation, "
            "torchvision v1's flip and ColorJitter, RandAugment, AugMixAugment, AutoAugment, MaybeToTensor, "
            "Normalize, its RandomErasing)")
    ours = getattr(T, name, None) if module.startswith("torchvision.transforms") else None
    if name == "ConvertImageDtype" and _is_v1(t):
        # v1's convert_image_dtype divides uint8 by 255 (v2's multiplies by 1/255): ToTensor's float32
        if dtype_name(t.dtype) != "f32":
            raise _conveyor.ConfigError(f"{where} (ConvertImageDtype): conveyor converts v1's uint8 images to "
                                        f"float32 only, got {t.dtype}")
        return T.ToTensor()
    if name == "ConvertImageDtype" and ours is None and module.startswith("torchvision.transforms"):
        return T.ToDtype(dtype=t.dtype, scale=True)
    if not (isinstance(ours, type) and dataclasses.is_dataclass(ours)):
        if module.startswith("transformers."):
            reason = ("it is a Hugging Face image processor (transformers): give it alone as the transform, "
                      "not inside a Compose")
        elif name == "Lambda" or module == "builtins":
            reason = "conveyor's workers run C++ without Python, so a Python function cannot run in them"
        elif not module.startswith("torchvision.transforms"):
            reason = f"it is from {module}, not torchvision, and conveyor runs torchvision's transforms"
        else:
            public = "torchvision.transforms" + (".v2" if module.startswith("torchvision.transforms.v2") else "")
            reason = (f"it is {public}.{name}, which conveyor does not run yet (torchvision can apply it to "
                      "a delivered batch on the GPU, drawing once for the whole batch rather than per image)")
        raise _conveyor.ConfigError(f"{where} ({name}) cannot run in conveyor: {reason} "
                                    f"(docs/transforms.md and the README's 'Your own torchvision pipeline' "
                                    f"list what it runs)")
    # `v1` is conveyor's: which of torchvision's classes it is
    # `image` is conveyor's: the dtype GaussianNoise meets, set from its place (`_compile`)
    args = {f.name: _is_v1(t) if f.name == "v1" else f.default if (name, f.name) == ("GaussianNoise", "image")
            else getattr(t, f.name) for f in dataclasses.fields(ours)}
    if name == "RandomCrop" and not _is_v1(t) and args["padding"] is not None:
        left, right, top, bottom = args["padding"]  # how v2 keeps it; F.pad's order is (l, t, r, b)
        args["padding"] = [left, top, right, bottom]
    if name == "RandomErasing" and args["value"] is None:
        args["value"] = "random"  # how v2 keeps it
    if "transforms" in args:
        args["transforms"] = [_ours(inner, _inside(where, k)) for k, inner in enumerate(args["transforms"])]
    try:
        made = ours(**args)
    except (_conveyor.ConfigError, TypeError) as e:
        raise type(e)(f"{where} ({name}): {_without_name(str(e), name)}") from None
    if _is_v1(t) and name in _V1_ON_PIL | {"RandomCrop"}:
        made._v1 = True  # to be refused on a tensor; v1's RandomCrop pads twice
    return made


def _timm_shared(ops: List[Any], refuse: Any) -> dict:
    """The arguments every AugmentOp of a timm policy shares (its hparams and kwargs), as
    TimmRandAugment's and TimmAutoAugment's fields."""
    def shared(op: Any) -> Tuple[Any, ...]:
        return (op.magnitude_std, op.magnitude_max, op.kwargs.get("fillcolor"), op.kwargs.get("resample"),
                op.hparams.get("translate_pct", 0.45))
    if any(shared(op) != shared(ops[0]) for op in ops):
        refuse("its ops differ in their hparams: timm's config strings give them one")
    first = ops[0]
    resample = first.kwargs["resample"]
    if isinstance(resample, (tuple, list)):
        if sorted(int(r) for r in resample) != [2, 3]:  # Image.Resampling.BILINEAR, BICUBIC
            refuse(f"it draws its resampling from {list(resample)}: conveyor draws from (BILINEAR, BICUBIC)")
        interpolation = None
    else:
        interpolation = {0: "nearest", 2: "bilinear", 3: "bicubic"}.get(int(resample))
        if interpolation is None:
            refuse(f"its resampling is {resample}: Image.transform takes NEAREST, BILINEAR or BICUBIC")
    return dict(magnitude_std=float(first.magnitude_std), magnitude_max=first.magnitude_max,
                img_mean=tuple(first.kwargs["fillcolor"]), interpolation=interpolation,
                translate_pct=float(first.hparams.get("translate_pct", 0.45)))


def _timm_refusal(where: str, name: str, made_by: str) -> Any:
    def refuse(why: str) -> None:
        raise _conveyor.ConfigError(f"{where} ({name}) is timm's, which conveyor runs as {made_by} makes it, "
                                    f"but {why}")
    return refuse


def _timm_rand_augment(t: Any, where: str) -> Any:
    """timm's RandAugment (rand_augment_transform's) as TimmRandAugment: its ops one of timm's two
    lists, or its weighted one ("tweights") by its weights, sharing one AugmentOp configuration (as
    rand_augment_transform makes them)."""
    from timm.data import auto_augment as aa
    refuse = _timm_refusal(where, "RandAugment", "rand_augment_transform")
    names = [op.name for op in t.ops]
    weighted = t.choice_weights is not None
    if weighted:
        ops, weights = aa._get_weighted_transforms(aa._RAND_WEIGHTED_0)
        if names != list(ops) or list(t.choice_weights) != list(weights):
            refuse(f"it chooses its ops {names} by weights {list(t.choice_weights)}: conveyor runs timm's weighted "
                   "_RAND_WEIGHTED_0 (the config's \"tweights\"), not \"t3aw\" (Pillow's GaussianBlur, Desaturate)")
    elif names not in (list(aa._RAND_TRANSFORMS), list(aa._RAND_INCREASING_TRANSFORMS)):
        refuse(f"its ops are {names}: conveyor runs timm's _RAND_TRANSFORMS, _RAND_INCREASING_TRANSFORMS "
               "(the config's \"inc\") and _RAND_WEIGHTED_0 (\"tweights\"), not \"t3a\" (Pillow's GaussianBlur, "
               "Desaturate)")
    first = t.ops[0]
    if any((op.prob, op.magnitude) != (first.prob, first.magnitude) for op in t.ops):
        refuse("its ops differ in probability or magnitude: rand_augment_transform gives them one")
    return T.TimmRandAugment(num_layers=t.num_layers, magnitude=float(first.magnitude), prob=float(first.prob),
                             increasing=names == list(aa._RAND_INCREASING_TRANSFORMS), weighted=weighted,
                             **_timm_shared(t.ops, refuse))


def _timm_auto_augment(t: Any, where: str) -> Any:
    """timm's AutoAugment (auto_augment_transform's) as TimmAutoAugment: its sub-policies one of
    timm's tables, op for op."""
    from timm.data import auto_augment as aa
    refuse = _timm_refusal(where, "AutoAugment", "auto_augment_transform")
    table = [[(op.name, op.prob, op.magnitude) for op in sub] for sub in t.policy]
    policy = next((name for name in ("original", "originalr", "v0", "v0r")
                   if table == [[(op.name, op.prob, op.magnitude) for op in sub]
                                for sub in aa.auto_augment_policy(name, dict(aa._HPARAMS_DEFAULT))]), None)
    if policy is None:
        refuse("its sub-policies are none of timm's original, originalr, v0 and v0r (\"3a\" among them)")
    return T.TimmAutoAugment(policy=policy, **_timm_shared([op for sub in t.policy for op in sub], refuse))


def _timm_aug_mix(t: Any, where: str) -> Any:
    """timm's AugMixAugment (augment_and_mix_transform's) as TimmAugMix: its ops timm's
    _AUGMIX_TRANSFORMS, sharing one AugmentOp configuration (as augmix_ops makes them)."""
    from timm.data import auto_augment as aa
    refuse = _timm_refusal(where, "AugMixAugment", "augment_and_mix_transform")
    names = [op.name for op in t.ops]
    if names != list(aa._AUGMIX_TRANSFORMS):
        refuse(f"its ops are {names}: conveyor runs timm's _AUGMIX_TRANSFORMS")
    first = t.ops[0]
    if any((op.prob, op.magnitude) != (1.0, first.magnitude) for op in t.ops):
        refuse("its ops differ in magnitude or apply with a probability: augmix_ops gives them one, always applied")
    return T.TimmAugMix(magnitude=float(first.magnitude), width=t.width, depth=t.depth, alpha=float(t.alpha),
                        blended=bool(t.blended), **_timm_shared(t.ops, refuse))


def _without_name(message: str, name: str) -> str:
    """`message` without the transform's name leading it (the caller names it with its place)."""
    return message[len(name) + 2:] if message.startswith(name + ": ") else message


def _flatten(pipeline: Any, where: str) -> List[Tuple[str, Any]]:
    """The transforms in order, nested Composes opened, each with where it is."""
    t = _ours(pipeline, where)
    if isinstance(t, T.Compose):
        steps: List[Tuple[str, Any]] = []
        for k, inner in enumerate(t.transforms):
            steps += _flatten(inner, _inside(where, k))
        return steps
    if isinstance(t, T.RandomApply):
        inner = _flatten(T.Compose(t.transforms), where)
        _pixel_transforms_only(where, "RandomApply", inner)
        return [(where, dataclasses.replace(t, transforms=[s for _, s in inner]))]
    if isinstance(t, (T.RandomChoice, T.RandomOrder)):
        # Each of their transforms is one choice, or one place in the order: a Compose among them
        # stays whole, as a RandomApply that always applies.
        name, units = type(t).__name__, []
        for k, inner_t in enumerate(t.transforms):
            inner = _flatten(inner_t, _inside(where, k))
            _pixel_transforms_only(where, name, inner)
            if not inner:
                raise _conveyor.ConfigError(f"{_inside(where, k)} (Compose) is empty: each of {name}'s transforms "
                                            f"({where}) must transform the image")
            if isinstance(t, T.RandomOrder):
                for w, s in inner:
                    if _erases(s):
                        raise _conveyor.ConfigError(
                            f"{w} ({type(s).__name__}) cannot be inside RandomOrder ({where}): conveyor erases the "
                            "normalised output, after every other transform, so erasing cannot take a random place "
                            "in the order")
            units.append(inner[0][1] if len(inner) == 1 else T.RandomApply([s for _, s in inner], p=1.0))
        # A choice erases, after Normalize, or transforms the uint8 image, before ToDtype: not both.
        erasing = [_only_erases(u) for u in units]
        for k, u in enumerate(units):
            if _erases(u) != erasing[k] or erasing[k] != erasing[0]:
                raise _conveyor.ConfigError(
                    f"{_inside(where, k)} ({type(u).__name__}) inside RandomChoice ({where}): its transforms must "
                    "all erase or none, as conveyor erases the normalised output, after every other transform")
        return [(where, dataclasses.replace(t, transforms=units))]
    return [(where, t)]


def _pixel_transforms_only(where: str, name: str, inner: List[Tuple[str, Any]]) -> None:
    for _, s in inner:
        if not isinstance(s, T._PIXEL_TRANSFORMS):
            raise _conveyor.ConfigError(f"{where} ({name}): {type(s).__name__} cannot be inside it: conveyor "
                                        "applies only pixel transforms (colour, flips, blur, rotation, the policies) "
                                        "at random")


def _from_v1(t: Any) -> bool:
    """Whether `t` is, or holds, one of torchvision v1's pixel transforms."""
    return getattr(t, "_v1", False) or any(_from_v1(s) for s in getattr(t, "transforms", ()))


_ERASING = (T.RandomErasing, T.TimmRandomErasing)


def _erases(t: Any) -> bool:
    """Whether `t` is, or holds, a RandomErasing (torchvision's or timm's)."""
    return isinstance(t, _ERASING) or any(_erases(s) for s in getattr(t, "transforms", ()))


def _noise_on(t: Any, image: str) -> Any:
    """`t` with every GaussianNoise it is or holds adding noise to the `image` ("uint8", "float32")."""
    if isinstance(t, T.GaussianNoise):
        return dataclasses.replace(t, image=image)
    if getattr(t, "transforms", None):
        return dataclasses.replace(t, transforms=[_noise_on(s, image) for s in t.transforms])
    return t


def _only(t: Any, classes: Any) -> bool:
    """Whether `t` is one of `classes`, or holds nothing but them."""
    inner = getattr(t, "transforms", None)
    return isinstance(t, classes) or bool(inner) and all(_only(s, classes) for s in inner)


def _only_noise(t: Any) -> bool:
    """Whether `t` is a GaussianNoise, or holds nothing but them."""
    return _only(t, T.GaussianNoise)


def _only_erases(t: Any) -> bool:
    """Whether `t` is a RandomErasing, or holds nothing but them."""
    return _only(t, _ERASING)


def _casts_to_16_bits(t: Any) -> bool:
    """Whether `t` is a ToDtype to float16 or bfloat16 (between floats, torch ignores `scale`)."""
    return isinstance(t, T.ToDtype) and not isinstance(t.dtype, dict) and dtype_name(t.dtype) in ("f16", "bf16")


def _size(where: str, name: str, size: Any, crop: bool = True) -> Any:
    """torchvision's size as ImageAugment takes it: an int, or (height, width); a crop's square
    (which torchvision keeps as a pair) as an int. A resize's pair stays one: it is not a shorter side."""
    values = [size] if isinstance(size, int) else list(size)
    if len(values) not in (1, 2) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise _conveyor.ConfigError(f"{where} ({name}): size must be an int or (height, width), got {size!r}")
    if crop and len(values) == 2 and values[0] == values[1]:
        values = values[:1]
    return values[0] if len(values) == 1 else tuple(values)


# The interpolations ImageAugment resizes with, as torchvision names them: Pillow's filters on PIL
# images, torch's on tensors (C++'s ops::Resampling, "pil_" marking Pillow's, "_no_antialias" torch's
# filter unwidened).
_RESAMPLINGS = _conveyor.option_choices()["ImageAugment"]["resampling"]
_PIL_FILTERS = tuple(n[len("pil_"):] for n in _RESAMPLINGS if n.startswith("pil_"))
_TENSOR_FILTERS = tuple(n for n in _RESAMPLINGS if not n.startswith("pil_"))


def _resampling(where: str, t: Any, pil: bool) -> str:
    """ImageAugment's resampling for the resize of `t`: Pillow's filter of its interpolation on PIL
    images (which Pillow always antialiases); on tensors torch's, antialiased where torchvision's
    resize_image antialiases (antialias=True; None is False; never for the nearest modes)."""
    mode = str(getattr(t.interpolation, "value", t.interpolation)).lower()
    if pil and mode in _PIL_FILTERS:
        return "pil_" + mode
    name = mode.replace("-", "_")
    if not pil and name.startswith("nearest") and name in _TENSOR_FILTERS:
        return name
    if not pil and name in _TENSOR_FILTERS:
        name = name if t.antialias else name + "_no_antialias"
        if name in _TENSOR_FILTERS:
            return name
    tensors = ", ".join(n.replace("_no_antialias", " (antialias=False)").replace("nearest_", "nearest-")
                        for n in _TENSOR_FILTERS)
    supported = (", ".join(_PIL_FILTERS) + " on PIL images" if pil else
                 f"{tensors} on tensors (on PIL images, Pillow's {len(_PIL_FILTERS)} filters)")
    raise _conveyor.ConfigError(f"{where} ({type(t).__name__}): conveyor resizes with {supported}, got "
                                f"interpolation={mode}, antialias={t.antialias}")


def image_augment(pipeline: Any, image_backend: Optional[str] = None, five_crop: bool = False) -> ImageAugment:
    """The ImageAugment that runs `pipeline` (see the module's comment) on the images its dataset
    gives it: "pil" (Image.open(p).convert("RGB"), torchvision's ImageFolder) or "tensor"
    (torchvision.io.decode_image); by default "pil" for a torchvision v1 pipeline, else "tensor".
    With `five_crop`, a FiveCrop or TenCrop compiles to the ImageAugment of its centre crop (its
    five_crop_of saying which flip TenCrop adds), whose caller makes the views."""
    if not (callable(pipeline) or dataclasses.is_dataclass(pipeline) and type(pipeline).__module__ == T.__name__):
        raise TypeError(f"transform must be an ImageAugment, a RawTensor, or a torchvision Compose "
                        f"(or conveyor.transforms'), got {pipeline!r} ({type(pipeline).__name__})")
    if image_backend not in (None, "pil", "tensor"):
        raise _conveyor.ConfigError(f"image_backend must be 'pil' or 'tensor', got {image_backend!r}")
    if _hf.is_processor(pipeline):
        return _hf.image_augment(pipeline)
    pil = image_backend == "pil" or image_backend is None and _is_v1(pipeline)
    steps = _flatten(pipeline, "the pipeline")
    a = ImageAugment(crop="", flip=0.0, normalize=None, dtype="u8", decode_scaling=False, torchvision_rounding=True,
                     sixteen_bit="high_byte" if pil else "refuse")
    pixels: List[T.PixelTransform] = []
    places: List[str] = []  # where each of `pixels` is in the pipeline
    resize_at: Optional[str] = None
    pad, pad_at = None, None  # a Pad waiting for its RandomCrop
    five_at: Optional[str] = None  # where a FiveCrop or TenCrop is
    state = "decoded"  # then "uint8" after the crop, "float" after ToDtype, "normalised", "erased"
    for where, t in steps:
        name = type(t).__name__
        if isinstance(t, (*_AS_DECODED, T.Identity)):  # nothing to run (inside a RandomChoice, a choice)
            pil = pil and not isinstance(t, (T.ToImage, T.PILToTensor))  # a tensor from here
            continue
        if state == "erased" and not (_casts_to_16_bits(t) and a.dtype == "f32"):
            raise _conveyor.ConfigError(f"{where} ({name}) comes after RandomErasing, which conveyor runs on the "
                                        "output: only one ToDtype to a 16-bit float may follow it")
        if state == "cast" and not _only_erases(t):
            raise _conveyor.ConfigError(f"{where} ({name}) comes after the ToDtype to {a.dtype}, which conveyor "
                                        "runs as it stores the output: only RandomErasing may follow it")
        if isinstance(t, T.Resize):
            if state != "decoded" or resize_at:
                raise _conveyor.ConfigError(f"{where} (Resize): conveyor resizes once, first, before a CenterCrop "
                                            "or as the pipeline's only resize to (height, width)")
            a.resampling = _resampling(where, t, pil)
            # size=None: v2's longer side to max_size (ImageAugment's resize None with a max_size)
            a.resize = None if t.size is None else _size(where, "Resize", t.size, crop=False)
            a.max_size, resize_at = t.max_size, where
            continue
        if resize_at and isinstance(a.resize, tuple) and not isinstance(t, _AFTER_RESIZE):
            # Resize((height, width)) gives every sample one size: the output is the whole resized image
            a.crop, a.size, state, resize_at = "center", a.resize, "uint8", None
        if resize_at and not isinstance(t, _AFTER_RESIZE):
            raise _conveyor.ConfigError(f"{where} ({name}) after Resize ({resize_at}): conveyor needs a CenterCrop "
                                        "or a RandomCrop (or a FiveCrop) right after a Resize of the shorter side "
                                        "(Resize(n)), so that every sample has one size")
        if pad_at and not isinstance(t, T.RandomCrop):
            raise _conveyor.ConfigError(f"{pad_at} (Pad): conveyor pads as a RandomCrop right after it does (its "
                                        f"padding), and {where} ({name}) follows it")
        if five_at and not isinstance(t, (T.ToTensor, T.ToDtype, T.Normalize)):
            raise _conveyor.ConfigError(
                f"{where} ({name}) after {five_at}: torchvision runs it once for "
                "all the crops (one draw), conveyor's views each their own: only ToImage, ToDtype, ToTensor and "
                "Normalize may follow a FiveCrop or a TenCrop")
        if isinstance(t, T.Pad):
            if state != "decoded":
                raise _conveyor.ConfigError(f"{where} (Pad): conveyor pads before its crop, as the RandomCrop "
                                            "right after it")
            pad, pad_at = t, where
            continue
        if isinstance(t, (T.CenterCrop, T.RandomResizedCrop, T.RandomCrop, T.FiveCrop, T.TenCrop)):
            if state != "decoded":
                raise _conveyor.ConfigError(f"{where} ({name}): conveyor crops once, first")
            a.size = _size(where, name, t.size)
            if isinstance(t, T.RandomResizedCrop):
                a.resampling = _resampling(where, t, pil)
                if getattr(t, "_random_interpolation", None) is not None:  # timm's, a filter per image
                    a.random_resampling = _resampling(
                        where, dataclasses.replace(t, interpolation=t._random_interpolation), pil)
                a.crop, a.scale, a.ratio = "random_resized", tuple(t.scale), tuple(t.ratio)
            elif isinstance(t, T.RandomCrop):
                a.crop, a.pad_if_needed = "random", t.pad_if_needed
                a.padding, a.padding_mode = _crop_padding(where, t, pad, pad_at)
            elif isinstance(t, (T.FiveCrop, T.TenCrop)):
                if not five_crop:
                    raise _conveyor.ConfigError(
                        f"{where} ({name}) makes {5 if isinstance(t, T.FiveCrop) else 10} images of each: give the "
                        "pipeline to a Loader's transform=, which runs its crops as conveyor.Views, rather than to "
                        "ImageAugment.from_transforms")
                a.crop, five_at = "five_center", f"{where} ({name})"
                a.five_crop_of = "image" if isinstance(t, T.FiveCrop) else (
                    "vertical_flip" if t.vertical_flip else "horizontal_flip")
            else:
                a.crop = "center"
            state, resize_at, pad_at = "uint8", None, None
            continue
        if state == "decoded":
            raise _conveyor.ConfigError(
                f"{where} ({name}) comes before any crop: a batch needs one size, so conveyor's pipelines start "
                "with RandomResizedCrop(size), CenterCrop(size), RandomCrop(size), Resize((height, width)), or "
                "Resize(n) and CenterCrop(size) or RandomCrop(size)")
        if isinstance(t, T.RandomHorizontalFlip) and not pixels and a.flip == 0.0:
            a.flip = float(t.p)  # the crop's own flip: no program, today's fused path
        elif _only_noise(t) and state != "uint8":
            if state != "float":
                raise _conveyor.ConfigError(
                    f"{where} ({name}) after Normalize: conveyor adds noise to the float image between ToDtype and "
                    "Normalize (or to the uint8 image before ToDtype), as recipes place it; move it before Normalize")
            pixels.append(_noise_on(t, "float32"))  # torchvision's float arithmetic, on ToDtype's values
            places.append(where)
        elif _only_erases(t):
            pixels.append(t)
            places.append(where)
            a.pil_transforms += pil  # refused on a PIL image, by name
            state = "erased"
        elif isinstance(t, T._PIXEL_TRANSFORMS):
            if _from_v1(t) and not pil:
                raise _conveyor.ConfigError(
                    f"{where} ({name}) is torchvision v1's on a tensor, where v1 runs functionals of its own: "
                    f"use torchvision.transforms.v2.{name} there, or put it before the conversion to a tensor")
            if state != "uint8":
                raise _conveyor.ConfigError(f"{where} ({name}) after ToDtype: conveyor runs pixel transforms on "
                                            "uint8 images, as recipes place them; move it before ToDtype")
            pixels.append(_noise_on(t, "uint8"))  # GaussianNoise among them: torchvision's uint8 arithmetic
            places.append(where)
            a.pil_transforms += pil  # they see a PIL image: torchvision's PIL functionals
        elif isinstance(t, T.ToTensor):
            if state != "uint8":
                raise _conveyor.ConfigError(f"{where} (ToTensor): conveyor converts its uint8 images once")
            # torchvision's to_tensor: float32 pixels divided by 255 (ToDtype multiplies by 1/255)
            a.dtype, a.divide_by_255, state, pil = "f32", True, "float", False
        elif isinstance(t, T.ToDtype):
            if isinstance(t.dtype, dict):
                raise _conveyor.ConfigError(f"{where} (ToDtype): a dict of dtypes is not supported; give one dtype")
            dtype = dtype_name(t.dtype)
            if dtype == "u8":
                continue
            if _casts_to_16_bits(t) and state in ("float", "normalised", "erased") and a.dtype == "f32":
                # torch's .to() rounds to nearest even, as the store does; erasing commutes with it
                a.dtype, state = dtype, "erased" if state == "erased" else "cast"
                continue
            if pil:
                raise _conveyor.ConfigError(f"{where} (ToDtype) on a PIL image changes nothing in torchvision: "
                                            "put ToImage() (or PILToTensor()) before it")
            if state != "uint8" or dtype != "f32" or not t.scale:
                raise _conveyor.ConfigError(
                    f"{where} (ToDtype): conveyor converts its uint8 images once, to float32 with scale=True "
                    f"(values / 255), got dtype={t.dtype}, scale={t.scale}")
            a.dtype, state = "f32", "float"
        elif isinstance(t, T.Normalize):
            if state != "float":
                raise _conveyor.ConfigError(f"{where} (Normalize) needs a float image: put ToDtype(torch.float32, "
                                            "scale=True) before it")
            # One value stands for every channel, as torch broadcasts it.
            mean, std = [float(v) for v in t.mean], [float(v) for v in t.std]
            a.normalize, state = (mean * 3 if len(mean) == 1 else mean, std * 3 if len(std) == 1 else std), "normalised"
        else:
            raise _conveyor.ConfigError(f"{where} ({name}) cannot run in conveyor here")
    if pad_at:
        raise _conveyor.ConfigError(f"{pad_at} (Pad): conveyor pads as a RandomCrop right after it does (its "
                                    "padding), and none follows it")
    if resize_at and isinstance(a.resize, tuple):
        a.crop, a.size, resize_at = "center", a.resize, None
    if a.divide_by_255 and a.normalize is None:
        a.normalize = ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))  # ToTensor alone: x / 255, then exactly itself
    if resize_at:
        raise _conveyor.ConfigError(f"the Resize at {resize_at} needs a CenterCrop or a RandomCrop after it, or a size "
                                    "(height, width): a batch needs one size")
    if not a.crop:
        raise _conveyor.ConfigError(
            "the pipeline has no crop: a batch needs one size, so conveyor's pipelines start with "
            "RandomResizedCrop(size), CenterCrop(size), RandomCrop(size), Resize((height, width)), or "
                "Resize(n) and CenterCrop(size) or RandomCrop(size)")
    a.transforms = pixels
    try:  # what only the whole pipeline decides (a blur larger than the crop), named by its place
        a._native()
    except _conveyor.ConfigError as e:
        raise _conveyor.ConfigError(_placed(str(e), places, pixels)) from None
    return a


def _zero_fill(where: str, name: str, t: Any) -> None:
    """Refuses a constant padding of anything but zeros (the fill torchvision ignores otherwise)."""
    fill = t.fill if isinstance(t.fill, (list, tuple)) else [t.fill]
    if t.padding_mode == "constant" and any(v != 0 for v in fill):
        raise _conveyor.ConfigError(f"{where} ({name}): conveyor's constant padding is zeros (fill=0), got "
                                    f"fill={t.fill!r}; padding_mode 'edge', 'reflect' and 'symmetric' run too")


def _crop_padding(where: str, crop: Any, pad: Any, pad_at: Optional[str]) -> Tuple[List[int], str]:
    """RandomCrop's padding [left, top, right, bottom] and mode, with a Pad right before it (at
    `pad_at`) folded in: torchvision pads once for both only where a second pad repeats the first
    (zeros, or edges); v1's RandomCrop pads its `padding` and then what pad_if_needed adds, which
    mirrors differently from one pad."""
    _zero_fill(where, "RandomCrop", crop)
    own = _padding(0 if crop.padding is None else crop.padding)
    mode = crop.padding_mode
    if getattr(crop, "_v1", False) and crop.pad_if_needed and any(own) and mode in ("reflect", "symmetric"):
        raise _conveyor.ConfigError(
            f"{where} (RandomCrop): torchvision v1 pads padding={crop.padding!r} and then what pad_if_needed adds, "
            f"each mirrored ({mode!r}), which conveyor's one pad does not make: use torchvision.transforms.v2's "
            "RandomCrop, which pads once")
    if not pad_at:
        return own, mode
    _zero_fill(pad_at, "Pad", pad)
    before = _padding(pad.padding)
    pads_again = any(own) or crop.pad_if_needed
    if pads_again and not (pad.padding_mode == mode and mode in ("constant", "edge")):
        raise _conveyor.ConfigError(
            f"{pad_at} (Pad, padding_mode={pad.padding_mode!r}) and {where} (RandomCrop, padding_mode={mode!r}) "
            "pad twice, which conveyor's one pad makes only with zeros or edges both times: give the RandomCrop "
            "the Pad's padding instead")
    return [p + q for p, q in zip(before, own)], pad.padding_mode


def _placed(message: str, places: List[str], pixels: List[Any]) -> str:
    """ImageAugment's "ImageAugment: transforms[k]: <what>" with the pipeline's place of transform k."""
    prefix = "ImageAugment: transforms["
    if not message.startswith(prefix):
        return message
    k, _, rest = message[len(prefix):].partition("]: ")
    if not k.isdigit() or int(k) >= len(places):
        return message
    name = type(pixels[int(k)]).__name__
    return f"{places[int(k)]} ({name}): {_without_name(rest, name)}"
