"""Loader(batch_transform=...) against torchvision 0.29's MixUp, CutMix and RandomChoice, and timm's
Mixup ('batch' mode).

Pixels and targets: a loader's mixed batches equal torchvision's transform applied, with the
parameters conveyor drew (`Batch.mix`), to the same loader's unmixed batches, bit for bit, in
float32, bfloat16 and float16 (and uint8 for CutMix). Draws: lambda, CutMix's box and the choice
between the two, drawn many times by conveyor (the extension's `batch_mix_draw`) and by torchvision
(`make_params`, RandomChoice's forward), compared as distributions (a Kolmogorov-Smirnov distance at
the 0.001 level, five standard errors a category). Both sides are seeded: the outcome is fixed.
"""
import collections
import pathlib

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
v2 = pytest.importorskip("torchvision.transforms.v2")
import conveyor  # noqa: E402
from conveyor import transforms as T  # noqa: E402
from distributions import same_categories, same_distribution  # noqa: E402

CLASSES = 5


@pytest.fixture(scope="module")
def samples():
    """The 13 bundled photos, an ImageFolder of 3 classes."""
    return pathlib.Path(__file__).resolve().parents[2] / "examples" / "data" / "samples"

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "u8": torch.uint8}


def loader(samples, batch_transform, dtype, layout="nchw", batch_size=5):
    augment = conveyor.ImageAugment.train(24, dtype=dtype, layout=layout, normalize=None if dtype == "u8" else "imagenet")
    return conveyor.Loader(samples, batch_size=batch_size, shuffle=True, seed=3, workers=3, transform=augment,
                           batch_transform=batch_transform, drop_last=batch_size % 2 == 0)


def torchvision_mixed(transform, images, labels, mix, layout="nchw"):
    """torchvision's own MixUp or CutMix on an unmixed batch, with conveyor's draw (on [N, C, H, W]:
    an NHWC batch goes there and back)."""
    if layout == "nhwc":
        mixed, targets = torchvision_mixed(transform, images.permute(0, 3, 1, 2), labels, mix)
        return mixed.permute(0, 2, 3, 1), targets
    op, lam, label_lam, box = mix
    params = {"labels": labels, "batch_size": labels.shape[0]}
    if op == "MixUp":
        params["lam"] = lam
    else:
        params["box"], params["lam_adjusted"] = box, label_lam
    return transform.transform(images, params), transform.transform(labels, params)


def chosen(transform, op):
    """The torchvision transform of a RandomChoice named `op`, or the transform itself."""
    if isinstance(transform, v2.RandomChoice):
        return next(t for t in transform.transforms if type(t).__name__ == op)
    return transform


@pytest.mark.parametrize("dtype,layout,transform", [
    ("f32", "nchw", v2.MixUp(alpha=0.2, num_classes=CLASSES)),
    ("bf16", "nchw", v2.MixUp(alpha=1.0, num_classes=CLASSES)),
    ("f16", "nchw", v2.MixUp(alpha=1.0, num_classes=CLASSES)),
    ("f32", "nhwc", v2.CutMix(alpha=1.0, num_classes=CLASSES)),
    ("u8", "nchw", v2.CutMix(alpha=1.0, num_classes=CLASSES)),
    ("f32", "nchw", v2.RandomChoice([v2.MixUp(alpha=0.2, num_classes=CLASSES),
                                     v2.CutMix(alpha=1.0, num_classes=CLASSES)])),
])
def test_mixed_batches_equal_torchvisions_on_the_same_draw(samples, dtype, layout, transform):
    plain = [(torch.from_dlpack(b.images).clone(), torch.from_dlpack(b.labels))
             for b in loader(samples, None, dtype, layout).batches()]
    mixed = loader(samples, transform, dtype, layout)
    ops = collections.Counter()
    for (images, labels), batch in zip(plain, mixed.batches()):
        ops[batch.mix[0]] += 1
        theirs_images, theirs_targets = torchvision_mixed(chosen(transform, batch.mix[0]), images, labels, batch.mix,
                                                          layout)
        ours_images, ours_targets = torch.from_dlpack(batch.images), torch.from_dlpack(batch.targets)
        assert ours_images.dtype == theirs_images.dtype == DTYPES[dtype]
        assert torch.equal(ours_images, theirs_images), f"batch {batch.number}: {batch.mix}"
        assert not torch.equal(ours_images, images)
        assert ours_targets.dtype == torch.float32 and ours_targets.shape == (len(labels), CLASSES)
        assert torch.equal(ours_targets, theirs_targets), f"batch {batch.number}: {batch.mix}"
        assert torch.equal(torch.from_dlpack(batch.labels), labels)
    assert sum(ops.values()) == 3  # 13 photos in batches of 5


