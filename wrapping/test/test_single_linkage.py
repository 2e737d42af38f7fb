"""Python tests of itk.CudaGraphToSingleLinkageDendrogramFilter, itk.CudaImageToSingleLinkageDendrogramFilter,
itk.Dendrogram and itk.DendrogramToLabelImageFilter through ITK's wrapping.

Oracles: SciPy's single linkage (scipy.cluster.hierarchy.linkage) on the same distances, and scipy.ndimage's
connected components of the flat zones. GPU cases skip without a CUDA device.
"""

import itk
import numpy as np
import pytest
import scipy.ndimage as ndi
from conftest import backend, has_gpu
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist


def graph_dendrogram(u, v, w, n, backend_name, tree=False):
    """The dendrogram of the graph (u[i], v[i], w[i]) on n vertices, from NumPy arrays."""
    to_ui = itk.PyVectorContainer[itk.UL, itk.UI].vector_container_from_array
    to_d = itk.PyVectorContainer[itk.UL, itk.D].vector_container_from_array
    cu, cv = to_ui(np.ascontiguousarray(u, np.uint32)), to_ui(np.ascontiguousarray(v, np.uint32))
    cw = to_d(np.ascontiguousarray(w, np.float64))
    f = itk.CudaGraphToSingleLinkageDendrogramFilter[itk.D].New()
    f.SetEdges(cu, cv, cw)
    f.SetNumberOfVertices(n)
    f.SetInputIsTree(tree)
    f.SetBackend(backend(backend_name))
    f.Update()
    return f.GetOutput()


GPU = has_gpu()
BACKENDS = ["CPU", pytest.param("CUDA", marks=pytest.mark.skipif(not GPU, reason="no CUDA device"))]


def array(container):
    return itk.array_from_vector_container(container)


@pytest.mark.parametrize("name", BACKENDS)
def test_linkage_matrix_equals_scipy(name):
    rng = np.random.default_rng(1)
    points = rng.random((400, 3))
    d = pdist(points)  # the same doubles for both
    u, v = np.triu_indices(len(points), 1)
    dendrogram = graph_dendrogram(u, v, d, len(points), name)
    z = array(dendrogram.ComputeLinkageMatrix()).reshape(-1, 4)
    expected = linkage(d, method="single")
    np.testing.assert_array_equal(np.sort(z[:, :2], axis=1), np.sort(expected[:, :2], axis=1))
    np.testing.assert_array_equal(z[:, 2:], expected[:, 2:])
    # Flat clusters equal SciPy's (as partitions).
    for k in (1, 5, 40):
        ours = array(dendrogram.ComputeClusters(k))
        theirs = fcluster(expected, k, criterion="maxclust")
        assert len(np.unique(ours)) == k
        assert len(set(zip(ours, theirs))) == k
    parents = array(dendrogram.GetParents())
    assert parents.dtype == np.uint32 and len(parents) == 2 * len(points) - 1
    assert parents[-1] == len(parents) - 1 and (parents[:-1] > np.arange(len(parents) - 1)).all()


@pytest.mark.parametrize("name", BACKENDS)
def test_tree_input_and_bad_input(name):
    # A path 0-1-2-3 with weights 3, 1, 2 (see the C++ test HandMadePath).
    d = graph_dendrogram([0, 1, 2], [1, 2, 3], [3.0, 1.0, 2.0], 4, name, tree=True)
    assert list(array(d.GetParents())) == [6, 4, 4, 5, 5, 6, 6]
    assert list(array(d.GetWeights())) == [1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="NaN"):
        graph_dendrogram([0, 1], [1, 2], [1.0, np.nan], 3, name)
    with pytest.raises(RuntimeError, match="not connected|not form a tree"):
        graph_dendrogram([0, 1, 2], [1, 0, 0], [1.0, 1.0, 1.0], 4, name)


