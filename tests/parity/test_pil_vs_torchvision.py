"""Pipelines on PIL images, against torchvision and Pillow themselves on `Image.open(path).convert("RGB")`
(torchvision's ImageFolder): every Pillow filter's resize, and torchvision v1 Composes (v2 ones with
image_backend="pil") replayed through torchvision's functionals with the parameters conveyor drew for
each sample (`ImageAugment.drawn_calls`), bit for bit. Pillow 13 and torchvision 0.29 from PyPI:

    python -m pytest tests/parity/test_pil_vs_torchvision.py
"""
import dataclasses
import pathlib

import numpy as np
import pytest

from reference import check_declared_geometry, require

torch, torchvision = require()
PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402
from torchvision import transforms as v1  # noqa: E402
from torchvision.transforms import functional as F1  # noqa: E402
from torchvision.transforms import v2  # noqa: E402

import conveyor  # noqa: E402
from conveyor import _conveyor  # noqa: E402

pytestmark = pytest.mark.skipif(int(PIL.__version__.split(".")[0]) < 13,
                                reason="Pillow 13's pass order (vertical first when the height shrinks most)")
ROOT = pathlib.Path(__file__).resolve().parents[2]
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
PIL_FILTERS = [n for n in conveyor._conveyor.option_choices()["ImageAugment"]["resampling"] if n.startswith("pil_")]
MODES = {"pil_" + m.value: m for m in v1.InterpolationMode if "pil_" + m.value in PIL_FILTERS}


def test_every_pillow_filter_has_its_torchvision_mode():
    assert sorted(MODES) == sorted(PIL_FILTERS) and len(PIL_FILTERS) == 6


@pytest.fixture(scope="module")
def noise(tmp_path_factory):
    """Random RGB images (PNG, so decoding is exact) from 1 x 1 up, and the bundled photos."""
    root = tmp_path_factory.mktemp("noise")
    (root / "a").mkdir()
    rng = np.random.default_rng(2026)
    for k, (w, h) in enumerate([(1, 1), (2, 3), (17, 5), (5, 40), (64, 64), (223, 149), (401, 299), (130, 517)]):
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(root / "a" / f"{k}.png")
    for k, photo in enumerate(sorted((ROOT / "examples" / "data" / "samples").rglob("*.jpg"))[:6]):
        (root / "a" / f"photo{k}.jpg").write_bytes(photo.read_bytes())
    return root


@pytest.mark.parametrize("filter_name", PIL_FILTERS)
@pytest.mark.parametrize("size", [(1, 1), (37, 53), (300, 220), (24, 400)])
def test_a_pillow_filter_resizes_as_image_resize(noise, filter_name, size):
    """Up, down, one axis each way (Pillow's pass order), to 1 x 1."""
    augment = conveyor.ImageAugment(crop="center", resize=size, size=size, resampling=filter_name, dtype="u8",
                                    layout="nhwc")
    dataset = conveyor.ImageFolder(str(noise))
    (images, _), = list(conveyor.Loader(dataset, batch_size=len(dataset), workers=2, transform=augment))
    for i in range(len(dataset)):
        path = dataset.name(i)
        pil_filter = F1.pil_modes_mapping[MODES[filter_name]]
        expected = np.asarray(Image.open(path).convert("RGB").resize(size[::-1], pil_filter))
        got = images[i].numpy()
        assert np.array_equal(got, expected), (
            f"{path} -> {size}: {(got != expected).sum()} values differ, by up to "
            f"{np.abs(got.astype(int) - expected).max()}")


