"""conveyor.Loader on the CPU: the C++ pipeline's batches, bit for bit, in the shapes and types asked
for; resuming; the error policy; kept tensors; DLPack into torch and numpy."""
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import conveyor

torch = pytest.importorskip("torch")


def dumped(directory, epoch):
    """conveyor-bench --dump's batches of `epoch`: (images, labels, indices) per batch, in order."""
    out = []
    for images in sorted(pathlib.Path(directory).glob(f"epoch{epoch}_batch*_images.npy")):
        stem = str(images)[: -len("images.npy")]
        out.append((np.load(images), np.load(stem + "labels.npy"), np.load(stem + "indices.npy")))
    return out


def host_bits(tensor):
    """A tensor as numpy holds it (bf16 as its uint16 bits, as conveyor-bench dumps it)."""
    t = tensor.cpu()
    return t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.numpy()


@pytest.mark.parametrize("preset,dtype,layout", [("train", "f32", "nchw"), ("train", "bf16", "nhwc"),
                                                  ("eval", "u8", "nhwc"), ("train", "f16", "nchw")])
def test_batches_equal_the_cpp_pipelines(samples, bench, tmp_path, preset, dtype, layout):
    subprocess.run([str(bench), "--data", str(samples), "--batch", "5", "--epochs", "2", "--size", "48", "--seed", "7",
                    "--workers", "2", "--transform", preset, "--dtype", dtype, "--layout", layout,
                    "--dump", str(tmp_path)], check=True, stdout=subprocess.DEVNULL)
    normalize = None if dtype == "u8" else "imagenet"  # as conveyor-bench's presets for u8
    transform = (conveyor.ImageAugment.train(48, dtype=dtype, layout=layout, normalize=normalize) if preset == "train"
                 else conveyor.ImageAugment.eval(48 * 256 // 224, 48, dtype=dtype, layout=layout, normalize=normalize))
    loader = conveyor.Loader(conveyor.ImageFolder(str(samples)), batch_size=5, shuffle=True, seed=7, workers=3,
                             transform=transform)
    for epoch in range(2):
        loader.set_epoch(epoch)
        want = dumped(tmp_path, epoch)
        assert len(want) == 3
        k = 0
        for batch, (images, labels, indices) in zip(loader.batches(), want):
            assert batch.indices == list(indices)
            assert np.array_equal(torch.from_dlpack(batch.labels).numpy(), labels)
            assert np.array_equal(host_bits(torch.from_dlpack(batch.images)), images)
            k += 1
        assert k == 3


def test_shapes_dtypes_and_layouts(samples):
    data = conveyor.ImageFolder(str(samples))
    assert len(data) == 13 and data.classes == ["building", "plant", "sky"]
    for dtype, torch_dtype in (("u8", torch.uint8), (torch.float32, torch.float32), ("f16", torch.float16),
                               (torch.bfloat16, torch.bfloat16)):
        for layout, shape in (("nchw", (4, 3, 32, 32)), ("nhwc", (4, 32, 32, 3))):
            transform = conveyor.ImageAugment.train(32, dtype=dtype, layout=layout,
                                                    normalize=None if dtype == "u8" else "imagenet")
            loader = conveyor.Loader(data, batch_size=4, workers=2, transform=transform)
            images, labels = next(iter(loader))
            assert images.shape == shape and images.dtype == torch_dtype
            assert labels.dtype == torch.int64 and labels.shape == (4,)
            assert images.is_contiguous()


def test_len_drop_last_labels_and_order(samples):
    data = conveyor.ImageFolder(str(samples))
    assert len(conveyor.Loader(data, batch_size=4)) == 4
    loader = conveyor.Loader(data, batch_size=4, drop_last=True, transform=conveyor.ImageAugment.eval(36, 32))
    assert len(loader) == 3
    seen = [i for b in loader.batches() for i in b.indices]
    assert seen == list(range(12))  # not shuffled: dataset order
    for b in loader.batches():
        assert torch.from_dlpack(b.labels).tolist() == [data.label(i) for i in b.indices]


def test_state_dict_resumes_at_the_next_batch_exactly(samples):
    data = conveyor.ImageFolder(str(samples))
    make = lambda: conveyor.Loader(data, batch_size=3, shuffle=True, seed=5, workers=2,
                                   transform=conveyor.ImageAugment.train(24, dtype="u8", normalize=None))
    full = make()
    full.set_epoch(2)
    expected = [(im.clone(), lab.clone()) for im, lab in full]
    assert len(expected) == 5
    first = make()
    first.set_epoch(2)
    for k, _ in enumerate(first):
        if k == 1:
            break
    state = first.state_dict()
    assert state["epoch"] == 2 and state["batches_done"] == 2
    resumed = make()
    resumed.load_state_dict(state)
    resumed.set_epoch(2)  # the loop's own set_epoch keeps the resume point
    rest = list(resumed)
    assert len(rest) == 3
    for (im, lab), (want_im, want_lab) in zip(rest, expected[2:]):
        assert torch.equal(im, want_im) and torch.equal(lab, want_lab)
    with pytest.raises(conveyor.ConfigError, match="seed"):
        conveyor.Loader(data, batch_size=3, shuffle=True, seed=6).load_state_dict(state)


def test_errors_keep_their_kind_and_fields(samples, tmp_path):
    data = conveyor.ImageFolder(str(samples))
    with pytest.raises(ValueError, match="batch_size"):
        conveyor.Loader(data, batch_size=0)
    with pytest.raises(conveyor.ConfigError, match="u8"):
        conveyor.Loader(data, transform=conveyor.ImageAugment(dtype="u8", normalize="imagenet"))
    with pytest.raises(conveyor.ConfigError, match="decode must be 'cpu', 'gpu' or 'auto'"):
        conveyor.Loader(data, decode="nvjpeg")
    with pytest.raises(conveyor.ConfigError, match="decode = gpu decodes on a device"):
        conveyor.Loader(data, decode="gpu")  # the CPU backend decodes on its workers
    with pytest.raises(conveyor.ConfigError, match=r"gpu_share must be in \[0, 1\]"):
        conveyor.Loader(data, gpu_share=2.0)
    with pytest.raises(conveyor.ConfigError, match="gpu_upsampling must be 'interpolated' or 'replicated', got 'nearest'"):
        conveyor.Loader(data, gpu_upsampling="nearest")
    with pytest.raises(OSError) as missing:
        conveyor.ImageFolder(str(tmp_path / "none"))
    assert isinstance(missing.value, conveyor.IoError) and missing.value.path.endswith("none")
    with pytest.raises(ValueError, match="device"):
        conveyor.Loader(data, device="tpu")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "bad.jpg").write_bytes(b"not a jpeg")
    for i in range(3):
        (tmp_path / "c" / f"good{i}.jpg").write_bytes((samples / "plant" / "pillow_flower.jpg").read_bytes())
    bad = conveyor.Loader(conveyor.ImageFolder(str(tmp_path)), batch_size=4, workers=2)
    with pytest.raises(conveyor.SampleError) as e:
        list(bad)
    assert e.value.index == 0 and e.value.path.endswith("bad.jpg") and "Not a JPEG" in e.value.reason
    assert isinstance(e.value, conveyor.Error) and isinstance(e.value, RuntimeError)


def test_skip_and_raise_over_the_damaged_corpus(shared_data, tmp_path, samples):
    rows = [line.split("\t") for line in (shared_data / "damaged" / "INDEX.tsv").read_text().splitlines()[1:]]
    # The format comes from the bytes, as Pillow's: the PNG and the PGM named .jpg decode.
    other_format = ("starts with 0x89 0x50", "starts with 0x50 0x35")
    bad = {str(shared_data / "damaged" / r[0]) for r in rows if r[5] != "ok" and not any(m in r[6] for m in other_format)}
    good = sorted(str(p) for p in samples.rglob("*.jp*g"))
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"{p} 1\n" for p in sorted(bad)) + "".join(f"{p} 0\n" for p in good * 20))
    files = conveyor.FileList(str(listing))
    transform = conveyor.ImageAugment.train(16, roi=False, decode_scaling=False)
    skip = conveyor.Loader(files, batch_size=32, shuffle=True, seed=3, workers=2, on_error="skip", transform=transform)
    delivered = sum(len(labels) for _, labels in skip)
    assert delivered == len(files)
    assert {s.path for s in skip.skipped} == bad
    assert all(s.reason for s in skip.skipped)
    assert skip.stats()["skipped"] == len(bad)
    raise_ = conveyor.Loader(files, batch_size=1, shuffle=True, seed=3, workers=2, transform=transform)
    raised = set()
    it = raise_.batches()
    while True:
        try:
            next(it)
        except StopIteration:
            break
        except conveyor.SampleError as e:
            raised.add(e.path)
    assert raised == bad


