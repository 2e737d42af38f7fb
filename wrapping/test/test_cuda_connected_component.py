"""Python tests of itk.CudaConnectedComponentImageFilter through ITK's wrapping.

Run against pip's itk with the module's wheel installed beside it (scripts/python-test.sh). Oracles: ITK's own
itk.ConnectedComponentImageFilter of the same `itk` (labels identical voxel for voxel), SciPy's
ndimage.label and scikit-image's label (as partitions), and the module's CPU backend. GPU cases skip without a
CUDA device; on the GPU machine every case runs on both backends.
"""

import itk
import numpy as np
import pytest
import scipy.ndimage as ndi
import skimage.measure
from conftest import backend, has_gpu


def label_type(dimension):
    return itk.Image[itk.UL, dimension]


GPU = has_gpu()
BACKENDS = ["CPU", pytest.param("CUDA", marks=pytest.mark.skipif(not GPU, reason="no CUDA device"))]
# Every scalar pixel type pip's itk wraps for images.
PIXEL_TYPES = [np.uint8, np.uint16, np.int16, np.float32, np.float64]
SHAPES = [(70, 90), (23, 31, 37)]


def blobs(shape, seed, fraction=0.5):
    rng = np.random.default_rng(seed)
    a = ndi.gaussian_filter(rng.standard_normal(shape).astype(np.float32), 2.0)
    return a > np.quantile(a, 1 - fraction)


