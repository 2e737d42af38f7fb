"""chseg.alpha_tree and the single-linkage dendrograms against Higra's quasi-flat zone hierarchy and canonical binary
partition tree on the same graphs, and against SciPy's single linkage."""

import itertools
import math
from fractions import Fraction

import chseg
import higra as hg
import numpy as np
import pytest
from conftest import needs_cupy, neighbour_pairs, raster_numbered, same_partition
from scipy.cluster import hierarchy
from scipy.spatial.distance import pdist


def higra_graph(shape, fully_connected):
    p, q = neighbour_pairs(shape, fully_connected)
    graph = hg.UndirectedGraph(int(np.prod(shape)))
    graph.add_edges(p, q)
    return graph, p, q


def edge_weights(image, p, q, channels=False, norm="linf"):
    flat = image.reshape(len(p) and -1, image.shape[-1]) if channels else image.ravel()
    d = np.abs(flat[p].astype(np.float64) - flat[q].astype(np.float64))
    if channels:
        d = d.max(axis=1) if norm == "linf" else d.sum(axis=1)
    return d


def saliency(tree, altitudes, graph):
    return hg.saliency(tree, altitudes, leaf_graph=graph)


CASES = [
    ((37, 41), False, np.uint8),
    ((37, 41), True, np.int16),
    ((9, 11, 13), False, np.uint16),
    ((7, 8, 9), True, np.float32),
]


@pytest.mark.parametrize("shape, fully_connected, dtype", CASES)
def test_alpha_tree_is_higras_quasi_flat_zone_hierarchy(backend, shape, fully_connected, dtype):
    image = np.random.default_rng(4).integers(0, 12, shape).astype(dtype)
    tree = chseg.alpha_tree(image, fully_connected=fully_connected, backend=backend)
    graph, p, q = higra_graph(shape, fully_connected)
    weights = edge_weights(image, p, q)
    expected, altitudes = hg.quasi_flat_zone_hierarchy(graph, weights)
    assert tree.num_nodes == expected.num_vertices() and tree.num_leaves == image.size
    ours, our_altitudes = tree.to_higra()
    assert hg.test_tree_isomorphism(ours, expected)
    assert np.array_equal(np.sort(our_altitudes), np.sort(altitudes))
    assert np.array_equal(saliency(ours, our_altitudes, graph), saliency(expected, altitudes, graph))
    assert np.array_equal(tree.areas(), hg.attribute_area(ours))
    for alpha in (0, 1, 3, 11):
        cut = tree.cut(alpha)
        assert cut.shape == shape and raster_numbered(cut)
        assert same_partition(cut, hg.labelisation_horizontal_cut_from_threshold(expected, altitudes, alpha))


def test_alpha_omega_cut_and_saliency(backend):
    image = np.random.default_rng(9).integers(0, 20, (30, 34)).astype(np.uint8)
    tree = chseg.alpha_tree(image, backend=backend)
    cut = tree.cut(4, omega=6)
    for region in range(1, cut.max() + 1):
        values = image[cut == region]
        assert values.max() - values.min() <= 6 or values.size == 1
    assert cut.max() >= tree.cut(4).max()
    sal = tree.saliency()
    graph, p, q = higra_graph(image.shape, False)
    ours, altitudes = tree.to_higra()
    edge_saliency = saliency(ours, altitudes, graph)
    # interpixel sample between p and q: the sum of their doubled coordinates / 2
    coords = lambda i: np.stack(np.unravel_index(i, image.shape), axis=1)  # noqa: E731
    between = coords(p) + coords(q)
    assert np.array_equal(sal[between[:, 0], between[:, 1]], edge_saliency.astype(np.float32))
    assert np.all(sal[::2, ::2] == 0)


