"""The request paths a service would write with torchvision, the peers of `conveyor-latency`:
from a request's encoded bytes in memory to its batch ready for the model.

- pil: PIL decode, Resize(256), CenterCrop(224), ToTensor, Normalize, stacked; on a GPU machine
  pinned and copied with .to("cuda", non_blocking=True), then synchronised.
- cuda: torchvision.io.decode_jpeg(device="cuda") on the request's images, then Resize(256),
  CenterCrop(224) and Normalize on the GPU (v2 transforms), stacked, synchronised (GPU only).

Each client thread sends --requests requests of each size back to back, images drawn from the
first --files files; one line per (path, size, clients), in conveyor-latency's format:
    pil size 32, clients 1: 200 requests, p50 95.1 ms, p99 101.2 ms, max 110.0 ms, 336 img/s

    python3 latency_torchvision.py --data DIR [--paths pil,cuda] [--sizes 1,8,32] [--clients 1] [--requests 200]
"""

import argparse
import io
import pathlib
import random
import threading
import time

import torch
import torchvision
from PIL import Image
from torchvision import transforms as T


def percentile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def pil_path(cuda: bool):
    tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                    T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])

    def run(request):
        batch = torch.stack([tf(Image.open(io.BytesIO(b)).convert("RGB")) for b in request])
        if cuda:
            batch = batch.pin_memory().to("cuda", non_blocking=True).to(torch.bfloat16)
            torch.cuda.current_stream().synchronize()
        return batch

    return run


def cuda_path():
    from torchvision.io import ImageReadMode, decode_jpeg
    from torchvision.transforms import v2
    resize = v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224)])
    normalize = v2.Compose([v2.ToDtype(torch.float32, scale=True),
                            v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])

    def run(request):
        data = [torch.frombuffer(b, dtype=torch.uint8) for b in request]
        images = decode_jpeg(data, mode=ImageReadMode.RGB, device="cuda")
        batch = normalize(torch.stack([resize(im) for im in images])).to(torch.bfloat16)
        torch.cuda.current_stream().synchronize()
        return batch

    return run


def measure(run, files, size, clients, requests, seed):
    latencies = [[] for _ in range(clients)]
    errors = []

    def client(c):
        rng = random.Random(seed * 1000 + c)
        try:
            for _ in range(requests):
                request = [files[rng.randrange(len(files))] for _ in range(size)]
                t0 = time.perf_counter()
                run(request)
                latencies[c].append(time.perf_counter() - t0)
        except Exception as e:  # reported with the figures, not hidden
            errors.append(f"client {c}: {e!r}")

    for _ in range(3):  # warm-up: first allocations, CUDA context, decoder state
        run([files[i % len(files)] for i in range(size)])
    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise SystemExit("\n".join(errors))
    every = [x for v in latencies for x in v]
    return (1e3 * percentile(every, 0.5), 1e3 * percentile(every, 0.99), 1e3 * max(every), len(every),
            len(every) * size / wall)


def request_arguments(doc: str, paths: str) -> argparse.ArgumentParser:
    """The arguments every request-path comparison takes (the caller adds its own)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="a folder of JPEGs")
    p.add_argument("--paths", default=paths)
    p.add_argument("--sizes", default="1,8,32")
    p.add_argument("--clients", default="1")
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--files", type=int, default=512)
    p.add_argument("--seed", type=int, default=0)
    return p


def request_files(data: str, count: int) -> list:
    """The first `count` JPEGs under `data`, as bytes."""
    names = sorted(f for f in pathlib.Path(data).rglob("*") if f.suffix.lower() in (".jpg", ".jpeg"))[:count]
    if not names:
        raise SystemExit(f"no JPEGs under {data}")
    return [f.read_bytes() for f in names]


def main() -> None:
    p = request_arguments(__doc__, "pil,cuda")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    a = p.parse_args()
    files = request_files(a.data, a.files)
    if a.threads:
        torch.set_num_threads(a.threads)
    cuda = torch.cuda.is_available()
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, {len(files)} files, "
          f"cuda {'yes' if cuda else 'no'}, {torch.get_num_threads()} torch threads", flush=True)
    for path in a.paths.split(","):
        if path == "cuda" and not cuda:
            print("cuda: skipped, no GPU", flush=True)
            continue
        run = pil_path(cuda) if path == "pil" else cuda_path()
        for clients in (int(c) for c in a.clients.split(",")):
            for size in (int(s) for s in a.sizes.split(",")):
                p50, p99, worst, n, rate = measure(run, files, size, clients, a.requests, a.seed)
                print(f"{path} size {size}, clients {clients}: {n} requests, p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
                      f"max {worst:.2f} ms, {rate:.0f} img/s", flush=True)


if __name__ == "__main__":
    main()
