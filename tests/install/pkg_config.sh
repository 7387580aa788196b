#!/usr/bin/env bash
# Builds and runs the consumer against the prefix check.sh installed, through pkg-config alone.
set -euo pipefail
src=$1
work=$2
if ! command -v pkg-config > /dev/null; then
  echo "SKIPPED: pkg-config not found (Debian: pkg-config)"
  exit 0
fi
export PKG_CONFIG_PATH="$work/prefix/share/pkgconfig"
# shellcheck disable=SC2046
c++ "$src/tests/install/consumer.cpp" -o "$work/pc" $(pkg-config --cflags --libs conveyor)
"$work/pc" "$src/examples/data/samples"
echo "pkg-config consumer passed"
