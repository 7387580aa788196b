#!/usr/bin/env python3
"""A torchvision ResNet-18 trained with SGD + momentum on an ImageFolder, fed by conveyor.Loader
instead of the PyTorch DataLoader: on the GPU when there is one (batches made there, on torch's
stream), on the CPU otherwise. Prints the loss as it goes, then the first and last ten steps' mean
loss, img/s and the loader's stats; exits 1 if the loss did not fall.

    python3 examples/python/train.py --data DIR [--steps 300] [--batch 128] [--size 224] [--workers 16]
"""
import argparse
import pathlib
import sys
import time

import torch
import torchvision

import conveyor


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(pathlib.Path(__file__).resolve().parents[1] / "data" / "samples"))
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--workers", type=int, default=-1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() and conveyor.has_cuda_backend() else "cpu")
    args = ap.parse_args()
    torch.manual_seed(0)
    device = torch.device(args.device)

    train = conveyor.ImageFolder(args.data)
    dtype = "bf16" if device.type == "cuda" else "f32"
    loader = conveyor.Loader(train, batch_size=args.batch, shuffle=True, seed=42, workers=args.workers,
                             device=args.device, transform=conveyor.ImageAugment.train(args.size, dtype=dtype))
    model = torchvision.models.resnet18(num_classes=len(train.classes)).to(device, memory_format=torch.channels_last)
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
