"""Python use under stress: the filters from a pool of threads, each thread with its own filter and image, equal the
same filters run one after another; bad input raises a RuntimeError that names the problem, and the same filter
then runs again on good input; images of one pixel along an axis are labelled; the CUDA stream is a plain integer."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import itk


def backend(name):
    return getattr(itk.CudaSegmentationBackendEnums, "Backend_" + name)


def relief(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.random(shape) * 100).astype(np.float32)


def watershed_filter(array):
    image = itk.image_from_array(np.ascontiguousarray(array))
    f = itk.CudaWatershedImageFilter[type(image), itk.Image[itk.ULL, image.GetImageDimension()]].New()
    f.SetInput(image)
    f.SetBackend(backend("CPU"))
    return f


def waterpixel_filter(array, step):
    image = itk.image_from_array(np.ascontiguousarray(array))
    f = itk.CudaWaterpixelImageFilter[type(image), itk.Image[itk.ULL, image.GetImageDimension()]].New()
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
    for f in (itk.CudaWatershedImageFilter[type(image), itk.Image[itk.ULL, len(shape)]].New(),
              itk.CudaWaterpixelImageFilter[type(image), itk.Image[itk.ULL, len(shape)]].New()):
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
