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
