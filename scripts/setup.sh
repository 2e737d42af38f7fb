#!/usr/bin/env bash
# Installs what the build needs on a fresh Debian/Ubuntu machine (as root, or with sudo), if it is missing, and
# checks for the CUDA compiler. Sourced by build.sh and python-test.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# VTK (the rendering example) and Xvfb (to render without a screen) are for the examples and their tests; the
# examples package has the MRI volume of the demo (scripts/demo.sh).
chs_install_missing cmake ninja-build g++ libinsighttoolkit5-dev libgtest-dev zlib1g-dev libvtk9-dev xvfb xauth \
  insighttoolkit5-examples
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
if ! command -v nvcc >/dev/null; then
  echo "nvcc (the CUDA toolkit) was not found. Install NVIDIA's CUDA toolkit 12 or 13 (or Debian's" >&2
  echo "nvidia-cuda-toolkit package) and put nvcc on PATH; the module compiles its kernels with it." >&2
  exit 1
fi