def test_alpha_tree_of_channels(backend):
    image = np.random.default_rng(6).integers(0, 9, (3, 20, 24)).astype(np.uint8)
    tree = chseg.alpha_tree(image, channel_axis=0, distance="linf", backend=backend)
    graph, p, q = higra_graph((20, 24), False)
    weights = edge_weights(np.moveaxis(image, 0, -1), p, q, channels=True, norm="linf")
    expected, altitudes = hg.quasi_flat_zone_hierarchy(graph, weights)
    assert hg.test_tree_isomorphism(tree.to_higra()[0], expected)


@pytest.mark.parametrize("shape, fully_connected, dtype", CASES)
def test_alpha_tree_with_wide_node_ids_is_the_same_tree(backend, shape, fully_connected, dtype):
    """64-bit node ids (the parents of trees of more than 2^32 - 1 nodes, asked for on small images): the same tree,
    cuts, ranges, areas, saliency and filters as with 32-bit ids."""
    image = np.random.default_rng(8).integers(0, 12, shape).astype(dtype)
    narrow = chseg.alpha_tree(image, fully_connected=fully_connected, backend=backend)
    wide = chseg.alpha_tree(image, fully_connected=fully_connected, wide_node_ids=True, backend=backend)
    assert narrow.parents.dtype == np.uint32 and wide.parents.dtype == np.uint64
    assert np.array_equal(wide.parents, narrow.parents) and np.array_equal(wide.levels, narrow.levels)
    assert np.array_equal(wide.areas(), narrow.areas()) and np.array_equal(wide.ranges(), narrow.ranges())
    for alpha, omega in ((0, np.inf), (2, np.inf), (3, 4), (11, np.inf)):
        cut = wide.cut(alpha, omega=omega)
        assert cut.dtype == np.uint64 and np.array_equal(cut, narrow.cut(alpha, omega=omega))
    assert np.array_equal(wide.saliency(), narrow.saliency())
    ours, expected = wide.filter_regions(6), narrow.filter_regions(6)
    assert np.array_equal(ours.parents, expected.parents) and np.array_equal(ours.weights, expected.weights)


@pytest.mark.parametrize("shape, fully_connected", [((31, 29), False), ((31, 29), True), ((6, 7, 8), True)])
def test_image_single_linkage_is_higras_binary_partition_tree(backend, shape, fully_connected):
    image = np.random.default_rng(8).integers(0, 30, shape).astype(np.int32)
    dendrogram = chseg.single_linkage(image, fully_connected=fully_connected, backend=backend)
    n = image.size
    assert dendrogram.num_nodes == 2 * n - 1
    assert np.all(np.diff(dendrogram.weights) >= 0)
    graph, p, q = higra_graph(shape, fully_connected)
    weights = edge_weights(image, p, q)
    expected, altitudes = hg.bpt_canonical(graph, weights)
    ours, our_altitudes = dendrogram.to_higra()
    assert np.array_equal(saliency(ours, our_altitudes, graph), saliency(expected, altitudes, graph))
    for d in (0, 2, 5):
        assert same_partition(dendrogram.cut(d), hg.labelisation_horizontal_cut_from_threshold(expected, altitudes, d))
    for k in (1, 2, 17):
        clusters = dendrogram.clusters(k)
        assert clusters.shape == shape and clusters.max() == k and raster_numbered(clusters)
    # the end vertices are neighbours joined by an edge of the recorded weight
    flat = image.ravel().astype(np.float64)
    assert np.array_equal(np.abs(flat[dendrogram.u] - flat[dendrogram.v]), dendrogram.weights)


def test_graph_single_linkage_matches_scipy():
    rng = np.random.default_rng(12)
    points = rng.random((60, 2))
    n = len(points)
    u, v = np.triu_indices(n, 1)
    w = np.linalg.norm(points[u] - points[v], axis=1)
    for backend in ("cpu",) + (("cuda",) if chseg.device_count() else ()):
        dendrogram = chseg.single_linkage_graph(u, v, w, n, backend=backend)
        z = dendrogram.linkage_matrix()
        expected = hierarchy.linkage(pdist(points), method="single")
        assert hierarchy.is_valid_linkage(z)
        assert np.array_equal(z[:, 2], expected[:, 2])
        assert np.array_equal(hierarchy.cophenet(z), hierarchy.cophenet(expected))
        for k in (2, 5, 30):
            assert same_partition(dendrogram.clusters(k), hierarchy.fcluster(expected, k, criterion="maxclust"))


