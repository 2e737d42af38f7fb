"""SlabHierarchy.node_attributes: the area, volume, height and dynamics of every node of a hierarchy over slabs (single
linkage, watershed hierarchies by area, volume and dynamics) against Dendrogram.attribute of the whole volume's
dendrogram (itself compared with Higra's attributes in test_trees.py), node by node: 2D and 3D, slabs of one layer
to all of them, both connectivities, few and many grey levels, float weights, regions across many slabs, a plateau
through every slab; held and through a store (closures too), a rerun, a failed run, bad names."""

import chseg
import chseg.slabs
import numpy as np
import pytest
from test_slab_hierarchy import CASES, expected_of, smooth
from test_slabs import slab_sizes, spiral

host = chseg._arrays.host
NAMES = ("area", "volume", "height", "dynamics")


def whole_numbers(dendrogram):
    w = host(dendrogram.weights)
    return bool((w == np.floor(w)).all())


def assert_nodes(h, expected, names):
    """Each slab's nodes (its edges) have the attributes of the same nodes of the whole dendrogram."""
    n = int(np.prod(h.shape))
    edges = host(expected.edges).astype(np.int64)
    order = np.argsort(edges)
    seen = 0
    for s in range(h.num_slabs):
        part = h.part(s)
        rank = order[np.searchsorted(edges[order], part["edge"])]
        assert np.array_equal(edges[rank], part["edge"])
        for name in names:
            assert part[name].dtype == np.float64
            assert np.array_equal(part[name], expected.attribute(name)[n + rank]), (s, name)
        seen += rank.size
    assert seen == n - 1  # every internal node once


def check(volume, slabs, full, backend, expected):
    for attribute, dendrogram in expected.items():
        names = NAMES if whole_numbers(dendrogram) else ("area", "height", "dynamics")
        for slab in slabs:
            h = chseg.slabs.hierarchy(volume, slab, attribute, fully_connected=full, backend=backend)
            assert h.node_attributes(names, backend=backend) is h and h.node_names == names
            assert_nodes(h, dendrogram, names)
            if slab == slabs[0]:  # without the dynamics (the closures' runs merged, depths kept)
                assert_nodes(h.node_attributes(("area", "height"), backend=backend), dendrogram, ("area", "height"))


@pytest.mark.parametrize("shape, fully_connected, levels, dtype", CASES)
def test_node_attributes_are_the_whole_dendrograms(backend, shape, fully_connected, levels, dtype):
    image = np.random.default_rng(44).integers(0, levels, shape).astype(dtype)
    if dtype == np.float32:
        image = image / np.float32(7)  # weights that are not whole numbers
    # the device runs the host's steps in CuPy: three slab sizes there (one layer, three, all), every size here
    slabs = slab_sizes(shape[0]) if backend == "cpu" else sorted({1, 3, shape[0]})
    check(image, slabs, fully_connected, backend, expected_of(image, fully_connected, backend))


def test_regions_across_many_slabs_and_a_plateau_through_every_slab(backend):
    volume = smooth((20, 14, 12), 45)
    for full in (False, True):
        check(volume, (1, 3, 7), full, backend, expected_of(volume, full, backend))
    image = spiral(20)
    check(image, (3,), True, backend, expected_of(image, True, backend))


def test_runs_of_the_dynamics_merge(monkeypatch, backend):
    """The node attributes' dynamics: a closure's runs whose members are next to each other among its nodes merge,
    carrying the outcome of their ties; the largest closure of the run is smaller than with no run merged (every
    node above the layer), and the attributes are the whole dendrogram's both ways."""
    from chseg import _slab_hierarchy as sh
    from chseg import _slab_nodes

    rng = np.random.default_rng(53)
    volume = np.full((48, 24, 24), 40, np.int16) + rng.integers(-6, 7, (48, 24, 24))
    for _ in range(48 * 3):  # grains in a noisy matrix
        z, y, x = rng.integers(0, 48), rng.integers(0, 21), rng.integers(0, 21)
        volume[z, y : y + 3, x : x + 3] = rng.integers(80, 200)
    volume = volume.clip(0, 255).astype(np.uint8)
    expected = chseg.single_linkage(volume, backend=backend)
    largest = []
    passes = _slab_nodes._passes

    def recorded(spec, h, held, store):
        passes(spec, h, held, store)
        largest.append(held.closure_bytes)

    monkeypatch.setattr(_slab_nodes, "_passes", recorded)
    runs = sh._Tree._runs

    def unmerged(t, one, side, other, is_one, inside):  # no member next to another: every run a single node
        return runs(t, one, side, other, is_one, inside & False)

    for merged in (True, False):
        if not merged:
            monkeypatch.setattr(sh._Tree, "_runs", unmerged)
        h = chseg.slabs.hierarchy(volume, 2, backend=backend).node_attributes(("area", "dynamics"), backend=backend)
        assert_nodes(h, expected, ("area", "dynamics"))
    assert largest[0] < 0.7 * largest[1], largest


def test_the_devices_ways_on_the_host(monkeypatch):
    from chseg import _slab_hierarchy as sh

    monkeypatch.setattr(sh, "_DEVICE_WAYS_ON_HOST", True)
    volume = smooth((9, 8, 7), 46)
    check(volume, (2, 4), True, "cpu", expected_of(volume, True, "cpu"))


