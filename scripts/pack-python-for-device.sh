#!/usr/bin/env bash
# Packs the `itk` Python package of a wrapped ITK build tree (with this module's wrapping built into it) for a
# machine that has Python and NumPy but no ITK, such as the GPU machine: pure Python files and extension modules,
# stripped, in one .tar.xz. ITK is built static and the CUDA runtime is linked statically, so the extension
# modules need only the C and C++ runtime and, for the GPU, the driver.
#   scripts/pack-python-for-device.sh ITK_BUILD_TREE [OUTPUT_DIR]   (default OUTPUT_DIR: .devcarry-python)
# There:  mkdir -p /tmp/itk && tar xJf OUTPUT_DIR/itk-python.tar.xz -C /tmp/itk && PYTHONPATH=/tmp/itk python3 ...
set -euo pipefail
itk_build=${1:?usage: $0 ITK_BUILD_TREE [OUTPUT_DIR]}
out=${2:-.devcarry-python}
python_dir=$itk_build/Wrapping/Generators/Python
[ -f "$python_dir/itkConfig.py" ] || { echo "$python_dir has no wrapped itk package" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -r "$python_dir/itk" "$python_dir/itkConfig.py" "$stage/"
# Only the extension modules of the modules this ITK build wraps (a reused build folder can hold others).
for so in "$stage"/itk/_*Python.so; do
  name=$(basename "$so" .so); name=${name#_}
  [ -f "$stage/itk/Configuration/${name%Python}Config.py" ] || [ "${name%Python}" = ITKPyBase ] || rm "$so"
done
strip --strip-unneeded "$stage"/itk/*.so
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
mkdir -p "$out"
tar cJf "$out/itk-python.tar.xz" -C "$stage" .
du -h "$out/itk-python.tar.xz"
