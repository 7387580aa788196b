#!/usr/bin/env bash
# Configures the project with a jpeglib.h that claims another libjpeg version than the library's
# (the real header, its JPEG_LIB_VERSION changed): configuration must stop and say so, rather than
# build a program that fails at its first image. Prints cmake's output for CTest to match.
set -uo pipefail
src=$1
work=$2
rm -rf "$work" && mkdir -p "$work/include"
printf '#include_next <jpeglib.h>\n#undef JPEG_LIB_VERSION\n#define JPEG_LIB_VERSION 80\n' > "$work/include/jpeglib.h"
cmake -S "$src" -B "$work/build" -DJPEG_INCLUDE_DIR="$work/include" -DCONVEYOR_ENABLE_CUDA=OFF \
  -DCONVEYOR_BUILD_TESTS=OFF -DCONVEYOR_BUILD_BENCHMARKS=OFF -DCONVEYOR_BUILD_EXAMPLES=OFF -DCONVEYOR_BUILD_TOOLS=OFF 2>&1
echo "cmake exited with $?"
