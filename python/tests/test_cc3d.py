"""chseg.cc3d against the real cc3d (connected-components-3d, a test dependency): every function, every connectivity,
C and Fortran order, both backends. Where cc3d's result departs from its documented rule (2D 8-connected labelling
with delta), chseg.cc3d is checked against the rule instead (a union-find over the neighbour pairs here)."""

import chseg
import numpy as np
import pytest
from chseg import cc3d as ours
from conftest import needs_cupy, raster_numbered, same_partition

cc3d = pytest.importorskip("cc3d")

CONNECTIVITIES = {1: [6, 18, 26], 2: [4, 8, 6, 18, 26], 3: [6, 18, 26]}
SHAPES = [(57,), (1, 1), (13, 17), (1, 40), (9, 11, 7), (4, 1, 9)]


def multilabel(shape, seed, levels=3, density=0.6):
    rng = np.random.default_rng(seed)
    values = rng.integers(1, levels + 1, shape)
    return np.where(rng.random(shape) < density, values, 0).astype(np.uint8)


def orders(image):
    """The image in C order, in Fortran order, and as a non-contiguous view."""
    padded = np.zeros(tuple(s * 2 for s in image.shape), image.dtype)
    padded[tuple(slice(None, None, 2) for _ in image.shape)] = image
    strided = padded[tuple(slice(None, None, 2) for _ in image.shape)]
    return {"C": np.ascontiguousarray(image), "F": np.asfortranarray(image), "strided": strided}


def cc3d_binary(img, **kwargs):
    """cc3d's labels of a binary image. cc3d 4.1.1's binary path errs on some multi-valued images: 2D
    4-connectivity splits touching voxels of different values, periodic boundaries in Fortran order split touching
    voxels, and some small images stop with "maximum length exception". Where it errs, its multilabel path on the 0/1
    image gives the components (SciPy's ndimage.label agrees), in the type the binary path chose."""
    reference, n = cc3d.connected_components((img != 0).astype(np.uint8), return_N=True, **kwargs)
    try:
        labels, m = cc3d.connected_components(img, binary_image=True, return_N=True, **kwargs)
    except RuntimeError:
        return reference, n
    return reference.astype(labels.dtype), n


def assert_same_array(a, b):
    assert type(a) is type(b) or (isinstance(a, np.ndarray) and isinstance(b, np.ndarray))
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape
    assert a.flags.f_contiguous == b.flags.f_contiguous and a.flags.c_contiguous == b.flags.c_contiguous
    assert np.array_equal(a, b)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("binary", [False, True])
def test_connected_components_every_connectivity_and_order(backend, shape, binary):
    image = multilabel(shape, sum(shape))
    for name, img in orders(image).items():
        for connectivity in CONNECTIVITIES[image.ndim]:
            if binary:
                expected, n = cc3d_binary(img, connectivity=connectivity)
            else:
                expected, n = cc3d.connected_components(img, connectivity=connectivity, return_N=True)
            got, m = ours.connected_components(
                img, connectivity=connectivity, binary_image=binary, return_N=True, backend=backend
            )
            assert m == n, (name, connectivity)
            assert_same_array(got, expected)


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.uint16,
        np.int16,
        np.uint32,
        np.int32,
        np.uint64,
        np.int64,
        np.float16,
        np.float32,
        np.float64,
    ],
)
def test_connected_components_every_dtype(backend, dtype):
    rng = np.random.default_rng(5)
    image = rng.integers(-2, 3, (15, 12, 6)).astype(dtype)
    for connectivity in (6, 26):
        assert_same_array(
            ours.connected_components(image, connectivity=connectivity, backend=backend),
            cc3d.connected_components(image, connectivity=connectivity),
        )


