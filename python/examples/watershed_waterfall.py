"""The watershed and the waterfall hierarchy of a gradient image, with the levels as label images.
Run: python watershed_waterfall.py [image.npy]"""

import sys

import chseg
import numpy as np
from scipy import ndimage

image = (
    np.load(sys.argv[1])
    if len(sys.argv) > 1
    else ndimage.gaussian_filter(np.random.default_rng(1).random((512, 512)), 4).astype(np.float32)
)
gradient = ndimage.gaussian_gradient_magnitude(image.astype(np.float32), 1.0)
basins, n = chseg.watershed(gradient, return_num=True)
print(f"watershed: {n} basins")
hierarchy = chseg.waterfall(gradient)
for k, count in enumerate(hierarchy.region_counts):
    level = hierarchy.labels(k)
    print(f"waterfall level {k}: {count} regions (labels {level.min()}..{level.max()})")
