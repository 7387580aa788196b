"""conveyor's pixel ops on PIL images (include/conveyor/ops/pixel/pil_*.hpp, and the tensor ops whose
results Pillow shares: invert, posterize, equalize, gaussian_blur) against torchvision's functionals
on PIL images, v1's and v2's (Pillow's ImageEnhance, ImageOps and convert), bit for bit: random
images from 1 x 1 up, every one of the 2^24 colours for the ops that work per pixel, and the real
photos, with factors at their edges. conveyor runs through the CPU executor; the GPU tests hold the
kernel to it. Pillow 13 and torchvision 0.29 from PyPI:

    python -m pytest tests/parity/test_pil_ops.py
"""
import pathlib

import numpy as np
import pytest

from reference import require

torch, torchvision = require()
PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402
from torchvision.transforms import functional as F1  # noqa: E402
from torchvision.transforms.v2 import functional as F2  # noqa: E402

from conveyor import _conveyor  # noqa: E402

FACTORS = (0.0, 0.25, 0.5, 0.999, 1.0, 1.001, 1.37, 2.0, 3.9)
OPS = {
    "adjust_brightness": [{"brightness_factor": f} for f in FACTORS],
    "adjust_contrast": [{"contrast_factor": f} for f in FACTORS],
    "adjust_saturation": [{"saturation_factor": f} for f in FACTORS],
    "adjust_sharpness": [{"sharpness_factor": f} for f in FACTORS],
    "adjust_hue": [{"hue_factor": f} for f in (-0.5, -0.4999, -0.21, -0.0039, 0.0, 0.0039, 0.07, 0.3, 0.5)],
    "rgb_to_grayscale": [{"num_output_channels": 3}],
    "autocontrast": [{}],
    "equalize": [{}],
    "invert": [{}],
    "posterize": [{"bits": b} for b in (1, 3, 7, 8)],
    "solarize": [{"threshold": t} for t in (0, 1, 100.5, 128, 254.99999, 255)],
    "gaussian_blur": [{"kernel_size": [3, 3], "sigma": [0.7, 0.7]}, {"kernel_size": [5, 9], "sigma": [1.3, 2.1]}],
    # Image.rotate: its shortcuts (0, 180, and 90 / 270 on squares), the fixed-point engine, bilinear
    "rotate": [{"angle": a, "interpolation": i} for a in (0.0, 90.0, 180.0, -90.0, 33.3, -127.1, 359.9, 1e-9, 720.0)
               for i in ("nearest", "bilinear", "bicubic")] + [
        {"angle": 12.5, "interpolation": "nearest", "fill": [10.0, 200.0, 30.7]},
        {"angle": 90.0, "interpolation": "bilinear", "fill": [255.0, 0.0, 9.0], "center": [3.0, 5.0]},
        {"angle": -45.0, "interpolation": "nearest", "center": [0.0, 0.0]},
        {"angle": 21.7, "interpolation": "bicubic", "fill": [124.0, 116.0, 104.0]},
        {"angle": -3.3, "interpolation": "bicubic", "center": [1.0, 2.5]}],
    # Image.transform with v2's matrix: the scale, fixed-point, stepped (far outside) and bilinear engines
    "affine": [
        {"angle": 17.5, "translate": [3, -2], "scale": 1.1, "shear": [5.0, -3.0], "interpolation": i}
        for i in ("nearest", "bilinear", "bicubic")] + [
        {"angle": 0.0, "translate": [1, 2], "scale": 0.8, "shear": [0.0, 0.0], "interpolation": "nearest"},
        {"angle": 0.0, "translate": [5, 0], "scale": 1.0, "shear": [0.0, 0.0], "interpolation": "nearest",
         "fill": [1.0, 2.0, 3.0]},
        {"angle": 0.0, "translate": [0, 0], "scale": 1.0, "shear": [20.0, 0.0], "interpolation": "nearest",
         "center": [0.0, 0.0]},
        {"angle": 3.0, "translate": [40000, 7], "scale": 1.0, "shear": [0.0, 0.0], "interpolation": "nearest"},
        {"angle": -61.0, "translate": [0, 0], "scale": 1.7, "shear": [-10.0, 25.0], "interpolation": "bilinear",
         "fill": [99.0, 98.0, 97.0], "center": [-4.0, 100.5]},
        {"angle": 40.0, "translate": [-2, 3], "scale": 0.6, "shear": [12.0, -7.0], "interpolation": "bicubic",
         "fill": [0.0, 255.0, 128.0]}],
}
PER_PIXEL = ("adjust_brightness", "adjust_saturation", "adjust_hue", "rgb_to_grayscale", "invert", "posterize",
             "solarize")
