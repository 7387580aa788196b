#!/usr/bin/env python3
"""Records torchvision's eval preset (Resize 256 antialiased + CenterCrop 224, uint8) on real
photos, as the reference conveyor's eval preset is tested against (tests/ops/test_eval_parity.cpp).

The input pixels are libjpeg-turbo's own decode (djpeg, islow, fancy upsampling: what conveyor's
decoder reproduces bit for bit), so the comparison isolates the resampling. Writes
tests/data/eval/<photo>.ppm and tests/data/eval/INDEX.tsv (photo, decoded size, MD5 of the decode).

    python3 tests/parity/make_eval_reference.py --photos ../shared/data/photos

Needs torch, torchvision, numpy (PyPI) and djpeg (Debian libjpeg-turbo-progs).
"""
import argparse
import hashlib
import pathlib
import subprocess

import numpy as np
import torch
import torchvision
from torchvision.transforms import v2

PHOTOS = [
    "gimp_beavis.jpg",                # grayscale 350x350
    "pillow_flower2.jpg",             # 300x225: the short side is upscaled to 256
    "darktable_style_image-1.jpg",    # progressive 4:4:4
    "mate_Storm.jpg",                 # 4:2:2 1920x1280
    "exif_Portrait_0.jpg",            # portrait 4:2:0
    "lomiri_Dragonfly_by_Bolly.jpg",  # 13 MP progressive: a 12x downscale
]


def djpeg_rgb(path):
    pnm = subprocess.run(["djpeg", "-pnm", str(path)], check=True, capture_output=True).stdout
    magic, w, h, maxval, data = pnm.split(maxsplit=4)
    w, h = int(w), int(h)
    arr = np.frombuffer(data, dtype=np.uint8)
    arr = arr.reshape(h, w, 3) if magic == b"P6" else np.repeat(arr.reshape(h, w, 1), 3, axis=2)
    return np.ascontiguousarray(arr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--photos", required=True, type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent / "data" / "eval")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    preset = v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224)])
    rows = ["photo\twidth\theight\tmd5_rgb_decode\ttorch\ttorchvision"]
    for name in PHOTOS:
        rgb = djpeg_rgb(args.photos / name)
        out = preset(torch.from_numpy(rgb).permute(2, 0, 1))  # uint8 CHW: torchvision's uint8 path
        hwc = out.permute(1, 2, 0).contiguous().numpy()
        (args.out / (pathlib.Path(name).stem + ".ppm")).write_bytes(b"P6\n224 224\n255\n" + hwc.tobytes())
        # The float path, for the record: how far torchvision's own two paths are apart.
        fl = preset(torch.from_numpy(rgb).permute(2, 0, 1).float()).round().clamp(0, 255)
        gap = (fl - out.float()).abs()
        print(f"{name}: {rgb.shape[1]}x{rgb.shape[0]}; uint8 vs float path: max {gap.max():.0f}, mean {gap.mean():.4f}")
        rows.append(f"{name}\t{rgb.shape[1]}\t{rgb.shape[0]}\t{hashlib.md5(rgb.tobytes()).hexdigest()}\t"
                    f"{torch.__version__}\t{torchvision.__version__}")
    (args.out / "INDEX.tsv").write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
