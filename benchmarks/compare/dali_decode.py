#!/usr/bin/env python3
"""GPU JPEG decoding against NVIDIA DALI's mixed decoder, in one interleaved run. The same work
per image for every row: RandomResizedCrop 224 (scale 0.08-1, ratio 3/4-4/3, ten tries),
horizontal flip p 0.5, ImageNet normalisation, 16-bit floats CHW on the GPU, batches of 256,
shuffled, --threads worker threads, --epochs epochs; every row runs once per round, --rounds
rounds in turn.

- DALI (nvidia-dali-cuda130): fn.readers.file, fn.decoders.image_random_crop(device="mixed")
  (nvJPEG, a share of each batch on the hardware JPEG engines) with hw_decoder_load at its
  default (0.65), at 0.9, and with jpeg_fancy_upsampling=True (the CPU decoder's chroma
  upsampling: the exact class); fn.resize (antialiased), fn.crop_mirror_normalize with the flip,
  to float16, as DALI has no bfloat16 output.
- conveyor: conveyor-bench --device cuda --decode auto --gpu-upsampling replicated (chroma
  replicated as nvJPEG's default is: DALI's default class) and interpolated (the exact class), and
  --decode cpu; bf16 NCHW.
- The engines alone, where bench_nvjpeg is given: batches of 256, whole images and crop windows.

Two rates a row: the whole run and the steady state (the epochs after the first, timed per
epoch). DALI's whole run starts at the pipeline's construction (build() included);
conveyor-bench's at its first iterator, after its pipeline's construction (the figure it prints
last). This process makes its CUDA context before any row, so no DALI row pays for it.

    python3 benchmarks/compare/dali_decode.py --data DIR --bench build/tools/conveyor-bench [--nvjpeg bench_nvjpeg]

Without DALI its rows say "not installed". --dali-device cpu builds each DALI pipeline with the
CPU decoder instead and runs one batch of it, timing nothing: a check where there is no GPU.
"""
import argparse
import os
import pathlib
import platform
import re
import statistics
import subprocess

import torch

from loader_rate import bench_rate
from trivial_recipe_gpu import BATCH, MEAN, STD, dali_epochs

DALI = {  # row -> the decoder's arguments
    "DALI mixed, default (hw_decoder_load 0.65)": {},
    "DALI mixed, hw_decoder_load 0.9": {"hw_decoder_load": 0.9},
    "DALI mixed, jpeg_fancy_upsampling": {"jpeg_fancy_upsampling": True},
}
CONVEYOR = {  # row -> conveyor-bench's decode flags
    "conveyor auto, replicated": ["--decode", "auto", "--gpu-upsampling", "replicated"],
    "conveyor auto, interpolated": ["--decode", "auto", "--gpu-upsampling", "interpolated"],
    "conveyor cpu": ["--decode", "cpu"],
}
RATIOS = [  # numerator row, denominator row, rate (0 whole, 1 steady): each pair of one exactness class
    ("conveyor auto, replicated", "DALI mixed, default (hw_decoder_load 0.65)", 1),
    ("conveyor auto, interpolated", "DALI mixed, jpeg_fancy_upsampling", 1),
    ("conveyor auto, replicated", "DALI mixed, default (hw_decoder_load 0.65)", 0),
]
ENGINES = {  # bench_nvjpeg's case -> what it decodes
    "engines_whole_b256_x1": "whole images, interpolated chroma",
    "engines_window_b256_x1": "crop windows, interpolated chroma",
    "engines_window_b256_no_interpolation": "crop windows, replicated chroma",
}


def dali_pipeline(data, threads, decoder, device="mixed"):
    """The pipeline's definition, its decoder on `device` given the arguments `decoder`."""
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    from nvidia.dali import pipeline_def

    gpu = device == "mixed"

    @pipeline_def(batch_size=BATCH, num_threads=threads, device_id=0 if gpu else None, seed=42)
    def train():
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="reader")
        images = fn.decoders.image_random_crop(jpegs, device=device, output_type=types.RGB,
                                               random_area=[0.08, 1.0], random_aspect_ratio=[3 / 4, 4 / 3],
                                               num_attempts=10, **decoder)
        images = fn.resize(images, resize_x=224, resize_y=224, antialias=True)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                          mean=[m * 255 for m in MEAN], std=[s * 255 for s in STD],
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, labels.gpu() if gpu else labels

    return train


def check_dali_cpu(data, threads):
    """Builds every DALI row's pipeline with the CPU decoder and runs one batch of it."""
    for name, decoder in DALI.items():
        pipe = dali_pipeline(data, threads, decoder, device="cpu")()
        pipe.build()
        images = pipe.run()[0].as_tensor()
        print(f"{name}: built on the CPU, a batch of {images.shape()} {images.dtype}", flush=True)


