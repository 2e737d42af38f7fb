#!/usr/bin/env bash
# Configures (on first use) and builds the module, its tests, examples and benchmark in build/.
# CUDA architectures: $CUDAARCHS if set; else the local GPU's ("native") when one is visible; else sm_90 only
# (a machine without a GPU runs the CPU backend, so one architecture keeps its build short).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
chs_default_cuda_archs
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build -j "$(nproc)"
