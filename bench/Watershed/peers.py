#!/usr/bin/env python3
"""The CPU watersheds a user would otherwise pick, on the 2D gradient image that CudaWatershedBenchmark wrote with
--write-inputs: scikit-image's watershed without markers (its regional minima become the markers), on the float
image, and OpenCV's watershed with the regional minima as markers, on the image scaled to 8 bits (OpenCV takes
8-bit 3-channel images only; the markers come from scikit-image's local_minima and label, not timed). Connectivity 1
(4-neighbours) and 2 (8-neighbours) for scikit-image; OpenCV's is fixed. Records the basin counts.

    bench/Watershed/peers.py DATA_DIR OUT_JSON
"""

import json
import sys
import time
from importlib import metadata

import cv2
import numpy as np
from scipy import ndimage
from skimage.morphology import local_minima
from skimage.segmentation import watershed


def timed(f):
    start = time.perf_counter()
    out = f()
    return out, (time.perf_counter() - start) * 1e3


def main():
    data, out = sys.argv[1], sys.argv[2]
    results = []
    for line in open(f"{data}/inputs.txt"):
        name, nx, ny = line.split()
        nx, ny = int(nx), int(ny)
        image = np.fromfile(f"{data}/{name}.raw", dtype=np.float32).reshape(ny, nx)
        for connectivity in (1, 2):
            labels, ms = timed(lambda: watershed(image, connectivity=connectivity))
            basins = int(labels.max())
            print(
                f"{name} scikit-image watershed, connectivity {connectivity}: {ms:10.1f} ms, {basins} basins",
                flush=True,
            )
            results.append(
                {
                    "peer": "scikit-image watershed",
                    "name": name,
                    "connectivity": 4 * connectivity,
                    "pixels": nx * ny,
                    "ms": ms,
                    "basins": basins,
                }
            )
        scaled = np.round((image - image.min()) / (image.max() - image.min()) * 255).astype(np.uint8)
        minima = local_minima(scaled, connectivity=2)
        markers, count = ndimage.label(minima, structure=np.ones((3, 3)))
        markers = markers.astype(np.int32)
        rgb = cv2.cvtColor(scaled, cv2.COLOR_GRAY2BGR)
        _, ms = timed(lambda: cv2.watershed(rgb, markers))
        print(
            f"{name} OpenCV watershed, {count} minima of the 8-bit image as markers, {cv2.getNumThreads()} "
            f"threads: {ms:10.1f} ms",
            flush=True,
        )
        results.append(
            {
                "peer": "OpenCV watershed",
                "name": name,
                "connectivity": 8,
                "pixels": nx * ny,
                "ms": ms,
                "basins": int(count),
            }
        )
    versions = {"scikit-image": metadata.version("scikit-image"), "opencv": cv2.__version__}
    with open(out, "w") as f:
        json.dump({"versions": versions, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
