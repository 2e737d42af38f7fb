#!/usr/bin/env bash
# Checks the style (scripts/lint.sh: seconds), then builds everything and runs all tests: the GoogleTest suites and
# the command-line programs' tests (against Debian's ITK; test/cli runs them as 3D Slicer modules through ctk-cli and
# slicerio), a consumer project against the installed CMake package (scripts/consumer-test.sh), the chseg package's
# tests (its binary wheel installed into a fresh virtual environment: scripts/chseg-test.sh), the module against ITK
# 5.4.7 (scripts/itk54-test.sh), then the `itk` Python tests: the itk-cudahierarchicalsegmentation wheel, built beside
# the chseg tests against the ITK 5.4.7 tree that scripts/build-itk-python.sh builds once into a cache folder (in the
# background from the start), installed beside pip's itk 5.4.7 (scripts/python-test.sh). GPU tests skip without a
# CUDA device.
#   CHS_SKIP_PYTHON=1  runs the C++ tests only.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/lint.sh
# Waits for a background build (pid, log, name); when it failed, prints the end of its log and stops.
wait_for() {
  if ! wait "$1"; then
    tail -n 40 "$2" >&2
    echo "$3 did not build (whole log: $2)" >&2
    exit 1
  fi
}
if [ "${CHS_SKIP_PYTHON:-0}" != 1 ]; then
  # The ITK 5.4.7 tree that the wheel is built against (scripts/build-itk-python.sh, cached after its first build) builds in
  # the background while the C++ build and the C++, command-line and chseg tests run, and fills the cores they leave
  # idle (tests, links, pip). It runs in a session of its own (so that a failure here stops all of it), niced; where
  # the kernel schedules sessions as groups (autogroup, as on the 2-core machines) the two share the cores evenly.
  # Its packages and source are fetched first, in the foreground, so that two apt-get never run at once.
  scripts/build-itk-python.sh --fetch-only >&2
  itk_log=$(mktemp "${TMPDIR:-/tmp}/chs-itk-python.XXXXXX")
  setsid -w nice -n 19 scripts/build-itk-python.sh >"$itk_log" 2>&1 &
  itk_pid=$!
  trap 'kill -- -"$itk_pid" 2>/dev/null || true' EXIT
fi
scripts/build.sh
# The core (the CUDA backends and CPU references, nvcc's part of the build) is compiled once: the chseg package and
# the wrapping link the one build.sh built.
export CHS_PREBUILT_CORE="$PWD/build/lib/libCudaHierarchicalSegmentationCore.a"
ctest --test-dir build --output-on-failure -j "$(nproc)"
scripts/cli-test.sh
scripts/consumer-test.sh
echo "C++ build and tests, command-line tests, the installed package's consumer: $((SECONDS - start)) s" >&2
if [ "${CHS_SKIP_PYTHON:-0}" != 1 ]; then
  wait_for "$itk_pid" "$itk_log" "the ITK 5.4.7 tree of the itk wheel"
  echo "ITK 5.4.7 tree for the itk wheel ready: $(tail -n 1 "$itk_log") ($((SECONDS - start)) s)" >&2
  # The itk wheel builds in the background while the chseg package is built and tested (whose pip and pytest leave
  # a core idle most of the time); its tests run after them.
  wrap_log=$(mktemp "${TMPDIR:-/tmp}/chs-wrapping.XXXXXX")
  CHS_PYTHON_TEST=0 setsid -w scripts/python-test.sh >"$wrap_log" 2>&1 &
  wrap_pid=$!
  trap 'kill -- -"$wrap_pid" 2>/dev/null || true' EXIT
fi
scripts/chseg-test.sh
echo "C++, command-line and chseg (NumPy/CuPy package) tests: $((SECONDS - start)) s" >&2
# Against ITK 5.4.7 too (built once into a cache, as the itk wheel's tree): the GoogleTest suites and the external
# module's consumer.
scripts/itk54-test.sh
if [ "${CHS_SKIP_PYTHON:-0}" != 1 ]; then
  wait_for "$wrap_pid" "$wrap_log" "the itk wheel"
  trap - EXIT
  echo "the itk wheel built ($((SECONDS - start)) s)" >&2
  scripts/python-test.sh
  echo "C++ and Python, built and tested: $((SECONDS - start)) s" >&2
fi
