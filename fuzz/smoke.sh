#!/usr/bin/env bash
# Fuzzes fuzz_decode for SECONDS from a seed corpus, then checks that the corpus reaches the
# paths the harness exists for. Seeds: the conformance and damaged test images
# ($CONVEYOR_TEST_DATA or ../shared/data) and the bundled photos, each behind several settings
# bytes (fuzz_decode.cpp strips the first byte as its settings), so decodable files run the
# window, scaled, DC-scan and whole-image paths. Without the test images it reports a skip.
set -euo pipefail
fuzzer=$1
seconds=$2
src=$3
data=${CONVEYOR_TEST_DATA:-$src/../shared/data}
if [ ! -d "$data/conformance" ] || [ ! -d "$data/damaged" ]; then
  echo "SKIPPED: the seed corpus (conformance and damaged test images) was not found at $data"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/seeds"
# Settings bytes: train at the DCT scale with the window (0x00), eval the same in f32 (0x21),
# train at full scale (0x04), eval of the whole image with Exif, bf16 NHWC (0xeb).
n=0
while IFS= read -r -d '' f; do
  for s in 00 21 04 eb; do
    { printf "\\x$s"; cat "$f"; } > "$work/seeds/$s-$n"
  done
  n=$((n + 1))
done < <(find "$src/examples/data/samples" "$data/conformance" "$data/damaged" -type f \
           \( -iname '*.jpg' -o -iname '*.jpeg' \) -print0)
flags=(-max_len=65536 -timeout=10 -rss_limit_mb=2048)
"$fuzzer" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/" \
  "$work/corpus" "$work/seeds" 2>&1 | tail -n 12

# Each path must be reached: a harness whose inputs stop short of one fuzzes nothing there.
"$fuzzer" "${flags[@]}" -runs=0 -print_coverage=1 "$work/corpus" "$work/seeds" > "$work/coverage.txt" 2>&1
missing=0
for fn in JpegDecoder::decode_columns JpegDecoder::decode JpegDecoder::progressive_stream drop_ac_scans \
          set_frame_height ImageAugment::scale_axis ImageAugment::decode_into ops::cpu::resample; do
  if grep -q "COVERED_FUNC: .*conveyor::v0::$fn(" "$work/coverage.txt"; then
    echo "covered: $fn"
  else
    echo "NOT covered: $fn"
    missing=1
  fi
done
[ "$missing" = 0 ] || { echo "the seed corpus does not reach every path"; grep -m 5 COVERED_FUNC "$work/coverage.txt"; exit 1; }
