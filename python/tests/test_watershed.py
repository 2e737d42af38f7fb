"""chseg.watershed and chseg.waterfall against the definitions: regional minima (scikit-image), steepest descent and
the waterfall's lowest passes, computed here in NumPy and SciPy."""

import chseg
import numpy as np
import pytest
from conftest import neighbour_pairs, raster_numbered, same_partition
from scipy import ndimage, sparse
from scipy.sparse import csgraph
from skimage.morphology import local_minima


def regional_minima(image, fully_connected):
    connectivity = image.ndim if fully_connected else 1
    minima = local_minima(image, connectivity=connectivity, allow_borders=True)
    structure = ndimage.generate_binary_structure(image.ndim, connectivity)
    return ndimage.label(minima, structure)


def lowest_neighbour(image, fully_connected):
    """low(p): the neighbour of smallest value, the one of largest raster index among equal ones."""
    flat = image.ravel()
    p, q = neighbour_pairs(image.shape, fully_connected)
    a = np.concatenate([p, q])
    b = np.concatenate([q, p])
    order = np.lexsort((-b, flat[b], a))  # per pixel: smallest value, then largest index first
    first = np.unique(a[order], return_index=True)[1]
    low = np.empty(flat.size, np.int64)
    low[a[order][first]] = b[order][first]
    return low


@pytest.mark.parametrize("shape", [(50, 61), (12, 15, 11)])
@pytest.mark.parametrize("fully_connected", [False, True])
def test_one_basin_per_minimum_and_steepest_descent(backend, shape, fully_connected):
    image = np.random.default_rng(5).random(shape).astype(np.float32)
    labels, count = chseg.watershed(image, fully_connected=fully_connected, return_num=True, backend=backend)
    minima, minima_count = regional_minima(image, fully_connected)
    assert count == minima_count == labels.max()
    assert raster_numbered(labels)
    # each basin holds exactly one regional minimum, whole
    assert same_partition(labels[minima > 0], minima[minima > 0])
    # random floats: every pixel but the minima descends, into its lowest neighbour's basin
    low = lowest_neighbour(image, fully_connected)
    flat, lab = image.ravel(), labels.ravel()
    descends = flat[low] < flat
    assert np.array_equal(lab[descends], lab[low[descends]])


def test_plateaux_split_by_geodesic_distance(backend):
    # two minima at the ends of a flat row: the plateau between them is split in the middle
    image = np.array([[0, 5, 5, 5, 5, 5, 0]], np.uint8)
    labels = chseg.watershed(image, backend=backend)
    assert labels.tolist() == [[1, 1, 1, 2, 2, 2, 2]]
    # the middle pixel is at distance 3 from both drains; it points to the plateau neighbour of largest index
    assert labels[0, 3] == 2


def test_watershed_lines(backend):
    image = np.random.default_rng(2).random((40, 40)).astype(np.float32)
    plain = chseg.watershed(image, backend=backend)
    lined = chseg.watershed(image, watershed_line=True, backend=backend)
    kept = lined > 0
    assert 0 < np.count_nonzero(~kept) < image.size
    assert np.array_equal(lined[kept], plain[kept])
    p, q = neighbour_pairs(image.shape, False)
    flat, lab = image.ravel(), plain.ravel()
    later = lambda x, y: (flat[x] > flat[y]) | ((flat[x] == flat[y]) & (x > y))  # noqa: E731
    differ = lab[p] != lab[q]
    should = np.zeros(image.size, bool)
    should[p[differ & later(p, q)]] = True
    should[q[differ & later(q, p)]] = True
    assert np.array_equal(~kept.ravel(), should)


