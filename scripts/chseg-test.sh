#!/usr/bin/env bash
# Builds chseg's binary wheel as it is released (scripts/build-wheel.sh: repaired and checked by auditwheel), installs
# it into a fresh virtual environment with nothing but that environment on PATH (no compiler, no CUDA toolkit), as a
# user would, and runs its tests (python/tests) and the examples of its docstrings against the installed package.
# Extra arguments go to pytest. GPU and CuPy cases skip without a CUDA device or CuPy.
#   CHS_WHEEL_PYTHON  the CPython that builds the wheel and makes the environment (default: a CPython 3.12)
#   CHS_CHSEG_VENV    the environment's folder (default: build-chseg/venv; emptied first)
#   CUDAARCHS         as in build.sh (default here: sm_90 only without a GPU)
#   CHS_PREBUILT_CORE a core library built by build.sh (build/lib/libCudaHierarchicalSegmentationCore.a, same
#                     CUDAARCHS) that the wheel links instead of compiling the core again (test.sh sets it)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
chs_default_cuda_archs
python=${CHS_WHEEL_PYTHON:-$(chs_python312)}
venv=${CHS_CHSEG_VENV:-build-chseg/venv}
start=$SECONDS
wheel=$(CHS_WHEEL_PYTHON="$python" CHS_WHEEL_DIR=build-chseg/dist scripts/build-wheel.sh | tail -1)
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# The test oracles (SciPy, scikit-image, Higra, Dask, zarr: the package's [test] extra), then itk-core for the
# itk.Image cases.
"$venv/bin/python" -m pip install -q "$wheel[test]"
"$venv/bin/python" -m pip install -q itk-core || echo "itk-core could not be installed: the itk.Image case will skip" >&2
# The wheel itself again, with only the environment on PATH: it installs without building anything.
env PATH="$PWD/$venv/bin" "$venv/bin/python" -m pip install -q --no-deps --force-reinstall "$wheel"
echo "chseg wheel built and installed: $((SECONDS - start)) s" >&2
# From the repository root the tests import the installed chseg (python/tests is on sys.path, python/ is not).
env PATH="$PWD/$venv/bin" "$venv/bin/python" -m pytest -q python/tests "$@"
# The examples in the public functions' docstrings (numpydoc "Examples", on the CPU backend), against the installed
# package.
env PATH="$PWD/$venv/bin" "$venv/bin/python" -m pytest -q -p no:cacheprovider --doctest-modules --pyargs chseg
echo "chseg wheel built, installed and tested: $((SECONDS - start)) s" >&2