@pytest.mark.parametrize(
    "shape, fully_connected", [((31, 29), False), ((31, 29), True), ((6, 7, 8), False), ((6, 7, 8), True)]
)
def test_single_linkage_with_wide_node_ids_is_the_same_dendrogram(backend, shape, fully_connected):
    """64-bit node ids (the dendrograms of more than 2^31 - 1 vertices, asked for on small images and graphs): the
    same arrays, cuts, clusters, areas, linkage matrix, hierarchies by attribute and node attributes as with 32-bit
    ids (the hierarchies keep the input's width)."""
    image = np.random.default_rng(9).integers(0, 12, shape).astype(np.uint8)
    narrow = chseg.single_linkage(image, fully_connected=fully_connected, backend=backend)
    wide = chseg.single_linkage(image, fully_connected=fully_connected, wide_node_ids=True, backend=backend)
    assert narrow.parents.dtype == np.uint32 and wide.parents.dtype == np.uint64 and wide.u.dtype == np.uint64
    for name in ("parents", "weights", "edges", "u", "v"):
        assert np.array_equal(getattr(wide, name), getattr(narrow, name)), name
    for d in (0, 2, 5):
        assert np.array_equal(wide.cut(d), narrow.cut(d))
    for k in (1, 2, 17):
        assert np.array_equal(wide.clusters(k), narrow.clusters(k))
    assert np.array_equal(wide.areas(), narrow.areas())
    assert np.array_equal(wide.linkage_matrix(), narrow.linkage_matrix())
    for attribute in ("area", "volume", "dynamics"):
        ours, expected = wide.watershed_hierarchy(attribute), narrow.watershed_hierarchy(attribute)
        assert ours.parents.dtype == np.uint64 and expected.parents.dtype == np.uint32
        for name in ("parents", "weights", "edges", "u", "v"):
            assert np.array_equal(getattr(ours, name), getattr(expected, name)), (attribute, name)
    for attribute, threshold in (("area", 5), ("volume", 20), ("height", 3)):
        ours, expected = wide.filter_regions(threshold, attribute), narrow.filter_regions(threshold, attribute)
        assert ours.parents.dtype == np.uint64
        for name in ("parents", "weights", "edges", "u", "v"):
            assert np.array_equal(getattr(ours, name), getattr(expected, name)), (attribute, name)
    for attribute in ("area", "volume", "height", "dynamics"):
        assert np.array_equal(wide.attribute(attribute), narrow.attribute(attribute)), attribute
    u, v = neighbour_pairs(shape, fully_connected)
    w = np.abs(image.ravel()[u].astype(np.float64) - image.ravel()[v])
    graph_narrow = chseg.single_linkage_graph(u, v, w, image.size, backend=backend)
    graph_wide = chseg.single_linkage_graph(u, v, w, image.size, wide_node_ids=True, backend=backend)
    assert graph_wide.parents.dtype == np.uint64
    for name in ("parents", "weights", "edges", "u", "v"):
        assert np.array_equal(getattr(graph_wide, name), getattr(graph_narrow, name)), name


def test_graph_single_linkage_errors():
    u = np.array([0, 1], np.uint32)
    v = np.array([1, 2], np.uint32)
    with pytest.raises(ValueError):
        chseg.single_linkage_graph(u, v, np.array([1.0, np.nan]), 3, backend="cpu")
    with pytest.raises(ValueError):
        chseg.single_linkage_graph(u, v, np.array([1.0, 2.0]), 4, backend="cpu")  # not connected
    with pytest.raises(ValueError):
        chseg.single_linkage_graph(u, v, np.array([1.0]), 3, backend="cpu")


