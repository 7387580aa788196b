"""The package as typed, documented Python: every public class has a docstring, the extension ships
stubs generated at build with the package's py.typed (the pixel transforms' from their C++
declarations), and `mypy --strict` passes over the examples and catches a wrong call through those
stubs."""
import pathlib

import pytest

import conveyor

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_public_class_has_a_docstring():
    classes = [name for name in conveyor.__all__ if isinstance(getattr(conveyor, name), type)]
    assert {"Batch", "Dataset", "ImageFolder", "FileList", "InMemory", "ShardDataset", "TarShards",
            "TFRecordDataset", "Loader", "ImageAugment"} <= set(classes)
    undocumented = [name for name in classes if not (getattr(conveyor, name).__doc__ or "").strip()]
    assert undocumented == []


def test_the_package_ships_stubs_and_py_typed():
    package = pathlib.Path(conveyor.__file__).parent
    assert (package / "py.typed").is_file()
    stubs = (package / "_conveyor.pyi").read_text()
    for line in ("class Loader:", "class SampleError(Error):", "    path: str", "def iterate(self, epoch: int",
                 "class PixelTransform:", "def drawn_calls(transform: Transform, seed: int"):
        assert line in stubs


def test_mypy_strict_passes_over_the_examples_and_catches_wrong_calls(tmp_path):
    api = pytest.importorskip("mypy.api", reason="pip install mypy (scripts/quickstart test does)")
    config = ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache")]
    out, err, status = api.run(config + [str(ROOT / "examples" / "python")])
    assert status == 0, out + err
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import conveyor\n"
                     "loader = conveyor.Loader('data', batch_size='8')\n"
                     "name: int = conveyor.ImageFolder('data').classes[0]\n"
                     "def index(e: conveyor.SampleError) -> str:\n"
                     "    return e.index\n"
                     "from conveyor import transforms as T\n"
                     "blur = T.GaussianBlur(kernel_size=3, sigma=(0.1, 2.0))\n"
                     "posterize = T.RandomPosterize(bits='3')\n"
                     "skipping = conveyor.Loader('data', on_error='skp')\n")
    out, err, status = api.run(config + ["--strict", str(wrong)])
    assert status == 1
    assert 'Argument "batch_size" to "Loader" has incompatible type "str"' in out, out
    assert "wrong.py:3: error: Incompatible types in assignment" in out, out
    assert "wrong.py:5: error: Incompatible return value type" in out, out
    # the pixel transforms' stubs, written from their C++ declarations at build
    assert 'wrong.py:8: error: Argument "bits" to "RandomPosterize" has incompatible type "str"; expected "int"' in out, out
    assert "wrong.py:7:" not in out, out
    # the options' named choices, as Literal types
    assert 'wrong.py:9: error: Argument "on_error" to "Loader" has incompatible type' in out, out


def test_the_options_literal_types_are_the_cpp_declarations_choices():
    """Loader's and Preprocessor's on_error, decode and gpu_upsampling are typed with the choices
    their C++ declarations name, so a choice added there fails here until the type names it."""
    import typing
    from conveyor import _args, _conveyor
    declared = _conveyor.option_choices()
    for cls in ("Loader", "Preprocessor"):
        hints = typing.get_type_hints(getattr(conveyor, cls).__init__)
        for name, alias in (("on_error", _args.OnError), ("decode", _args.Decode),
                            ("gpu_upsampling", _args.GpuUpsampling)):
            if name in declared[cls]:
                assert typing.get_args(alias) == declared[cls][name], (cls, name)
            if name in hints:  # the Preprocessor raises on a bad image (no on_error)
                assert hints[name] == alias, (cls, name)
        assert set(declared[cls]) <= {"on_error", "decode", "gpu_upsampling"}, declared[cls]
        assert typing.get_args(hints["output"]) == (_args.Output, type(None))
