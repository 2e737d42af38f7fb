"""chseg.slabs.filter_regions: the area filter of the alpha-tree (through the saliency-weighted graph's binary
partition tree, two hierarchies over slabs) and of the single-linkage tree, slab by slab, gathered, against
chseg.alpha_tree(...).filter_regions / chseg.single_linkage(...).filter_regions of the whole volume array by array
(both checked against Higra's filter_small_nodes_from_tree in test_trees.py), and their cuts label for label: 2D and
3D, every slab size, both connectivities, few and many grey levels, float weights, thin volumes, a store."""

import chseg
import chseg.slabs
import numpy as np
import pytest
from conftest import needs_cupy
from test_slab_hierarchy import smooth, thresholds
from test_slabs import assert_same, slab_sizes, spiral

host = chseg._arrays.host


def expected_of(volume, threshold, tree, full, backend):
    if tree == "alpha_tree":
        return chseg.alpha_tree(volume, fully_connected=full, backend=backend).filter_regions(threshold, "area")
    return chseg.single_linkage(volume, fully_connected=full, backend=backend).filter_regions(threshold, "area")


def check(volume, slab, threshold, tree, full, backend, store=None):
    expected = expected_of(volume, threshold, tree, full, backend)
    h = chseg.slabs.filter_regions(
        volume, slab, threshold, tree=tree, fully_connected=full, store=store, backend=backend
    )
    assert_same(h.gather(backend=backend), expected)
    for t in thresholds(expected):
        assert np.array_equal(h.cut(t), host(expected.cut(t))), (tree, slab, t)
    return h


CASES = [
    ((13, 11), False, 3, np.uint8),
    ((13, 11), True, 4, np.uint8),
    ((21, 9), False, 200, np.int16),
    ((8, 7, 6), False, 2, np.uint8),
    ((8, 7, 6), True, 4, np.uint16),
    ((7, 6, 5), True, 50, np.float32),
]