# --- hierarchies by attribute: Higra's watershed hierarchies and attribute filters, array by array ------------------


def module_order_graph(image, fully_connected):
    """Higra's graph of the image with its edges in the module's order (pixel, then the neighbour's raster offset), so
    that ties between equal weights break alike, and the weights |a - b|."""
    p, q = neighbour_pairs(image.shape, fully_connected)
    lo, hi = np.minimum(p, q), np.maximum(p, q)
    offset = hi - lo
    slot = np.searchsorted(np.unique(offset), offset)
    order = np.argsort(lo * (slot.max() + 1) + slot, kind="stable")
    lo, hi = lo[order], hi[order]
    graph = hg.UndirectedGraph(image.size)
    graph.add_edges(lo, hi)
    flat = image.ravel().astype(np.float64)
    return graph, np.abs(flat[lo] - flat[hi])


HIERARCHY_CASES = [((23, 31), False, 6), ((23, 31), True, 9), ((5, 6, 7), False, 5), ((40, 3), False, 40)]


@pytest.mark.parametrize("shape, fully_connected, levels", HIERARCHY_CASES)
def test_dendrogram_is_higras_binary_partition_tree_array_by_array(backend, shape, fully_connected, levels):
    image = np.random.default_rng(21).integers(0, levels, shape).astype(np.uint8)
    dendrogram = chseg.single_linkage(image, fully_connected=fully_connected, backend=backend)
    graph, weights = module_order_graph(image, fully_connected)
    tree, altitudes = hg.bpt_canonical(graph, weights)
    assert np.array_equal(dendrogram.parents, tree.parents())
    assert np.array_equal(dendrogram.weights, altitudes[image.size :])
    for name, expected in (
        ("area", hg.attribute_area(tree)),
        ("volume", hg.attribute_volume(tree, altitudes)),
        ("height", hg.attribute_height(tree, altitudes)),
        ("dynamics", hg.attribute_dynamics(tree, altitudes)),
    ):
        ours = dendrogram.attribute(name)
        start = image.size if name == "dynamics" else 0  # Higra's dynamics of a leaf is its minimum's; ours 0
        assert np.array_equal(ours[start:], expected[start:]), name


WATERSHEDS = {
    "area": hg.watershed_hierarchy_by_area,
    "volume": hg.watershed_hierarchy_by_volume,
    "dynamics": hg.watershed_hierarchy_by_dynamics,
}


@pytest.mark.parametrize("shape, fully_connected, levels", HIERARCHY_CASES)
@pytest.mark.parametrize("attribute", sorted(WATERSHEDS))
def test_watershed_hierarchy_is_higras(backend, shape, fully_connected, levels, attribute):
    image = np.random.default_rng(22).integers(0, levels, shape).astype(np.uint8)
    ours = chseg.watershed_hierarchy(image, attribute, fully_connected=fully_connected, backend=backend)
    graph, weights = module_order_graph(image, fully_connected)
    tree, altitudes = WATERSHEDS[attribute](graph, weights, canonize_tree=False)
    assert np.array_equal(ours.parents, tree.parents())
    assert np.array_equal(ours.weights, altitudes[image.size :])
    for t in np.unique(altitudes)[:4]:
        assert same_partition(ours.cut(t), hg.labelisation_horizontal_cut_from_threshold(tree, altitudes, t))


def test_watershed_hierarchy_of_a_smooth_relief_is_higras(backend):
    """A relief with many minima and long merges (the kind of image the hierarchy is for), 8-connected."""
    y, x = np.mgrid[0:48, 0:64]
    noise = np.random.default_rng(23).integers(0, 4, y.shape)
    image = (60 + 30 * np.sin(x / 5.0) * np.cos(y / 4.0) + noise).astype(np.uint16)
    graph, weights = module_order_graph(image, True)
    for attribute, function in WATERSHEDS.items():
        ours = chseg.watershed_hierarchy(image, attribute, fully_connected=True, backend=backend)
        tree, altitudes = function(graph, weights, canonize_tree=False)
        assert np.array_equal(ours.parents, tree.parents()), attribute
        assert np.array_equal(ours.weights, altitudes[image.size :]), attribute


