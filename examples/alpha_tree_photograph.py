"""The alpha-tree of a photograph on the GPU with itk.CudaImageToAlphaTreeFilter: the image simplified by
alpha-omega constrained connectivity (every region set to its mean value, as in Fig. 1 of Carlinet, Kaci and Blin)
and the saliency map (the level at which neighbouring pixels merge), side by side.

    python3 alpha_tree_photograph.py [output.png] [--alpha 30] [--omega 60]

The photograph is scikit-image's `camera` (512 x 512, 8-bit). Without a GPU the filter runs its CPU reference, which
builds the same tree.
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import itk
import matplotlib.pyplot as plt
import numpy as np
from skimage import data


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", nargs="?", default="alpha-tree-photograph.png")
    parser.add_argument("--alpha", type=float, default=30.0, help="largest step inside a region")
    parser.add_argument("--omega", type=float, default=60.0, help="largest range of values inside a region")
    args = parser.parse_args()

    photo = np.ascontiguousarray(data.camera(), dtype=np.uint8)
    image = itk.image_from_array(photo)
    build = itk.CudaImageToAlphaTreeFilter[type(image)].New()
    build.SetInput(image)
    build.Update()  # value ranges are kept by default: the alpha-omega cut needs them
    tree = build.GetOutput()

    labels = itk.array_from_vector_container(tree.ComputeLabels(args.alpha, args.omega)).astype(np.int64)
    sums = np.bincount(labels, weights=photo.ravel())
    counts = np.bincount(labels)
    simplified = (sums[labels] / counts[labels]).reshape(photo.shape)
    flat_zones = len(np.unique(itk.array_from_vector_container(tree.ComputeLabels(0.0))))

    saliency_filter = itk.AlphaTreeSaliencyImageFilter[itk.Image[itk.F, 2]].New()
    saliency_filter.SetInput(tree)
    saliency_filter.Update()
    saliency = itk.array_from_image(saliency_filter.GetOutput())  # (2h - 1) x (2w - 1): pixels at even positions
    # For display, one value per pixel: the strongest contour on its right or lower side (or at their corner).
    padded = np.pad(saliency, ((0, 1), (0, 1)))
    contours = padded.reshape(photo.shape[0], 2, photo.shape[1], 2).max(axis=(1, 3))

    backend = "GPU" if build.GetLastBackend() == itk.CudaSegmentationBackendEnums.Backend_CUDA else "CPU reference"
    print(
        f"{tree.GetNumberOfNodes()} nodes ({backend}); {flat_zones} flat zones; "
        f"{labels.max()} regions at alpha {args.alpha:g}, omega {args.omega:g}"
    )

    fig, axes = plt.subplots(1, 3, figsize=(12, 4.2))
    for ax, picture, title, cmap in [
        (axes[0], photo, f"input ({flat_zones} flat zones)", "gray"),
        (axes[1], simplified, f"alpha {args.alpha:g}, omega {args.omega:g}: {labels.max()} regions", "gray"),
        (axes[2], np.log1p(contours), "saliency map (log)", "magma"),
    ]:
        ax.imshow(picture, cmap=cmap, interpolation="nearest")
        ax.set_title(title, fontsize=10)
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(args.output, dpi=80)
    print(f"-> {args.output}")


if __name__ == "__main__":
    main()
