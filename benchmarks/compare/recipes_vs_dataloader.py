#!/usr/bin/env python3
"""Today's recipes, as users write them (torchvision v2 Compose objects), run by the PyTorch
DataLoader and by conveyor.Loader given the same Compose, side by side in one run.

DataLoader: a map-style dataset whose samples are `torchvision.io.decode_image(path, mode=RGB)`
through the Compose (what conveyor's decode gives the Compose), or for the torchvision v1 recipes
(PIL images) torchvision's ImageFolder with the Compose as its transform, batch 256, persistent workers,
and for the recipe with MixUp/CutMix torchvision's reference collate_fn (the RandomChoice of the
two applied to `default_collate`'s batch, in the workers) where conveyor takes `batch_transform=`;
on --device cuda pin_memory and a non_blocking copy. conveyor.Loader: the Compose compiled into
its program (`ImageAugment.from_transforms`), on the CPU backend or the GPU. Both are timed from
the iterator's creation over whole epochs and print img/s per recipe and worker count, and the
ratio. A recipe whose transforms this build cannot run is listed as skipped, with the reason.

    python3 benchmarks/compare/recipes_vs_dataloader.py --data DIR [--device cpu] [--workers 2,4]
"""
import argparse
import os

import torch
import torchvision
from torchvision import transforms as v1
from torchvision.transforms import v2

