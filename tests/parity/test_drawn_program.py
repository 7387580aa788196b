"""End to end, on the real photos: what a Loader yields with pixel transforms equals torchvision 0.29's
functionals fed the calls conveyor says it drew (`ImageAugment.drawn_calls`), applied in order to
the image conveyor resampled (the same loader without the transforms), bit for bit. Random recipes
of every transform conveyor runs, several seeds and epochs, u8 output (erasing values inside
[0, 255], which u8 stores truncated as torch's assignment does).

The resampling itself is held to torchvision elsewhere (tests/ops, the eval parity test); here the
program's draws and their order are. Run with torch 2.15 / torchvision 0.29 from PyPI:

    python -m pytest tests/parity/test_drawn_program.py
"""
import os
import pathlib
import random

import numpy as np
import pytest

from reference import require

torch, torchvision = require()
F = pytest.importorskip("torchvision.transforms.v2.functional")
import conveyor  # noqa: E402
from conveyor import transforms as T  # noqa: E402


ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("CONVEYOR_TEST_DATA") or ROOT.parent / "shared" / "data")


@pytest.fixture(scope="module")
def photos():
    """Every third photo of the corpus, as (bytes, width, height) (no Exif orientation applied)."""
    paths = sorted((DATA / "photos").glob("*.jpg"))[::3]
    if not paths:
        pytest.skip(f"real test images not found at {DATA}")
    out = []
    for path in paths:
        data = path.read_bytes()
        h, w = torchvision.io.decode_image(str(path), mode=torchvision.io.ImageReadMode.RGB).shape[1:]
        out.append((data, w, h))
    return out


def random_recipe(rng):
    """Transforms of every kind up to a program's 16 ops, arguments across their ranges,
    RandomApply, RandomChoice and RandomOrder nesting some, an erasing with values inside [0, 255]
    (or a choice of two) last now and then."""
    def p():
        return 1.0 if rng.random() < 0.3 else rng.random()

    def leaf():
        kind = rng.randrange(10)
        if kind == 0:
            return T.RandomVerticalFlip(p=p())
        if kind == 1:
            return T.ColorJitter(brightness=rng.uniform(0, 0.9), contrast=(rng.uniform(0, 1), rng.uniform(1, 2)),
                                 saturation=rng.uniform(0, 1), hue=rng.uniform(0, 0.5))
        if kind == 2:
            return T.Grayscale() if rng.random() < 0.3 else T.RandomGrayscale(p=p())
        if kind == 3:
            return T.RandomInvert(p=p())
        if kind == 4:
            return T.RandomPosterize(bits=rng.randrange(9), p=p())
        if kind == 5:
            return T.RandomSolarize(threshold=rng.uniform(0, 255), p=p())
        if kind == 6:
            return T.ColorJitter(hue=(-0.5, 0.5))
        if kind == 7:
            return T.RandomApply([T.RandomInvert(p=p()), T.ColorJitter(contrast=0.8)], p=p())
        if kind == 8:
            return T.RandomChoice([T.RandomInvert(p=p()), T.ColorJitter(saturation=0.9, hue=0.2),
                                   T.RandomSolarize(threshold=rng.uniform(0, 255), p=p())],
                                  p=None if rng.random() < 0.5 else [rng.random(), 1.0, rng.random()])
        return T.RandomOrder([T.RandomPosterize(bits=rng.randrange(9), p=p()), T.RandomVerticalFlip(p=p()),
                              T.RandomChoice([T.RandomGrayscale(p=p()), T.RandomApply([T.RandomInvert(p=p())])])])

    # The most ops each may draw; the others, one.
    ops = {T.ColorJitter: 4, T.RandomApply: 5, T.RandomChoice: 4, T.RandomOrder: 3}
    recipe, budget = [], 15  # one left for the erasing
    for _ in range(rng.randrange(4, 9)):
        t = leaf()
        if ops.get(type(t), 1) > budget:
            break
        budget -= ops.get(type(t), 1)
        recipe.append(t)
    def erasing():
        return T.RandomErasing(p=p(), value=[rng.uniform(0, 255), rng.uniform(0, 255), rng.uniform(0, 255)])

    if rng.random() < 0.7:
        recipe.append(erasing() if rng.random() < 0.6 else T.RandomChoice([erasing(), erasing()], p=[1.0, 2.0]))
    return recipe


