"""A user's own torchvision v2 Compose given to conveyor.Loader, against torchvision itself: each
sample's batch entry equals what torchvision's functionals compute, on
`torchvision.io.decode_image(path, mode=RGB)`, with the parameters conveyor drew for that sample
(`ImageAugment.drawn_calls`), bit for bit. Whether conveyor's draws follow torchvision's
distributions is the C++ distribution tests' claim (tests/transforms).

Runs on the bundled photos (examples/data/samples) and, where present, the real-image corpus, with
torch 2.15 / torchvision 0.29 from PyPI beside the package:

    python -m pytest tests/parity/test_compose_vs_torchvision.py
"""
import pathlib

import pytest

from reference import check_declared_geometry, gaussian_noise, require

torch, torchvision = require()
v2 = pytest.importorskip("torchvision.transforms.v2")
F = v2.functional
import conveyor  # noqa: E402
from affine_grid import grid_as_conveyor  # noqa: E402
from conveyor import transforms as T  # noqa: E402


pytestmark = pytest.mark.filterwarnings("ignore:The image decoding:DeprecationWarning")  # torchvision.io's, 0.29
ROOT = pathlib.Path(__file__).resolve().parents[2]
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

# What recipes write, and every pixel transform conveyor runs, at probabilities that make most of
# them fire (each pipeline draws differently for each sample and seed).
PIPELINES = {
    "eval": lambda: v2.Compose([v2.Resize(256), v2.CenterCrop(224), v2.ToImage(), v2.ToDtype(torch.float32, scale=True),
                                v2.Normalize(MEAN, STD)]),
    "resnet": lambda: v2.Compose([v2.RandomResizedCrop(176), v2.RandomHorizontalFlip(), v2.PILToTensor(),
                                  v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD),
                                  v2.RandomErasing(0.5, value=(0.5, -1.0, 2.0))]),
    "colour": lambda: v2.Compose([
        v2.RandomResizedCrop(96, scale=(0.25, 1.0)), v2.RandomHorizontalFlip(),
        v2.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1), v2.RandomGrayscale(0.3),
        v2.RandomApply([v2.RandomSolarize(128, p=1.0), v2.RandomPosterize(3, p=0.7)], p=0.6),
        v2.RandomInvert(0.3), v2.RandomVerticalFlip(0.4), v2.RandomHorizontalFlip(0.5),
        v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD), v2.RandomErasing(0.7)]),
    "uint8": lambda: v2.Compose([v2.CenterCrop(200), v2.ColorJitter(contrast=(0.2, 1.8), hue=0.3),
                                 v2.Grayscale(3), v2.RandomErasing(1.0, value=77)]),
    "torchvision 2021": lambda: v2.Compose([
        v2.RandomResizedCrop(176), v2.RandomHorizontalFlip(), v2.TrivialAugmentWide(), v2.PILToTensor(),
        v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD), v2.RandomErasing(0.5)]),
    # A last cast to a 16-bit float, before or after the erasing.
    "bfloat16": lambda: v2.Compose([
        v2.RandomResizedCrop(176), v2.RandomHorizontalFlip(), v2.TrivialAugmentWide(),
        v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD), v2.ToDtype(torch.bfloat16),
        v2.RandomErasing(0.6, value=(0.3, -1.7, 2.2))]),
    "float16": lambda: v2.Compose([
        v2.CenterCrop(150), v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.ToDtype(torch.float32, scale=True),
        v2.Normalize(MEAN, STD), v2.RandomErasing(0.6), v2.ToDtype(torch.float16)]),
    "policies": lambda: v2.Compose([
        v2.RandomResizedCrop(128), v2.RandAugment(), v2.AutoAugment(), v2.TrivialAugmentWide(num_magnitude_bins=15),
        v2.RandAugment(num_ops=1, magnitude=20, interpolation=v2.InterpolationMode.BILINEAR, fill=[30, 60, 90])]),
    "geometry and blur": lambda: v2.Compose([
        v2.Resize(150), v2.CenterCrop(144), v2.RandomHorizontalFlip(),
        v2.RandomAffine(degrees=20, translate=(0.1, 0.2), scale=(0.8, 1.2), shear=(-10, 10, -5, 5)),
        v2.RandomRotation(30, interpolation=v2.InterpolationMode.BILINEAR, fill=(10, 200, 40)),
        v2.GaussianBlur(7, sigma=(0.5, 3.0)), v2.RandomAdjustSharpness(2.5, p=0.7), v2.RandomAutocontrast(0.6),
        v2.RandomEqualize(0.6), v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32, scale=True)]),
    # GaussianNoise on the uint8 image (int16 steps) and on ToDtype's float image, before Normalize
    "gaussian noise": lambda: v2.Compose([
        v2.RandomResizedCrop(112), v2.GaussianNoise(mean=0.02, sigma=0.08), v2.RandomInvert(0.5),
        v2.RandomApply([v2.GaussianNoise(sigma=0.3, clip=False)], p=0.5), v2.ToDtype(torch.float32, scale=True),
        v2.GaussianNoise(), v2.RandomApply([v2.GaussianNoise(mean=-0.1, sigma=0.4, clip=False)], p=0.5),
        v2.Normalize(MEAN, STD), v2.RandomErasing(0.7)]),
    "gaussian noise, bfloat16": lambda: v2.Compose([
        v2.CenterCrop(100), v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.GaussianNoise(sigma=0.2),
        v2.Normalize(MEAN, STD), v2.ToDtype(torch.bfloat16)]),
    "photometric distortion": lambda: v2.Compose([
        v2.RandomResizedCrop(112), v2.RandomPhotometricDistort(),
        v2.RandomPhotometricDistort(brightness=(0.5, 1.5), saturation=(0.0, 2.0), hue=(-0.3, 0.3), p=0.8),
        v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)]),
    "perspective": lambda: v2.Compose([
        v2.Resize(150), v2.CenterCrop(144), v2.RandomPerspective(0.6, p=0.8), v2.RandomHorizontalFlip(),
        v2.RandomPerspective(0.3, p=0.6, interpolation=v2.InterpolationMode.NEAREST, fill=(10, 200, 40)),
        v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)]),
    # Sizes as (height, width): the seed document's Resize((224, 224)) alone, rectangles after a
    # random crop and after a shorter-side resize capped by max_size.
    "resize to height and width": lambda: v2.Compose([
        v2.Resize((224, 224)), v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)]),
    "rectangles": lambda: v2.Compose([
        v2.RandomResizedCrop((96, 160), scale=(0.3, 1.0)), v2.RandomHorizontalFlip(), v2.RandomVerticalFlip(0.5),
        v2.RandomRotation(20, fill=(10, 200, 40)), v2.GaussianBlur(5), v2.TrivialAugmentWide(),
        v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD), v2.RandomErasing(0.7)]),
    "max size": lambda: v2.Compose([
        v2.Resize(160, max_size=200), v2.CenterCrop((150, 120)), v2.RandomAffine(10, translate=(0.1, 0.1)),
        v2.RandAugment(), v2.ToDtype(torch.float32, scale=True)]),
    "resize to a rectangle, then crop": lambda: v2.Compose([
        v2.Resize((120, 200)), v2.CenterCrop(112), v2.RandomEqualize(0.5), v2.ToImage()]),
    # Bicubic, antialiased: DeiT's and DINO's resizes, torch's uint8 arithmetic.
    "bicubic": lambda: v2.Compose([
        v2.RandomResizedCrop(112, scale=(0.1, 1.0), interpolation=v2.InterpolationMode.BICUBIC),
        v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD),
        v2.RandomErasing(0.7)]),
    "bicubic eval": lambda: v2.Compose([
        v2.Resize(128, interpolation=v2.InterpolationMode.BICUBIC), v2.CenterCrop(112), v2.ToImage()]),
    # torch's other resizes: nearest, nearest-exact, bilinear and bicubic without antialiasing.
    "nearest crops": lambda: v2.Compose([
        v2.RandomResizedCrop((96, 80), scale=(0.05, 1.0), interpolation=v2.InterpolationMode.NEAREST),
        v2.RandomHorizontalFlip(), v2.RandomChannelPermutation(), v2.ToImage()]),
    "nearest-exact eval": lambda: v2.Compose([
        v2.Resize(130, interpolation=v2.InterpolationMode.NEAREST_EXACT), v2.CenterCrop(112), v2.ToImage()]),
    "bilinear, antialias=False": lambda: v2.Compose([
        v2.RandomResizedCrop(112, antialias=False), v2.ColorJitter(0.4, 0.4), v2.ToDtype(torch.float32, scale=True),
        v2.Normalize(MEAN, STD)]),
    "bicubic, antialias=False": lambda: v2.Compose([  # shrinking and, from crops of 0.5 % of an image, growing
        v2.RandomResizedCrop(112, scale=(0.005, 1.0), interpolation=v2.InterpolationMode.BICUBIC, antialias=False),
        v2.RandomHorizontalFlip(), v2.ColorJitter(0.3, 0.3), v2.ToImage()]),
    "resize, antialias=None": lambda: v2.Compose([v2.Resize((72, 96), antialias=None), v2.ToImage()]),
    "longer side to max_size": lambda: v2.Compose([
        v2.Resize(None, max_size=120), v2.RandomCrop(96, pad_if_needed=True, padding_mode="edge"),
        v2.RandomHorizontalFlip(), v2.ToImage()]),
    # RandomCrop with zero padding: CIFAR's recipe, and a crop larger than the resized image.
    "cifar": lambda: v2.Compose([
        v2.Resize((32, 32)), v2.RandomCrop(32, padding=4), v2.RandomHorizontalFlip(),
        v2.ToDtype(torch.float32, scale=True), v2.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))]),
    "random crop, padded": lambda: v2.Compose([
        v2.Resize(48), v2.RandomCrop((56, 40), padding=[1, 2], pad_if_needed=True), v2.RandomVerticalFlip(),
        v2.TrivialAugmentWide(), v2.ToImage()]),
    # The padding modes: CIFAR's reflect, a Pad folded into the crop, edges with pad_if_needed.
    "cifar, reflect": lambda: v2.Compose([
        v2.Resize((32, 32)), v2.RandomCrop(32, padding=4, padding_mode="reflect"), v2.RandomHorizontalFlip(),
        v2.ToDtype(torch.float32, scale=True), v2.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))]),
    "pad symmetric, then crop": lambda: v2.Compose([
        v2.Resize(30), v2.Pad([5, 1, 2, 6], padding_mode="symmetric"), v2.RandomCrop((33, 29)), v2.ToImage()]),
    "edges, pad if needed": lambda: v2.Compose([
        v2.Resize(24, interpolation=v2.InterpolationMode.BICUBIC),
        v2.RandomCrop((40, 30), padding=[3, 1], pad_if_needed=True, padding_mode="edge"), v2.RandomGrayscale(0.5),
        v2.ToImage()]),
    # Containers: one choice or order per sample, replayed as the calls of what was picked, in order.
    "choice and order": lambda: v2.Compose([
        v2.RandomResizedCrop(112, scale=(0.2, 1.0)),
        v2.RandomChoice([v2.ColorJitter(brightness=0.5, hue=0.2),
                         v2.Compose([v2.RandomGrayscale(1.0), v2.RandomSolarize(100, p=0.8)]),
                         v2.RandomPosterize(4, p=1.0)], p=[2, 1, 1]),
        v2.RandomOrder([v2.RandomInvert(0.5), v2.RandomAdjustSharpness(2.0, p=0.8), v2.RandomVerticalFlip(0.5),
                        v2.RandomChoice([v2.RandomEqualize(1.0), v2.RandomAutocontrast(1.0)])]),
        v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD),
        v2.RandomChoice([v2.RandomErasing(0.7), v2.RandomErasing(0.7, value=(0.5, -1.0, 2.0))], p=[0.3, 0.7])]),
}