def union_find_oracle(image, pairs_within):
    """Components of the non-zero voxels of a 2D or 3D C-ordered image joined by the predicate, numbered by first
    voxel in raster order: the documented rule, computed naively."""
    flat = image.ravel()
    parent = np.arange(flat.size)

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    index = np.arange(flat.size).reshape(image.shape)
    for off in np.ndindex(*(3,) * image.ndim):
        o = tuple(x - 1 for x in off)
        if o <= (0,) * image.ndim:
            continue
        src = tuple(slice(max(0, -d), n - max(0, d)) for d, n in zip(o, image.shape))
        dst = tuple(slice(max(0, d), n - max(0, -d)) for d, n in zip(o, image.shape))
        for p, q in zip(index[src].ravel(), index[dst].ravel()):
            if flat[p] != 0 and flat[q] != 0 and pairs_within(o) and abs(int(flat[p]) - int(flat[q])) <= DELTA[0]:
                a, b = find(p), find(q)
                parent[max(a, b)] = min(a, b)
    labels = np.zeros(flat.size, np.int64)
    next_label = 0
    for i in range(flat.size):
        if flat[i] == 0:
            continue
        r = find(i)
        if r == i:
            next_label += 1
            labels[i] = next_label
        else:
            labels[i] = labels[r]
    return labels.reshape(image.shape), next_label


DELTA = [0]


@pytest.mark.parametrize("delta", [1, 2, 5])
def test_connected_components_delta(backend, delta):
    rng = np.random.default_rng(delta)
    volume = rng.integers(0, 12, (10, 9, 8)).astype(np.uint8)
    for name, img in orders(volume).items():
        for connectivity in (6, 18, 26):
            expected, n = cc3d.connected_components(img, connectivity=connectivity, delta=delta, return_N=True)
            got, m = ours.connected_components(
                img, connectivity=connectivity, delta=delta, return_N=True, backend=backend
            )
            assert m == n and np.array_equal(got, expected), (name, connectivity)
    plane = rng.integers(0, 12, (23, 19)).astype(np.float32)
    for connectivity in (4, 6):
        assert_same_array(
            ours.connected_components(plane, connectivity=connectivity, delta=delta, backend=backend),
            cc3d.connected_components(plane, connectivity=connectivity, delta=delta),
        )
    # 2D 8-connectivity: cc3d 4.1 also joins vertical neighbours farther apart than delta (see the module's docs);
    # chseg.cc3d keeps to the rule |a - b| <= delta, checked here against a naive union-find.
    DELTA[0] = delta
    expected, n = union_find_oracle(plane.astype(np.int64), lambda o: True)
    got, m = ours.connected_components(plane, connectivity=8, delta=delta, return_N=True, backend=backend)
    assert m == n and np.array_equal(got, expected)


def test_signed_delta_is_taken_on_the_bits_as_cc3d_does(backend):
    image = np.array([[-1, 1, 3, 0, -128, 127]], np.int8)
    for delta in (2, 254, 255):
        assert_same_array(
            ours.connected_components(image, connectivity=4, delta=delta, backend=backend),
            cc3d.connected_components(image, connectivity=4, delta=delta),
        )


@pytest.mark.parametrize("connectivity", [4, 8, 6])
def test_periodic_boundary(backend, connectivity):
    rng = np.random.default_rng(connectivity)
    plane = np.where(rng.random((12, 14)) < 0.5, rng.integers(1, 3, (12, 14)), 0).astype(np.uint16)
    images = [plane]
    if connectivity == 6:
        images.append(np.where(rng.random((7, 8, 9)) < 0.45, rng.integers(1, 3, (7, 8, 9)), 0).astype(np.uint8))
    for image in images:
        for img in orders(image).values():
            for binary in (False, True):
                if binary:
                    expected, _ = cc3d_binary(img, connectivity=connectivity, periodic_boundary=True)
                else:
                    expected = cc3d.connected_components(img, connectivity=connectivity, periodic_boundary=True)
                got = ours.connected_components(
                    img, connectivity=connectivity, periodic_boundary=True, binary_image=binary, backend=backend
                )
                assert_same_array(got, expected)
    # One foreground row: cc3d labels it by its runs, without wrapping; so does chseg.cc3d.
    row = np.zeros((5, 8), np.uint8)
    row[2] = [1, 1, 0, 2, 2, 0, 1, 1]
    assert_same_array(
        ours.connected_components(row, connectivity=connectivity, periodic_boundary=True, backend=backend),
        cc3d.connected_components(row, connectivity=connectivity, periodic_boundary=True),
    )


