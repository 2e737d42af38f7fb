"""Connected components of a volume held on the GPU (CuPy), and the same from NumPy: the labels never leave the
device in the first case. Run: python label_cupy.py"""

import chseg
import numpy as np
from scipy import ndimage

rng = np.random.default_rng(0)
volume = ndimage.gaussian_filter(rng.random((128, 256, 256)).astype(np.float32), 3) > 0.5
labels, count, stats = chseg.label(volume, fully_connected=True, return_num=True, statistics=True)
print(
    f"NumPy: {count} objects on the {('GPU' if chseg.device_count() else 'CPU reference')}; the largest has "
    f"{stats['voxel_count'].max()} voxels, bounding box {stats['bbox_min'][stats['voxel_count'].argmax()]} to "
    f"{stats['bbox_max'][stats['voxel_count'].argmax()]}"
)
try:
    import cupy
except ImportError:
    cupy = None
if cupy is not None and chseg.device_count():
    d_labels = chseg.label(cupy.asarray(volume), fully_connected=True)  # a CuPy array on the same device
    print("CuPy:", type(d_labels).__name__, "equal to NumPy's:", bool((d_labels.get() == labels).all()))
