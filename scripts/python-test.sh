#!/usr/bin/env bash
# Builds the module's Python wrapping against a wrapped ITK build tree (scripts/build-wrapped-itk.sh, cached) and
# runs the Python tests in wrapping/test with pytest. Extra arguments go to pytest.
#   CUDAARCHS as in build.sh; CHS_PYTHON and CHS_ITK_CACHE as in build-wrapped-itk.sh;
#   CHS_PYTHON_BUILD  the module's wrapping build folder (default build-python)
#   CHS_PYTHON_TEST=0 builds the wrapping only: no test packages installed, no pytest (scripts/test.sh builds it so
#                     beside the chseg tests)
#   CHS_PREBUILT_CORE as in chseg-test.sh: the core that build.sh built, linked instead of compiled again (read when
#                     the wrapping build folder is configured)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
python=${CHS_PYTHON:-/usr/bin/python3}
itk_build=$(scripts/build-wrapped-itk.sh | tail -n 1)
itk_source=$(dirname "$itk_build")/InsightToolkit-5.2.1
build=${CHS_PYTHON_BUILD:-build-python}
if [ "${CHS_PYTHON_TEST:-1}" != 0 ]; then
  [ "$python" != /usr/bin/python3 ] || chs_install_missing python3-pytest python3-scipy python3-skimage python3-vtk9 xvfb xauth
  # Higra (PyPI) is the alpha-tree tests' second oracle; they skip where it cannot be installed.
  "$python" -c "import higra" 2>/dev/null || "$python" -m pip install -q --user --break-system-packages higra \
    || echo "higra could not be installed: the alpha-tree comparison with Higra will skip" >&2
fi
chs_default_cuda_archs
if [ ! -f "$build/build.ninja" ]; then
  # Module tests off: with them ITKModuleExternal asks for ITKTestKernel, most of ITK. The C++ tests are built
  # against Debian's ITK by build.sh.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DITK_DIR="$itk_build" -DBUILD_TESTING=OFF \
    -DITK_USE_SYSTEM_SWIG=ON -DSWIG_EXECUTABLE=/usr/bin/swig -DITK_USE_SYSTEM_CASTXML=ON \
    -DCASTXML_EXECUTABLE=/usr/bin/castxml -DPython3_EXECUTABLE="$python" \
    -DPY_SITE_PACKAGES_PATH="lib/python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages" \
    -DCHS_WRAP_ITK_REFERENCE_SOURCE_DIR="$itk_source" -DCHS_PREBUILT_CORE="${CHS_PREBUILT_CORE:-}"
fi
# The wrapping writes its castxml include list into the shared wrapped-ITK tree; when another checkout of the module
# configured last, that list names the other checkout's headers: configure again so that it names this one's.
inc="$itk_build/Wrapping/CudaHierarchicalSegmentation.castxml.inc"
if [ -f "$inc" ] && ! grep -qF -- "-I$PWD/include\"" "$inc"; then
  cmake "$build" >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
export PYTHONPATH="$itk_build/Wrapping/Generators/Python${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$itk_build/lib:$PWD/$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ "${CHS_PYTHON_TEST:-1}" = 0 ] || "$python" -m pytest -q wrapping/test "$@"