def exact_volumes(parents, weights):
    """The volume as include/chs/AttributeHierarchy.h defines it, in Python's fractions: each node's sum of the terms
    area(y) * (alt(parent(y)) - alt(y)) over its subtree, exact, then rounded once (float() of a Fraction is correctly
    rounded); weights spanning more than 222 bits first rounded to multiples of 2^(T - 222), ties to even."""
    n = len(weights) + 1
    alt = [Fraction(0)] * n + [Fraction(float(w)) for w in weights]
    nonzero = [Fraction(float(w)) for w in weights if w != 0]
    if nonzero:

        def low_bit(f):
            num = abs(f.numerator)
            return (num & -num).bit_length() - 1 - (f.denominator.bit_length() - 1)

        low = min(low_bit(f) for f in nonzero)
        top = max(math.frexp(abs(float(w)))[1] for w in (weights[0], weights[-1]))  # |w| < 2^top
        if top - low > 222:
            unit = Fraction(2) ** (top - 222)
            alt = alt[:n] + [round(a / unit) * unit for a in alt[n:]]
    area = [1] * n + [0] * (n - 1)
    volume = [Fraction(0)] * (2 * n - 1)
    for x in range(2 * n - 1):
        if x >= n:
            volume[x] += area[x] * (alt[parents[x]] - alt[x])
        if x != parents[x]:
            area[parents[x]] += area[x]
            if x >= n:
                volume[parents[x]] += volume[x]
    return np.array([float(v) for v in volume])


def spread_weights(count, span, seed):
    """Weights that are not whole numbers, spread over `span` binary orders of magnitude (up to 2^6)."""
    rng = np.random.default_rng(seed)
    return (rng.random(count) + 0.1) * 2.0 ** rng.integers(-span, 7, count).astype(np.float64)


def float_volume_inputs(backend):
    """(dendrogram, Higra graph, edge weights) of a float32 relief (128-bit fixed point), a graph whose weights span
    120 bits (256 bits) and one whose weights span 400 (rounded to 2^(T - 222) first)."""
    image = (np.random.default_rng(26).random((27, 33)) * 7).astype(np.float32)
    graph, _ = module_order_graph(image, False)
    p, q = graph.edge_list()
    flat = image.ravel()
    weights = np.abs(flat[p] - flat[q]).astype(np.float64)  # |a - b| in float32, as the module computes it
    yield chseg.single_linkage(image, backend=backend), graph, weights
    for span, seed in ((120, 28), (400, 29)):
        u, v = neighbour_pairs((19, 23), True)
        weights = spread_weights(len(u), span, seed)
        graph = hg.UndirectedGraph(19 * 23)
        graph.add_edges(u, v)
        yield chseg.single_linkage_graph(u, v, weights, 19 * 23, backend=backend), graph, weights


def test_float_volumes_are_exact_sums_rounded_once(backend):
    """The definition against Python's fractions: node volumes, the watershed hierarchy by volume (Higra's
    watershed_hierarchy_by_attribute given the exact volumes) and the volume filter, array by array."""

    def exact(tree, altitudes):
        return exact_volumes(tree.parents(), altitudes[tree.num_leaves() :])

    for dendrogram, graph, weights in float_volume_inputs(backend):
        expected = exact_volumes(dendrogram.parents, dendrogram.weights)
        assert np.array_equal(dendrogram.attribute("volume"), expected)
        tree, altitudes = hg.watershed_hierarchy_by_attribute(graph, weights, exact, canonize_tree=False)
        ours = dendrogram.watershed_hierarchy("volume")
        assert np.array_equal(ours.parents, tree.parents())
        assert np.array_equal(ours.weights, altitudes[tree.num_leaves() :])
        bpt, bpt_altitudes = hg.bpt_canonical(graph, weights)
        threshold = np.median(expected[len(dendrogram.weights) + 1 :])

        def non_relevant(t, a):
            return hg.accumulate_parallel(t, exact(t, a), hg.Accumulators.min) < threshold

        tree, altitudes = hg.filter_non_relevant_node_from_tree(
            bpt, bpt_altitudes.copy(), non_relevant, graph, canonize_tree=False
        )
        ours = dendrogram.filter_regions(threshold, "volume")
        assert np.array_equal(ours.parents, tree.parents())
        assert np.array_equal(ours.weights, altitudes[tree.num_leaves() :])