def test_out_dtype_default_and_explicit(backend, tmp_path):
    # Many components: the estimate passes 65534 and the default type widens, as cc3d's does.
    checker = (np.indices((300, 300)).sum(axis=0) % 2).astype(np.uint8) * np.uint8(3)
    checker[::2, ::3] = 1
    for img in (checker, np.zeros((4, 5), np.uint8), np.ones((3, 3, 3), bool)):
        for out_dtype in (None, np.uint32, np.uint64):
            assert_same_array(
                ours.connected_components(
                    img, connectivity=4 if img.ndim == 2 else 6, out_dtype=out_dtype, backend=backend
                ),
                cc3d.connected_components(img, connectivity=4 if img.ndim == 2 else 6, out_dtype=out_dtype),
            )
    path = tmp_path / "labels.bin"
    got = ours.connected_components(np.asfortranarray(checker), connectivity=8, out_file=str(path), backend=backend)
    expected = cc3d.connected_components(np.asfortranarray(checker), connectivity=8)
    assert isinstance(got, np.memmap) and np.array_equal(got, expected)
    assert path.stat().st_size == expected.nbytes


def test_bad_input_is_refused_as_cc3d_refuses_it(backend):
    image = multilabel((6, 7), 1)
    cases = [
        (dict(data=np.zeros((2, 2, 2, 2), np.uint8)), "DimensionError"),
        (dict(data=image, connectivity=5), ValueError),
        (dict(data=image[None], connectivity=8), ValueError),
        (dict(data=image, connectivity=26, periodic_boundary=True), ValueError),
        (dict(data=image, connectivity=4, periodic_boundary=True, delta=1), ValueError),
        (dict(data=image, out_dtype=np.uint8), ValueError),
        (dict(data=image.astype(np.float16), delta=1), TypeError),
        (dict(data=image.astype(np.complex64)), TypeError),
    ]
    for kwargs, error in cases:
        theirs_error = cc3d.DimensionError if error == "DimensionError" else error
        ours_error = ours.DimensionError if error == "DimensionError" else error
        with pytest.raises(theirs_error):
            cc3d.connected_components(**kwargs)
        with pytest.raises(ours_error):
            ours.connected_components(**kwargs, backend=backend)
    for zero in (np.zeros((0, 3), np.uint8), np.zeros((4, 0, 2), np.float32)):
        empty, n = ours.connected_components(zero, return_N=True, backend=backend)
        expected, m = cc3d.connected_components(zero, return_N=True)
        assert n == m and empty.shape == expected.shape and empty.dtype == expected.dtype
    empty, n = ours.connected_components(np.zeros((0, 3), np.uint8), return_N=True, backend=backend)
    expected, m = cc3d.connected_components(np.zeros((0, 3), np.uint8), return_N=True)
    assert n == m and empty.shape == expected.shape and empty.dtype == expected.dtype


def assert_same_statistics(got, expected):
    assert set(got) == set(expected)
    for key in ("voxel_counts", "centroids"):
        assert got[key].dtype == expected[key].dtype and got[key].shape == expected[key].shape, key
        assert np.array_equal(got[key], expected[key], equal_nan=True), key
    boxes, theirs = got["bounding_boxes"], expected["bounding_boxes"]
    if isinstance(theirs, np.ndarray):
        assert boxes.dtype == theirs.dtype and np.array_equal(boxes, theirs)
    else:
        assert boxes == theirs


@pytest.mark.parametrize("shape", [(40,), (13, 17), (9, 11, 7)])
def test_statistics(backend, shape):
    labels = cc3d.connected_components(multilabel(shape, 3), connectivity=6 if len(shape) != 2 else 4)
    labels[labels == 2] = 0  # a value that does not occur
    for img in orders(labels).values():
        for no_slices in (False, True):
            assert_same_statistics(
                ours.statistics(img, no_slice_conversion=no_slices, backend=backend),
                cc3d.statistics(img, no_slice_conversion=no_slices),
            )
    signed = labels.astype(np.int32)
    assert_same_statistics(ours.statistics(signed, backend=backend), cc3d.statistics(signed))
    with pytest.raises(ValueError):
        ours.statistics(signed - 1, backend=backend)
    with pytest.raises(ValueError):
        ours.statistics(np.full(shape, 10**6, np.uint32), backend=backend)


