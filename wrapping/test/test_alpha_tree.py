"""Python tests of itk.CudaImageToAlphaTreeFilter, itk.AlphaTree, itk.AlphaTreeCutImageFilter and
itk.AlphaTreeSaliencyImageFilter through ITK's wrapping.

Oracles: Higra's quasi-flat-zone hierarchy (where the `higra` package is installed): the same number of nodes and the
same partition at every level, and the same merge level (saliency) on every edge; scipy.ndimage's connected
components of the flat zones for the cut at alpha 0. GPU cases skip without a CUDA device.
"""

import itk
import numpy as np
import pytest
import scipy.ndimage as ndi
from conftest import backend, has_gpu


def alpha_tree(array, backend_name, full=False, algorithm=None, wide=False):
    image = itk.image_from_array(np.ascontiguousarray(array))
    f = itk.CudaImageToAlphaTreeFilter[type(image)].New()
    f.SetInput(image)
    f.SetFullyConnected(full)
    f.SetBackend(backend(backend_name))
    f.SetWideNodeIds(wide)
    if algorithm:
        f.SetAlgorithm(getattr(itk.CudaAlphaTreeEnums, "Algorithm_" + algorithm))
    f.Update()
    return f.GetOutput()


GPU = has_gpu()
BACKENDS = ["CPU", pytest.param("CUDA", marks=pytest.mark.skipif(not GPU, reason="no CUDA device"))]


def array(container):
    return itk.array_from_vector_container(container)


