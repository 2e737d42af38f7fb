#!/usr/bin/env bash
# Builds, once, the ITK 5.4.7 build tree that the itk-cudahierarchicalsegmentation wheel is built against, configured
# as ITKPythonPackage configures the trees behind pip's itk 5.4 wheels (static libraries, Python wrapping with the
# limited API of CPython 3.11, the wheels' wrapped types: unsigned short, double and complex double added to ITK's
# defaults, dimensions 2, 3 and 4; one install component per module, identifier PythonWheel), into a cache folder
# outside the repository; prints its path. Only what the module's wrapping needs is built: the static libraries its
# extension links (ITKCommon and what it pulls in) and the interface files (.i, .idx, .mdx) of the wrapped modules it
# imports (ITKPyBase, ITKCommon); ITK's own Python extensions come from pip's itk at run time. With TBB, as pip's
# itk: ITK's global default threader is a singleton that pip's itk and the module share, TBB's there, and a copy of
# ITKCommon without TBB refuses to make the filters' threaders then (Debian's oneTBB 2021.8 at build time; the wheel
# then loads the TBB that pip's itk-core ships: scripts/build-itk-wheel.sh).
#   scripts/build-itk-python.sh [--fetch-only]   (--fetch-only: the packages, tools and source, no build)
#   CHS_ITK_SOURCE      ITK's source tarball (default /work/shared/itk/ITK-5.4.7.tar.xz; sha256 checked)
#   CHS_ITK_PY_CACHE    cache folder (default ~/.cache/cudahierarchicalsegmentation/itk-5.4.7-python)
# The tools come from PyPI into the cache's venv: SWIG 4.3.0 (ITK 5.4 wants >= 4.2; its wheels were made with a SWIG
# snapshot between 4.2.1 and 4.3.0; Debian has 4.1) and CMake 3.31 (FindPython's SABIModule needs >= 3.26); CastXML
# is Debian's 0.5.1 (ITK would download 0.6.5, and nothing is downloaded at build time here).
set -euo pipefail
tarball=${CHS_ITK_SOURCE:-/work/shared/itk/ITK-5.4.7.tar.xz}
sha256=c58904f3392874524b0f9559acc897067316544112879acc22186bb58440aaa4
cache=${CHS_ITK_PY_CACHE:-$HOME/.cache/cudahierarchicalsegmentation/itk-5.4.7-python}
build=$cache/build
if [ -f "$build/.chs-complete" ]; then echo "$build"; exit 0; fi
source "$(dirname "$0")/common.sh"
chs_install_missing castxml python3-dev python3-venv ninja-build g++ libtbb-dev
[ -f "$tarball" ] || { echo "ITK's source $tarball is missing (set CHS_ITK_SOURCE)" >&2; exit 1; }
echo "$sha256  $tarball" | sha256sum -c --quiet - || { echo "$tarball is not ITK 5.4.7's release" >&2; exit 1; }
mkdir -p "$cache"
tools=$cache/tools
if [ ! -x "$tools/bin/swig" ]; then
  /usr/bin/python3 -m venv "$tools"
  "$tools/bin/pip" install -q --disable-pip-version-check --upgrade pip
  "$tools/bin/pip" install -q --disable-pip-version-check "swig==4.3.0" "cmake==3.31.10"
fi
src=$cache/ITK-5.4.7
[ -d "$src" ] || tar xJf "$tarball" -C "$cache"
# ITKCommon's wrapping names itk::MeshRegion, whose header is in ITKMesh (not built here); pip's itk has it, and the
# module's wrapping does not use it. (Idempotent: the edited line no longer starts the line.)
sed -i 's|^itk_wrap_simple_class("itk::MeshRegion")|if(Module_ITKMesh)\n  itk_wrap_simple_class("itk::MeshRegion")\nendif()|' \
  "$src/Modules/Core/Common/wrapping/ITKCommonBase.wrap"
[ "${1:-}" != --fetch-only ] || exit 0
"$tools/bin/cmake" -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=OFF \
  -DBUILD_SHARED_LIBS=OFF -DITK_BUILD_DEFAULT_MODULES=OFF -DITKGroup_Core=OFF \
  -DModule_ITKCommon=ON -DModule_ITKImageFilterBase=ON -DModule_ITKTBB=ON \
  -DITK_WRAP_PYTHON=ON -DITK_WRAP_DOC=OFF -DITK_LEGACY_SILENT=ON -DPY_SITE_PACKAGES_PATH:STRING=. \
  -DWRAP_ITK_INSTALL_COMPONENT_IDENTIFIER=PythonWheel -DWRAP_ITK_INSTALL_COMPONENT_PER_MODULE=ON \
  -DITK_WRAP_unsigned_short=ON -DITK_WRAP_double=ON -DITK_WRAP_complex_double=ON -DITK_WRAP_IMAGE_DIMS="2;3;4" \
  -DITK_USE_PYTHON_LIMITED_API=ON -DPython3_EXECUTABLE="$tools/bin/python" \
  -DITK_USE_SYSTEM_SWIG=ON -DSWIG_EXECUTABLE="$tools/bin/swig" \
  -DITK_USE_SYSTEM_CASTXML=ON -DCASTXML_EXECUTABLE=/usr/bin/castxml >&2
# The libraries and the interface files; not ITK's Python extensions (the *Python targets).
"$tools/bin/cmake" --build "$build" -j "$(nproc)" --target ITKCommon ITKPyBaseSwig ITKCommonSwig ITKImageFilterBaseSwig >&2
touch "$build/.chs-complete"
echo "$build"
