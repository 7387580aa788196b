"""Views in Python: a list of image transforms (or conveyor.Views with counts) gives each image's
view copies, decoded once; copy 0 is what its transform alone gives, every copy its own draws, the
grouped tensors the copies stacked, and a device loader the CPU loader's views."""
import pathlib

import pytest

torch = pytest.importorskip("torch")
v2 = pytest.importorskip("torchvision.transforms.v2")
import conveyor  # noqa: E402

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "data" / "samples"
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def crops(size, scale):
    return v2.Compose([v2.RandomResizedCrop(size, scale=scale), v2.RandomHorizontalFlip(),
                       v2.RandomApply([v2.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), v2.RandomGrayscale(0.2),
                       v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])


GLOBAL, LOCAL = crops(64, (0.4, 1.0)), crops(32, (0.05, 0.4))


def loader(transform, **kwargs):
    return conveyor.Loader(str(SAMPLES), batch_size=5, shuffle=True, seed=3, workers=2, transform=transform, **kwargs)


def test_a_list_of_transforms_yields_one_tensor_per_view_copy_and_copy_0_is_its_transform_alone():
    views = loader([GLOBAL, GLOBAL, LOCAL, LOCAL, LOCAL])
    alone = loader(GLOBAL)
    batches = 0
    for (copies, labels), (image, alone_labels) in zip(views, alone):
        assert [tuple(c.shape[1:]) for c in copies] == [(3, 64, 64)] * 2 + [(3, 32, 32)] * 3
        assert all(c.shape[0] == len(labels) for c in copies)
        assert torch.equal(copies[0], image) and torch.equal(labels, alone_labels)
        assert not torch.equal(copies[0], copies[1]) and not torch.equal(copies[2], copies[3])  # draws of their own
        batches += 1
    assert batches == 3  # 13 photos in batches of 5


def test_grouped_views_are_the_copies_stacked_and_a_views_later_views_leave_it_alone():
    grouped = loader(conveyor.Views([(GLOBAL, 2), (LOCAL, 3)], grouped=True))
    flat = loader(conveyor.Views([(GLOBAL, 2), (LOCAL, 3)]))
    shorter = loader(conveyor.Views([(GLOBAL, 2)]))
    for (groups, _), (copies, _), (first, _) in zip(grouped, flat, shorter):
        assert [tuple(g.shape[1:]) for g in groups] == [(2, 3, 64, 64), (3, 3, 32, 32)]
        assert torch.equal(groups[0], torch.stack(copies[:2], 1)) and torch.equal(groups[1], torch.stack(copies[2:], 1))
        assert torch.equal(first[0], copies[0]) and torch.equal(first[1], copies[1])


def test_views_it_cannot_run_are_refused_by_position():
    half = v2.Compose([v2.CenterCrop(32), v2.ToDtype(torch.float32, scale=True), v2.ToDtype(torch.bfloat16)])
    with pytest.raises(conveyor.ConfigError, match="view 1: dtype bf16 differs from view 0's f32"):
        loader([GLOBAL, half])
    with pytest.raises(conveyor.ConfigError, match="view 0 is not an image transform"):
        loader(conveyor.Views([conveyor.RawTensor([4])]))
    with pytest.raises(conveyor.ConfigError, match="batch_transform mixes images"):
        loader([GLOBAL, LOCAL], batch_transform=v2.MixUp(num_classes=3))


def test_a_list_of_single_transforms_meant_as_a_compose_is_told_so():
    """A Compose's list given without the Compose is read as views: the error says what it read and
    what to write, beside the view's own error."""
    with pytest.raises(conveyor.ConfigError, match=r"^Loader: transform is a list, which conveyor reads as views .* "
                                                   r"single transforms \(RandomResizedCrop\): for one pipeline, wrap "
                                                   r"the list in transforms.Compose\(\[...\]\)\. The view's error: .*before any crop"):
        loader([v2.RandomResizedCrop(64), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])
    # single crops as views, each a pipeline of one transform, still run
    (copies, _), *_ = list(loader([v2.RandomResizedCrop(48), v2.CenterCrop(32)]))
    assert [tuple(c.shape[1:]) for c in copies] == [(3, 48, 48), (3, 32, 32)]


@pytest.mark.skipif(not (conveyor.has_cuda_backend() and torch.cuda.is_available()), reason="needs a CUDA device")
def test_a_device_loader_gives_the_cpu_loaders_views():
    for (a, _), (b, _) in zip(loader([GLOBAL, LOCAL, LOCAL]), loader([GLOBAL, LOCAL, LOCAL], device="cuda")):
        assert all(y.is_cuda and torch.equal(x, y.cpu()) for x, y in zip(a, b))