def conveyor_rates(command):
    """conveyor-bench's whole-run rate (its last line), its steady one and its last GPU share."""
    whole, out = bench_rate(command)
    epochs = re.findall(r"^epoch \d+: ([0-9.]+) img/s, gpu share ([0-9.]+)$", out, re.M)
    rates = [float(rate) for rate, _ in epochs]
    # Epochs of equal size: their images over their seconds is the harmonic mean of their rates.
    return whole, statistics.harmonic_mean(rates[1:] or rates), f", gpu share {epochs[-1][1]}"


def engine_rates(nvjpeg, data):
    """bench_nvjpeg's img/s for the ENGINES cases."""
    out = subprocess.run([nvjpeg, "--jpegs", data, f"--benchmark_filter=^({'|'.join(ENGINES)})/",
                          "--benchmark_min_time=0.3"], check=True, capture_output=True, text=True).stdout
    return {case: float(rate) for case, rate in re.findall(r"^(\S+)\s+([0-9.]+) img/s$", out, re.M)}


def span(values):
    lo, hi = f"{min(values):,.0f}", f"{max(values):,.0f}"
    return lo if lo == hi else f"{lo}-{hi}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="an ImageFolder of JPEGs")
    ap.add_argument("--bench", help="conveyor-bench built with CUDA, for conveyor's rows")
    ap.add_argument("--nvjpeg", help="bench_nvjpeg, for the engines alone")
    ap.add_argument("--threads", default="4,16", help="comma-separated worker/thread counts")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved repetitions of every row")
    ap.add_argument("--dali-device", default="mixed", choices=["mixed", "cpu"],
                    help="cpu: only build DALI's pipelines with the CPU decoder and run a batch of each")
    args = ap.parse_args()
    threads = [int(v) for v in args.threads.split(",")]
    try:
        import nvidia.dali
        dali = f"DALI {nvidia.dali.__version__}"
    except ImportError:
        dali = None
    if args.dali_device == "cpu":
        if not dali:
            raise SystemExit("--dali-device cpu: DALI is not installed")
        return check_dali_cpu(args.data, threads[0])
    torch.cuda.init()  # the context every DALI row would otherwise pay for in its first round
    runs = []  # (row, threads, () -> (whole, steady, note))
    for t in threads:
        for name, decoder in DALI.items() if dali else ():
            define = dali_pipeline(args.data, t, decoder)
            runs.append((name, t, lambda f=define: (*dali_epochs(f, args.epochs, BATCH), "")))
        for name, flags in CONVEYOR.items() if args.bench else ():
            command = [args.bench, "--data", args.data, "--device", "cuda", *flags, "--workers", str(t),
                       "--batch", str(BATCH), "--epochs", str(args.epochs), "--dtype", "bf16", "--layout", "nchw"]
            runs.append((name, t, lambda c=command: conveyor_rates(c)))
    rows = {}  # (row, threads) -> [(whole, steady)]
    engines = {}  # bench_nvjpeg's case -> [img/s]
    for r in range(args.rounds):
        if args.nvjpeg:
            for case, rate in engine_rates(args.nvjpeg, args.data).items():
                engines.setdefault(case, []).append(rate)
        for name, t, run in runs:
            whole, steady, note = run()
            rows.setdefault((name, t), []).append((whole, steady))
            print(f"round {r + 1}: {name}, {t} threads: whole run {whole:,.0f}, steady {steady:,.0f} img/s{note}",
                  flush=True)

    n = sum(1 for f in pathlib.Path(args.data).rglob("*") if f.suffix.lower() in (".jpg", ".jpeg"))
    print(f"\n{n} files, batch {BATCH}, {args.epochs} epochs, {args.rounds} rounds; {torch.cuda.get_device_name()}, "
          f"{os.cpu_count()} CPUs, {dali or 'DALI not installed'}, torch {torch.__version__}, "
          f"Python {platform.python_version()}")
    names = [*DALI, *(CONVEYOR if args.bench else ())]
    for t in threads:
        print(f"\n| peer, {t} threads | whole-run img/s (min-max over rounds) | steady img/s (min-max) |")
        print("|---|---|---|")
        for name in names:
            if values := rows.get((name, t)):
                print(f"| {name} | {span([w for w, _ in values])} | {span([s for _, s in values])} |")
            else:
                print(f"| {name} | not installed | not installed |")
        print(f"\n| ratio, {t} threads (medians over rounds) | value |\n|---|---|")
        for top, bottom, k in RATIOS:
            a, b = ([v[k] for v in rows.get((row, t), [])] for row in (top, bottom))
            ratio = f"{statistics.median(a) / statistics.median(b):.2f}x" if a and b else "-"
            print(f"| {('whole run', 'steady')[k]}: {top} / {bottom} | {ratio} |")
    if engines:
        print("\n| engines alone (bench_nvjpeg, batches of 256) | img/s (min-max over rounds) |\n|---|---|")
        for case, what in ENGINES.items():
            print(f"| {case}: {what} | {span(engines[case]) if case in engines else '-'} |")


if __name__ == "__main__":
    main()
