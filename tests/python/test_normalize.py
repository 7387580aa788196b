"""The presets' float output against torchvision's Normalize with the ImageNet statistics its
documentation and models publish, written here as literals (never read from conveyor), applied to
conveyor's own u8 output of the same samples: a wrong normalisation constant cannot set its own
expectation."""
import pytest

import conveyor

torch = pytest.importorskip("torch")
transforms = pytest.importorskip("torchvision.transforms", reason="torchvision's Normalize is the reference")

IMAGENET = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])


def first_batch(samples, transform):
    loader = conveyor.Loader(conveyor.ImageFolder(str(samples)), batch_size=13, shuffle=True, seed=11, workers=2,
                             transform=transform)
    images, _ = next(iter(loader))
    return images


@pytest.mark.parametrize("preset", ["train", "eval"])
def test_presets_normalise_as_torchvisions_normalize_with_the_imagenet_statistics(samples, preset):
    make = getattr(conveyor.ImageAugment, preset)
    ours = first_batch(samples, make(dtype="f32"))
    pixels = first_batch(samples, make(dtype="u8", normalize=None))  # the same crops and flips, as torchvision's uint8 tensors
    assert ours.dtype == torch.float32 and ours.shape == pixels.shape == (13, 3, 224, 224)
    theirs = IMAGENET(pixels.float() / 255)  # ToTensor's scaling, then Normalize
    # One fmaf against torchvision's float subtract-then-divide: a few ulps of values under 2.7 apart
    # (each within about 5.5e-7 of exact); a constant wrong in its third digit is 1e-3 away.
    worst = (ours - theirs).abs().amax(dim=(0, 2, 3))
    assert worst.max().item() < 2e-6, f"largest difference per channel: {worst.tolist()}"
