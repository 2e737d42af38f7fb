"""Python tests of itk.CudaConnectedComponentImageFilter through ITK's wrapping.

Run with the wrapped build's Python path (scripts/python-test.sh sets it up). Oracles: SciPy's ndimage.label and
scikit-image's label (as partitions; the labels are also checked to be numbered in raster order of each object's
first voxel, ITK's numbering), and the module's CPU backend (GPU tests skip without a device).
"""
import numpy as np
import pytest
import scipy.ndimage as ndi
import skimage.measure

import itk

def backend(name):
    """itk::CudaSegmentationBackendEnums::Backend::<name>, as SWIG names it."""
    return getattr(itk.CudaSegmentationBackendEnums, "Backend_" + name)


def has_gpu():
    image = itk.image_from_array(np.zeros((4, 4), np.uint8))
    f = itk.CudaConnectedComponentImageFilter[type(image), itk.Image[itk.ULL, 2]].New(image)
    f.SetBackend(backend("CUDA"))
    try:
        f.Update()
        return True
    except RuntimeError:
        return False


GPU = has_gpu()
BACKENDS = ["CPU", pytest.param("CUDA", marks=pytest.mark.skipif(not GPU, reason="no CUDA device"))]
PIXEL_TYPES = [np.uint8, np.uint16, np.int16, np.float32]


def blobs(shape, seed, fraction=0.5):
    rng = np.random.default_rng(seed)
    a = ndi.gaussian_filter(rng.standard_normal(shape).astype(np.float32), 2.0)
    return a > np.quantile(a, 1 - fraction)


def same_partition(a, b):
    """Two label arrays describe the same partition (background 0 in both)."""
    if not np.array_equal(a == 0, b == 0):
        return False
    pairs = np.unique(np.stack([a[a > 0], b[b > 0]]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", PIXEL_TYPES)
@pytest.mark.parametrize("shape", [(70, 90), (23, 31, 37)])
@pytest.mark.parametrize("full", [False, True])
def test_matches_scipy_and_skimage(backend_name, dtype, shape, full):
    mask = blobs(shape, seed=len(shape) + int(full))
    array = (mask * 3).astype(dtype)
    image = itk.image_from_array(array)
    LabelImage = itk.Image[itk.ULL, len(shape)]
    f = itk.CudaConnectedComponentImageFilter[type(image), LabelImage].New(image)
    f.SetFullyConnected(full)
    f.SetBackend(backend(backend_name))
    f.Update()
    labels = itk.array_from_image(f.GetOutput())

    structure = ndi.generate_binary_structure(len(shape), len(shape) if full else 1)
    scipy_labels, n = ndi.label(mask, structure=structure)
    assert f.GetObjectCount() == n
    assert same_partition(labels, scipy_labels)
    assert same_partition(labels, skimage.measure.label(mask, connectivity=len(shape) if full else 1))
    # ITK's numbering: labels 1..N first appear in raster order.
    flat = labels.ravel()
    first_seen = flat[np.sort(np.unique(flat, return_index=True)[1])]
    assert np.array_equal(first_seen[first_seen > 0], np.arange(1, n + 1))


def test_functional_form_and_properties():
    image = itk.image_from_array((blobs((64, 48), seed=3) * 1).astype(np.uint8))
    labels = itk.cuda_connected_component_image_filter(image, fully_connected=True, backend=backend("CPU"))
    expected, n = ndi.label(itk.array_from_image(image), structure=np.ones((3, 3)))
    assert same_partition(itk.array_from_image(labels), expected)


def test_statistics_as_numpy():
    array = blobs((80, 60), seed=5).astype(np.uint8)
    image = itk.image_from_array(array)
    f = itk.CudaConnectedComponentImageFilter[type(image), itk.Image[itk.ULL, 2]].New(image)
    f.SetBackend(backend("CPU"))
    f.ComputeStatisticsOn()
    f.Update()
    counts = np.asarray(f.GetVoxelCounts())
    labels = itk.array_from_image(f.GetOutput())
    assert np.array_equal(counts, np.bincount(labels.ravel().astype(np.int64))[1:])


def test_bad_input_raises_with_itk_message():
    image = itk.image_from_array(np.ones((8, 8), np.uint8))
    f = itk.CudaConnectedComponentImageFilter[type(image), itk.Image[itk.ULL, 2]].New(image)
    f.SetBackend(backend("CUDA"))
    f.SetDeviceId(1000)
    with pytest.raises(RuntimeError, match="no CUDA device 1000"):
        f.Update()
    f.SetBackend(backend("CPU"))
    f.Update()
    assert f.GetObjectCount() == 1


@pytest.mark.skipif(not GPU, reason="no CUDA device")
@pytest.mark.parametrize("flat", [False, True])
def test_gpu_equals_cpu(flat):
    array = (blobs((41, 57, 33), seed=9) * 2).astype(np.uint8) + (np.arange(33) % 2).astype(np.uint8)
    image = itk.image_from_array(array)
    results = []
    for name in ("CPU", "CUDA"):
        f = itk.CudaConnectedComponentImageFilter[type(image), itk.Image[itk.ULL, 3]].New(image)
        f.SetFlatZones(flat)
        f.SetBackend(backend(name))
        f.Update()
        results.append(itk.array_from_image(f.GetOutput()))
    assert np.array_equal(results[0], results[1])
