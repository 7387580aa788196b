#!/usr/bin/env bash
# Fuzzes fuzz_decode for SECONDS from a seed corpus: the conformance and damaged test images when
# they are there ($CONVEYOR_TEST_DATA or ../shared/data), the bundled photos always.
set -euo pipefail
fuzzer=$1
seconds=$2
src=$3
data=${CONVEYOR_TEST_DATA:-$src/../shared/data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/seeds"
find "$src/examples/data/samples" -type f -exec cp {} "$work/seeds/" \;
for d in conformance damaged; do
  [ -d "$data/$d" ] && find "$data/$d" -type f \( -iname '*.jpg' -o -iname '*.jpeg' \) -exec cp {} "$work/seeds/" \;
done
"$fuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work/corpus" "$work/seeds" 2>&1 | tail -n 12
