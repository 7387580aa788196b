"""Random torchvision v2 Composes against torchvision itself: the transform-program fuzzer's parity half
(the C++ half, fuzz/fuzz_program.cpp, holds memory safety under the sanitizers).

Each case is a Compose built as users write one, its arguments anything including extremes: a crop
(RandomResizedCrop, CenterCrop, Resize((height, width)), or Resize and CenterCrop; sizes an int or
(height, width)), zero to four of conveyor's pixel
transforms (every one of them, with RandomApply, RandomChoice and RandomOrder nesting some), and
maybe ToDtype, Normalize and RandomErasing, on PNG images of random sizes from 1 x 1 up. The
arguments of each transform are made from the types of its fields in conveyor.transforms (the same
names and defaults as torchvision's), so a transform added there is fuzzed here with no line added.

What must hold:
- where torchvision refuses the arguments (its constructor raises), conveyor refuses them too, when
  the Compose reaches it (ImageAugment.from_transforms);
- where conveyor accepts a Compose, every sample of a Loader over the images equals torchvision's
  functionals fed the calls conveyor drew for it, bit for bit; or, where conveyor fails a sample,
  torchvision's own Compose fails on that image too;
- where torchvision's own Compose fails on an image whatever it draws, conveyor fails that sample.
A Compose that torchvision runs and conveyor refuses at construction is a limit of conveyor's (the
pipelines it cannot run yet), counted, not a failure.

CONVEYOR_FUZZ_CASES sets the number of cases (default 120, about half a minute), CONVEYOR_FUZZ_SEED
the first case's seed; a failure names its case's seed, which reproduces it alone.
"""
import dataclasses
import inspect
import os
import random
import signal
import typing

import pytest

from reference import require

torch, torchvision = require()
v2 = pytest.importorskip("torchvision.transforms.v2")
F = v2.functional
import conveyor  # noqa: E402
from affine_grid import grid_as_conveyor  # noqa: E402
from conveyor import transforms as T  # noqa: E402


CASES = int(os.environ.get("CONVEYOR_FUZZ_CASES", "120"))
FIRST = int(os.environ.get("CONVEYOR_FUZZ_SEED", "0"))
REFUSED = (conveyor.ConfigError, TypeError, ValueError)
MODES = [v2.InterpolationMode.NEAREST, v2.InterpolationMode.BILINEAR, v2.InterpolationMode.BICUBIC]
POLICIES = list(v2.AutoAugmentPolicy)


class Values:
    """Arguments from a case's random stream: mostly in range, sometimes an edge or an extreme."""

    def __init__(self, rng):
        self.rng = rng

    def number(self):
        r = self.rng
        kind = r.randrange(8)
        if kind == 0:
            return r.choice([0.0, 1.0, 0.5, -1.0, 2.0, 255.0, 256.0, 360.0, 1e-30, 1e9, 1e300, float("inf"),
                             float("-inf"), float("nan"), 90.0, 180.0, 1e-7])
        if kind <= 3:
            return r.random()
        if kind == 4:
            return r.uniform(-4, 4)
        if kind == 5:
            return float(r.randint(-400, 400))
        return r.uniform(0, 256)

    def integer(self):
        r = self.rng
        if r.random() < 0.2:
            return r.choice([0, 1, -1, 2, 3, 8, 9, 31, 63, 64, 65, 255, 2**31, -2**31])
        return r.randint(-3, 70)

    def pair(self):
        a, b = self.number(), self.number()
        return (min(a, b), max(a, b)) if self.rng.random() < 0.75 and a == a and b == b else (a, b)

    def of(self, hint, depth):
        """A value of the annotation `hint`."""
        r = self.rng
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if hint is float:
            return self.number()
        if hint is int:
            return self.integer()
        if hint is bool:
            return r.random() < 0.5
        if origin is typing.Union:
            options = [a for a in args if a is not type(None)]
            if type(None) in args and r.random() < 0.15:
                return None
            return self.of(r.choice(options), depth)
        if origin in (tuple, typing.Tuple):
            return self.pair() if len(args) == 2 else tuple(self.of(a, depth) for a in args)
        if origin in (list, typing.List, typing.Sequence, __import__("collections.abc").abc.Sequence):
            inner = args[0] if args else float
            if isinstance(inner, typing.ForwardRef) or inner == "PixelTransform" or inner is T.PixelTransform:
                return [pixel_transform(self, depth + 1) for _ in range(r.choice([0, 1, 1, 2, 3]))]
            return [self.of(inner, depth) for _ in range(r.choice([1, 2, 3, 4]))]
        if hint is str:
            return r.choice(["random", "imagenet", "x"])
        return None  # Any: the caller knows


