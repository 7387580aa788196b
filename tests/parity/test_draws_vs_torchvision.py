"""conveyor's draws against torchvision's own: each transform run many times by torchvision 0.29
(its functional calls recorded as they happen) and drawn as many times by conveyor
(`ImageAugment.drawn_calls`), then the two samples compared: which ops, in which order, with which
signs, and the factors' distributions. The C++ tests (tests/transforms/) hold each draw to
torchvision's source line by line; this holds it to torchvision running.

Both sides are seeded, so the outcome is fixed; the bounds (five standard errors a category, a
Kolmogorov-Smirnov distance at the 0.001 level) are what a matching distribution passes.
"""
import collections
import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
v2 = pytest.importorskip("torchvision.transforms.v2")
F = v2.functional
import conveyor  # noqa: E402
from conveyor import transforms as T  # noqa: E402
from distributions import same_categories, same_distribution  # noqa: E402

N = 6000
SIZE = 16
GEOMETRY = {"center_crop", "resize", "resized_crop"}
POLICY_OPS = ("affine", "rotate", "adjust_brightness", "adjust_saturation", "adjust_contrast", "adjust_sharpness",
              "posterize", "solarize", "autocontrast", "equalize", "invert")


def theirs(transform, monkeypatch, n=N):
    """torchvision's calls for n runs of `transform` on a random image: a list of [(name, kwargs)]
    (recorded where a transform calls its kernel, or, for the policies, which call the functionals
    themselves, at the functionals)."""
    calls = []
    call_kernel = v2.Transform._call_kernel

    def recorded_kernel(self, functional, inpt, *args, **kwargs):
        calls.append((functional.__name__, kwargs))
        return call_kernel(self, functional, inpt, *args, **kwargs)

    def recording(name, function):
        def call(inpt, *args, **kwargs):
            calls.append((name, kwargs))
            return function(inpt, *args, **kwargs)
        return call

    if isinstance(transform, (v2.TrivialAugmentWide, v2.RandAugment, v2.AutoAugment)):
        for name in POLICY_OPS:
            monkeypatch.setattr(F, name, recording(name, getattr(F, name)))
    else:
        monkeypatch.setattr(v2.Transform, "_call_kernel", recorded_kernel)
    torch.manual_seed(1)
    return _runs(transform, torch.randint(0, 256, (3, SIZE, SIZE), dtype=torch.uint8), calls, monkeypatch, n)


def _runs(transform, image, calls, monkeypatch, n):
    """The `calls` recorded in each of n runs of `transform` on `image`; the recorders then removed."""
    runs = []
    for _ in range(n):
        calls.clear()
        transform(image)
        runs.append(list(calls))
    monkeypatch.undo()
    return runs


def theirs_v1(transform, monkeypatch, n=N):
    """torchvision v1's calls for n runs of its policy `transform` on a random PIL image (recorded
    at v1's functionals, which its `_apply_op` calls, some arguments by position)."""
    import inspect
    from PIL import Image
    import torchvision.transforms.functional as F1
    calls = []

    def recording(name, function):
        def call(inpt, *args, **kwargs):
            named = inspect.signature(function).bind(inpt, *args, **kwargs).arguments
            calls.append((name, {k: v for k, v in list(named.items())[1:]}))
            return function(inpt, *args, **kwargs)
        return call

    for name in POLICY_OPS:
        monkeypatch.setattr(F1, name, recording(name, getattr(F1, name)))
    torch.manual_seed(1)
    image = Image.fromarray(torch.randint(0, 256, (SIZE, SIZE, 3), dtype=torch.uint8).numpy())
    return _runs(transform, image, calls, monkeypatch, n)


def ours(transform, n=N, pil=False):
    """conveyor's drawn calls for samples 0..n-1 of `transform` (on a PIL image where `pil`), the
    pixel transforms' only."""
    augment = conveyor.ImageAugment(crop="center", size=SIZE, dtype="u8", transforms=[transform],
                                    pil_transforms=int(pil))
    return [[(c.function, c.kwargs) for c in augment.drawn_calls(seed=7, epoch=0, index=i, width=SIZE, height=SIZE)
             if c.function not in GEOMETRY] for i in range(n)]


def names(runs):
    return [tuple(name for name, _ in run) for run in runs]


def signed(runs):
    """Each call's name with the sign of its magnitude, where it has one."""
    def sign(name, kwargs):
        for key in ("brightness_factor", "saturation_factor", "contrast_factor", "sharpness_factor"):
            if key in kwargs:
                return f"{name}{'+' if kwargs[key] > 1 else '-' if kwargs[key] < 1 else '0'}"
        if name == "rotate":
            return f"rotate{'+' if kwargs['angle'] > 0 else '-' if kwargs['angle'] < 0 else '0'}"
        if name == "affine":
            shear = [float(s) for s in kwargs.get("shear", (0, 0))]
            translate = [float(t) for t in kwargs.get("translate", (0, 0))]
            return f"affine shear {[math.copysign(1, s) if s else 0 for s in shear]} " \
                   f"translate {[math.copysign(1, t) if t else 0 for t in translate]}"
        return name
    return [tuple(sign(n, k) for n, k in run) for run in runs]


def test_color_jitter_orders_and_factors(monkeypatch):
    a = theirs(v2.ColorJitter(0.4, 0.3, 0.5, 0.1), monkeypatch)
    b = ours(T.ColorJitter(0.4, 0.3, 0.5, 0.1))
    same_categories(names(a), names(b), "ColorJitter order")
    for key in ("brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"):
        same_distribution([k[key] for run in a for _, k in run if key in k],
                          [k[key] for run in b for _, k in run if key in k], f"ColorJitter {key}")