def test_the_loop_yields_images_and_soft_targets(samples):
    mixed = loader(samples, T.MixUp(alpha=0.5, num_classes=CLASSES), "f32")
    for images, targets in mixed:
        assert images.shape[0] == targets.shape[0]
        assert targets.dtype == torch.float32
        assert torch.allclose(targets.sum(dim=1), torch.ones(targets.shape[0]))
    # conveyor.transforms' names, a RandomChoice with weights among them: p = (0, 1) is CutMix always.
    choice = T.RandomChoice([T.MixUp(alpha=0.5, num_classes=CLASSES), T.CutMix(alpha=1.0, num_classes=CLASSES)],
                            p=[0.0, 1.0])
    assert {b.mix[0] for b in loader(samples, choice, "f32").batches()} == {"CutMix"}


def mixup_op(alpha):
    return ("mixup", [alpha, CLASSES])


def cutmix_op(alpha):
    return ("cutmix", [alpha, CLASSES])


def draws(ops, p, n, height=37, width=53):
    return [conveyor._conveyor.batch_mix_draw(ops, p, seed=5, epoch=1, batch=b, height=height, width=width)
            for b in range(n)]


N = 6000


@pytest.mark.parametrize("alpha", [0.2, 1.0, 3.0])
def test_mixup_lambda_is_torchvisions_distribution(alpha):
    torch.manual_seed(2)
    mixup = v2.MixUp(alpha=alpha, num_classes=CLASSES)
    theirs = [mixup.make_params([])["lam"] for _ in range(N)]
    ours = [d[1] for d in draws([mixup_op(alpha)], [], N)]
    same_distribution(theirs, ours, f"MixUp({alpha}) lambda")


def test_cutmix_box_is_torchvisions_distribution():
    torch.manual_seed(3)
    cutmix = v2.CutMix(alpha=1.0, num_classes=CLASSES)
    image = torch.zeros(1, 3, 37, 53)
    theirs = [cutmix.make_params([image]) for _ in range(N)]
    ours = draws([cutmix_op(1.0)], [], N)
    for k, name in enumerate(("x1", "y1", "x2", "y2")):
        same_distribution([t["box"][k] for t in theirs], [d[3][k] for d in ours], f"CutMix {name}")
    same_distribution([t["lam_adjusted"] for t in theirs], [d[2] for d in ours], "CutMix lam_adjusted")
    for _, _, label_lam, (x1, y1, x2, y2) in ours:
        assert label_lam == 1.0 - (x2 - x1) * (y2 - y1) / (37 * 53)


@pytest.mark.parametrize("p", [None, [1.0, 3.0]])
def test_random_choice_picks_as_torchvision(p):
    torch.manual_seed(4)
    choice = v2.RandomChoice([v2.MixUp(alpha=1.0, num_classes=CLASSES), v2.CutMix(alpha=1.0, num_classes=CLASSES)], p=p)
    theirs = [type(choice.transforms[int(torch.multinomial(torch.tensor(choice.p), 1))]).__name__ for _ in range(N)]
    ours = [d[0] for d in draws([mixup_op(1.0), cutmix_op(1.0)], p or [], N)]
    same_categories(theirs, ours, "RandomChoice's pick")


def test_batch_transforms_it_cannot_run_are_refused_by_name(samples):
    with pytest.raises(conveyor.ConfigError, match=r"MixUp\) needs num_classes"):
        loader(samples, v2.MixUp(alpha=1.0), "f32")
    with pytest.raises(conveyor.ConfigError, match=r"batch_transform.transforms\[1\] \(RandomErasing\) is not a batch"):
        loader(samples, v2.RandomChoice([v2.MixUp(num_classes=5), v2.RandomErasing()]), "f32")
    with pytest.raises(conveyor.ConfigError, match="MixUp: the images must be floating point"):
        loader(samples, v2.MixUp(num_classes=5), "u8")


