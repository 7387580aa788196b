"""conveyor's draws of timm's RandAugment and AutoAugment against timm's own: timm's transform run
many times on a PIL image (each op's call recorded at its function, with the resampling timm drew)
and conveyor's TimmRandAugment or TimmAutoAugment drawn as many times (`ImageAugment.drawn_calls`),
then the two samples compared: how many ops a run applies, which (for AutoAugment, which
sub-policy's ops in which order), with which signs and filters, and their arguments'
distributions. test_pil_vs_torchvision.py replays conveyor's drawn calls through timm's functions
to the same pixels; this holds the draws to timm running. timm 1.0 from PyPI:

    python -m pytest tests/parity/test_timm_draws.py
"""
import inspect
import random

import numpy as np
import pytest

aa = pytest.importorskip("timm.data.auto_augment")
timm_data = pytest.importorskip("timm.data")
from PIL import Image  # noqa: E402

import conveyor  # noqa: E402
from conveyor import _compose  # noqa: E402
from distributions import same_categories, same_distribution  # noqa: E402

N = 6000
SIZE = 16
GEOMETRY = {"center_crop", "resize", "resized_crop"}


def theirs(transform, monkeypatch, n=N):
    """timm's calls for n runs of its RandAugment or AutoAugment `transform` on a random PIL image: per run, a list
    of (name, arguments), the geometric ops' `resample` the filter timm drew."""
    calls = []

    def recording(function):
        def call(img, *args, **kwargs):
            named = inspect.signature(function).bind(img, *args, **kwargs).arguments
            arguments = {k: v for k, v in list(named.items())[1:] if k not in ("kwargs", "__", "_")}
            arguments.update(named.get("kwargs", {}))
            calls.append(["timm." + function.__name__, arguments])
            if function.__name__ == "posterize" and arguments["bits_to_keep"] < 1:
                return img  # Pillow 13 raises (timm_augment_ops.hpp); the draws are what is compared
            return function(img, *args, **kwargs)
        return call

    def interpolation(kwargs):  # the filter drawn for the call being recorded
        chosen = choose(kwargs)
        calls[-1][1]["resample"] = int(chosen)
        return chosen

    choose = aa._interpolation
    monkeypatch.setattr(aa, "_interpolation", interpolation)
    ops = [op for sub in transform.policy for op in sub] if hasattr(transform, "policy") else transform.ops
    for op in ops:
        monkeypatch.setattr(op, "aug_fn", recording(op.aug_fn))
    random.seed(1)
    np.random.seed(1)
    image = Image.fromarray(np.random.default_rng(1).integers(0, 256, (SIZE, SIZE, 3), dtype=np.uint8))
    runs = []
    for _ in range(n):
        calls.clear()
        transform(image)
        runs.append([(name, arguments) for name, arguments in calls])
    monkeypatch.undo()
    return runs


def ours(transform, n=N):
    """conveyor's drawn calls for samples 0..n-1 of timm's `transform`, compiled as the Loader compiles it."""
    augment = conveyor.ImageAugment(crop="center", size=SIZE, dtype="u8", transforms=[_compose._ours(transform, "t")],
                                    pil_transforms=1)
    return [[(c.function, c.kwargs) for c in augment.drawn_calls(seed=7, epoch=0, index=i, width=SIZE, height=SIZE)
             if c.function not in GEOMETRY] for i in range(n)]


ENHANCE = {"timm.color", "timm.contrast", "timm.brightness", "timm.sharpness"}


def _sign(name, kwargs):
    """The call's name with its argument's side of no change (1 for ImageEnhance's factors, else 0)."""
    for key in ("factor", "degrees", "pct"):
        if key in kwargs:
            neutral = 1.0 if name in ENHANCE else 0.0
            return f"{name}{'+' if kwargs[key] > neutral else '-' if kwargs[key] < neutral else '0'}"
    return name


CONFIGS = ["rand-m9-mstd0.5-inc1", "rand-m9-mstd0.5", "rand-m7-n3-p0.8-mstd101-mmax15-inc1", "rand-m10-n1-p1.0",
           "rand-m9-mstd0.5-tweights", "rand-n4-p1.0-tweights", "original-mstd0.5", "originalr", "v0-mstd101", "v0r"]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("interpolation", ["random", "bicubic"])
def test_policy_draws_as_timm(monkeypatch, config, interpolation):
    transform = timm_data.create_transform(SIZE, is_training=True, auto_augment=config,
                                           interpolation=interpolation).transforms[2]
    assert type(transform).__name__ == ("RandAugment" if config.startswith("rand") else "AutoAugment")
    a, b = theirs(transform, monkeypatch), ours(transform)
    same_categories([len(run) for run in a], [len(run) for run in b], f"{config}: ops a run", categories=1)
    # a sub-policy's ops in order, or tweights' chosen without repetition: which tuples ran
    if not config.startswith("rand") or "tweights" in config:
        same_categories([tuple(name for name, _ in run) for run in a], [tuple(name for name, _ in run) for run in b],
                        f"{config}: a run's ops", categories=20)
    flat_a, flat_b = [c for run in a for c in run], [c for run in b for c in run]
    same_categories([name for name, _ in flat_a], [name for name, _ in flat_b], f"{config}: op", categories=8)
    same_categories([_sign(*c) for c in flat_a], [_sign(*c) for c in flat_b], f"{config}: op and sign",
                    categories=10)
    same_categories([k.get("resample") for _, k in flat_a], [k.get("resample") for _, k in flat_b],
                    f"{config}: resample")
    assert {tuple(k["fillcolor"]) for _, k in flat_b if "fillcolor" in k} == {
        tuple(k["fillcolor"]) for _, k in flat_a if "fillcolor" in k}
    for name in sorted({n for n, _ in flat_a}):
        values = lambda flat: [v for n, k in flat if n == name for key, v in k.items()  # noqa: E731
                               if key not in ("fillcolor", "resample")]
        if values(flat_a):
            # about 200 comparisons over the parameters: each at 1e-5
            same_distribution(values(flat_a), values(flat_b), f"{config}: {name}'s argument", alpha=1e-5)
