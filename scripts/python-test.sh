#!/usr/bin/env bash
# The module's ITK Python wrapping as pip users get it: builds the itk-cudahierarchicalsegmentation wheel
# (scripts/build-itk-wheel.sh, against the ITK 5.4.7 tree of scripts/build-itk-python.sh, cached), installs it into a
# fresh virtual environment beside itk 5.4.7 from PyPI, as `pip install itk==5.4.7 <wheel>` does, and runs the tests
# in wrapping/test with pytest against that installation. Extra arguments go to pytest. GPU cases skip without a
# CUDA device.
#   CUDAARCHS          as in build.sh (default here: sm_90 only without a GPU)
#   CHS_PREBUILT_CORE  as in chseg-test.sh: the core that build.sh built, linked instead of compiled again
#   CHS_ITK_VENV       the environment's folder (default build-itk-wheel/venv; emptied first)
#   CHS_PYTHON_TEST=0  builds the wheel only (scripts/test.sh builds it beside the chseg tests)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
chs_default_cuda_archs
start=$SECONDS
wheel=$(CHS_ITK_WHEEL_DIR=build-itk-wheel/dist scripts/build-itk-wheel.sh | tail -n 1)
[ "${CHS_PYTHON_TEST:-1}" != 0 ] || exit 0
chs_install_missing python3-venv python3-vtk9 xvfb xauth
venv=${CHS_ITK_VENV:-build-itk-wheel/venv}
rm -rf "$venv"
# Debian's Python (3.11, which the abi3 wheel takes), with its system packages visible for VTK (python3-vtk9: the
# label-surfaces example's test); everything else comes from PyPI into the environment.
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install -q "itk==5.4.7" "$wheel[test]"
# Higra is the alpha-tree tests' second oracle; they skip where it cannot be installed.
"$venv/bin/python" -m pip install -q higra || echo "higra could not be installed: the comparison with Higra will skip" >&2
echo "itk wheel built and installed beside itk 5.4.7: $((SECONDS - start)) s" >&2
# From the repository root, with the environment only on PATH: the tests import the installed itk and module.
env PATH="$PWD/$venv/bin:/usr/bin:/bin" "$venv/bin/python" -m pytest -q -p no:cacheprovider wrapping/test "$@"
echo "itk wheel built, installed and tested: $((SECONDS - start)) s" >&2
