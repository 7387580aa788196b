"""conveyor's pixel ops (include/conveyor/ops/pixel/) against torchvision.transforms.v2.functional on
uint8 images, bit for bit: the real photos (decoded as torchvision.io.decode_image(mode=RGB) decodes
them, resized by torchvision to 224 x 224 and odd sizes), every colour or value where an op works
per pixel, parameters at their edges. conveyor runs through the CPU executor
(`_conveyor._apply_pixel_program`, ops named and spelt as torchvision's functionals); the GPU test
(tests/cuda/test_gpu_pixel_program.cu) holds the kernel to the CPU executor.

The claims are for torch 2.15 / torchvision 0.29 on x86-64 (torch's AVX-512 kernels; affine's grid
in the order affine_grid.py says): install them from PyPI beside the package and run

    python -m pytest tests/parity/test_pixel_ops.py

Older versions are skipped, not compared.
"""
import glob
import math
import os
import pathlib

import numpy as np
import pytest

from reference import gaussian_noise, require

torch, torchvision = require()
F = pytest.importorskip("torchvision.transforms.v2.functional")
from affine_grid import grid_as_conveyor, torch_fuses_the_grid  # noqa: E402
from conveyor import _conveyor  # noqa: E402


ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("CONVEYOR_TEST_DATA") or ROOT.parent / "shared" / "data")
NEAREST, BILINEAR = F.InterpolationMode.NEAREST, F.InterpolationMode.BILINEAR


def conveyor(image, *ops, dtype="u8", layout="nhwc", mean=None, std=None, torchvision_rounding=False):
    """`image` (uint8 CHW tensor) through conveyor's ops [(name, kwargs)]: a CHW tensor (u8) or the
    raw output array (other dtypes) in `layout`."""
    _, h, w = image.shape
    hwc = image.permute(1, 2, 0).contiguous().numpy().tobytes()
    out = _conveyor._apply_pixel_program(hwc, w, h, list(ops), dtype=dtype, layout=layout, mean=mean, std=std,
                                         torchvision_rounding=torchvision_rounding)
    np_dtype = {"u8": np.uint8, "f32": np.float32, "f16": np.float16, "bf16": np.uint16}[dtype]
    array = np.frombuffer(out, dtype=np_dtype)
    if dtype != "u8":
        return array.reshape((3, h, w) if layout == "nchw" else (h, w, 3))
    return torch.from_numpy(array.copy().reshape(h, w, 3)).permute(2, 0, 1)


def torchvision_mode(kwargs):
    """torchvision's spelling of the kwargs conveyor takes by name."""
    kwargs = dict(kwargs)
    if "interpolation" in kwargs:
        kwargs["interpolation"] = {"nearest": NEAREST, "bilinear": BILINEAR}[kwargs["interpolation"]]
    return kwargs


def assert_same(name, kwargs, image):
    ours = conveyor(image, (name, kwargs))
    with grid_as_conveyor():  # affine_grid.py: the grid's order, which the BLAS decides on some CPUs
        theirs = getattr(F, name)(image, **torchvision_mode(kwargs))
    differing = int((ours != theirs).sum())
    assert differing == 0, f"{name}({kwargs}) on {tuple(image.shape)}: {differing} values differ"


@pytest.fixture(scope="module")
def photos():
    """Every fourth of the real photos (and the grayscale one), decoded as torchvision decodes them,
    resized by torchvision (antialiased) to 224 x 224, 199 x 301 and 37 x 53, and one 375 x 500."""
    paths = sorted(glob.glob(str(DATA / "photos" / "*.jpg")))
    if not paths:
        pytest.skip(f"real test images not found at {DATA}")
    paths = sorted(set(paths[::4]) | {p for p in paths if "grayscale" in p})
    images = []
    for k, path in enumerate(paths):
        decoded = torchvision.io.decode_image(path, mode=torchvision.io.ImageReadMode.RGB)
        for size in ([224, 224], [199, 301], [37, 53]) + (([375, 500],) if k % 5 == 0 else ()):
            images.append(F.resize(decoded, size, antialias=True).contiguous())
    return images


