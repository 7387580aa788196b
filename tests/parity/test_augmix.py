"""AugMix, torchvision's (v2's and v1's) and timm's (`auto_augment="augmix-..."`), on the real
photos: every sample the Loader yields equals torchvision's or timm's own AugMix run on the image
conveyor resampled (the same Compose without it), given conveyor's drawn weights, chain depths and ops
(`ImageAugment.drawn_calls`): their forward's own mixing arithmetic, each op replayed through their
functionals. v1's tensor functionals, where their numbers differ from v2's, against v1's on random
images and on every colour. The draws against torchvision and timm running: chain depths, ops, their
arguments, the weights' distributions. torch 2.15, torchvision 0.29, Pillow 13, timm 1.0 from PyPI:

    python -m pytest tests/parity/test_augmix.py
"""
import collections
import os
import pathlib

import numpy as np
import pytest

from reference import require

torch, torchvision = require()
from PIL import Image  # noqa: E402
from torchvision import transforms as v1  # noqa: E402
from torchvision.transforms import functional as F1  # noqa: E402
from torchvision.transforms import v2  # noqa: E402

import conveyor  # noqa: E402
from distributions import same_categories, same_distribution  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("CONVEYOR_TEST_DATA") or ROOT.parent / "shared" / "data")
SIZE = 48


@pytest.fixture(scope="module")
def photos():
    """Every third photo of the corpus, in memory, with its size."""
    paths = sorted((DATA / "photos").glob("*.jpg"))[::3]
    if not paths:
        pytest.skip(f"real test images not found at {DATA}")
    data = conveyor.InMemory()
    sizes = []
    for k, path in enumerate(paths):
        data.add(path.read_bytes(), k)
        sizes.append(Image.open(path).size)
    return data, sizes


def _chains(calls):
    """The AugMix calls of one sample: its first call's arguments, then each chain's op calls."""
    head, chains = calls[0], []
    for call in calls[1:]:
        if call.function.endswith("augmix_chain"):
            chains.append([])
            assert call.kwargs["depth"] >= 1
        else:
            chains[-1].append(call)
    assert [len(c) for c in chains] == [c.kwargs["depth"] for c in calls[1:] if c.function.endswith("augmix_chain")]
    return head, chains


def _functional(call):
    """`call` as torchvision's v2 functional takes it."""
    kwargs = dict(call.kwargs)
    if "interpolation" in kwargs:
        kwargs["interpolation"] = v2.InterpolationMode(kwargs["interpolation"])
    return lambda image: getattr(v2.functional, call.function)(image, **kwargs)


def _replay_torchvision_augmix(transform, image, calls, monkeypatch, replay_ops):
    """torchvision's AugMix `transform` on the uint8 tensor `image` (on a PIL image it converts to
    this tensor), its Dirichlet weights and chain depths conveyor's; `replay_ops(ops)` patches its
    op application to replay the iterator `ops` of conveyor's drawn calls."""
    head, chains = _chains(calls)
    weights = iter([torch.tensor([head.kwargs["m"]]), torch.tensor([head.kwargs["weights"]])])
    monkeypatch.setattr(transform, "_sample_dirichlet", lambda params: next(weights))
    depths = iter([len(c) for c in chains])
    randint = torch.randint

    def chain_depth(*args, **kwargs):  # forward's `torch.randint(low=1, high=4, size=(1,))`
        return torch.tensor([next(depths)]) if kwargs.get("low") == 1 else randint(*args, **kwargs)

    monkeypatch.setattr(torch, "randint", chain_depth)
    ops = iter(call for chain in chains for call in chain)
    replay_ops(ops)
    try:
        out = transform(image)
    finally:
        monkeypatch.undo()
    assert next(ops, None) is None and (transform.chain_depth > 0 or next(depths, None) is None)
    return out


