#!/usr/bin/env python3
"""Makes docs/images/waterfall-camera.png: scikit-image's camera photograph through the WatershedWaterfallPipeline
example (smoothing at sigma 2, gradient magnitude, watershed, waterfall), with the region borders of waterfall levels
1, 3 and 5 side by side.

    waterfall_camera.py PIPELINE_PROGRAM OUTPUT_PNG [WORK_DIR]
"""

import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image
from skimage import data, io


def main():
    program, output = sys.argv[1], sys.argv[2]
    work = sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp()
    io.imsave(f"{work}/camera.png", data.camera())
    subprocess.run([program, f"{work}/camera.png", "2.0", f"{work}/camera-"], check=True)
    panels = [io.imread(f"{work}/camera-level{k}.png") for k in (1, 3, 5)]
    gap = np.full((panels[0].shape[0], 6, 3), 255, np.uint8)
    row = np.concatenate([panels[0], gap, panels[1], gap, panels[2]], axis=1)
    Image.fromarray(row).convert("P", palette=Image.ADAPTIVE, colors=64).save(output, optimize=True)


if __name__ == "__main__":
    main()
