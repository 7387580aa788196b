"""A Hugging Face image processor's request path, three ways, in conveyor-latency's format: from a
request's encoded images in memory to its pixel values ready for the model.

- processor: what the model card shows, `processor(images, return_tensors="pt")["pixel_values"]` on
  PIL images decoded in the request (Image.open(...).convert("RGB")), on the CPU; on a GPU machine
  the batch then copied to the GPU (pinned, non_blocking) and synchronised.
- processor-cuda: the same with the processor's `device="cuda"` (transformers' torchvision backend
  resizes and normalises on the GPU after decoding on the CPU), synchronised (GPU only).
- conveyor: `conveyor.Preprocessor(transform=processor, device="cuda")` (or the CPU without a GPU)
  on the encoded bytes, the batch on the consumer's stream, synchronised.

The processors are built offline from their defaults (no weights, no hub): ViT's (resize to
224 x 224, bilinear) and CLIP's (shortest edge 224, bicubic, centre crop). Each client thread sends
--requests requests back to back, images drawn from the first --files files:

    python3 latency_hf.py --data DIR [--processors vit,clip] [--paths processor,processor-cuda,conveyor]
                          [--sizes 1,8,32] [--clients 1] [--requests 200] [--workers 16]
"""

import io
import pathlib
import sys

import torch
import transformers
from PIL import Image

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from latency_torchvision import measure, request_arguments, request_files  # noqa: E402

PROCESSORS = {"vit": transformers.ViTImageProcessor, "clip": transformers.CLIPImageProcessor}


def processor_path(processor, cuda: bool, on_device: bool):
    def run(request):
        images = [Image.open(io.BytesIO(b)).convert("RGB") for b in request]
        if on_device:
            batch = processor(images, return_tensors="pt", device="cuda")["pixel_values"]
        else:
            batch = processor(images, return_tensors="pt")["pixel_values"]
            if cuda:
                batch = batch.pin_memory().to("cuda", non_blocking=True)
        if cuda:
            torch.cuda.current_stream().synchronize()
        return batch

    return run


def conveyor_path(processor, cuda: bool, workers: int, max_images: int):
    import conveyor
    pre = conveyor.Preprocessor(transform=processor, max_images=max_images, lanes=2, workers=workers,
                                device="cuda" if cuda else "cpu")

    def run(request):
        batch = pre(request)
        if cuda:
            torch.cuda.current_stream().synchronize()
        return batch

    return run


def main() -> None:
    p = request_arguments(__doc__, "processor,processor-cuda,conveyor")
    p.add_argument("--processors", default="vit,clip")
    p.add_argument("--workers", type=int, default=16, help="conveyor's workers a lane")
    a = p.parse_args()
    files = request_files(a.data, a.files)
    cuda = torch.cuda.is_available()
    sizes = [int(s) for s in a.sizes.split(",")]
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {len(files)} files, "
          f"cuda {'yes' if cuda else 'no'}, {torch.get_num_threads()} torch threads", flush=True)
    for name in a.processors.split(","):
        processor = PROCESSORS[name]()
        for path in a.paths.split(","):
            if path == "processor-cuda" and not cuda:
                print(f"{name} {path}: skipped, no GPU", flush=True)
                continue
            run = (conveyor_path(processor, cuda, a.workers, max(sizes)) if path == "conveyor"
                   else processor_path(processor, cuda, path == "processor-cuda"))
            for clients in (int(c) for c in a.clients.split(",")):
                for size in sizes:
                    p50, p99, worst, n, rate = measure(run, files, size, clients, a.requests, a.seed)
                    print(f"{name} {path} size {size}, clients {clients}: {n} requests, p50 {p50:.2f} ms, "
                          f"p99 {p99:.2f} ms, max {worst:.2f} ms, {rate:.0f} img/s", flush=True)


if __name__ == "__main__":
    main()
