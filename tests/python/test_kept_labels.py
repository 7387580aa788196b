"""Labels kept past their batch (an eval loop's `targets.append(labels)`) are copies of their own:
they hold no slot of the loader's ring, so the loop runs through every batch and they keep their
values."""
import pytest

import conveyor


@pytest.mark.parametrize("output", ["torch", "numpy"])
def test_kept_labels_hold_no_slot(samples, output):
    if output == "torch":
        pytest.importorskip("torch")
    data = conveyor.ImageFolder(str(samples))
    loader = conveyor.Loader(data, batch_size=2, prefetch=2, workers=2, output=output,
                             transform=conveyor.ImageAugment.eval(36, 32))
    targets = []
    for _, labels in loader:
        targets.append(labels)  # seven batches through two slots
    assert len(targets) == 7
    assert [int(y) for labels in targets for y in labels] == [data.label(i) for i in range(len(data))]


def test_batch_labels_from_batches_hold_no_slot(samples):
    """`Batch.labels` of `batches()`: the Tensor kept, unconverted, for every batch, as an eval loop
    keeps them; converted afterwards, each as often as asked, to the batch's labels."""
    numpy = pytest.importorskip("numpy")
    data = conveyor.ImageFolder(str(samples))
    loader = conveyor.Loader(data, batch_size=2, prefetch=2, workers=2, output="numpy",
                             transform=conveyor.ImageAugment.eval(36, 32))
    kept = [batch.labels for batch in loader.batches()]  # seven batches through two slots
    assert len(kept) == 7
    for tensor in kept:
        assert tensor.shape[0] in (1, 2) and tensor.dtype == "i64"
    values = [int(y) for tensor in kept for y in numpy.from_dlpack(tensor)]
    assert values == [data.label(i) for i in range(len(data))]
    assert [int(y) for y in numpy.from_dlpack(kept[0])] == values[:2]  # exported again
