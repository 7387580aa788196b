"""ImageAugment's, the Loader's and the Preprocessor's options are declared once, in C++
(ImageAugmentOptions, PipelineOptions, PreprocessorOptions), and the binding reads each by its name.
The Python classes keep their own signatures, typed for mypy and taking torchvision's forms; these
tests hold them to the declarations, so that an option added on one side only fails here."""
import dataclasses
import inspect

import pytest

import conveyor
from conveyor import _conveyor
from conveyor import _transforms


def _declared(name):
    return {option: default for option, _, default in _conveyor.option_schema()[name]}


def test_image_augment_has_a_field_for_each_declared_option_in_its_order_with_its_default():
    declared = [option for option, _, _ in _conveyor.option_schema()["ImageAugment"]]
    fields = []
    for f in dataclasses.fields(conveyor.ImageAugment):
        fields.extend(_transforms._SPELLED_OTHERWISE.get(f.name, (f.name,)))
    assert fields == declared
    defaults = _declared("ImageAugment")
    for f in dataclasses.fields(conveyor.ImageAugment):
        if f.name not in _transforms._SPELLED_OTHERWISE:
            assert f.default == defaults[f.name], f.name
    assert conveyor.ImageAugment.normalize is None and defaults["mean"] is None and defaults["std"] is None


# The Python classes' own arguments, and how they reach the declared options: `distributed` is the
# sampling's mode, rank and world size; prefetch, device and stream are written Python's way.
_PYTHON_ONLY = {"dataset", "transform", "output", "image_backend"}
_SPELLED_OTHERWISE = {"distributed": ("distributed", "rank", "world_size")}
_DEFAULTS_OTHERWISE = {"prefetch", "device", "stream", "distributed"}  # "auto", "cpu", None, False: 0, -1, 0, ""
# PipelineOptions the Python classes leave at their defaults (a Preprocessor sets batch_size and
# on_error itself; seed and drop_last draw nothing there).
_LEFT_AT_DEFAULT = {"arena_bytes", "gpu_max_file_bytes", "gpu_max_window_pixels", "gpu_part_images"}
_NOT_PER_REQUEST = {"batch_size", "drop_last", "on_error", "seed", "memory_budget", "batch_transform"}


def _arguments(cls):
    names = []
    for name in list(inspect.signature(cls.__init__).parameters)[1:]:
        if name not in _PYTHON_ONLY:
            names.extend(_SPELLED_OTHERWISE.get(name, (name,)))
    return names


@pytest.mark.parametrize("cls, left", [(conveyor.Loader, _LEFT_AT_DEFAULT),
                                       (conveyor.Preprocessor, _LEFT_AT_DEFAULT | _NOT_PER_REQUEST)])
def test_loader_and_preprocessor_take_each_declared_option_with_its_default(cls, left):
    name = cls.__name__
    declared = _declared(name)
    assert sorted(_arguments(cls)) == sorted(set(declared) - left)
    python_defaults = {n: p.default for n, p in inspect.signature(cls.__init__).parameters.items()}
    for option in set(_arguments(cls)) & set(python_defaults):
        if option not in _DEFAULTS_OTHERWISE and (name, option) != ("Preprocessor", "prefetch"):
            assert python_defaults[option] == declared[option], (name, option)


def test_the_binding_names_the_class_the_option_and_the_value_of_a_wrong_one():
    with pytest.raises(TypeError, match=r"ImageAugment: flip must be a number, got 'often' \(str\)"):
        conveyor.ImageAugment(flip="often")._native()  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ImageAugment: roi must be True or False, got 'yes' \(str\)"):
        conveyor.ImageAugment(roi="yes")._native()  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ImageAugment: size must be an int, got 2.5 \(float\)"):
        _conveyor.image_augment(size=2.5)
    with pytest.raises(conveyor.ConfigError, match=r"ImageAugment: max_image_pixels must be >= 0, got -1"):
        _conveyor.image_augment(max_image_pixels=-1)
    with pytest.raises(TypeError, match=r"ImageAugment: mean must be a sequence of 3 numbers, got \[0.5\]"):
        _conveyor.image_augment(mean=[0.5], std=[0.5, 0.5, 0.5])
    with pytest.raises(conveyor.ConfigError, match=r"ImageAugment: normalize needs both mean and std"):
        _conveyor.image_augment(mean=[0.5, 0.5, 0.5])
    with pytest.raises(conveyor.ConfigError, match=r"ImageAugment: dtype must be 'u8', 'f32', 'f16' or 'bf16', got 'f64'"):
        _conveyor.image_augment(dtype="f64")
    assert _conveyor.image_augment(crop="center", size=[32, 48], padding=[1, 2]).sample_shape == [3, 32, 48]


def test_the_binding_refuses_an_option_nothing_declares(tmp_path):
    with pytest.raises(TypeError, match=r"ImageAugment: no option 'flipp'"):
        _conveyor.image_augment(flipp=0.5)
    dataset = conveyor.InMemory()
    dataset.add(b"x", 0)
    transform = conveyor.RawTensor(shape=[1], dtype="u8")._native()
    with pytest.raises(TypeError, match=r"Loader: no option 'batchsize'"):
        _conveyor.Loader(dataset, transform, batchsize=8)
    with pytest.raises(TypeError, match=r"Loader: workers must be an int, got '2' \(str\)"):
        _conveyor.Loader(dataset, transform, workers="2")
    with pytest.raises(conveyor.ConfigError, match=r"Loader: on_error must be 'raise' or 'skip', got 'ignore'"):
        _conveyor.Loader(dataset, transform, on_error="ignore")
    with pytest.raises(TypeError, match=r"Preprocessor: no option 'shuffle'"):
        _conveyor.Preprocessor(conveyor.ImageAugment.eval()._native(), shuffle=True)
    loader = _conveyor.Loader(dataset, transform, batch_size=1, shuffle=True, seed=3)
    assert loader.batches_per_epoch() == 1


def test_the_stubs_show_the_bindings_that_read_declared_options():
    import pathlib

    stubs = (pathlib.Path(conveyor.__file__).parent / "_conveyor.pyi").read_text()
    assert "def image_augment(**options: Any) -> Transform:" in stubs
    assert "def __init__(self, dataset: Dataset, transform: Transform, /, **options: Any) -> None:" in stubs
