#!/usr/bin/env bash
# Builds, once, an ITK 5.2.1 build tree with Python wrapping, from Debian's own source package, into a cache folder
# outside the repository; prints its path. Debian's libinsighttoolkit5-dev has no wrapping and no module macros,
# and ITK builds an external module's wrapping only against a wrapped ITK *build tree*.
#   scripts/build-wrapped-itk.sh [--fetch-only]
#   CHS_PYTHON      the Python to wrap for (default /usr/bin/python3, Debian's, which has NumPy); another one, such as
#                   a Python 3.12 for the GPU machine, gets a cache folder of its own by default
#   CHS_ITK_CACHE   cache folder (default ~/.cache/cudahierarchicalsegmentation/itk-5.2.1-python<version>)
# Minimal: the modules this module and its Python tests use (ITKConnectedComponents would pull in ITKStatistics,
# transforms and more, tripling the build; ITKImageFilterBase for its headers only, not wrapped), and few wrapped
# types (unsigned char, unsigned short, short, float; unsigned long long labels; vector float; dimensions 2 and 3).
set -euo pipefail
python=${CHS_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || { echo "CHS_PYTHON=$python is not an executable" >&2; exit 1; }
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cache=${CHS_ITK_CACHE:-$HOME/.cache/cudahierarchicalsegmentation/itk-5.2.1-python$pyver}
build=$cache/build
if [ -f "$build/.chs-complete" ]; then echo "$build"; exit 0; fi
mkdir -p "$cache"
source "$(dirname "$0")/common.sh"
if ! grep -rqs "^Types: deb-src" /etc/apt/sources.list.d/ && ! grep -qs "^deb-src" /etc/apt/sources.list; then
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
    chs_as_root tee /etc/apt/sources.list.d/chs-debian-src.sources >/dev/null
  export CHS_APT_UPDATE=1
fi
chs_install_missing swig castxml python3-dev python3-numpy dpkg-dev cmake ninja-build g++
src=$cache/InsightToolkit-5.2.1
if [ ! -d "$src" ]; then
  # Debian 12's source package (5.2.1-5+deb12u1 today); apt checks its SHA256 sums.
  [ -f "$cache/insighttoolkit5_5.2.1.orig.tar.xz" ] ||
    (cd "$cache" && apt-get source --download-only insighttoolkit5 >/dev/null)
  [ -f "$cache/insighttoolkit5_5.2.1.orig.tar.xz" ] ||
    { echo "Debian's insighttoolkit5 source package is not ITK 5.2.1 (see $cache)" >&2; exit 1; }
  (cd "$cache" && tar xf insighttoolkit5_5.2.1.orig.tar.xz)
  # ITKCommon's wrapping names itk::MeshRegion, whose header is in ITKMesh (not built here).
  sed -i 's|^itk_wrap_simple_class("itk::MeshRegion")|if(Module_ITKMesh)\n  itk_wrap_simple_class("itk::MeshRegion")\nendif()|' \
    "$src/Modules/Core/Common/wrapping/ITKCommonBase.wrap"
  # NumPy 1.24 removed np.bool.
  sed -i 's/np\.bool)/np.bool_)/' "$src/Wrapping/Generators/Python/itk/support/types.py"
  # ITKImageFilterBase is built for its headers (the module compiles against them, and the wrapped reference
  # ConnectedComponentImageFilter of the tests includes them) but not wrapped: neither the module nor its Python
  # tests use its filters from Python, and its wrappers were about a seventh of this build.
  mv "$src/Modules/Filtering/ImageFilterBase/wrapping" "$src/Modules/Filtering/ImageFilterBase/wrapping.unused"
  # The wrapper modules are built with link-time optimisation in Release: each module's code is then generated in one
  # serial link (_ITKCommonPython.so alone took 637 s of a 2,123 s cold build on 2 cores). CI only tests through
  # them, so they are compiled without it, object by object, in parallel (bench/results/CI/README.md).
  sed -i 's/^\( *\)set_property(TARGET ${lib} PROPERTY INTERPROCEDURAL_OPTIMIZATION_RELEASE TRUE)$/\1# link-time optimisation off (CudaHierarchicalSegmentation CI)/' \
    "$src/Wrapping/Generators/Python/CMakeLists.txt"
  # Python 3.12 removed distutils, and recent setuptools pkg_resources: itkConfig.py only takes strtobool from
  # the one, and itk/support/base.py imports the other without using it.
  sed -i '/^import pkg_resources$/d' "$src/Wrapping/Generators/Python/itk/support/base.py"
  sed -i 's/^    from distutils.util import strtobool as _strtobool$/    _strtobool = lambda v: "n no f false off 0 y yes t true on 1".split().index(v.lower()) > 5/' \
    "$src/Wrapping/Generators/Python/itkConfig.py.in"
fi
# --fetch-only: the packages and the source, no build (scripts/test.sh then builds it in the background).
[ "${1:-}" != --fetch-only ] || exit 0
# -O0: the wrapped ITK serves the wrapping's tests, on small images, whose work is in the module's own code; optimising
# its libraries and SWIG wrappers cost compile time those tests do not need (bench/results/CI/README.md).
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O0 -DNDEBUG" -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=OFF \
  -DITK_BUILD_DEFAULT_MODULES=OFF -DITKGroup_Core=OFF \
  -DModule_ITKCommon=ON -DModule_ITKImageFilterBase=ON -DModule_ITKIOImageBase=ON -DModule_ITKIONRRD=ON \
  -DModule_ITKIOMeta=ON -DModule_ITKIOPNG=ON -DModule_ITKBridgeNumPy=ON \
  -DITK_WRAP_PYTHON=ON -DPython3_EXECUTABLE="$python" -DPY_SITE_PACKAGES_PATH="lib/python$pyver/site-packages" \
  -DITK_USE_SYSTEM_SWIG=ON -DSWIG_EXECUTABLE=/usr/bin/swig -DITK_USE_SYSTEM_CASTXML=ON -DCASTXML_EXECUTABLE=/usr/bin/castxml \
  -DITK_WRAP_IMAGE_DIMS="2;3" -DITK_WRAP_unsigned_char=ON -DITK_WRAP_unsigned_short=ON -DITK_WRAP_signed_short=ON \
  -DITK_WRAP_float=ON -DITK_WRAP_unsigned_long_long=ON -DITK_WRAP_double=OFF -DITK_WRAP_vector_float=ON \
  -DITK_WRAP_covariant_vector_float=OFF -DITK_WRAP_rgb_unsigned_char=OFF -DITK_WRAP_rgba_unsigned_char=OFF \
  -DITK_WRAP_complex_float=OFF >&2
cmake --build "$build" -j "$(nproc)" >&2
touch "$build/.chs-complete"
echo "$build"
