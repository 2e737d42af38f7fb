#!/usr/bin/env bash
# The module as a C++ project of one's own uses it: installs the plain build (scripts/build.sh's build/) into
# build/install with `cmake --install`, configures examples/consumer against that prefix with
# find_package(CudaHierarchicalSegmentation), builds it and runs it (a watershed and an alpha-tree whose results are
# known; the GPU when there is one).
#   CHS_BUILD  the build folder (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CHS_BUILD:-build}
prefix=$build/install
rm -rf "$prefix" "$build/consumer"
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S examples/consumer -B "$build/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PWD/$prefix" >/dev/null
cmake --build "$build/consumer" >/dev/null
"$build/consumer/watershed_and_alpha_tree"
