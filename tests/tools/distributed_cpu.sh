#!/usr/bin/env bash
# Three processes shard one dataset by torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK), as
# conveyor-bench --shard-from-env: every epoch each rank gets the same number of batches, and
# together they cover the dataset exactly once plus torch's padding (the first indices of the
# epoch's order, repeated to fill the last round).
set -euo pipefail
bench=$1
data=$2
world=3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=$(find "$data" -type f \( -iname '*.jpg' -o -iname '*.jpeg' \) | wc -l)
for rank in $(seq 0 $((world - 1))); do
  RANK=$rank WORLD_SIZE=$world LOCAL_RANK=$rank "$bench" --data "$data" --batch 2 --epochs 2 --size 16 --workers 1 \
    --seed 11 --shard-from-env --print-indices > "$tmp/rank$rank" &
done
wait
per_rank=$(( (n + world - 1) / world ))
padding=$(( per_rank * world - n ))
batches=$(( (per_rank + 1) / 2 ))
for rank in $(seq 0 $((world - 1))); do
  got=$(grep -c '^indices:' "$tmp/rank$rank")
  [ "$got" -eq $((2 * batches)) ] || { echo "rank $rank printed $got batches, expected $((2 * batches))"; exit 1; }
done
for epoch in 0 1; do
  # The epoch's batches of every rank: lines [epoch * batches, (epoch + 1) * batches).
  for rank in $(seq 0 $((world - 1))); do
    grep '^indices:' "$tmp/rank$rank" | sed -n "$((epoch * batches + 1)),$(((epoch + 1) * batches))p"
  done | sed 's/^indices://' | tr ' ' '\n' | grep -v '^$' | sort -n > "$tmp/epoch$epoch"
  [ "$(wc -l < "$tmp/epoch$epoch")" -eq $((per_rank * world)) ] || { echo "epoch $epoch: wrong total"; exit 1; }
  [ "$(sort -un "$tmp/epoch$epoch" | wc -l)" -eq "$n" ] || { echo "epoch $epoch: an index is missing"; exit 1; }
  [ "$(uniq -d "$tmp/epoch$epoch" | wc -l)" -eq "$padding" ] || { echo "epoch $epoch: padding is not $padding"; exit 1; }
done
if cmp -s "$tmp/rank0" "$tmp/rank1"; then echo "ranks got the same indices"; exit 1; fi
echo "distributed sharding: $world ranks x 2 epochs, each index exactly once plus $padding padding"
