#!/usr/bin/env python3
"""torchvision's 2021 augmentation on the GPU, against the peers a user would pick instead, in one
run: RandomResizedCrop(224) + RandomHorizontalFlip + TrivialAugmentWide + normalize, batches of
256 as 16-bit floats on the GPU, shuffled, over the same files and thread counts, interleaved.

- conveyor.Loader given the user's v2.Compose (ending in ToDtype(torch.bfloat16)), device cuda,
  decode "auto"; and conveyor-bench --recipe plain / trivial (TrivialAugmentWide + RandomErasing
  0.25) with --bench.
- DALI (nvidia-dali-cuda130): fn.readers.file, fn.decoders.image_random_crop on the "mixed"
  device, fn.resize (antialiased), fn.flip, nvidia.dali.auto_aug.trivial_augment_wide,
  fn.crop_mirror_normalize to float16 CHW.
- The PyTorch DataLoader: decode_image + the same Compose in its workers (float32), pinned, copied
  with non_blocking and cast to bfloat16 on the GPU.
- torchvision on the GPU: files read in the loop, decode_jpeg(device="cuda") on a batch, the
  Compose per image on the GPU, stacked.

Each row gives two rates: the whole run (construction or first iterator to the last batch, a
device sync at the end) and the steady state (the epochs after the first, timed per epoch).

    python3 benchmarks/compare/trivial_recipe_gpu.py --data DIR [--bench conveyor-bench] [--threads 4,16]
"""
import argparse
import math
import os
import pathlib
import platform
import statistics
import time

import torch
import torchvision
from torchvision.io import ImageReadMode, decode_jpeg, read_file
from torchvision.transforms import v2

from loader_rate import bench_rate
from recipes_vs_dataloader import Decoded

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
BATCH = 256


def compose(dtype):
    return v2.Compose([v2.RandomResizedCrop(224, antialias=True), v2.RandomHorizontalFlip(), v2.TrivialAugmentWide(),
                       v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD), v2.ToDtype(dtype)])


class Timer:
    """Whole-run and per-epoch clocks: `epoch_done(images)` after each epoch."""

    def __init__(self):
        self.start = self.mark = time.perf_counter()
        self.epochs = []  # (images, seconds)

    def epoch_done(self, images):
        torch.cuda.synchronize()
        now = time.perf_counter()
        self.epochs.append((images, now - self.mark))
        self.mark = now

    def rates(self):
        whole = sum(n for n, _ in self.epochs) / (self.mark - self.start)
        later = self.epochs[1:] or self.epochs
        return whole, sum(n for n, _ in later) / sum(s for _, s in later)


def conveyor_rates(data, threads, epochs):
    import conveyor
    timer = Timer()

    def make(decode):
        return conveyor.Loader(conveyor.ImageFolder(data), batch_size=BATCH, shuffle=True, seed=0, workers=threads,
                               device="cuda", decode=decode, transform=compose(torch.bfloat16))
    try:
        loader = make("auto")
    except conveyor.ConfigError:  # a package built without nvJPEG: the workers decode
        print("conveyor.Loader: no GPU JPEG decoding in this build, decode='cpu'", flush=True)
        loader = make("cpu")
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        images = 0
        for x, y in loader:
            images += len(y)
        timer.epoch_done(images)
    assert x.dtype == torch.bfloat16 and x.is_cuda
    return timer.rates()


def dali_rates(data, threads, epochs):
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    from nvidia.dali import pipeline_def
    from nvidia.dali.auto_aug import trivial_augment

    @pipeline_def(batch_size=BATCH, num_threads=threads, device_id=0, seed=42, enable_conditionals=True)
    def train():
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB,
                                               random_area=[0.08, 1.0], random_aspect_ratio=[3 / 4, 4 / 3],
                                               num_attempts=10)
        images = fn.resize(images, resize_x=224, resize_y=224, antialias=True)
        images = fn.flip(images, horizontal=fn.random.coin_flip(probability=0.5))
        images = trivial_augment.trivial_augment_wide(images)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                          mean=[m * 255 for m in MEAN], std=[s * 255 for s in STD])
        return images, labels.gpu()

    return dali_epochs(train, epochs, BATCH)


def dali_epochs(define, epochs, batch):
    """Builds the DALI pipeline `define()` (a file reader named "reader" first) and times `epochs`
    epochs of it."""
    timer = Timer()
    pipe = define()
    pipe.build()
    steps = math.ceil(pipe.epoch_size("reader") / batch)
    for _ in range(epochs):
        images = 0
        for _ in range(steps):
            images += len(pipe.run()[0])
        timer.epoch_done(images)
    return timer.rates()


