"""Writes the inputs of the README's waterpixel pictures (scripts/readme-pictures.sh makes the pictures from them):
a photograph (scikit-image's `camera`), a slice and a small volume imitating a microCT scan of a porous rock (the
benchmark's generator, bench/Waterpixels/peers.py, in NumPy instead of CuPy).

    python3 examples/waterpixel_inputs.py OUTDIR
"""

import os
import sys

import numpy as np
import scipy.ndimage as ndi
import skimage.data
import skimage.io


def ct_like(shape, seed):
    rng = np.random.default_rng(seed)
    grains = ndi.gaussian_filter(rng.standard_normal(shape, dtype=np.float32), 6.0) > 0
    texture = ndi.gaussian_filter(rng.standard_normal(shape, dtype=np.float32), 1.5)
    texture /= texture.std()
    image = np.where(grains, 170.0, 70.0).astype(np.float32) + 12.0 * texture
    image += 6.0 * rng.standard_normal(shape, dtype=np.float32)
    image = ndi.gaussian_filter(image, 0.8)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def write_nrrd(path, volume):
    """A NRRD file with the raw bytes attached (x fastest, as ITK reads it)."""
    header = "NRRD0004\ntype: uint8\ndimension: 3\nsizes: {} {} {}\nencoding: raw\n\n".format(*volume.shape[::-1])
    with open(path, "wb") as f:
        f.write(header.encode("ascii"))
        f.write(np.ascontiguousarray(volume).tobytes())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    skimage.io.imsave(os.path.join(out, "camera.png"), skimage.data.camera(), check_contrast=False)
    skimage.io.imsave(os.path.join(out, "ct-slice.png"), ct_like((512, 512), 3), check_contrast=False)
    write_nrrd(os.path.join(out, "ct-volume.nrrd"), ct_like((96, 128, 128), 4))


if __name__ == "__main__":
    main()
