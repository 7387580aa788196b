#!/usr/bin/env bash
# Installs conveyor into a scratch prefix the way most people do (no build type given: conveyor
# then builds Release), then builds and runs outside projects against it, with find_package and
# with add_subdirectory. pkg_config.sh then consumes the same prefix through pkg-config.
set -euo pipefail
src=$1
work=$2
samples=$src/examples/data/samples
rm -rf "$work"
mkdir -p "$work"
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)

cmake -S "$src" -B "$work/lib" "${gen[@]}" -DCMAKE_INSTALL_PREFIX="$work/prefix" -DCONVEYOR_ENABLE_CUDA=OFF \
  -DCONVEYOR_BUILD_TESTS=OFF -DCONVEYOR_BUILD_EXAMPLES=OFF -DCONVEYOR_BUILD_BENCHMARKS=OFF > "$work/lib.log"
grep -q "no CMAKE_BUILD_TYPE given, building Release" "$work/lib.log" ||
  { echo "a configure without a build type did not say it builds Release"; cat "$work/lib.log"; exit 1; }
grep -q "^CMAKE_BUILD_TYPE:STRING=Release$" "$work/lib/CMakeCache.txt" ||
  { echo "a configure without a build type is not Release"; grep CMAKE_BUILD_TYPE "$work/lib/CMakeCache.txt"; exit 1; }
cmake --build "$work/lib" >> "$work/lib.log"
cmake --install "$work/lib" >> "$work/lib.log"
test -f "$work/prefix/share/cmake/conveyor/conveyorConfig.cmake"
test -f "$work/prefix/include/conveyor/conveyor.hpp"
test -x "$work/prefix/bin/conveyor-bench"

cmake -S "$src/tests/install/find_package" -B "$work/fp" "${gen[@]}" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/fp.log"
cmake --build "$work/fp" >> "$work/fp.log"
"$work/fp/consumer" "$samples"

cmake -S "$src/tests/install/add_subdirectory" -B "$work/as" "${gen[@]}" -DCONVEYOR_SOURCE="$src" \
  -DCONVEYOR_ENABLE_CUDA=OFF > "$work/as.log"
cmake --build "$work/as" >> "$work/as.log"
"$work/as/consumer" "$samples"
# As a subproject, conveyor builds none of its own tests, tools or examples.
if [ -e "$work/as/conveyor/tests" ] || [ -e "$work/as/conveyor/tools/conveyor-bench" ]; then
  echo "add_subdirectory built conveyor's own targets"
  exit 1
fi
echo "install checks passed"
