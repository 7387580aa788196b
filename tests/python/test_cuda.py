"""conveyor.Loader on a GPU: the CPU loader's batches bit for bit, ready on the stream torch is
using when the batch is yielded, and each slot reused only after that stream's work on it."""
import pytest

import conveyor

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or not conveyor.has_cuda_backend():
    pytest.skip("needs a CUDA device and the CUDA backend", allow_module_level=True)


def cpu_batches(data, transform, **kw):
    loader = conveyor.Loader(data, device="cpu", transform=transform, **kw)
    return [(images.clone(), labels.clone()) for images, labels in loader]


@pytest.mark.parametrize("dtype,layout", [("bf16", "nchw"), ("f32", "nhwc"), ("u8", "nchw")])
def test_gpu_batches_equal_cpu_batches(samples, dtype, layout):
    data = conveyor.ImageFolder(str(samples))
    normalize = None if dtype == "u8" else "imagenet"
    transform = conveyor.ImageAugment.train(64, dtype=dtype, layout=layout, normalize=normalize)
    kw = dict(batch_size=4, shuffle=True, seed=3, workers=3)
    want = cpu_batches(data, transform, **kw)
    got = [(images, labels) for images, labels in
           ((i.cpu(), l.cpu()) for i, l in conveyor.Loader(data, device="cuda", transform=transform, **kw))]
    assert len(got) == len(want) == 4
    for (images, labels), (want_images, want_labels) in zip(got, want):
        assert images.dtype == want_images.dtype and torch.equal(images, want_images)
        assert torch.equal(labels, want_labels)


@pytest.mark.parametrize("resampling", conveyor._conveyor.option_choices()["ImageAugment"]["resampling"])
def test_every_resampling_gives_the_cpu_loaders_batches(samples, resampling):
    """Every filter, in the kernel or (Hamming, Lanczos) finished by the workers (with and without
    a pixel program, which the device runs on their u8 images), bit for bit, also with decode="gpu":
    the engines' windows resized as the CPU's (Pillow's filters' samples they do not take)."""
    data = conveyor.ImageFolder(str(samples))
    kw = dict(batch_size=4, shuffle=True, seed=7, workers=2)
    for transform in (conveyor.ImageAugment.train(72, resampling=resampling, decode_scaling=False),
                      conveyor.ImageAugment(crop="center", size=(40, 56), resize=(60, 90), resampling=resampling,
                                            transforms=[conveyor.transforms.RandomInvert(0.5)],
                                            normalize="imagenet")):
        want = cpu_batches(data, transform, **kw)
        decodes = ("cpu", "gpu") if conveyor.has_gpu_decoding() else ("cpu",)
        for decode in decodes:
            got = [(i.cpu(), l.cpu()) for i, l in
                   conveyor.Loader(data, device="cuda", transform=transform, decode=decode, **kw)]
            assert len(got) == len(want) == 4
            for (images, labels), (want_images, want_labels) in zip(got, want):
                assert torch.equal(images, want_images) and torch.equal(labels, want_labels), (resampling, decode)


def test_a_consumer_on_its_own_stream_reads_whole_batches_and_frees_slots_after_its_work(samples, tmp_path):
    # Many batches through two slots, read on a non-default torch stream that sleeps first, so its
    # reads run long after the batch was yielded and the slot looks free to the host: a batch not
    # waited for, or a slot refilled before the stream is done with it, changes what it reads.
    files = sorted(p for p in samples.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg"))
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"{p} 0\n" for p in files) * 4)
    data = conveyor.FileList(str(listing))
    transform = conveyor.ImageAugment.train(96, dtype="f32")
    kw = dict(batch_size=8, shuffle=True, seed=9, workers=4, prefetch=2)
    want = cpu_batches(data, transform, **kw)
    stream = torch.cuda.Stream()
    copies = []
    with torch.cuda.stream(stream):
        for images, labels in conveyor.Loader(data, device="cuda", transform=transform, **kw):
            torch.cuda._sleep(20_000_000)  # about 10 ms on the stream, before it reads the batch
            copies.append((images.clone(), labels.clone()))
            del images, labels  # the slot is free for the host now, but not for the device
    torch.cuda.synchronize()
    assert len(copies) == len(want)
    for (images, labels), (want_images, want_labels) in zip(copies, want):
        assert torch.equal(images.cpu(), want_images)
        assert torch.equal(labels.cpu(), want_labels)


def test_dlpack_objects_carry_the_device_and_honour_the_stream_argument(samples):
    data = conveyor.ImageFolder(str(samples))
    loader = conveyor.Loader(data, batch_size=4, device="cuda:0", output="dlpack",
                             transform=conveyor.ImageAugment.eval(72, 64, dtype="u8", normalize=None))
    images, labels = next(iter(loader))
    assert images.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0
    stream = torch.cuda.Stream()
    t = torch.utils.dlpack.from_dlpack(images.__dlpack__(stream=stream.cuda_stream))
    assert t.is_cuda and tuple(t.shape) == (4, 3, 64, 64)
    with pytest.raises(ValueError, match="stream 0"):
        images.__dlpack__(stream=0)