PIPELINES = {
    # The seed document's pipeline, unchanged.
    "resize to height and width": lambda: v1.Compose([v1.Resize((224, 224)), v1.ToTensor(), v1.Normalize(MEAN, STD)]),
    "train": lambda: v1.Compose([v1.RandomResizedCrop(176), v1.RandomHorizontalFlip(), v1.ToTensor(),
                                 v1.Normalize(MEAN, STD)]),
    "eval": lambda: v1.Compose([v1.Resize(256), v1.CenterCrop(224), v1.ToTensor(), v1.Normalize(MEAN, STD)]),
    "bicubic eval": lambda: v1.Compose([v1.Resize(248, interpolation=v1.InterpolationMode.BICUBIC),
                                        v1.CenterCrop(224), v1.ToTensor(), v1.Normalize(MEAN, STD)]),
    "max size and a rectangle": lambda: v1.Compose([v1.Resize(150, max_size=200), v1.CenterCrop((140, 120)),
                                                    v1.RandomVerticalFlip(), v1.ToTensor()]),
    "uint8 then float, erasing": lambda: v1.Compose([
        v1.RandomResizedCrop((96, 128), scale=(0.2, 1.0), interpolation=v1.InterpolationMode.LANCZOS),
        v1.RandomHorizontalFlip(), v1.PILToTensor(), v1.ConvertImageDtype(torch.float32), v1.Normalize(MEAN, STD),
        v1.RandomErasing(0.7, value=(0.5, -1.0, 2.0))]),
    "cifar": lambda: v1.Compose([v1.Resize((32, 32)), v1.RandomCrop(32, padding=4), v1.RandomHorizontalFlip(),
                                 v1.ToTensor(), v1.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))]),
    "random crop, padded": lambda: v1.Compose([v1.Resize(40), v1.RandomCrop((48, 36), padding=(1, 2, 3, 4),
                                                                          pad_if_needed=True), v1.PILToTensor()]),
    "cifar, reflect": lambda: v1.Compose([v1.Resize((32, 32)), v1.RandomCrop(32, padding=4, padding_mode="reflect"),
                                          v1.RandomHorizontalFlip(), v1.ToTensor()]),
    "pad symmetric, then crop": lambda: v1.Compose([v1.Resize(30), v1.Pad((5, 1, 2, 6), padding_mode="symmetric"),
                                                    v1.RandomCrop((33, 29)), v1.PILToTensor()]),
    "edges, pad if needed": lambda: v1.Compose([v1.Resize(24), v1.RandomCrop((40, 30), pad_if_needed=True,
                                                                          padding_mode="edge"), v1.PILToTensor()]),
    **{f"{mode.value} crops": (lambda mode=mode: v1.Compose([
        v1.RandomResizedCrop(80, scale=(0.05, 1.0), interpolation=mode), v1.PILToTensor()]))
       for mode in MODES.values()},
    # v2 on PIL images: the resize is Pillow's; after ToImage, v2's tensor transforms.
    "v2 on PIL images": lambda: v2.Compose([
        v2.RandomResizedCrop(128, interpolation=v2.InterpolationMode.BICUBIC), v2.RandomHorizontalFlip(),
        v2.ToImage(), v2.TrivialAugmentWide(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD),
        v2.RandomErasing(0.5)]),
    "v2 ToTensor on PIL images": lambda: v2.Compose([v2.Resize(160), v2.CenterCrop(144), v2.ToTensor(),
                                                     v2.Normalize(MEAN, STD)]),
    # Pixel transforms on PIL images: Pillow's ImageEnhance, ImageOps and convert("L").
    "v1 colour": lambda: v1.Compose([v1.RandomResizedCrop(112), v1.RandomHorizontalFlip(),
                                     v1.ColorJitter(0.4, 0.4, 0.4, 0.1), v1.RandomGrayscale(0.2), v1.ToTensor(),
                                     v1.Normalize(MEAN, STD)]),
    "v1 every PIL op": lambda: v1.Compose([
        v1.Resize(100), v1.CenterCrop((90, 80)), v1.RandomApply([v1.ColorJitter(0.8, 0.8, 0.8, 0.2)], p=0.8),
        v1.RandomInvert(0.3), v1.RandomPosterize(3, 0.3), v1.RandomSolarize(127.5, 0.3),
        v1.RandomAdjustSharpness(2.0, 0.5), v1.RandomAutocontrast(0.4), v1.RandomEqualize(0.3),
        v1.RandomChoice([v1.Grayscale(3), v1.ColorJitter(hue=(-0.5, 0.5))]),
        v1.RandomOrder([v1.RandomAdjustSharpness(0.0), v1.ColorJitter(contrast=(0.0, 3.0))]), v1.PILToTensor()]),
    "v1 rotations": lambda: v1.Compose([
        v1.RandomResizedCrop(96), v1.RandomRotation(25), v1.ColorJitter(0.2),
        v1.RandomRotation((-200, 200), interpolation=v1.InterpolationMode.BILINEAR, fill=(10, 20, 30.5)),
        v1.RandomRotation(90, center=(3, 60)), v1.ToTensor()]),
    # v1's RandomAffine and policies: v1's matrix, Solarize magnitudes and signs (their `v1` field)
    "v1 affine maps": lambda: v1.Compose([
        v1.RandomResizedCrop(112), v1.RandomAffine(15, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5),
        v1.RandomAffine((-40, 40), shear=(-10, 10, -5, 5), interpolation=v1.InterpolationMode.BILINEAR,
                        fill=(10, 20, 30.5), center=(3, 60)), v1.ToTensor()]),
    "v1 policies": lambda: v1.Compose([v1.RandomResizedCrop(112), v1.TrivialAugmentWide(), v1.RandAugment(),
                                       v1.AutoAugment(), v1.PILToTensor()]),
    "v1 policies, bilinear and filled": lambda: v1.Compose([
        v1.RandomResizedCrop(96), v1.RandomHorizontalFlip(),
        v1.TrivialAugmentWide(interpolation=v1.InterpolationMode.BILINEAR, fill=[128, 64, 32]),
        v1.RandAugment(num_ops=3, magnitude=14, interpolation=v1.InterpolationMode.BILINEAR, fill=77),
        v1.AutoAugment(v1.AutoAugmentPolicy.CIFAR10, fill=(5, 250, 100)),
        v1.AutoAugment(v1.AutoAugmentPolicy.SVHN, interpolation=v1.InterpolationMode.BILINEAR), v1.ToTensor()]),
    "v2 policies and affine maps on PIL images": lambda: v2.Compose([
        v2.RandomResizedCrop(112), v2.TrivialAugmentWide(), v2.RandAugment(), v2.AutoAugment(),
        v2.RandomAffine(15, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5), v2.RandomPerspective(0.4), v2.ToImage(),
        v2.RandomPerspective(0.3, p=0.7), v2.ToDtype(torch.float32, scale=True)]),
    "v2 photometric distortion on PIL images, then tensors": lambda: v2.Compose([
        v2.RandomResizedCrop(112), v2.RandomPhotometricDistort(p=0.7), v2.ToImage(),
        v2.RandomPhotometricDistort(contrast=(0.2, 1.8), hue=(-0.5, 0.5), p=0.6), v2.ToDtype(torch.float32, scale=True)]),
    "v1 bicubic rotations, affine maps, perspective and policies": lambda: v1.Compose([
        v1.RandomResizedCrop(96, interpolation=v1.InterpolationMode.BICUBIC),
        v1.RandomRotation(35, interpolation=v1.InterpolationMode.BICUBIC, fill=(124, 116, 104)),
        v1.RandomAffine(20, translate=(0.1, 0.2), scale=(0.8, 1.2), shear=8,
                        interpolation=v1.InterpolationMode.BICUBIC),
        v1.RandomPerspective(0.4, p=0.7, interpolation=v1.InterpolationMode.BICUBIC),
        v1.RandAugment(interpolation=v1.InterpolationMode.BICUBIC), v1.ToTensor()]),
    "v1 perspective": lambda: v1.Compose([
        v1.RandomResizedCrop(112), v1.RandomPerspective(0.5, p=0.8), v1.RandomHorizontalFlip(),
        v1.RandomPerspective(0.3, p=0.6, interpolation=v1.InterpolationMode.NEAREST, fill=(10, 20, 30)),
        v1.ToTensor()]),
    "v2 colour on PIL images, then tensors": lambda: v2.Compose([
        v2.RandomResizedCrop(128), v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.RandomGrayscale(0.2),
        v2.GaussianBlur(5, (0.1, 2.0)), v2.RandomChannelPermutation(), v2.ToImage(), v2.RandomAutocontrast(0.5),
        v2.ColorJitter(0.3, hue=0.2), v2.RandomChannelPermutation(),
        v2.ToDtype(torch.float32, scale=True)]),
}
_TAIL = (v1.ToTensor, v1.PILToTensor, v1.ConvertImageDtype, v1.Normalize,
         v2.ToTensor, v2.ToImage, v2.ToDtype, v2.Normalize)
