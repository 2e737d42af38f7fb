#!/usr/bin/env bash
# Builds everything and runs all tests: the GoogleTest suites and the command-line programs' tests (against
# Debian's ITK; test/cli runs them as 3D Slicer modules through ctk-cli and slicerio), the chseg package's tests
# (`pip install .` into a fresh virtual environment), then the Python tests (the module's wrapping, built against a
# wrapped ITK 5.2.1 that scripts/build-wrapped-itk.sh builds once into a cache folder). GPU tests skip without a CUDA device.
#   CHS_SKIP_PYTHON=1  runs the C++ tests only.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/build.sh
# The core (the CUDA backends and CPU references, nvcc's part of the build) is compiled once: the chseg package and
# the wrapping link the one build.sh built.
export CHS_PREBUILT_CORE="$PWD/build/lib/libCudaHierarchicalSegmentationCore.a"
ctest --test-dir build --output-on-failure -j "$(nproc)"
scripts/cli-test.sh
echo "C++ build and tests, command-line tests: $((SECONDS - start)) s" >&2
scripts/chseg-test.sh
echo "C++, command-line and chseg (NumPy/CuPy package) tests: $((SECONDS - start)) s" >&2
if [ "${CHS_SKIP_PYTHON:-0}" != 1 ]; then
  scripts/python-test.sh
  echo "C++ and Python, built and tested: $((SECONDS - start)) s" >&2
fi
