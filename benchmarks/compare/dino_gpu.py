#!/usr/bin/env python3
"""DINO's multi-crop augmentation (2 global 224 crops + 8 local 96 crops a source image) on the GPU,
against the loaders a DINO user would pick instead, in one run over the same files, interleaved;
rates are source images per second, float32 views on the GPU, batches of 128, shuffled.

- conveyor.Loader given DataAugmentationDINO's three pipelines as v2 Composes
  (examples/python/recipe_dino.py) in conveyor.Views: each image decoded once, device "cuda"; and
  the first global Compose alone (one view), for the cost of the other nine.
- DINO's own DataAugmentationDINO in the DataLoader: PIL images (ImageFolder's loader) through
  torchvision.transforms (v1): RandomResizedCrop(BICUBIC), flip, ColorJitter, grayscale, PIL's
  GaussianBlur filter, PIL's solarize, ToTensor, Normalize; pinned, copied non_blocking.
- The DataLoader with the same v2 Composes as conveyor's, on decode_image's uint8 tensors.
- DALI (nvidia-dali-cuda130), where installed: the image decoded once on the "mixed" device, then per
  crop fn.random_resized_crop, fn.flip, fn.color_twist, fn.hsv (grayscale), fn.gaussian_blur and a
  solarize in arithmetic, each applied with its probability, fn.crop_mirror_normalize to float CHW.

Each row gives the whole run (construction to the last batch, a device sync at the end) and the
steady state (the epochs after the first).

    python3 benchmarks/compare/dino_gpu.py --data DIR [--workers 16] [--rounds 2] [--peers ...]
"""
import argparse
import os
import platform
import random
import statistics
import sys

import torch
import torchvision
from PIL import ImageFilter, ImageOps
from torchvision import transforms as v1

from trivial_recipe_gpu import Timer, dali_epochs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
from recipe_dino import MEAN, STD, MultiCrop, dino_views  # noqa: E402

BATCH = 128
LOCAL_CROPS = 8


class PilBlur:
    """DINO's GaussianBlur: PIL's filter with a radius drawn from (0.1, 2), applied with probability p."""

    def __init__(self, p):
        self.p = p

    def __call__(self, image):
        if random.random() > self.p:
            return image
        return image.filter(ImageFilter.GaussianBlur(radius=random.uniform(0.1, 2.0)))


class PilSolarize:
    def __init__(self, p):
        self.p = p

    def __call__(self, image):
        return ImageOps.solarize(image) if random.random() < self.p else image


class DataAugmentationDINO:
    """DINO's own multi-crop transform (its main_dino.py), on PIL images."""

    def __init__(self, global_size=224, local_size=96, local_crops=LOCAL_CROPS):
        flip_and_color_jitter = v1.Compose([
            v1.RandomHorizontalFlip(p=0.5),
            v1.RandomApply([v1.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1)], p=0.8),
            v1.RandomGrayscale(p=0.2)])
        normalize = v1.Compose([v1.ToTensor(), v1.Normalize(MEAN, STD)])
        bicubic = v1.InterpolationMode.BICUBIC
        self.first = v1.Compose([v1.RandomResizedCrop(global_size, scale=(0.4, 1.0), interpolation=bicubic),
                                 flip_and_color_jitter, PilBlur(1.0), normalize])
        self.second = v1.Compose([v1.RandomResizedCrop(global_size, scale=(0.4, 1.0), interpolation=bicubic),
                                  flip_and_color_jitter, PilBlur(0.1), PilSolarize(0.2), normalize])
        self.local = v1.Compose([v1.RandomResizedCrop(local_size, scale=(0.05, 0.4), interpolation=bicubic),
                                 flip_and_color_jitter, PilBlur(0.5), normalize])
        self.local_crops = local_crops

    def __call__(self, image):
        return [self.first(image), self.second(image)] + [self.local(image) for _ in range(self.local_crops)]


def epochs_of(loader, epochs, timer, set_epoch=False):
    for epoch in range(epochs):
        if set_epoch:
            loader.set_epoch(epoch)
        images = 0
        for views, _ in loader:
            views = [v.to("cuda", non_blocking=True) for v in (views if isinstance(views, list) else [views])]
            images += views[0].shape[0]
        timer.epoch_done(images)
    return timer.rates()


def conveyor_rates(data, workers, epochs, views):
    import conveyor
    first, second, local = dino_views(224, 96)
    transform = conveyor.Views([(first, 1), (second, 1), (local, LOCAL_CROPS)]) if views else first
    timer = Timer()
    loader = conveyor.Loader(conveyor.ImageFolder(data), batch_size=BATCH, shuffle=True, seed=0, workers=workers,
                             device="cuda", transform=transform)
    return epochs_of(loader, epochs, timer, set_epoch=True)