try:  # timm's training transforms: its crop's calls are torchvision's resized_crop, and MaybeToTensor ends them
    import timm.data as timm_data
    from timm.data.transforms import MaybeToTensor
    _TAIL += (MaybeToTensor,)
    PIPELINES.update({
        "timm train": lambda: timm_data.create_transform(128, is_training=True),
        "timm train, random interpolation": lambda: timm_data.create_transform(96, is_training=True,
                                                                               interpolation="random"),
        # timm's RandomErasing, each mode, up to three boxes
        "timm train, erasing": lambda: timm_data.create_transform(112, is_training=True, re_prob=0.8),
        "timm train, erasing per pixel, 3 boxes": lambda: timm_data.create_transform(
            96, is_training=True, re_prob=0.9, re_mode="pixel", re_count=3),
        "timm train, erasing per channel": lambda: timm_data.create_transform(96, is_training=True, re_prob=0.9,
                                                                              re_mode="rand", re_count=2),
        "timm train, bicubic, jitter 0.3, hflip 0.7": lambda: timm_data.create_transform(
            (3, 112, 144), is_training=True, interpolation="bicubic", color_jitter=0.3, hflip=0.7,
            scale=(0.25, 1.0), mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)),
        # timm's RandAugment: DeiT's recipe, and its variants (no noise, uniform noise, mmax, 3 layers,
        # every op applied, the plain list, a filter drawn per op)
        "timm train, rand-m9-mstd0.5-inc1, erasing": lambda: timm_data.create_transform(
            112, is_training=True, auto_augment="rand-m9-mstd0.5-inc1", re_prob=0.25),
        "timm train, rand-m9-mstd0.5, random interpolation": lambda: timm_data.create_transform(
            96, is_training=True, auto_augment="rand-m9-mstd0.5", interpolation="random"),
        "timm train, rand-m15-n3-mstd101-mmax20-inc1-p1.0, bicubic": lambda: timm_data.create_transform(
            96, is_training=True, auto_augment="rand-m15-n3-mstd101-mmax20-inc1-p1.0", interpolation="bicubic",
            mean=(0.3, 0.6, 0.9)),
        "timm train, rand-m10-n4-p0.9, nearest": lambda: timm_data.create_transform(
            80, is_training=True, auto_augment="rand-m10-n4-p0.9", interpolation="nearest"),
        "timm train, rand-m9-n3-mstd0.5-tweights": lambda: timm_data.create_transform(
            96, is_training=True, auto_augment="rand-m9-n3-mstd0.5-tweights"),
        # timm's AutoAugment: each of its four tables, with noise or without, a filter drawn per op
        "timm train, original-mstd0.5": lambda: timm_data.create_transform(
            96, is_training=True, auto_augment="original-mstd0.5"),
        "timm train, originalr, random interpolation": lambda: timm_data.create_transform(
            96, is_training=True, auto_augment="originalr", interpolation="random"),
        "timm train, v0-mstd1, bicubic": lambda: timm_data.create_transform(
            112, is_training=True, auto_augment="v0-mstd1", interpolation="bicubic"),
        "timm train, v0r": lambda: timm_data.create_transform(96, is_training=True, auto_augment="v0r"),
    })
