#!/usr/bin/env bash
# The module's main job on its embedded sample: label a generated 512x512 image and 128^3 volume (GPU when there
# is one, else the CPU reference), write inputs and label images to out/demo/ and print a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh > out-build.log 2>&1 || { cat out-build.log; exit 1; }
rm -f out-build.log
mkdir -p out/demo
build/bin/CudaConnectedComponents --demo out/demo
