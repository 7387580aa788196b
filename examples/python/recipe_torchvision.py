#!/usr/bin/env python3
"""torchvision's 2021 classification recipe (references/classification: RandomResizedCrop 176,
flip, TrivialAugmentWide, RandomErasing 0.1, MixUp 0.2 / CutMix 1.0, label smoothing 0.1) on a
ResNet-50, its transforms written once and given unchanged to conveyor.Loader or, with
--loader dataloader, to the PyTorch DataLoader as the reference script uses them (MixUp and CutMix
in its collate_fn). Prints the loss as it goes, the first and last steps' mean loss and img/s.

    python3 examples/python/recipe_torchvision.py [--loader conveyor|dataloader] [--data DIR]
        [--steps S] [--batch B] [--size PX] [--workers W] [--device cpu|cuda]

By default the 13 bundled photos in 3 classes, on the GPU where there is one (conveyor runs the
Compose and MixUp/CutMix there, after the workers' decoding) for 200 steps of 64 images at 176
pixels, and otherwise 5 steps of 8 images at 64 pixels, which shows only that the loop runs.
"""
import argparse
import os
import pathlib
import sys
import time
from typing import Iterable, List, Tuple

import torch
import torchvision
from torchvision.transforms import v2

import conveyor

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def recipe(size: int) -> v2.Compose:
    """The reference's ClassificationPresetTrain for --auto-augment ta_wide --random-erase 0.1."""
    return v2.Compose([v2.RandomResizedCrop(size, antialias=True), v2.RandomHorizontalFlip(0.5),
                       v2.TrivialAugmentWide(interpolation=v2.InterpolationMode.BILINEAR), v2.PILToTensor(),
                       v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD), v2.RandomErasing(0.1)])


def mixup_cutmix(classes: int) -> v2.RandomChoice:
    """The reference's --mixup-alpha 0.2 --cutmix-alpha 1.0."""
    return v2.RandomChoice([v2.MixUp(alpha=0.2, num_classes=classes), v2.CutMix(alpha=1.0, num_classes=classes)])


class Decoded(torch.utils.data.Dataset):  # type: ignore[type-arg]
    """An ImageFolder whose samples are decode_image's uint8 tensors through `transform`."""

    def __init__(self, root: str, transform: v2.Compose):
        folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.files = [(os.path.join(root, d, f), label) for label, d in enumerate(folders)
                      for f in sorted(os.listdir(os.path.join(root, d)))]
        self.transform = transform

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int):  # type: ignore[no-untyped-def]
        path, label = self.files[i]
        return self.transform(torchvision.io.decode_image(path, mode=torchvision.io.ImageReadMode.RGB)), label


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loader", default="conveyor", choices=["conveyor", "dataloader"])
    ap.add_argument("--data", default=str(pathlib.Path(__file__).resolve().parents[1] / "data" / "samples"),
                    help="an ImageFolder tree (default: the bundled photos, 3 classes)")
    ap.add_argument("--steps", type=int)
    ap.add_argument("--batch", type=int)
    ap.add_argument("--size", type=int)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    device = torch.device(args.device)
    for name, gpu, cpu in (("steps", 200, 5), ("batch", 64, 8), ("size", 176, 64)):
        if getattr(args, name) is None:
            setattr(args, name, gpu if device.type == "cuda" else cpu)
    torch.manual_seed(0)

    transform = recipe(args.size)
    classes = len(conveyor.ImageFolder(args.data).classes)
    mixing = mixup_cutmix(classes)
    loader: Iterable[Tuple[torch.Tensor, torch.Tensor]]
    if args.loader == "conveyor":
        loader = conveyor.Loader(args.data, batch_size=args.batch, shuffle=True, drop_last=True, seed=0,
                                 workers=args.workers, transform=transform, batch_transform=mixing,
                                 device=device.type)  # on a GPU: the Compose and the mixing fused there
    else:
        def collate(batch):  # type: ignore[no-untyped-def]
            return mixing(*torch.utils.data.default_collate(batch))
        loader = torch.utils.data.DataLoader(Decoded(args.data, transform), batch_size=args.batch, shuffle=True,
                                             drop_last=True, num_workers=args.workers, collate_fn=collate)

    model = torchvision.models.resnet50(num_classes=classes).to(device, memory_format=torch.channels_last)
    criterion = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5 * args.batch / 1024, momentum=0.9, weight_decay=2e-5)
    amp = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")

    losses: List[float] = []
    images_seen, epoch = 0, 0
    start = time.perf_counter()
    while len(losses) < args.steps:
        if isinstance(loader, conveyor.Loader):
            loader.set_epoch(epoch)
        for images, targets in loader:  # targets: float32 [N, classes], MixUp's or CutMix's soft targets
            images = images.to(device, non_blocking=True, memory_format=torch.channels_last)
            with amp:
                loss = criterion(model(images), targets.to(device, non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            images_seen += images.shape[0]
            if len(losses) % 10 == 0 or len(losses) == 1:
                print(f"step {len(losses)} loss {losses[-1]:.4f}", flush=True)
            if len(losses) == args.steps:
                break
        epoch += 1
    seconds = time.perf_counter() - start
    n = max(1, min(10, len(losses) // 2))
    first, last = sum(losses[:n]) / n, sum(losses[-n:]) / n
    print(f"{args.loader}: loss first {n} steps {first:.4f}, last {n} steps {last:.4f}; "
          f"{images_seen / seconds:.1f} img/s (training included) on {device}")
    # A short run shows the loop runs; a long one (the GPU default) that the loss falls.
    return 0 if args.steps < 100 or last < first else 1


if __name__ == "__main__":
    sys.exit(main())