except ImportError:
    pass


def _replay(path, calls, compose, on_pil):
    """torchvision's functionals on the PIL image with conveyor's drawn parameters (the geometry,
    flips and the first `on_pil` calls on the PIL image, the others on the uint8 tensor after
    ToImage), then the Compose's own conversions and Normalize (before an erase, which recipes place
    after them)."""
    x = Image.open(path).convert("RGB")
    tail = [t for t in compose.transforms if isinstance(t, _TAIL)]
    finished = False
    for k, (name, kwargs) in enumerate(calls):
        check_declared_geometry(compose, name, kwargs, pil=True)
        if "interpolation" in kwargs:
            kwargs = dict(kwargs, interpolation=v2.InterpolationMode(kwargs["interpolation"]))
        pil_calls = {"resized_crop": F1.resized_crop, "resize": F1.resize, "center_crop": F1.center_crop,
                     "pad": F1.pad, "crop": F1.crop, "horizontal_flip": F1.hflip, "vertical_flip": F1.vflip}
        if name in pil_calls and isinstance(x, Image.Image):
            x = pil_calls[name](x, **kwargs)
            continue
        if name.startswith("timm."):  # timm's policies' ops (timm.data.auto_augment), on the PIL image
            x = _timm_op(x, name[len("timm."):], kwargs)
            continue
        if k < on_pil:  # v1's functionals for a v1 Compose; v2's take PIL images to its PIL kernels
            # (perspective's calls give v2's coefficients, which v1's functional does not take: v2's
            # runs the same Image.transform)
            v1_call = _is_v1(compose) and name != "perspective"
            x = getattr(F1 if v1_call else v2.functional, name)(x, **kwargs)
            continue
        if name == "erase":  # on the output: the Compose's conversions first (from the PIL image, if it still is one)
            if not finished:
                x, finished = _finish(x, tail), True
            x = v2.functional.erase(x, kwargs["i"], kwargs["j"], kwargs["h"], kwargs["w"], _erased_values(x, kwargs))
            continue
        if isinstance(x, Image.Image):
            x = F1.pil_to_tensor(x)  # where the Compose's ToImage stands
        x = getattr(v2.functional, name)(x, **kwargs)
    return x if finished else _finish(x, tail)