@pytest.mark.skipif(not (conveyor.has_cuda_backend() and torch.cuda.is_available()), reason="needs a CUDA device")
@pytest.mark.parametrize("dtype,layout", [("f32", "nchw"), ("bf16", "nhwc"), ("f16", "nchw")])
def test_a_device_loader_mixes_as_the_cpu_loader_does(samples, dtype, layout):
    """The mixing kernel and the targets uploaded with the batch: the CPU loader's batches, bit for bit."""
    choice = v2.RandomChoice([v2.MixUp(alpha=0.4, num_classes=5), v2.CutMix(alpha=1.0, num_classes=5)])
    cpu = loader(samples, choice, dtype, layout)
    augment = conveyor.ImageAugment.train(24, dtype=dtype, layout=layout, normalize="imagenet")
    gpu = conveyor.Loader(samples, batch_size=5, shuffle=True, seed=3, workers=3, transform=augment, device="cuda",
                          batch_transform=choice, drop_last=False)
    mixed = 0
    for epoch in range(3):
        cpu.set_epoch(epoch)
        gpu.set_epoch(epoch)
        for (a, ta), (b, tb) in zip(cpu, gpu):
            assert b.is_cuda and tb.is_cuda and tb.dtype == torch.float32
            assert torch.equal(a, b.cpu()) and torch.equal(ta, tb.cpu())
            mixed += int(ta.max() < 1)
    assert mixed > 0, "no batch was mixed: the comparison would be vacuous"


# timm's Mixup, 'batch' mode: pairs i with N - 1 - i, one lambda a batch (float64), label smoothing.
try:
    import timm.data.mixup as timm_mixup
except ImportError:  # the tests above run without timm
    timm_mixup = None
needs_timm = pytest.mark.skipif(timm_mixup is None, reason="timm is not installed")


def timm_mixed(mixer, images, labels, mix, monkeypatch):
    """timm's own Mixup.__call__ on an unmixed batch, with conveyor's draw: its per-batch parameters
    and box patched to what conveyor drew (its lambda correction left to timm)."""
    op, lam, _, (x1, y1, x2, y2) = mix
    monkeypatch.setattr(mixer, "_params_per_batch", lambda: (lam, op == "CutMix"))
    monkeypatch.setattr(timm_mixup, "rand_bbox", lambda shape, lam, margin=0.0, count=None: (y1, y2, x1, x2))
    monkeypatch.setattr(timm_mixup, "rand_bbox_minmax", lambda shape, minmax, count=None: (y1, y2, x1, x2))
    return mixer(images.clone(), labels)


@pytest.mark.parametrize("dtype,kwargs", [
    ("f32", dict(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1)),
    ("bf16", dict(mixup_alpha=0.8, cutmix_alpha=1.0, prob=0.7, switch_prob=0.3, label_smoothing=0.2)),
    ("f16", dict(mixup_alpha=1.0, cutmix_alpha=0.0, label_smoothing=0.0)),
    ("f32", dict(mixup_alpha=0.0, cutmix_alpha=1.0, correct_lam=False)),
    ("u8", dict(mixup_alpha=0.0, cutmix_minmax=(0.2, 0.8))),
])
@needs_timm
def test_timm_batch_mode_equals_timms_on_the_same_draw(samples, dtype, kwargs, monkeypatch):
    mixer = timm_mixup.Mixup(num_classes=CLASSES, **kwargs)
    plain = [(torch.from_dlpack(b.images).clone(), torch.from_dlpack(b.labels))
             for b in loader(samples, None, dtype, batch_size=6).batches()]
    ops = collections.Counter()
    for (images, labels), batch in zip(plain, loader(samples, mixer, dtype, batch_size=6).batches()):
        ops[batch.mix[0]] += 1
        if batch.mix[0] is None:  # not mixed (prob): timm with lambda 1
            monkeypatch.setattr(mixer, "_params_per_batch", lambda: (1.0, False))
            theirs_images, theirs_targets = mixer(images.clone(), labels)
        else:
            theirs_images, theirs_targets = timm_mixed(mixer, images, labels, batch.mix, monkeypatch)
        monkeypatch.undo()
        assert torch.equal(torch.from_dlpack(batch.images), theirs_images), f"batch {batch.number}: {batch.mix}"
        assert torch.equal(torch.from_dlpack(batch.targets), theirs_targets), f"batch {batch.number}: {batch.mix}"
    assert sum(ops.values()) == 2  # 13 photos in batches of 6, the last (of 1) dropped: timm needs even batches