CASES = [(name, kwargs) for name, calls in OPS.items() for kwargs in calls]


def ours(array, name, kwargs):
    h, w, _ = array.shape
    out = _conveyor._apply_pixel_program(array.tobytes(), w, h, [(name, kwargs)], pil=True)
    return np.frombuffer(out, dtype=np.uint8).reshape(h, w, 3)


def theirs(array, name, kwargs, functional):
    image = Image.fromarray(array)
    if "interpolation" in kwargs:
        kwargs = dict(kwargs, interpolation=F2.InterpolationMode(kwargs["interpolation"]))
    if name == "rgb_to_grayscale" and functional is F1:
        return np.asarray(F1.rgb_to_grayscale(image, **kwargs))
    return np.asarray(getattr(functional, name)(image, **kwargs))


def assert_same(array, name, kwargs):
    got = ours(array, name, kwargs)
    # v1's gaussian_blur computes its kernel otherwise (exp, not softmax), v1's affine its matrix (in another
    # order): conveyor runs v2's, also on PIL images
    for functional in (F2,) if name in ("gaussian_blur", "affine") else (F1, F2):
        expected = theirs(array, name, kwargs, functional)
        assert expected.shape == got.shape
        differing = np.argwhere(expected != got)
        assert len(differing) == 0, (
            f"{name}({kwargs}) on {array.shape[1]} x {array.shape[0]} ({functional.__name__}): {len(differing)} values "
            f"differ, first at {tuple(differing[0])}: {got[tuple(differing[0])]} against {expected[tuple(differing[0])]}")


@pytest.fixture(scope="module")
def noise():
    rng = np.random.default_rng(61)
    sizes = [(1, 1), (2, 1), (1, 3), (2, 2), (3, 3), (4, 3), (3, 7), (17, 5), (64, 48), (131, 97)]
    images = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for w, h in sizes]
    flat = np.full((5, 6, 3), 77, dtype=np.uint8)  # one value: the statistics' degenerate cases
    narrow = rng.integers(100, 104, (9, 11, 3), dtype=np.uint8)  # few values, close together
    return images + [flat, narrow]


@pytest.fixture(scope="module")
def every_colour():
    """The 2^24 colours, one pixel each, 4096 x 4096."""
    v = np.arange(1 << 24, dtype=np.uint32)
    return np.stack([(v >> 16) & 255, (v >> 8) & 255, v & 255], axis=-1).astype(np.uint8).reshape(4096, 4096, 3)


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_an_op_on_random_images_from_1x1(noise, name, kwargs):
    for array in noise:
        if name == "gaussian_blur" and min(array.shape[:2]) <= max(kwargs["kernel_size"]) // 2:
            continue  # torch's reflect padding needs more than the kernel's half size (refused, as its own test says)
        assert_same(array, name, kwargs)