def test_thin_volumes(backend):
    for shape in ((1, 1), (1, 9), (9, 1), (5, 1, 1), (2, 3)):
        volume = np.random.default_rng(47).integers(0, 3, shape).astype(np.uint8)
        h = chseg.slabs.hierarchy(volume, 1, "area", backend=backend).node_attributes(backend=backend)
        assert_nodes(h, chseg.watershed_hierarchy(volume, "area", backend=backend), NAMES)


def test_store_rerun_and_failure(tmp_path, monkeypatch):
    """The attributes go to the hierarchy's store (a subgroup a slab, then their mark); a store opened later gives
    them; closures through the store; a failed run leaves neither attributes nor mark, and the hierarchy stands; a
    new hierarchy in the store drops them."""
    zarr = pytest.importorskip("zarr")
    from chseg import _slab_hierarchy as sh
    from chseg import _slab_nodes

    volume = smooth((12, 10, 9), 48)
    expected = chseg.watershed_hierarchy(volume, "dynamics", backend="cpu")
    store = tmp_path / "hierarchy"
    h = chseg.slabs.hierarchy(volume, 3, "dynamics", store=store, backend="cpu")
    with monkeypatch.context() as m:
        m.setattr(sh, "_HOLD_BYTES", 0)  # the closures of the first pass written, read back, removed
        h.node_attributes(("dynamics", "area"), backend="cpu")
    assert h.node_names == ("area", "dynamics")
    group = zarr.open_group(store, mode="r")
    assert sorted(group.group_keys()) == [f"{p}-00000{s}" for p in ("node", "slab") for s in range(4)]
    assert group.attrs["chseg_slab_nodes"] == ["area", "dynamics"]
    opened = chseg.slabs.SlabHierarchy.open(store)
    assert opened.node_names == ("area", "dynamics")
    assert_nodes(opened, expected, ("area", "dynamics"))
    opened.node_attributes("volume", backend="cpu")  # replaces the attributes of the run before
    assert chseg.slabs.SlabHierarchy.open(store).node_names == ("volume",)
    assert "area" not in chseg.slabs.SlabHierarchy.open(store).part(0)
    assert_nodes(chseg.slabs.SlabHierarchy.open(store), expected, ("volume",))

    emit = _slab_nodes._NodeSpec.emit

    def failing(self, s, whole):
        if s == 2:
            raise RuntimeError("stopped")
        return emit(self, s, whole)

    monkeypatch.setattr(_slab_nodes._NodeSpec, "emit", failing)
    with pytest.raises(RuntimeError, match="stopped"):
        opened.node_attributes(backend="cpu")
    assert opened.node_names == ()
    again = chseg.slabs.SlabHierarchy.open(store)
    assert again.node_names == () and sorted(zarr.open_group(store).group_keys())[0] == "slab-000000"
    assert np.array_equal(host(again.gather(backend="cpu").weights), host(expected.weights))
    monkeypatch.setattr(_slab_nodes._NodeSpec, "emit", emit)
    opened.node_attributes("height", backend="cpu")
    chseg.slabs.hierarchy(volume, 4, "area", store=store, backend="cpu")
    assert chseg.slabs.SlabHierarchy.open(store).node_names == ()
    assert sorted(zarr.open_group(store).group_keys()) == [f"slab-00000{s}" for s in range(3)]


def test_bad_names_and_a_volume_of_float_weights():
    volume = np.random.default_rng(49).integers(0, 9, (6, 5)).astype(np.uint8)
    h = chseg.slabs.hierarchy(volume, 2, "area", backend="cpu")
    for names in ("perimeter", (), ("area", "mean"), 3, None):
        with pytest.raises(ValueError, match="names must be"):
            h.node_attributes(names)
    assert h.node_names == ()
    floats = chseg.slabs.hierarchy(volume / np.float32(7), 2, backend="cpu")
    with pytest.raises(ValueError, match="whole-number hierarchy weights"):
        floats.node_attributes()
    assert floats.node_names == () and "volume" not in floats.part(0)


def test_dask_threads_uneven_chunks(backend):
    """chseg.dask.node_attributes on the threaded scheduler, of a hierarchy with uneven slabs held in memory."""
    da = pytest.importorskip("dask.array")
    import chseg.dask

    volume = smooth((17, 9, 8), 50)
    array = da.from_array(volume, chunks=((5, 1, 7, 4), 9, 8))
    for attribute, expected in expected_of(volume, True, backend).items():
        h = chseg.dask.hierarchy(array, attribute, fully_connected=True, backend=backend)
        assert chseg.dask.node_attributes(h, backend=backend) is h
        assert_nodes(h, expected, NAMES)


def test_dask_local_cluster_with_a_store(cluster_client, tmp_path):
    """On a LocalCluster of processes, the workers reading the hierarchy's store and writing the attributes there."""
    da = pytest.importorskip("dask.array")
    import chseg.dask

    volume = smooth((14, 12, 10), 51)
    ws = chseg.watershed_hierarchy(volume, "volume", backend="cpu")
    h = chseg.dask.hierarchy(da.from_array(volume, chunks=(4, 12, 10)), "volume", store=tmp_path / "h", backend="cpu")
    chseg.dask.node_attributes(h, ("volume", "height"), backend="cpu")
    assert_nodes(chseg.slabs.SlabHierarchy.open(tmp_path / "h"), ws, ("volume", "height"))
