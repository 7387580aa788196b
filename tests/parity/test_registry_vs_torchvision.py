"""Every pixel transform conveyor registers (its C++ declaration, from which the Python class is made)
against torchvision 0.29's class of the same name (or another library's, below): the same arguments in the same order, the same
defaults, required where torchvision's has no default. A transform whose declaration drifts from
torchvision's signature fails here, whatever else its tests check."""
import dataclasses
import enum
import inspect

import pytest

from reference import require

torch, torchvision = require()
v2 = pytest.importorskip("torchvision.transforms.v2")
from conveyor import _conveyor  # noqa: E402
from conveyor import transforms as T  # noqa: E402

# torchvision's arguments conveyor does not take, and why: RandomErasing works in place on a
# tensor torchvision owns; conveyor's output is its own.
NOT_TAKEN = {("RandomErasing", "inplace")}
# Registered transforms of other libraries, checked against their class: timm's RandomErasing
# (whose `device` conveyor does not take: its output is where the loader puts it).
OTHER_LIBRARIES = {"TimmRandomErasing": ("timm.data.random_erasing", "RandomErasing")}
NOT_TAKEN |= {("TimmRandomErasing", "device")}
# conveyor's defaults that are not torchvision's, and why: a batch of RGB images keeps three channels.
OTHER_DEFAULTS = {("Grayscale", "num_output_channels")}
# conveyor's arguments torchvision's classes lack, and why: `v1` (False) says the transform is
# torchvision v1's class of that name (torchvision.transforms), whose arithmetic differs from v2's;
# `image` ("float32") says which dtype GaussianNoise meets, which torchvision reads from the image itself.
OURS = {(name, "v1") for name in ("RandomAffine", "TrivialAugmentWide", "RandAugment", "AutoAugment", "AugMix")}
OURS_DEFAULTS = {"v1": False, "image": "float32"}
OURS |= {("GaussianNoise", "image")}
# Registered transforms of other libraries made by a function from a config string rather than a
# class of their arguments: timm's RandAugment, AutoAugment and AugMix (rand_augment_transform parses
# "rand-m9-...", auto_augment_transform "v0-mstd0.5", augment_and_mix_transform "augmix-m3", each with hparams). Their plain configs, compiled
# as the Loader compiles them, are conveyor's defaults.
FROM_CONFIG = {"TimmRandAugment": ("timm.data.auto_augment", "rand_augment_transform", "rand"),
               "TimmAutoAugment": ("timm.data.auto_augment", "auto_augment_transform", "v0"),
               "TimmAugMix": ("timm.data.auto_augment", "augment_and_mix_transform", "augmix")}


def _plain(value):
    """A default as conveyor's class holds it: enums by their value, sequences as tuples of floats."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return tuple(float(v) for v in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


@pytest.mark.parametrize("name", [entry[0] for entry in _conveyor.pixel_transform_schema()])
def test_a_registered_transform_takes_torchvision_arguments_in_order_with_its_defaults(name):
    if name in FROM_CONFIG:
        from conveyor import _compose
        module, function, config = FROM_CONFIG[name]
        made = _compose._ours(getattr(pytest.importorskip(module), function)(config), "transform 0")
        for field in dataclasses.fields(made):
            value, default = _plain(getattr(made, field.name)), _plain(field.default)
            if isinstance(value, tuple) and not isinstance(default, tuple):
                default = (default,) * len(value)  # one fill value for every channel
            assert value == default, f"{name}.{field.name}: {function}({config!r}) gives {value}"
        return
    if name in OTHER_LIBRARIES:
        module, cls = OTHER_LIBRARIES[name]
        theirs = inspect.signature(getattr(pytest.importorskip(module), cls)).parameters
    else:
        theirs = inspect.signature(getattr(v2, name)).parameters
    ours = {f.name: f for f in dataclasses.fields(getattr(T, name))}
    assert list(ours) == [p for p in theirs if (name, p) not in NOT_TAKEN] + [a for n, a in sorted(OURS) if n == name]
    for argument, field in ours.items():
        if (name, argument) in OURS:
            assert field.default == OURS_DEFAULTS[argument]
            if argument == "v1":  # v1's class takes v2's arguments
                assert list(inspect.signature(getattr(torchvision.transforms, name)).parameters) == list(theirs)
            continue
        default = theirs[argument].default
        if default is inspect.Parameter.empty:
            assert field.default is dataclasses.MISSING, f"{name}.{argument} is required in torchvision"
        elif (name, argument) not in OTHER_DEFAULTS:
            assert _plain(field.default) == _plain(default), f"{name}.{argument}"


def test_every_torchvision_transform_conveyor_takes_is_registered_or_a_pipeline_step():
    steps = {"Compose", "RandomResizedCrop", "Resize", "CenterCrop", "Pad", "RandomCrop", "FiveCrop", "TenCrop",
             "ToImage", "PILToTensor", "ToPureTensor",
             "ToDtype", "ToTensor", "Normalize", "MixUp", "CutMix"}
    registered = {entry[0] for entry in _conveyor.pixel_transform_schema()}
    classes = {n for n in T.__all__ if isinstance(getattr(T, n), type) and dataclasses.is_dataclass(getattr(T, n))}
    assert classes == registered | steps
    assert all(hasattr(v2, n) for n in classes - set(OTHER_LIBRARIES) - set(FROM_CONFIG))