def dataloader_rates(data, workers, epochs):
    timer = Timer()
    loader = torch.utils.data.DataLoader(Decoded(data, compose(torch.float32)), batch_size=BATCH, shuffle=True,
                                         num_workers=workers, persistent_workers=True, prefetch_factor=2,
                                         pin_memory=True)
    for _ in range(epochs):
        images = 0
        for x, _ in loader:
            x = x.to("cuda", non_blocking=True).to(torch.bfloat16)
            images += x.shape[0]
        timer.epoch_done(images)
    return timer.rates()


def torchvision_gpu_rates(data, epochs):
    files = sorted(str(f) for f in pathlib.Path(data).rglob("*") if f.suffix.lower() in (".jpg", ".jpeg"))
    augment = compose(torch.bfloat16)
    timer = Timer()
    for _ in range(epochs):
        order = torch.randperm(len(files)).tolist()
        images = 0
        for start in range(0, len(files), BATCH):
            encoded = [read_file(files[i]) for i in order[start:start + BATCH]]
            decoded = decode_jpeg(encoded, mode=ImageReadMode.RGB, device="cuda")
            x = torch.stack([augment(im) for im in decoded])
            images += x.shape[0]
        timer.epoch_done(images)
    return timer.rates()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="an ImageFolder of JPEGs")
    ap.add_argument("--bench", help="conveyor-bench, for its plain and trivial recipes")
    ap.add_argument("--threads", default="4,16")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved repetitions of every row")
    ap.add_argument("--epochs", type=int, default=6, help="epochs of the GPU pipelines")
    ap.add_argument("--dataloader-epochs", type=int, default=2)
    ap.add_argument("--peers", default="conveyor,bench,dali,dataloader,torchvision")
    args = ap.parse_args()
    torch.set_num_threads(1)  # the DataLoader's workers each use one, as conveyor's do
    peers = set(args.peers.split(","))
    n = len(Decoded(args.data, None))
    rows = {}  # (peer, threads) -> [(whole, steady)]
    runs = []
    for t in [int(v) for v in args.threads.split(",")]:
        if "conveyor" in peers:
            runs.append(("conveyor.Loader (v2 Compose)", t, lambda t=t: conveyor_rates(args.data, t, args.epochs)))
        if "bench" in peers and args.bench:
            for recipe in ("plain", "trivial"):
                command = [args.bench, "--data", args.data, "--device", "cuda", "--decode", "auto", "--workers", str(t),
                           "--batch", str(BATCH), "--epochs", str(args.epochs), "--dtype", "bf16", "--recipe", recipe]
                runs.append((f"conveyor-bench --recipe {recipe}", t, lambda c=command: (bench_rate(c)[0], None)))
        if "dali" in peers:
            runs.append(("DALI trivial_augment_wide", t, lambda t=t: dali_rates(args.data, t, args.epochs)))
        if "dataloader" in peers:
            runs.append(("DataLoader (v2 Compose)", t, lambda t=t: dataloader_rates(args.data, t, args.dataloader_epochs)))
    if "torchvision" in peers:
        runs.append(("torchvision decode_jpeg(cuda) + v2", 1, lambda: torchvision_gpu_rates(args.data, 2)))
    for r in range(args.rounds):
        for name, t, run in runs:
            try:
                whole, steady = run()
            except ImportError as e:
                print(f"{name}, {t} threads: not installed ({e})", flush=True)
                continue
            rows.setdefault((name, t), []).append((whole, steady))
            shown = f", steady {steady:,.0f}" if steady else ""
            print(f"round {r + 1}: {name}, {t} threads: whole run {whole:,.0f}{shown} img/s", flush=True)

    def span(values):
        values = [v for v in values if v]
        if not values:
            return "-"
        lo, hi = min(values), max(values)
        return f"{lo:,.0f}" if len(values) == 1 else f"{lo:,.0f}-{hi:,.0f} (median {statistics.median(values):,.0f})"

    print(f"\n{n} files, batch {BATCH}, {args.epochs} epochs ({args.dataloader_epochs} for the DataLoader), "
          f"{args.rounds} rounds; {torch.cuda.get_device_name()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
          f"torchvision {torchvision.__version__}, Python {platform.python_version()}")
    print("\n| pipeline | threads | whole run img/s | steady img/s |")
    print("|---|---|---|---|")
    for (name, t), values in rows.items():
        print(f"| {name} | {t} | {span([w for w, _ in values])} | {span([s for _, s in values])} |")


if __name__ == "__main__":
    main()
