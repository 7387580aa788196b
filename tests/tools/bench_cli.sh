#!/usr/bin/env bash
# conveyor-bench from the outside: the same seed gives the same checksums with 1, 2 and 8
# workers, another seed gives others; --dump writes .npy files; bad options fail clearly.
set -euo pipefail
bench=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { "$bench" --data "$data" --batch 4 --epochs 2 --size 48 --dtype bf16 --checksum "$@"; }
run --workers 1 --seed 5 > "$tmp/w1"
run --workers 2 --seed 5 > "$tmp/w2"
run --workers 8 --seed 5 > "$tmp/w8"
run --workers 2 --seed 6 > "$tmp/s6"
grep '^checksum' "$tmp/w1" > "$tmp/c1"
grep '^checksum' "$tmp/w2" > "$tmp/c2"
grep '^checksum' "$tmp/w8" > "$tmp/c8"
grep '^checksum' "$tmp/s6" > "$tmp/c6"
[ "$(wc -l < "$tmp/c1")" -eq 8 ] || { echo "expected 8 checksum lines (13 images, batch 4, 2 epochs)"; cat "$tmp/w1"; exit 1; }
diff "$tmp/c1" "$tmp/c2" || { echo "1 and 2 workers differ"; exit 1; }
diff "$tmp/c1" "$tmp/c8" || { echo "1 and 8 workers differ"; exit 1; }
if diff -q "$tmp/c1" "$tmp/c6" > /dev/null; then echo "seeds 5 and 6 gave the same batches"; exit 1; fi
tail -n 1 "$tmp/w1" | grep -Eq '^[0-9.]+ img/s$' || { echo "last line is not '<N> img/s'"; tail -n 1 "$tmp/w1"; exit 1; }
grep -q '^decode' "$tmp/w1" || { echo "no per-stage table"; exit 1; }

"$bench" --data "$data" --batch 5 --epochs 1 --size 32 --transform eval --dtype u8 --layout nhwc --dump "$tmp/dump" \
  --stats-json "$tmp/stats.json" > /dev/null
[ "$(ls "$tmp/dump" | grep -c 'images\.npy$')" -eq 3 ] || { echo "expected 3 image dumps"; ls "$tmp/dump"; exit 1; }
[ "$(ls "$tmp/dump" | grep -c 'labels\.npy$')" -eq 3 ] || { echo "expected 3 label dumps"; exit 1; }
[ "$(ls "$tmp/dump" | grep -c 'indices\.npy$')" -eq 3 ] || { echo "expected 3 index dumps"; exit 1; }
head -c 80 "$tmp/dump/epoch0_batch00002_images.npy" | grep -aq "'shape': (3, 32, 32, 3)" || { echo "bad npy header"; exit 1; }
grep -q '"images": 13' "$tmp/stats.json" || { echo "stats json lacks the image count"; cat "$tmp/stats.json"; exit 1; }

# Damaged files: skipped and listed with their count, or a clear error naming the file.
mkdir -p "$tmp/mixed/good" "$tmp/mixed/bad"
cp "$data"/*/*.jp* "$tmp/mixed/good/"
: > "$tmp/mixed/bad/empty.jpg"
echo "not a jpeg" > "$tmp/mixed/bad/text.jpg"
first=$(ls "$data"/*/*.jpg | head -n 1)
head -c 300 "$first" > "$tmp/mixed/bad/cut.jpg"
"$bench" --data "$tmp/mixed" --batch 4 --size 32 --on-error skip --roi off --decode-scaling off > "$tmp/skip"
[ "$(grep -c '^skipped ' "$tmp/skip")" -eq 3 ] || { echo "expected 3 skipped lines"; cat "$tmp/skip"; exit 1; }
grep -q '^3 samples skipped$' "$tmp/skip" || { echo "no skipped count"; cat "$tmp/skip"; exit 1; }
grep -q 'text.jpg: Not a JPEG file' "$tmp/skip" || { echo "no reason for text.jpg"; cat "$tmp/skip"; exit 1; }
if "$bench" --data "$tmp/mixed" --batch 4 --size 32 > /dev/null 2> "$tmp/err"; then echo "a damaged file went through"; exit 1; fi
grep -Eq 'sample [0-9]+ \[.*(empty|text|cut)\.jpg\]' "$tmp/err" || { echo "the error does not name the sample"; cat "$tmp/err"; exit 1; }

if "$bench" --data "$data" --workers x 2> "$tmp/err"; then echo "a bad option was accepted"; exit 1; fi
grep -q -- '--workers expects an integer' "$tmp/err" || { cat "$tmp/err"; exit 1; }
if "$bench" --data "$tmp/none" 2> "$tmp/err"; then echo "a missing folder was accepted"; exit 1; fi
grep -q 'not a folder' "$tmp/err" || { cat "$tmp/err"; exit 1; }
echo "conveyor-bench CLI checks passed"
