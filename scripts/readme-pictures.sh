#!/usr/bin/env bash
# Makes the README's waterpixel pictures and the rendering of the waterfall of a CT-like volume in docs/images/ from
# the inputs of examples/waterpixel_inputs.py, with the WaterpixelPipeline, CudaWaterfallSegmentation and
# RenderLabelSurfaces examples (the CPU reference when there is no GPU: the pictures are the same).
#   scripts/readme-pictures.sh          (after scripts/build.sh; needs NumPy, SciPy, scikit-image, Pillow, Xvfb)
set -euo pipefail
cd "$(dirname "$0")/.."
in=out/pictures
python=${CHS_PYTHON:-/usr/bin/python3}
"$python" examples/waterpixel_inputs.py "$in"
build/bin/WaterpixelPipeline "$in/camera.png" 24 "$in/camera-labels.nrrd" docs/images/waterpixels-camera.png
build/bin/WaterpixelPipeline "$in/ct-slice.png" 20 "$in/ct-slice-labels.nrrd" docs/images/waterpixels-ct-slice.png
build/bin/WaterpixelPipeline "$in/ct-volume.nrrd" 12 "$in/ct-volume-labels.nrrd" docs/images/supervoxels-ct-volume.png
build/bin/CudaWaterfallSegmentation --sigma 1.5 --level 3 "$in/ct-volume.nrrd" "$in/ct-waterfall.nrrd"
xvfb-run -a build/bin/RenderLabelSurfaces --interior --size 640x480 "$in/ct-waterfall.nrrd" "$in/ct-waterfall.vtp" \
  docs/images/waterfall-ct-volume-surfaces.png
# Palette PNGs (grey levels and the border colour) keep the pictures small.
"$python" -c "
import sys
from PIL import Image
for f in sys.argv[1:]:
    Image.open(f).convert('RGB').quantize(colors=64, dither=Image.Dither.NONE).save(f, optimize=True)
" docs/images/waterpixels-camera.png docs/images/waterpixels-ct-slice.png docs/images/supervoxels-ct-volume.png \
  docs/images/waterfall-ct-volume-surfaces.png