def same_partition(a, b):
    """Two label arrays describe the same partition (background 0 in both)."""
    if not np.array_equal(a == 0, b == 0):
        return False
    if not np.any(a):
        return True
    pairs = np.unique(np.stack([a[a > 0], b[b > 0]]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


def run_module(image, backend_name, **settings):
    f = itk.CudaConnectedComponentImageFilter[type(image), label_type(image.GetImageDimension())].New(image)
    f.SetBackend(backend(backend_name))
    for name, value in settings.items():
        getattr(f, "Set" + name)(value)
    f.Update()
    assert f.GetLastBackend() == backend(backend_name)
    return itk.array_from_image(f.GetOutput()), f.GetObjectCount()


def has_itk_filter():
    """ITK's ConnectedComponentImageFilter comes with pip's itk-segmentation (itk installs it; the GPU machine, which
    gets itk-core only, has not)."""
    try:
        return itk.ConnectedComponentImageFilter is not None
    except (AttributeError, ImportError):
        return False


ITK_FILTER = has_itk_filter()


def run_itk(image, **settings):
    """ITK's own filter; pip's itk wraps it for integer inputs, so float images (of whole values here) go in as
    unsigned char. Without it: the module's CPU backend, which CI compares with ITK's filter, for a GPU run (and a
    skip for a CPU one, which would compare with itself)."""
    if not ITK_FILTER:
        if settings.pop("_backend", "CUDA") == "CPU":
            pytest.skip("itk.ConnectedComponentImageFilter (itk-segmentation) is not installed")
        return run_module(image, "CPU", **settings)
    settings.pop("_backend", None)
    if (type(image), label_type(image.GetImageDimension())) not in itk.ConnectedComponentImageFilter.keys():
        array = itk.array_view_from_image(image)
        assert np.array_equal(array, array.astype(np.uint8))
        image = itk.image_from_array(array.astype(np.uint8))
    f = itk.ConnectedComponentImageFilter[type(image), label_type(image.GetImageDimension())].New(image)
    for name, value in settings.items():
        getattr(f, "Set" + name)(value)
    f.Update()
    return itk.array_from_image(f.GetOutput()), f.GetObjectCount()


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", PIXEL_TYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [False, True])
def test_equals_itk_and_partitions_equal_scipy_skimage(backend_name, dtype, shape, full):
    mask = blobs(shape, seed=len(shape) + int(full))
    image = itk.image_from_array((mask * 3).astype(dtype))
    labels, n = run_module(image, backend_name, FullyConnected=full)

    structure = ndi.generate_binary_structure(len(shape), len(shape) if full else 1)
    scipy_labels, scipy_n = ndi.label(mask, structure=structure)
    assert n == scipy_n
    assert same_partition(labels, scipy_labels)
    assert same_partition(labels, skimage.measure.label(mask, connectivity=len(shape) if full else 1))

    itk_labels, itk_n = run_itk(image, FullyConnected=full, _backend=backend_name)
    assert n == itk_n > 1
    assert np.array_equal(labels, itk_labels)


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_mask_and_background_value_equal_itk(backend_name, shape):
    rng = np.random.default_rng(11)
    array = rng.integers(0, 3, size=shape).astype(np.uint8)  # values 0, 1, 2
    image = itk.image_from_array(array)
    mask = itk.image_from_array((blobs(shape, seed=12) * 1).astype(np.uint8))
    mask.CopyInformation(image)
    for settings in ({"MaskImage": mask}, {"BackgroundValue": 2}, {"MaskImage": mask, "FullyConnected": True}):
        labels, n = run_module(image, backend_name, **settings)
        itk_labels, itk_n = run_itk(image, _backend=backend_name, **settings)
        assert n == itk_n > 0, settings
        assert np.array_equal(labels, itk_labels), settings


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [False, True])
def test_flat_zones_equal_per_value_scipy_labels(backend_name, shape, full):
    rng = np.random.default_rng(21)
    array = rng.integers(0, 4, size=[-(-s // 6) for s in shape])  # 6-voxel cubes of values -1..2 (0 included)
    for axis in range(len(shape)):
        array = array.repeat(6, axis=axis)
    array = array[tuple(slice(0, s) for s in shape)].astype(np.int16) - 1
    image = itk.image_from_array(array)
    labels, n = run_module(image, backend_name, FlatZones=True, FullyConnected=full)
    assert labels.min() == 1 and n == labels.max()

    # Independent oracle: a flat zone is a connected component of one value's level set.
    structure = ndi.generate_binary_structure(len(shape), len(shape) if full else 1)
    expected = np.zeros(shape, np.int64)
    for value in np.unique(array):
        zone, count = ndi.label(array == value, structure=structure)
        expected[zone > 0] = zone[zone > 0] + expected.max()
    assert same_partition(labels, expected)
    assert n == len(np.unique(expected))


def test_functional_form_and_properties():
    image = itk.image_from_array((blobs((64, 48), seed=3) * 1).astype(np.uint8))
    labels = itk.cuda_connected_component_image_filter(image, fully_connected=True, backend=backend("CPU"))
    expected, _ = run_itk(image, FullyConnected=True, _backend="CPU")
    assert np.array_equal(itk.array_from_image(labels), expected)
    f = itk.CudaConnectedComponentImageFilter.New(image, FullyConnected=True, Backend=backend("CPU"), DeviceId=0)
    assert f.GetFullyConnected() and f.GetBackend() == backend("CPU") and f.GetDeviceId() == 0


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_statistics_as_numpy(backend_name):
    array = blobs((80, 60), seed=5).astype(np.uint8)
    image = itk.image_from_array(array)
    f = itk.CudaConnectedComponentImageFilter[type(image), label_type(2)].New(image)
    f.SetBackend(backend(backend_name))
    f.ComputeStatisticsOn()
    f.Update()
    counts = np.asarray(f.GetVoxelCounts())
    labels = itk.array_from_image(f.GetOutput())
    assert counts.dtype.kind in "iu" and len(counts) == f.GetObjectCount()
    assert np.array_equal(counts, np.bincount(labels.ravel().astype(np.int64))[1:])
    assert f.GetVoxelCount(1) == counts[0]


def test_bad_input_raises_with_itk_message():
    image = itk.image_from_array(np.ones((8, 8), np.uint8))
    f = itk.CudaConnectedComponentImageFilter[type(image), label_type(2)].New(image)
    f.SetBackend(backend("CUDA"))
    f.SetDeviceId(1000)
    with pytest.raises(RuntimeError, match="no CUDA device 1000"):
        f.Update()
    # The filter runs again after a failure.
    f.SetBackend(backend("CPU"))
    f.Update()
    assert f.GetObjectCount() == 1

    with pytest.raises(RuntimeError, match="turn ComputeStatistics on"):
        f.GetVoxelCount(1)

    small = itk.image_from_array(np.ones((4, 8), np.uint8))
    f.SetMaskImage(small)
    with pytest.raises(RuntimeError, match="mask image must cover"):
        f.Update()


@pytest.mark.skipif(not GPU, reason="no CUDA device")
@pytest.mark.parametrize("flat", [False, True])
def test_gpu_equals_cpu_run_after_run(flat):
    array = (blobs((41, 57, 33), seed=9) * 2).astype(np.uint8) + (np.arange(33) % 2).astype(np.uint8)
    image = itk.image_from_array(array)
    cpu, cpu_n = run_module(image, "CPU", FlatZones=flat, FullyConnected=True)
    for _ in range(3):
        gpu, gpu_n = run_module(image, "CUDA", FlatZones=flat, FullyConnected=True)
        assert gpu_n == cpu_n
        assert np.array_equal(gpu, cpu)
