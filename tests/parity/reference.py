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
