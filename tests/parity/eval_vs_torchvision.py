#!/usr/bin/env python3
"""conveyor's eval preset against torchvision's eval, on any folder of photos.

torchvision: ImageFolder (PIL decode, .convert("RGB")), Resize(256) (antialiased), CenterCrop(224),
as uint8. conveyor: conveyor-bench --transform eval --dtype u8 with its default options. Prints
the largest and the mean absolute difference in LSB per photo and over all of them, and exits 1
when they exceed --max / --mean.

    python3 tests/parity/eval_vs_torchvision.py --photos DIR --bench build/tools/conveyor-bench

DIR may be an ImageFolder tree or a folder of JPEGs (then linked into a one-class tree).
Needs torch, torchvision, numpy and Pillow (PyPI).
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import PIL
import torch
import torchvision
from torchvision.transforms import v2


def as_image_folder(photos, scratch):
    """A one-class tree of links to the JPEGs directly in photos, or photos itself (class folders)."""
    jpegs = sorted(p for p in photos.iterdir() if p.is_file() and p.suffix.lower() in (".jpg", ".jpeg"))
    if not jpegs:
        return photos
    root = scratch / "photos"
    (root / "all").mkdir(parents=True)
    for p in jpegs:
        (root / "all" / p.name).symlink_to(p.resolve())
    return root


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--photos", required=True, type=pathlib.Path)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--decode-scaling", default="auto", choices=["auto", "on", "off"])
    ap.add_argument("--max", type=float, default=1.0, help="largest difference allowed, LSB")
    ap.add_argument("--mean", type=float, default=0.1, help="mean difference allowed, LSB")
    args = ap.parse_args()
    resize = args.size * 256 // 224  # conveyor-bench's eval: Resize(size * 256 / 224)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = pathlib.Path(tmp)
        root = as_image_folder(args.photos, scratch)
        subprocess.run([args.bench, "--data", str(root), "--transform", "eval", "--size", str(args.size),
                        "--dtype", "u8", "--layout", "nchw", "--batch", "16", "--workers", "2",
                        "--decode-scaling", args.decode_scaling, "--dump", str(scratch / "dump")],
                       check=True, stdout=subprocess.DEVNULL)
        # The PIL image is resized, as torchvision's eval does, and only then made a tensor.
        tv = torchvision.datasets.ImageFolder(str(root), transform=v2.Compose(
            [v2.Resize(resize, antialias=True), v2.CenterCrop(args.size), v2.PILToTensor()]))
        worst, total, count, rows = 0, 0.0, 0, []
        for images in sorted((scratch / "dump").glob("*images.npy")):
            batch = np.load(images)
            indices = np.load(str(images).replace("images.npy", "indices.npy"))
            for out, index in zip(batch, indices):
                ref = tv[int(index)][0].numpy()
                d = np.abs(out.astype(np.int32) - ref.astype(np.int32))
                path = pathlib.Path(tv.samples[int(index)][0])
                with PIL.Image.open(path) as im:
                    mp = im.width * im.height / 1e6
                rows.append((path.name, mp, int(d.max()), float(d.mean())))
                worst = max(worst, int(d.max()))
                total += float(d.sum())
                count += d.size
    print("| photo | MP | max LSB | mean LSB |")
    print("|---|---|---|---|")
    for name, mp, mx, mean in sorted(rows):
        print(f"| {name} | {mp:.1f} | {mx} | {mean:.3f} |")
    mean = total / count
    print(f"\ntorch {torch.__version__}, torchvision {torchvision.__version__}, Pillow {PIL.__version__}; "
          f"decode scaling {args.decode_scaling}")
    print(f"{len(rows)} photos: max {worst} LSB, mean {mean:.3f} LSB")
    return 0 if worst <= args.max and mean <= args.mean else 1


if __name__ == "__main__":
    sys.exit(main())
