#!/usr/bin/env bash
# Makes the pictures in docs/images/ (the README's and the algorithm pages'), each with the example the page names
# (the CPU reference when there is no GPU: the pictures are the same):
#   waterpixels (photograph, CT-like slice, CT-like volume)   WaterpixelPipeline on examples/waterpixel_inputs.py's inputs
#   waterfall of the photograph                               examples/waterfall_camera.py (WatershedWaterfallPipeline)
#   surfaces of a waterfall level of the CT-like volume       CudaWaterfallSegmentation, then RenderLabelSurfaces (VTK)
#   alpha-omega simplification and saliency map              examples/alpha_tree_photograph.py (Python wrapping)
#   single-linkage clusters of a point cloud                 examples/single_linkage_points.py (Python wrapping)
#   the demo's waterfall of the MRI volume, surfaces of the   CudaSegmentationDemo (scripts/demo.sh), then
#   CT-like volume's connected components                    RenderLabelSurfaces (VTK)
# then stores them as 32-colour palette PNGs (about 530 KB in all).
#   scripts/readme-pictures.sh     after scripts/build.sh and scripts/python-test.sh (the itk wheel, installed beside pip's
#                                  itk in build-itk-wheel/venv); needs NumPy, SciPy, scikit-image, Matplotlib, Pillow
#                                  and Xvfb (Debian's packages)
set -euo pipefail
cd "$(dirname "$0")/.."
in=out/pictures
python=${CHS_PYTHON:-/usr/bin/python3}
mkdir -p "$in"
"$python" examples/waterpixel_inputs.py "$in"
build/bin/WaterpixelPipeline "$in/camera.png" 24 "$in/camera-labels.nrrd" docs/images/waterpixels-camera.png
build/bin/WaterpixelPipeline "$in/ct-slice.png" 20 "$in/ct-slice-labels.nrrd" docs/images/waterpixels-ct-slice.png
build/bin/WaterpixelPipeline "$in/ct-volume.nrrd" 12 "$in/ct-volume-labels.nrrd" docs/images/supervoxels-ct-volume.png
"$python" examples/waterfall_camera.py build/bin/WatershedWaterfallPipeline docs/images/waterfall-camera.png "$in"
build/bin/CudaWaterfallSegmentation --sigma 1.5 --level 3 "$in/ct-volume.nrrd" "$in/ct-waterfall.nrrd" >/dev/null
xvfb-run -a build/bin/RenderLabelSurfaces --interior --size 640x480 "$in/ct-waterfall.nrrd" "$in/ct-waterfall.vtp" \
  docs/images/waterfall-ct-volume-surfaces.png
build/bin/CudaSegmentationDemo "$in/demo" >/dev/null
cp "$in/demo/mri-t1-waterfall.png" docs/images/demo-mri-waterfall.png
xvfb-run -a build/bin/RenderLabelSurfaces --size 800x600 "$in/demo/ct-like-connected-components.nrrd" \
  "$in/demo/ct-like-connected-components.vtp" docs/images/demo-ct-surfaces.png
# The Python examples, with pip's itk and the module's wheel as scripts/python-test.sh installs them (Debian's system
# packages visible: Matplotlib, Pillow).
itk_python=${CHS_ITK_VENV:-build-itk-wheel/venv}/bin/python
"$itk_python" examples/alpha_tree_photograph.py docs/images/alpha-tree-photograph.png
"$itk_python" examples/single_linkage_points.py docs/images/single-linkage-points.png
# Palette PNGs keep the pictures small.
"$python" -c "
import sys
from PIL import Image
for f in sys.argv[1:]:
    Image.open(f).convert('RGB').quantize(colors=32, dither=Image.Dither.NONE).save(f, optimize=True)
" docs/images/*.png
du -ch docs/images/*.png | tail -n 1
