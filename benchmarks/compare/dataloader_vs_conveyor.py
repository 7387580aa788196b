#!/usr/bin/env python3
"""The PyTorch DataLoader and conveyor side by side, on one dataset, in one run.

DataLoader: torchvision ImageFolder (PIL decode), RandomResizedCrop(224), RandomHorizontalFlip,
ToTensor, Normalize(ImageNet), batch 256, persistent workers; on --device cuda pin_memory, a
non_blocking copy to the GPU and a cast to bf16 there. conveyor: conveyor-bench (C++) and, when
the package is installed, conveyor.Loader (Python, torch tensors from DLPack), the same
transforms to bf16 NCHW on the GPU, or f32 on the CPU. All are timed from the iterator's
creation over many more batches than any keeps in flight, and print img/s per worker count and
the ratios.

    python3 benchmarks/compare/dataloader_vs_conveyor.py --data DIR --bench build/tools/conveyor-bench [--device cpu]
"""
import argparse
import sys
import time

import torch
import torchvision
from torchvision import transforms

from loader_rate import bench_rate, loader_rate
from svg_plot import line_chart

try:
    import conveyor
except ImportError:  # the C++ tool alone
    conveyor = None


def dataloader_rate(data, workers, batches, device):
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    ds = torchvision.datasets.ImageFolder(data, transform=tf)
    kwargs = dict(batch_size=256, shuffle=True, num_workers=workers, pin_memory=device.type == "cuda", drop_last=False)
    if workers > 0:
        kwargs.update(persistent_workers=True, prefetch_factor=2)
    loader = torch.utils.data.DataLoader(ds, **kwargs)
    images, done = 0, 0
    start = time.perf_counter()
    while done < batches:  # epochs until enough batches: more than the 2 x workers in flight
        for x, y in loader:
            if device.type == "cuda":
                x = x.to(device, non_blocking=True).to(torch.bfloat16)
                y = y.to(device, non_blocking=True)
            images += x.shape[0]
            done += 1
            if done == batches:
                break
    if device.type == "cuda":
        torch.cuda.synchronize()
    return images / (time.perf_counter() - start), images


def conveyor_rate(bench, data, workers, epochs, device):
    dtype = "bf16" if device.type == "cuda" else "f32"
    return bench_rate([bench, "--data", data, "--device", device.type, "--workers", str(workers), "--batch", "256",
                       "--epochs", str(epochs), "--dtype", dtype, "--layout", "nchw"])


def python_rate(data, workers, epochs, device):
    """conveyor.Loader over the same epochs as conveyor-bench, with its defaults (seed 0, shuffled)."""
    dtype = "bf16" if device.type == "cuda" else "f32"
    loader = conveyor.Loader(conveyor.ImageFolder(data), batch_size=256, shuffle=True, seed=0, workers=workers,
                             device=device.type, transform=conveyor.ImageAugment.train(224, dtype=dtype))
    return loader_rate(loader, epochs, device.type == "cuda")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--workers", default="1,4,8,16")
    ap.add_argument("--epochs", type=int, default=2, help="conveyor epochs")
    ap.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    ap.add_argument("--svg", help="also draw img/s against workers into this SVG file")
    args = ap.parse_args()
    device = torch.device(args.device)
    rows = []
    for w in [int(v) for v in args.workers.split(",")]:
        # DataLoader batches: at least 8 and 3x what its workers hold in flight (2 per worker).
        batches = max(8, 6 * w)
        dl, dl_images = dataloader_rate(args.data, w, batches, device)
        cv, log = conveyor_rate(args.bench, args.data, w, args.epochs, device)
        py = python_rate(args.data, w, args.epochs, device) if conveyor else None
        rows.append((w, dl, dl_images, cv, py))
        shown = f"; conveyor.Loader {py:.0f} img/s" if py else ""
        print(f"workers {w}: DataLoader {dl:.0f} img/s over {dl_images} images; conveyor {cv:.0f} img/s{shown}",
              flush=True)
    print("\n| workers | PyTorch DataLoader img/s | conveyor img/s | conveyor / DataLoader | conveyor.Loader (Python) img/s "
          "| Python / DataLoader |")
    print("|---|---|---|---|---|---|")
    for w, dl, _, cv, py in rows:
        python = f"{py:.0f} | {py / dl:.1f}x" if py else "not installed | -"
        print(f"| {w} | {dl:.0f} | {cv:.0f} | {cv / dl:.1f}x | {python} |")
    where = torch.cuda.get_device_name() if device.type == "cuda" else "the CPU"
    print(f"\ntorch {torch.__version__}, torchvision {torchvision.__version__}, {where}")
    if args.svg:
        workers = [w for w, *_ in rows]
        series = [("PyTorch DataLoader", [r[1] for r in rows]), ("conveyor", [r[3] for r in rows])]
        if all(r[4] for r in rows):
            series.append(("conveyor.Loader (Python)", [r[4] for r in rows]))
        with open(args.svg, "w") as f:
            f.write(line_chart(workers, series, f"RandomResizedCrop 224 + flip + normalize, {where}"))


if __name__ == "__main__":
    sys.exit(main())
