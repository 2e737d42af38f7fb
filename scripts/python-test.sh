#!/usr/bin/env bash
# Builds the module's Python wrapping against a wrapped ITK build tree (scripts/build-wrapped-itk.sh, cached) and
# runs the Python tests in wrapping/test with pytest.
#   CUDAARCHS as in build.sh; CHS_ITK_CACHE as in build-wrapped-itk.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
itk_build=$(scripts/build-wrapped-itk.sh | tail -n 1)
for p in python3-pytest python3-scipy python3-skimage; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="${missing:-} $p"
done
if [ -n "${missing:-}" ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ -z "${CUDAARCHS:-}" ]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then export CUDAARCHS=native; else export CUDAARCHS=90; fi
fi
if [ ! -f build-python/build.ninja ]; then
  # The C++ tests are built against Debian's ITK (build.sh); here only the library and its wrapping.
  cmake -S . -B build-python -G Ninja -DCMAKE_BUILD_TYPE=Release -DITK_DIR="$itk_build" -DBUILD_TESTING=OFF \
    -DITK_USE_SYSTEM_SWIG=ON -DSWIG_EXECUTABLE=/usr/bin/swig -DITK_USE_SYSTEM_CASTXML=ON \
    -DCASTXML_EXECUTABLE=/usr/bin/castxml -DPython3_EXECUTABLE=/usr/bin/python3
fi
cmake --build build-python -j "$(nproc)"
export PYTHONPATH="$itk_build/Wrapping/Generators/Python${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$itk_build/lib:$PWD/build-python/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
/usr/bin/python3 -m pytest -q wrapping/test "$@"