@pytest.mark.parametrize("invert", [False, True])
def test_dust(backend, invert):
    volume = multilabel((14, 12, 10), 11, levels=2, density=0.35)
    for img in orders(volume).values():
        for threshold in (3, (2, 9), [5, 40], 10**6):
            for connectivity in (6, 26):
                expected = cc3d.dust(img, threshold, connectivity=connectivity, invert=invert, return_N=True)
                got = ours.dust(
                    img, threshold, connectivity=connectivity, invert=invert, return_N=True, backend=backend
                )
                assert got[1] == expected[1]
                assert_same_array(got[0], expected[0])
    signed = volume.astype(np.int16)
    assert_same_array(ours.dust(signed, 4, backend=backend), cc3d.dust(signed, 4))
    labels = cc3d.connected_components(volume)
    assert_same_array(
        ours.dust(labels, 4, precomputed_ccl=True, backend=backend), cc3d.dust(labels, 4, precomputed_ccl=True)
    )
    mine = volume.copy()
    out = ours.dust(mine, 5, in_place=True, backend=backend)
    assert np.shares_memory(out, mine) and np.array_equal(mine, cc3d.dust(volume, 5))


@pytest.mark.parametrize("k", [0, 1, 2, 5, 10**4])
def test_largest_k(backend, k):
    volume = multilabel((16, 13, 9), 21, levels=2, density=0.4)
    for img in orders(volume).values():
        for connectivity in (6, 26):
            expected = cc3d.largest_k(img, k, connectivity=connectivity, return_N=True)
            got = ours.largest_k(img, k, connectivity=connectivity, return_N=True, backend=backend)
            if k == 0:  # cc3d returns the empty image alone then, return_N or not
                assert_same_array(got, expected)
                continue
            assert got[1] == expected[1]
            assert_same_array(got[0], expected[0])
    plane = np.random.default_rng(k).integers(0, 20, (30, 25)).astype(np.uint8)
    assert_same_array(
        ours.largest_k(plane, k, connectivity=4, delta=3, backend=backend),
        cc3d.largest_k(plane, k, connectivity=4, delta=3),
    )
    labels = cc3d.connected_components(volume)
    assert_same_array(
        ours.largest_k(labels, k, precomputed_ccl=True, backend=backend),
        cc3d.largest_k(labels, k, precomputed_ccl=True),
    )
    with pytest.raises(AssertionError):
        ours.largest_k(volume, -1, backend=backend)


def test_each():
    labels = cc3d.connected_components(multilabel((9, 8, 7), 4))
    for img in orders(labels).values():
        for binary in (False, True):
            for in_place in (False, True):
                expected = {k: v.copy() for k, v in cc3d.each(img, binary=binary, in_place=in_place)}
                it = ours.each(img, binary=binary, in_place=in_place)
                assert len(it) == len(expected)
                got = {k: v.copy() for k, v in it}
                assert got.keys() == expected.keys()
                for key in expected:
                    assert_same_array(got[key], expected[key])


@pytest.mark.parametrize("shape", [(12, 15), (7, 9, 8), (1, 6, 5), (6, 1, 4)])
def test_contacts_and_region_graph(shape):
    labels = cc3d.connected_components(multilabel(shape, 9, levels=4, density=0.9), connectivity=6)
    for img in orders(labels).values():
        for connectivity in [4, 8, 6, 18, 26] if len(shape) == 2 else [6, 18, 26]:
            for surface_area in (True, False):
                for anisotropy in ((1, 1, 1), (2, 3, 5), (0.5, 1.25, 3.0)):
                    expected = cc3d.contacts(
                        img, connectivity=connectivity, surface_area=surface_area, anisotropy=anisotropy
                    )
                    got = ours.contacts(
                        img, connectivity=connectivity, surface_area=surface_area, anisotropy=anisotropy
                    )
                    assert got.keys() == expected.keys()
                    for key, value in expected.items():
                        assert got[key] == pytest.approx(value, rel=1e-6), (key, connectivity, surface_area)
            assert ours.region_graph(img, connectivity=connectivity) == cc3d.region_graph(
                img, connectivity=connectivity
            )