def dataloader_rates(dataset, workers, epochs):
    timer = Timer()
    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=workers,
                                         persistent_workers=True, prefetch_factor=2, pin_memory=True, drop_last=False)
    return epochs_of(loader, epochs, timer)


def dali_rates(data, workers, epochs):
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    from nvidia.dali import pipeline_def

    def coin(p):
        return fn.random.coin_flip(probability=p)

    def crop(images, size, area, blur_p, solarize_p):
        v = fn.random_resized_crop(images, size=[size, size], random_area=area, antialias=True)
        v = fn.flip(v, horizontal=coin(0.5))
        if coin(0.8):
            v = fn.color_twist(v, brightness=fn.random.uniform(range=[0.6, 1.4]),
                               contrast=fn.random.uniform(range=[0.6, 1.4]),
                               saturation=fn.random.uniform(range=[0.8, 1.2]), hue=fn.random.uniform(range=[-36, 36]))
        if coin(0.2):
            v = fn.hsv(v, saturation=0.0)
        if coin(blur_p):
            v = fn.gaussian_blur(v, window_size=23, sigma=fn.random.uniform(range=[0.1, 2.0]))
        if solarize_p and coin(solarize_p):
            x = fn.cast(v, dtype=types.INT16)
            v = fn.cast(x + fn.cast(x >= 128, dtype=types.INT16) * (255 - 2 * x), dtype=types.UINT8)
        return fn.crop_mirror_normalize(v, dtype=types.FLOAT, output_layout="CHW", mean=[m * 255 for m in MEAN],
                                        std=[s * 255 for s in STD])

    @pipeline_def(batch_size=BATCH, num_threads=workers, device_id=0, seed=42, enable_conditionals=True)
    def dino():
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
        views = [crop(images, 224, [0.4, 1.0], 1.0, 0.0), crop(images, 224, [0.4, 1.0], 0.1, 0.2)]
        views += [crop(images, 96, [0.05, 0.4], 0.5, 0.0) for _ in range(LOCAL_CROPS)]
        return (*views, labels.gpu())

    return dali_epochs(dino, epochs, BATCH)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="an ImageFolder of JPEGs")
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved repetitions of every row")
    ap.add_argument("--epochs", type=int, default=3, help="epochs of the GPU pipelines")
    ap.add_argument("--dataloader-epochs", type=int, default=2)
    ap.add_argument("--peers", default="conveyor,conveyor-one,dino,dataloader-v2,dali")
    args = ap.parse_args()
    torch.set_num_threads(1)  # the DataLoader's workers each use one, as conveyor's do
    peers = set(args.peers.split(","))
    first, second, local = dino_views(224, 96)
    w, e, de = args.workers, args.epochs, args.dataloader_epochs
    runs = []
    if "conveyor" in peers:
        runs.append(("conveyor.Loader, Views (2 + 8)", lambda: conveyor_rates(args.data, w, e, True)))
    if "conveyor-one" in peers:
        runs.append(("conveyor.Loader, one global view", lambda: conveyor_rates(args.data, w, e, False)))
    if "dino" in peers:
        runs.append(("DataLoader, DataAugmentationDINO (PIL)",
                     lambda: dataloader_rates(torchvision.datasets.ImageFolder(args.data, DataAugmentationDINO()), w, de)))
    if "dataloader-v2" in peers:
        views = [first, second] + [local] * LOCAL_CROPS
        runs.append(("DataLoader, the v2 Composes", lambda: dataloader_rates(MultiCrop(args.data, views), w, de)))
    if "dali" in peers:
        runs.append(("DALI multi-crop (mixed decoder)", lambda: dali_rates(args.data, w, e)))
    rows = {}
    for r in range(args.rounds):
        for name, run in runs:
            try:
                whole, steady = run()
            except ImportError as err:
                print(f"{name}: not installed ({err})", flush=True)
                continue
            rows.setdefault(name, []).append((whole, steady))
            print(f"round {r + 1}: {name}: whole run {whole:,.0f}, steady {steady:,.0f} img/s", flush=True)

    def span(values):
        lo, hi = min(values), max(values)
        return f"{lo:,.0f}" if len(values) == 1 else f"{lo:,.0f}-{hi:,.0f} (median {statistics.median(values):,.0f})"

    n = len(MultiCrop(args.data, []))
    print(f"\n{n} files, batch {BATCH}, 2 x 224 + {LOCAL_CROPS} x 96 views, {w} workers, {e} epochs ({de} for the "
          f"DataLoader), {args.rounds} rounds; {torch.cuda.get_device_name()}, {os.cpu_count()} CPUs, "
          f"torch {torch.__version__}, torchvision {torchvision.__version__}, Python {platform.python_version()}")
    print("\n| pipeline | whole run img/s | steady img/s |")
    print("|---|---|---|")
    for name, values in rows.items():
        print(f"| {name} | {span([v for v, _ in values])} | {span([s for _, s in values])} |")


if __name__ == "__main__":
    main()
