"""The pixel transforms, one dataclass each, made from the C++ declarations (conveyor/transforms/:
each transform's fields in torchvision's order, their defaults and its summary), so that a
transform registered in C++ has its Python class with no line here. The build writes their stubs
(_pixel_transforms.pyi) from the same declarations. Each checks its arguments as it is made, as
torchvision checks its own: a ConfigError (or a TypeError) names the transform, the argument and
the value. RandomApply, RandomChoice and RandomOrder may hold a whole Compose, which a pipeline
opens: they are checked with the pipeline."""
import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _conveyor

# The argument types the declarations' annotations name (the stubs define them alike).
Jitter = Union[None, float, Tuple[float, float]]
Numbers = Union[float, Sequence[float]]
Fill = Union[None, float, Sequence[float]]


class _PixelTransform:
    """What the generated classes share: their arguments, as the extension makes the transform."""

    def _native(self) -> _conveyor.PixelTransform:
        name = type(self).__name__
        arguments: Dict[str, Any] = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        if "transforms" in arguments:
            arguments["transforms"] = native_list(name, arguments["transforms"])
        return _conveyor.make_pixel_transform(name, arguments)

    def __post_init__(self) -> None:
        if not any(f.name == "transforms" for f in dataclasses.fields(self)):  # type: ignore[arg-type]
            self._native()


def _make(name: str, summary: str, fields: Sequence[Tuple[str, str, bool, Any]], on_pil: bool) -> type:
    spec: List[Any] = [(field, annotation) if required else (field, annotation, dataclasses.field(default=default))
                       for field, annotation, required, default in fields]
    # _on_pil: it runs on PIL images too, as torchvision's PIL functionals do (C++'s `validate_pil`)
    cls = dataclasses.make_dataclass(name, spec, bases=(_PixelTransform,),
                                     namespace={"__doc__": summary, "_on_pil": on_pil})
    cls.__module__ = "conveyor.transforms"  # where users find it (Python 3.12 sets the caller's module)
    return cls


PIXEL_TRANSFORMS: Tuple[type, ...] = tuple(_make(*entry) for entry in _conveyor.pixel_transform_schema())
globals().update({cls.__name__: cls for cls in PIXEL_TRANSFORMS})
PixelTransform = Union[PIXEL_TRANSFORMS]  # type: ignore[valid-type]


def native_list(who: str, transforms: Optional[Sequence[Any]]) -> List[_conveyor.PixelTransform]:
    """`transforms` as the extension takes them; a TypeError names the first that is not one."""
    if transforms is None:
        return []
    out = []
    for k, t in enumerate(transforms):
        if not isinstance(t, PIXEL_TRANSFORMS):
            raise TypeError(f"{who}: transforms[{k}] must be one of conveyor.transforms' classes "
                            f"({', '.join(c.__name__ for c in PIXEL_TRANSFORMS)}), got {type(t).__name__}")
        out.append(t._native())
    return out


__all__ = [cls.__name__ for cls in PIXEL_TRANSFORMS]
