"""chseg.slabs.hierarchy: the single-linkage and watershed-by-area hierarchies of a volume computed slab by slab
(partial trees from two closures per slab), gathered, against chseg.single_linkage / watershed_hierarchy of the whole
volume array by array, and their cuts written slab by slab against the whole dendrogram's cut, label for label: 2D and
3D, slab counts from one per layer to one in all, uneven slabs, both connectivities, few and many grey levels, a smooth
volume whose regions span many slabs, a plateau through every slab, float weights, a store on disk, Zarr in and out."""

import os

import chseg
import chseg.slabs
import numpy as np
import pytest
from conftest import needs_cupy
from test_slabs import assert_same, slab_sizes, spiral

host = chseg._arrays.host


def smooth(shape, seed, centres=4):
    """Flat cells around a few random centres (one grey level each), every 7th voxel noisy: the image graph's large
    minima are the cells, the small ones the noise."""
    rng = np.random.default_rng(seed)
    grid = np.stack(np.meshgrid(*[np.arange(s) for s in shape], indexing="ij"), -1).astype(np.float64)
    points = rng.random((centres, len(shape))) * np.array(shape)
    cell = np.argmin(np.linalg.norm(grid[..., None, :] - points, axis=-1), axis=-1)
    volume = (cell * 40 + 20).astype(np.uint8)
    noisy = rng.random(shape) < 1 / 7
    volume[noisy] += rng.integers(1, 15, int(noisy.sum())).astype(np.uint8)
    return volume


def thresholds(dendrogram, count=6):
    """Thresholds between none and every merge: 0, a few of the weights, and the largest."""
    w = np.unique(host(dendrogram.weights))
    if w.size == 0:
        return [0.0]
    picks = w[np.linspace(0, w.size - 1, count).astype(int)]
    return sorted({0.0, *picks.tolist()})


def expected_of(volume, full, backend):
    """The whole volume's hierarchies: single linkage, and the watershed hierarchies by area, dynamics and (8- and
    16-bit integer voxels) volume."""
    sl = chseg.single_linkage(volume, fully_connected=full, backend=backend)
    out = {None: sl, "area": sl.watershed_hierarchy("area"), "dynamics": sl.watershed_hierarchy("dynamics")}
    if volume.dtype.kind in "ui" and volume.dtype.itemsize <= 2:
        out["volume"] = sl.watershed_hierarchy("volume")
    return out