def _timm_op(x, name, kwargs):
    """timm's op `name` (auto_augment.py's function) with conveyor's drawn arguments; fewer than one bit
    kept by posterize as Pillow 12 kept them, where Pillow 13 raises (timm_augment_ops.hpp)."""
    from timm.data import auto_augment as aa
    if "fillcolor" in kwargs:
        kwargs = dict(kwargs, fillcolor=tuple(kwargs["fillcolor"]), resample=Image.Resampling(kwargs["resample"]))
    if name == "posterize" and kwargs["bits_to_keep"] < 1:
        return x.point([0] * 256 * 3)
    return getattr(aa, name)(x, **kwargs)


def _erased_values(x, kwargs):
    """An erase call's values: its numbers, or conveyor's normal values of its key, per element
    (torchvision's "random", timm's "pixel") or per channel (timm's "rand", `channel_key`)."""
    if "v" in kwargs:
        return torch.tensor(kwargs["v"], dtype=x.dtype)[:, None, None]
    key = kwargs.get("key", kwargs.get("channel_key"))
    shape = (x.shape[0], kwargs["h"], kwargs["w"]) if "key" in kwargs else (x.shape[0], 1, 1)
    values = np.frombuffer(_conveyor._standard_normals(key, int(np.prod(shape))), dtype=np.float32)
    return torch.from_numpy(values.copy()).reshape(shape)


def _is_v1(compose):
    return not type(compose).__module__.startswith("torchvision.transforms.v2")


def _finish(x, tail):
    for t in tail:
        if not isinstance(x, Image.Image) and isinstance(t, v1.PILToTensor):
            continue  # already a tensor
        x = t(x)
    return x


@pytest.mark.filterwarnings("ignore:The transform `ToTensor\\(\\)` is deprecated")
@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("seed", [0, 77])
def test_a_pil_pipeline_equals_torchvision_on_the_parameters_conveyor_drew(photos, name, seed):
    _check_replays(photos, PIPELINES[name](), seed, epochs=2)


@pytest.mark.filterwarnings("ignore:The transform `ToTensor\\(\\)` is deprecated")
@pytest.mark.parametrize("name", ["v1 affine maps", "v1 policies", "v1 policies, bilinear and filled"])
def test_v1_affine_maps_and_policies_equal_torchvision_v1_over_many_draws(photos, name):
    _check_replays(photos, PIPELINES[name](), seed=5, epochs=10)


def _check_replays(photos, compose, seed, epochs):
    """Every sample of `epochs` epochs over `photos` equals torchvision's functionals replaying
    the calls conveyor drew for it."""
    transform = conveyor.ImageAugment.from_transforms(compose, image_backend="pil")
    assert transform.resampling.startswith("pil_")
    dataset = conveyor.ImageFolder(str(photos))
    files = [pathlib.Path(dataset.name(i)) for i in range(len(dataset))]
    loader = conveyor.Loader(dataset, batch_size=len(files), seed=seed, workers=2, transform=transform)
    # the calls drawn on the PIL image: those of the transforms before the conversion to a tensor
    on_pil = dataclasses.replace(transform, transforms=transform.transforms[:transform.pil_transforms])
    for epoch in range(epochs):
        (images, _), = list(loader)
        for index, path in enumerate(files):
            width, height = Image.open(path).size
            calls = transform.drawn_calls(seed=seed, epoch=epoch, index=index, width=width, height=height)
            expected = _replay(path, calls, compose, len(on_pil.drawn_calls(seed, epoch, index, width, height)))
            assert images[index].dtype == expected.dtype, path.name
            assert torch.equal(images[index], expected), (
                f"{path.name} epoch {epoch}: {calls}; {(images[index].double() - expected.double()).abs().max()} off")


