#!/usr/bin/env python3
"""NVIDIA DALI, the PyTorch DataLoader and conveyor side by side, on one dataset, in one run.

The same work for all three: RandomResizedCrop(224) (scale 0.08-1, ratio 3/4-4/3, ten tries),
horizontal flip with p = 0.5, ImageNet normalisation, f32 CHW, batches of --batch, shuffled,
--threads worker threads, --epochs epochs timed from the pipeline's construction (DALI's build
included) to the last batch. On --device cpu every batch stays in host memory; on cuda it ends
on the GPU.

DALI: fn.readers.file, fn.decoders.image_random_crop (the crop fused into the decode: libjpeg-
turbo's ROI decode on the CPU, nvJPEG on the GPU), fn.resize (antialiased linear),
fn.crop_mirror_normalize; device_id=None on the CPU. DataLoader: torchvision ImageFolder (PIL),
RandomResizedCrop, RandomHorizontalFlip, ToTensor, Normalize; persistent workers. conveyor:
conveyor-bench --transform train --dtype f32 --layout nchw, and conveyor.Loader (Python, torch
tensors) where the package is installed.

    python3 benchmarks/compare/dali_vs_conveyor.py --data DIR --bench build/tools/conveyor-bench

Needs torch and torchvision; DALI (nvidia-dali-cuda130 on PyPI) where it can be installed: its
rows say "not installed" otherwise.
"""
import argparse
import math
import os
import platform
import re
import subprocess
import sys
import time

import torch
import torchvision
from torchvision import transforms

from svg_plot import line_chart

try:
    import conveyor
except ImportError:  # the C++ tool alone
    conveyor = None

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def count_images(data):
    return sum(1 for _, _, files in os.walk(data) for f in files if f.lower().endswith((".jpg", ".jpeg")))


def dali_rate(data, threads, batch, epochs, device):
    try:
        import nvidia.dali as dali
        import nvidia.dali.fn as fn
        import nvidia.dali.types as types
        from nvidia.dali import pipeline_def
    except ImportError:
        return None, "not installed"

    gpu = device == "cuda"

    @pipeline_def(batch_size=batch, num_threads=threads, device_id=0 if gpu else None, seed=42)
    def train():
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed" if gpu else "cpu", output_type=types.RGB,
                                               random_area=[0.08, 1.0], random_aspect_ratio=[3 / 4, 4 / 3],
                                               num_attempts=10)
        images = fn.resize(images, resize_x=224, resize_y=224, antialias=True)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=[m * 255 for m in MEAN], std=[s * 255 for s in STD],
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, labels.gpu() if gpu else labels

    start = time.perf_counter()
    pipe = train()
    pipe.build()
    steps = math.ceil(pipe.epoch_size("reader") / batch)
    images = 0
    for _ in range(epochs):
        for _ in range(steps):
            out, _ = pipe.run()
            images += len(out)
    if gpu:
        torch.cuda.synchronize()
    return images / (time.perf_counter() - start), f"DALI {dali.__version__}"


def dataloader_rate(data, workers, batch, epochs, device):
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    start = time.perf_counter()
    ds = torchvision.datasets.ImageFolder(data, transform=tf)
    loader = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=True, num_workers=workers,
                                         persistent_workers=workers > 0, pin_memory=device == "cuda")
    images = 0
    for _ in range(epochs):
        for x, y in loader:
            if device == "cuda":
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            images += x.shape[0]
    if device == "cuda":
        torch.cuda.synchronize()
    return images / (time.perf_counter() - start)


def conveyor_rate(bench, data, threads, batch, epochs, device):
    out = subprocess.run([bench, "--data", data, "--device", device, "--workers", str(threads), "--batch", str(batch),
                          "--epochs", str(epochs), "--transform", "train", "--dtype", "f32", "--layout", "nchw"],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"([0-9.]+) img/s\s*$", out).group(1))


def python_rate(data, threads, batch, epochs, device):
    start = time.perf_counter()
    loader = conveyor.Loader(conveyor.ImageFolder(data), batch_size=batch, shuffle=True, seed=0, workers=threads,
                             device=device, transform=conveyor.ImageAugment.train(224, dtype="f32"))
    images = 0
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for x, y in loader:
            images += len(y)
    if device == "cuda":
        torch.cuda.synchronize()
    return images / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", default=str(os.cpu_count()), help="comma-separated worker/thread counts")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--svg", help="also draw img/s against threads into this SVG file")
    args = ap.parse_args()
    n = count_images(args.data)
    rows, dali_version = [], None
    for t in [int(v) for v in args.threads.split(",")]:
        dali, dali_version = dali_rate(args.data, t, args.batch, args.epochs, args.device)
        dl = dataloader_rate(args.data, t, args.batch, args.epochs, args.device)
        cv = conveyor_rate(args.bench, args.data, t, args.batch, args.epochs, args.device)
        py = python_rate(args.data, t, args.batch, args.epochs, args.device) if conveyor else None
        rows.append((t, dali, dl, cv, py))
        shown = f"{dali:.0f}" if dali else dali_version
        print(f"threads {t}: DALI {shown}, DataLoader {dl:.0f}, conveyor {cv:.0f}, conveyor.Loader "
              f"{f'{py:.0f}' if py else 'not installed'} img/s", flush=True)
    print(f"\n{n} images, batch {args.batch}, {args.epochs} epochs, device {args.device}")
    print("\n| threads | DALI img/s | PyTorch DataLoader img/s | conveyor img/s | conveyor / DALI | conveyor / DataLoader "
          "| conveyor.Loader (Python) img/s |")
    print("|---|---|---|---|---|---|---|")
    for t, dali, dl, cv, py in rows:
        d = f"{dali:.0f}" if dali else dali_version
        r = f"{cv / dali:.2f}x" if dali else "-"
        p = f"{py:.0f}" if py else "not installed"
        print(f"| {t} | {d} | {dl:.0f} | {cv:.0f} | {r} | {cv / dl:.2f}x | {p} |")
    gpu = f", {torch.cuda.get_device_name()}" if args.device == "cuda" else ""
    print(f"\n{dali_version}, torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs{gpu}")
    if args.svg:
        threads = [t for t, *_ in rows]
        series = [("PyTorch DataLoader", [r[2] for r in rows]), ("conveyor", [r[3] for r in rows])]
        if all(r[1] for r in rows):
            series.insert(0, ("DALI", [r[1] for r in rows]))
        with open(args.svg, "w") as f:
            f.write(line_chart(threads, series, f"RandomResizedCrop 224 + flip + normalize, f32 CHW, on {args.device} ({os.cpu_count()} CPUs)",
                               x_label="worker threads"))


if __name__ == "__main__":
    sys.exit(main())
