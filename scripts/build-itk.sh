#!/usr/bin/env bash
# Builds, once, an ITK 5.4.7 build tree (C++, no wrapping) from ITK's source release into a cache folder outside the
# repository; prints its path. The module then builds against it as an external module (ITKModuleExternal), as it
# builds against Debian's installed 5.2.1: scripts/itk54-test.sh.
#   CHS_ITK_SOURCE  ITK's source tarball (default: /work/shared/itk/ITK-5.4.7.tar.xz; the v5.4.7 tag, sha256 checked)
#   CHS_ITK54_CACHE   cache folder (default ~/.cache/cudahierarchicalsegmentation/itk-5.4.7)
# Minimal: the modules the module and its tests use (ITKCommon, ITKImageFilterBase; the tests' ITKGoogleTest with
# Debian's GoogleTest; ITKConnectedComponents, ITKMathematicalMorphology and ITKWatersheds as references) and what they pull in.
set -euo pipefail
tarball=${CHS_ITK_SOURCE:-/work/shared/itk/ITK-5.4.7.tar.xz}
sha256=c58904f3392874524b0f9559acc897067316544112879acc22186bb58440aaa4
cache=${CHS_ITK54_CACHE:-$HOME/.cache/cudahierarchicalsegmentation/itk-5.4.7}
build=$cache/build
if [ -f "$build/.chs-complete" ]; then echo "$build"; exit 0; fi
source "$(dirname "$0")/common.sh"
chs_install_missing cmake ninja-build g++ libgtest-dev
[ -f "$tarball" ] || { echo "ITK's source $tarball is missing (set CHS_ITK_SOURCE)" >&2; exit 1; }
echo "$sha256  $tarball" | sha256sum -c --quiet - || { echo "$tarball is not ITK 5.4.7's release" >&2; exit 1; }
mkdir -p "$cache"
src=$cache/ITK-5.4.7
[ -d "$src" ] || tar xJf "$tarball" -C "$cache"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=OFF \
  -DBUILD_SHARED_LIBS=ON -DITK_BUILD_DEFAULT_MODULES=OFF -DITKGroup_Core=OFF \
  -DModule_ITKCommon=ON -DModule_ITKImageFilterBase=ON -DModule_ITKGoogleTest=ON -DITK_USE_SYSTEM_GOOGLETEST=ON \
  -DModule_ITKConnectedComponents=ON -DModule_ITKMathematicalMorphology=ON -DModule_ITKWatersheds=ON >&2
cmake --build "$build" -j "$(nproc)" >&2
touch "$build/.chs-complete"
echo "$build"
