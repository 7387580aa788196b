"""Hugging Face image processors read into the ImageAugment that gives their `pixel_values`:
ViTImageProcessor, CLIPImageProcessor, SiglipImageProcessor, BitImageProcessor (DINOv2's) and
ConvNextImageProcessor, of transformers' torchvision backend (each model's default class: the image
as a uint8 tensor, torchvision's antialiased resize, their rescale folded into Normalize as
`(x - mean * 255) / (std * 255)` on float32 values) or of its PIL backend (their `...Pil` classes:
Pillow's resize, then numpy's rescale in float64 rounded to float32, which is ToTensor's x / 255
for a factor of 1/255, and `(x - mean) / std` in float32). Both crop at their truncated centre
offset, where torchvision's rounds."""
from typing import Any, Tuple

import numpy as np

from . import _conveyor
from ._transforms import ImageAugment

# The processors whose preprocessing is the torchvision backend's own (resize, crop, rescale and
# normalise); ConvNeXt's resize has its crop_pct rule, read below.
_PROCESSORS = ("ViTImageProcessor", "CLIPImageProcessor", "SiglipImageProcessor", "BitImageProcessor",
               "ConvNextImageProcessor")
# transformers' PILImageResampling values and the tensor resampling the torchvision backend maps them to
_RESAMPLING = {0: "nearest_exact", 2: "bilinear", 3: "bicubic"}
_RESAMPLING_NAMES = {1: "LANCZOS", 4: "BOX", 5: "HAMMING"}
# PILImageResampling's values as ImageAugment names Pillow's filters ("pil_" and the name)
_PIL_RESAMPLING = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}


def is_processor(obj: Any) -> bool:
    """Whether `obj` is a transformers image processor."""
    return type(obj).__module__.startswith("transformers.") and hasattr(obj, "preprocess") and hasattr(
        obj, "model_input_names")


def _refuse(name: str, why: str) -> None:
    raise _conveyor.ConfigError(f"transform ({name}): {why} (the README's 'From Hugging Face transformers' "
                                "lists what runs)")


def _size(size: Any, name: str, what: str) -> Tuple[str, Any]:
    """("exact", (height, width)) or ("shortest", n) of a processor's SizeDict."""
    if getattr(size, "height", None) and getattr(size, "width", None):
        return "exact", (int(size.height), int(size.width))
    if getattr(size, "shortest_edge", None) and not getattr(size, "longest_edge", None):
        return "shortest", int(size.shortest_edge)
    _refuse(shown, f"its {what} {size!r} is not a (height, width) or a shortest edge alone, which conveyor runs")
    raise AssertionError  # unreachable


def image_augment(p: Any) -> ImageAugment:
    """The ImageAugment equal to `p(images, return_tensors="pt")["pixel_values"]`, image by image."""
    shown = type(p).__name__
    pil = shown.endswith("Pil")  # the PIL backend's class of the processor `name`
    name = shown[:-3] if pil else shown
    if name not in _PROCESSORS:
        _refuse(shown, f"it is a Hugging Face image processor conveyor does not run yet; those that run: "
                      f"{', '.join(_PROCESSORS)}")
    for flag in ("do_pad", "do_reduce_labels"):
        if getattr(p, flag, None):
            _refuse(shown, f"{flag}=True is not run by conveyor")
    a = ImageAugment(crop="center", flip=0.0, normalize=None, dtype="f32", decode_scaling=False,
                     torchvision_rounding=True, sixteen_bit="high_byte")
    if p.do_resize:
        if pil:  # Pillow's own filters, every one
            a.resampling = "pil_" + _PIL_RESAMPLING[int(p.resample)]
        elif p.resample not in _RESAMPLING:
            _refuse(shown, f"resample={_RESAMPLING_NAMES.get(p.resample, p.resample)} on tensors is not one of "
                          "conveyor's tensor resizes (NEAREST, BILINEAR, BICUBIC)")
        else:
            a.resampling = _RESAMPLING[p.resample]
        kind, size = _size(p.size, name, "size")
        if name == "ConvNextImageProcessor":  # shortest_edge < 384: int(edge / crop_pct), then its crop
            if p.do_center_crop:
                _refuse(shown, "do_center_crop=True beside ConvNeXt's crop_pct resize is not run by conveyor")
            if kind != "shortest":
                _refuse(shown, f"its size {p.size!r} has no shortest_edge, which ConvNeXt's resize needs")
            if size < 384:
                a.resize, a.crop, a.size = int(size / p.crop_pct), "center_truncated", size
            else:
                a.resize = a.size = (size, size)
        else:
            a.resize = size
            if kind == "exact":
                a.size = size
    if getattr(p, "do_center_crop", None):
        a.crop, a.size = "center_truncated", _size(p.crop_size, name, "crop_size")[1]
    elif a.crop == "center" and not isinstance(a.resize, tuple):
        _refuse(shown, "without do_center_crop its images keep sizes of their own, and a batch needs one size")
    if pil and p.do_rescale and p.rescale_factor != 1 / 255:
        _refuse(shown, f"rescale_factor={p.rescale_factor!r}: conveyor runs the PIL backend's float64 "
                              "rescale for 1/255 only (where it equals x / 255 in float32)")
    if p.do_normalize:
        mean = np.asarray(p.image_mean, dtype=np.float32).reshape(-1)
        std = np.asarray(p.image_std, dtype=np.float32).reshape(-1)
        if mean.size == 1:
            mean, std = np.repeat(mean, 3), np.repeat(std, 3)
        if pil:  # numpy: float32(float64(x) * (1/255)) = x / 255 in float32 for every byte, then (x - mean) / std
            a.normalize, a.divide_by_255 = ([float(v) for v in mean], [float(v) for v in std]), bool(p.do_rescale)
            a.rescale = a.rescale if p.do_rescale else 1.0
            return a
        if p.do_rescale:  # theirs: torch.tensor(mean) * (1.0 / rescale_factor), in float32
            factor = np.float32(1.0 / p.rescale_factor)
            mean, std = mean * factor, std * factor
        a.normalize, a.rescale = ([float(v) for v in mean], [float(v) for v in std]), 1.0
    elif p.do_rescale and pil:  # x / 255 in float32, as above
        a.normalize, a.divide_by_255 = ([0.0] * 3, [1.0] * 3), True
    elif p.do_rescale:  # images * rescale_factor in float32: (x * factor - 0) / 1
        a.normalize, a.rescale = ([0.0] * 3, [1.0] * 3), float(np.float32(p.rescale_factor))
    else:
        a.dtype = "u8"
    return a