def check(volume, slab, full, backend, expected, store=None):
    for attribute, expected in expected.items():
        h = chseg.slabs.hierarchy(volume, slab, attribute, fully_connected=full, store=store, backend=backend)
        assert_same(h.gather(backend=backend), expected)
        for t in thresholds(expected):
            assert np.array_equal(h.cut(t), host(expected.cut(t))), (attribute, slab, t)
        n = volume.size
        for k in sorted({1, min(2, n), max(1, n // 7), max(1, n // 2), n}):
            assert np.array_equal(h.clusters(k), host(expected.clusters(k))), (attribute, slab, k)


CASES = [
    ((13, 11), False, 3, np.uint8),
    ((13, 11), True, 3, np.uint8),
    ((21, 9), False, 200, np.int16),
    ((8, 7, 6), False, 2, np.uint8),
    ((8, 7, 6), True, 4, np.uint16),
    ((7, 6, 5), True, 50, np.float32),
]


@pytest.mark.parametrize("shape, fully_connected, levels, dtype", CASES)
def test_gathered_hierarchies_and_cuts_are_the_whole_volumes(backend, shape, fully_connected, levels, dtype):
    image = np.random.default_rng(41).integers(0, levels, shape).astype(dtype)
    if dtype == np.float32:
        image = image / np.float32(7)  # weights that are not whole numbers
    expected = expected_of(image, fully_connected, backend)
    for attribute in ("area", "volume", "dynamics"):  # the watershed hierarchies differ from single linkage here
        if attribute in expected:
            assert not np.array_equal(host(expected[attribute].weights), host(expected[None].weights))
    for slab in slab_sizes(shape[0]):
        check(image, slab, fully_connected, backend, expected)


def test_smooth_volume_whose_basins_span_many_slabs(backend):
    """Four basins over 20 layers: areas summed across slabs, cuts that join regions across every face."""
    volume = smooth((20, 14, 12), 42)
    for full in (False, True):
        expected = expected_of(volume, full, backend)
        assert host(expected["area"].weights).max() > 14 * 12  # a basin larger than a layer
        for slab in (1, 3, 7):
            check(volume, slab, full, backend, expected)


def test_the_devices_preorder_on_the_host(monkeypatch):
    """The preorder by Euler tour ranking and the components by hooking (the ways on the device, where SciPy's
    depth-first order and connected components are not) give SciPy's positions, sizes and components, and the same
    hierarchies and cuts."""
    from chseg import _slab_cuts
    from chseg import _slab_hierarchy as sh

    volume = smooth((9, 8, 7), 48)
    sl = chseg.single_linkage(volume, fully_connected=True, backend="cpu")
    tree = sl.watershed_hierarchy("area")
    for dendrogram in (sl, tree):
        parents = host(dendrogram.parents).astype(np.int64)
        n = (parents.size + 1) // 2
        rows = np.argsort(parents[:-1] * parents.size + np.arange(parents.size - 1), kind="stable")
        assert np.array_equal(sh._children(parents, np), rows.reshape(-1, 2))  # each parent's children, sorted
        position, size = sh._euler_preorder(sh._children(parents, np), n, np)
        scipy_tree = sh._Tree(
            [
                (
                    host(dendrogram.u).astype(np.int64),
                    host(dendrogram.v).astype(np.int64),
                    host(dendrogram.weights),
                    np.arange(n - 1),
                    np.zeros(n - 1, np.int8),
                )
            ],
            sh._Closure.empty(),
            None,
            "cpu",
        )
        assert np.array_equal(position, scipy_tree.position) and np.array_equal(size, scipy_tree.size)
    from scipy.sparse import csgraph, csr_matrix

    rng = np.random.default_rng(49)
    for count, edges in ((1, 0), (50, 20), (400, 390), (1000, 3000)):
        u, v = rng.integers(0, count, edges), rng.integers(0, count, edges)
        smallest = _slab_cuts._components(u, v, count, np)
        _, labels = csgraph.connected_components(csr_matrix((np.ones(edges), (u, v)), shape=(count, count)))
        assert np.array_equal(smallest, [np.flatnonzero(labels == labels[x])[0] for x in range(count)])
    monkeypatch.setattr(sh, "_DEVICE_WAYS_ON_HOST", True)
    check(volume, 3, True, "cpu", expected_of(volume, True, "cpu"))


@pytest.mark.parametrize("attribute", [None, "area", "volume", "dynamics"])
def test_border_closure_from_the_slabs_dendrogram(backend, attribute):
    """B(s) taken from the engine's dendrogram of the slab (the pass's way) equals B(s) rebuilt from the slab's
    edges by Kruskal (the way of a Dask task elsewhere, which gets the edges without the dendrogram), array by array:
    edges, pseudo-vertex ids and what they carry."""
    from chseg import _slab_hierarchy as sh

    volume = smooth((12, 10, 9), 50)
    for full, slab in ((False, 4), (True, 5), (True, 1)):
        bounds = [(a, min(12, a + slab)) for a in range(0, 12, slab)]
        spec = sh._Spec(volume.shape, bounds, full, attribute, backend)
        for s, (a, b) in enumerate(bounds):
            edges = sh._slab_tree(spec, s, spec.xp.asarray(volume[a:b]), keep=True)
            assert edges.dendrogram is not None
            taken = sh._border_step(spec, s, edges)
            assert edges.dendrogram is None  # handed to B(s)'s tree
            rebuilt = sh._border_step(spec, s, tuple(edges))
            for x, y in zip((*taken.edges, taken.pid), (*rebuilt.edges, rebuilt.pid)):
                assert np.array_equal(host(x), host(y)), (full, slab, s)
            assert taken.fields.keys() == rebuilt.fields.keys()
            for k in taken.fields:
                assert np.array_equal(host(taken.fields[k]), host(rebuilt.fields[k])), (full, slab, s, k)
            assert taken.edges[0].size > 0
    import pickle

    assert type(pickle.loads(pickle.dumps(edges))) is tuple  # a Dask task elsewhere gets the edges alone
    assert sh._slab_tree(spec, 0, spec.xp.asarray(volume[:slab])).dendrogram is None  # Dask's: not held


@pytest.mark.parametrize("shape, fully_connected, levels, dtype", CASES)
def test_alpha_cuts_are_the_alpha_trees(backend, shape, fully_connected, levels, dtype):
    """The single-linkage hierarchy over slabs cut at alpha gives the alpha-tree's cut at alpha (its quasi-flat zones),
    labels and numbering alike."""
    image = np.random.default_rng(53).integers(0, levels, shape).astype(dtype)
    tree = chseg.alpha_tree(image, fully_connected=fully_connected, backend=backend)
    h = chseg.slabs.hierarchy(image, 2, fully_connected=fully_connected, backend=backend)
    for alpha in (0, 1, levels // 2, levels):
        assert np.array_equal(h.cut(alpha), host(tree.cut(alpha))), alpha


def local_dynamics_hierarchy(sl):
    """The watershed hierarchy by dynamics of the single-linkage dendrogram `sl` by its local form, computed here
    node by node in Python: each tree edge x weighs max(0, alt(x) - max(depth(a), depth(b))), a and b its children,
    depth the lowest altitude of an internal node under a node (a leaf: +inf); then the single-linkage dendrogram of
    the tree with those weights, edges ordered by (new weight, weight, image edge)."""
    parents, w = host(sl.parents).astype(np.int64), host(sl.weights).astype(np.float64)
    n = (parents.size + 1) // 2
    depth = np.concatenate([np.full(n, np.inf), w])
    kids = [[] for _ in range(parents.size)]
    for x in range(parents.size - 1):  # a child's id is below its parent's
        depth[parents[x]] = min(depth[parents[x]], depth[x])
        kids[parents[x]].append(x)
    new = np.array([max(0.0, w[r] - max(depth[c] for c in kids[n + r])) for r in range(n - 1)])
    e = host(sl.edges).astype(np.int64)
    order = np.lexsort((e, w, new))
    u, v = host(sl.u)[order].astype(np.uint32), host(sl.v)[order].astype(np.uint32)
    tree = chseg.single_linkage_graph(u, v, new[order], n, is_tree=True, backend="cpu")
    return host(tree.parents), host(tree.weights), e[order][host(tree.edges).astype(np.int64)]


def test_the_dynamics_hierarchy_is_local(backend):
    """The local form the slabs use for the dynamics (python/chseg/_slab_hierarchy.py's docstring: each merge weighs
    its parent's altitude minus the larger of its children's depths, at least 0) gives the whole-volume hierarchy by
    dynamics (the chains of deepest children and the plateaus' corrected values of include/chs/AttributeHierarchy.h,
    tested against Higra in test_trees.py), array by array, on 2D and 3D inputs of few grey levels (many ties),
    both connectivities, integer and float weights."""
    rng = np.random.default_rng(53)
    for case in range(60):
        shape = tuple(int(x) for x in rng.integers(2, 8, 2 + case % 2))
        volume = rng.integers(0, int(rng.integers(2, 7)) if case % 5 else 200, shape).astype(np.uint8)
        if case % 7 == 0:
            volume = volume / np.float32(7)
        sl = chseg.single_linkage(volume, fully_connected=bool(case % 3 == 0), backend=backend)
        ws = sl.watershed_hierarchy("dynamics")
        parents, weights, edges = local_dynamics_hierarchy(sl)
        assert np.array_equal(parents, host(ws.parents)), case
        assert np.array_equal(weights, host(ws.weights)), case
        assert np.array_equal(edges, host(ws.edges).astype(np.int64)), case


def test_closures_are_bounded_by_the_border(backend):
    """Runs merged: the largest closure of a matrix with grains barely grows with the volume beyond the slab (it grew
    with it before), for every attribute, the dynamics' included (their runs merged since its local form)."""
    rng = np.random.default_rng(52)

    def volume(depth):
        v = np.full((depth, 24, 24), 40, np.int16) + rng.integers(-6, 7, (depth, 24, 24))
        for _ in range(depth * 3):
            z, y, x = rng.integers(0, depth), rng.integers(0, 21), rng.integers(0, 21)
            v[z, y : y + 3, x : x + 3] = rng.integers(80, 200)
        return v.clip(0, 255).astype(np.uint8)

    for attribute in (None, "area", "volume", "dynamics"):
        shallow, deep = (chseg.slabs.hierarchy(volume(d), 2, attribute, backend=backend).closure_bytes for d in (8, 64))
        assert deep < 1.5 * shallow, (attribute, shallow, deep)


def test_plateau_through_every_slab(backend):
    image = spiral(20)
    for full in (False, True):
        check(image, 3, full, backend, expected_of(image, full, backend))


def test_cut_of_regions_that_join_in_a_later_slab(backend):
    """A comb: low teeth that meet only in the last layer. In slabs of one layer, each tooth's region is a root of its
    own until the last face joins them (a root joining a smaller one at a later face, its earlier names following
    parents): every cut and every number of clusters is the whole volume's."""
    comb = np.full((9, 11), 9, np.uint8)
    comb[:, ::2] = 0
    comb[-1] = 0
    comb3 = np.repeat(comb[:, None, :], 2, axis=1)
    for volume in (comb, comb3):
        whole = chseg.watershed_hierarchy(volume, "area", backend=backend)
        for slab in (1, 2):
            h = chseg.slabs.hierarchy(volume, slab, "area", backend=backend)
            for t in np.unique(host(whole.weights)):
                assert np.array_equal(h.cut(t), host(whole.cut(t))), (volume.ndim, slab, t)
            for k in (1, 2, 6, volume.size // 2):
                assert np.array_equal(h.clusters(k), host(whole.clusters(k))), (volume.ndim, slab, k)


def test_store_on_disk_and_zarr(tmp_path, monkeypatch):
    """Each slab's edges go to the store (a Zarr group: a subgroup a slab, coded), the completion mark last; a store
    opened later gives the same hierarchy; cuts written into a Zarr array; a store without the mark is refused; a rerun
    into the same store replaces the slabs of the run before; closures beyond the held bytes go through the store."""
    zarr = pytest.importorskip("zarr")
    from chseg import _slab_hierarchy as sh

    volume = smooth((12, 10, 9), 43)
    source = zarr.create_array(store={}, shape=volume.shape, chunks=(4, 10, 9), dtype=volume.dtype)
    source[:] = volume
    ws = chseg.watershed_hierarchy(volume, "area", backend="cpu")
    store = tmp_path / "hierarchy"
    chseg.slabs.hierarchy(source, 3, "area", store=store, backend="cpu")
    with monkeypatch.context() as m:
        m.setattr(sh, "_HOLD_BYTES", 0)  # every closure of the first pass written, read back, removed
        spilled = chseg.slabs.hierarchy(source, 2, "dynamics", store=tmp_path / "spilled", backend="cpu")
    assert sorted(zarr.open_group(tmp_path / "spilled").group_keys()) == [f"slab-00000{s}" for s in range(6)]
    assert_same(spilled.gather(backend="cpu"), chseg.watershed_hierarchy(volume, "dynamics", backend="cpu"))
    h = chseg.slabs.hierarchy(source, 4, "area", store=store, backend="cpu")
    group = zarr.open_group(store, mode="r")
    assert sorted(group.group_keys()) == ["slab-000000", "slab-000001", "slab-000002"]
    assert dict(group.attrs)["chseg_slab_hierarchy"] == {
        "shape": [12, 10, 9],
        "bounds": [[0, 4], [4, 8], [8, 12]],
        "fully_connected": False,
        "attribute": "area",
    }
    slab = group["slab-000001"]
    # coded: the edges as differences and the areas a byte each (larger ones escaped), whole weights as small unsigned
    # integers
    arrays = {k: a.dtype for k, a in slab.arrays()}
    assert set(arrays) == {"edge", "weight", "altitude", "edge_escapes", "altitude_escapes"}
    assert arrays["edge"] == arrays["weight"] == arrays["altitude"] == np.uint8
    assert h.closure_bytes > 0
    opened = chseg.slabs.SlabHierarchy.open(store)
    for s in range(3):
        assert all(np.array_equal(opened.part(s)[k], h.part(s)[k]) for k in ("edge", "weight", "altitude"))
        assert opened.part(s)["edge"].dtype == np.int64 and opened.part(s)["altitude"].dtype == np.float64
    assert_same(opened.gather(backend="cpu"), ws)
    out = zarr.create_array(store={}, shape=volume.shape, chunks=(4, 10, 9), dtype=np.uint32)
    for t in thresholds(ws):
        opened.cut(t, out=out)
        assert np.array_equal(out[:], host(ws.cut(t)))
    del zarr.open_group(store, mode="a").attrs["chseg_slab_hierarchy"]
    with pytest.raises(ValueError, match="no complete hierarchy"):
        chseg.slabs.SlabHierarchy.open(store)
    with pytest.raises(ValueError, match="no complete hierarchy"):
        chseg.slabs.SlabHierarchy.open(tmp_path / "nothing")


@pytest.mark.parametrize("attribute", ["area", "dynamics"])
def test_closures_beyond_the_held_bytes(backend, tmp_path, monkeypatch, attribute):
    """With no closure held (R(s) through the store, B(s) made again in the second pass) and with some held, the
    hierarchy and a cut are the whole volume's; the store keeps the slabs only."""
    zarr = pytest.importorskip("zarr")
    from chseg import _slab_hierarchy as sh

    volume = smooth((12, 10, 9), 44)
    whole = chseg.watershed_hierarchy(volume, attribute, backend=backend)
    held = chseg.slabs.hierarchy(volume, 2, attribute, backend=backend)
    assert held.closure_bytes > 0
    for budget in (0, 3 * held.closure_bytes):
        with monkeypatch.context() as m:
            m.setattr(sh, "_HOLD_BYTES", budget)
            store = tmp_path / f"{attribute}-{budget}"
            h = chseg.slabs.hierarchy(volume, 2, attribute, store=store, backend=backend)
        assert sorted(zarr.open_group(store).group_keys()) == [f"slab-00000{s}" for s in range(6)]
        assert_same(h.gather(backend=backend), whole)
        t = float(np.median(host(whole.weights)))
        assert np.array_equal(h.cut(t), host(whole.cut(t))), budget


def test_an_engine_short_of_device_memory_gets_cupys_free_blocks():
    """The engines allocate outside CuPy's memory pool: a call refused for memory is made once more after the pool
    hands back its free blocks; on the host the error stands."""
    from chseg import _slab_hierarchy as sh

    calls = []

    class Pool:
        def free_all_blocks(self):
            calls.append("freed")

    class Device:
        @staticmethod
        def get_default_memory_pool():
            return Pool()

    def engine(x):
        calls.append(x)
        if calls.count(x) == 1:
            raise MemoryError("chs: ... needs more device memory")
        return 2 * x

    assert sh._engine(Device, engine, 3) == 6 and calls == [3, "freed", 3]
    with pytest.raises(MemoryError):
        sh._engine(np, engine, 4)


def test_coding_is_lossless():
    """The store's code keeps every value: edges as differences from the slab's base (a byte each, larger ones
    escaped), hierarchy weights likewise where whole, weights in the narrowest dtype that holds them (whole numbers,
    float32, float64); parts coded before the escapes still decode."""
    from chseg import _slab_store

    rng = np.random.default_rng(3)
    edge = np.sort(rng.choice(10**11, 1000, replace=False)) + 5 * 10**10
    for weight, dtype in (
        (rng.integers(0, 200, 1000).astype(np.float64), np.uint8),
        (rng.integers(0, 70000, 1000).astype(np.float64), np.uint32),
        (rng.random(1000).astype(np.float32).astype(np.float64), np.float32),
        (rng.random(1000), np.float64),
        (np.r_[rng.random(999), np.inf], np.float64),
        (-rng.integers(0, 9, 1000).astype(np.float64), np.float32),
    ):
        coded = _slab_store.encode({"edge": edge, "weight": weight, "altitude": weight * 3}, 5 * 10**10 - 7)
        assert coded["weight"].dtype == dtype
        assert coded["edge"].dtype == np.uint8  # differences of 255 and more in edge_escapes
        assert coded["edge_escapes"].size == np.count_nonzero(np.diff(edge, prepend=5 * 10**10 - 7) >= 255)
        back = _slab_store.decode(coded, 5 * 10**10 - 7)
        assert np.array_equal(back["edge"], edge) and back["edge"].dtype == np.int64
        assert np.array_equal(back["weight"], weight) and np.array_equal(back["altitude"], weight * 3)
    # escapes: values about the escape code, one large value among small ones, none at all
    for altitude in (np.array([254.0, 255, 256, 0, 2**40, 7]), np.zeros(5), np.arange(5.0) * 2**33, np.zeros(0)):
        edge = np.cumsum(np.r_[1, 254, 255, 256, 3, 2**35][: altitude.size]).astype(np.int64)
        coded = _slab_store.encode({"edge": edge, "weight": altitude, "altitude": altitude}, 0)
        assert coded["altitude"].dtype == np.uint8
        assert coded["altitude_escapes"].size == np.count_nonzero(altitude >= 255)
        back = _slab_store.decode(coded, 0)
        assert np.array_equal(back["edge"], edge) and np.array_equal(back["altitude"], altitude)
    # a part coded before the escapes (every value as wide as the largest) decodes as it was written
    edge = np.array([3, 300, 301, 70000], np.int64)
    old = {"edge": np.diff(edge, prepend=0).astype(np.uint32), "weight": np.ones(4, np.uint8)}
    old["altitude"] = np.array([0, 255, 7, 9], np.uint16)
    back = _slab_store.decode(old, 0)
    assert np.array_equal(back["edge"], edge) and np.array_equal(back["altitude"], [0, 255, 7, 9])


def test_a_store_without_room(tmp_path, monkeypatch):
    """A store on a disk with less room than a slab's edges or a closure need is refused before the write, naming the
    path and the bytes; the run leaves neither slabs nor the completion mark."""
    zarr = pytest.importorskip("zarr")
    from chseg import _slab_store

    volume = smooth((6, 5, 4), 50)
    monkeypatch.setattr(
        _slab_store.shutil, "disk_usage", lambda path: _slab_store.shutil._ntuple_diskusage(10**6, 10**6 - 100, 100)
    )
    with pytest.raises(OSError, match=f"{tmp_path / 'h'}.*100 bytes free.*needs up to [0-9]+"):
        chseg.slabs.hierarchy(volume, 2, "area", store=tmp_path / "h", backend="cpu")
    group = zarr.open_group(tmp_path / "h", mode="r")
    assert list(group.group_keys()) == [] and "chseg_slab_hierarchy" not in group.attrs


class Changing:
    """A volume whose slabs read differently the second time (a store rewritten between the passes)."""

    def __init__(self, volume):
        self.volume, self.reads = volume, 0
        self.shape, self.dtype, self.ndim = volume.shape, volume.dtype, volume.ndim

    def __getitem__(self, key):
        self.reads += 1
        out = self.volume[key].copy()
        if self.reads > 4:
            out[...] = 0
        return out


def _slabs_again(volume):
    chseg.slabs.hierarchy(volume, 2, "area", backend="cpu")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_hashes_its_own_borders():
    """A process forked after a run (multiprocessing's fork, a worker) runs slabs again: the thread that hashes the
    border layers is the child's own (its parent's does not exist there; taking it hung)."""
    import multiprocessing
    import warnings

    volume = smooth((6, 5, 4), 54)
    chseg.slabs.hierarchy(volume, 2, "area", backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork in a process with threads
        child = multiprocessing.get_context("fork").Process(target=_slabs_again, args=(volume,))
        child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked process's run hung")
    assert child.exitcode == 0


def test_bad_arguments_and_a_volume_that_changes():
    volume = smooth((8, 6, 5), 44)
    with pytest.raises(ValueError, match="attribute"):
        chseg.slabs.hierarchy(volume, 2, "height", backend="cpu")
    with pytest.raises(ValueError, match="float32"):
        chseg.slabs.hierarchy(volume.astype(np.float32), 2, "volume", backend="cpu")
    with pytest.raises(ValueError, match="slab"):
        chseg.slabs.hierarchy(volume, 0, backend="cpu")
    with pytest.raises(ValueError, match=r"slab 1 \(layers 2\.\.3\)"):  # slab 0 is read once: the passes meet there
        chseg.slabs.hierarchy(Changing(volume), 2, "area", backend="cpu")
    h = chseg.slabs.hierarchy(volume, 3, backend="cpu")
    with pytest.raises(ValueError, match="threshold"):
        h.cut(float("nan"))
    for k in (0, volume.size + 1, 2.5, True):
        with pytest.raises(ValueError, match="k must"):
            h.clusters(k)
    with pytest.raises(ValueError, match="shape"):
        h.cut(1, out=np.zeros((8, 6), np.uint32))


def test_thin_volumes(backend):
    for shape in ((1, 1), (1, 5), (5, 1), (3, 1, 1), (2, 3, 1)):
        image = (np.arange(np.prod(shape)) % 3).reshape(shape).astype(np.uint8)
        for full in (False, True):
            check(image, 1, full, backend, expected_of(image, full, backend))


def _id_cases():
    rng = np.random.default_rng(52)
    dense = rng.permutation(np.repeat(np.arange(100, 400), 2))[:500]  # most of a range, some twice, some missing
    sparse = rng.integers(0, 10**9, 300)
    pseudo = -1 - rng.integers(0, 50, 80)
    for ids in (dense, sparse, pseudo, np.concatenate([pseudo, dense]), np.concatenate([dense, pseudo, sparse[:3]])):
        yield ids.astype(np.int64)
    yield np.array([7], np.int64)


def test_vertex_ids_are_numpys_unique():
    """A partial graph's vertex ids placed by a table of the voxels' range give what a sort (np.unique) gives:
    dense and sparse voxels, pseudo-vertices alone and with voxels."""
    from chseg import _slab_hierarchy as sh

    for ids in _id_cases():
        expected, inverse = np.unique(ids, return_inverse=True)
        got, got_inverse = sh._vertex_ids(ids, np)
        assert np.array_equal(expected, got) and np.array_equal(inverse.ravel(), got_inverse)


@needs_cupy
def test_device_kernels_equal_the_numpy_ways():
    """The Euler tour's ranking and the segment tree's range maxima in one CuPy launch (a round) give what the NumPy
    loops give, on random trees and ranges."""
    import cupy
    from chseg import _slab_hierarchy as sh

    rng = np.random.default_rng(51)
    for n in (2, 3, 17, 1000, 20000):
        tree = chseg.single_linkage_graph(
            np.arange(1, n),
            rng.integers(0, np.arange(1, n)),
            rng.integers(0, 5, n - 1),
            n,
            is_tree=True,
            backend="cpu",
        )
        kids = sh._children(tree.parents.astype(np.int64), np)
        assert np.array_equal(kids, cupy.asnumpy(sh._children(cupy.asarray(tree.parents.astype(np.int64)), cupy)))
        on_host = sh._euler_preorder(kids, n, np)
        on_device = sh._euler_preorder(cupy.asarray(kids), n, cupy)
        assert all(np.array_equal(a, cupy.asnumpy(b)) for a, b in zip(on_host, on_device))
        values = rng.random(n)
        values[rng.random(n) < 0.1] = -np.inf
        lo = rng.integers(0, n + 1, 3 * n)
        hi = np.maximum(lo, rng.integers(0, n + 1, 3 * n))
        expected = sh._range_max(values, lo, hi, np)
        assert np.array_equal(expected, [values[a:b].max(initial=-np.inf) for a, b in zip(lo, hi)])
        got = sh._range_max(cupy.asarray(values), cupy.asarray(lo), cupy.asarray(hi), cupy)
        assert np.array_equal(expected, cupy.asnumpy(got))
    for ids in _id_cases():
        on_device = sh._vertex_ids(cupy.asarray(ids), cupy)
        assert all(np.array_equal(a, cupy.asnumpy(b)) for a, b in zip(sh._vertex_ids(ids, np), on_device))
        up = np.minimum(np.arange(ids.size) + rng.integers(0, 3, ids.size), ids.size - 1)  # chains to the last
        assert np.array_equal(sh._jump(up, np), cupy.asnumpy(sh._jump(cupy.asarray(up), cupy)))
    # a chain (the deepest tree: one sublist after another along its tour)
    n = 50000
    chain = chseg.single_linkage_graph(np.arange(1, n), np.arange(n - 1), np.arange(n - 1), n, backend="cpu")
    kids = sh._children(chain.parents.astype(np.int64), np)
    on_host = sh._euler_preorder(kids, n, np)
    on_device = sh._euler_preorder(cupy.asarray(kids), n, cupy)
    assert all(np.array_equal(a, cupy.asnumpy(b)) for a, b in zip(on_host, on_device))


def _wyllie(nxt, a, b):
    """Suffix sums along lists ending at self-loops (counts 0 there), by pointer jumping in NumPy."""
    while not np.array_equal(nxt[nxt], nxt):
        a, b, nxt = a + a[nxt], b + b[nxt], nxt[nxt]
    return a + a[nxt], b + b[nxt]


@needs_cupy
@pytest.mark.parametrize("size, lists", [(1, 1), (5, 2), (31, 1), (33, 1), (1000, 1), (1000, 7), (100000, 40)])
def test_device_list_ranking_and_components_equal_the_numpy_ways(size, lists):
    """The list ranking by sublists (every list's head and end start one, and every 32nd element) and the union-find
    components give what pointer jumping and Shiloach-Vishkin hooking give in NumPy: several lists in a random
    order, random counts; random graphs, a chain, no edge."""
    import cupy
    from chseg import _slab_cuts, _slab_kernels

    rng = np.random.default_rng(size + lists)
    order = rng.permutation(size)
    cuts = np.sort(rng.choice(np.arange(1, size), min(lists, size) - 1, replace=False)) if size > 1 else []
    nxt = np.arange(size, dtype=np.int64)
    a, b = rng.integers(-5, 9, size), rng.integers(0, 3, size)
    for part in np.split(order, cuts):
        nxt[part[:-1]] = part[1:]  # the last of each list points to itself, with counts 0
        a[part[-1]] = b[part[-1]] = 0
    expected = _wyllie(nxt, a, b)
    got = [_slab_kernels.rank(cupy.asarray(nxt), cupy.asarray(x)) for x in (a, b)]
    assert all(np.array_equal(x, cupy.asnumpy(y)) for x, y in zip(expected, got))
    for u, v in (
        (rng.integers(0, size, size // 2), rng.integers(0, size, size // 2)),
        (np.arange(1, size), np.arange(size - 1)),
        (np.zeros(0, np.int64), np.zeros(0, np.int64)),
    ):
        expected = _slab_cuts._components(u, v, size, np)
        got = _slab_cuts._components(cupy.asarray(u), cupy.asarray(v), size, cupy)
        assert np.array_equal(expected, cupy.asnumpy(got))


@needs_cupy
def test_cupy_volume():
    import cupy

    volume = smooth((12, 9, 8), 45)
    check(cupy.asarray(volume), 5, True, "auto", expected_of(volume, True, "cpu"))


def test_dask_threads_and_uneven_chunks():
    """chseg.dask.hierarchy on the threaded scheduler: uneven chunks along the first axis, several along the others
    (rechunked whole), both connectivities, both hierarchies; cuts as the whole volume's."""
    da = pytest.importorskip("dask.array")
    import chseg.dask

    volume = smooth((17, 9, 8), 46)
    for full in (False, True):
        array = da.from_array(volume, chunks=((5, 1, 7, 4), (5, 4), 8))
        for attribute, expected in expected_of(volume, full, "cpu").items():
            h = chseg.dask.hierarchy(array, attribute, fully_connected=full, backend="cpu")
            assert h.bounds == [(0, 5), (5, 6), (6, 13), (13, 17)]
            assert_same(h.gather(backend="cpu"), expected)
            for t in thresholds(expected):
                assert np.array_equal(h.cut(t), host(expected.cut(t)))


def test_dask_local_cluster_with_a_store(cluster_client, tmp_path):
    """On a LocalCluster of processes, the workers writing each slab's edges to a store."""
    da = pytest.importorskip("dask.array")
    import chseg.dask

    volume = smooth((14, 12, 10), 47)
    ws = chseg.watershed_hierarchy(volume, "area", fully_connected=True, backend="cpu")
    chseg.dask.hierarchy(
        da.from_array(volume, chunks=(4, 12, 10)), "area", fully_connected=True, store=tmp_path / "h", backend="cpu"
    )
    opened = chseg.slabs.SlabHierarchy.open(tmp_path / "h")
    assert_same(opened.gather(backend="cpu"), ws)
    assert np.array_equal(opened.cut(40), host(ws.cut(40)))


def test_dask_bad_arguments():
    da = pytest.importorskip("dask.array")
    import chseg.dask

    with pytest.raises(ValueError, match="attribute"):
        chseg.dask.hierarchy(da.zeros((4, 4), np.uint8), "height")
    with pytest.raises(ValueError, match="array"):
        chseg.dask.hierarchy(da.zeros((4,), np.uint8))
