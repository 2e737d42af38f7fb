"""Label the connected components of an image with itk.CudaConnectedComponentImageFilter and save a picture.

    python3 label_image.py [input_image] [output.png]

Without an input, labels a generated sample (blobs of smoothed noise). Runs on the GPU when there is one, else on
the CPU reference. Needs the module's Python wrapping on the path (see docs/python.md).
"""

import argparse
import struct
import zlib

import itk
import numpy as np


def sample_image(shape=(384, 512), seed=1):
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(shape).astype(np.float32)
    kernel = np.ones(9, np.float32) / 9  # separable box blur, twice: blobs of a few pixels
    for _ in range(2):
        noise = np.apply_along_axis(lambda r: np.convolve(r, kernel, mode="same"), 0, noise)
        noise = np.apply_along_axis(lambda r: np.convolve(r, kernel, mode="same"), 1, noise)
    return ((noise > 0) * 255).astype(np.uint8)


def write_png(path, rgb):
    """A minimal 8-bit RGB PNG writer (no dependency beyond zlib)."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6))
            + chunk(b"IEND", b"")
        )


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("input", nargs="?", help="an image ITK can read (default: a generated sample)")
    parser.add_argument("output", nargs="?", default="labels.png", help="the PNG to write (default: labels.png)")
    args = parser.parse_args()
    image = itk.imread(args.input) if args.input else itk.image_from_array(sample_image())
    output = args.output

    labeler = itk.CudaConnectedComponentImageFilter.New(image, fully_connected=True)
    labeler.Update()
    labels = itk.array_from_image(labeler.GetOutput())
    print(
        "%d objects (%s backend)"
        % (
            labeler.GetObjectCount(),
            "CUDA" if labeler.GetLastBackend() == itk.CudaSegmentationBackendEnums.Backend_CUDA else "CPU",
        )
    )

    # One colour per label, background black.
    palette = np.random.default_rng(0).integers(64, 256, size=(labeler.GetObjectCount() + 1, 3), dtype=np.uint8)
    palette[0] = 0
    write_png(output, palette[labels if labels.ndim == 2 else labels[labels.shape[0] // 2]])
    print("wrote", output)


if __name__ == "__main__":
    main()
