"""Waterpixels of a photograph with itk.CudaWaterpixelImageFilter, saved as a PNG of the superpixel borders.

    python3 waterpixels.py [input_image] [output.png] [--step 20] [--compactness K]

Without an input, uses scikit-image's `camera` photograph. Runs on the GPU when there is one, else on the CPU
reference (same result). Needs the module's Python wrapping on the path (see docs/python.md).
"""

import argparse

import itk
import numpy as np
import skimage.data
import skimage.io


def border_overlay(grey, labels):
    """The grey image stretched to 0..255 as RGB, with red where a pixel's right or lower neighbour has another
    label."""
    g = grey.astype(np.float64)
    g = ((g - g.min()) / max(g.max() - g.min(), 1e-12) * 255).astype(np.uint8)
    rgb = np.repeat(g[..., None], 3, axis=2)
    border = np.zeros(labels.shape, bool)
    border[:, :-1] |= labels[:, :-1] != labels[:, 1:]
    border[:-1, :] |= labels[:-1, :] != labels[1:, :]
    rgb[border] = (255, 40, 40)
    return rgb


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", nargs="?", help="a 2D image (default: scikit-image's camera)")
    parser.add_argument("output", nargs="?", default="waterpixels.png")
    parser.add_argument("--step", type=int, default=20, help="cell size (sigma) in pixels")
    parser.add_argument("--compactness", type=float, default=-1.0, help="k; negative: automatic")
    args = parser.parse_args()

    grey = skimage.io.imread(args.input, as_gray=True) if args.input else skimage.data.camera()
    image = itk.image_from_array(np.asarray(grey, dtype=np.float32))
    waterpixels = itk.CudaWaterpixelImageFilter[type(image), itk.Image[itk.UL, 2]].New(
        image, GridStep=args.step, Compactness=args.compactness
    )
    waterpixels.Update()
    labels = itk.array_from_image(waterpixels.GetOutput())
    skimage.io.imsave(args.output, border_overlay(grey, labels), check_contrast=False)
    on_gpu = waterpixels.GetLastBackend() == itk.CudaSegmentationBackendEnums.Backend_CUDA
    print(
        f"{waterpixels.GetNumberOfSuperpixels()} waterpixels, compactness {waterpixels.GetCompactnessUsed():.3g} "
        f"({'CUDA' if on_gpu else 'CPU reference'}) -> {args.output}"
    )


if __name__ == "__main__":
    main()
