#!/usr/bin/env python3
"""DINO's multi-crop augmentation (DataAugmentationDINO: two global crops at scale (0.4, 1), the
first always blurred, the second blurred now and then and solarized; local crops at (0.05, 0.4);
flips, colour jitter and grayscale in every view) feeding a ViT-S/16 student and its EMA teacher
with the DINO loss (a small projection head, centred and sharpened teacher outputs). The views are
written once as torchvision v2 Composes and given unchanged to conveyor.Loader (each image decoded
once, `conveyor.Views`) or, with --loader dataloader, to the PyTorch DataLoader (a dataset that
applies each Compose to the decoded image, as DINO's own dataset does with its transforms). DINO
resizes bicubically; conveyor resizes bilinearly with antialiasing, so both loaders do that here.

    python3 examples/python/recipe_dino.py [--loader conveyor|dataloader] [--data DIR] [--steps S]
        [--batch B] [--global-size PX] [--local-size PX] [--local-crops N] [--workers W] [--device cpu|cuda]

By default the 13 bundled photos, on the GPU where there is one for 100 steps of 32 images (2 x 224
and 8 x 96 views), and otherwise 3 steps of 4 images at 64 and 32 pixels, which shows only that the
loop runs. Prints the loss as it goes, the first and last steps' mean loss and source images/s.
"""
import argparse
import copy
import math
import os
import pathlib
import sys
import time
from typing import Iterable, List, Sequence, Tuple

import torch
import torch.nn.functional as F
import torchvision
from torchvision.transforms import v2

import conveyor

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def dino_views(global_size: int, local_size: int) -> Tuple[v2.Compose, v2.Compose, v2.Compose]:
    """DataAugmentationDINO's three pipelines: global crop 1, global crop 2, a local crop."""
    def flip_and_color_jitter() -> List[v2.Transform]:
        return [v2.RandomHorizontalFlip(0.5),
                v2.RandomApply([v2.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1)], p=0.8),
                v2.RandomGrayscale(0.2)]

    def blur(p: float) -> v2.Transform:
        return v2.RandomApply([v2.GaussianBlur(23, sigma=(0.1, 2.0))], p=p)

    normalize = [v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)]
    first = v2.Compose([v2.RandomResizedCrop(global_size, scale=(0.4, 1.0)), *flip_and_color_jitter(), blur(1.0),
                        *normalize])
    second = v2.Compose([v2.RandomResizedCrop(global_size, scale=(0.4, 1.0)), *flip_and_color_jitter(), blur(0.1),
                         v2.RandomSolarize(128, p=0.2), *normalize])
    local = v2.Compose([v2.RandomResizedCrop(local_size, scale=(0.05, 0.4)), *flip_and_color_jitter(), blur(0.5),
                        *normalize])
    return first, second, local


class MultiCrop(torch.utils.data.Dataset):  # type: ignore[type-arg]
    """An ImageFolder whose samples are the views of decode_image's uint8 tensor."""

    def __init__(self, root: str, views: Sequence[v2.Compose]):
        folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.files = [os.path.join(root, d, f) for d in folders for f in sorted(os.listdir(os.path.join(root, d)))]
        self.views = views

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int):  # type: ignore[no-untyped-def]
        image = torchvision.io.decode_image(self.files[i], mode=torchvision.io.ImageReadMode.RGB)
        return [view(image) for view in self.views], 0


class ViT(torch.nn.Module):
    """A ViT-S/16 (384 wide, 12 blocks of 6 heads) whose position embeddings are interpolated to
    each input's patch grid, as DINO's is, so global and local crops share it."""

    def __init__(self, patch: int = 16, dim: int = 384, depth: int = 12, heads: int = 6, grid: int = 14):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, dim, patch, patch)
        self.cls = torch.nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = torch.nn.Parameter(torch.randn(1, 1 + grid * grid, dim) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch(x)
        n, d, h, w = x.shape
        grid = int(math.sqrt(self.pos.shape[1] - 1))
        pos = self.pos[:, 1:].reshape(1, grid, grid, d).permute(0, 3, 1, 2)
        pos = F.interpolate(pos, size=(h, w), mode="bicubic", align_corners=False).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(n, -1, -1) + self.pos[:, :1], x.flatten(2).transpose(1, 2) + pos], 1)
        out: torch.Tensor = self.norm(self.blocks(x))
        return out[:, 0]