def _torchvision_augmix(transform, image, calls, monkeypatch):
    """v2's AugMix, its ops through v2's functionals."""
    return _replay_torchvision_augmix(transform, image, calls, monkeypatch, lambda ops: monkeypatch.setattr(
        transform, "_apply_image_or_video_transform", lambda img, *args, **kwargs: _functional(next(ops))(img)))


def _timm_augmix(transform, image, calls, monkeypatch):
    """timm's AugMixAugment `transform` on the PIL `image`, its numpy draws conveyor's and its ops
    conveyor's drawn calls through timm's functions."""
    from test_pil_vs_torchvision import _timm_op
    head, chains = _chains(calls)
    chain_ops = iter([[lambda img, c=c: _timm_op(img, c.function[len("timm."):], dict(c.kwargs)) for c in chain]
                      for chain in chains])
    depths = iter([len(c) for c in chains])
    monkeypatch.setattr(np.random, "dirichlet", lambda alpha: np.array(head.kwargs["mixing_weights"]))
    monkeypatch.setattr(np.random, "beta", lambda a, b: head.kwargs["m"])
    monkeypatch.setattr(np.random, "randint", lambda low, high: next(depths))
    monkeypatch.setattr(np.random, "choice", lambda ops, depth, replace: next(chain_ops))
    try:
        out = transform(image)
    finally:
        monkeypatch.undo()
    assert next(chain_ops, None) is None
    return out


def _loader_images(data, compose, seed, epoch):
    loader = conveyor.Loader(data, batch_size=64, seed=seed, workers=2, transform=compose, output="torch")
    loader.set_epoch(epoch)
    return [image.clone() for images, _ in loader for image in images]


def _check(photos, monkeypatch, geometry, augmix, tail, replay, seeds=(0, 9), epochs=2, pil=False):
    """Every sample of `geometry + [augmix] + tail` equals `replay(augmix, resampled image, its calls)`,
    the resampled image being what `geometry + tail` yields for it."""
    data, sizes = photos
    compose_type = v1.Compose if pil else v2.Compose
    with_augmix, plain = compose_type(geometry + [augmix] + tail), compose_type(geometry + tail)
    calls_of = conveyor.ImageAugment.from_transforms(with_augmix, image_backend="pil" if pil else "tensor")
    geometry_of = conveyor.ImageAugment.from_transforms(plain, image_backend="pil" if pil else "tensor")
    ran = collections.Counter()
    for seed in seeds:
        for epoch in range(epochs):
            resampled = _loader_images(data, plain, seed, epoch)
            ours = _loader_images(data, with_augmix, seed, epoch)
            for index, ((w, h), image, got) in enumerate(zip(sizes, resampled, ours)):
                calls = calls_of.drawn_calls(seed, epoch, index, w, h)
                calls = calls[len(geometry_of.drawn_calls(seed, epoch, index, w, h)):]
                expected = replay(augmix, image, calls, monkeypatch)
                if isinstance(expected, Image.Image):
                    expected = torch.from_numpy(np.asarray(expected).copy()).permute(2, 0, 1)
                ran.update(c.function for c in calls)
                assert torch.equal(got, expected), (
                    f"seed {seed} epoch {epoch} sample {index}: {int((got != expected).sum())} values differ; {calls}")
    return ran


V2_AUGMIX = {
    "default": lambda: v2.AugMix(),
    "severity 10, 2 chains of 3, alpha 0.5, nearest, filled": lambda: v2.AugMix(
        severity=10, mixture_width=2, chain_depth=3, alpha=0.5, interpolation=v2.InterpolationMode.NEAREST,
        fill=[10, 200, 30]),
    "partial ops, bilinear, filled": lambda: v2.AugMix(severity=6, all_ops=False, fill=77),
}


@pytest.mark.parametrize("name", sorted(V2_AUGMIX))
def test_v2_augmix_equals_torchvision_on_the_drawn_weights_and_ops(photos, monkeypatch, name):
    ran = _check(photos, monkeypatch, [v2.ToImage(), v2.Resize(SIZE + 8), v2.CenterCrop(SIZE)], V2_AUGMIX[name](),
                 [], _torchvision_augmix)
    assert ran["augmix"] > 0 and {"affine", "rotate", "posterize", "solarize", "equalize"} <= set(ran), ran


