#!/usr/bin/env python3
"""conveyor's Python loop against conveyor-bench (the same pipeline driven from C++), with the same
options on the same data, in one run: what the binding and the Python loop cost per batch.

Both: RandomResizedCrop 224, flip, ImageNet normalisation, batch 256, shuffled with seed 0, the
given workers, dtype and device, timed from the first iterator's creation to the end of the last
epoch (on a GPU, after a device synchronisation). The Python loop converts every batch to torch
tensors (`torch.from_dlpack`, with the stream handshake), as a training loop does.

    python3 benchmarks/compare/python_vs_bench.py --data DIR --bench build/tools/conveyor-bench --device cuda
"""
import argparse
import sys

import torch

import conveyor
from loader_rate import bench_rate as run_bench, loader_rate


def python_rate(data, workers, epochs, device, dtype, batch):
    loader = conveyor.Loader(conveyor.ImageFolder(data), batch_size=batch, shuffle=True, seed=0, workers=workers,
                             device=device, transform=conveyor.ImageAugment.train(
                                 224, dtype=dtype, normalize=None if dtype == "u8" else "imagenet"))  # as the bench
    return loader_rate(loader, epochs, device != "cpu")


def bench_rate(bench, data, workers, epochs, device, dtype, batch):
    return run_bench([bench, "--data", data, "--device", device, "--workers", str(workers), "--batch", str(batch),
                      "--epochs", str(epochs), "--dtype", dtype, "--seed", "0"])[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--workers", default="2", help="comma-separated worker counts")
    ap.add_argument("--dtype", default=None, help="default: bf16 on cuda, f32 on cpu")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2, help="alternating runs of each, the best kept")
    args = ap.parse_args()
    dtype = args.dtype or ("bf16" if args.device == "cuda" else "f32")
    print("| workers | conveyor-bench img/s | Python loop img/s | Python / conveyor-bench |")
    print("|---|---|---|---|")
    for w in [int(v) for v in args.workers.split(",")]:
        cpp, py = 0.0, 0.0
        for _ in range(args.repeat):
            cpp = max(cpp, bench_rate(args.bench, args.data, w, args.epochs, args.device, dtype, args.batch))
            py = max(py, python_rate(args.data, w, args.epochs, args.device, dtype, args.batch))
        print(f"| {w} | {cpp:.0f} | {py:.0f} | {py / cpp:.3f} |", flush=True)
    print(f"\n{args.device}, {dtype}, batch {args.batch}, {args.epochs} epochs, best of {args.repeat}; "
          f"conveyor {conveyor.__version__}, torch {torch.__version__}")


if __name__ == "__main__":
    sys.exit(main())