def test_kept_tensors_stay_valid_and_a_full_ring_says_so(samples):
    data = conveyor.ImageFolder(str(samples))
    loader = conveyor.Loader(data, batch_size=2, prefetch=3, workers=2, transform=conveyor.ImageAugment.eval(36, 32))
    kept, copies = [], []
    it = iter(loader)
    for _ in range(2):
        images, labels = next(it)
        kept.append(images)
        copies.append(images.clone())
    for _ in range(3):  # three more batches through the third slot
        next(it)
    for images, copy in zip(kept, copies):
        assert torch.equal(images, copy)
    images, _ = next(it)
    kept.append(images)  # every slot is now held
    with pytest.raises(conveyor.Error, match="held by tensors"):
        next(it)
    del kept[:], images, labels, _
    rest = [len(labels) for _, labels in it]  # the refused batch comes once a slot is free, then the epoch's end
    assert rest == [1]
    assert sum(len(labels) for _, labels in loader) == 13


def test_prefetch_auto_within_the_memory_budget_and_a_full_ring_at_the_chosen_count(samples):
    data = conveyor.ImageFolder(str(samples))
    eval32 = conveyor.ImageAugment.eval(36, 32)
    loader = conveyor.Loader(data, batch_size=2, workers=2, transform=eval32)  # prefetch="auto"
    stats = loader.stats()
    assert stats["prefetch"] == 3 and stats["prefetch_reason"].startswith("3 slots")
    slot = 2 * (3 * 32 * 32 * 4 + 16)  # a CPU slot: two f32 images, their labels and indices
    two = conveyor.Loader(data, batch_size=2, workers=2, transform=eval32, memory_budget=2 * slot + 100)
    assert two.stats()["prefetch"] == 2 and "holds 2" in two.stats()["prefetch_reason"]
    assert conveyor.Loader(data, batch_size=2, transform=eval32, memory_budget="1GiB").stats()["prefetch"] == 3
    it = iter(two)
    kept = [next(it)[0], next(it)[0]]  # both of the chosen slots held
    with pytest.raises(conveyor.Error, match="all 2 batches in flight"):
        next(it)
    del kept
    with pytest.raises(conveyor.ConfigError, match="memory_budget 0.00 GiB holds fewer than the 2 slots"):
        conveyor.Loader(data, batch_size=2, transform=eval32, memory_budget="1KiB")
    with pytest.raises(conveyor.ConfigError, match="prefetch must be 'auto' or an int >= 2"):
        conveyor.Loader(data, transform=eval32, prefetch="many")
    with pytest.raises(conveyor.ConfigError, match="prefetch must be >= 2"):
        conveyor.Loader(data, transform=eval32, prefetch=1)
    with pytest.raises(conveyor.ConfigError, match="memory_budget must be bytes"):
        conveyor.Loader(data, transform=eval32, memory_budget="8 parsecs")
    assert conveyor.Loader(data, transform=eval32, prefetch=4).stats()["prefetch_reason"] == "prefetch = 4, as asked"


