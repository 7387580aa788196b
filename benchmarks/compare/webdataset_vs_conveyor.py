#!/usr/bin/env python3
"""webdataset and conveyor side by side, on one set of tar shards, in one run.

webdataset: WebDataset(shards, shardshuffle) with a 1,000-sample shuffle buffer, PIL decode,
RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize(ImageNet), batched 256 in the
workers, under the PyTorch DataLoader (batch_size=None) with persistent workers; on --device cuda
pin_memory, a non_blocking copy to the GPU and a cast to bf16 there. webdataset gives each
DataLoader worker whole shards, so the set needs at least as many shards as workers.
conveyor: conveyor-bench --format wds (C++) and, when the package is installed, conveyor.Loader
over conveyor.TarShards (Python), both with a 4-shard window, the same transforms to bf16 NCHW on
the GPU, or f32 on the CPU. All are timed from the iterator's creation over several epochs, and
print img/s per worker count and the ratios.

    python3 benchmarks/compare/webdataset_vs_conveyor.py --shards 'DIR/train-{000000..000019}.tar' \\
        --bench build/tools/conveyor-bench [--device cpu]
"""
import argparse
import sys
import time

import torch
import torchvision
import webdataset as wds
from torchvision import transforms

from loader_rate import bench_rate, loader_rate

try:
    import conveyor
except ImportError:  # the C++ tool alone
    conveyor = None

WINDOW = 4


def webdataset_rate(shards, workers, epochs, device):
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    ds = (wds.WebDataset(shards, shardshuffle=100, empty_check=False).shuffle(1000).decode("pil")
          .to_tuple("jpg;jpeg;png", "cls").map_tuple(tf, int).batched(256, partial=True))
    kwargs = dict(batch_size=None, num_workers=workers, pin_memory=device.type == "cuda")
    if workers > 0:
        kwargs.update(persistent_workers=True, prefetch_factor=2)
    loader = torch.utils.data.DataLoader(ds, **kwargs)
    images = 0
    start = time.perf_counter()
    for _ in range(epochs):
        for x, y in loader:
            if device.type == "cuda":
                x = x.to(device, non_blocking=True).to(torch.bfloat16)
                y = y.to(device, non_blocking=True)
            images += x.shape[0]
    if device.type == "cuda":
        torch.cuda.synchronize()
    return images / (time.perf_counter() - start), images


def conveyor_rate(bench, shards, workers, epochs, device):
    dtype = "bf16" if device.type == "cuda" else "f32"
    return bench_rate([bench, "--data", shards, "--format", "wds", "--shard-window", str(WINDOW), "--device",
                       device.type, "--workers", str(workers), "--batch", "256", "--epochs", str(epochs),
                       "--dtype", dtype, "--layout", "nchw"])[0]


def python_rate(shards, workers, epochs, device):
    dtype = "bf16" if device.type == "cuda" else "f32"
    loader = conveyor.Loader(conveyor.TarShards(shards), batch_size=256, shuffle=True, seed=0, workers=workers,
                             shard_window=WINDOW, device=device.type,
                             transform=conveyor.ImageAugment.train(224, dtype=dtype))
    return loader_rate(loader, epochs, device.type == "cuda")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shards", required=True, help="a brace pattern of .tar shards")
    ap.add_argument("--bench", required=True)
    ap.add_argument("--workers", default="1,4,8,16")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    args = ap.parse_args()
    device = torch.device(args.device)
    rows = []
    for w in [int(v) for v in args.workers.split(",")]:
        wd, wd_images = webdataset_rate(args.shards, w, args.epochs, device)
        cv = conveyor_rate(args.bench, args.shards, w, args.epochs, device)
        py = python_rate(args.shards, w, args.epochs, device) if conveyor else None
        rows.append((w, wd, cv, py))
        shown = f"; conveyor.Loader {py:.0f} img/s" if py else ""
        print(f"workers {w}: webdataset {wd:.0f} img/s over {wd_images} images; conveyor-bench {cv:.0f} img/s{shown}",
              flush=True)
    print("\n| workers | webdataset + DataLoader img/s | conveyor-bench img/s | conveyor / webdataset "
          "| conveyor.Loader (Python) img/s | Python / webdataset |")
    print("|---|---|---|---|---|---|")
    for w, wd, cv, py in rows:
        python = f"{py:.0f} | {py / wd:.1f}x" if py else "not installed | -"
        print(f"| {w} | {wd:.0f} | {cv:.0f} | {cv / wd:.1f}x | {python} |")
    where = torch.cuda.get_device_name() if device.type == "cuda" else "the CPU"
    print(f"\nwebdataset {wds.__version__ if hasattr(wds, '__version__') else '?'}, torch {torch.__version__}, "
          f"torchvision {torchvision.__version__}, {where}")


if __name__ == "__main__":
    sys.exit(main())
