#!/usr/bin/env bash
# Helpers sourced by the other scripts.

# Runs a command as root: directly when we are root, else through sudo.
chs_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the named Debian packages that are missing (apt-get update first). CHS_APT_UPDATE=1 updates the package
# lists even when nothing is missing (after adding a package source).
chs_install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ] || [ "${CHS_APT_UPDATE:-0}" = 1 ]; then
    chs_as_root apt-get update -qq
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing ${missing[*]}" >&2
    chs_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# CUDA architectures to compile for, unless CUDAARCHS is set: the local GPU's ("native") when one is visible, else
# sm_90 only (a machine without a GPU runs the CPU backend, so one architecture keeps its build short).
chs_default_cuda_archs() {
  if [ -z "${CUDAARCHS:-}" ]; then
    if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then export CUDAARCHS=native; else export CUDAARCHS=90; fi
  fi
}
