#!/usr/bin/env bash
# Starts N copies of a command on this node with torchrun's variables (RANK, WORLD_SIZE,
# LOCAL_RANK) and a fresh NCCL id file; fails if any copy fails.
#
#   examples/distributed/launch.sh N COMMAND [ARGS...]
set -uo pipefail
n=$1
shift
export WORLD_SIZE=$n CONVEYOR_NCCL_ID_FILE
CONVEYOR_NCCL_ID_FILE=$(mktemp -u "${TMPDIR:-/tmp}/conveyor-nccl.XXXXXX")
pids=()
for rank in $(seq 0 $((n - 1))); do
  RANK=$rank LOCAL_RANK=$rank "$@" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
rm -f "$CONVEYOR_NCCL_ID_FILE"
exit $status
