#!/usr/bin/env python3
"""A torchvision ResNet-18 trained with SGD + momentum on an ImageFolder, fed by conveyor.Loader
instead of the PyTorch DataLoader: on the GPU when there is one (batches made there, on torch's
stream), on the CPU otherwise. Prints the loss as it goes, then the first and last ten steps' mean
loss, img/s and the loader's stats; exits 1 if the loss did not fall.

    python3 examples/python/train.py [--data DIR] [--classes N] [--steps S] [--batch B] [--size PX] [--workers W]
                                     [--device D] [--decode cpu|gpu|auto]

--data is what conveyor.Loader opens: an ImageFolder tree (a sub-folder per class, as torchvision
reads it), WebDataset tar shards (train-{000000..000099}.tar), TFRecord files or a "path label"
list; by default the 13 bundled photos in 3 classes. On a GPU it trains 300 steps of 128 images
at 224 pixels; on the CPU 40 steps of up to 32 images at 64 pixels (about half a minute on two
cores), enough to see the loss fall.
"""
import argparse
import pathlib
import sys
import time
from typing import Literal

import torch
import torchvision

import conveyor


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", metavar="DIR|PATTERN|LIST",
                    default=str(pathlib.Path(__file__).resolve().parents[1] / "data" / "samples"),
                    help="the training set: an ImageFolder tree (a sub-folder per class), WebDataset tar shards "
                         "(train-{000000..000099}.tar), TFRecord files or a 'path label' list (default: the bundled "
                         "photos, 3 classes)")
    ap.add_argument("--classes", type=int, help="the number of classes (default: the ImageFolder's class folders)")
    ap.add_argument("--steps", type=int, help="training steps (default: 300 on a GPU, 40 on the CPU)")
    ap.add_argument("--batch", type=int, help="images per batch (default: 128 on a GPU, 32 on the CPU)")
    ap.add_argument("--size", type=int, help="crop side in pixels (default: 224 on a GPU, 64 on the CPU)")
    ap.add_argument("--workers", type=int, default=-1, help="decoding threads (default: one per hardware thread)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() and conveyor.has_cuda_backend() else "cpu",
                    help="cpu, cuda or cuda:N (default: cuda where there is a GPU and conveyor was built with CUDA)")
    ap.add_argument("--decode", choices=("cpu", "gpu", "auto"),
                    help="where JPEGs are decoded on a GPU run (default: auto, the engines taking a measured share, "
                         "where conveyor was built with nvJPEG; else cpu)")
    args = ap.parse_args()
    torch.manual_seed(0)
    device = torch.device(args.device)
    # A CPU trains at a few dozen images a second: a short run at a small size still shows the loss fall.
    for name, gpu, cpu in (("steps", 300, 40), ("batch", 128, 32), ("size", 224, 64)):
        if getattr(args, name) is None:
            setattr(args, name, gpu if device.type == "cuda" else cpu)

    train = conveyor.open_dataset(args.data)
    classes = args.classes or len(getattr(train, "classes", []))
    if classes < 1:
        ap.error(f"--classes: {args.data} has no class folders to count; say how many classes its labels span")
    dtype = "bf16" if device.type == "cuda" else "f32"
    decode: Literal["cpu", "gpu", "auto"] = args.decode or (
        "auto" if device.type == "cuda" and conveyor.has_gpu_decoding() else "cpu")
    loader = conveyor.Loader(train, batch_size=args.batch, shuffle=True, seed=42, workers=args.workers,
                             device=args.device, decode=decode,
                             transform=conveyor.ImageAugment.train(args.size, dtype=dtype))
    model = torchvision.models.resnet18(num_classes=classes).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05 * args.batch / 128, momentum=0.9)  # linear scaling
    amp = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")

    losses, step, epoch, images_seen = [], 0, 0, 0
    start = time.perf_counter()
    while step < args.steps:
        loader.set_epoch(epoch)
        for images, labels in loader:
            with amp:
                loss = torch.nn.functional.cross_entropy(model(images.to(memory_format=torch.channels_last)), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            images_seen += len(labels)
            step += 1
            if step % 10 == 0 or step == 1:
                print(f"step {step} loss {losses[-1]:.4f}", flush=True)
            if step == args.steps:
                break
        epoch += 1
    seconds = time.perf_counter() - start
    n = min(10, len(losses) // 2)
    first, last = sum(losses[:n]) / n, sum(losses[-n:]) / n
    stats = loader.stats()
    print(f"loss: first {n} steps {first:.4f}, last {n} steps {last:.4f}")
    print(f"{images_seen / seconds:.1f} img/s (training included) on {device}; the loop waited for data "
          f"{100 * stats['starvation']:.1f}% of the time")
    return 0 if last < first else 1


if __name__ == "__main__":
    sys.exit(main())
