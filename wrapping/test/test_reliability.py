"""Python use under stress: the filters from a pool of threads, each thread with its own filter and image, equal the
same filters run one after another; bad input raises a RuntimeError that names the problem, and the same filter
then runs again on good input; images of one pixel along an axis are labelled; the CUDA stream is a plain integer."""

from concurrent.futures import ThreadPoolExecutor

import itk
import numpy as np
import pytest
from conftest import backend


def relief(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.random(shape) * 100).astype(np.float32)


def watershed_filter(array):
    image = itk.image_from_array(np.ascontiguousarray(array))
    f = itk.CudaWatershedImageFilter[type(image), itk.Image[itk.UL, image.GetImageDimension()]].New()
    f.SetInput(image)
    f.SetBackend(backend("CPU"))
    return f


def waterpixel_filter(array, step):
    image = itk.image_from_array(np.ascontiguousarray(array))
    f = itk.CudaWaterpixelImageFilter[type(image), itk.Image[itk.UL, image.GetImageDimension()]].New()
    f.SetInput(image)
    f.SetGridStep(step)
    f.SetBackend(backend("CPU"))
    return f


def run(f):
    f.Modified()
    f.Update()
    return itk.array_from_image(f.GetOutput()).copy()


def test_threads_equal_sequential_runs():
    arrays = [relief((90, 70), seed) for seed in range(8)]
    expected = [run(watershed_filter(a)) for a in arrays]

    def work(i):
        f = watershed_filter(arrays[i])
        return all(np.array_equal(run(f), expected[i]) for _ in range(20))

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(work, range(8)))


def test_bad_input_then_good_input_on_the_same_filter():
    array = relief((20, 30), 1)
    f = watershed_filter(array)
    good = run(f)
    bad = array.copy()
    bad[4, 7] = np.nan
    f.SetInput(itk.image_from_array(bad))
    with pytest.raises(RuntimeError, match=r"NaN at pixel \(7, 4\)"):
        run(f)
    f.SetInput(itk.image_from_array(array))
    np.testing.assert_array_equal(run(f), good)
    w = waterpixel_filter(array, 5)
    w.SetGridStep(0)
    with pytest.raises(RuntimeError, match="grid step along axis 0 must be between 1"):
        run(w)
    w.SetGridStep(5)
    assert run(w).max() == w.GetNumberOfSuperpixels() == 6 * 4


@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (1, 1, 1), (1, 5, 6), (4, 1, 1)])
def test_one_pixel_along_an_axis(shape):
    """Built as ITK images (NumPy arrays with a last axis of 1 are read as vector images by image_from_array)."""
    image = itk.Image[itk.F, len(shape)].New()
    image.SetRegions([int(s) for s in reversed(shape)])
    image.Allocate()
    itk.array_view_from_image(image)[...] = relief(shape, 3).reshape(itk.array_view_from_image(image).shape)
    for f in (
        itk.CudaWatershedImageFilter[type(image), itk.Image[itk.UL, len(shape)]].New(),
        itk.CudaWaterpixelImageFilter[type(image), itk.Image[itk.UL, len(shape)]].New(),
    ):
        f.SetInput(image)
        f.SetBackend(backend("CPU"))
        f.Update()
        assert tuple(f.GetOutput().GetLargestPossibleRegion().GetSize()) == tuple(reversed(shape))
        assert itk.array_view_from_image(f.GetOutput()).min() >= 1


def test_cuda_stream_is_an_integer():
    f = watershed_filter(relief((8, 8), 4))
    assert f.GetCudaStream() == 0
    f.SetCudaStream(0)
    run(f)
    f.SetCudaStream(2**63)  # a 64-bit handle fits
    assert f.GetCudaStream() == 2**63


READ_AND_SEGMENT = """
import sys
import itk
image = itk.imread(sys.argv[1], itk.UC)
f = itk.CudaWatershedImageFilter[type(image), itk.Image[itk.UL, image.GetImageDimension()]].New()
f.SetInput(image)
f.SetBackend(itk.CudaSegmentationBackendEnums.Backend_CPU)
f.Update()
print("basins", f.GetObjectCount())
"""


def damaged_files(tmp_path, ext):
    """A good file of a 2D uint8 relief written by ITK, and damaged copies: truncated in its data, cut inside its
    header, empty, and with every seventh byte of its last two thirds flipped."""
    array = (relief((40, 50), 6) * 2.5).astype(np.uint8)
    good = tmp_path / f"good.{ext}"
    itk.imwrite(itk.image_from_array(array), str(good))
    data = good.read_bytes()
    flipped = bytearray(data)
    for i in range(len(data) // 3, len(data), 7):
        flipped[i] ^= 0x5A
    files = {"good": good}
    for name, content in (
        ("truncated", data[: len(data) // 2]),
        ("header only", data[:30]),
        ("empty", b""),
        ("flipped bytes", bytes(flipped)),
    ):
        files[name] = tmp_path / f"{name.replace(' ', '-')}.{ext}"
        files[name].write_bytes(content)
    return files


def read_and_segment(path):
    """Reads `path` with itk.imread and runs the watershed on it in a child process: (exit status, output)."""
    import subprocess
    import sys

    child = subprocess.run(
        [sys.executable, "-c", READ_AND_SEGMENT, str(path)], capture_output=True, text=True, timeout=120
    )
    return child.returncode, child.stdout + child.stderr


def test_damaged_nrrd_files_from_python():
    """Python users read files with itk.imread: a truncated, header-only or empty NRRD raises a RuntimeError in the
    reader (no crash, the filter is not reached); a NRRD with flipped data bytes is a valid image and is segmented."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        files = damaged_files(Path(tmp), "nrrd")
        status, out = read_and_segment(files["good"])
        assert status == 0 and "basins" in out, out
        for name in ("truncated", "header only", "empty"):
            status, out = read_and_segment(files[name])
            assert status == 1, f"{name}: exit status {status}\n{out}"  # a Python exception, not a signal
            assert "RuntimeError" in out and "basins" not in out, f"{name}: {out}"
        status, out = read_and_segment(files["flipped bytes"])
        assert status == 0 and "basins" in out, out


def test_damaged_png_files_from_python():
    """A truncated or empty PNG gives a RuntimeError in itk.imread. ITK 5.2's PNG reader sets no libpng error
    handler, so there a PNG cut inside its header aborts the Python process (SIGABRT) in itk.imread, before any
    filter of this module runs (the command-line modules check PNG inputs with libpng first for that reason); this
    test records that behaviour of ITK 5.2's reader, and expects a RuntimeError from other ITK versions."""
    import signal
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        files = damaged_files(Path(tmp), "png")
        status, out = read_and_segment(files["good"])
        assert status == 0 and "basins" in out, out
        for name in ("truncated", "empty"):
            status, out = read_and_segment(files[name])
            assert status == 1 and "RuntimeError" in out, f"{name}: exit status {status}\n{out}"
        status, out = read_and_segment(files["header only"])
        if itk.Version.GetITKVersion().startswith("5.2."):
            assert status == -signal.SIGABRT, f"ITK 5.2's PNG reader did not abort on a cut header: {status}\n{out}"
        else:
            assert status == 1 and "RuntimeError" in out, f"exit status {status}\n{out}"
