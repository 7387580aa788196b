"""The transforms' defaults and presets: a Loader without a transform gets the evaluation preset
(no randomness), and the presets normalise for every dtype as C++'s do, so u8 asks for
normalize=None."""
import pytest

import conveyor

torch = pytest.importorskip("torch")


def images(loader):
    return [torch.from_dlpack(b.images).clone() for b in loader.batches()]


def test_a_loader_without_a_transform_gets_the_eval_preset(samples):
    default = conveyor.Loader(str(samples), batch_size=5, shuffle=True, seed=1, workers=2)
    assert default.transform == conveyor.ImageAugment.eval()
    first, second = images(default), images(default)  # epochs 0 and 1
    preset = images(conveyor.Loader(str(samples), batch_size=5, shuffle=True, seed=1, workers=2,
                                    transform=conveyor.ImageAugment.eval()))
    assert [tuple(x.shape) for x in first] == [(5, 3, 224, 224)] * 2 + [(3, 3, 224, 224)]
    assert all(torch.equal(a, b) for a, b in zip(first, preset))
    # The same photos in another order give the same crops: nothing is random.
    def by_index(loader):
        return {i: im.clone() for b in loader.batches() for i, im in zip(b.indices, torch.from_dlpack(b.images))}

    zero, one = by_index(default), by_index(default)
    assert all(torch.equal(zero[i], one[i]) for i in zero)
    assert float(first[0].mean()) < 1.0 and float(first[0].min()) < 0  # normalised: not pixels / 255
    assert len(second) == 3


def test_the_presets_normalise_every_dtype_as_cpp_does(samples):
    for preset in (conveyor.ImageAugment.train, conveyor.ImageAugment.eval):
        assert preset().normalize == "imagenet"
        assert preset(dtype="u8").normalize == "imagenet"  # C++'s train() and eval() keep it too
        with pytest.raises(conveyor.ConfigError, match="u8 output cannot be normalized: pass normalize=None"):
            conveyor.Loader(str(samples), transform=preset(dtype="u8"))
        loader = conveyor.Loader(str(samples), batch_size=2, workers=1, transform=preset(dtype="u8", normalize=None))
        batch = next(loader.batches())
        assert batch.images.dtype == "u8"
