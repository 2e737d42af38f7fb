#!/usr/bin/env bash
# Builds everything and runs all tests (GoogleTest suites and the command-line program's tests). GPU tests skip
# without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