@pytest.mark.parametrize("name", BACKENDS)
def test_image_dendrogram_of_signed_short(name):
    """A signed short image (a CT slice as read) gives the tree of the same values as float: the edge weights, the
    absolute differences, are the same numbers."""
    rng = np.random.default_rng(5)
    values = rng.integers(-1024, 1200, size=(23, 31)).astype(np.int16)

    def tree(array):
        image = itk.image_from_array(array)
        f = itk.CudaImageToSingleLinkageDendrogramFilter[type(image)].New(image)
        f.SetBackend(backend(name))
        f.Update()
        d = f.GetOutput()
        return (itk.array_from_vector_container(d.GetParents()), itk.array_from_vector_container(d.GetWeights()))

    (p_short, h_short), (p_float, h_float) = tree(values), tree(values.astype(np.float32))
    np.testing.assert_array_equal(p_short, p_float)
    np.testing.assert_array_equal(h_short, h_float)
    assert len(p_short) == 2 * values.size - 1


@pytest.mark.parametrize("name", BACKENDS)
def test_wide_node_ids_give_the_same_dendrogram(name):
    """WideNodeIds (64-bit node ids, which dendrograms of more than 2^31 - 1 vertices have): the same parents, ends
    and clusters, in the wide containers; the 32-bit accessors raise."""
    values = np.random.default_rng(4).integers(0, 9, size=(19, 27)).astype(np.uint8)
    image = itk.image_from_array(values)

    def build(wide):
        f = itk.CudaImageToSingleLinkageDendrogramFilter[type(image)].New(image)
        f.SetBackend(backend(name))
        f.SetWideNodeIds(wide)
        f.Update()
        return f.GetOutput()

    narrow, wide = build(False), build(True)
    assert not narrow.HasWideNodeIds() and wide.HasWideNodeIds()
    for get, get_wide in (("GetParents", "GetWideParents"), ("GetEdgeU", "GetWideEdgeU"), ("GetEdgeV", "GetWideEdgeV")):
        ours = array(getattr(wide, get_wide)())
        assert ours.dtype == np.uint64
        np.testing.assert_array_equal(ours, array(getattr(narrow, get)()))
        with pytest.raises(RuntimeError, match="64-bit node ids"):
            getattr(wide, get)()
    for k in (1, 7, 60):
        np.testing.assert_array_equal(array(wide.ComputeClusters(k)), array(narrow.ComputeClusters(k)))


@pytest.mark.parametrize("name", BACKENDS)
def test_image_dendrogram_cut_is_flat_zones(name):
    rng = np.random.default_rng(2)
    values = rng.integers(0, 4, size=(37, 53)).astype(np.uint8)
    image = itk.image_from_array(values)
    image.SetSpacing((0.5, 2.0))
    f = itk.CudaImageToSingleLinkageDendrogramFilter[type(image)].New(image)
    f.SetBackend(backend(name))
    cut = itk.DendrogramToLabelImageFilter[itk.Image[itk.UL, 2]].New()
    cut.SetInput(f.GetOutput())
    cut.SetDistance(0.0)
    cut.Update()
    labels = itk.array_from_image(cut.GetOutput())
    assert tuple(cut.GetOutput().GetSpacing()) == (0.5, 2.0)
    # Oracle: the 4-connected components of each grey level.
    expected = np.zeros(values.shape, np.int64)
    count = 0
    for level in range(4):
        lab, k = ndi.label(values == level)
        expected[lab > 0] = lab[lab > 0] + count
        count += k
    assert cut.GetObjectCount() == count
    assert len(set(zip(labels.ravel(), expected.ravel()))) == count
    # At the largest difference everything is one region; the README's keyword form gives the same.
    cut.SetDistance(3.0)
    cut.Update()
    assert cut.GetObjectCount() == 1
    again = itk.DendrogramToLabelImageFilter[itk.Image[itk.UL, 2]].New(Input=f.GetOutput(), Distance=0.0)
    again.Update()
    assert again.GetObjectCount() == count


def test_python_example_clusters_and_plots(tmp_path):
    import os
    import subprocess
    import sys

    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "single_linkage_points.py")
    done = subprocess.run([sys.executable, example, "--points", "4000"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "4000 points" in done.stdout and "3 clusters" in done.stdout
    assert (tmp_path / "single_linkage_points.png").stat().st_size > 10000
