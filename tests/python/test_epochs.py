"""Epochs as DataLoader users expect them: each new loop starts the next epoch unless set_epoch chose
one (also through `loader.sampler`, where Lightning-style trainers call it), one loop at a time and
never ended silently, and state_dict positions that resume exactly, failed batches included."""
import pytest

import conveyor

torch = pytest.importorskip("torch")


def make(data, **kw):
    options = dict(batch_size=4, shuffle=True, seed=3, workers=2, transform=conveyor.ImageAugment.train(16))
    options.update(kw)
    return conveyor.Loader(data, **options)


def loop(loader):
    """One loop's (epoch, indices, first image) per batch."""
    return [(b.epoch, b.indices, torch.from_dlpack(b.images).clone()) for b in loader.batches()]


def same(a, b):
    return len(a) == len(b) and all(x[0] == y[0] and x[1] == y[1] and torch.equal(x[2], y[2]) for x, y in zip(a, b))


@pytest.fixture
def data(samples):
    return conveyor.ImageFolder(str(samples))


@pytest.fixture
def epochs(data):
    """Epochs 0-3 of `make(data)`, each selected with set_epoch."""
    loader = make(data)
    out = []
    for e in range(4):
        loader.set_epoch(e)
        out.append(loop(loader))
    assert [b[0] for b in out[2]] == [2] * 4
    assert out[0][0][1] != out[1][0][1]  # a new order...
    assert not torch.equal(out[0][0][2], out[1][0][2])  # ...and new crops
    return out


def set_sampler_epoch(dataloader, epoch):
    """How Lightning reaches a loader's epoch at each epoch's start (_set_sampler_epoch in
    lightning.fabric.utilities.data): set_epoch on `dataloader.sampler` and on
    `dataloader.batch_sampler.sampler`, once per distinct object, when they have it."""
    objects = {}
    sampler = getattr(dataloader, "sampler", None)
    if sampler is not None:
        objects[id(sampler)] = sampler
    batch_sampler = getattr(dataloader, "batch_sampler", None)
    if batch_sampler is not None and getattr(batch_sampler, "sampler", None) is not None:
        objects[id(batch_sampler.sampler)] = batch_sampler.sampler
    for obj in objects.values():
        if callable(getattr(obj, "set_epoch", None)):
            obj.set_epoch(epoch)


def test_each_new_loop_starts_the_next_epoch(data, epochs):
    loader = make(data)
    assert loader.epoch == 0
    for e in range(3):
        assert same(loop(loader), epochs[e])
        assert loader.epoch == e + 1  # where the next loop starts
    # set_epoch selects the next loop's epoch; the loops after it go on from there.
    loader.set_epoch(1)
    assert same(loop(loader), epochs[1])
    assert same(loop(loader), epochs[2])
    # A loop left early counts as its epoch, as a DataLoader's reshuffles on every iter().
    next(iter(loader))
    assert loop(loader)[0][0] == 4


def test_a_lightning_style_loop_sets_the_epoch_through_the_sampler(data, epochs):
    loader = make(data)
    for e in (0, 1, 2, 1, 1):
        set_sampler_epoch(loader, e)
        assert same(loop(loader), epochs[e])
    assert loader.sampler.epoch == loader.epoch == 2


def test_resuming_mid_epoch_gives_the_remaining_batches_then_the_next_epoch(data, epochs):
    first = make(data)
    loop(first)  # epoch 0
    it = first.batches()
    next(it), next(it)
    state = first.state_dict()
    assert (state["epoch"], state["batches_done"]) == (1, 2)
    resumed = make(data)
    resumed.load_state_dict(state)
    assert resumed.epoch == 1
    assert same(loop(resumed), epochs[1][2:])
    assert same(loop(resumed), epochs[2])
    # The same through a trainer that sets the saved epoch before its loop.
    lightning = make(data)
    lightning.load_state_dict(state)
    set_sampler_epoch(lightning, 1)
    assert same(loop(lightning), epochs[1][2:])
    # A trainer that starts the next epoch instead drops the resume point.
    other = make(data)
    other.load_state_dict(state)
    set_sampler_epoch(other, 2)
    assert same(loop(other), epochs[2])