def test_the_loader_and_the_preprocessor_read_a_v2_compose_as_fed_pil_images_when_told(photos):
    compose = v2.Compose([v2.Resize(80), v2.CenterCrop(64), v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.ToImage(),
                          v2.ToDtype(torch.float32, scale=True)])
    dataset = conveyor.ImageFolder(str(photos))
    n = min(8, len(dataset))

    def first_batch(transform, **kwargs):
        (images, _), *_ = list(conveyor.Loader(dataset, batch_size=n, seed=5, workers=2, transform=transform,
                                               **kwargs))
        return images

    on_pil = first_batch(compose, image_backend="pil")
    assert torch.equal(on_pil, first_batch(conveyor.ImageAugment.from_transforms(compose, image_backend="pil")))
    assert not torch.equal(on_pil, first_batch(compose))  # Pillow's resize and ImageEnhance, not torch's
    eval_compose = v2.Compose([v2.Resize(80), v2.CenterCrop(64), v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])
    served = conveyor.Preprocessor(eval_compose, image_backend="pil")(
        [pathlib.Path(dataset.name(i)).read_bytes() for i in range(n)])
    assert torch.equal(served, first_batch(eval_compose, image_backend="pil"))
    with pytest.raises(conveyor.ConfigError, match=r"^Loader: image_backend applies to a torchvision Compose, not to "
                                                   r"ImageAugment"):
        conveyor.Loader(dataset, transform=conveyor.ImageAugment.eval(), image_backend="pil")
    with pytest.raises(conveyor.ConfigError, match=r"image_backend must be 'pil' or 'tensor', got 'PIL'"):
        conveyor.Preprocessor(eval_compose, image_backend="PIL")


def test_a_v1_pipeline_is_read_as_pil_and_v2_as_tensors_unless_told():
    assert conveyor.ImageAugment.from_transforms(PIPELINES["eval"]()).resampling == "pil_bilinear"
    compose = v2.Compose([v2.Resize(256, interpolation=v2.InterpolationMode.BICUBIC), v2.CenterCrop(224)])
    assert conveyor.ImageAugment.from_transforms(compose).resampling == "bicubic"
    assert conveyor.ImageAugment.from_transforms(compose, image_backend="pil").resampling == "pil_bicubic"


def test_what_pil_images_cannot_run_yet_is_refused_by_name_and_place():
    for name, transform in [("GaussianBlur", v1.GaussianBlur(3))]:
        with pytest.raises(conveyor.ConfigError, match=rf"^transform 1 \({name}\) is torchvision v1's "
                                                       rf"\(torchvision.transforms\).*v2.{name} after ToImage"):
            conveyor.ImageAugment.from_transforms(v1.Compose([v1.RandomResizedCrop(224), transform]))
    with pytest.raises(conveyor.ConfigError, match=r"^transform 2 \(RandomErasing\): RandomErasing on a PIL image "
                                                   r"\(torchvision's PIL functional, Pillow's arithmetic\) is not "
                                                   r"supported yet: convert the image before it"):
        conveyor.ImageAugment.from_transforms(
            v2.Compose([v2.RandomResizedCrop(224), v2.ColorJitter(0.4), v2.RandomErasing(), v2.ToImage()]),
            image_backend="pil")
    with pytest.raises(conveyor.ConfigError, match=r"^transform 2 \(ColorJitter\) is torchvision v1's on a tensor"):
        conveyor.ImageAugment.from_transforms(v1.Compose([v1.RandomResizedCrop(224), v1.PILToTensor(),
                                                          v1.ColorJitter(0.4)]))
    with pytest.raises(conveyor.ConfigError, match=r"^transform 1 \(RandomPosterize\): bits must be in \[1, 8\] on a "
                                                   r"PIL image"):
        conveyor.ImageAugment.from_transforms(v1.Compose([v1.RandomResizedCrop(224), v1.RandomPosterize(0)]))
    with pytest.raises(conveyor.ConfigError, match=r"NEAREST_EXACT|nearest-exact"):
        conveyor.ImageAugment.from_transforms(
            v2.Compose([v2.Resize(64, interpolation=v2.InterpolationMode.NEAREST_EXACT), v2.CenterCrop(64)]),
            image_backend="pil")


TIMM_EVAL = {
    "default": dict(input_size=224),
    "bicubic, crop_pct 0.875": dict(input_size=(3, 224, 224), interpolation="bicubic", crop_pct=0.875),
    "lanczos, crop_pct 1.0, 160": dict(input_size=(3, 160, 160), interpolation="lanczos", crop_pct=1.0,
                                       mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)),
}