def timm_op(mode="batch", **kwargs):
    """The binding's op for a timm Mixup with these arguments (timm's names)."""
    a = dict(mixup_alpha=1.0, cutmix_alpha=0.0, cutmix_minmax=None, prob=1.0, switch_prob=0.5, correct_lam=True,
             label_smoothing=0.1)
    a.update(kwargs)
    minmax = [-1.0, -1.0] if a["cutmix_minmax"] is None else list(a["cutmix_minmax"])
    return ("timm", [a["mixup_alpha"], a["cutmix_alpha"], *minmax, a["prob"], a["switch_prob"], float(a["correct_lam"]),
                     a["label_smoothing"], CLASSES, float(("batch", "pair", "elem").index(mode))])


def same_ops_and_lambdas(theirs, ours, what):
    """(op, lam, label lam, ...) draws: the ops' shares, and each op's lambdas' distributions;
    returns {op: (theirs, ours)} for the ops drawn often enough to compare."""
    same_categories([t[0] for t in theirs], [d[0] for d in ours], f"{what} op", categories=1)
    compared = {}
    for op in ("MixUp", "CutMix"):
        a, b = [t for t in theirs if t[0] == op], [d for d in ours if d[0] == op]
        if len(a) < 100:
            continue
        same_distribution([t[1] for t in a], [d[1] for d in b], f"{what} {op} lambda")
        same_distribution([t[2] for t in a], [d[2] for d in b], f"{what} {op} labels' lambda")
        compared[op] = a, b
    return compared


@needs_timm
@pytest.mark.parametrize("kwargs", [dict(mixup_alpha=0.8, cutmix_alpha=1.0, prob=0.8, switch_prob=0.3),
                                    dict(mixup_alpha=0.0, cutmix_alpha=1.0),
                                    dict(mixup_alpha=0.0, cutmix_minmax=(0.2, 0.8))])
def test_timm_draws_are_timms_distribution(kwargs):
    """Which op, lambda, the box and the labels' lambda, against timm's own draws (numpy seeded)."""
    import numpy
    numpy.random.seed(5)
    mixer = timm_mixup.Mixup(num_classes=CLASSES, **kwargs)
    theirs = []
    for _ in range(N):
        lam, use_cutmix = mixer._params_per_batch()
        box, label_lam = (0, 0, 0, 0), lam
        if use_cutmix:
            (yl, yh, xl, xh), label_lam = timm_mixup.cutmix_bbox_and_lam(
                (37, 53), lam, ratio_minmax=mixer.cutmix_minmax, correct_lam=mixer.correct_lam)
            box = (int(xl), int(yl), int(xh), int(yh))
        theirs.append(("CutMix" if use_cutmix else ("MixUp" if lam != 1.0 else None), lam, float(label_lam), box))
    ours = draws([timm_op(**kwargs)], [], N)
    for op, (a, b) in same_ops_and_lambdas(theirs, ours, "timm's").items():
        if op == "CutMix":
            for k, name in enumerate(("x1", "y1", "x2", "y2")):
                same_distribution([t[3][k] for t in a], [d[3][k] for d in b], f"CutMix {name}")


