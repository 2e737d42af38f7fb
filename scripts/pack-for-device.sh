#!/usr/bin/env bash
# Packs executables for the GPU machine: ../shared/device/bundle.sh copies them with the shared libraries they load
# into .devcarry/, then this strips them and compresses the lot into .devcarry-packed/bundle.tar.xz (the module
# library is over 50 MB with its PTX, more than the device tool carries uncompressed).
#   scripts/pack-for-device.sh EXE...
# There:  mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc && /tmp/dc/run.sh build/bin/EXE ...
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${CHS_BUNDLE_SCRIPT:-../shared/device/bundle.sh}
"$bundle" "$@" >/dev/null
strip --strip-unneeded .devcarry/lib/*.so* .devcarry/build/bin/* 2>/dev/null || true
mkdir -p .devcarry-packed
tar cJf .devcarry-packed/bundle.tar.xz -C .devcarry .
rm -rf .devcarry
du -h .devcarry-packed/bundle.tar.xz
