"""Shared fixtures: the bundled photos, the real-image corpus and conveyor-bench (skipped, with the
reason, when absent)."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def samples():
    """The 13 bundled photos, an ImageFolder of 3 classes."""
    return ROOT / "examples" / "data" / "samples"


@pytest.fixture(scope="session")
def shared_data():
    """The real-image corpus ($CONVEYOR_TEST_DATA or ../shared/data beside the checkout)."""
    path = pathlib.Path(os.environ.get("CONVEYOR_TEST_DATA") or ROOT.parent / "shared" / "data")
    if not (path / "conformance").is_dir():
        pytest.skip(f"real test images not found at {path}")
    return path


@pytest.fixture(scope="session")
def bench():
    """conveyor-bench from the C++ build ($CONVEYOR_BENCH or build/tools/conveyor-bench)."""
    path = pathlib.Path(os.environ.get("CONVEYOR_BENCH") or ROOT / "build" / "tools" / "conveyor-bench")
    if not path.is_file():
        pytest.skip(f"conveyor-bench not built at {path}")
    return path


@pytest.fixture(scope="session")
def python():
    return sys.executable
