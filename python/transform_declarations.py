"""What is written from the pixel transforms' C++ declarations (conveyor/transforms/: each one's fields
in torchvision's order, defaults and summary), as the extension reports them
(`pixel_transform_schema()`): the package's stubs, at build, and the reference page
docs/transforms.md, checked against the registry by the tests.

    python transform_declarations.py stubs <directory of the built _conveyor module> <output .pyi>
    python transform_declarations.py docs <output .md>       (with the package installed)
"""
import sys


def stubs(schema) -> str:
    lines = [
        "# The pixel transforms' stubs, written when the package is built from the C++ declarations",
        "# (conveyor/transforms/): do not edit.",
        "import dataclasses",
        "from typing import Any, List, Optional, Sequence, Tuple, Union",
        "",
        "from . import _conveyor",
        "",
        "Jitter = Union[None, float, Tuple[float, float]]",
        "Numbers = Union[float, Sequence[float]]",
        "Fill = Union[None, float, Sequence[float]]",
        "",
        "",
        "class _PixelTransform:",
        "    def _native(self) -> _conveyor.PixelTransform: ...",
        "",
    ]
    for name, summary, fields, _ in schema:
        lines += ["", "@dataclasses.dataclass", f"class {name}(_PixelTransform):", f'    """{summary}"""']
        if fields:
            lines.append("")
        for field, annotation, required, _ in fields:
            lines.append(f"    {field}: {annotation}" + ("" if required else " = ..."))
    names = [name for name, _, _, _ in schema]
    lines += [
        "",
        "",
        f"PixelTransform = Union[{', '.join(names)}]",
        "PIXEL_TRANSFORMS: Tuple[type, ...]",
        "",
        "",
        "def native_list(who: str, transforms: Optional[Sequence[Any]]) -> List[_conveyor.PixelTransform]: ...",
        "",
        "",
        "__all__ = [" + ", ".join(f'"{n}"' for n in names) + "]",
    ]
    return "\n".join(lines) + "\n"


def docs(schema) -> str:
    lines = [
        "# Pixel transforms",
        "",
        "<!-- Written from the C++ declarations by python/transform_declarations.py: do not edit. -->",
        "",
        "The pixel transforms conveyor runs, in a torchvision v2 `Compose`, in `conveyor.transforms` and in",
        "C++'s `ImageAugment::transforms`, after the crop, in the order given, on uint8 images",
        "(`RandomErasing` last, on the output). Each takes torchvision 0.29's arguments, in its order and with",
        "its defaults (`tests/parity/test_registry_vs_torchvision.py` holds them to torchvision's signatures),",
        "and equals torchvision's output bit for bit. \"On PIL images\": it also runs where torchvision's",
        "transforms see a PIL image (torchvision v1's `Compose`, or v2's before `ToImage`), as torchvision's PIL",
        "functionals do, with Pillow's arithmetic (ImageEnhance, ImageOps, `convert`). `v1=True` (conveyor's",
        "argument, which a v1 `Compose` sets) is torchvision v1's class of the name, on PIL images (AugMix's on",
        "tensors too, with v1's tensor functionals): its numbers where they differ from v2's (RandomAffine's",
        "matrix, the policies' Solarize thresholds and signs, v1's tensor blends and greys). v1's `GaussianBlur`",
        "is refused: its kernel's exponentials are MKL's (`torch.exp`), not reproduced bit for bit.",
        "",
        "| transform | arguments | what it does | on PIL images |",
        "|---|---|---|---|",
    ]
    for name, summary, fields, on_pil in schema:
        arguments = ", ".join(f"`{field}`" if required else f"`{field}={default!r}`"
                              for field, _, required, default in fields)
        lines.append(f"| `{name}` | {arguments or 'none'} | {summary.replace('|', '/')} | {'yes' if on_pil else 'not yet'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1] == "stubs":
        sys.path.insert(0, sys.argv[2])
        import _conveyor  # the module just built, not an installed package
        text, out = stubs(_conveyor.pixel_transform_schema()), sys.argv[3]
    else:
        del sys.path[0]  # this folder holds the package's sources, not the installed package
        from conveyor import _conveyor
        text, out = docs(_conveyor.pixel_transform_schema()), sys.argv[2]
    with open(out, "w") as f:
        f.write(text)