def _field_value(values, cls, field, hint, depth):
    """A value for `field` of `cls`: by its annotation; torchvision's enums where conveyor takes Any."""
    r = values.rng
    if field.name == "interpolation":
        return r.choice(MODES)
    if field.name == "policy":
        return r.choice(POLICIES)
    if field.name == "kernel_size":
        odd = lambda: r.choice([1, 3, 5, 9, 23, 63, 65, 2, 0, -1])  # noqa: E731
        return odd() if r.random() < 0.5 else (odd(), odd())
    if field.name == "num_output_channels":
        return r.choice([1, 3, 3, 2])
    if field.name == "value" and cls is T.RandomErasing:
        kind = r.randrange(3)
        return "random" if kind == 0 else (values.number() if kind == 1 else [values.number() for _ in range(3)])
    return values.of(hint, depth)


def pixel_transform(values, depth=0):
    """One of conveyor's pixel transforms with arguments made from its fields' types: (class, kwargs)."""
    r = values.rng
    classes = [c for c in T._PIXEL_TRANSFORMS if hasattr(v2, c.__name__) and (  # timm's are not torchvision's
        depth < 2 or not hasattr(c, "__dataclass_fields__") or "transforms" not in c.__dataclass_fields__)]
    cls = r.choice(classes)
    hints = typing.get_type_hints(cls, vars(T))
    theirs = inspect.signature(getattr(v2, cls.__name__)).parameters
    kwargs = {}
    for field in dataclasses.fields(cls):
        if field.name not in theirs:
            continue  # conveyor's own (v1, torchvision v1's class): its default, v2's class
        required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        # a default of conveyor's that is not torchvision's (Grayscale's 3 channels): always given
        differs = field.name in theirs and theirs[field.name].default != field.default
        if required or differs or r.random() < 0.6:
            kwargs[field.name] = _field_value(values, cls, field, hints[field.name], depth)
    return cls, kwargs


def _torchvision(cls, kwargs):
    """The torchvision v2 transform of the same name and arguments (its own inner ones too)."""
    args = dict(kwargs)
    if "transforms" in args:
        args["transforms"] = [_torchvision(*t) for t in args["transforms"]]
    return getattr(v2, cls.__name__)(**args)


def _ours(cls, kwargs):
    args = dict(kwargs)
    if "transforms" in args:
        args["transforms"] = [_ours(*t) for t in args["transforms"]]
    return cls(**args)


@dataclasses.dataclass
class Case:
    seed: int
    steps: list  # (class, kwargs) of the Compose's transforms, pixel ones as pixel_transform makes them
    images: list  # uint8 CHW tensors


