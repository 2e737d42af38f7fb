"""The alpha-tree of an image: alpha-omega cuts, the saliency map, and the same tree in Higra when it is installed.
Run: python alpha_tree.py"""

import chseg
import numpy as np
from scipy import ndimage

image = (ndimage.gaussian_filter(np.random.default_rng(2).random((256, 256)), 3) * 1000).astype(np.int16)
tree = chseg.alpha_tree(image, fully_connected=True)
print(f"{tree.num_nodes} nodes for {tree.num_leaves} pixels")
for alpha, omega in ((2, 10), (5, 40), (10, float("inf"))):
    print(f"alpha {alpha}, omega {omega}: {tree.cut(alpha, omega).max()} regions")
print("saliency map", tree.saliency().shape)
try:
    import higra as hg

    higra_tree, altitudes = tree.to_higra()
    print("Higra: root altitude", altitudes[higra_tree.root()], "area", hg.attribute_area(higra_tree)[-1])
except ImportError:
    pass