@pytest.mark.parametrize("make", [
    lambda M: M.TrivialAugmentWide(),
    lambda M: M.TrivialAugmentWide(num_magnitude_bins=7),
    lambda M: M.RandAugment(),
    lambda M: M.RandAugment(num_ops=1, magnitude=20),
    lambda M: M.AutoAugment(),
    lambda M: M.AutoAugment(M.AutoAugmentPolicy.CIFAR10 if M is v2 else "cifar10"),
], ids=["trivial_augment_wide", "trivial_augment_wide_7_bins", "rand_augment", "rand_augment_1_op_20",
        "auto_augment_imagenet", "auto_augment_cifar10"])
def test_policies_choose_ops_and_signs_as_torchvision(monkeypatch, make):
    a, b = theirs(make(v2), monkeypatch), ours(make(T))
    same_categories(names(a), names(b), "ops")
    same_categories(signed(a), signed(b), "ops with signs")
    for key in ("brightness_factor", "sharpness_factor", "angle"):
        values = [[float(k[key]) for run in runs for _, k in run if key in k] for runs in (a, b)]
        if len(values[0]) > 50:
            same_distribution(*values, f"magnitude {key}")
    # Every factor conveyor drew is one of torchvision's table's: 1 +- its magnitudes, as floats.
    policy = make(v2)
    bins = 10 if isinstance(policy, v2.AutoAugment) else policy.num_magnitude_bins
    checked = 0
    for key, op in (("brightness_factor", "Brightness"), ("saturation_factor", "Color"),
                    ("contrast_factor", "Contrast"), ("sharpness_factor", "Sharpness")):
        if op in policy._AUGMENTATION_SPACE:
            magnitudes = [float(m) for m in policy._AUGMENTATION_SPACE[op][0](bins, SIZE, SIZE)]
            table = {1.0 + m for m in magnitudes} | {1.0 + -m for m in magnitudes}
            drawn = {k[key] for run in b for _, k in run if key in k}
            assert drawn <= table, f"{op}: {sorted(drawn - table)[:5]} are not in torchvision's table"
            checked += bool(drawn)
    assert checked, "no factor drawn to check against the table"


@pytest.mark.parametrize("make", [
    lambda M, **v1: M.TrivialAugmentWide(**v1),
    lambda M, **v1: M.RandAugment(num_ops=1, magnitude=20, **v1),
    lambda M, **v1: M.AutoAugment(M.AutoAugmentPolicy.CIFAR10 if hasattr(M, "AutoAugmentPolicy") else "cifar10", **v1),
], ids=["trivial_augment_wide", "rand_augment_1_op_20", "auto_augment_cifar10"])
def test_v1_policies_choose_ops_signs_and_magnitudes_as_torchvision_v1(monkeypatch, make):
    v1 = pytest.importorskip("torchvision.transforms")
    a, b = theirs_v1(make(v1), monkeypatch), ours(make(T, v1=True), pil=True)
    same_categories(names(a), names(b), "ops")
    same_categories(signed(a), signed(b), "ops with signs")
    # Every factor and threshold conveyor drew is one of v1's tables' (Solarize's linspace(255, 0))
    policy = make(v1)
    bins = 10 if isinstance(policy, v1.AutoAugment) else policy.num_magnitude_bins
    space = (policy._augmentation_space(bins) if isinstance(policy, v1.TrivialAugmentWide)
             else policy._augmentation_space(bins, (SIZE, SIZE)))
    checked = 0
    for key, op, sign in (("brightness_factor", "Brightness", 1.0), ("contrast_factor", "Contrast", 1.0),
                          ("threshold", "Solarize", 0.0)):
        magnitudes = [float(m) for m in space[op][0]]
        table = {sign + m for m in magnitudes} | {sign - m for m in magnitudes if sign}
        drawn = {k[key] for run in b for _, k in run if key in k}
        assert drawn <= table, f"{op}: {sorted(drawn - table)[:5]} are not in torchvision v1's table"
        checked += bool(drawn)
    assert checked >= 2, "too few magnitudes drawn to check against the tables"


@pytest.mark.parametrize("make", [
    lambda M: M.RandomAffine(degrees=25, translate=(0.2, 0.1), scale=(0.7, 1.2), shear=(-8, 8, -4, 12)),
    lambda M: M.RandomRotation((-10, 40)),
    lambda M: M.GaussianBlur(5, sigma=(0.2, 3.0)),
    lambda M: M.RandomErasing(p=0.7, scale=(0.05, 0.4), ratio=(0.5, 2.0)),
], ids=["random_affine", "random_rotation", "gaussian_blur", "random_erasing"])
def test_geometric_blur_and_erasing_parameters_as_torchvision(monkeypatch, make):
    a, b = theirs(make(v2), monkeypatch), ours(make(T))
    same_categories(names(a), names(b), "calls", categories=1)
    numbers = collections.defaultdict(lambda: ([], []))
    for side, runs in enumerate((a, b)):
        for run in runs:
            for name, kwargs in run:
                for key, value in kwargs.items():
                    values = value if isinstance(value, (list, tuple)) else [value]
                    for k, v in enumerate(values):
                        if isinstance(v, (int, float)) and not isinstance(v, bool):
                            numbers[f"{name} {key}[{k}]"][side].append(float(v))
    compared = 0
    for what, (x, y) in numbers.items():
        if len(set(x) | set(y)) > 1 and len(x) > 50 and len(y) > 50:
            same_distribution(x, y, what)
            compared += 1
    assert compared >= 1, f"no varying parameter compared: {sorted(numbers)}"