def every_colour():
    v = torch.arange(1 << 24, dtype=torch.int64)
    return torch.stack([(v >> 16) & 255, (v >> 8) & 255, v & 255]).to(torch.uint8).reshape(3, 4096, 4096)


def every_value():
    return torch.arange(256, dtype=torch.uint8).repeat(3, 1).reshape(3, 16, 16)


# --- per pixel: every input there is ------------------------------------------------------------

@pytest.fixture(scope="module")
def colours():
    return every_colour()


def test_rgb_to_grayscale_on_every_colour(colours):
    assert_same("rgb_to_grayscale", {"num_output_channels": 3}, colours)


@pytest.mark.parametrize("hue_factor", [0.0, 0.1, -0.5, 0.5, 0.3333, -0.0731])
def test_adjust_hue_on_every_colour(colours, hue_factor):
    assert_same("adjust_hue", {"hue_factor": hue_factor}, colours)


@pytest.mark.parametrize("saturation_factor", [0.0, 0.5, 1.3, 2.0])
def test_adjust_saturation_on_every_colour(colours, saturation_factor):
    # every colour with every grey it can have: the blend towards floor(grey) is per pixel
    assert_same("adjust_saturation", {"saturation_factor": saturation_factor}, colours)


@pytest.mark.parametrize("brightness_factor", [0.0, 0.3, 0.999, 1.0, 1.7, 2.5, 255.0])
def test_adjust_brightness_on_every_value(brightness_factor):
    assert_same("adjust_brightness", {"brightness_factor": brightness_factor}, every_value())


@pytest.mark.parametrize("bits", range(9))
def test_posterize_on_every_value(bits):
    assert_same("posterize", {"bits": bits}, every_value())


@pytest.mark.parametrize("threshold", [0.0, 1.0, 127.0, 127.0000001, 127.5, 128.0, 200.3, 254.99, 255.0, -3.0])
def test_solarize_on_every_value(threshold):
    assert_same("solarize", {"threshold": threshold}, every_value())


def test_invert_on_every_value():
    assert_same("invert", {}, every_value())


# --- the photos ----------------------------------------------------------------------------------

POINT_CASES = [("adjust_brightness", {"brightness_factor": f}) for f in (0.0, 0.6, 1.4)] + \
              [("adjust_saturation", {"saturation_factor": f}) for f in (0.0, 0.6, 1.9)] + \
              [("adjust_hue", {"hue_factor": f}) for f in (-0.5, -0.1, 0.27, 0.5)] + \
              [("rgb_to_grayscale", {"num_output_channels": 3}), ("invert", {})] + \
              [("posterize", {"bits": b}) for b in (1, 4, 8)] + [("solarize", {"threshold": t}) for t in (0.0, 128.0, 255.0)] + \
              [("permute_channels", {"permutation": p}) for p in ([0, 1, 2], [2, 0, 1], [1, 0, 2])]


@pytest.mark.parametrize("name,kwargs", POINT_CASES)
def test_point_ops_on_photos(photos, name, kwargs):
    for image in photos:
        assert_same(name, kwargs, image)


@pytest.mark.parametrize("factor", [0.0, 0.5, 1.0, 1.7, 3.0])
def test_adjust_contrast_on_photos(photos, factor):
    """Exact wherever torch's float32 sum of the grey is (always below 65,793 pixels); on 375 x 500
    its rounding may move the mean by an ulp: the test states what that does."""
    worst = 0
    for image in photos:
        ours = conveyor(image, ("adjust_contrast", {"contrast_factor": factor}))
        theirs = F.adjust_contrast(image, factor)
        diff = (ours.int() - theirs.int()).abs()
        if image.shape[1] * image.shape[2] <= 65793:
            assert int(diff.max()) == 0, f"{tuple(image.shape)}: {int((diff > 0).sum())} values differ"
        worst = max(worst, int(diff.max()))
    assert worst <= 1


@pytest.mark.parametrize("name", ["autocontrast", "equalize"])
def test_statistic_ops_on_photos(photos, name):
    for image in photos:
        assert_same(name, {}, image)
    assert_same(name, {}, torch.full((3, 20, 30), 77, dtype=torch.uint8))  # min == max, step 0