# on every colour: each per-pixel op's first, middle and last arguments (16 M pixels a call)
EVERY_COLOUR = [(name, OPS[name][k]) for name in PER_PIXEL for k in sorted({0, len(OPS[name]) // 2, len(OPS[name]) - 1})]


@pytest.mark.parametrize("name,kwargs", EVERY_COLOUR, ids=[f"{n}-{k}" for n, k in EVERY_COLOUR])
def test_a_per_pixel_op_on_every_colour(every_colour, name, kwargs):
    assert_same(every_colour, name, kwargs)


def test_an_op_on_the_photos(photos):
    paths = sorted(pathlib.Path(photos).rglob("*.jpg"))[:12]
    assert paths
    for k, path in enumerate(paths):
        array = np.asarray(Image.open(path).convert("RGB").resize((160 + k, 120 + 2 * k), Image.BILINEAR))
        for name, kwargs in CASES[k % 3::3]:
            assert_same(array, name, kwargs)


# Image.transform(size, AFFINE, matrix) with timm's matrices (its shears, fractional translations in
# pixels) and others, each filter, fill or none
MATRICES = [(1.0, 0.27, 0.0, 0.0, 1.0, 0.0), (1.0, 0.0, 0.0, -0.3, 1.0, 0.0), (1.0, 0.0, -13.37, 0.0, 1.0, 0.0),
            (1.0, 0.0, 0.0, 0.0, 1.0, 0.4999), (0.9, -0.2, 3.25, 0.15, 1.1, -2.5), (1.0, 0.0, 0.0, 0.0, 1.0, 0.0)]


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear", "bicubic"])
def test_image_transform_with_a_matrix_on_random_images_and_the_photos(noise, photos, interpolation):
    resample = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC}[interpolation]
    arrays = noise + [np.asarray(Image.open(p).convert("RGB").resize((97 + k, 71 + k), Image.BILINEAR))
                      for k, p in enumerate(sorted(pathlib.Path(photos).rglob("*.jpg"))[:3])]
    for array in arrays:
        h, w, _ = array.shape
        for m in MATRICES:
            for fill in (None, (124, 116, 104)):
                kwargs = {"matrix": list(m), "interpolation": interpolation}
                if fill:
                    kwargs["fill"] = [float(v) for v in fill]
                got = ours(array, "transform_affine", kwargs)
                expected = np.asarray(Image.fromarray(array).transform((w, h), Image.AFFINE, m, resample,
                                                                        fillcolor=fill))
                assert np.array_equal(got, expected), (
                    f"{m} {interpolation} fill {fill} on {w} x {h}: {(got != expected).sum()} values differ")


def test_timms_solarize_add_on_every_colour(every_colour):
    """timm's solarize_add (Image.point with its table) at its levels' ends and between."""
    aa = pytest.importorskip("timm.data.auto_augment")
    for add in (0, 1, 57, 110, 128):
        for thresh in (128, 0, 256, 200):
            got = ours(every_colour, "solarize_add", {"add": add, "thresh": thresh})
            expected = np.asarray(aa.solarize_add(Image.fromarray(every_colour), add, thresh))
            assert np.array_equal(got, expected), (add, thresh)


def test_an_op_pillow_does_not_run_on_its_images_is_refused():
    with pytest.raises(_conveyor.ConfigError, match="no pixel op 'erase' on PIL images"):
        _conveyor._apply_pixel_program(bytes(12), 2, 2, [("erase", {"i": 0, "j": 0, "h": 1, "w": 1, "v": 0.0})],
                                       pil=True)
    with pytest.raises(_conveyor.ConfigError, match=r"adjust_hue: hue_factor must be in \[-0.5, 0.5\]"):
        _conveyor._apply_pixel_program(bytes(12), 2, 2, [("adjust_hue", {"hue_factor": 0.6})], pil=True)


def _exact_zero_coefficient(start, end):
    """Whether the exact solution of torchvision's system for the corners has a coefficient 0; None
    where the system has no unique solution."""
    from fractions import Fraction
    rows = []
    for (ex, ey), (sx, sy) in zip(end, start):
        rows.append([ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey, sx])
        rows.append([0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey, sy])
    a = [[Fraction(v) for v in row] for row in rows]
    for k in range(8):
        pivot = next((r for r in range(k, 8) if a[r][k] != 0), None)
        if pivot is None:
            return None
        a[k], a[pivot] = a[pivot], a[k]
        for r in range(8):
            if r != k and a[r][k] != 0:
                f = a[r][k] / a[k][k]
                a[r] = [x - f * y for x, y in zip(a[r], a[k])]
    return any(a[k][8] == 0 for k in range(8))


def _collinear(points):
    """Whether three of the four points lie on a line (or two coincide): no unique map."""
    return any((points[b][0] - points[a][0]) * (points[c][1] - points[a][1]) ==
               (points[b][1] - points[a][1]) * (points[c][0] - points[a][0])
               for a, b, c in ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)))


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear", "bicubic"])
def test_perspective_on_random_images_and_the_photos(noise, photos, interpolation):
    """Image.transform(PERSPECTIVE) from the corners, as v1's and v2's perspective call it (torchvision
    solving the coefficients with LAPACK), on images from 2 x 2 up and the photos, corners drawn as
    RandomPerspective draws them and outside the image: equal. Where a coefficient is exactly 0 (the
    corners themselves, or moved along an axis alike) LAPACK leaves a residue of about 1e-15 that
    Pillow's double arithmetic keeps, and which depends on the machine's MKL: a sample exactly on a
    pixel boundary then truncates the other way in torchvision (conveyor uses the exact 0: a bilinear or bicubic
    value a level apart, a nearest one the neighbour's). Those maps are held to a level (bilinear, bicubic)
    and to 2 % of the values (nearest), and counted."""
    rng = np.random.default_rng(23)
    arrays = [a for a in noise if min(a.shape[:2]) >= 5]  # smaller ones: maps too ill-conditioned to compare
    arrays += [np.asarray(Image.open(p).convert("RGB").resize((150 + k, 110 + 3 * k), Image.BILINEAR))
               for k, p in enumerate(sorted(pathlib.Path(photos).rglob("*.jpg"))[:6])]
    exact = with_zero = 0
    for array in arrays:
        h, w, _ = array.shape
        start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
        ends = [start, [[-3, 2], [w + 4, -1], [w - 1, h + 5], [1, h - 2]], [[2, 1], [w + 1, 1], [w + 1, h], [2, h]]]
        for distortion in (0.3, 0.5, 1.0):
            bw, bh = int(distortion * (w // 2)) + 1, int(distortion * (h // 2)) + 1
            r = lambda lo, hi: int(rng.integers(lo, hi))  # noqa: E731
            ends.append([[r(0, bw), r(0, bh)], [r(w - bw, w), r(0, bh)], [r(w - bw, w), r(h - bh, h)],
                         [r(0, bw), r(h - bh, h)]])
        for end in ends:
            if _collinear(end):
                continue  # no unique map (tiny images): refused, as test_pixel_ops.py checks
            zero = _exact_zero_coefficient(start, end)
            if zero is None:
                continue  # the drawn corners' origin on the map's horizon: no unique solution either
            for fill in (None, [10.0, 200.0, 30.7]):
                kwargs = {"startpoints": start, "endpoints": end, "interpolation": interpolation, "fill": fill}
                if not zero:
                    assert_same(array, "perspective", kwargs)
                    exact += 1
                    continue
                got = ours(array, "perspective", kwargs).astype(int)
                for functional in (F1, F2):
                    expected = theirs(array, "perspective", kwargs, functional).astype(int)
                    difference = np.abs(got - expected)
                    if interpolation != "nearest":  # continuous in the position: a level at most
                        assert difference.max() <= 1, (w, h, end)
                    else:  # a sample exactly on a boundary between pixels
                        assert (difference > 0).mean() <= 0.02, (w, h, end)
                with_zero += 1
    print(f"perspective on PIL images: {exact} maps equal, {with_zero} with a zero coefficient within the bounds")
    assert exact > with_zero > 0