def _replay(path, calls, compose):
    """torchvision's functionals on the decoded image with conveyor's drawn parameters, then the
    Compose's own ToDtype and Normalize (before an erase, which recipes place after them)."""
    with grid_as_conveyor():  # affine_grid.py: the grid's order, which the BLAS decides on some CPUs
        return _replay_calls(path, calls, compose)


def _replay_calls(path, calls, compose):
    x = torchvision.io.decode_image(str(path), mode=torchvision.io.ImageReadMode.RGB)
    tail = [t for t in compose.transforms if isinstance(t, (v2.ToDtype, v2.Normalize))]
    finished = False
    for name, kwargs in calls:
        check_declared_geometry(compose, name, kwargs, pil=False)
        if name == "erase" and not finished:
            x, finished = _finish(x, tail), True
        if name == "gaussian_noise":
            if kwargs["image"] == "float32" and x.dtype == torch.uint8:
                x = _finish(x, tail[:1])  # ToDtype's float image, which Normalize (at the end) takes
            x = gaussian_noise(x, **kwargs)
        elif name == "erase":
            x = F.erase(x, kwargs["i"], kwargs["j"], kwargs["h"], kwargs["w"],
                        torch.tensor(kwargs["v"], dtype=x.dtype)[:, None, None])
        else:
            if "interpolation" in kwargs:
                kwargs = dict(kwargs, interpolation=F.InterpolationMode(kwargs["interpolation"]))
            if name in ("resized_crop", "resize"):
                kwargs = {"antialias": True, **kwargs}  # unless conveyor drew antialias=False
            x = getattr(F, name)(x, **kwargs)
    return x if finished else _finish(x, tail)


