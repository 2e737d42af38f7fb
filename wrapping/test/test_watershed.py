"""Python tests of itk.CudaWatershedImageFilter and itk.CudaWaterfallImageFilter through ITK's wrapping.

Oracles, independent of the module: the basin count equals the number of regional minima found by scikit-image's
local_minima and scipy.ndimage's labeling; on an image without equal neighbours, the basins equal a steepest
descent written here in NumPy. The waterfall's levels nest (checked through GetParentLabel) down to one region. The
CUDA backend equals the CPU reference (skipped without a CUDA device).
"""

import itk
import numpy as np
import pytest
import scipy.ndimage as ndi
from conftest import backend, has_gpu

skimage_morphology = pytest.importorskip("skimage.morphology")


def watershed(array, backend_name, full=False, lines=False):
    image = itk.image_from_array(np.ascontiguousarray(array))
    f = itk.CudaWatershedImageFilter[type(image), itk.Image[itk.UL, image.GetImageDimension()]].New()
    f.SetInput(image)
    f.SetFullyConnected(full)
    f.SetMarkWatershedLine(lines)
    f.SetBackend(backend(backend_name))
    f.Update()
    return itk.array_from_image(f.GetOutput()), f.GetObjectCount()


GPU = has_gpu()
BACKENDS = ["CPU", pytest.param("CUDA", marks=pytest.mark.skipif(not GPU, reason="no CUDA device"))]


def relief(shape, seed, levels=0):
    rng = np.random.default_rng(seed)
    smooth = ndi.uniform_filter(rng.random(shape), 3)
    smooth = (smooth - smooth.min()) / np.ptp(smooth)
    if levels:
        return np.round(smooth * (levels - 1)).astype(np.uint8)
    return (smooth * 1000).astype(np.float32)


def regional_minima(array, full):
    connectivity = array.ndim if full else 1
    minima = skimage_morphology.local_minima(array, connectivity=connectivity, allow_borders=True)
    structure = ndi.generate_binary_structure(array.ndim, connectivity)
    return ndi.label(minima, structure=structure)[1]


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("shape,levels", [((60, 80), 0), ((50, 70), 7), ((14, 16, 18), 0), ((15, 12, 13), 5)])
def test_one_basin_per_regional_minimum(backend_name, full, shape, levels):
    array = relief(shape, 1 + levels, levels)
    labels, count = watershed(array, backend_name, full)
    assert count == regional_minima(array, full)
    assert labels.min() == 1 and labels.max() == count
    # Labels in raster order of each basin's first pixel.
    _, first = np.unique(labels.ravel(), return_index=True)
    assert np.all(np.diff(first) > 0)


def test_steepest_descent_without_plateaus():
    rng = np.random.default_rng(5)
    array = rng.permutation(40 * 30).reshape(30, 40).astype(np.float32)
    labels, _ = watershed(array, "CPU")
    ny, nx = array.shape
    end = np.arange(array.size)
    flat = array.ravel()
    for p in range(array.size):
        a = p
        while True:
            y, x = divmod(a, nx)
            around = [
                q
                for q in (
                    a - nx if y else -1,
                    a - 1 if x else -1,
                    a + 1 if x + 1 < nx else -1,
                    a + nx if y + 1 < ny else -1,
                )
                if q >= 0
            ]
            low = min(around, key=lambda q: flat[q])
            if flat[low] >= flat[a]:
                break
            a = low
        end[p] = a
    _, expected = np.unique(end, return_inverse=True)
    # Same partition, and the module numbers by first pixel.
    pairs = np.unique(np.stack([labels.ravel(), expected]), axis=1)
    assert pairs.shape[1] == labels.max() == expected.max() + 1