@pytest.mark.parametrize("name", sorted(TIMM_EVAL))
def test_timms_evaluation_transform_equals_timm(photos, name):
    """timm.data.create_transform(..., is_training=False), given to the Loader unchanged (torchvision
    v1's Resize and CenterCrop, timm's MaybeToTensor, Normalize): timm's own output on PIL images."""
    timm_data = pytest.importorskip("timm.data")
    transform = timm_data.create_transform(**TIMM_EVAL[name], is_training=False)
    dataset = conveyor.ImageFolder(str(photos))
    (images, _), = list(conveyor.Loader(dataset, batch_size=len(dataset), workers=2, transform=transform))
    for index in range(len(dataset)):
        expected = transform(Image.open(dataset.name(index)).convert("RGB"))
        assert torch.equal(images[index], expected), dataset.name(index)


def test_timms_deit_transform_gives_the_same_batches_for_any_worker_count(photos):
    timm_data = pytest.importorskip("timm.data")
    transform = timm_data.create_transform(64, is_training=True, auto_augment="rand-m9-mstd0.5-inc1", re_prob=0.25)
    dataset = conveyor.ImageFolder(str(photos))
    runs = [[images for images, _ in conveyor.Loader(dataset, batch_size=5, shuffle=True, seed=3, workers=workers,
                                                     transform=transform)] for workers in (0, 1, 3)]
    assert len(runs[0]) > 1
    for run in runs[1:]:
        assert all(torch.equal(a, b) for a, b in zip(run, runs[0])) and len(run) == len(runs[0])


def test_timms_training_transforms_beyond_the_basic_are_refused_naming_timm():
    """Its training transforms run (PIPELINES' "timm train": a filter drawn per image, its
    RandAugment, AugMix (test_augmix.py) and RandomErasing); its other policies are refused, naming timm."""
    timm_data = pytest.importorskip("timm.data")
    random = conveyor.ImageAugment.from_transforms(timm_data.create_transform(96, is_training=True,
                                                                             interpolation="random"))
    assert (random.resampling, random.random_resampling) == ("pil_bilinear", "pil_bicubic")
    deit = conveyor.ImageAugment.from_transforms(timm_data.create_transform(
        224, is_training=True, auto_augment="rand-m9-mstd0.5-inc1", interpolation="bicubic"))
    assert deit.transforms[0] == conveyor.transforms.TimmRandAugment(
        num_layers=2, magnitude=9.0, prob=0.5, magnitude_std=0.5, magnitude_max=None, increasing=True,
        img_mean=(124, 116, 104), interpolation="bicubic", translate_pct=0.45)
    augmix = conveyor.ImageAugment.from_transforms(timm_data.create_transform(
        224, is_training=True, auto_augment="augmix-m5-w3-d2"))
    assert augmix.transforms[0] == conveyor.transforms.TimmAugMix(
        magnitude=5.0, width=3, depth=2, alpha=1.0, blended=False, magnitude_std=float("inf"), magnitude_max=None,
        img_mean=(124, 116, 104), interpolation="bilinear", translate_pct=0.3)
    original = conveyor.ImageAugment.from_transforms(timm_data.create_transform(
        96, is_training=True, auto_augment="original-mstd0.5"))
    assert original.transforms[0] == conveyor.transforms.TimmAutoAugment(
        policy="original", magnitude_std=0.5, magnitude_max=None, img_mean=(124, 116, 104), interpolation="bilinear",
        translate_pct=0.45)
    with pytest.raises(conveyor.ConfigError, match=r"^transform 2 \(AutoAugment\) is timm's, which conveyor runs as "
                                                   r"auto_augment_transform makes it, but its sub-policies are none"):
        conveyor.ImageAugment.from_transforms(timm_data.create_transform(96, is_training=True, auto_augment="3a"))
    for policy, why in [("rand-m9-t3aw", r"it chooses its ops \['SolarizeIncreasing', 'Desaturate', 'GaussianBlur', .*\] "
                                         r"by weights .*not \"t3aw\""),
                        ("rand-m9-t3a", r"its ops are \['SolarizeIncreasing', 'Desaturate', 'GaussianBlur'\]")]:
        with pytest.raises(conveyor.ConfigError, match=rf"^transform 2 \(RandAugment\) is timm's, which conveyor "
                                                       rf"runs as rand_augment_transform makes it, but {why}"):
            conveyor.ImageAugment.from_transforms(timm_data.create_transform(96, is_training=True,
                                                                             auto_augment=policy))

