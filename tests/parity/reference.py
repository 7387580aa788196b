"""The reference libraries the parity tests hold conveyor to: torch >= 2.15 and torchvision >= 0.29
from PyPI. `require()` skips the calling module where they are missing or older."""
import pytest


def _version(v):
    return tuple(int(x) for x in v.split("+")[0].split(".")[:2])


def require():
    """(torch, torchvision), or the module skipped with the versions found."""
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    if _version(torch.__version__) < (2, 15) or _version(torchvision.__version__) < (0, 29):
        pytest.skip(f"the claims are for torch >= 2.15 and torchvision >= 0.29, found {torch.__version__} and "
                    f"{torchvision.__version__}", allow_module_level=True)
    return torch, torchvision


def check_declared_geometry(compose, name, kwargs, pil):
    """Asserts that a drawn geometry call (`name`, `kwargs`) carries the Compose's own choices: the
    resize's interpolation and antialiasing, the padding's mode. A replay takes its arguments from
    the calls, so without this a choice conveyor dropped would be dropped on both sides."""
    def first(*names):
        found = [t for t in getattr(compose, "transforms", [compose]) if type(t).__name__ in names]
        return found[0] if found else None
    if name in ("resize", "resized_crop"):
        t = first("Resize", "RandomResizedCrop", "RandomResizedCropAndInterpolation")  # the last: timm's
        modes = t.interpolation if isinstance(t.interpolation, (tuple, list)) else [t.interpolation]  # timm's random
        modes = [str(getattr(m, "value", m)).lower() for m in modes]
        assert kwargs.get("interpolation", "bilinear") in modes, (name, kwargs, modes)
        mode = modes[0]
        # torchvision's resize_image antialiases tensors where antialias is true (None is false) and
        # never for the nearest modes, whose calls name none; Pillow always does
        unaliased = not pil and not mode.startswith("nearest") and not t.antialias
        assert kwargs.get("antialias", True) != unaliased, (name, kwargs, t.antialias)
    if name == "pad":
        t = first("Pad") or first("RandomCrop")
        assert kwargs.get("padding_mode", "constant") == t.padding_mode, (name, kwargs, t.padding_mode)


def gaussian_noise(x, mean, sigma, clip, key, **_):
    """torchvision's `F.gaussian_noise(x, mean, sigma, clip)` with conveyor's normal values of
    the stream `key` in place of the tensor torch would draw (`torch.randn_like` answers with
    them): torchvision's own arithmetic on conveyor's noise, as a drawn call replays. The call's
    `image` (the dtype conveyor's transform met) is `x`'s own dtype here."""
    from unittest import mock

    import numpy as np
    import torch
    import torchvision.transforms.v2.functional as F
    from conveyor import _conveyor

    values = np.frombuffer(_conveyor._standard_normals(key, x.numel()), dtype=np.float32)
    noise = torch.from_numpy(values.copy()).reshape(x.shape)
    with mock.patch.object(torch, "randn_like", lambda like, dtype=None: noise.clone()):
        return F.gaussian_noise(x, mean=mean, sigma=sigma, clip=clip)
