"""Seeded segmentation with the Image Foresting Transform, and waterpixels. Run: python ift_waterpixels.py"""

import chseg
import numpy as np
from scipy import ndimage

image = ndimage.gaussian_filter(np.random.default_rng(5).random((300, 400)), 5).astype(np.float32)
gradient = ndimage.gaussian_gradient_magnitude(image, 1.0)
seeds = np.zeros(image.shape, np.uint8)
seeds[50, 50], seeds[250, 350], seeds[150, 200] = 1, 2, 3
labels, cost = chseg.ift(gradient, seeds, return_cost=True)
print("IFT: pixels per seed", np.bincount(labels.ravel())[1:], "largest path cost", cost.max())
superpixels = chseg.waterpixels(image, 20)
print("waterpixels:", superpixels.max(), "superpixels of about 20 x 20 pixels")
