#!/usr/bin/env bash
# The whole GPU check, in one go, on a machine with a CUDA GPU: configure for the H200
# (architecture 90), build, run every gpu-labelled test, the same tests under compute-sanitizer
# (memcheck over all but the real-photo tests and the ones that inject CUDA failures, and over
# the arena test, whose photos are real, and the transform-program fuzzer's corpus; racecheck and
# synccheck over the [kernels] cases, each kernel on small inputs), conveyor-bench's CPU and
# CUDA checksums side by side (also of issue 42's recipes), throughput against the PyTorch
# DataLoader and the hardware ceilings, the recipes' cost against the plain crop,
# the libtorch example against the machine's PyTorch, the distributed example where there are two
# GPUs, and print a summary table last. Logs go to $OUT (or ./gpu-check-out).
#
#   benchmarks/gpu/run.sh [all|check|perf|distributed|profile|python|formats|decode|serve|timm|kernels]  # from the repository root; default all
#
# check: the tests, the sanitizers, the checksums, the distributed and libtorch examples, the
# Python package (built with pip into a venv that sees the machine's torch) with its tests and
# training example;
# perf: throughput, the kernel against the copy ceiling, the DataLoader and DALI comparisons (with
# the Python loader beside them), the Python loop against conveyor-bench, decoding;
# distributed: only the distributed example, on every GPU (with launch.sh, and torchrun if there);
# python (part of check): only the Python package, its tests and its training example;
# formats (part of perf): the PNG parity test on the GPU, and throughput over one set as
# JPEG files, tar shards, TFRecords and PNG files (CUDA and CPU backends);
# decode (part of perf): GPU JPEG decoding: its tests (and under compute-sanitizer), the engines'
# ceiling alone, img/s and CPU core-seconds per image for decode cpu, gpu and auto at 1, 2, 4, 8
# and 16 workers, torchvision's decode_jpeg(device="cuda") with v2 transforms beside them, and
# NVIDIA DALI's mixed decoder against decode auto and cpu in one interleaved run on the ImageNet-like,
# dense and native sets (where installed);
# timm (part of perf): the gpu-labelled tests, then timm's DeiT training pipeline (create_transform with
# auto_augment="rand-m9-mstd0.5-inc1", re_prob 0.25, bicubic), and the same with AugMix ("augmix-m3-w3"),
# from timm's own loader, the DataLoader and conveyor.Loader on the ImageNet-like set, 16 workers (timm from a wheel carried in .whl/, installed
# without its dependencies: timm.data needs only torch, torchvision and Pillow);
# serve (part of perf): the request path: its GPU tests (and under memcheck), conveyor-latency
# for requests of 1, 8 and 32 images from 1 and 32 clients, torchvision's PIL and
# decode_jpeg(device="cuda") paths beside them, Hugging Face processors (ViT's, CLIP's) against
# conveyor.Preprocessor serving them (benchmarks/compare/latency_hf.py, where check installed the
# package), and a soak of 100,000 requests;
# kernels (not part of all; about 5 minutes, for a session short of device time): the gpu-labelled
# tests, memcheck over the cases that run each kernel on small inputs ([kernels]), and the fused
# kernel's table (every filter beside the default);
# profile (not part of all): Nsight Compute counters of one fused-kernel launch per dtype, as
# RESULTS.md quotes them (time, warp instructions, issue, L2 and L1 traffic, load waits).
# check takes about 7 minutes on an H100 with 16 cores (414 s on 2026-12-06: the Python package's
# and the libtorch example's builds run beside the GPU's tests); perf 5-8 on an H200, profile
# about 2, serve about 4.
#
# Build dependencies the machine lacks (Catch2, Google Benchmark; DLPack's header and libpng where
# it has none: their Debian packages unpacked beside the others) are found through CONVEYOR_DEPS
# (default .device-deps, made by the shared device-deps tool); real test images
# through CONVEYOR_TEST_DATA (default .testdata, a copy of the test-image folder).
#
# The summary lists every step of the part asked for: pass, FAIL, or "not run" with the reason
# (no test images, one GPU, no PyTorch, no Google Benchmark). The script exits 1 when any step
# failed, 0 otherwise.
set -uo pipefail
export NCCL_NVLS_ENABLE=0  # NVLink multicast off (shared hosts)
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-check-out}
logs=$out/logs  # packed into logs.tgz at the end: few files travel back
mkdir -p "$logs"
deps=${CONVEYOR_DEPS:-$PWD/.device-deps}
export CONVEYOR_TEST_DATA=${CONVEYOR_TEST_DATA:-$PWD/.testdata}
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
build=build-gpu
part=${1:-all}
case $part in all | check | perf | distributed | profile | python | formats | decode | serve | timm | kernels) ;; *) echo "usage: $0 [all|check|perf|distributed|profile|python|formats|decode|serve|timm|kernels]" >&2; exit 2 ;; esac
want() { [ "$part" = all ] || [ "$part" = "$1" ] || { { [ "$1" = formats ] || [ "$1" = decode ] || [ "$1" = serve ] || [ "$1" = timm ]; } && [ "$part" = perf ]; }; }
declare -A result