def make_case(seed):
    r = random.Random(seed)
    values = Values(r)
    size = r.choice([r.randint(1, 40), r.randint(1, 8)])
    if r.random() < 0.2:
        size = (size, r.randint(1, 40))  # (height, width)
    crop = r.randrange(4)
    steps = []
    if crop == 3:  # Resize((height, width)) alone
        steps.append((v2.Resize, {"size": (r.randint(1, 48), r.randint(1, 48))}))
    elif crop == 0:
        kw = {"size": size}
        if r.random() < 0.25:
            kw["scale"] = values.pair()
        if r.random() < 0.25:
            kw["ratio"] = values.pair()
        steps.append((v2.RandomResizedCrop, kw))
    else:
        if crop == 2:
            kw = {"size": r.randint(1, 48) if r.random() < 0.9 else values.integer()}
            if r.random() < 0.2:
                kw["max_size"] = kw["size"] + r.randint(-2, 40) if r.random() < 0.9 else values.integer()
            steps.append((v2.Resize, kw))
        steps.append((v2.CenterCrop, {"size": size}))
    if r.random() < 0.3:
        steps.append((v2.RandomHorizontalFlip, {"p": r.choice([0.0, 0.5, 1.0])}))
    steps += [pixel_transform(values) for _ in range(r.randrange(5))]
    floats = r.random() < 0.6
    if floats:
        steps.append((v2.ToDtype, {"dtype": torch.float32, "scale": True}))
        if r.random() < 0.7:
            steps.append((v2.Normalize, {"mean": [r.random() for _ in range(3)],
                                         "std": [r.uniform(0.1, 1) for _ in range(3)]}))
    if r.random() < 0.3:
        cls, kwargs = T.RandomErasing, {"p": r.choice([0.5, 1.0])}
        if r.random() < 0.5:
            kwargs["value"] = _field_value(values, T.RandomErasing, T.RandomErasing.__dataclass_fields__["value"],
                                           None, 0)
        if r.random() < 0.3:
            kwargs["scale"], kwargs["ratio"] = values.pair(), values.pair()
        steps.append((cls, kwargs))
    images = []
    for _ in range(3):
        h, w = (r.randint(1, 64), r.randint(1, 64)) if r.random() < 0.8 else (r.randint(1, 3), r.randint(1, 200))
        g = torch.Generator().manual_seed(r.randrange(1 << 30))
        images.append(torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=g))
    return Case(seed, steps, images)


def torchvision_compose(case):
    """torchvision's Compose of the case, or the exception its constructors raise."""
    built = []
    for cls, kwargs in case.steps:
        if cls.__module__.startswith("torchvision"):
            built.append(cls(**kwargs))
        else:
            built.append(_torchvision(cls, kwargs))
    return v2.Compose(built)


def conveyor_compose(case):
    """The same Compose as conveyor.transforms' (torchvision's own classes for the crops and casts)."""
    return v2.Compose([cls(**kwargs) if cls.__module__.startswith("torchvision") else _ours(cls, kwargs)
                       for cls, kwargs in case.steps])


class _Slow(Exception):
    pass


def _too_slow(signum, frame):
    raise _Slow()


def torchvision_fails(compose, image, tries=12, seconds=5.0):
    """How many of `tries` runs of torchvision's own Compose on `image` raise; None when they take
    longer than `seconds` (arguments such as RandAugment(num_ops=2**31), which torchvision runs for
    hours and conveyor refuses). torch's internal asserts are its bugs, not refusals, and are not
    counted: torch 2.15's uint8 antialiased resize asserts on packed inputs resized to 1 x 1
    (`Resize(1)` of a tall image), which `replay` sidesteps with the same arithmetic."""
    failed = 0
    previous = signal.signal(signal.SIGALRM, _too_slow)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        for k in range(tries):
            torch.manual_seed(k)
            try:
                compose(image)
            except _Slow:
                raise
            except RuntimeError as e:
                failed += "INTERNAL ASSERT FAILED" not in str(e)
            except Exception:  # noqa: BLE001: any error torchvision raises is a refusal
                failed += 1
    except _Slow:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return failed


def replay(image, calls, compose):
    """torchvision's functionals on `image` with conveyor's drawn parameters, then the Compose's ToDtype
    and Normalize (before an erase, which conveyor applies to the output). An erase with conveyor's own
    normal values (a `key`) is returned as a mask of the rectangle, not replayed."""
    tail = [t for t in compose.transforms if isinstance(t, (v2.ToDtype, v2.Normalize))]
    x, finished, keyed = image, False, []
    for name, kwargs in calls:
        if name == "erase" and not finished:
            x, finished = _finish(x, tail), True
        if name == "erase":
            if "key" in kwargs:
                keyed.append((kwargs["i"], kwargs["j"], kwargs["h"], kwargs["w"]))
                continue
            x = F.erase(x, kwargs["i"], kwargs["j"], kwargs["h"], kwargs["w"],
                        torch.tensor(kwargs["v"], dtype=torch.float32)[:, None, None].to(x.dtype))
        elif name in ("resized_crop", "resize"):
            x = getattr(F, name)(_strided(x), **kwargs, antialias=True)
        else:
            if "interpolation" in kwargs:
                kwargs = dict(kwargs, interpolation=F.InterpolationMode(kwargs["interpolation"]))
            x = getattr(F, name)(x, **kwargs)
    return (x if finished else _finish(x, tail)), keyed


