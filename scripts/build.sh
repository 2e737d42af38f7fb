#!/usr/bin/env bash
# Configures (on first use) and builds the module, its tests, examples and benchmark in build/.
# CUDA architectures: $CUDAARCHS if set; else the local GPU's ("native") when one is visible; else sm_90 only
# (a machine without a GPU runs the CPU backend, so one architecture keeps its build short).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
if [ -z "${CUDAARCHS:-}" ]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then export CUDAARCHS=native; else export CUDAARCHS=90; fi
fi
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build -j "$(nproc)"