step() {  # step NAME COMMAND...: runs, logs to $out/NAME.log, records pass/FAIL
  local name=$1
  shift
  local t0=$SECONDS
  if "$@" > "$logs/$name.log" 2>&1; then result[$name]="pass ($((SECONDS - t0)) s)"; else result[$name]="FAIL ($((SECONDS - t0)) s)"; fi
  echo "== $name: ${result[$name]}"
}
not_run() {  # not_run NAME REASON: a step that could not run here, and why
  result[$1]="not run: $2"
  echo "== $1: ${result[$1]}"
}
# CPU-bound steps (builds) run in the background while the GPU runs tests: bg_step NAME COMMAND...
# starts one, its result read back by bg_wait.
bg_step() {
  local name=$1
  shift
  ( t0=$SECONDS; if "$@" > "$logs/$name.log" 2>&1; then echo "pass ($((SECONDS - t0)) s)"; else echo "FAIL ($((SECONDS - t0)) s)"; fi \
      > "$logs/$name.result" ) &
}
bg_wait() {  # waits for the background steps, records their results
  wait
  local f name
  for f in "$logs"/*.result; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .result)
    result[$name]=$(cat "$f")
    echo "== $name: ${result[$name]}"
    rm -f "$f"
  done
}
# sanitize NAME TOOL SPEC: every test case SPEC selects, each its own compute-sanitizer process, four
# at a time on the one GPU; the case's time in the step's log; a case past 300 s fails it.
sanitize() {
  local name=$1 tool=$2 spec=$3
  local t0=$SECONDS
  "$tests" "$spec" --list-test-names-only 2> /dev/null | sed '/^$/d' > "$logs/$name.cases"
  if [ ! -s "$logs/$name.cases" ]; then result[$name]="FAIL (no case matches $spec)"; echo "== $name: ${result[$name]}"; return; fi
  tr '\n' '\0' < "$logs/$name.cases" | xargs -0 -P 4 -I{} bash -c \
    't=$SECONDS; timeout 300 compute-sanitizer --tool "$0" --error-exitcode 99 --print-limit 20 "$1" "$2" > "$3/$4.$$.log" 2>&1;
     rc=$?; echo "$rc $((SECONDS - t)) s: $2" >> "$3/$4.times"; cat "$3/$4.$$.log" >> "$3/$4.log"; rm -f "$3/$4.$$.log"' \
    "$tool" "$tests" {} "$logs" "$name"
  local bad
  bad=$(grep -c -v '^0 ' "$logs/$name.times")
  sort -k2 -n -r "$logs/$name.times" > "$logs/$name.times.sorted" && mv "$logs/$name.times.sorted" "$logs/$name.times"
  if [ "$bad" = 0 ]; then result[$name]="pass ($((SECONDS - t0)) s, $(wc -l < "$logs/$name.times") cases; longest $(head -n 1 "$logs/$name.times" | cut -d' ' -f2) s)"
  else result[$name]="FAIL ($((SECONDS - t0)) s, $bad of $(wc -l < "$logs/$name.times") cases)"; fi
  echo "== $name: ${result[$name]}"
}

{
  date -u +"date: %Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "cpus: $(nproc)"
  nvcc --version | tail -n 1
  compute-sanitizer --version 2> /dev/null | head -n 2 | tail -n 1
} | tee "$logs/machine.txt"

# libjpeg-turbo: the machine's own headers and library when it has them, else the carried ones.
jpeg=()
flags=-lineinfo
if [ -f /usr/include/jpeglib.h ]; then
  lib=$(ls /usr/lib/x86_64-linux-gnu/libjpeg.so* 2> /dev/null | head -n 1)
  jpeg=(-DJPEG_INCLUDE_DIR=/usr/include -DJPEG_LIBRARY="$lib")
else
  jpeg=(-DJPEG_INCLUDE_DIR="$deps/usr/include" -DJPEG_LIBRARY="$deps/usr/lib/x86_64-linux-gnu/libjpeg.so")
  export CPATH="$deps/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
fi
# libpng the same way (the carried libpng-dev and libpng16-16).
if [ ! -f /usr/include/png.h ]; then
  jpeg+=(-DPNG_PNG_INCLUDE_DIR="$deps/usr/include" -DPNG_LIBRARY="$deps/usr/lib/x86_64-linux-gnu/libpng16.so")
  export LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
fi
step configure cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCONVEYOR_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH="$deps/usr" -DCMAKE_CUDA_FLAGS="$flags" "${jpeg[@]}"
[ "${result[configure]}" = "${result[configure]#pass}" ] && tail -n 30 "$logs/configure.log"
targets=()
[ "$part" = check ] && targets=(--target conveyor_cuda_tests conveyor_tests conveyor-bench conveyor-make-dataset
                                 conveyor-distributed)
[ "$part" = distributed ] && targets=(--target conveyor-distributed conveyor-make-dataset)
[ "$part" = profile ] && targets=(--target bench_pipeline)
[ "$part" = kernels ] && targets=(--target conveyor_cuda_tests conveyor-distributed bench_pipeline)
[ "$part" = python ] && targets=(--target conveyor-bench conveyor-make-dataset)
[ "$part" = formats ] && targets=(--target conveyor_cuda_tests conveyor-bench conveyor-make-dataset conveyor-pack)
[ "$part" = decode ] && targets=(--target conveyor_cuda_tests conveyor-bench conveyor-make-dataset bench_nvjpeg)
[ "$part" = serve ] && targets=(--target conveyor_cuda_tests conveyor-latency conveyor-make-dataset)
[ "$part" = timm ] && targets=(--target conveyor_cuda_tests conveyor-distributed conveyor-make-dataset)
step build cmake --build $build -j "$(nproc)" "${targets[@]}"
[ "${result[build]}" = "${result[build]#pass}" ] && grep -m 20 -B 2 -A 6 "error" "$logs/build.log"
bench=$build/tools/conveyor-bench
# ImageNet-like sets cut from the test photos: 100 classes for throughput, 10 for training.
inet=/tmp/conveyor-imagenet-like
inet10=/tmp/conveyor-10-classes
if [ "$part" != profile ] && [ "$part" != kernels ]; then
  if [ -d "$CONVEYOR_TEST_DATA/photos" ]; then
    [ -d "$inet" ] || step make_dataset "$build/tools/conveyor-make-dataset" --photos "$CONVEYOR_TEST_DATA/photos" \
      --out "$inet" --count 5000 --classes 100 --seed 1
    [ -d "$inet10" ] || [ "$part" = formats ] || [ "$part" = decode ] || [ "$part" = serve ] || [ "$part" = timm ] || "$build/tools/conveyor-make-dataset" --photos "$CONVEYOR_TEST_DATA/photos" --out "$inet10" \
      --count 5000 --classes 10 --seed 2 > /dev/null
  else
    not_run make_dataset "no test photos at $CONVEYOR_TEST_DATA/photos: no throughput, training or distributed runs"
  fi
fi
torch_prefix=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2> /dev/null)
# The Python package, installed into the machine's python3 (a disposable environment that holds
# torch, nanobind and scikit-build-core), once per machine by check or perf, whichever runs
# first; DLPack's header from CONVEYOR_DEPS.
python=
python_wanted=
if [ "$part" != distributed ] && [ "$part" != profile ] && [ "$part" != formats ] && [ "$part" != decode ] &&
   [ "$part" != serve ] && [ "$part" != kernels ]; then
  python_wanted=1
  if ! python3 -c 'import conveyor._conveyor' 2> /dev/null; then
    # check builds it beside the GPU's tests; the other parts need it first
    # the libjpeg and libpng the main build found: the carried libjpeg's library beside the machine's
    # header (found through the prefix) fails the package's version check
    install=(env CMAKE_PREFIX_PATH="$deps/usr" python3 -m pip install --no-build-isolation --no-index --no-deps .
             --config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES=90)
    for define in "${jpeg[@]}"; do install+=("--config-settings=cmake.define.${define#-D}"); done
    if [ "$part" = check ] || [ "$part" = all ] || [ "$part" = timm ]; then bg_step python_install "${install[@]}"; else step python_install "${install[@]}"; fi
  fi
fi
py=python3
# The libtorch example against this machine's PyTorch, built beside the GPU's tests too.
if want check && [ -n "$torch_prefix" ]; then
  bg_step torch_build bash -c "cmake -S . -B build-torch -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCONVEYOR_ENABLE_CUDA=ON -DCONVEYOR_BUILD_TESTS=OFF -DCONVEYOR_BUILD_BENCHMARKS=OFF \
    -DCONVEYOR_BUILD_TOOLS=OFF -DCMAKE_PREFIX_PATH='$deps/usr;$torch_prefix' ${jpeg[*]} &&
    cmake --build build-torch -j 8 --target conveyor-libtorch-train"
fi

if [ "$part" = kernels ]; then
  step gpu_tests ctest --test-dir $build -L gpu --no-tests=error --output-on-failure -j 1
  tests=$build/tests/cuda/conveyor_cuda_tests
  sanitize sanitize_memcheck memcheck "[kernels]"
  step bench_pipeline "$build/benchmarks/bench_pipeline" --data examples/data/samples --benchmark_filter='^kernel'
fi

if [ "$part" = timm ]; then
  step gpu_tests ctest --test-dir $build -L gpu --no-tests=error --output-on-failure -j 1
fi

if want check; then
step gpu_tests ctest --test-dir $build -L gpu --no-tests=error --output-on-failure -j 1
# The Catch cases of the CPU suite with this machine's compiler (CI runs the whole label).
step cpu_tests ctest --test-dir $build -L cpu-unit --no-tests=error --output-on-failure -j 8

tests=$build/tests/cuda/conveyor_cuda_tests
# memcheck over every GPU test (the real-photo ones and the fault injections aside), the arena's
# under failed decodes (real photos) and the transform-program fuzzer's corpus through the kernels
# ([fuzz]); racecheck and synccheck, whose cost is the kernels' shared memory and barriers, over
# the cases that run each kernel on small inputs ([kernels]: the fused resample, the pixel program
# with GaussianBlur's tiles, the batch mix, the JPEG engines' step).
sanitize sanitize_memcheck memcheck "~[data]~[injected]"
sanitize sanitize_memcheck_arena memcheck "[arena]"
sanitize sanitize_racecheck racecheck "[kernels]"
sanitize sanitize_synccheck synccheck "[kernels]"

# The recipes' pixel programs (GaussianBlur's tiles among them) on both backends, bf16.
for recipe in trivial color; do
  data=$CONVEYOR_TEST_DATA/imagefolder
  [ -d "$data" ] || { not_run "checksum_recipe_$recipe" "no folder $data"; continue; }
  for device in cpu cuda; do
    "$bench" --data "$data" --device "$device" --batch 5 --epochs 2 --dtype bf16 --checksum --workers 4 \
      --recipe "$recipe" | grep '^checksum' > "$logs/checksum_${device}_recipe_$recipe.txt"
  done
  if [ -s "$logs/checksum_cpu_recipe_$recipe.txt" ] &&
     cmp -s "$logs/checksum_cpu_recipe_$recipe.txt" "$logs/checksum_cuda_recipe_$recipe.txt"; then
    result[checksum_recipe_$recipe]="pass ($(wc -l < "$logs/checksum_cpu_recipe_$recipe.txt") batches equal)"
  else
    result[checksum_recipe_$recipe]="FAIL"
  fi
done
for data in examples/data/samples "$CONVEYOR_TEST_DATA/imagefolder"; do
  name=$(basename "$data")
  if [ ! -d "$data" ]; then
    not_run "checksum_$name" "no folder $data"
    continue
  fi
  for dtype in f32 bf16 u8; do
    "$bench" --data "$data" --device cpu --batch 5 --epochs 2 --dtype "$dtype" --checksum --workers 4 \
      | grep '^checksum' > "$logs/checksum_cpu_${name}_$dtype.txt"
    "$bench" --data "$data" --device cuda --batch 5 --epochs 2 --dtype "$dtype" --checksum --workers 4 \
      | grep '^checksum' > "$logs/checksum_cuda_${name}_$dtype.txt"
    if [ -s "$logs/checksum_cpu_${name}_$dtype.txt" ] && \
       cmp -s "$logs/checksum_cpu_${name}_$dtype.txt" "$logs/checksum_cuda_${name}_$dtype.txt"; then
      result[checksum_${name}_$dtype]="pass ($(wc -l < "$logs/checksum_cpu_${name}_$dtype.txt") batches equal)"
    else
      result[checksum_${name}_$dtype]="FAIL"
    fi
  done
done
fi  # check

# Data-parallel: one process per GPU, NCCL checks each epoch is the dataset exactly once plus
# padding (needs two GPUs).
gpus=$(nvidia-smi -L | wc -l)
if (want check || [ "$part" = distributed ]) && { [ ! -d "$inet" ] || [ "$gpus" -lt 2 ]; }; then
  not_run distributed "$([ "$gpus" -lt 2 ] && echo "$gpus GPU: the example needs two or more" || echo "no ImageNet-like set")"
elif want check || [ "$part" = distributed ]; then
  step distributed examples/distributed/launch.sh "$gpus" "$build/examples/distributed/conveyor-distributed" \
    --data "$inet" --epochs 3 --batch 256 --workers 8
  if command -v torchrun > /dev/null; then
    # 13 photos over 2 ranks: one index padded per epoch.
    step distributed_torchrun torchrun --standalone --nproc-per-node="$gpus" --no-python \
      "$build/examples/distributed/conveyor-distributed" --data examples/data/samples --epochs 3 --batch 4 --workers 2
  fi
fi

bg_wait  # the Python package's and the libtorch example's builds
[ -n "$python_wanted" ] && python3 -c 'import conveyor' 2> /dev/null && python=python3
# timm (its tests' GPU cases, the timm comparison) from a wheel carried in .whl/, without its
# dependencies: timm.data needs only torch, torchvision and Pillow.
timm_wheel=$(ls .whl/timm-*.whl 2> /dev/null | head -n 1)
if [ -n "$python" ] && [ -n "$timm_wheel" ] && ! "$py" -c 'import timm.data' 2> /dev/null; then
  "$py" -m pip install -q --no-index --no-deps "$timm_wheel" > "$logs/timm_install.log" 2>&1
fi
if { want check || [ "$part" = python ]; } && [ -z "$python" ]; then
  not_run python_tests "the Python package did not install (python_install)"
elif want check || [ "$part" = python ]; then
  # Whether the package linked the toolkit's static nvJPEG (else its GPU decoding tests skip).
  result[python_gpu_decoding]=$("$py" -c 'import conveyor; print(conveyor.has_gpu_decoding())' 2>&1 | tail -n 1)
  step python_tests env CONVEYOR_BENCH="$PWD/$bench" "$py" -m pytest -q -p no:cacheprovider -rs tests/python
  if [ -d "$inet10" ]; then
    step python_train "$py" examples/python/train.py --data "$inet10" --steps 300 --batch 128 --size 224 --workers 16
  else
    not_run python_train "no 10-class set"
  fi
fi

# timm's DeiT pipeline: its loader, the DataLoader and conveyor, 16 workers, 2 epochs of the 5,000 files.
if want timm && [ -z "$python" ]; then
  not_run compare_timm "the Python package did not install (python_install)"
elif want timm && [ ! -d "$inet" ]; then
  not_run compare_timm "no ImageNet-like set"
elif want timm && ! "$py" -c 'import timm.data' 2> /dev/null; then
  not_run compare_timm "no timm on the machine nor a wheel in .whl/ (pip download timm --no-deps -d .whl)"
elif want timm; then
  step compare_timm env PYTHONUNBUFFERED=1 "$py" benchmarks/compare/timm_vs_conveyor.py --data "$inet" --device cuda \
    --workers 16 --epochs 2
  step compare_timm_augmix env PYTHONUNBUFFERED=1 "$py" benchmarks/compare/timm_vs_conveyor.py --data "$inet" \
    --device cuda --workers 16 --epochs 2 --auto-augment augmix-m3-w3
fi

if want check && { [ ! -d "$inet10" ] || [ -z "$torch_prefix" ]; }; then
  not_run libtorch_train "$([ -z "$torch_prefix" ] && echo "PyTorch not found by python3" || echo "no 10-class set")"
elif want check; then
  # The libtorch example against this machine's PyTorch (built above): a ResNet-18 on the 10-class set.
  step libtorch_train build-torch/examples/libtorch_train/conveyor-libtorch-train --data "$inet10" --steps 300 \
    --batch 128 --size 224 --width 64 --workers 16 --csv "$out/libtorch_loss.csv"
  python3 benchmarks/compare/svg_plot.py --out "$out/libtorch_loss.svg" --csv "$out/libtorch_loss.csv" --every 10 \
    --title "ResNet-18 on 10 classes, fed by conveyor on one $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
fi

# Throughput on the ImageNet-like set (RandomResizedCrop 224, flip, normalize, bf16 NCHW,
# batch 256), timed from the iterator's creation over 2 epochs.
if want perf && [ ! -d "$inet" ]; then
  not_run perf "no ImageNet-like set"
elif want perf; then
  for run in "cuda 1 on" "cuda 4 on" "cuda 8 on" "cuda 16 on" "cuda 16 off" "cpu 16 on"; do
    set -- $run
    name=throughput_$1_$(printf %02d "$2")_roi_$3
    if "$bench" --data "$inet" --device "$1" --workers "$2" --batch 256 --epochs 2 --dtype bf16 \
      --roi "$3" --decode-scaling "$([ "$3" = on ] && echo auto || echo off)" > "$logs/$name.log" 2>&1; then
      result[$name]="$(tail -n 1 "$logs/$name.log")"
    else
      result[$name]="FAIL: $(tail -n 1 "$logs/$name.log")"
    fi
  done
  # Issue 42's recipes after the crop and flip (conveyor-bench --recipe: plain, trivial =
  # TrivialAugmentWide + RandomErasing, color = that + ColorJitter, RandomGrayscale, GaussianBlur 23,
  # RandomSolarize), decode auto, 16 workers, 3 epochs, interleaved 3 times; with the pixel-program
  # kernel's device time a batch.
  for rep in 1 2 3; do
    for recipe in plain trivial color; do
      name=recipe_${recipe}_$rep
      if "$bench" --data "$inet" --device cuda --decode auto --workers 16 --batch 256 --epochs 3 --dtype bf16 \
        --recipe "$recipe" --stats-json "$logs/$name.json" > "$logs/$name.log" 2>&1; then
        kernel=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(round(1e6 * d["kernel_seconds"] / max(d["batches"], 1)))' \
          "$logs/$name.json" 2> /dev/null)
        result[$name]="$(tail -n 1 "$logs/$name.log"), kernel ${kernel:-?} us a batch"
      else
        result[$name]="FAIL: $(tail -n 1 "$logs/$name.log")"
      fi
    done
  done
  # The kernel against the copy ceiling, the seeds' serial loop, and a consumer with GPU work;
  # one core's decode: whole image, crop window, window at the DCT scale; wrapper cost; the
  # type-erased pipeline against the typed one.
  for b in bench_pipeline bench_decode bench_any; do
    [ -x "$build/benchmarks/$b" ] || not_run "$b" "not built (Google Benchmark not found)"
  done
  [ -x "$build/benchmarks/bench_pipeline" ] && step bench_pipeline "$build/benchmarks/bench_pipeline" --data "$inet"
  [ -x "$build/benchmarks/bench_decode" ] &&
    step bench_decode "$build/benchmarks/bench_decode" --imagenet "$inet" --photos "$CONVEYOR_TEST_DATA/photos"
  [ -x "$build/benchmarks/bench_any" ] && step bench_any "$build/benchmarks/bench_any" --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true
  if [ -z "$torch_prefix" ]; then
    not_run compare "PyTorch not found by python3"
  else
    # The PyTorch DataLoader against conveyor, on the same set, at the same worker counts; and the
    # DALI comparison's shape (f32, batch 64, 16 threads; DALI itself where it is installed).
    step compare env PYTHONUNBUFFERED=1 "$py" benchmarks/compare/dataloader_vs_conveyor.py --data "$inet" \
      --bench "$bench" --svg "$out/throughput.svg"
    step compare_dali env PYTHONUNBUFFERED=1 "$py" benchmarks/compare/dali_vs_conveyor.py --data "$inet" \
      --bench "$bench" --device cuda --threads 16
    if [ -z "$python" ]; then
      not_run python_vs_bench "the Python package did not install (python_install)"
    else
      step python_vs_bench env PYTHONUNBUFFERED=1 "$py" benchmarks/compare/python_vs_bench.py --data "$inet" \
        --bench "$bench" --device cuda --workers 1,16
    fi
  fi
fi

# One set four ways: the ImageNet-like JPEGs as files, as 1,000-sample tar shards and TFRecords
# (conveyor-pack, shuffled; read with a 4-shard window) and re-encoded as PNG files (2,000 of them:
# the same pixels), through the CUDA backend and, for PNG, the CPU backend; the PNG parity test first.
if want formats && [ ! -d "$inet" ]; then
  not_run formats "no ImageNet-like set"
elif want formats; then
  tests=$build/tests/cuda/conveyor_cuda_tests
  step formats_gpu_png "$tests" "[png]"
  png=/tmp/conveyor-imagenet-like-png
  [ -d "$png" ] || step make_png_dataset "$build/tools/conveyor-make-dataset" --photos "$CONVEYOR_TEST_DATA/photos" \
    --out "$png" --count 2000 --classes 100 --seed 1 --png
  [ -d /tmp/conveyor-wds ] || step pack_wds "$build/tools/conveyor-pack" --data "$inet" --out /tmp/conveyor-wds/train --shuffle 1 \
    --shard-size 1000
  [ -d /tmp/conveyor-tfr ] || step pack_tfrecord "$build/tools/conveyor-pack" --data "$inet" \
    --out /tmp/conveyor-tfr/train --shuffle 1 --shard-size 1000 --format tfrecord
  for run in "jpeg_files cuda $inet" "wds cuda /tmp/conveyor-wds/train-{000000..000004}.tar" \
             "tfrecord cuda /tmp/conveyor-tfr/train-{00000..00004}-of-00005" "png_files cuda $png" "png_files cpu $png"; do
    set -- $run
    name=format_$1_$2
    extra=()
    [ "$1" = wds ] || [ "$1" = tfrecord ] && extra=(--format "$1" --shard-window 4)
    if "$bench" --data "$3" "${extra[@]}" --device "$2" --workers 16 --batch 256 --epochs 2 --dtype bf16 \
      > "$logs/$name.log" 2>&1; then
      result[$name]="$(grep -m 1 -i 'opened\|shards' "$logs/$name.log" | head -c 120) $(tail -n 1 "$logs/$name.log")"
    else
      result[$name]="FAIL: $(tail -n 1 "$logs/$name.log")"
    fi
  done
  # webdataset under the DataLoader against conveyor on 250-sample shards (one per worker at least).
  if ! python3 -c 'import webdataset' 2> /dev/null; then
    not_run compare_webdataset "webdataset not installed (pip install webdataset)"
  else
    [ -d /tmp/conveyor-wds-250 ] || "$build/tools/conveyor-pack" --data "$inet" --out /tmp/conveyor-wds-250/train \
      --shuffle 1 --shard-size 250 > /dev/null 2>&1
    step compare_webdataset env PYTHONUNBUFFERED=1 python3 benchmarks/compare/webdataset_vs_conveyor.py \
      --shards "/tmp/conveyor-wds-250/train-{000000..000019}.tar" --bench "$bench" --device cuda --workers 4,16
  fi
fi

# GPU JPEG decoding: the tests, a check for nvJPEG's stall, the engines alone, then the curve
# (below), torchvision's GPU path and DALI's, and the tests again under the sanitizers (without the
# photo test). The curve: img/s and CPU core-seconds per image (user + system time of the whole
# process over its images) for decode cpu, gpu and auto at each worker count (gpu and auto also with
# replicated chroma upsampling), bf16 NCHW, batch 256, 3 epochs, prefetch 6 (the slots GPU decoding
# wants; README), with the share of the wall time the stager thread spent submitting (it waits in
# the engines' call).
if want decode && [ ! -d "$inet" ]; then
  not_run decode "no ImageNet-like set"
elif want decode; then
  tests=$build/tests/cuda/conveyor_cuda_tests
  step decode_tests "$tests" "[nvjpeg]"
  # The stall nvJPEG showed when its state was re-initialised too soon (about one call in 700,
  # RESULTS.md 2026-12-04): 12 runs of 100 calls of varying size, each given 30 s for its second.
  finished=0
  for i in $(seq 12); do
    timeout 30 "$bench" --data "$inet" --device cuda --workers 16 --batch 256 --epochs 5 --dtype bf16 --decode gpu \
      --gpu-share 0.6 --gpu-upsampling replicated --prefetch $((i % 2 ? 6 : 3)) > "$logs/decode_stall_$i.log" 2>&1 &&
      finished=$((finished + 1))
  done
  result[decode_stall_check]="$([ $finished = 12 ] && echo pass || echo FAIL): $finished of 12 runs finished"
  echo "== decode_stall_check: ${result[decode_stall_check]}"
  if [ -x "$build/benchmarks/bench_nvjpeg" ]; then
    step bench_nvjpeg "$build/benchmarks/bench_nvjpeg" --jpegs "$inet" --benchmark_min_time=0.3
  else
    not_run bench_nvjpeg "not built (no nvJPEG or no Google Benchmark)"
  fi
  # img/s is over the whole run, the first epoch at auto's starting share included; "last epoch"
  # is the last epoch alone, at the share auto settled on.
  echo "| decode | workers | img/s | core-s/img | device share | stager busy | last epoch img/s |" > "$out/decode_curve.md"
  echo "|---|---|---|---|---|---|---|" >> "$out/decode_curve.md"
  for mode in cpu gpu auto gpu-replicated auto-replicated; do
    decode=${mode%-replicated}
    upsampling=$([ "$decode" = "$mode" ] && echo interpolated || echo replicated)
    for w in 1 2 4 8 16; do
      name=decode_${mode}_$(printf %02d "$w")
      if (TIMEFORMAT="cpu %U %S"; time "$bench" --data "$inet" --device cuda --workers "$w" --batch 256 --epochs 3 \
        --prefetch 6 --dtype bf16 --decode "$decode" --gpu-upsampling "$upsampling" --stats-json "$logs/$name.json") > "$logs/$name.log" 2>&1; then
        rate=$(python3 -c "import json; s=json.load(open('$logs/$name.json')); print(f\"{s['images_per_second']:.0f} {s['images']} {s['gpu_share']:.3f} {100 * s['submit_seconds'] / s['elapsed_seconds']:.0f}%\")")
        set -- $rate
        core=$(awk -v n="$2" '/^cpu /{printf "%.6f", ($2 + $3) / n}' "$logs/$name.log")
        last=$(awk '/^epoch [0-9]+: /{v = $3} END {printf "%.0f", v}' "$logs/$name.log")
        result[$name]="$1 img/s, $core core-s/img, share $3, stager busy $4, last epoch $last img/s"
        echo "| $mode | $w | $1 | $core | $3 | $4 | $last |" >> "$out/decode_curve.md"
      else
        result[$name]="FAIL: $(tail -n 1 "$logs/$name.log")"
      fi
    done
  done
  # The curve as the README's chart (docs/decode_curve.svg is this file, copied).
  series=()
  for mode in cpu gpu auto gpu-replicated auto-replicated; do
    values=$(awk -F'|' -v d="$mode" '{ gsub(/ /, "") } $2 == d { v = v (v ? "," : "") (d ~ /^auto/ ? $8 : $4) } END { print v }' "$out/decode_curve.md")
    [ "$(tr -cd , <<< "$values" | wc -c)" = 4 ] && series+=(--series "decode $mode$([[ $mode = auto* ]] && echo ', last epoch')=$values")
  done
  [ ${#series[@]} -gt 0 ] && python3 benchmarks/compare/svg_plot.py --out "$out/decode_curve.svg" --workers 1,2,4,8,16 \
    --title "GPU JPEG decoding: RandomResizedCrop 224 + flip + normalize, one H200" "${series[@]}"
  if [ -z "$torch_prefix" ]; then
    not_run torchvision_gpu_decode "PyTorch not found by python3"
  else
    step torchvision_gpu_decode env PYTHONUNBUFFERED=1 "$py" benchmarks/compare/torchvision_gpu_decode.py --data "$inet"
    result[torchvision_gpu_decode]="${result[torchvision_gpu_decode]} $(tail -n 1 "$logs/torchvision_gpu_decode.log")"
  fi
  # DALI's mixed decoder (hw_decoder_load 0.65 and 0.9, jpeg_fancy_upsampling) against decode auto
  # (replicated and interpolated chroma) and cpu, 4 and 16 threads, 5 epochs, 2 rounds interleaved,
  # the engines alone in each round; DALI's rows say "not installed" where it is not
  # (benchmarks/README.md: how its wheel reaches this machine). On three sets: the ImageNet-like
  # one, --dense and --native (their bits per pixel head each log), since denser files cost both
  # decoders more.
  if [ -z "$torch_prefix" ]; then
    not_run compare_dali_decode "PyTorch not found by python3"
  else
    nvjpeg=()
    [ -x "$build/benchmarks/bench_nvjpeg" ] && nvjpeg=(--nvjpeg "$build/benchmarks/bench_nvjpeg")
    for spec in "imagenet-like $inet" "dense /tmp/conveyor-dense" "native /tmp/conveyor-native"; do
      set -- $spec
      made=$logs/make_dataset$([ "$1" = imagenet-like ] || echo "_$1").log  # the set's size and bits per pixel
      [ -d "$2" ] || "$build/tools/conveyor-make-dataset" --photos "$CONVEYOR_TEST_DATA/photos" --out "$2" \
        --count 5000 --classes 100 --seed 1 "--$1" > "$made" 2>&1
      step "compare_dali_decode_$1" sh -c "grep -h 'bits per pixel' '$made' 2> /dev/null; PYTHONUNBUFFERED=1 '$py' \
        benchmarks/compare/dali_decode.py --data '$2' --bench '$bench' ${nvjpeg[*]}"
    done
  fi
  # racecheck instruments conveyor's kernels only: over nvJPEG's own it takes more than 100 s a
  # test case (measured on the H200), and those are not ours to fix.
  for tool in memcheck racecheck synccheck; do
    only=()
    [ "$tool" = racecheck ] && only=(--kernel-name kns=conveyor)
    step "decode_sanitize_$tool" timeout "${CONVEYOR_SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" "${only[@]}" \
      --error-exitcode 99 --print-limit 20 "$tests" "[nvjpeg]~[data]"
  done
fi

# The request path: its tests, latency from bytes in memory to the batch ready on the consumer's
# stream (eval preset, bf16), one lane of 14 workers for one client and 16 lanes of one worker for
# 32 (the best of the lanes x workers sweep in RESULTS.md), torchvision's two paths on the same
# files, and the soak.
if want serve && [ ! -d "$inet" ]; then
  not_run serve "no ImageNet-like set"
elif want serve; then
  tests=$build/tests/cuda/conveyor_cuda_tests
  latency=$build/tools/conveyor-latency
  step serve_tests "$tests" "[serve]"
  step serve_sanitize_memcheck timeout "${CONVEYOR_SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool memcheck \
    --error-exitcode 99 --print-limit 20 "$tests" "[serve]"
  step latency_1_client "$latency" --data "$inet" --device cuda --workers 14 --lanes 1 --sizes 1,8,32 --clients 1 --requests 200
  step latency_32_clients "$latency" --data "$inet" --device cuda --workers 1 --lanes 16 --sizes 1,8,32 --clients 32 --requests 50
  if [ -z "$torch_prefix" ]; then
    not_run latency_torchvision "PyTorch not found by python3"
  else
    step latency_torchvision env PYTHONUNBUFFERED=1 python3 -W ignore benchmarks/compare/latency_torchvision.py \
      --data "$inet" --paths cuda,pil --sizes 1,8,32 --clients 1 --requests 100
  fi
  # Hugging Face processors' request path (ViT's, CLIP's): the processor on the CPU and with
  # device="cuda", against conveyor.Preprocessor(transform=processor), where the package and
  # transformers are installed (transformers from wheels carried in .whl/hf where the machine has none)
  if ! python3 -c 'import transformers' 2> /dev/null && ls .whl/hf/transformers-*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --find-links .whl/hf transformers > "$logs/hf_install.log" 2>&1
  fi
  if ! python3 -c 'import conveyor, transformers' 2> /dev/null; then
    not_run latency_hf "the Python package (check installs it) or transformers is not installed"
  else
    step latency_hf env PYTHONUNBUFFERED=1 python3 -W ignore benchmarks/compare/latency_hf.py --data "$inet" \
      --sizes 1,8,32 --clients 1 --requests 100 --workers 14
  fi
  step soak "$latency" --data "$inet" --device cuda --workers 2 --lanes 8 --sizes 8 --clients 32 --soak 100000
  for s in latency_1_client latency_32_clients latency_torchvision latency_hf soak; do
    [ -f "$logs/$s.log" ] && result[$s]="${result[$s]} $(tail -n 1 "$logs/$s.log")"
  done
fi

# Nsight Compute on one launch of the fused kernel per dtype (the benchmark's synthetic windows),
# at the GPU's own clocks, so the times stay comparable with the benchmark's.
if [ "$part" = profile ]; then
  metrics=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
  metrics+=,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum
  metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
  metrics+=,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
  for kernel in bf16/nchw u8/nchw f32/nhwc; do
    name=profile_${kernel/\//_}
    ncu --clock-control none -k regex:augment_batch -c 1 --metrics "$metrics" "$build/benchmarks/bench_pipeline" \
      --data examples/data/samples --benchmark_filter="^kernel/$kernel/" --benchmark_min_time=0.02 > "$logs/$name.log" 2>&1
    result[$name]=$(grep -E '^ +(gpu|smsp|lts|l1tex)__' "$logs/$name.log" | awk '{printf "%s %s; ", $1, $NF}')
    [ -n "${result[$name]}" ] || result[$name]=FAIL
  done
fi

{
  echo
  cat "$logs/machine.txt"
  echo
  echo "| check | result |"
  echo "|---|---|"
  for k in $(printf '%s\n' "${!result[@]}" | sort); do echo "| $k | ${result[$k]} |"; done
  echo
  grep -h "ERROR SUMMARY" "$logs"/sanitize_*.log 2> /dev/null | sed 's/^/sanitizer: /'
  grep -h "tests passed" "$logs/gpu_tests.log" "$logs/cpu_tests.log" 2> /dev/null
  echo
  tail -n 1 "$logs/make_dataset.log" "$logs/make_png_dataset.log" 2> /dev/null
  (cd "$logs" && grep -H -E '^(read|decode) ' format_*.log 2> /dev/null)
  tail -n 14 "$logs/throughput_cuda_16_roi_on.log" 2> /dev/null
  echo
  grep -A 8 '^| set' "$logs/bench_decode.log" 2> /dev/null
  echo
  grep -A 8 '^| workers' "$logs/compare.log" 2> /dev/null
  echo
  grep -A 4 '^| workers' "$logs/python_vs_bench.log" 2> /dev/null
  grep -h -A 3 '^| timm train' "$logs/compare_timm.log" "$logs/compare_timm_augmix.log" 2> /dev/null
  tail -n 3 "$logs/python_tests.log" 2> /dev/null
  grep -E '^loss|img/s' "$logs/python_train.log" 2> /dev/null
  echo
  grep -A 4 '^| threads' "$logs/compare_dali.log" 2> /dev/null
  grep -A 4 '^| workers' "$logs/compare_webdataset.log" 2> /dev/null
  tail -n 1 "$logs/compare_dali.log" 2> /dev/null
  echo
  grep -E '^(typed|erased)_[a-z]+/real_time_median' "$logs/bench_any.log" 2> /dev/null
  echo
  sed -n '/^| kernel/,$p' "$logs/bench_pipeline.log" 2> /dev/null
  cat "$out/decode_curve.md" 2> /dev/null
  grep -E 'img/s$' "$logs/bench_nvjpeg.log" 2> /dev/null
  grep -h 'jpeg (device)' "$logs"/decode_*.log 2> /dev/null | head -n 3
  for set in imagenet-like dense native; do
    grep -h -e 'bits per pixel' -e '^|' "$logs/compare_dali_decode_$set.log" 2> /dev/null
  done
  echo
  cat "$logs"/latency_*.log 2> /dev/null | grep -E 'size [0-9]+, clients'
  cat "$logs/soak.log" 2> /dev/null
  echo
  grep -hE '^epoch|^distributed' "$logs"/distributed*.log 2> /dev/null
  grep -E '^loss|img/s|^h2d|^kernel' "$logs/libtorch_train.log" 2> /dev/null
} | tee "$out/summary.md"
tar czf "$out/logs.tgz" -C "$logs" . && rm -rf "$logs"
failed=$(for k in "${!result[@]}"; do case ${result[$k]} in FAIL*) echo "$k" ;; esac; done | sort | tr '\n' ' ')
if [ -n "$failed" ]; then
  echo "run.sh: FAILED: $failed"
  exit 1
fi
echo "run.sh: every step that ran passed"
