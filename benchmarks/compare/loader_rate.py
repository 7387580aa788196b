"""What the comparisons time the same way: a conveyor.Loader or a PyTorch-style loader over whole
epochs, and conveyor-bench's own figure."""
import re
import subprocess
import time

import torch


def loader_rate(loader, epochs, on_gpu):
    """img/s over `epochs` epochs of a conveyor.Loader, from its first iterator to the last batch
    being ready (a device sync at the end on the GPU)."""
    images = 0
    start = time.perf_counter()
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for _, y in loader:
            images += len(y)
    if on_gpu:
        torch.cuda.synchronize()
    return images / (time.perf_counter() - start)


def torch_loader_rate(loader, epochs, device):
    """img/s over `epochs` epochs of a PyTorch-style loader (the DataLoader, timm's), each batch's images
    copied to `device` as a training loop would (a sync at the end on the GPU)."""
    images = 0
    start = time.perf_counter()
    for _ in range(epochs):
        for x, _ in loader:
            if device == "cuda":
                x = x.to(device, non_blocking=True)
            images += x.shape[0]
    if device == "cuda":
        torch.cuda.synchronize()
    return images / (time.perf_counter() - start)


def bench_rate(command):
    """Runs conveyor-bench (`command`, a list) and returns the img/s of its last line, and its output."""
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"([0-9.]+) img/s\s*$", out).group(1)), out