def test_float_volumes_are_within_the_bound_of_higras_sums():
    """Higra sums the volumes in double from the leaves up: within (2h + 3) units of 2^-53 of the exact volume, h the
    height of the node's subtree, so within (2h + 4) of ours; equal where every sum is exact (integer weights, the
    tests above). Not for weights spanning more than 222 bits, rounded first (the third input)."""
    differ = 0
    for dendrogram, graph, weights in itertools.islice(float_volume_inputs("cpu"), 2):
        tree, altitudes = hg.bpt_canonical(graph, weights)
        assert np.array_equal(dendrogram.parents, tree.parents())
        ours, theirs = dendrogram.attribute("volume"), hg.attribute_volume(tree, altitudes)
        height = np.zeros(tree.num_vertices(), np.int64)
        for x in range(tree.num_leaves(), tree.num_vertices()):
            height[x] = 1 + max(height[c] for c in tree.children(x))
        assert np.all(np.abs(ours - theirs) <= (2 * height + 4) * 2.0**-53 * ours)
        differ += int(np.count_nonzero(ours != theirs))
    assert differ > 0  # the inputs tell the two orders of summation apart


@pytest.mark.parametrize("shape, fully_connected, levels", HIERARCHY_CASES)
def test_attribute_filters_are_higras(backend, shape, fully_connected, levels):
    image = np.random.default_rng(24).integers(0, levels, shape).astype(np.uint8)
    dendrogram = chseg.single_linkage(image, fully_connected=fully_connected, backend=backend)
    graph, weights = module_order_graph(image, fully_connected)
    tree, altitudes = hg.bpt_canonical(graph, weights)
    for threshold in (2, 5, 30):
        # (Higra writes its zeros into the altitudes it is given: a copy each time)
        expected, expected_altitudes = hg.filter_small_nodes_from_tree(
            tree, altitudes.copy(), threshold, graph, canonize_tree=False
        )
        ours = dendrogram.filter_regions(threshold)
        assert np.array_equal(ours.parents, expected.parents())
        assert np.array_equal(ours.weights, expected_altitudes[image.size :])
    for name, attribute in (("volume", hg.attribute_volume), ("height", hg.attribute_height)):
        for threshold in (1, 4):

            def non_relevant(t, a, attribute=attribute, threshold=threshold):
                return hg.accumulate_parallel(t, attribute(t, a), hg.Accumulators.min) < threshold

            expected, expected_altitudes = hg.filter_non_relevant_node_from_tree(
                tree, altitudes.copy(), non_relevant, graph, canonize_tree=False
            )
            ours = dendrogram.filter_regions(threshold, name)
            assert np.array_equal(ours.parents, expected.parents()), (name, threshold)
            assert np.array_equal(ours.weights, expected_altitudes[image.size :]), (name, threshold)


