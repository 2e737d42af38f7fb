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

# A CPython 3.12 (on PATH, or one of pyenv's), printed; chseg's wheel is built by it (an abi3 wheel: every CPython
# from 3.12). Fails with a message when there is none.
chs_python312() {
  local candidate
  for candidate in python3.12 "$(pyenv root 2>/dev/null || echo ~/.pyenv)"/versions/3.12*/bin/python3.12; do
    if "$candidate" -c "" 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "no CPython 3.12 found (on PATH or in pyenv); set CHS_WHEEL_PYTHON" >&2
  return 1
}