@pytest.mark.skipif(not GPU, reason="no CUDA device")
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("lines", [False, True])
def test_gpu_equals_cpu(full, lines):
    for array in (relief((123, 97), 3), relief((31, 27, 19), 4, 9)):
        a, na = watershed(array, "CUDA", full, lines)
        b, nb = watershed(array, "CPU", full, lines)
        assert na == nb
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("full", [False, True])
def test_waterfall_levels_nest(backend_name, full):
    array = relief((90, 110), 8)
    image = itk.image_from_array(array)
    f = itk.CudaWaterfallImageFilter[type(image), itk.Image[itk.UL, 2]].New()
    f.SetInput(image)
    f.SetFullyConnected(full)
    f.SetBackend(backend(backend_name))
    f.Update()
    levels = f.GetNumberOfComputedLevels()
    assert levels >= 3
    assert f.GetRegionCount(levels - 1) == 1
    np.testing.assert_array_equal(itk.array_from_image(f.GetLevel(0)), watershed(array, "CPU", full)[0])
    for k in range(1, levels):
        fine = itk.array_from_image(f.GetLevel(k - 1))
        coarse = itk.array_from_image(f.GetLevel(k))
        parents = np.array([0] + [f.GetParentLabel(k - 1, r) for r in range(1, f.GetRegionCount(k - 1) + 1)])
        np.testing.assert_array_equal(coarse, parents[fine])
        assert f.GetRegionCount(k) < f.GetRegionCount(k - 1)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_waterfall_hierarchy_without_level_images(backend_name):
    array = relief((90, 110), 8)
    image = itk.image_from_array(array)

    def run(produce):
        f = itk.CudaWaterfallImageFilter[type(image), itk.Image[itk.UL, 2]].New()
        f.SetInput(image)
        f.SetBackend(backend(backend_name))
        f.SetProduceLevelImages(produce)
        f.Update()
        return f

    every, hierarchy = run(True), run(False)
    levels = every.GetNumberOfComputedLevels()
    assert hierarchy.GetNumberOfComputedLevels() == levels
    assert hierarchy.GetNumberOfIndexedOutputs() == 1
    with pytest.raises(RuntimeError):
        hierarchy.GetLevel(1)
    for k in range(levels):
        np.testing.assert_array_equal(
            itk.array_from_image(hierarchy.ComputeLevelImage(k)), itk.array_from_image(every.GetLevel(k))
        )


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("full", [False, True])
def test_signed_short_volume_as_read(backend_name, full):
    """A CT volume as ITK reads it (signed short, negative values) needs no cast: the partition depends on the order
    of the values only, so the basins and the waterfall's levels equal those of the same values as float."""
    ct = (relief((21, 26, 23), 6) * 4.0 - 1024.0).astype(np.int16)  # -1024 (air) to about 2976
    assert ct.min() < 0
    labels, count = watershed(ct, backend_name, full)
    expected, expected_count = watershed(ct.astype(np.float32), backend_name, full)
    assert count == expected_count
    np.testing.assert_array_equal(labels, expected)

    def waterfall(array):
        image = itk.image_from_array(array)
        f = itk.CudaWaterfallImageFilter[type(image), itk.Image[itk.UL, 3]].New()
        f.SetInput(image)
        f.SetFullyConnected(full)
        f.SetBackend(backend(backend_name))
        f.Update()
        return [itk.array_from_image(f.GetLevel(k)) for k in range(f.GetNumberOfComputedLevels())]

    short, single = waterfall(ct), waterfall(ct.astype(np.float32))
    assert len(short) == len(single) >= 2
    for a, b in zip(short, single):
        np.testing.assert_array_equal(a, b)


def test_nan_is_rejected():
    array = relief((10, 12), 2)
    array[3, 4] = np.nan
    with pytest.raises(RuntimeError, match=r"NaN at pixel \(4, 3\)"):
        watershed(array, "CPU")


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_markers_mask_and_level_through_the_wrapping(backend_name):
    """SetMarkerImage, SetMaskImage and SetLevel from Python: the markers' flood equals scikit-image's watershed from
    the same markers inside the same mask (a float relief: no ties), and a level gives as many basins as
    scikit-image's h-minima."""
    segmentation = pytest.importorskip("skimage.segmentation")
    array = relief((60, 70), 12)
    markers = np.zeros(array.shape, np.uint64)
    markers.flat[np.random.default_rng(4).choice(array.size, 15, replace=False)] = np.arange(1, 16)
    mask = (np.random.default_rng(5).random(array.shape) > 0.15).astype(np.uint8)
    image = itk.image_from_array(array)
    f = itk.CudaWatershedImageFilter[type(image), itk.Image[itk.UL, 2]].New()
    f.SetInput(image)
    f.SetMarkerImage(itk.image_from_array(markers))  # NumPy uint64: unsigned long, the labels' type
    f.SetMaskImage(itk.image_from_array(mask))
    f.SetBackend(backend(backend_name))
    f.Update()
    expected = segmentation.watershed(array, markers.astype(np.int64), connectivity=1, mask=mask.astype(bool))
    assert np.array_equal(itk.array_from_image(f.GetOutput()), expected)
    assert f.GetSeedCount() == int(np.count_nonzero(markers * mask))

    g = itk.CudaWatershedImageFilter[type(image), itk.Image[itk.UL, 2]].New()
    g.SetInput(image)
    g.SetLevel(25.0)
    g.SetBackend(backend(backend_name))
    g.Update()
    footprint = ndi.generate_binary_structure(2, 1)
    expected_count = ndi.label(skimage_morphology.h_minima(array, 25.0, footprint=footprint), footprint)[1]
    assert g.GetObjectCount() == expected_count == itk.array_from_image(g.GetOutput()).max()