@pytest.mark.parametrize("factor", [0.0, 0.5, 1.0, 2.0, 10.0])
def test_adjust_sharpness_on_photos(photos, factor):
    for image in photos + [photos[0][:, :2, :7], photos[0][:, :3, :3]]:
        assert_same("adjust_sharpness", {"sharpness_factor": factor}, image.contiguous())


BLUR_CASES = [(k, s) for k in (3, 5, 9, 13, 17, 23) for s in (0.1, 0.8, 2.0)] + \
             [((5, 11), (0.4, 1.7)), ((23, 3), (2.0, 0.1)), ((1, 7), (1.0, 1.0)), (23, None), (31, 5.0)]


@pytest.mark.parametrize("kernel_size,sigma", BLUR_CASES)
def test_gaussian_blur_on_photos(photos, kernel_size, sigma):
    kwargs = {"kernel_size": list(kernel_size) if isinstance(kernel_size, tuple) else kernel_size,
              "sigma": list(sigma) if isinstance(sigma, tuple) else sigma}
    for image in photos:
        k = max(kernel_size) if isinstance(kernel_size, tuple) else kernel_size
        if k // 2 < min(image.shape[1:]):
            assert_same("gaussian_blur", kwargs, image)


AFFINE_CASES = [
    {"angle": 0.0}, {"angle": 90.0}, {"angle": 180.0}, {"angle": -45.0}, {"angle": 33.3, "scale": 1.25},
    {"angle": 0.0, "translate": [13, -7]}, {"angle": 0.0, "translate": [-150, 0]},
    {"angle": 0.0, "shear": [16.7, 0.0], "center": [0, 0]}, {"angle": 0.0, "shear": [0.0, -28.0], "center": [0, 0]},
    {"angle": -12.5, "translate": [4, 9], "scale": 0.8, "shear": [10.0, -5.0]},
    {"angle": 7.0, "center": [40.5, 10.0]},
]


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("fill", [None, 0, [10.0, 200.0, 127.6]])
def test_affine_on_photos(photos, interpolation, fill):
    for image in photos:
        for case in AFFINE_CASES:
            kwargs = {"translate": [0, 0], "scale": 1.0, "shear": [0.0, 0.0], **case,
                      "interpolation": interpolation, "fill": fill}
            assert_same("affine", kwargs, image)


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
def test_rotate_on_photos(photos, interpolation):
    for image in photos:
        for angle in (0.0, 90.0, 180.0, 270.0, -90.0, 360.0, -45.0, 33.3, 1e-20, -1e-20):
            assert_same("rotate", {"angle": angle, "interpolation": interpolation}, image)
        assert_same("rotate", {"angle": 90.0, "interpolation": interpolation, "fill": [5, 6, 7], "center": [0, 0]},
                    image)
        assert_same("rotate", {"angle": -30.0, "interpolation": interpolation, "fill": 255}, image)


def perspective_corners(width, height, rng):
    """Corners for an image: its own (the identity map), three drawn as RandomPerspective draws them
    (distortion 0.2, 0.5 and 1), and four outside the image (the map shrinks it)."""
    start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
    ends = [start, [[-9, 5], [width + 7, -3], [width - 2, height + 12], [4, height - 9]]]
    for distortion in (0.2, 0.5, 1.0):
        bw, bh = int(distortion * (width // 2)) + 1, int(distortion * (height // 2)) + 1

        def r(lo, hi):
            return int(rng.integers(lo, hi))
        ends.append([[r(0, bw), r(0, bh)], [r(width - bw, width), r(0, bh)], [r(width - bw, width), r(height - bh, height)],
                     [r(0, bw), r(height - bh, height)]])
    return start, ends


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("fill", [None, 0, [10.0, 200.0, 127.6]])
def test_perspective_on_photos(photos, interpolation, fill):
    """From the corners, as v1's RandomPerspective calls it: torchvision solves for the coefficients
    with LAPACK, conveyor by elimination (perspective.hpp); the pixels must not tell them apart."""
    rng = np.random.default_rng(17)
    for image in photos:
        start, ends = perspective_corners(image.shape[2], image.shape[1], rng)
        for end in ends:
            assert_same("perspective", {"startpoints": start, "endpoints": end, "interpolation": interpolation,
                                        "fill": fill}, image)


def _collinear(points):
    """Whether three of the four points lie on a line (or two coincide)."""
    for a, b, c in ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)):
        (ax, ay), (bx, by), (cx, cy) = points[a], points[b], points[c]
        if (bx - ax) * (cy - ay) - (by - ay) * (cx - ax) == 0:
            return True
    return False