def test_dlpack_into_numpy_and_raw_objects(samples):
    data = conveyor.ImageFolder(str(samples))
    transform = conveyor.ImageAugment.train(24, dtype="u8", layout="nhwc", normalize=None)
    # Copies: the arrays of four batches would hold every slot of the default prefetch.
    by_torch = [im.numpy().copy() for im, _ in conveyor.Loader(data, batch_size=4, seed=2, shuffle=True,
                                                               transform=transform)]
    by_numpy = [im.copy() for im, _ in conveyor.Loader(data, batch_size=4, seed=2, shuffle=True, transform=transform,
                                                       output="numpy")]
    assert all(isinstance(a, np.ndarray) for a in by_numpy)
    assert all(np.array_equal(a, b) for a, b in zip(by_torch, by_numpy))
    images, labels = next(iter(conveyor.Loader(data, batch_size=4, transform=transform, output="dlpack")))
    assert images.__dlpack_device__() == (1, 0)  # kDLCPU
    assert images.shape == [4, 24, 24, 3] and images.dtype == "u8" and labels.dtype == "i64"
    assert np.from_dlpack(images).shape == (4, 24, 24, 3)


def test_in_memory_and_raw_tensors():
    mem = conveyor.InMemory()
    for i in range(10):
        mem.add(np.arange(6, dtype=np.float32).tobytes() if i % 2 else (np.arange(6, dtype=np.float32) + i).tobytes(), i)
    assert len(mem) == 10 and mem.label(3) == 3 and mem.read(2) == (np.arange(6, dtype=np.float32) + 2).tobytes()
    loader = conveyor.Loader(mem, batch_size=4, transform=conveyor.RawTensor((2, 3), "f32"))
    batches = [(x, y) for x, y in loader]
    assert [tuple(x.shape) for x, _ in batches] == [(4, 2, 3), (4, 2, 3), (2, 2, 3)]
    assert torch.equal(batches[0][0][2], torch.arange(6, dtype=torch.float32).reshape(2, 3) + 2)
    with pytest.raises(conveyor.ConfigError, match="add every sample"):
        mem.add(b"late", 0)


