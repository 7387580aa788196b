"""conveyor.Preprocessor on the CPU: a request's tensor is what the eval Loader makes of the same
images, from many threads at once; bad and oversized requests are refused with the reason; the
bounded queue and timeouts; torchvision's PIL path agrees within a resampling's rounding."""
import io
import pathlib
import threading

import numpy as np
import pytest

import conveyor

torch = pytest.importorskip("torch")


def photos(samples):
    return [p.read_bytes() for p in sorted(pathlib.Path(samples).rglob("*.jpg"))]


def eval_references(images, transform):
    """Each image alone through the eval Loader."""
    data = conveyor.InMemory()
    for b in images:
        data.add(b, 0)
    loader = conveyor.Loader(data, batch_size=1, workers=2, transform=transform)
    return [im[0].clone() for im, _ in loader]


def test_a_request_equals_the_eval_loader_from_many_threads(samples):
    images = photos(samples)
    transform = conveyor.ImageAugment.eval(80, 64)
    refs = eval_references(images, transform)
    pre = conveyor.Preprocessor(transform, max_images=6, lanes=2, workers=2)
    wrong, answered = [], []

    def client(c):
        rng = np.random.default_rng(c)
        for _ in range(15):
            n = int(rng.integers(1, 7))
            first = int(rng.integers(0, len(images) - n + 1))
            out = pre(images[first:first + n])
            answered.append(1)
            if tuple(out.shape) != (n, 3, 64, 64) or not all(torch.equal(out[i], refs[first + i]) for i in range(n)):
                wrong.append((c, first, n))

    threads = [threading.Thread(target=client, args=(c,)) for c in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answered) == 60 and wrong == []
    stats = pre.stats()
    assert stats["requests"] == 60 and stats["in_flight"] == 0 and stats["pipelines"]["images"] > 0


def test_bad_and_oversized_requests_are_refused_with_the_reason(samples):
    images = photos(samples)
    pre = conveyor.Preprocessor(conveyor.ImageAugment.eval(80, 64), max_images=4, lanes=1, workers=1)
    with pytest.raises(conveyor.SampleError) as e:
        pre([images[0], images[1], b"not a jpeg at all", images[2]])
    assert e.value.index == 2 and e.value.path == "request image 2" and e.value.reason
    with pytest.raises(conveyor.ConfigError, match="5 images, more than max_images = 4"):
        pre(images[:5])
    with pytest.raises(conveyor.ConfigError):
        pre([])
    assert pre(images[:4]).shape[0] == 4  # the lane is fine after them
    text = pre.metrics(service="test")
    assert 'conveyor_requests_total{service="test",outcome="bad_image"} 1' in text
    assert 'conveyor_requests_total{service="test",outcome="answered"} 1' in text


def test_timeouts_and_the_bounded_queue(samples):
    images = photos(samples)
    pre = conveyor.Preprocessor(conveyor.ImageAugment.eval(), max_images=len(images), lanes=1, max_waiting=0, workers=1,
                                prefetch=2)
    kept = [pre(images), pre(images)]  # both of the lane's slots held: no request can go through
    with pytest.raises(conveyor.Overloaded):
        pre(images[:1])  # max_waiting=0: nobody may wait
    del kept[1]
    assert pre(images[:2], timeout=30).shape[0] == 2  # and released: one slot free again
    with pytest.raises(conveyor.DeadlineExceeded):
        pre(images, timeout=0)  # 11 photos on one worker are not ready at once
    assert issubclass(conveyor.DeadlineExceeded, TimeoutError)
    assert pre.stats()["deadline_exceeded"] == 1 and pre.stats()["overloaded"] == 1


def _v1_eval_on_pil(samples):
    """torchvision v1's evaluation Compose and its batch of the first four photos, as PIL images."""
    tv = pytest.importorskip("torchvision")
    from PIL import Image
    images = photos(samples)[:4]
    tf = tv.transforms.Compose([tv.transforms.Resize(256), tv.transforms.CenterCrop(224), tv.transforms.ToTensor(),
                                tv.transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
    return images, tf, torch.stack([tf(Image.open(io.BytesIO(b)).convert("RGB")) for b in images])


def test_torchvision_pil_path_agrees(samples):
    # The default, torchvision v2's on tensors: another resize, within a level of 8-bit rounding
    # (1/255/std, about 0.017) on average.
    images, _, theirs = _v1_eval_on_pil(samples)
    ours = conveyor.Preprocessor(max_images=4, lanes=1, workers=2)(images)
    assert ours.shape == theirs.shape
    assert (ours - theirs).abs().mean().item() < 0.02


def test_a_v1_compose_serves_pillows_bits(samples):
    """The same v1 Compose given to the Preprocessor: Pillow 13's resize, ToTensor's division."""
    PIL = pytest.importorskip("PIL")
    if int(PIL.__version__.split(".")[0]) < 13:
        pytest.skip(f"Pillow {PIL.__version__}: conveyor resizes as Pillow 13 (its pass order)")
    images, tf, theirs = _v1_eval_on_pil(samples)
    assert torch.equal(conveyor.Preprocessor(tf, max_images=4, lanes=1, workers=2)(images), theirs)
