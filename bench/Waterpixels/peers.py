"""Waterpixel benchmark, Python side: makes the CT-like inputs and times scikit-image's watershed on them.

Inputs imitate a microCT slice of a porous rock (the paper used a carbonate rock): two phases (grains and pores)
from thresholded smoothed noise, a finer texture, noise and a slight blur, as uint8. They are made on the GPU with
CuPy and written as raw files, which CudaWaterpixelBenchmark then reads, so that the module, the sequential IFT and
scikit-image segment the same pixels in the same run.

    python3 bench/Waterpixels/peers.py OUTDIR      writes OUTDIR/<case>.raw, OUTDIR/cases.txt and OUTDIR/wp_peers.json
"""

import json
import os
import sys
import time

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np

CASES = [  # name, shape (NumPy order), sigmas (grid steps), time scikit-image on it
    ("ct2d", (4096, 4096), (5, 10, 20, 30), True),
    ("ct3d", (512, 512, 512), (10,), False),
]


def ct_like(shape, seed):
    rng = cp.random.default_rng(seed)
    grains = cnd.gaussian_filter(rng.standard_normal(shape, dtype=cp.float32), 6.0) > 0
    texture = cnd.gaussian_filter(rng.standard_normal(shape, dtype=cp.float32), 1.5)
    texture /= texture.std()
    image = cp.where(grains, 170.0, 70.0).astype(cp.float32) + 12.0 * texture
    image += 6.0 * rng.standard_normal(shape, dtype=cp.float32)
    image = cnd.gaussian_filter(image, 0.8)
    return cp.clip(cp.rint(image), 0, 255).astype(cp.uint8)


def grid_markers(shape, sigma):
    markers = np.zeros(shape, dtype=np.int32)
    centres = [
        np.arange(0, n, sigma) + (np.minimum(np.arange(0, n, sigma) + sigma, n) - 1 - np.arange(0, n, sigma)) // 2
        for n in shape
    ]
    mesh = np.meshgrid(*centres, indexing="ij")
    markers[tuple(mesh)] = np.arange(1, mesh[0].size + 1).reshape(mesh[0].shape)
    return markers


def median_ms(f, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    import skimage
    from skimage.filters import sobel
    from skimage.segmentation import watershed

    records, lines = [], []
    for name, shape, sigmas, run_skimage in CASES:
        image = cp.asnumpy(ct_like(shape, 7))
        path = os.path.join(out, name + ".raw")
        image.tofile(path)
        dims = "x".join(str(n) for n in reversed(shape))
        lines.append(f"{name}:{path}:{dims}:{','.join(str(s) for s in sigmas)}")
        if not run_skimage:
            continue
        gradient = sobel(image.astype(np.float32))
        for sigma in sigmas:
            markers = grid_markers(shape, sigma)
            plain = median_ms(lambda: watershed(gradient, markers), 1)
            compact = median_ms(lambda: watershed(gradient, markers, compactness=1e-3), 1)
            rec = {
                "case": name,
                "sigma": sigma,
                "skimage_watershed_ms": plain,
                "skimage_compact_watershed_ms": compact,
                "skimage": skimage.__version__,
            }
            print(json.dumps(rec), flush=True)
            records.append(rec)
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "wp_peers.json"), "w") as f:
        json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
