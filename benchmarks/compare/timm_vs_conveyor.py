#!/usr/bin/env python3
"""timm's DeiT training pipeline three ways, in one run: timm's own loader
(`timm.data.create_loader(..., auto_augment="rand-m9-mstd0.5-inc1", re_prob=0.25,
interpolation="bicubic")`, or another `--auto-augment`, e.g. AugMix's "augmix-m3-w3": its DataLoader of PIL images, on --device cuda its prefetcher, which
normalises and erases on the GPU), the PyTorch DataLoader over torchvision's ImageFolder with the
transform `timm.data.create_transform` gives for the same arguments, and conveyor.Loader given that
transform unchanged (on the CPU backend, or the GPU). Batch 256, whole epochs timed from the
iterator's creation; img/s per worker count and the ratios. On Pillow 13 timm's posterize is given
Pillow 12's behaviour for 0 bits (`pillow_12_posterize`), without which timm's loader stops.

    python3 benchmarks/compare/timm_vs_conveyor.py --data DIR [--device cuda] [--workers 4,16] [--auto-augment ...]
"""
import argparse

import torch

from loader_rate import loader_rate, torch_loader_rate
from recipes_vs_dataloader import dataloader_rate

DEIT = dict(is_training=True, auto_augment="rand-m9-mstd0.5-inc1", re_prob=0.25, interpolation="bicubic")


def pillow_12_posterize():
    """timm's posterize as it ran on Pillow 12: Pillow 13 refuses to keep 0 bits, which timm's
    PosterizeIncreasing asks for at level 10 (m9 with mstd0.5 reaches it), stopping timm's loader with
    ValueError; conveyor gives the black image Pillow 12 gave, and so does timm's here."""
    from PIL import ImageOps
    from timm.data import auto_augment

    def posterize(img, bits_to_keep, **_):
        if bits_to_keep >= 8:
            return img
        if bits_to_keep < 1:
            return img.point([0] * 256 * len(img.getbands()))
        return ImageOps.posterize(img, bits_to_keep)
    for name in ("Posterize", "PosterizeIncreasing", "PosterizeOriginal"):
        auto_augment.NAME_TO_OP[name] = posterize


def timm_loader_rate(data, size, workers, epochs, device, recipe):
    import timm.data
    dataset = timm.data.create_dataset("", root=data, is_training=True)
    loader = timm.data.create_loader(dataset, input_size=(3, size, size), batch_size=256, num_workers=workers,
                                     pin_memory=device == "cuda", use_prefetcher=device == "cuda",
                                     device=torch.device(device), persistent_workers=True, **recipe)
    return torch_loader_rate(loader, epochs, device)


def main():
    import conveyor
    import timm.data
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="an ImageFolder (class folders of JPEGs)")
    ap.add_argument("--workers", default="2")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    ap.add_argument("--auto-augment", default=DEIT["auto_augment"])
    args = ap.parse_args()
    recipe = dict(DEIT, auto_augment=args.auto_augment)
    torch.set_num_threads(1)  # the loaders' workers each use one, as conveyor's do
    pillow_12_posterize()  # before any transform is made (AugmentOp keeps its function)
    transform = timm.data.create_transform(args.size, **recipe)
    rows = []
    for workers in [int(w) for w in args.workers.split(",")]:
        timm_own = timm_loader_rate(args.data, args.size, workers, args.epochs, args.device, recipe)
        plain = dataloader_rate(args.data, transform, None, workers, args.epochs, args.device)
        loader = conveyor.Loader(conveyor.ImageFolder(args.data), batch_size=256, shuffle=True, seed=0,
                                 workers=workers, device=args.device, transform=transform)
        ours = loader_rate(loader, args.epochs, args.device == "cuda")
        rows.append((workers, timm_own, plain, ours))
        print(f"{workers} workers: timm's loader {timm_own:,.0f} img/s, DataLoader {plain:,.0f} img/s, "
              f"conveyor {ours:,.0f} img/s ({ours / timm_own:.1f}x timm's)", flush=True)
    print(f"\n| timm train ({args.device}, {args.size} px) | workers | timm's loader img/s | DataLoader img/s "
          f"| conveyor img/s | vs timm's |")
    print("|---|---|---|---|---|---|")
    for workers, timm_own, plain, ours in rows:
        print(f"| {args.auto_augment}, re 0.25 | {workers} | {timm_own:,.0f} | {plain:,.0f} | {ours:,.0f} "
              f"| {ours / timm_own:.1f}x |")


if __name__ == "__main__":
    main()