@pytest.mark.parametrize("tree", ["alpha_tree", "single_linkage"])
@pytest.mark.parametrize("shape, fully_connected, levels, dtype", CASES)
def test_filters_gathered_and_cut_are_the_whole_volumes(backend, tree, shape, fully_connected, levels, dtype):
    image = np.random.default_rng(61).integers(0, levels, shape).astype(dtype)
    if dtype == np.float32:
        image = image / np.float32(7)
    for slab in slab_sizes(shape[0]):
        for threshold in (2, 7, image.size // 3):
            check(image, slab, threshold, tree, fully_connected, backend)


def test_the_two_trees_filter_differently():
    """The alpha-tree's filter is not the single-linkage tree's (the binary trees differ inside flat zones): the
    slab runs follow each (a check that the cases above can tell them apart)."""
    image = np.random.default_rng(62).integers(0, 3, (12, 10)).astype(np.uint8)
    a = chseg.slabs.filter_regions(image, 4, 6, backend="cpu")
    s = chseg.slabs.filter_regions(image, 4, 6, tree="single_linkage", backend="cpu")
    assert any(not np.array_equal(a.cut(t), s.cut(t)) for t in (0, 1, 2))


def test_smooth_volume_spiral_and_thin_volumes(backend):
    for image, slab in ((smooth((10, 9, 8), 63), 3), (spiral(20), 3)):
        for full in (False, True):
            check(image, slab, 12, "alpha_tree", full, backend)
    for shape in ((1, 1), (1, 5), (5, 1), (3, 1, 1), (2, 3, 1)):
        image = (np.arange(np.prod(shape)) % 3).reshape(shape).astype(np.uint8)
        for tree in ("alpha_tree", "single_linkage"):
            check(image, 1, 2, tree, True, backend)


def test_store(tmp_path, monkeypatch):
    """Through a store: the saliencies and the closures go there and are removed; the filter is marked complete."""
    zarr = pytest.importorskip("zarr")
    from chseg import _slab_hierarchy as sh

    image = smooth((9, 8, 7), 64)
    monkeypatch.setattr(sh, "_HOLD_BYTES", 0)
    check(image, 2, 10, "alpha_tree", False, "cpu", store=tmp_path / "f")
    group = zarr.open_group(tmp_path / "f", mode="r")
    assert sorted(group.group_keys()) == [f"slab-00000{s}" for s in range(5)]
    opened = chseg.slabs.SlabHierarchy.open(tmp_path / "f")
    assert opened.attribute == {"filter_regions": {"tree": "alpha_tree", "attribute": "area", "threshold": 10.0}}
    expected = expected_of(image, 10, "alpha_tree", False, "cpu")
    assert_same(opened.gather(backend="cpu"), expected)


def test_bad_arguments():
    image = np.zeros((4, 4), np.uint8)
    with pytest.raises(ValueError, match="attribute"):
        chseg.slabs.filter_regions(image, 2, 3, "volume")
    with pytest.raises(ValueError, match="tree"):
        chseg.slabs.filter_regions(image, 2, 3, tree="component_tree")
    for threshold in (np.nan, "3", None, True):
        with pytest.raises(ValueError, match="threshold"):
            chseg.slabs.filter_regions(image, 2, threshold)
    with pytest.raises(ValueError, match="slab"):
        chseg.slabs.filter_regions(image, 0, 3)


@needs_cupy
def test_cupy_volume():
    import cupy

    image = smooth((10, 9, 8), 65)
    expected = expected_of(image, 9, "alpha_tree", True, "cpu")
    h = chseg.slabs.filter_regions(cupy.asarray(image), 4, 9, fully_connected=True)
    assert_same(h.gather(backend="cpu"), expected)
    for t in thresholds(expected):
        assert np.array_equal(h.cut(t), host(expected.cut(t)))


def test_dask_threads_uneven_chunks():
    """chseg.dask.filter_regions on the threaded scheduler: uneven chunks along the first axis, several along the
    others, both trees and connectivities; gathered and cut as the whole volume's."""
    da = pytest.importorskip("dask.array")
    import chseg.dask

    volume = smooth((17, 9, 8), 66)
    for full in (False, True):
        array = da.from_array(volume, chunks=((5, 1, 7, 4), (5, 4), 8))
        for tree in ("alpha_tree", "single_linkage"):
            expected = expected_of(volume, 15, tree, full, "cpu")
            h = chseg.dask.filter_regions(array, 15, tree=tree, fully_connected=full, backend="cpu")
            assert h.bounds == [(0, 5), (5, 6), (6, 13), (13, 17)]
            assert_same(h.gather(backend="cpu"), expected)
            for t in thresholds(expected):
                assert np.array_equal(h.cut(t), host(expected.cut(t)))
    with pytest.raises(ValueError, match="tree"):
        chseg.dask.filter_regions(da.zeros((4, 4), np.uint8), 3, tree="max_tree")


def test_dask_local_cluster_with_a_store(cluster_client, tmp_path):
    """On a LocalCluster of processes: the first run's saliencies and each slab's edges through a store the workers
    share; the store left with the slabs and the mark only."""
    da = pytest.importorskip("dask.array")
    zarr = pytest.importorskip("zarr")
    import chseg.dask

    volume = smooth((14, 12, 10), 67)
    expected = expected_of(volume, 20, "alpha_tree", True, "cpu")
    chseg.dask.filter_regions(
        da.from_array(volume, chunks=(4, 12, 10)), 20, fully_connected=True, store=tmp_path / "f", backend="cpu"
    )
    assert sorted(zarr.open_group(tmp_path / "f", mode="r").group_keys()) == [f"slab-00000{s}" for s in range(4)]
    opened = chseg.slabs.SlabHierarchy.open(tmp_path / "f")
    assert_same(opened.gather(backend="cpu"), expected)
    assert np.array_equal(opened.cut(2), host(expected.cut(2)))