@pytest.mark.parametrize("shape, fully_connected, levels", HIERARCHY_CASES + [((6, 5, 7), True, 4)])
def test_alpha_tree_filters_are_higras(backend, shape, fully_connected, levels):
    """Higra filters a tree that is not binary through the binary partition tree of the graph weighted by the tree's
    saliency; AlphaTree.filter_regions does the same on the module's engines."""
    image = np.random.default_rng(27).integers(0, levels, shape).astype(np.uint8)
    tree = chseg.alpha_tree(image, fully_connected=fully_connected, backend=backend)
    graph, weights = module_order_graph(image, fully_connected)
    qfz, altitudes = hg.quasi_flat_zone_hierarchy(graph, weights)
    for threshold in (2, 6, 40):
        expected, expected_altitudes = hg.filter_small_nodes_from_tree(
            qfz, altitudes.copy(), threshold, graph, canonize_tree=False
        )
        ours = tree.filter_regions(threshold)
        assert np.array_equal(ours.parents, expected.parents()), threshold
        assert np.array_equal(ours.weights, expected_altitudes[image.size :]), threshold
        for t in np.unique(expected_altitudes)[:3]:
            assert same_partition(
                ours.cut(t), hg.labelisation_horizontal_cut_from_threshold(expected, expected_altitudes, t)
            )
    for name, attribute in (("volume", hg.attribute_volume), ("height", hg.attribute_height)):

        def non_relevant(t, a, attribute=attribute):
            return hg.accumulate_parallel(t, attribute(t, a), hg.Accumulators.min) < 3

        expected, expected_altitudes = hg.filter_non_relevant_node_from_tree(
            qfz, altitudes.copy(), non_relevant, graph, canonize_tree=False
        )
        ours = tree.filter_regions(3, name)
        assert np.array_equal(ours.parents, expected.parents()), name
        assert np.array_equal(ours.weights, expected_altitudes[image.size :]), name
    # the tree's edges are image edge indices pixel * K + slot, the pixel being the smaller end
    slots = {(2, False): 2, (2, True): 4, (3, False): 3, (3, True): 13}[(len(shape), fully_connected)]
    assert np.array_equal(ours.edges // slots, ours.u)


def test_hierarchies_by_attribute_bad_arguments():
    dendrogram = chseg.single_linkage(np.arange(12, dtype=np.uint8).reshape(3, 4), backend="cpu")
    with pytest.raises(ValueError):
        dendrogram.watershed_hierarchy("height")
    with pytest.raises(ValueError):
        dendrogram.filter_regions(3, "dynamics")
    with pytest.raises(ValueError):
        dendrogram.filter_regions(float("nan"))
    with pytest.raises(ValueError):
        dendrogram.attribute("perimeter")


@needs_cupy
def test_watershed_hierarchy_of_cupy_arrays_stays_on_the_device():
    import cupy

    image = np.random.default_rng(25).integers(0, 9, (30, 40)).astype(np.uint8)
    expected = chseg.watershed_hierarchy(image, "volume", backend="cpu")
    ours = chseg.watershed_hierarchy(cupy.asarray(image), "volume")
    assert isinstance(ours.parents, cupy.ndarray) and isinstance(ours.weights, cupy.ndarray)
    assert np.array_equal(ours.parents.get(), expected.parents)
    assert np.array_equal(ours.weights.get(), expected.weights)
    filtered = ours.filter_regions(6)
    assert np.array_equal(filtered.parents.get(), expected.filter_regions(6).parents)


@needs_cupy
def test_alpha_tree_filter_of_cupy_arrays_stays_on_the_device():
    """AlphaTree.filter_regions of a tree on the device (CuPy in): CuPy arrays out, equal to the CPU reference's."""
    import cupy

    for shape, full in (((30, 40), False), ((9, 10, 11), True)):
        image = np.random.default_rng(26).integers(0, 6, shape).astype(np.uint8)
        expected = chseg.alpha_tree(image, fully_connected=full, backend="cpu").filter_regions(5, "volume")
        ours = chseg.alpha_tree(cupy.asarray(image), fully_connected=full).filter_regions(5, "volume")
        assert isinstance(ours.parents, cupy.ndarray) and isinstance(ours.edges, cupy.ndarray)
        for name in ("parents", "weights", "edges", "u", "v"):
            assert np.array_equal(getattr(ours, name).get(), getattr(expected, name)), (shape, name)
