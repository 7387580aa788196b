"""torchvision's GPU path, the peer of conveyor's `decode = gpu`: files read in the loop,
`torchvision.io.decode_jpeg(device="cuda")` on a batch of 256, then v2 RandomResizedCrop(224),
RandomHorizontalFlip and Normalize on the GPU, stacked as one bf16 NCHW batch. Timed after a
warm-up batch, synchronised at the end. Prints img/s as its last line.

    python3 torchvision_gpu_decode.py --data DIR [--batch 256] [--images 5000]
"""

import argparse
import pathlib
import time

import torch
import torchvision
from torchvision.io import ImageReadMode, decode_jpeg, read_file
from torchvision.transforms import v2


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="an image folder of JPEGs")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--images", type=int, default=5000, help="images timed (after one warm-up batch)")
    a = p.parse_args()
    files = sorted(str(f) for f in pathlib.Path(a.data).rglob("*") if f.suffix.lower() in (".jpg", ".jpeg"))
    if not files:
        raise SystemExit(f"no JPEGs under {a.data}")
    augment = v2.Compose([
        v2.RandomResizedCrop(224, antialias=True),
        v2.RandomHorizontalFlip(),
    ])
    normalize = v2.Compose([
        v2.ToDtype(torch.float32, scale=True),
        v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])

    def batch_at(start: int) -> torch.Tensor:
        names = [files[(start + i) % len(files)] for i in range(a.batch)]
        data = [read_file(n) for n in names]
        images = decode_jpeg(data, mode=ImageReadMode.RGB, device="cuda")
        out = torch.stack([augment(im) for im in images])
        return normalize(out).to(torch.bfloat16)

    batch_at(0)
    torch.cuda.synchronize()
    done, t0 = 0, time.perf_counter()
    while done < a.images:
        batch_at(a.batch + done)
        done += a.batch
    torch.cuda.synchronize()
    rate = done / (time.perf_counter() - t0)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, {len(files)} files")
    print(f"torchvision decode_jpeg(cuda) batch {a.batch} + v2 RandomResizedCrop/flip/normalize: {rate:.0f} img/s")


if __name__ == "__main__":
    main()
