"""chseg.label against SciPy's ndimage.label (binary) and scikit-image's label (flat zones)."""

import chseg
import numpy as np
import pytest
from conftest import raster_numbered, same_partition
from scipy import ndimage
from skimage import measure

DTYPES = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64, np.float32, np.float64]


@pytest.mark.parametrize("shape", [(1, 1), (1, 57), (64, 71), (9, 23, 17)])
@pytest.mark.parametrize("fully_connected", [False, True])
def test_binary_matches_scipy(backend, shape, fully_connected):
    rng = np.random.default_rng(sum(shape))
    image = (rng.random(shape) < 0.45).astype(np.uint8)
    structure = ndimage.generate_binary_structure(len(shape), len(shape) if fully_connected else 1)
    expected, count = ndimage.label(image, structure)
    labels, num = chseg.label(image, fully_connected=fully_connected, return_num=True, backend=backend)
    assert labels.dtype == np.uint32 and labels.shape == image.shape
    assert num == count
    assert same_partition(labels, expected)
    assert np.array_equal(labels == 0, image == 0)
    assert raster_numbered(labels[labels > 0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_pixel_type_flat_zones_match_scikit_image(backend, dtype):
    rng = np.random.default_rng(7)
    image = rng.integers(0, 3, (40, 33)).astype(dtype)
    expected = measure.label(image, background=-1, connectivity=2)
    labels = chseg.label(image, flat_zones=True, fully_connected=True, backend=backend)
    assert same_partition(labels, expected)
    assert labels.min() == 1 and labels.max() == expected.max()
    assert raster_numbered(labels)


def test_mask_background_and_statistics(backend):
    rng = np.random.default_rng(3)
    image = (rng.random((30, 40)) < 0.5).astype(np.uint8)
    mask = rng.random((30, 40)) < 0.8
    labels, stats = chseg.label(image, mask=mask, background=2, statistics=True, dtype=np.uint16, backend=backend)
    expected, count = ndimage.label(image * mask)
    assert labels.dtype == np.uint16
    assert np.all(labels[(image == 0) | ~mask] == 2)
    objects = labels != 2
    assert same_partition(labels[objects], expected[objects])
    # ITK's numbering: 0, 1, 3, 4, ... (the background value 2 skipped)
    values = np.unique(labels[objects])
    assert np.array_equal(values, [v for v in range(count + 1) if v != 2][:count])
    ranks = np.searchsorted(values, labels[objects])
    assert np.array_equal(stats["voxel_count"], np.bincount(ranks, minlength=count))
    for k, box in enumerate(ndimage.find_objects(expected)):
        obj = expected[box].max()  # the SciPy label of this box's object
        rank = np.searchsorted(values, labels[expected == k + 1][0])
        assert tuple(stats["bbox_min"][rank]) == tuple(s.start for s in box), obj
        assert tuple(stats["bbox_max"][rank]) == tuple(s.stop - 1 for s in box)


def test_label_type_too_small_is_refused(backend):
    image = np.zeros((40, 40), np.uint8)
    image[::2, ::2] = 1  # 400 isolated objects
    with pytest.raises(ValueError, match="400"):
        chseg.label(image, dtype=np.uint8, backend=backend)
    assert chseg.label(image, dtype=np.uint16, backend=backend).max() == 400