def test_distributed_env_shares_the_epoch(samples, monkeypatch):
    data = conveyor.ImageFolder(str(samples))
    seen = []
    for rank in range(2):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        monkeypatch.setenv("LOCAL_RANK", str(rank))
        loader = conveyor.Loader(data, batch_size=3, shuffle=True, seed=4, distributed="env",
                                 transform=conveyor.ImageAugment.train(16))
        assert loader.local_rank == rank and len(loader) == 3  # 7 samples a rank (13 padded to 14)
        seen.append([i for b in loader.batches() for i in b.indices])
    assert len(seen[0]) == len(seen[1]) == 7
    assert set(seen[0]) | set(seen[1]) == set(range(13))
    explicit = conveyor.Loader(data, batch_size=3, shuffle=True, seed=4, distributed=(1, 2),
                               transform=conveyor.ImageAugment.train(16))
    assert [i for b in explicit.batches() for i in b.indices] == seen[1]


def test_metrics_are_prometheus_text_of_the_stats(samples):
    loader = conveyor.Loader(str(samples), batch_size=4, workers=2, transform=conveyor.ImageAugment(size=32))
    batches = sum(1 for _ in loader)
    text = loader.metrics(pipeline="train")
    assert f'conveyor_batches_total{{pipeline="train"}} {batches}' in text
    assert f'conveyor_batch_wait_seconds_count{{pipeline="train"}} {batches}' in text
    assert "# TYPE conveyor_stage_seconds_total counter" in text
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian: prometheus)")
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