def test_perspective_coefficients_are_torchvisions():
    """The float32 coefficients of 20,000 draws on random sizes equal torchvision's, but where a
    coefficient is exactly 0 and LAPACK or the elimination leaves a residue below 1e-9
    (perspective.hpp). Corners with three on a line leave no unique map: conveyor refuses them all;
    torchvision's lstsq fails on most and returns its rounding's numbers for the rest."""
    from torchvision.transforms.v2.functional._geometry import _get_perspective_coeffs
    rng = np.random.default_rng(3)
    residues = refused = torchvision_solved = 0
    for _ in range(20000):
        w, h = (int(v) for v in rng.integers(1, 600, 2))
        start, ends = perspective_corners(w, h, rng)
        end = ends[2 + int(rng.integers(0, 3))]
        try:
            theirs = _get_perspective_coeffs(start, end)
        except RuntimeError:
            theirs = None
        if _collinear(start) or _collinear(end):
            with pytest.raises(_conveyor.ConfigError, match="no unique map"):
                _conveyor._perspective_coefficients(start, end)
            refused += 1
            torchvision_solved += theirs is not None
            continue
        assert theirs is not None, (w, h, end)
        ours = _conveyor._perspective_coefficients(start, end)
        for a, b in zip(ours, theirs):
            if a != b:
                assert abs(a) < 1e-9 and abs(b) < 1e-9, (w, h, end, ours, theirs)
                residues += 1
    print(f"perspective coefficients: {residues} residues; {refused} corner sets with three on a line, "
          f"{torchvision_solved} of them solved by torchvision's lstsq")
    assert refused > 0


def test_a_program_is_the_ops_in_order(photos):
    image = photos[1]
    program = [("adjust_brightness", {"brightness_factor": 1.3}), ("adjust_contrast", {"contrast_factor": 0.7}),
               ("adjust_saturation", {"saturation_factor": 1.6}), ("adjust_hue", {"hue_factor": -0.08}),
               ("gaussian_blur", {"kernel_size": 23, "sigma": 1.1}), ("solarize", {"threshold": 140.0}),
               ("affine", {"angle": 20.0, "translate": [3, 0], "scale": 1.0, "shear": [0.0, 0.0],
                           "interpolation": "bilinear", "fill": None}),
               ("equalize", {}), ("adjust_sharpness", {"sharpness_factor": 1.8})]
    theirs = image
    with grid_as_conveyor():
        for name, kwargs in program:
            theirs = getattr(F, name)(theirs, **torchvision_mode(kwargs))
    assert torch.equal(conveyor(image, *program), theirs)


def test_affine_residual_against_this_machines_torch(photos):
    """Against torch as it runs here, grid and all: equal where torch sums the grid as conveyor
    does; where the BLAS fuses it (affine_grid.py), a few values differ, BILINEAR ones by a level,
    NEAREST ones by a neighbour's difference. Prints the residual."""
    differing = total = 0
    worst = {"nearest": 0, "bilinear": 0}
    for interpolation in ("nearest", "bilinear"):
        for image in photos:
            for case in AFFINE_CASES:
                kwargs = {"translate": [0, 0], "scale": 1.0, "shear": [0.0, 0.0], **case,
                          "interpolation": interpolation, "fill": None}
                ours = conveyor(image, ("affine", kwargs)).int()
                theirs = F.affine(image, **torchvision_mode(kwargs)).int()
                difference = (ours - theirs).abs()
                differing += int((difference > 0).sum())
                total += difference.numel()
                worst[interpolation] = max(worst[interpolation], int(difference.max()))
    print(f"affine against this machine's torch: {differing} of {total} values differ "
          f"({100.0 * differing / total:.4f} %), at most {worst['bilinear']} (bilinear), {worst['nearest']} (nearest); "
          f"torch fuses the grid here: {torch_fuses_the_grid()}")
    if not torch_fuses_the_grid():
        assert differing == 0
    else:
        assert worst["bilinear"] <= 1 and differing <= total // 1000, "more than a rounding of the grid apart"