def _finish(x, tail):
    for t in tail:
        x = t(x)
    return x


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("seed", [0, 1234])
def test_a_compose_equals_torchvision_on_the_parameters_conveyor_drew(photos, name, seed):
    compose = PIPELINES[name]()
    dataset = conveyor.ImageFolder(str(photos))
    files = [pathlib.Path(dataset.name(i)) for i in range(len(dataset))]
    loader = conveyor.Loader(dataset, batch_size=len(files), seed=seed, workers=2, transform=compose)
    augment = loader.transform
    drawn = 0
    for epoch in range(2):
        (images, _), = list(loader)
        for index, path in enumerate(files):
            _, height, width = torchvision.io.decode_image(str(path), mode=torchvision.io.ImageReadMode.RGB).shape
            calls = augment.drawn_calls(seed=seed, epoch=epoch, index=index, width=width, height=height)
            drawn += len(calls)
            expected = _replay(path, calls, compose)
            assert images[index].dtype == expected.dtype, path.name
            assert torch.equal(images[index], expected), (
                f"{path.name} epoch {epoch}: {calls}; {(images[index].double() - expected.double()).abs().max()} off")
    assert drawn >= 2 * 2 * len(files), "the pipeline drew almost nothing: the comparison would be vacuous"


@pytest.mark.parametrize("crop", ["five", "ten", "ten, vertical"])
def test_five_and_ten_crops_are_views_equal_to_torchvisions_collated_tuple(photos, crop):
    """FiveCrop and TenCrop are deterministic: each view equals the element of torchvision's tuple."""
    make = {"five": lambda: v2.FiveCrop((96, 80)), "ten": lambda: v2.TenCrop(88),
            "ten, vertical": lambda: v2.TenCrop((72, 90), vertical_flip=True)}[crop]
    # ToImage first, as a recipe has it: v2 converts only the first plain tensor of a tuple
    compose = v2.Compose([v2.ToImage(), v2.Resize(120), make(), v2.ToDtype(torch.float32, scale=True),
                          v2.Normalize(MEAN, STD)])
    dataset = conveyor.ImageFolder(str(photos))
    files = [pathlib.Path(dataset.name(i)) for i in range(len(dataset))]
    (views, _), = list(conveyor.Loader(dataset, batch_size=len(files), workers=2, transform=compose))
    assert len(views) == (5 if crop == "five" else 10)
    for index, path in enumerate(files):
        expected = compose(torchvision.io.decode_image(str(path), mode=torchvision.io.ImageReadMode.RGB))
        for k, want in enumerate(expected):
            assert torch.equal(views[k][index], want), (path.name, k)