def same_partition(a, b):
    """Whether two labelings of the same pixels are the same partition."""
    a, b = np.ravel(a), np.ravel(b)
    pairs = np.unique(np.stack([a, b]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


def images():
    rng = np.random.default_rng(3)
    smooth = ndi.uniform_filter(rng.random((37, 53)), 5)
    return {
        "uint8-few-levels": rng.integers(0, 6, (31, 47)).astype(np.uint8),
        "uint8-smooth": ((smooth - smooth.min()) / np.ptp(smooth) * 255).astype(np.uint8),
        "uint16": rng.integers(0, 5000, (29, 41)).astype(np.uint16),
        "int16-ct": rng.integers(-1024, 1500, (27, 39)).astype(np.int16),
        "float-quarters": (rng.integers(0, 40, (23, 35)) / 4).astype(np.float32),
        "volume": rng.integers(0, 8, (9, 11, 13)).astype(np.uint8),
    }


CASES = [(name, full) for name in images() for full in (False, True) if not (name == "volume" and full)]


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("case,full", CASES)
def test_same_hierarchy_as_higra(name, case, full):
    hg = pytest.importorskip("higra")
    image = images()[case]
    tree = alpha_tree(image, name, full)
    parents, levels = array(tree.GetParents()), array(tree.GetLevels())
    n = image.size
    assert tree.GetNumberOfLeaves() == n and len(parents) == len(levels)

    if image.ndim == 2:
        graph = hg.get_8_adjacency_graph(image.shape) if full else hg.get_4_adjacency_graph(image.shape)
    else:
        graph = hg.get_6_adjacency_graph(image.shape)
    weights = hg.weight_graph(graph, image.astype(np.float64), hg.WeightFunction.L1)
    htree, altitudes = hg.quasi_flat_zone_hierarchy(graph, weights)
    assert htree.num_vertices() == len(parents)
    np.testing.assert_array_equal(np.sort(altitudes), np.sort(levels))
    for alpha in np.unique(altitudes):
        expected = hg.labelisation_horizontal_cut_from_threshold(htree, altitudes, alpha)
        labels = array(tree.ComputeLabels(float(alpha)))
        assert same_partition(labels, expected), f"alpha {alpha}"


@pytest.mark.parametrize("name", BACKENDS)
def test_saliency_equals_higra_on_every_edge(name):
    hg = pytest.importorskip("higra")
    image = images()["uint8-smooth"]
    tree = alpha_tree(image, name)
    s = itk.AlphaTreeSaliencyImageFilter[itk.Image[itk.F, 2]].New()
    s.SetInput(tree)
    s.Update()
    saliency = itk.array_from_image(s.GetOutput())
    assert saliency.shape == (2 * image.shape[0] - 1, 2 * image.shape[1] - 1)

    graph = hg.get_4_adjacency_graph(image.shape)
    weights = hg.weight_graph(graph, image.astype(np.float64), hg.WeightFunction.L1)
    htree, altitudes = hg.quasi_flat_zone_hierarchy(graph, weights)
    expected = hg.saliency(htree, altitudes)
    sources, targets = graph.edge_list()
    ys, xs = np.divmod(sources, image.shape[1])
    yt, xt = np.divmod(targets, image.shape[1])
    np.testing.assert_array_equal(saliency[ys + yt, xs + xt], expected)
    assert not saliency[::2, ::2].any(), "pixels sit at even positions with value 0"


@pytest.mark.parametrize("name", BACKENDS)
def test_cut_at_zero_is_the_flat_zones(name):
    image = images()["uint8-few-levels"]
    tree = alpha_tree(image, name)
    cut = itk.AlphaTreeCutImageFilter[itk.Image[itk.UL, 2]].New()
    cut.SetInput(tree)
    cut.SetAlpha(0.0)
    cut.SetBackend(backend(name))
    cut.Update()
    labels = itk.array_from_image(cut.GetOutput())
    expected = np.zeros(image.shape, np.int64)
    for value in np.unique(image):
        components, count = ndi.label(image == value)
        expected[components > 0] = components[components > 0] + int(value) * image.size
    assert same_partition(labels, expected)
    assert cut.GetObjectCount() == labels.max() == len(np.unique(expected))
    first = [np.flatnonzero(labels.ravel() == k)[0] for k in range(1, int(labels.max()) + 1)]
    assert first == sorted(first), "labels in raster order of each region's first pixel"


def test_areas_value_ranges_and_alpha_omega():
    image = images()["uint8-few-levels"]
    tree = alpha_tree(image, "CPU")
    areas, ranges = array(tree.ComputeAreas()), array(tree.GetValueRanges())
    assert areas[-1] == image.size and ranges[-1] == image.max() - image.min()
    assert (areas[: image.size] == 1).all() and (ranges[: image.size] == 0).all()
    # omega 0: the flat zones, whatever alpha.
    flat = array(tree.ComputeLabels(0.0))
    assert same_partition(array(tree.ComputeLabels(3.0, 0.0)), flat)
    # A larger omega can only merge.
    coarse = array(tree.ComputeLabels(3.0, 2.0))
    assert len(np.unique(coarse)) <= len(np.unique(flat))


@pytest.mark.skipif(not GPU, reason="no CUDA device")
@pytest.mark.parametrize("algorithm", ["InsertAllEdges", "SkipRedundantEdges", "SpanningTree", "LevelSynchronous"])
def test_every_cuda_algorithm_gives_the_cpu_tree(algorithm):
    image = images()["uint16"]
    cpu = alpha_tree(image, "CPU", True)
    gpu = alpha_tree(image, "CUDA", True, algorithm)
    np.testing.assert_array_equal(array(gpu.GetParents()), array(cpu.GetParents()))
    np.testing.assert_array_equal(array(gpu.GetLevels()), array(cpu.GetLevels()))


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_wide_node_ids_give_the_same_tree(backend_name):
    """64-bit node ids (the parents of trees of more than 2^32 - 1 nodes), asked for on a small image."""
    image = images()["uint8-few-levels"]
    narrow = alpha_tree(image, "CPU", True)
    wide = alpha_tree(image, backend_name, True, wide=True)
    assert wide.HasWideNodeIds() and not narrow.HasWideNodeIds()
    parents = array(wide.GetWideParents())
    assert parents.dtype == np.uint64
    np.testing.assert_array_equal(parents, array(narrow.GetParents()))
    np.testing.assert_array_equal(array(wide.GetLevels()), array(narrow.GetLevels()))
    np.testing.assert_array_equal(array(wide.ComputeLabels(2.0)), array(narrow.ComputeLabels(2.0)))
    with pytest.raises(RuntimeError, match="64-bit node ids"):
        wide.GetParents()


@pytest.mark.skipif(not GPU, reason="no CUDA device")
def test_level_synchronous_needs_integer_pixels():
    with pytest.raises(RuntimeError, match="level-synchronous construction needs 8-bit or 16-bit integer"):
        alpha_tree(images()["float-quarters"], "CUDA", False, "LevelSynchronous")


def test_bad_input_raises():
    image = np.ones((4, 5), np.float32)
    image[2, 3] = np.nan
    with pytest.raises(RuntimeError, match="NaN"):
        alpha_tree(image, "CPU")