# --- erasing, after normalisation ---------------------------------------------------------------

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_erase_with_values_replaces_the_normalised_rectangle(photos, dtype, layout):
    image = photos[0]
    plain = conveyor(image, dtype=dtype, layout=layout, mean=MEAN, std=STD)
    for v in ([0.0, 0.0, 0.0], [0.5, -1.25, 2.0]):
        erased = conveyor(image, ("erase", {"i": 30, "j": 17, "h": 50, "w": 101, "v": v}), dtype=dtype, layout=layout,
                          mean=MEAN, std=STD)
        normalised = F.normalize(F.to_dtype(image, torch.float32, scale=True), MEAN, STD)
        reference = F.erase(normalised, 30, 17, 50, 101, torch.tensor(v)[:, None, None])
        as_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
        expected = reference.to(as_dtype)
        if dtype == "bf16":
            expected = expected.view(torch.uint16)
        expected = expected.numpy() if layout == "nchw" else expected.permute(1, 2, 0).numpy()
        inside = np.zeros(expected.shape, dtype=bool)
        if layout == "nchw":
            inside[:, 30:80, 17:118] = True
        else:
            inside[30:80, 17:118, :] = True
        assert np.array_equal(erased[inside], expected[inside])  # torchvision's values, as the dtype stores them
        assert np.array_equal(erased[~inside], plain[~inside])  # the rest as conveyor normalises it


def test_erase_random_values_are_standard_normal():
    """RandomErasing(value="random") gives torch's normal_ values, which no other generator
    reproduces: conveyor's must have their distribution. Kolmogorov-Smirnov against the normal CDF
    and against torch.randn, on 3 x 400 x 500 values, at the 0.1 % level."""
    image = torch.full((3, 400, 500), 128, dtype=torch.uint8)
    ours = conveyor(image, ("erase", {"i": 0, "j": 0, "h": 400, "w": 500, "key": 1234567}), dtype="f32",
                    layout="nchw", mean=MEAN, std=STD).ravel().astype(np.float64)
    n = ours.size
    assert abs(ours.mean()) < 4 / math.sqrt(n) and abs(ours.std() - 1) < 4 / math.sqrt(2 * n)
    xs = np.sort(ours)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(xs / math.sqrt(2)))
    d_normal = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert d_normal < 1.95 / math.sqrt(n)
    theirs = np.sort(torch.randn(n, generator=torch.Generator().manual_seed(0)).double().numpy())
    grid = np.linspace(-4, 4, 4001)
    d_torch = np.max(np.abs(np.searchsorted(xs, grid) - np.searchsorted(theirs, grid))) / n
    assert d_torch < 1.95 * math.sqrt(2 / n)
    again = conveyor(image, ("erase", {"i": 0, "j": 0, "h": 400, "w": 500, "key": 1234567}), dtype="f32",
                     layout="nchw", mean=MEAN, std=STD)
    assert np.array_equal(again.ravel(), ours.astype(np.float32))  # a pure function of the key
    other = conveyor(image, ("erase", {"i": 0, "j": 0, "h": 400, "w": 500, "key": 7654321}), dtype="f32",
                     layout="nchw", mean=MEAN, std=STD)
    assert not np.array_equal(other.ravel(), ours.astype(np.float32))


