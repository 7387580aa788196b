"""What Python users expect of a loader's life: Ctrl-C answered promptly, the GIL free while it
waits, and no hang on break, deletion mid-epoch, interpreter exit or fork()."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import conveyor


@pytest.fixture
def slow_loader(samples, tmp_path):
    """Whole-image decodes of the bundled photos, 40 times over in one batch, one worker: seconds a batch."""
    listing = tmp_path / "slow.txt"
    files = sorted(p for p in samples.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg"))
    listing.write_text("".join(f"{p} 0\n" for p in files) * 40)
    transform = conveyor.ImageAugment.train(224, roi=False, decode_scaling=False)
    return lambda **kw: conveyor.Loader(conveyor.FileList(str(listing)), batch_size=40 * len(files), workers=1,
                                        transform=transform, **kw)


@pytest.fixture
def ctrl_c():
    """Python's own Ctrl-C handler, also where the tests were started with SIGINT ignored (as a
    shell starts a background job), so a SIGINT is a KeyboardInterrupt as in a terminal."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield lambda: threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    signal.signal(signal.SIGINT, previous)


def run(code, timeout=60):
    """Runs `code` in a fresh interpreter; returns (exit status, output, seconds)."""
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr, time.monotonic() - start


def test_ctrl_c_while_waiting_raises_keyboard_interrupt_promptly(slow_loader, ctrl_c):
    loader = slow_loader(output="dlpack")
    ctrl_c()  # in 0.3 s
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        for _ in loader:
            pass
    assert time.monotonic() - start < 0.3 + 0.5  # answered within a wait slice, not after the batch
    images, labels = next(iter(loader))  # and the loader still works
    assert labels.shape == [520]  # 13 photos, 40 times


def test_a_loop_interrupted_while_waiting_goes_on_with_the_batch_it_waited_for(slow_loader, ctrl_c):
    loader = slow_loader(output="dlpack")
    it = loader.batches()
    ctrl_c()
    with pytest.raises(KeyboardInterrupt):
        next(it)
    batch = next(it)  # the same batch, not skipped
    assert batch.number == 0 and len(batch) == 520
    assert loader.state_dict()["batches_done"] == 1
    with pytest.raises(StopIteration):
        next(it)


def test_the_gil_is_free_while_a_batch_is_made(slow_loader):
    loader = slow_loader(output="dlpack")
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    start = time.monotonic()
    next(iter(loader))
    took = time.monotonic() - start
    stop.set()
    t.join()
    assert took > 0.2
    assert len([x for x in ticks if start <= x <= start + took]) >= took / 0.01 * 0.5


def test_break_delete_and_restart_mid_epoch(samples):
    data = conveyor.ImageFolder(str(samples))
    loader = conveyor.Loader(data, batch_size=2, workers=3, transform=conveyor.ImageAugment.train(16))
    for k, _ in enumerate(loader):
        if k == 1:
            break
    assert sum(len(labels) for _, labels in loader) == 13  # the next loop starts clean
    it = iter(loader)
    next(it)
    again = [len(labels) for _, labels in loader]  # a new loop ends the one still open...
    assert sum(again) == 13
    with pytest.raises(conveyor.Error, match="ended by a later iter"):  # ...which says so
        next(it)
    it = iter(loader)
    next(it)
    del loader  # mid-epoch: the live loop keeps it and finishes the epoch
    assert sum(len(labels) for _, labels in it) == 11
    del it  # the last reference: threads joined, no hang


def test_exit_with_a_live_iterator_does_not_hang(samples):
    code = f"""
        import conveyor
        loader = conveyor.Loader(conveyor.ImageFolder({str(samples)!r}), batch_size=2, workers=4,
                                 transform=conveyor.ImageAugment.train(64), output="dlpack")
        it = iter(loader)
        images, labels = next(it)
        print("ok")
    """
    status, out, seconds = run(code)
    assert status == 0 and "ok" in out, out
    assert seconds < 30


def test_a_loader_used_after_fork_raises_instead_of_deadlocking(samples):
    code = f"""
        import os, sys, conveyor
        loader = conveyor.Loader(conveyor.ImageFolder({str(samples)!r}), batch_size=2, workers=2,
                                 transform=conveyor.ImageAugment.train(16), output="dlpack")
        next(iter(loader))
        pid = os.fork()
        if pid == 0:
            try:
                next(iter(loader))
                os._exit(3)
            except conveyor.Error as e:
                os._exit(0 if "fork" in str(e) else 4)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, os.waitstatus_to_exitcode(status)
        assert sum(len(labels.shape) for _, labels in loader) == 7  # the parent's loader still works
        print("ok")
    """
    status, out, _ = run(code)
    assert status == 0 and "ok" in out, out