def _strided(x):
    """`x`'s values in a tensor whose rows are not packed: torch 2.15's uint8 antialiased resize
    fails an internal assert ("num_channels == unpacked_output.size(0)") on some packed inputs
    resized to 1 x 1 (a RandomResizedCrop that takes the whole image); a crop's view, as torchvision
    resizes it otherwise, takes the same arithmetic without it."""
    wider = torch.zeros(x.shape[:-1] + (x.shape[-1] + 1,), dtype=x.dtype)
    wider[..., :-1] = x
    return wider[..., :-1]


def _finish(x, tail):
    for t in tail:
        x = t(x)
    return x


def run_case(case):
    """'refused' (both refuse the arguments), 'limit' (conveyor cannot run what torchvision runs) or
    'ran'; an AssertionError names what disagrees."""
    try:
        theirs = torchvision_compose(case)
    except Exception:  # noqa: BLE001: torchvision refuses the arguments
        theirs = None
    try:
        augment = conveyor.ImageAugment.from_transforms(conveyor_compose(case))
        augment._native()
    except REFUSED as e:
        if theirs is None:
            return "refused"
        failing = [torchvision_fails(theirs, image) for image in case.images]
        if all(f == 12 for f in failing):
            return "refused"  # torchvision fails on every image: refused where the arguments decide it
        if None in failing:
            return "refused (torchvision runs for hours)"
        return "limit:" + str(e).split(":")[0]
    assert theirs is not None, f"case {case.seed}: torchvision refuses {case.steps}, conveyor accepts them"
    data = conveyor.InMemory()
    for k, image in enumerate(case.images):
        data.add(torchvision.io.encode_png(image).numpy().tobytes(), k)
    failed = set()
    got = [None] * len(case.images)
    for index in range(len(case.images)):  # one sample a loader, so a failure names its sample
        one = conveyor.InMemory()
        one.add(data.read(index), index)
        loader = conveyor.Loader(one, batch_size=1, seed=case.seed, workers=0, transform=augment, output="torch")
        loader.set_epoch(0)
        try:
            (images, _), = list(loader)
            got[index] = images[0].clone()
        except conveyor.SampleError:
            failed.add(index)
    for index, image in enumerate(case.images):
        failures = torchvision_fails(theirs, image)
        assert failures is not None, f"case {case.seed}: torchvision takes too long where conveyor runs: {case.steps}"
        if index in failed:
            assert failures > 0, (f"case {case.seed}: conveyor fails sample {index} ({image.shape[2]} x "
                                  f"{image.shape[1]}), torchvision never does: {case.steps}")
            continue
        assert failures < 12, (f"case {case.seed}: torchvision always fails on sample {index} ({image.shape[2]} x "
                               f"{image.shape[1]}), conveyor does not: {case.steps}")
        calls = augment.drawn_calls(seed=case.seed, epoch=0, index=0, width=image.shape[2], height=image.shape[1])
        with grid_as_conveyor():
            expected, keyed = replay(image, calls, theirs)
        mine = got[index]
        for i, j, h, w in keyed:
            expected[..., i:i + h, j:j + w] = mine[..., i:i + h, j:j + w]
        assert mine.dtype == expected.dtype and mine.shape == expected.shape, (case.seed, mine.shape, expected.shape)
        differing = int((mine != expected).sum()) - int(torch.isnan(mine).logical_and(torch.isnan(expected)).sum())
        assert differing == 0, (f"case {case.seed}, sample {index}: {differing} values differ from torchvision's "
                                f"after {calls}; steps {case.steps}")
    return "ran"


def test_random_composes_equal_torchvision_or_are_refused_as_torchvision_refuses():
    outcomes = {}
    for seed in range(FIRST, FIRST + CASES):
        if os.environ.get("CONVEYOR_FUZZ_VERBOSE"):
            print("case", seed, flush=True)
        outcome = run_case(make_case(seed))
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print("fuzzed composes:", dict(sorted(outcomes.items(), key=lambda kv: -kv[1])))
    assert outcomes.get("ran", 0) >= CASES // 5, f"too few cases ran to compare anything: {outcomes}"