@pytest.mark.parametrize("clip", [True, False])
@pytest.mark.parametrize("mean,sigma", [(0.0, 0.1), (0.1, 0.05), (-0.3, 0.4), (0.0, 0.0)])
def test_gaussian_noise_is_torchvisions_arithmetic_on_conveyors_normal_values(photos, mean, sigma, clip):
    """uint8 (before ToDtype): torchvision's int16 noise, clamped or wrapped; float (after ToDtype,
    before Normalize): its float32 sum, clamped or not, then Normalize; every dtype and layout the
    output stores. torch's randn_like answers with conveyor's values (reference.gaussian_noise)."""
    for k, image in enumerate(photos[:9]):
        key = 1000 + k
        noise = ("gaussian_noise", {"mean": mean, "sigma": sigma, "clip": clip, "key": key})
        ours = conveyor(image, noise)
        assert torch.equal(ours, gaussian_noise(image, mean, sigma, clip, key)), (tuple(image.shape), k)
        as_float = dict(noise[1], image="float32")
        scaled = F.to_dtype(image, torch.float32, scale=True)
        reference = F.normalize(gaussian_noise(scaled, mean, sigma, clip, key), MEAN, STD)
        for dtype, layout in (("f32", "nchw"), ("bf16", "nhwc"), ("f16", "nchw")):
            out = conveyor(image, ("gaussian_noise", as_float), dtype=dtype, layout=layout, mean=MEAN, std=STD,
                           torchvision_rounding=True)
            expected = reference.to({"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype])
            expected = expected.view(torch.uint16) if dtype == "bf16" else expected
            expected = expected.numpy() if layout == "nchw" else expected.permute(1, 2, 0).numpy()
            assert np.array_equal(out, expected), (tuple(image.shape), k, dtype, layout)
    if sigma > 0:  # the edges are met: clipped (or wrapped) values, both sides
        image = photos[0]
        raw = image.int() + (255 * mean + 255 * sigma * torch.from_numpy(np.frombuffer(
            _conveyor._standard_normals(1000, image.numel()), dtype=np.float32).copy()).reshape(image.shape)).int()
        assert (raw < 0).any() and (raw > 255).any()


def test_gaussian_noise_values_are_standard_normal_and_keyed():
    """conveyor's normal stream (the one RandomErasing's "random" uses): a pure function of the key,
    each key its own values."""
    a = np.frombuffer(_conveyor._standard_normals(5, 300000), dtype=np.float32)
    assert np.array_equal(a, np.frombuffer(_conveyor._standard_normals(5, 300000), dtype=np.float32))
    assert not np.array_equal(a, np.frombuffer(_conveyor._standard_normals(6, 300000), dtype=np.float32))
    n = a.size
    assert abs(a.mean()) < 4 / math.sqrt(n) and abs(a.std() - 1) < 4 / math.sqrt(2 * n)


# --- what conveyor refuses --------------------------------------------------------------------------

@pytest.mark.parametrize("name,kwargs,message", [
    ("adjust_hue", {"hue_factor": 0.6}, "hue_factor must be in [-0.5, 0.5], got 0.6"),
    ("adjust_brightness", {"brightness_factor": -1.0}, "brightness_factor must be finite and >= 0"),
    ("posterize", {"bits": 9}, "bits must be in [0, 8], got 9"),
    ("solarize", {"threshold": 256.0}, "threshold must be <= 255"),
    ("gaussian_blur", {"kernel_size": 4, "sigma": 1.0}, "kernel sizes must be odd"),
    ("gaussian_blur", {"kernel_size": 61, "sigma": 1.0}, "the kernel's half size must be less than"),
    ("affine", {"angle": 0.0, "scale": 0.0}, "scale must be finite and > 0"),
    ("rotate", {"angle": 10.0, "fill": 300}, "fill values must be in [0, 255]"),
    ("adjust_hue", {"hue": 0.1}, "missing argument 'hue_factor'"),
    ("gaussian_blur", {"sigma": 1.0}, "missing argument 'kernel_size'"),
    ("invert", {"x": 1}, "unexpected argument 'x'"),
])
def test_bad_parameters_are_refused_by_name(name, kwargs, message):
    with pytest.raises(_conveyor.ConfigError) as e:
        conveyor(torch.full((3, 20, 30), 90, dtype=torch.uint8), (name, kwargs))
    assert message in str(e.value)