class Head(torch.nn.Module):
    """DINO's projection head: an MLP to a bottleneck, then a weight-normalised layer."""

    def __init__(self, dim: int = 384, out: int = 1024, hidden: int = 2048, bottleneck: int = 256):
        super().__init__()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, hidden),
                                       torch.nn.GELU(), torch.nn.Linear(hidden, bottleneck))
        self.last = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(bottleneck, out, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.last(F.normalize(self.mlp(x), dim=-1))
        return out


class DinoLoss(torch.nn.Module):
    """Cross-entropy between the teacher's centred, sharpened global views and the student's other
    views; the centre follows the teacher's outputs."""

    center: torch.Tensor

    def __init__(self, out: int, student_temp: float = 0.1, teacher_temp: float = 0.04, center_momentum: float = 0.9):
        super().__init__()
        self.register_buffer("center", torch.zeros(1, out))
        self.student_temp, self.teacher_temp, self.momentum = student_temp, teacher_temp, center_momentum

    def forward(self, student: List[torch.Tensor], teacher: List[torch.Tensor]) -> torch.Tensor:
        targets = [F.softmax((t - self.center) / self.teacher_temp, dim=-1).detach() for t in teacher]
        total, terms = torch.zeros((), device=student[0].device), 0
        for i, t in enumerate(targets):
            for j, s in enumerate(student):
                if i != j:
                    total = total + torch.sum(-t * F.log_softmax(s / self.student_temp, dim=-1), dim=-1).mean()
                    terms += 1
        with torch.no_grad():
            batch_center = torch.cat(teacher).mean(0, keepdim=True)
            self.center.mul_(self.momentum).add_(batch_center * (1 - self.momentum))
        return total / terms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loader", default="conveyor", choices=["conveyor", "dataloader"])
    ap.add_argument("--data", default=str(pathlib.Path(__file__).resolve().parents[1] / "data" / "samples"),
                    help="an ImageFolder tree (default: the bundled photos); labels are not used")
    ap.add_argument("--steps", type=int)
    ap.add_argument("--batch", type=int)
    ap.add_argument("--global-size", type=int)
    ap.add_argument("--local-size", type=int)
    ap.add_argument("--local-crops", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    device = torch.device(args.device)
    for name, gpu, cpu in (("steps", 100, 3), ("batch", 32, 4), ("global_size", 224, 64), ("local_size", 96, 32)):
        if getattr(args, name) is None:
            setattr(args, name, gpu if device.type == "cuda" else cpu)
    torch.manual_seed(0)

    first, second, local = dino_views(args.global_size, args.local_size)
    views = [first, second] + [local] * args.local_crops
    loader: Iterable[Tuple[List[torch.Tensor], torch.Tensor]]
    if args.loader == "conveyor":
        loader = conveyor.Loader(args.data, batch_size=args.batch, shuffle=True, drop_last=True, seed=0,
                                 workers=args.workers, device=device.type,  # on a GPU: the views made there
                                 transform=conveyor.Views([(first, 1), (second, 1), (local, args.local_crops)]))
    else:
        loader = torch.utils.data.DataLoader(MultiCrop(args.data, views), batch_size=args.batch, shuffle=True,
                                             drop_last=True, num_workers=args.workers)

    student = torch.nn.Sequential(ViT(), Head()).to(device)
    teacher = copy.deepcopy(student).requires_grad_(False)
    criterion = DinoLoss(1024).to(device)
    optimizer = torch.optim.AdamW(student.parameters(), lr=5e-4 * args.batch / 256, weight_decay=0.04)
    amp = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")

    losses: List[float] = []
    images_seen, epoch = 0, 0
    start = time.perf_counter()
    while len(losses) < args.steps:
        if isinstance(loader, conveyor.Loader):
            loader.set_epoch(epoch)
        for crops, _ in loader:  # 2 global views, then the local ones: [N, 3, size, size] each
            crops = [c.to(device, non_blocking=True) for c in crops]
            with amp:
                teacher_out = [teacher(c) for c in crops[:2]]
                student_out = [student(c) for c in crops]
                loss = criterion(student_out, teacher_out)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            with torch.no_grad():  # the teacher follows the student
                for t, s in zip(teacher.parameters(), student.parameters()):
                    t.mul_(0.996).add_(s.detach(), alpha=0.004)
            losses.append(loss.item())
            images_seen += crops[0].shape[0]
            if len(losses) % 10 == 0 or len(losses) == 1:
                print(f"step {len(losses)} loss {losses[-1]:.4f}", flush=True)
            if len(losses) == args.steps:
                break
        epoch += 1
    seconds = time.perf_counter() - start
    n = max(1, min(10, len(losses) // 2))
    first_loss, last_loss = sum(losses[:n]) / n, sum(losses[-n:]) / n
    print(f"{args.loader}: loss first {n} steps {first_loss:.4f}, last {n} steps {last_loss:.4f}; "
          f"{images_seen / seconds:.1f} source images/s ({2 + args.local_crops} views each, training included) "
          f"on {device}")
    # A short run shows the loop runs; a long one (the GPU default) that the loss falls.
    return 0 if args.steps < 50 or last_loss < first_loss else 1


if __name__ == "__main__":
    sys.exit(main())
