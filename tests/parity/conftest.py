"""The parity tests' photos: the bundled ones, and the real-image corpus where present."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("CONVEYOR_TEST_DATA") or ROOT.parent / "shared" / "data")


@pytest.fixture(scope="module", params=["bundled", "corpus"])
def photos(request):
    """An ImageFolder of photos: the bundled ones, then the corpus (skipped where absent)."""
    folder = ROOT / "examples" / "data" / "samples" if request.param == "bundled" else DATA / "imagefolder"
    if not folder.is_dir():
        pytest.skip(f"real test images not found at {folder}")
    return folder


@pytest.fixture(autouse=True, scope="session")
def _blur_kernel_as_conveyor():
    """torchvision's Gaussian kernels summed in the AVX-512 order on every machine (blur_kernel.py)."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from blur_kernel import kernel_as_conveyor
    with kernel_as_conveyor():
        yield
