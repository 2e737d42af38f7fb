#!/usr/bin/env bash
# The module's main job in one command: builds the module, then runs every algorithm on a real T1 MRI volume (Debian's
# insighttoolkit5-examples) and on a generated 256^3 CT-like volume, on the GPU when there is one (compared with the
# CPU reference) or on the CPU reference; writes label maps, 3D Slicer segmentations, pictures and the summary table
# to out/demo/, and a VTK rendering of the CT-like volume's connected components when VTK and Xvfb are there.
#   scripts/demo.sh [CudaSegmentationDemo options]     e.g. --ct-size 128 (faster on the CPU), --backend cpu
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh > out-build.log 2>&1 || { cat out-build.log; exit 1; }
rm -f out-build.log
out=out/demo
rm -rf "$out"
mkdir -p "$out"
build/bin/CudaSegmentationDemo "$@" "$out" | tee "$out/demo.log"
if [ -x build/bin/RenderLabelSurfaces ] && command -v xvfb-run >/dev/null && [ -f "$out/ct-like-connected-components.nrrd" ]; then
  echo
  xvfb-run -a build/bin/RenderLabelSurfaces --size 800x600 "$out/ct-like-connected-components.nrrd" \
    "$out/ct-like-connected-components.vtp" "$out/ct-like-connected-components-surfaces.png" |
    sed 's/^/VTK surfaces of the CT-like volume'"'"'s connected components: /'
fi