def timm_mixed_per_sample(mixer, images, labels, sample_mixes, mode, monkeypatch):
    """timm's own Mixup.__call__ in mode 'pair' or 'elem' on an unmixed batch, with conveyor's
    draws: `_params_per_elem` patched to conveyor's lambdas and ops, `rand_bbox` to its boxes in
    the order timm asks for them (its lambda correction left to timm)."""
    import numpy
    draws = sample_mixes[:len(sample_mixes) // 2] if mode == "pair" else sample_mixes
    lam = numpy.array([d[1] for d in draws], dtype=numpy.float32)
    use_cutmix = numpy.array([d[0] == "CutMix" for d in draws])
    boxes = iter([(y1, y2, x1, x2) for op, _, _, (x1, y1, x2, y2) in draws if op == "CutMix"])
    monkeypatch.setattr(mixer, "_params_per_elem", lambda n: (lam.copy(), use_cutmix))
    monkeypatch.setattr(timm_mixup, "rand_bbox", lambda shape, lam, margin=0.0, count=None: next(boxes))
    monkeypatch.setattr(timm_mixup, "rand_bbox_minmax", lambda shape, minmax, count=None: next(boxes))
    return mixer(images.clone(), labels)


@pytest.mark.parametrize("mode", ["pair", "elem"])
@pytest.mark.parametrize("dtype,kwargs", [
    ("f32", dict(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1)),
    ("bf16", dict(mixup_alpha=0.8, cutmix_alpha=1.0, prob=0.7, switch_prob=0.6, label_smoothing=0.2)),
    ("f16", dict(mixup_alpha=1.0, cutmix_alpha=0.0, label_smoothing=0.0)),
    ("f32", dict(mixup_alpha=0.0, cutmix_minmax=(0.2, 0.8))),
])
@needs_timm
def test_timm_pair_and_elem_modes_equal_timms_on_the_same_draws(samples, mode, dtype, kwargs, monkeypatch):
    mixer = timm_mixup.Mixup(num_classes=CLASSES, mode=mode, **kwargs)
    ops = collections.Counter()
    for epoch in range(3):
        mixed = loader(samples, mixer, dtype, batch_size=6)
        mixed.set_epoch(epoch)
        unmixed = loader(samples, None, dtype, batch_size=6)
        unmixed.set_epoch(epoch)
        plain = [(torch.from_dlpack(b.images).clone(), torch.from_dlpack(b.labels)) for b in unmixed.batches()]
        for (images, labels), batch in zip(plain, mixed.batches()):
            assert batch.mix[0] is None and len(batch.sample_mixes) == 6
            ops.update(m[0] for m in batch.sample_mixes)
            theirs_images, theirs_targets = timm_mixed_per_sample(mixer, images, labels, batch.sample_mixes, mode,
                                                                  monkeypatch)
            monkeypatch.undo()
            assert torch.equal(torch.from_dlpack(batch.images), theirs_images), f"batch {batch.number}: {batch.sample_mixes}"
            assert torch.equal(torch.from_dlpack(batch.targets), theirs_targets), f"batch {batch.number}: {batch.sample_mixes}"
    assert ops["MixUp"] + ops["CutMix"] >= 6, f"too few samples mixed for the comparison to mean much: {ops}"


@needs_timm
@pytest.mark.parametrize("kwargs", [dict(mixup_alpha=0.8, cutmix_alpha=1.0, prob=0.8, switch_prob=0.3),
                                    dict(mixup_alpha=0.0, cutmix_minmax=(0.2, 0.8))])
def test_timm_per_sample_draws_are_timms_distribution(kwargs):
    """Mode 'elem': which op, lambda (float32) and the labels' lambda per sample, against timm's own
    `_params_per_elem` (numpy seeded) and its box for each CutMix sample."""
    import numpy
    numpy.random.seed(6)
    mixer = timm_mixup.Mixup(num_classes=CLASSES, mode="elem", **kwargs)
    theirs = []
    for _ in range(N // 50):
        lam_batch, use_cutmix = mixer._params_per_elem(50)
        for lam, cut in zip(lam_batch, use_cutmix):
            label_lam = float(lam)
            if lam != 1.0 and cut:
                _, label_lam = timm_mixup.cutmix_bbox_and_lam((37, 53), lam, ratio_minmax=mixer.cutmix_minmax,
                                                              correct_lam=mixer.correct_lam)
            op = None if lam == 1.0 else ("CutMix" if cut else "MixUp")
            theirs.append((op, float(lam), float(numpy.float32(label_lam))))
    op = timm_op("elem", **kwargs)
    ours = [m for b in range(N // 50) for m in conveyor._conveyor.batch_sample_mixes_draw([op], [], 4, 0, b, 37, 53, 50)]
    assert same_ops_and_lambdas(theirs, ours, "timm's per-sample"), "too few mixes to compare"


@needs_timm
def test_timm_modes_it_cannot_run_are_refused(samples):
    with pytest.raises(conveyor.ConfigError, match="modes 'pair' and 'elem' need floating-point images"):
        loader(samples, timm_mixup.Mixup(mode="elem", mixup_alpha=0.0, cutmix_alpha=1.0, num_classes=CLASSES), "u8")
    with pytest.raises(conveyor.ConfigError, match="timm's modes are 'batch', 'pair' and 'elem'"):
        mixer = timm_mixup.Mixup(num_classes=CLASSES)
        mixer.mode = "row"
        loader(samples, mixer, "f32")
    with pytest.raises(conveyor.ConfigError, match="with mixup_alpha > 0 the images must be floating point"):
        loader(samples, timm_mixup.Mixup(num_classes=CLASSES), "u8")