def test_gpu_decoding_gives_the_cpu_loaders_batches_within_the_engines_tolerance(samples):
    """decode="gpu" (every JPEG the engines take) and "auto" (a measured share), with interpolated
    chroma, the default: the CPU loader's labels, and its pixels within the C++ tests' bound (mean
    difference at most 0.5 a batch: the engines' upsampling differs from libjpeg-turbo's by at most
    a level), the engines having decoded some. Both decode at full size: the engines do not scale,
    and a CPU decode at a DCT scale differs more than that (0.75 a batch here, at 64 pixels). A
    build without nvJPEG says so in has_gpu_decoding() and in the error decode="gpu" raises."""
    if not conveyor.has_gpu_decoding():
        with pytest.raises(conveyor.ConfigError, match="nvJPEG"):
            iter(conveyor.Loader(str(samples), batch_size=4, device="cuda", decode="gpu"))
        pytest.skip("this build has no nvJPEG: its CUDA loaders decode on the CPU")
    data = conveyor.ImageFolder(str(samples))
    transform = conveyor.ImageAugment.train(64, dtype="u8", normalize=None, decode_scaling=False)
    kw = dict(batch_size=4, shuffle=True, seed=5, workers=2)
    want = cpu_batches(data, transform, **kw)
    for decode, share in (("gpu", 1.0), ("auto", None)):
        loader = conveyor.Loader(data, device="cuda", transform=transform, decode=decode, gpu_share=share, **kw)
        got = [(images.cpu(), labels.cpu()) for images, labels in loader]
        assert len(got) == len(want)
        for (images, labels), (want_images, want_labels) in zip(got, want):
            assert torch.equal(labels, want_labels)
            assert (images.int() - want_images.int()).abs().float().mean().item() <= 0.5, decode
        assert loader.stats()["gpu_decoded"] > 0, decode


def test_gpu_decode_keeps_its_share_across_a_resume(samples):
    """decode="gpu" where the build has nvJPEG: the share is in stats and state_dict, and a resumed
    loader gives the remaining batches bit for bit."""
    if not conveyor.has_gpu_decoding():
        pytest.skip("this build has no nvJPEG: its CUDA loaders decode on the CPU")
    make = lambda: conveyor.Loader(str(samples), batch_size=4, shuffle=True, seed=3, device="cuda", decode="gpu",
                                   gpu_share=0.5, workers=2, transform=conveyor.ImageAugment(size=64, dtype="u8"))
    first = make()
    expected = [(im.cpu(), lab.cpu()) for im, lab in first]
    assert first.stats()["decode"] == "gpu" and first.stats()["gpu_share"] == 0.5
    first.set_epoch(0)  # the loop again: a new loop would start the next epoch
    it = iter(first)
    next(it)
    state = first.state_dict()
    del it
    assert state["gpu_share"] == 0.5
    resumed = make()
    resumed.load_state_dict(state)
    rest = [(im.cpu(), lab.cpu()) for im, lab in resumed]
    assert len(rest) == len(expected) - 1
    for (im, lab), (want_im, want_lab) in zip(rest, expected[1:]):
        assert torch.equal(im, want_im) and torch.equal(lab, want_lab)


def _augmix():
    from torchvision.transforms import v2
    return v2.Compose([v2.RandomResizedCrop(96), v2.ToImage(), v2.AugMix(), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize([0.5] * 3, [0.25] * 3)])


@pytest.mark.parametrize("policy", ["rand-m9-mstd0.5-inc1", "original-mstd0.5", "augmix-m3-w3", "augmix-m5-w2-b1",
                                    "torchvision AugMix"])
def test_timms_training_transform_on_the_gpu_gives_the_cpu_loaders_batches(samples, policy):
    """timm's DeiT transform (its RandAugment, Pillow's ops in the kernel, bilinear and bicubic
    affine maps drawn per op, and its erasing), an AutoAugment one, its AugMix (the mixing buffers
    beside each image), unchanged, and torchvision's AugMix: bit for bit."""
    if policy == "torchvision AugMix":
        transform = _augmix()
    else:
        timm_data = pytest.importorskip("timm.data")
        transform = timm_data.create_transform(96, is_training=True, auto_augment=policy, re_prob=0.5,
                                               interpolation="random")
    data = conveyor.ImageFolder(str(samples))
    kw = dict(batch_size=4, shuffle=True, seed=11, workers=3)
    for epoch in range(2):
        want = conveyor.Loader(data, device="cpu", transform=transform, **kw)
        got = conveyor.Loader(data, device="cuda", transform=transform, **kw)
        want.set_epoch(epoch)
        got.set_epoch(epoch)
        pairs = list(zip([(i.clone(), l.clone()) for i, l in want], [(i.cpu(), l.cpu()) for i, l in got]))
        assert len(pairs) == 4
        for (want_images, want_labels), (images, labels) in pairs:
            assert torch.equal(images, want_images) and torch.equal(labels, want_labels), (policy, epoch)
