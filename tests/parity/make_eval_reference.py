#!/usr/bin/env python3
"""Records torchvision's eval preset (Resize 256 antialiased + CenterCrop 224, uint8) and
resized crops (RandomResizedCrop's operation on fixed boxes) on real photos, as the references
conveyor's resampler is tested against, bit for bit (tests/ops/test_eval_parity.cpp).

The input pixels are libjpeg-turbo's own decode (djpeg, islow, fancy upsampling: what conveyor's
decoder reproduces bit for bit), so the comparison isolates the resampling. Writes
tests/data/eval/<photo>.ppm and tests/data/eval/INDEX.tsv (photo, decoded size, MD5 of the decode),
and tests/data/eval/crops/<photo>-<k>.ppm with crops/INDEX.tsv (photo, box, output size).

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
    "skimage_rocket.jpg",             # 640x427 -> 383x256: CenterCrop's margin 159 = 3 mod 4, where
                                      # round-half-even (80) and floor (79) differ
]


def djpeg_rgb(path):
    pnm = subprocess.run(["djpeg", "-pnm", str(path)], check=True, capture_output=True).stdout
    magic, w, h, maxval, data = pnm.split(maxsplit=4)
    w, h = int(w), int(h)
    arr = np.frombuffer(data, dtype=np.uint8)
    arr = arr.reshape(h, w, 3) if magic == b"P6" else np.repeat(arr.reshape(h, w, 1), 3, axis=2)
    return np.array(arr)  # a writable copy, as torch.from_numpy wants


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

    # Resized crops: a down- and an upscaling box per photo, fixed by a seed, to odd sizes.
    crops = args.out / "crops"
    crops.mkdir(exist_ok=True)
    rng = np.random.default_rng(2026)
    rows = ["file\tphoto\tleft\ttop\twidth\theight\tout_width\tout_height"]
    for name in PHOTOS:
        chw = torch.from_numpy(djpeg_rgb(args.photos / name)).permute(2, 0, 1)
        h, w = chw.shape[1:]
        for k, (ow, oh) in enumerate([(112, 112), (61, 87)]):
            bw = int(rng.integers(ow // 2, ow + 1)) if k else int(rng.integers(min(w, ow), w + 1))
            bh = int(rng.integers(oh // 2, oh + 1)) if k else int(rng.integers(min(h, oh), h + 1))
            left, top = int(rng.integers(0, w - bw + 1)), int(rng.integers(0, h - bh + 1))
            out = v2.functional.resized_crop(chw, top, left, bh, bw, [oh, ow], antialias=True)
            file = f"{pathlib.Path(name).stem}-{k}.ppm"
            hwc = out.permute(1, 2, 0).contiguous().numpy()
            (crops / file).write_bytes(f"P6\n{ow} {oh}\n255\n".encode() + hwc.tobytes())
            rows.append(f"{file}\t{name}\t{left}\t{top}\t{bw}\t{bh}\t{ow}\t{oh}")
    (crops / "INDEX.tsv").write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
