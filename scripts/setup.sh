#!/usr/bin/env bash
# Installs what the build needs on a fresh Debian/Ubuntu machine (as root, or with sudo), if it is missing, and
# checks for the CUDA compiler. Sourced by demo.sh and test.sh.
set -euo pipefail
packages=(cmake ninja-build g++ libinsighttoolkit5-dev libgtest-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
if ! command -v nvcc >/dev/null; then
  echo "nvcc (the CUDA toolkit) was not found. Install NVIDIA's CUDA toolkit 12 or 13 (or Debian's" >&2
  echo "nvidia-cuda-toolkit package) and put nvcc on PATH; the module compiles its kernels with it." >&2
  exit 1
fi
