#!/usr/bin/env bash
# Installs the chseg package (the NumPy/CuPy package, pyproject.toml) with `pip install .` into a fresh virtual
# environment, as a user would, and runs its tests (python/tests) against the installed package. Extra arguments go
# to pytest. GPU and CuPy cases skip without a CUDA device or CuPy.
#   CHS_CHSEG_PYTHON  the Python to make the environment from (default: python3 on PATH)
#   CHS_CHSEG_VENV    the environment's folder (default: build-chseg/venv; emptied first)
#   CUDAARCHS         as in build.sh (default here: sm_90 only without a GPU)
#   CHS_PREBUILT_CORE a core library built by build.sh (build/lib/libCudaHierarchicalSegmentationCore.a, same
#                     CUDAARCHS) that the package links instead of compiling the core again (test.sh sets it)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
chs_default_cuda_archs
python=${CHS_CHSEG_PYTHON:-python3}
venv=${CHS_CHSEG_VENV:-build-chseg/venv}
start=$SECONDS
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# The package and its test oracles (SciPy, scikit-image, Higra), then itk-core for the itk.Image cases.
core=()
[ -z "${CHS_PREBUILT_CORE:-}" ] || core=(-C "cmake.define.CHS_PREBUILT_CORE=$CHS_PREBUILT_CORE")
"$venv/bin/python" -m pip install -q ${core[@]+"${core[@]}"} ".[test]"
"$venv/bin/python" -m pip install -q itk-core || echo "itk-core could not be installed: the itk.Image case will skip" >&2
echo "chseg built and installed: $((SECONDS - start)) s" >&2
# From the repository root the tests import the installed chseg (python/tests is on sys.path, python/ is not).
"$venv/bin/python" -m pytest -q python/tests "$@"
# The examples in the public functions' docstrings (numpydoc "Examples", on the CPU backend), against the installed
# package.
"$venv/bin/python" -m pytest -q -p no:cacheprovider --doctest-modules --pyargs chseg
echo "chseg built, installed and tested: $((SECONDS - start)) s" >&2
