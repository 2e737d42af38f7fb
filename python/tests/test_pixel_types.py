"""Every function on every pixel type it takes, 2D and 3D, against the oracles; and what it refuses."""

import chseg
import higra as hg
import numpy as np
import pytest
from conftest import neighbour_pairs, same_partition
from scipy import ndimage
from test_ift_waterpixels import minimax_costs
from test_watershed import regional_minima

INTEGERS = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64]
ALL = INTEGERS + [np.float32, np.float64]
SHAPES = [(21, 26), (6, 9, 8)]


def values(shape, dtype, high=9, seed=0):
    x = np.random.default_rng(seed).integers(0, high, shape)
    if np.dtype(dtype).kind == "i":
        x = x - high // 2  # negative values too
    return x.astype(dtype)


def graph_of(image):
    """Higra's graph of the image's face neighbours and its weights |a - b| (exact in float64 for these values)."""
    p, q = neighbour_pairs(image.shape, False)
    graph = hg.UndirectedGraph(image.size)
    graph.add_edges(p, q)
    flat = image.ravel().astype(np.float64)
    return graph, np.abs(flat[p] - flat[q])


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", SHAPES)
def test_watershed_every_type(backend, dtype, shape):
    image = values(shape, dtype, high=50)
    labels, count = chseg.watershed(image, return_num=True, backend=backend)
    minima, expected = regional_minima(image, False)
    assert count == expected
    assert same_partition(labels[minima > 0], minima[minima > 0])
    hierarchy = chseg.waterfall(image, backend=backend)
    assert np.array_equal(hierarchy.labels(0), labels) and hierarchy.region_counts[-1] == 1


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_alpha_tree_every_type(backend, dtype, shape):
    image = values(shape, dtype)
    tree = chseg.alpha_tree(image, backend=backend)
    graph, weights = graph_of(image)
    expected, _ = hg.quasi_flat_zone_hierarchy(graph, weights)
    assert hg.test_tree_isomorphism(tree.to_higra()[0], expected)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_single_linkage_every_type(backend, dtype, shape):
    image = values(shape, dtype)
    dendrogram = chseg.single_linkage(image, backend=backend)
    graph, weights = graph_of(image)
    expected, altitudes = hg.bpt_canonical(graph, weights)
    ours, our_altitudes = dendrogram.to_higra()
    assert np.array_equal(
        hg.saliency(ours, our_altitudes, leaf_graph=graph), hg.saliency(expected, altitudes, leaf_graph=graph)
    )


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_ift_every_type(backend, dtype, shape):
    weights = np.abs(values(shape, dtype, high=30)).astype(dtype)
    seeds = np.zeros(shape, np.uint32)
    seeds.ravel()[[0, weights.size // 2, weights.size - 1]] = [1, 2, 3]
    labels, cost = chseg.ift(weights, seeds, return_cost=True, backend=backend)
    assert np.array_equal(cost, minimax_costs(weights, seeds, False, "target"))
    assert labels.dtype == np.uint32 and set(np.unique(labels)) == {1, 2, 3}


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_waterpixels_every_type(backend, dtype, shape):
    image = values(shape, dtype, high=100)
    labels = chseg.waterpixels(image, 4, backend=backend)
    cells = int(np.prod([-(-s // 4) for s in shape]))
    assert labels.max() == cells and len(np.unique(labels)) == cells
    structure = ndimage.generate_binary_structure(len(shape), 1)
    assert all(ndimage.label(labels == k, structure)[1] == 1 for k in range(1, cells + 1))


@pytest.mark.parametrize("shape", SHAPES)
def test_label_every_type_2d_and_3d(backend, shape):
    for dtype in ALL:
        image = values(shape, dtype, high=3)
        expected, count = ndimage.label(image != 0)
        labels, num = chseg.label(image, return_num=True, backend=backend)
        assert num == count and same_partition(labels, expected), dtype


def test_refusals_name_the_problem(backend):
    with pytest.raises(ValueError, match="axes"):
        chseg.watershed(np.zeros((2, 3, 4, 5), np.float32), backend=backend)
    with pytest.raises(ValueError, match="axes"):
        chseg.label(np.zeros((2, 3, 4, 5), np.uint8), backend=backend)
    with pytest.raises(ValueError, match="empty"):
        chseg.alpha_tree(np.zeros((0, 5), np.uint8), backend=backend)
    nan = np.ones((6, 6), np.float32)
    nan[1, 2] = np.nan
    for function in (chseg.watershed, chseg.alpha_tree, chseg.single_linkage, chseg.waterpixels):
        with pytest.raises(ValueError, match="NaN"):
            function(nan, backend=backend)
    inf = np.ones((6, 6), np.float32)
    inf[2, 3] = -np.inf
    inf[2, 4] = -np.inf  # |inf - inf| is NaN: image graphs refuse infinities
    for function in (chseg.alpha_tree, chseg.single_linkage):
        with pytest.raises(ValueError, match="pixel 15 is infinite"):
            function(inf, backend=backend)
    with pytest.raises(ValueError, match="infinite value"):
        chseg.waterpixels(inf, backend=backend)
    huge = np.ones((6, 6), np.float64)
    huge[1, 1] = 1e300  # infinite as a float, which the waterpixels' gradient is computed in
    with pytest.raises(ValueError, match="infinite value .as float. at pixel index 7"):
        chseg.waterpixels(huge, backend=backend)
    assert chseg.watershed(inf, backend=backend).max() >= 1  # the watershed orders infinities as numbers
    with pytest.raises(ValueError, match="not supported|take"):
        chseg.watershed(np.zeros((4, 4), np.complex64), backend=backend)
    with pytest.raises(ValueError, match="int64"):
        chseg.waterpixels(np.zeros((4, 4), np.int64), backend=backend)
    with pytest.raises(ValueError, match="negative"):
        chseg.ift(-np.ones((4, 4), np.float32), np.eye(4, dtype=np.uint8), backend=backend)