from loader_rate import loader_rate, torch_loader_rate

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def recipes(size, classes):
    """name -> (Compose, batch transform or None): ResNet's 2015 recipe, torchvision's 2021
    reference (TrivialAugmentWide, RandomErasing; and with its MixUp 0.2 / CutMix 1.0),
    SimCLR-style colour, BYOL's first view (colour, a 23-tap blur, solarize), evaluation, a resize
    of every image to (h, w) and a rectangular random crop, bicubic evaluation; and in torchvision
    v1 on PIL images (Pillow's resizes and ImageEnhance) the document's pipeline, ResNet's, evaluation,
    ResNet's with colour jitter and grey, and the classification reference's with AugMix."""
    tail = [v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)]
    out = {
        "resnet (RRC, flip)": [v2.RandomResizedCrop(size), v2.RandomHorizontalFlip()] + tail,
        "simclr colour": [v2.RandomResizedCrop(size), v2.RandomHorizontalFlip(),
                          v2.RandomApply([v2.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), v2.RandomGrayscale(0.2),
                          v2.RandomSolarize(128, p=0.2)] + tail,
        "byol colour + blur": [v2.RandomResizedCrop(size), v2.RandomHorizontalFlip(),
                               v2.RandomApply([v2.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), v2.RandomGrayscale(0.2),
                               v2.GaussianBlur(23, sigma=(0.1, 2.0)), v2.RandomSolarize(128, p=0.2)] + tail,
        "eval (resize, center crop)": [v2.Resize(size * 8 // 7), v2.CenterCrop(size)] + tail,
        # the pipeline of the document conveyor answers, in v2: every image to size x size, no crop
        "resize to (h, w)": [v2.Resize((size, size))] + tail,
        "rectangle (RRC to (3/4 h, w), flip)": [v2.RandomResizedCrop((size * 3 // 4, size)),
                                                v2.RandomHorizontalFlip()] + tail,
    }
    out["eval, bicubic"] = [v2.Resize(size * 8 // 7, interpolation=v2.InterpolationMode.BICUBIC),
                            v2.CenterCrop(size)] + tail
    v1_tail = [v1.ToTensor(), v1.Normalize(MEAN, STD)]
    out["v1 PIL: resize to (h, w)"] = [v1.Resize((size, size))] + v1_tail
    out["v1 PIL: resnet (RRC, flip)"] = [v1.RandomResizedCrop(size), v1.RandomHorizontalFlip()] + v1_tail
    out["v1 PIL: eval, bicubic"] = [v1.Resize(size * 8 // 7, interpolation=v1.InterpolationMode.BICUBIC),
                                    v1.CenterCrop(size)] + v1_tail
    out["v1 PIL: colour (RRC, flip, jitter, grey)"] = [
        v1.RandomResizedCrop(size), v1.RandomHorizontalFlip(), v1.ColorJitter(0.4, 0.4, 0.4, 0.1),
        v1.RandomGrayscale(0.2)] + v1_tail
    # the classification reference's preset without --use-v2: --auto-augment augmix --random-erase 0.1
    out["v1 PIL: reference augmix (RRC, flip, AugMix, erasing)"] = [
        v1.RandomResizedCrop(size), v1.RandomHorizontalFlip(), v1.AugMix(), v1.PILToTensor(),
        v1.ConvertImageDtype(torch.float), v1.Normalize(MEAN, STD), v1.RandomErasing(0.1)]
    if hasattr(v2, "TrivialAugmentWide"):
        out["torchvision 2021 (TA-wide, erasing)"] = ([v2.RandomResizedCrop(size), v2.RandomHorizontalFlip(),
                                                       v2.TrivialAugmentWide()] + tail + [v2.RandomErasing(0.1)])
    composes = {name: ((v1 if name.startswith("v1") else v2).Compose(ts), None) for name, ts in out.items()}
    if hasattr(v2, "MixUp"):
        mixing = v2.RandomChoice([v2.MixUp(alpha=0.2, num_classes=classes), v2.CutMix(alpha=1.0, num_classes=classes)])
        composes["torchvision 2021 + MixUp/CutMix"] = (composes["torchvision 2021 (TA-wide, erasing)"][0], mixing)
    return composes


class Decoded(torch.utils.data.Dataset):
    def __init__(self, root, transform):
        self.files = [(os.path.join(d, f), label)
                      for label, d in enumerate(sorted(os.path.join(root, c) for c in os.listdir(root)
                                                       if os.path.isdir(os.path.join(root, c))))  # as ImageFolder
                      for f in sorted(os.listdir(d))]
        self.transform = transform

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        path, label = self.files[i]
        image = torchvision.io.decode_image(path, mode=torchvision.io.ImageReadMode.RGB)
        return self.transform(image), label


def mixing_collate(mixing):
    """torchvision's reference collate_fn: the batch transform on default_collate's batch."""
    def collate(batch):
        return mixing(*torch.utils.data.default_collate(batch))
    return collate


def dataloader_rate(data, compose, mixing, workers, epochs, device):
    kwargs = dict(batch_size=256, shuffle=True, num_workers=workers, pin_memory=device == "cuda")
    if mixing is not None:
        kwargs["collate_fn"] = mixing_collate(mixing)
    if workers > 0:
        kwargs.update(persistent_workers=True, prefetch_factor=2)
    v1_compose = not type(compose).__module__.startswith("torchvision.transforms.v2")
    dataset = torchvision.datasets.ImageFolder(data, compose) if v1_compose else Decoded(data, compose)
    return torch_loader_rate(torch.utils.data.DataLoader(dataset, **kwargs), epochs, device)


def main():
    import conveyor  # here, so the peers' scripts can import Decoded where the package is not installed
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="an ImageFolder (class folders of JPEGs)")
    ap.add_argument("--workers", default="2")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--size", type=int, default=176)
    ap.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    ap.add_argument("--only", default="", help="run the recipes whose name holds one of these comma-separated words")
    args = ap.parse_args()
    torch.set_num_threads(1)  # the DataLoader's workers each use one, as conveyor's do
    rows = []
    classes = len(conveyor.ImageFolder(args.data).classes)
    for name, (compose, mixing) in recipes(args.size, classes).items():
        if args.only and not any(word in name for word in args.only.split(",")):
            continue
        try:
            conveyor.ImageAugment.from_transforms(compose)
        except conveyor.ConfigError as e:
            print(f"{name}: skipped ({e})", flush=True)
            continue
        for workers in [int(w) for w in args.workers.split(",")]:
            theirs = dataloader_rate(args.data, compose, mixing, workers, args.epochs, args.device)
            loader = conveyor.Loader(conveyor.ImageFolder(args.data), batch_size=256, shuffle=True, seed=0,
                                     workers=workers, device=args.device, transform=compose, batch_transform=mixing)
            ours = loader_rate(loader, args.epochs, args.device == "cuda")
            rows.append((name, workers, theirs, ours))
            print(f"{name}, {workers} workers: DataLoader {theirs:,.0f} img/s, conveyor {ours:,.0f} img/s "
                  f"({ours / theirs:.1f}x)", flush=True)
    print(f"\n| recipe ({args.device}, {args.size} px) | workers | DataLoader img/s | conveyor img/s | ratio |")
    print("|---|---|---|---|---|")
    for name, workers, theirs, ours in rows:
        print(f"| {name} | {workers} | {theirs:,.0f} | {ours:,.0f} | {ours / theirs:.1f}x |")


if __name__ == "__main__":
    main()
