"""chseg.slabs: the minimum spanning tree of a volume read slab by slab, gathered, against chseg.single_linkage of the
whole volume, array by array (parents, weights, image edge indices, ends), for every slab count from one per layer to
one in all, uneven slabs, both connectivities, many ties, a plateau that winds through every slab, float weights."""

import chseg
import chseg.slabs
import numpy as np
import pytest
from conftest import gpu, needs_cupy

ARRAYS = ("parents", "weights", "edges", "u", "v")


def assert_same(ours, expected):
    for name in ARRAYS:
        assert np.array_equal(chseg._arrays.host(getattr(ours, name)), chseg._arrays.host(getattr(expected, name))), (
            name
        )
    assert ours.shape == expected.shape


def slab_sizes(layers):
    return sorted({1, 2, 3, max(1, layers // 2), layers - 1 or 1, layers})


CASES = [
    ((17, 13), False, 3, np.uint8),
    ((17, 13), True, 3, np.uint8),
    ((15, 11), True, 200, np.int16),
    ((9, 7, 6), False, 2, np.uint8),
    ((9, 7, 6), True, 4, np.uint16),
    ((8, 6, 5), True, 50, np.float32),
]


@pytest.mark.parametrize("shape, fully_connected, levels, dtype", CASES)
def test_gathered_tree_is_the_whole_volumes(backend, shape, fully_connected, levels, dtype):
    image = np.random.default_rng(31).integers(0, levels, shape).astype(dtype)
    expected = chseg.single_linkage(image, fully_connected=fully_connected, backend=backend)
    for slab in slab_sizes(shape[0]):
        ours = chseg.slabs.single_linkage(image, slab, fully_connected=fully_connected, backend=backend)
        assert_same(ours, expected)


def test_parts_are_the_tree_and_carry_less_than_a_layer(backend):
    """Each slab's final edges are sorted by image edge index; together they are the whole tree; the live edges carried
    from a slab form a tree on its last layer's voxels (fewer edges than the layer has voxels)."""
    shape = (12, 9, 8)
    image = np.random.default_rng(32).integers(0, 3, shape).astype(np.uint8)
    expected = chseg.single_linkage(image, fully_connected=True, backend=backend)
    parts = list(chseg.slabs.spanning_tree(image, 5, fully_connected=True, backend=backend))
    assert len(parts) == 3
    for part in parts:
        assert np.all(np.diff(part["edge"]) > 0)
        assert part["live"] < 9 * 8
    assert parts[-1]["live"] == 0
    edges = np.sort(np.concatenate([p["edge"] for p in parts]))
    assert np.array_equal(edges, np.sort(chseg._arrays.host(expected.edges).astype(np.int64)))
    # each edge's ends are its voxel and the neighbour at its slot
    u = np.concatenate([p["u"] for p in parts])
    v = np.concatenate([p["v"] for p in parts])
    order = np.argsort(np.concatenate([p["edge"] for p in parts]))
    by_edge = np.argsort(chseg._arrays.host(expected.edges).astype(np.int64))
    assert np.array_equal(u[order], chseg._arrays.host(expected.u)[by_edge])
    assert np.array_equal(v[order], chseg._arrays.host(expected.v)[by_edge])


def spiral(side, seed=33):
    """One flat region (a spiral of 0s in a field of noise 5..8) that crosses every band of rows several times."""
    image = np.random.default_rng(seed).integers(5, 9, (side, side)).astype(np.uint8)
    y, x, dy, dx = 0, 0, 0, 1
    top, bottom, left, right = 0, side - 1, 0, side - 1
    while top <= bottom and left <= right:
        image[y, x] = 0
        ny, nx = y + dy, x + dx
        if not (top <= ny <= bottom and left <= nx <= right):
            if (dy, dx) == (0, 1):
                top += 2
            elif (dy, dx) == (1, 0):
                right -= 2
            elif (dy, dx) == (0, -1):
                bottom -= 2
            else:
                left += 2
            dy, dx = dx, -dy
            ny, nx = y + dy, x + dx
            if not (top - 2 <= ny <= bottom + 2 and left - 2 <= nx <= right + 2):
                break
        y, x = ny, nx
    return image


def test_a_plateau_winding_through_every_slab(backend):
    """The spiral's merges at weight 0 break ties by image edge index across slabs."""
    image = spiral(24)
    for full in (False, True):
        expected = chseg.single_linkage(image, fully_connected=full, backend=backend)
        for slab in (1, 3, 7):
            assert_same(chseg.slabs.single_linkage(image, slab, fully_connected=full, backend=backend), expected)


def test_float_weights_and_array_kinds(backend):
    """float64 voxels; a read-only array, a strided view and a big-endian copy read slab by slab."""
    image = np.random.default_rng(34).random((10, 8, 7))
    expected = chseg.single_linkage(image, fully_connected=True, backend=backend)
    read_only = image.copy()
    read_only.flags.writeable = False
    wide = np.zeros((10, 8, 14))
    wide[:, :, ::2] = image
    for volume in (read_only, wide[:, :, ::2], image.astype(">f8")):
        assert_same(chseg.slabs.single_linkage(volume, 3, fully_connected=True, backend=backend), expected)


def test_zarr_array():
    zarr = pytest.importorskip("zarr")
    image = np.random.default_rng(35).integers(0, 6, (11, 9, 5)).astype(np.uint8)
    store = zarr.create_array(store={}, shape=image.shape, chunks=(3, 9, 5), dtype=image.dtype)
    store[:] = image
    expected = chseg.single_linkage(image, backend="cpu")
    assert_same(chseg.slabs.single_linkage(store, 4, backend="cpu"), expected)


@needs_cupy
def test_cupy_volume():
    import cupy

    image = np.random.default_rng(36).integers(0, 5, (13, 10, 9)).astype(np.uint8)
    expected = chseg.single_linkage(image, fully_connected=True, backend="cpu")
    assert_same(chseg.slabs.single_linkage(cupy.asarray(image), 4, fully_connected=True), expected)


def test_bad_arguments():
    image = np.zeros((4, 5), np.uint8)
    for slab in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="slab"):
            chseg.slabs.single_linkage(image, slab, backend="cpu")
    for volume in (np.zeros(5, np.uint8), np.zeros((2, 2, 2, 2), np.uint8), np.zeros((0, 3), np.uint8)):
        with pytest.raises(ValueError, match="volume"):
            chseg.slabs.single_linkage(volume, 1, backend="cpu")
    with pytest.raises(ValueError, match="volume"):
        chseg.slabs.single_linkage(np.zeros((3, 3), np.complex64), 1, backend="cpu")


def test_thin_volumes(backend):
    """One voxel, one row or column, slabs of one voxel."""
    for shape in ((1, 1), (1, 5), (5, 1), (3, 1, 1), (1, 1, 4), (2, 3, 1)):
        image = np.arange(np.prod(shape)).reshape(shape).astype(np.uint8)[::-1].copy()
        for full in (False, True):
            expected = chseg.single_linkage(image, fully_connected=full, backend=backend)
            assert_same(chseg.slabs.single_linkage(image, 1, fully_connected=full, backend=backend), expected)


@gpu
@needs_cupy
def test_host_arrays_go_to_the_device_past_cupys_pinned_pool():
    """The slabs' host arrays (stored parts, closures, volume blocks) go to the device by a plain copy, _to_xp:
    cupy.asarray stages them through pinned buffers that its pool keeps, one for each size. The copies equal the
    arrays whatever their layout and byte order, and the pool gains no block."""
    import cupy
    from chseg._dask_chunks import _to_xp

    pool = cupy.get_default_pinned_memory_pool()
    cupy.cuda.Device().synchronize()
    pool.free_all_blocks()
    rng = np.random.default_rng(3)
    arrays = [rng.integers(0, 200, 5000 + 600 * k).astype(np.uint8) for k in range(6)]
    arrays += [np.arange(24, dtype=">u2").reshape(4, 6)[:, ::2], np.zeros(0, np.float64), np.arange(5.0)[::-1]]
    for a in arrays:
        got = _to_xp(cupy, a)
        assert isinstance(got, cupy.ndarray) and got.dtype == a.dtype.newbyteorder("=")
        assert np.array_equal(got.get(), a)
        assert _to_xp(cupy, got) is got
    cupy.cuda.Device().synchronize()
    assert pool.n_free_blocks() == 0