def test_conveyor_transforms_are_torchvisions():
    """conveyor.transforms' names compile to what torchvision's do: the same batches."""
    ours = T.Compose([T.RandomResizedCrop(96), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.1),
                      T.TrivialAugmentWide(), T.RandomAffine(10, shear=5, interpolation="bilinear"),
                      T.RandomApply([T.RandomInvert(1.0)], p=0.5), T.PILToTensor(), T.ToDtype("float32", scale=True),
                      T.Normalize(MEAN, STD), T.RandomErasing(0.5, value="random")])
    theirs = v2.Compose([v2.RandomResizedCrop(96), v2.RandomHorizontalFlip(), v2.ColorJitter(0.4, 0.4, 0.4, 0.1),
                         v2.TrivialAugmentWide(),
                         v2.RandomAffine(10, shear=5, interpolation=v2.InterpolationMode.BILINEAR),
                         v2.RandomApply([v2.RandomInvert(1.0)], p=0.5), v2.PILToTensor(),
                         v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD),
                         v2.RandomErasing(0.5, value="random")])
    batches = [next(iter(conveyor.Loader(conveyor.ImageFolder(str(ROOT / "examples" / "data" / "samples")), batch_size=13, seed=5, workers=2,
                                         transform=t)))[0] for t in (ours, theirs)]
    assert torch.equal(*batches)
