#!/usr/bin/env python3
"""PNG decoding on one core, to 8-bit RGB, from bytes in memory: conveyor.decode_image against
Pillow's Image.open(...).convert("RGB") (what torchvision's ImageFolder does) and
torchvision.io.decode_png(mode=RGB). Each decoder runs over every file, best of --repeat passes;
prints img/s and megapixels/s per core, and the ratios.

    python3 benchmarks/compare/png_decode.py --pngs DIR [--limit 500] [--repeat 3]
"""
import argparse
import io
import pathlib
import sys
import time

import PIL
import conveyor
import numpy
import torch
import torchvision
from PIL import Image
from torchvision.io import ImageReadMode, decode_png


def best_rate(decode, blobs, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for b in blobs:
            decode(b)
        best = min(best, time.perf_counter() - start)
    return len(blobs) / best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pngs", required=True)
    ap.add_argument("--limit", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    files = sorted(pathlib.Path(args.pngs).rglob("*.png"))[: args.limit]
    blobs = [f.read_bytes() for f in files]
    tensors = [torch.frombuffer(bytearray(b), dtype=torch.uint8) for b in blobs]
    megapixels = sum(Image.open(io.BytesIO(b)).width * Image.open(io.BytesIO(b)).height for b in blobs) / 1e6
    # The same pixels from all three, checked once before timing.
    for b, t in zip(blobs[:20], tensors[:20]):
        mine = conveyor.decode_image(b)
        assert (mine == numpy.asarray(Image.open(io.BytesIO(b)).convert("RGB"))).all()
        assert (mine == decode_png(t, mode=ImageReadMode.RGB).permute(1, 2, 0).numpy()).all()
    rates = {
        "conveyor.decode_image": best_rate(conveyor.decode_image, blobs, args.repeat),
        "Pillow open + convert('RGB')": best_rate(lambda b: Image.open(io.BytesIO(b)).convert("RGB"), blobs,
                                                  args.repeat),
        "torchvision.io.decode_png": best_rate(lambda t: decode_png(t, mode=ImageReadMode.RGB), tensors, args.repeat),
    }
    mine = rates["conveyor.decode_image"]
    print("\n| decoder | img/s per core | MP/s per core | conveyor / it |\n|---|---|---|---|")
    for name, r in rates.items():
        print(f"| {name} | {r:.0f} | {r * megapixels / len(blobs):.1f} | {mine / r:.2f}x |")
    print(f"\n{len(blobs)} PNG files, mean {megapixels / len(blobs):.3f} MP; Pillow {PIL.__version__}, "
          f"torchvision {torchvision.__version__}")


if __name__ == "__main__":
    sys.exit(main())