def test_nan_is_refused(backend):
    image = np.zeros((5, 5), np.float32)
    image[2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        chseg.watershed(image, backend=backend)


def next_waterfall_level(image, labels, fully_connected):
    """One waterfall step by the definition: each region joins its neighbours across its lowest pass."""
    flat, lab = image.ravel(), labels.ravel().astype(np.int64)
    p, q = neighbour_pairs(image.shape, fully_connected)
    cross = lab[p] != lab[q]
    a, b, h = lab[p][cross], lab[q][cross], np.maximum(flat[p], flat[q])[cross]
    regions = lab.max()
    lowest = np.full(regions + 1, np.inf)
    np.minimum.at(lowest, a, h)
    np.minimum.at(lowest, b, h)
    join = (h == lowest[a]) | (h == lowest[b])
    graph = sparse.coo_matrix((np.ones(join.sum()), (a[join], b[join])), shape=(regions + 1, regions + 1))
    _, component = csgraph.connected_components(graph, directed=False)
    return component[lab].reshape(labels.shape)


@pytest.mark.parametrize("fully_connected", [False, True])
def test_waterfall_levels_follow_the_definition(backend, fully_connected):
    image = np.random.default_rng(11).integers(0, 40, (48, 52)).astype(np.uint8)
    hierarchy = chseg.waterfall(image, fully_connected=fully_connected, backend=backend)
    counts = hierarchy.region_counts
    assert counts[-1] == 1 and all(a > b for a, b in zip(counts, counts[1:]))
    assert np.array_equal(hierarchy.labels(0), chseg.watershed(image, fully_connected=fully_connected, backend=backend))
    for k in range(hierarchy.num_levels):
        level = hierarchy.labels(k)
        assert level.max() == counts[k] and raster_numbered(level)
        if k + 1 < hierarchy.num_levels:
            assert same_partition(hierarchy.labels(k + 1), next_waterfall_level(image, level, fully_connected))
            assert len(hierarchy.parents[k]) == counts[k]


def test_waterfall_level_limit(backend):
    image = np.random.default_rng(1).random((30, 30)).astype(np.float32)
    assert chseg.waterfall(image, levels=2, backend=backend).num_levels == 2
    with pytest.raises(ValueError):
        chseg.waterfall(image).labels(99)


def smooth_relief(shape, seed):
    """Smoothed random floats: no two pixels equal, so floods never tie."""
    return ndimage.uniform_filter(np.random.default_rng(seed).random(shape), 3).astype(np.float32)


@pytest.mark.parametrize("shape", [(70, 83), (14, 17, 12)])
@pytest.mark.parametrize("fully_connected", [False, True])
def test_markers_and_mask_equal_scikit_image(backend, shape, fully_connected):
    from skimage.segmentation import watershed as skimage_watershed

    rng = np.random.default_rng(8)
    image = smooth_relief(shape, 9)
    markers = np.zeros(shape, np.int32)
    markers.flat[rng.choice(image.size, 20, replace=False)] = np.arange(3, 23)
    mask = np.ones(shape, bool)
    mask[(slice(None),) * (len(shape) - 1) + (shape[-1] // 2,)] = False  # a wall the floods cannot cross
    mask &= rng.random(shape) > 0.1
    connectivity = len(shape) if fully_connected else 1
    for m in (None, mask):
        ours = chseg.watershed(image, markers, mask=m, fully_connected=fully_connected, backend=backend)
        theirs = skimage_watershed(image, markers, connectivity=connectivity, mask=m)
        assert np.array_equal(ours, theirs)
    assert (ours[~mask] == 0).all()


@pytest.mark.parametrize("fully_connected", [False, True])
def test_level_equals_scikit_image_from_the_minima_of_the_h_minima_transform(backend, fully_connected):
    from skimage.morphology import h_minima, local_minima, reconstruction
    from skimage.segmentation import watershed as skimage_watershed

    image = (smooth_relief((90, 77), 10) * 1000).astype(np.float32)
    connectivity = 2 if fully_connected else 1
    footprint = ndimage.generate_binary_structure(2, connectivity)
    for level in (3.0, 20.0):
        labels, count = chseg.watershed(
            image, level=level, fully_connected=fully_connected, return_num=True, backend=backend
        )
        # The markers as ITK finds them: the regional minima of the h-minima transform (the reconstruction by
        # erosion of image + level above the image), labelled in raster order.
        transform = reconstruction(image + np.float32(level), image, method="erosion", footprint=footprint)
        minima = local_minima(transform, connectivity=connectivity, allow_borders=True)
        markers, expected = ndimage.label(minima, footprint)
        assert count == expected == labels.max()
        assert np.array_equal(labels, skimage_watershed(image, markers, connectivity=connectivity))
        # scikit-image's h_minima marks one pixel of each of those minima (its deepest here): as many markers
        assert ndimage.label(h_minima(image, level, footprint=footprint), footprint)[1] == count
    assert (
        chseg.watershed(image, level=20.0, return_num=True, backend=backend)[1]
        < chseg.watershed(image, level=3.0, return_num=True, backend=backend)[1]
    )


def test_marker_watershed_bad_input(backend):
    image = np.random.default_rng(1).random((10, 12)).astype(np.float32)
    markers = np.zeros((10, 12), np.uint8)
    markers[2, 3] = 1
    with pytest.raises(ValueError, match="must be 0 when a marker image is given"):
        chseg.watershed(image, markers, level=1, backend=backend)
    with pytest.raises(ValueError, match="not negative"):
        chseg.watershed(image, level=-1, backend=backend)
    with pytest.raises(ValueError, match="whole number"):
        chseg.watershed((image * 9).astype(np.int16), level=0.5, backend=backend)
    with pytest.raises(ValueError, match="up to 32 bits"):
        chseg.watershed(image.astype(np.float64), markers, backend=backend)
    with pytest.raises(ValueError, match="watershed_line"):
        chseg.watershed(image, markers, watershed_line=True, backend=backend)
    with pytest.raises(ValueError, match="differs"):
        chseg.watershed(image, markers[:5], backend=backend)
    with pytest.raises(ValueError, match="does not fit"):
        chseg.watershed(image, markers.astype(np.int32) * 300, dtype=np.uint8, backend=backend)
    # a marker outside the mask only: nothing is reached
    mask = np.ones((10, 12), bool)
    mask[2, 3] = False
    assert (chseg.watershed(image, markers, mask=mask, backend=backend) == 0).all()