@pytest.mark.parametrize("shape", [(30,), (12, 15), (7, 9, 8)])
def test_voxel_connectivity_graph(shape):
    image = multilabel(shape, 13, levels=2, density=0.7)
    for img in orders(image).values():
        for dtype in (np.uint8, np.int32, np.uint64):
            for connectivity in CONNECTIVITIES[len(shape)]:
                assert_same_array(
                    ours.voxel_connectivity_graph(img.astype(dtype), connectivity=connectivity),
                    cc3d.voxel_connectivity_graph(img.astype(dtype), connectivity=connectivity),
                )


@pytest.mark.parametrize("shape", [(12, 15), (7, 9, 8), (6, 5, 1)])
def test_color_connectivity_graph(backend, shape):
    image = multilabel(shape, 17, levels=2, density=0.7)
    rng = np.random.default_rng(2)
    connectivities = [4, 8, 6, 26] if len(shape) == 2 else [6, 26]
    for connectivity in connectivities:
        vcg_conn = connectivity if len(shape) == 2 or connectivity in (6, 26) else 26
        vcg = cc3d.voxel_connectivity_graph(image, connectivity=vcg_conn)
        graphs = [vcg, (vcg & rng.integers(0, 2**26, vcg.shape).astype(vcg.dtype)).astype(vcg.dtype)]
        for graph in graphs:
            if connectivity == 26 and len(shape) == 3 and shape[2] > 1 and graph.dtype != np.uint32:
                continue
            expected = cc3d.color_connectivity_graph(graph, connectivity=connectivity, return_N=True)
            got = ours.color_connectivity_graph(graph, connectivity=connectivity, return_N=True, backend=backend)
            assert got[1] == expected[1]
            assert_same_array(got[0], expected[0])


def test_connected_components_stack(backend):
    volume = multilabel((10, 9, 12), 23, levels=2, density=0.5)
    blocks = [volume[:, :, :4], volume[:, :, 4:5], volume[:, :, 5:]]
    for connectivity in (6, 26):
        labels, n = ours.connected_components_stack(blocks, connectivity=connectivity, return_N=True, backend=backend)
        expected, m = cc3d.connected_components(np.asfortranarray(volume), connectivity=connectivity, return_N=True)
        assert n == m and same_partition(labels, expected)
        assert raster_numbered(np.asfortranarray(labels).ravel(order="F")[labels.ravel(order="F") > 0])


def test_disjoint_set():
    theirs, mine = cc3d.DisjointSet(), ours.DisjointSet()
    for x, y in [(1, 2), (5, 3), (2, 5), (9, 9), (7, 1)]:
        theirs.union(x, y)
        mine.union(x, y)
    assert theirs.data == mine.data
    assert all(theirs.find(v) == mine.find(v) for v in range(11))


def test_estimate_provisional_labels():
    image = multilabel((9, 11, 7), 8)
    for img in orders(image).values():
        assert ours.estimate_provisional_labels(img) == cc3d.estimate_provisional_labels(img)
    assert ours.estimate_provisional_labels(np.zeros((3, 4), np.uint8)) == cc3d.estimate_provisional_labels(
        np.zeros((3, 4), np.uint8)
    )


def test_same_labels_as_chseg_label(backend):
    """chseg.cc3d and chseg.label share the core: cc3d's binary 26-connected labels are chseg.label's."""
    volume = multilabel((11, 12, 13), 31) > 0
    a = ours.connected_components(volume, connectivity=26, backend=backend)
    b = chseg.label(volume, fully_connected=True, backend=backend)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("chunks", [(5, 4, 3), (14, 12, 10), (3, 12, 10)])
