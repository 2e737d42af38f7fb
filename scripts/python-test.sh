#!/usr/bin/env bash
# Builds the module's Python wrapping against a wrapped ITK build tree (scripts/build-wrapped-itk.sh, cached) and
# runs the Python tests in wrapping/test with pytest. Extra arguments go to pytest.
#   CUDAARCHS as in build.sh; CHS_PYTHON and CHS_ITK_CACHE as in build-wrapped-itk.sh;
#   CHS_PYTHON_BUILD  the module's wrapping build folder (default build-python)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
python=${CHS_PYTHON:-/usr/bin/python3}
itk_build=$(scripts/build-wrapped-itk.sh | tail -n 1)
itk_source=$(dirname "$itk_build")/InsightToolkit-5.2.1
build=${CHS_PYTHON_BUILD:-build-python}
if [ "$python" = /usr/bin/python3 ]; then
  for p in python3-pytest python3-scipy python3-skimage; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="${missing:-} $p"
  done
  if [ -n "${missing:-}" ]; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
fi
if [ -z "${CUDAARCHS:-}" ]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then export CUDAARCHS=native; else export CUDAARCHS=90; fi
fi
if [ ! -f "$build/build.ninja" ]; then
  # Module tests off: with them ITKModuleExternal asks for ITKTestKernel, most of ITK. The C++ tests are built
  # against Debian's ITK by build.sh.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DITK_DIR="$itk_build" -DBUILD_TESTING=OFF \
    -DITK_USE_SYSTEM_SWIG=ON -DSWIG_EXECUTABLE=/usr/bin/swig -DITK_USE_SYSTEM_CASTXML=ON \
    -DCASTXML_EXECUTABLE=/usr/bin/castxml -DPython3_EXECUTABLE="$python" \
    -DPY_SITE_PACKAGES_PATH="lib/python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages" \
    -DCHS_WRAP_ITK_REFERENCE_SOURCE_DIR="$itk_source"
fi
cmake --build "$build" -j "$(nproc)"
export PYTHONPATH="$itk_build/Wrapping/Generators/Python${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$itk_build/lib:$PWD/$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ "${CHS_PYTHON_TEST:-1}" = 0 ] || "$python" -m pytest -q wrapping/test "$@"