def torchvision_call(image, call):
    """`image` (uint8 CHW) through the functional `call` names."""
    kwargs = dict(call.kwargs)
    if call.function == "erase":
        v = torch.tensor(kwargs.pop("v"), dtype=torch.float32)[:, None, None]
        return F.erase(image, v=v, **kwargs)
    return getattr(F, call.function)(image, **kwargs)


def batches(photos, augment, seed, epoch):
    """Every image the loader yields for `epoch`, in dataset order, as uint8 CHW tensors."""
    data = conveyor.InMemory()
    for k, (bytes_, _, _) in enumerate(photos):
        data.add(bytes_, k)
    loader = conveyor.Loader(data, batch_size=4, seed=seed, transform=augment, workers=2, output="torch")
    loader.set_epoch(epoch)
    return [image.clone() for images, _ in loader for image in images]


@pytest.mark.parametrize("recipe_seed", range(8))
def test_the_drawn_calls_on_the_resampled_image_give_the_loaders_output(photos, recipe_seed):
    rng = random.Random(recipe_seed)
    recipe = random_recipe(rng)
    size = rng.choice([32, 57, 96])
    plain = conveyor.ImageAugment.train(size, dtype="u8", normalize=None, layout="nchw")
    augment = conveyor.ImageAugment.train(size, dtype="u8", normalize=None, layout="nchw", transforms=recipe)
    seed, epoch = rng.randrange(1 << 32), rng.randrange(4)
    resampled = batches(photos, plain, seed, epoch)
    ours = batches(photos, augment, seed, epoch)
    ran = set()
    for index, ((_, w, h), image, got) in enumerate(zip(photos, resampled, ours)):
        geometry = plain.drawn_calls(seed, epoch, index, w, h)
        calls = augment.drawn_calls(seed, epoch, index, w, h)
        assert calls[:len(geometry)] == geometry  # the transforms change no geometric draw
        expected = image
        for call in calls[len(geometry):]:
            expected = torchvision_call(expected, call)
            ran.add(call.function)
        differing = int((got != expected).sum())
        assert differing == 0, (f"recipe {recipe_seed} ({recipe}), sample {index}: {differing} values differ after "
                                f"{calls[len(geometry):]}")
    assert ran, f"recipe {recipe_seed} drew nothing for any sample"


def test_every_transform_draws_calls_torchvision_takes(photos):
    """Every kind of call across the recipes above, so none of them goes untested by chance."""
    seen = set()
    for recipe_seed in range(8):
        rng = random.Random(recipe_seed)
        recipe = random_recipe(rng)
        augment = conveyor.ImageAugment.train(rng.choice([32, 57, 96]), dtype="u8", normalize=None, transforms=recipe)
        for index, (_, w, h) in enumerate(photos):
            seen |= {c.function for c in augment.drawn_calls(1, 0, index, w, h)}
    assert {"vertical_flip", "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue",
            "rgb_to_grayscale", "invert", "posterize", "solarize", "erase"} <= seen, seen


def test_drawn_calls_are_a_pure_function_of_the_sample():
    augment = conveyor.ImageAugment.train(64, transforms=[T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.RandomErasing(p=1)])
    first = augment.drawn_calls(5, 2, 17, 640, 480)
    assert first == augment.drawn_calls(5, 2, 17, 640, 480)
    assert first != augment.drawn_calls(5, 3, 17, 640, 480)
    assert [c.function for c in first][0] == "resized_crop"
    assert first[-1].function == "erase" and set(first[-1].kwargs) == {"i", "j", "h", "w", "v"}
    assert np.allclose(first[-1].kwargs["v"], (0.0, 0.0, 0.0))