def test_resuming_at_an_epoch_boundary_gives_the_next_epoch(data, epochs):
    first = make(data)
    loop(first)
    assert same(loop(first), epochs[1])
    state = first.state_dict()
    assert (state["epoch"], state["batches_done"]) == (2, 0)
    resumed = make(data)
    resumed.load_state_dict(state)
    assert same(loop(resumed), epochs[2])
    # The last batch taken but the loop not yet at its end: the rest of the epoch is empty.
    last = make(data)
    it = last.batches()
    for _ in range(4):
        next(it)
    state = last.state_dict()
    assert (state["epoch"], state["batches_done"]) == (0, 4)
    resumed = make(data)
    resumed.load_state_dict(state)
    assert loop(resumed) == []
    assert same(loop(resumed), epochs[1])


def test_state_dict_before_any_loop_is_where_the_first_starts(data, epochs):
    loader = make(data)
    assert (loader.state_dict()["epoch"], loader.state_dict()["batches_done"]) == (0, 0)
    loader.set_epoch(3)
    state = loader.state_dict()
    assert (state["epoch"], state["batches_done"]) == (3, 0)
    resumed = make(data)
    resumed.load_state_dict(state)
    assert same(loop(resumed), epochs[3])


def test_a_second_loop_over_one_loader_raises_in_the_first_instead_of_ending_it(data, epochs):
    loader = make(data)
    with pytest.raises(conveyor.Error, match="one loop at a time"):
        for _ in zip(loader, loader):
            pass
    outer = []
    with pytest.raises(conveyor.Error, match=r"ended by a later iter\(\) over the same Loader"):
        for b in loader.batches():
            outer.append(b.indices)
            assert sum(len(inner.indices) for inner in loader.batches()) == 13  # the inner loop runs whole
    assert len(outer) == 1
    # A loop that ran to its end, or that its caller closed, just stops.
    done = loader.batches()
    assert len([b.indices for b in done]) == 4
    closed = loader.batches()
    next(closed)
    closed.close()
    other = loader.batches()
    for it in (done, closed):
        with pytest.raises(StopIteration):
            next(it)
    next(other)


def test_set_epoch_during_a_loop_selects_the_next_loop(data, epochs):
    loader = make(data)
    got = []
    for k, b in enumerate(loader.batches()):
        got.append((b.epoch, b.indices, torch.from_dlpack(b.images).clone()))
        if k == 0:
            loader.set_epoch(3)
    assert same(got, epochs[0])  # the loop went on to its end
    assert same(loop(loader), epochs[3])


def failing(tmp_path, samples):
    """A FileList of 9 photos and, at index 3, a file that is not an image."""
    good = sorted(str(p) for p in samples.rglob("*.jpg"))[:8]
    (tmp_path / "bad.jpg").write_bytes(b"not a jpeg")
    rows = good[:3] + [str(tmp_path / "bad.jpg")] + good[3:]
    (tmp_path / "list.txt").write_text("".join(f"{p} 0\n" for p in rows))
    return conveyor.FileList(str(tmp_path / "list.txt"))


def test_a_failed_batch_counts_in_state_dict_so_a_resume_does_not_replay_it(tmp_path, samples):
    files = failing(tmp_path, samples)
    plain = lambda: conveyor.Loader(files, batch_size=2, workers=2, transform=conveyor.ImageAugment.eval(20, 16))
    first = plain()
    it = first.batches()
    assert next(it).indices == [0, 1]
    with pytest.raises(conveyor.SampleError) as e:
        next(it)
    assert e.value.index == 3
    state = first.state_dict()
    assert state["batches_done"] == 2
    resumed = plain()
    resumed.load_state_dict(state)
    assert [b.indices for b in resumed.batches()] == [[4, 5], [6, 7], [8]]
    assert [b.indices for b in it] == [[4, 5], [6, 7], [8]]  # the loop itself goes on past the failure