V1_FUNCTIONALS = [("adjust_saturation", "saturation_factor", (0.0, 0.3, 0.5, 1.7)),
                  ("adjust_contrast", "contrast_factor", (0.0, 0.3, 1.9)),
                  ("adjust_sharpness", "sharpness_factor", (0.0, 0.1, 0.9, 1.6)),
                  ("autocontrast", None, (None,))]


def _v1_ours(image, name, kwargs):
    """conveyor's v1 functional `name` on the uint8 CHW tensor `image`."""
    c, h, w = image.shape
    hwc = image.permute(1, 2, 0).contiguous().numpy().tobytes()
    out = conveyor._conveyor._apply_pixel_program(hwc, w, h, [(name, kwargs)], v1=True)
    return torch.frombuffer(bytearray(out), dtype=torch.uint8).view(h, w, 3).permute(2, 0, 1)


@pytest.mark.parametrize("name,argument,factors", V1_FUNCTIONALS, ids=[f[0] for f in V1_FUNCTIONALS])
def test_v1_tensor_functionals_equal_torchvisions_where_they_differ_from_v2s(name, argument, factors):
    """v1's saturation, contrast, sharpness and autocontrast (their blends, greys and scales round
    otherwise than v2's) on random images from 1 x 1 up, narrow-range ones, and every colour."""
    g = torch.Generator().manual_seed(5)
    images = [torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=g)
              for h, w in [(1, 1), (2, 2), (3, 3), (1, 7), (5, 2), (31, 47), (64, 64)]]
    images += [(x // 5 + 90).to(torch.uint8) for x in images[-2:]]
    v = torch.arange(256, dtype=torch.uint8)
    colours = torch.stack([v.view(256, 1, 1).expand(256, 256, 256), v.view(1, 256, 1).expand(256, 256, 256),
                           v.view(1, 1, 256).expand(256, 256, 256)]).reshape(3, 4096, 4096)
    if name == "adjust_saturation":
        images.append(colours)  # a point op: every colour, the 21 whose greys differ among them
    differs = False
    for image in images:
        for factor in factors:
            kwargs = {} if argument is None else {argument: factor}
            expected = getattr(F1, name)(image, *([] if factor is None else [factor]))
            assert torch.equal(_v1_ours(image, name, kwargs), expected), (name, factor, tuple(image.shape))
            differs = differs or not torch.equal(expected, getattr(v2.functional, name)(image, **kwargs))
    assert differs, f"v1's {name} equals v2's on every case: the test shows nothing"


def test_v1_affine_and_rotate_on_tensors_take_v1s_matrix_and_fill_blend():
    """v1's affine and rotate on tensors: v1's matrix (rotate's of the angle as given, no shortcuts)
    and, with a fill, v1's bilinear blend `v * mask + (1 - mask) * fill`."""
    g = torch.Generator().manual_seed(8)
    differs = False
    for k in range(200):  # v1's blend rounds otherwise a value or two in 200 images of 48 x 48
        h, w = (int(torch.randint(1, 40, (1,), generator=g)), int(torch.randint(1, 40, (1,), generator=g))) if k < 20 \
            else (48, 48)
        image = torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=g)
        fill = None if k % 7 == 0 else [float(v) for v in torch.randint(0, 256, (3,), generator=g)]
        mode = v1.InterpolationMode.BILINEAR if k % 4 else v1.InterpolationMode.NEAREST
        angle = float(torch.rand(1, generator=g)) * 60 - 30 if k % 5 else 180.0
        shear = [float(torch.rand(1, generator=g)) * 40 - 20, 0.0]
        calls = [("rotate", {"angle": angle}), ("affine", {"angle": 0.0, "translate": [k % 7 - 3, 0], "scale": 1.0,
                                                            "shear": shear, "center": [0, 0]})]
        for name, kwargs in calls:
            kwargs = dict(kwargs, interpolation=mode.value, fill=fill)
            theirs = getattr(F1, name)(image, **dict(kwargs, interpolation=mode))
            assert torch.equal(_v1_ours(image, name, kwargs), theirs), (name, kwargs, (h, w))
            differs = differs or not torch.equal(theirs, getattr(v2.functional, name)(
                image, **dict(kwargs, interpolation=mode)))
    assert differs, "v1's affine and rotate equal v2's on every case: the test shows nothing"


def _v1_op(call):
    """`call` through torchvision v1's functional (transforms.functional)."""
    kwargs = dict(call.kwargs)
    if "interpolation" in kwargs:
        kwargs["interpolation"] = v1.InterpolationMode(kwargs["interpolation"])
    return lambda image: getattr(F1, call.function)(image, **kwargs)


def _torchvision_v1_augmix(transform, image, calls, monkeypatch):
    """v1's AugMix, its ops through v1's functionals (autoaugment.py's `_apply_op`)."""
    from torchvision.transforms import autoaugment
    return _replay_torchvision_augmix(transform, image, calls, monkeypatch, lambda ops: monkeypatch.setattr(
        autoaugment, "_apply_op", lambda img, *args, **kwargs: _v1_op(next(ops))(img)))


V1_AUGMIX = {
    "default": lambda: v1.AugMix(),
    "severity 6, bilinear, filled": lambda: v1.AugMix(severity=6, fill=[90, 20, 240]),
    "severity 10, 2 chains of 3, nearest, filled": lambda: v1.AugMix(
        severity=10, mixture_width=2, chain_depth=3, alpha=0.5, interpolation=v1.InterpolationMode.NEAREST,
        fill=[10, 200, 30]),
}


@pytest.mark.parametrize("name", sorted(V1_AUGMIX))
@pytest.mark.parametrize("backend", ["pil", "tensor"])
def test_v1_augmix_equals_torchvision_on_the_drawn_weights_and_ops(photos, monkeypatch, name, backend):
    """The classification reference's AugMix without --use-v2 (on PIL images), and on tensors."""
    if backend == "pil":
        geometry, tail = [v1.Resize(SIZE + 8), v1.CenterCrop(SIZE)], [v1.PILToTensor()]
    else:
        geometry, tail = [v2.ToImage(), v2.Resize(SIZE + 8), v2.CenterCrop(SIZE)], []
    ran = _check(photos, monkeypatch, geometry, V1_AUGMIX[name](), tail, _torchvision_v1_augmix, pil=backend == "pil")
    assert ran["augmix"] > 0 and {"affine", "rotate", "adjust_saturation", "adjust_sharpness"} <= set(ran), ran


def test_v1_augmix_draws_v1s_magnitudes(monkeypatch):
    """Each op's arguments as v1's AugMix gives them (Solarize at linspace(255, 0), not v2's 255 x
    linspace(1, 0); its signs by torch.randint(2)): the same values, running, as conveyor draws."""
    from torchvision.transforms import autoaugment
    torch.manual_seed(0)
    transform = v1.AugMix(severity=10)
    theirs = collections.defaultdict(set)
    monkeypatch.setattr(autoaugment, "_apply_op", lambda img, op, magnitude, **kwargs: (
        theirs[op].add(magnitude), img)[1])
    image = torch.randint(0, 256, (3, 24, 24), dtype=torch.uint8)
    for _ in range(600):
        transform(image)
    monkeypatch.undo()
    augment = conveyor.ImageAugment(crop="center", size=24, dtype="u8",
                                    transforms=[conveyor.transforms.AugMix(severity=10, v1=True)])
    ours = collections.defaultdict(set)
    for i in range(600):
        for c in augment.drawn_calls(seed=2, epoch=0, index=i, width=24, height=24):
            ours[c.function].add(c.kwargs.get("threshold", c.kwargs.get("angle", c.kwargs.get("bits"))))
    assert ours["solarize"] == theirs["Solarize"] and len(ours["solarize"]) == 10
    assert ours["rotate"] == theirs["Rotate"] and len(ours["rotate"]) == 19  # 0 and -0 alike
    assert ours["posterize"] == {int(m) for m in theirs["Posterize"]}


def _timm_transform(config, **hparams):
    aa = pytest.importorskip("timm.data.auto_augment")
    return aa.augment_and_mix_transform(config, dict({"translate_pct": 0.3, "img_mean": (124, 116, 104)}, **hparams))


TIMM_AUGMIX = ["augmix-m5-w3", "augmix-m3-w2-d2-b1", "augmix-m9-w4-d1-a0.5-mstd0.5"]


@pytest.mark.parametrize("config", TIMM_AUGMIX)
def test_timm_augmix_equals_timm_on_the_drawn_weights_and_ops(photos, monkeypatch, config):
    augmix = _timm_transform(config) if config != TIMM_AUGMIX[2] else _timm_transform(
        config, interpolation=Image.Resampling.BICUBIC)
    ran = _check(photos, monkeypatch, [v1.Resize(SIZE + 8), v1.CenterCrop(SIZE)], augmix, [v1.PILToTensor()],
                 lambda t, image, calls, patch: _timm_augmix(t, F1.to_pil_image(image), calls, patch), pil=True)
    assert {"timm.rotate", "timm.shear_x", "timm.posterize", "timm.color"} <= set(ran), ran


def test_timms_create_transform_with_augmix_runs_unchanged(photos):
    timm_data = pytest.importorskip("timm.data")
    data, _ = photos
    transform = timm_data.create_transform(64, is_training=True, auto_augment="augmix-m5-w4-d2", re_prob=0.25)
    (images, _), = list(conveyor.Loader(data, batch_size=64, seed=3, workers=2, transform=transform, output="torch"))
    assert images.shape[1:] == (3, 64, 64) and images.dtype == torch.float32


# The draws against torchvision and timm running.

N = 3000
OP_OF = {"ShearX": "affine", "ShearY": "affine", "TranslateX": "affine", "TranslateY": "affine", "Rotate": "rotate",
         "Posterize": "posterize", "Solarize": "solarize", "AutoContrast": "autocontrast", "Equalize": "equalize",
         "Brightness": "adjust_brightness", "Color": "adjust_saturation", "Contrast": "adjust_contrast",
         "Sharpness": "adjust_sharpness"}


def test_v2_augmix_draws_as_torchvision(monkeypatch):
    torch.manual_seed(0)
    transform = v2.AugMix(severity=4)
    image = torch.randint(0, 256, (3, 24, 24), dtype=torch.uint8)
    m, w, depths, applied = [], [], [], []
    sample, randint = transform._sample_dirichlet, torch.randint

    def dirichlet(params):
        out = sample(params)
        (m if params.shape[-1] == 2 else w).append(out)
        return out

    def chain_depth(*args, **kwargs):
        out = randint(*args, **kwargs)
        if kwargs.get("low") == 1:
            depths.append(int(out))
        return out

    monkeypatch.setattr(transform, "_sample_dirichlet", dirichlet)
    monkeypatch.setattr(transform, "_apply_image_or_video_transform",
                        lambda img, op, magnitude, **kwargs: (applied.append((op, magnitude)), img)[1])
    monkeypatch.setattr(torch, "randint", chain_depth)
    for _ in range(N):
        transform(image)
    monkeypatch.undo()
    augment = conveyor.ImageAugment(crop="center", size=24, dtype="u8",
                                    transforms=[conveyor.transforms.AugMix(severity=4)])
    our_m, our_w, our_depths, ours = [], [], [], []
    for i in range(N):
        head, chains = _chains([c for c in augment.drawn_calls(seed=4, epoch=0, index=i, width=24, height=24)
                                if c.function != "center_crop"])
        our_m.append(head.kwargs["m"][0])
        our_w += [float(np.float32(x) * np.float32(head.kwargs["m"][1])) for x in head.kwargs["weights"]]
        our_depths += [len(c) for c in chains]
        ours += [c for chain in chains for c in chain]
    same_distribution([float(x[0, 0]) for x in m], our_m, "AugMix: the image's weight", alpha=1e-4)
    same_distribution([float(x) for t, s in zip(w, m) for x in (t * s[:, 1:])[0]], our_w, "AugMix: the chains' weights",
                      alpha=1e-4)
    same_categories(depths, our_depths, "AugMix: chain depth", categories=3)
    same_categories([OP_OF[op] for op, _ in applied], [c.function for c in ours], "AugMix: op", categories=10)
    # the magnitudes at bins 0 to 3 of 10, signed ops negated half the time: as each op's call takes them
    for op, function, argument, value, categories in [
            ("Rotate", "rotate", "angle", lambda x: x, 7), ("Posterize", "posterize", "bits", int, 2),
            ("Brightness", "adjust_brightness", "brightness_factor", lambda x: 1.0 + x, 7),
            ("Solarize", "solarize", "threshold", lambda x: 255.0 * x, 4)]:
        same_categories([round(value(x), 4) for o, x in applied if o == op],
                        [round(c.kwargs[argument], 4) for c in ours if c.function == function],
                        f"AugMix: {function}'s {argument}", categories=categories)


def test_timm_augmix_draws_as_timm(monkeypatch):
    pytest.importorskip("timm.data.auto_augment")
    from test_timm_draws import theirs as timm_calls
    transform = _timm_transform("augmix-m5-w3")
    weights, ms, depths = [], [], []
    dirichlet, beta, randint = np.random.dirichlet, np.random.beta, np.random.randint
    monkeypatch.setattr(np.random, "dirichlet", lambda a: (weights.append(out := dirichlet(a)), out)[1])
    monkeypatch.setattr(np.random, "beta", lambda a, b: (ms.append(out := beta(a, b)), out)[1])
    monkeypatch.setattr(np.random, "randint", lambda lo, hi: (depths.append(out := randint(lo, hi)), out)[1])
    a = timm_calls(transform, monkeypatch, n=N)  # undoes the patches when done
    augment = conveyor.ImageAugment(crop="center", size=16, dtype="u8", pil_transforms=1,
                                    transforms=[conveyor._compose._ours(transform, "t")])
    b, our_w, our_m, our_depths = [], [], [], []
    for i in range(N):
        head, chains = _chains([c for c in augment.drawn_calls(seed=7, epoch=0, index=i, width=16, height=16)
                                if c.function != "center_crop"])
        b.append([(c.function, c.kwargs) for chain in chains for c in chain])
        our_w += head.kwargs["mixing_weights"]
        our_m.append(head.kwargs["m"])
        our_depths += [len(c) for c in chains]
    same_distribution([float(w) for ws in weights for w in ws], our_w, "timm AugMix: mixing weights", alpha=1e-4)
    same_distribution([float(m) for m in ms], our_m, "timm AugMix: m", alpha=1e-4)
    same_categories(depths, our_depths, "timm AugMix: chain depth", categories=3)
    flat_a, flat_b = [c for run in a for c in run], [c for run in b for c in run]
    same_categories([n for n, _ in flat_a], [n for n, _ in flat_b], "timm AugMix: op", categories=10)
    same_categories([k.get("resample") for _, k in flat_a], [k.get("resample") for _, k in flat_b],
                    "timm AugMix: resample")
    for name in sorted({n for n, _ in flat_a}):
        values = [v for n, k in flat_a if n == name for key, v in k.items() if key not in ("fillcolor", "resample")]
        if values:
            same_distribution(values, [v for n, k in flat_b if n == name for key, v in k.items()
                                       if key not in ("fillcolor", "resample")], f"timm AugMix: {name}", alpha=1e-5)
