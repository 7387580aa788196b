#!/usr/bin/env bash
# conveyor-make-dataset from the outside: the same seed gives the same bytes whatever --jobs, for
# the default, --dense and --native sets; --native's files decode through conveyor-bench; a
# --native image is never larger than ImageNet's largest; bad options fail clearly. Skipped (77)
# without the shared photos.
set -euo pipefail
make=$1
bench=$2
photos=$3
[ -d "$photos" ] || { echo "no photos at $photos: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for set in "" --dense --native; do
  "$make" --photos "$photos" --out "$tmp/a$set" --count 24 --classes 3 --seed 9 --jobs 1 $set > "$tmp/a$set.log"
  "$make" --photos "$photos" --out "$tmp/b$set" --count 24 --classes 3 --seed 9 --jobs 3 $set > "$tmp/b$set.log"
  diff -r "$tmp/a$set" "$tmp/b$set" > /dev/null || { echo "set '$set': --jobs 1 and 3 wrote different files"; exit 1; }
  grep -Eq '^24 images in 3 classes .* bits per pixel$' "$tmp/a$set.log" || { echo "no summary line"; cat "$tmp/a$set.log"; exit 1; }
done
if diff -rq "$tmp/a--dense" "$tmp/a--native" > /dev/null; then echo "--dense and --native wrote the same files"; exit 1; fi
[ "$(find "$tmp/a--native" -name '*.JPEG' | wc -l)" -eq 24 ] || { echo "expected 24 native files"; exit 1; }
# Every file decodes (an eval pass over all of them, skipping nothing).
"$bench" --data "$tmp/a--native" --batch 8 --epochs 1 --size 32 --transform eval --workers 2 --on-error raise > "$tmp/bench.log" \
  || { echo "conveyor-bench failed on the native set"; cat "$tmp/bench.log"; exit 1; }
grep -q '^24 images in 3 batches' "$tmp/bench.log" || { echo "expected 24 images in 3 batches"; cat "$tmp/bench.log"; exit 1; }

if "$make" --photos "$photos" --out "$tmp/c" --dense --native 2> "$tmp/err"; then echo "--dense --native accepted"; exit 1; fi
grep -q 'give one' "$tmp/err" || { echo "unclear refusal"; cat "$tmp/err"; exit 1; }
echo "make_dataset_cli: ok"