def test_dask_dust_and_statistics_equal_the_whole_volumes(chunks):
    da = pytest.importorskip("dask.array")
    import chseg.dask

    volume = multilabel((14, 12, 10), 29, levels=3, density=0.5)
    lazy = da.from_array(volume, chunks=chunks)
    for connectivity in (6, 26):
        for binary in (False, True):
            for threshold, invert in ((4, False), ((2, 9), True)):
                expected, n = cc3d.dust(
                    volume, threshold, connectivity=connectivity, binary_image=binary, invert=invert, return_N=True
                )
                got, m = chseg.dask.dust(
                    lazy,
                    threshold,
                    connectivity=connectivity,
                    binary_image=binary,
                    invert=invert,
                    return_N=True,
                    backend="cpu",
                )
                assert m == n and np.array_equal(got.compute(), expected), (connectivity, binary, threshold)
    labels = cc3d.connected_components(volume, connectivity=6)
    for no_slices in (False, True):
        assert_same_statistics(
            chseg.dask.statistics(da.from_array(labels, chunks=chunks), no_slice_conversion=no_slices, backend="cpu"),
            cc3d.statistics(labels, no_slice_conversion=no_slices),
        )
    with pytest.raises(ValueError):
        chseg.dask.dust(lazy, 3, connectivity=18, backend="cpu")


@needs_cupy
def test_cupy_in_cupy_out():
    import cupy

    volume = multilabel((20, 18, 16), 37, levels=3, density=0.55)
    on_gpu = cupy.asarray(volume)
    labels, n = ours.connected_components(on_gpu, connectivity=26, return_N=True)
    expected, m = cc3d.connected_components(volume, connectivity=26, return_N=True)
    assert isinstance(labels, cupy.ndarray) and n == m
    assert labels.dtype == expected.dtype and np.array_equal(labels.get(), expected)
    fortran = cupy.asfortranarray(on_gpu)
    assert np.array_equal(
        ours.connected_components(fortran, connectivity=6).get(),
        cc3d.connected_components(np.asfortranarray(volume), connectivity=6),
    )
    assert_same_statistics(ours.statistics(cupy.asarray(expected)), cc3d.statistics(expected))
    dusted = ours.dust(on_gpu, 5, connectivity=26)
    assert isinstance(dusted, cupy.ndarray) and np.array_equal(dusted.get(), cc3d.dust(volume, 5, connectivity=26))
    kept = ours.largest_k(on_gpu, 3, connectivity=26)
    assert isinstance(kept, cupy.ndarray) and np.array_equal(kept.get(), cc3d.largest_k(volume, 3, connectivity=26))


@needs_cupy
def test_cupy_graphs_stay_on_the_device():
    """each, voxel_connectivity_graph and color_connectivity_graph of CuPy arrays return CuPy arrays; contacts and
    region_graph of CuPy arrays (pairs found on the device) equal cc3d's of the same labels; both backends."""
    import cupy

    volume = multilabel((17, 14, 12), 41, levels=3, density=0.6)
    on_gpu = cupy.asarray(volume)
    for connectivity in (6, 18, 26):
        vcg = ours.voxel_connectivity_graph(on_gpu, connectivity=connectivity)
        expected = cc3d.voxel_connectivity_graph(volume, connectivity=connectivity)
        assert isinstance(vcg, cupy.ndarray) and vcg.dtype == expected.dtype and vcg.flags.f_contiguous
        assert np.array_equal(vcg.get(), expected), connectivity
        assert ours.contacts(on_gpu, connectivity=connectivity) == cc3d.contacts(volume, connectivity=connectivity)
        assert ours.region_graph(on_gpu, connectivity) == cc3d.region_graph(volume, connectivity)
    plane = cupy.asarray(volume[:, :, 3])
    for connectivity in (4, 8):
        vcg = ours.voxel_connectivity_graph(plane, connectivity=connectivity)
        assert np.array_equal(vcg.get(), cc3d.voxel_connectivity_graph(volume[:, :, 3], connectivity=connectivity))
    wide = cc3d.voxel_connectivity_graph(volume, connectivity=26)
    expected, m = cc3d.color_connectivity_graph(wide, connectivity=26, return_N=True)
    for backend in ("cuda", "cpu"):
        got, n = ours.color_connectivity_graph(cupy.asarray(wide), connectivity=26, return_N=True, backend=backend)
        assert isinstance(got, cupy.ndarray) and n == m and np.array_equal(got.get(), expected), backend
    images = list(ours.each(on_gpu, binary=True))
    assert [k for k, _ in images] == [k for k, _ in cc3d.each(volume, binary=True)]
    assert all(isinstance(im, cupy.ndarray) and np.array_equal(im.get(), volume == k) for k, im in images)
