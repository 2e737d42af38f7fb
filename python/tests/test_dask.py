"""chseg.dask against the whole-volume chseg functions: the same labels and trees for every chunking (chunks of one
voxel along an axis, uneven chunks, chunks smaller than a component, spirals that cross every chunk), both
connectivities, 2D and 3D, on the threaded scheduler and on a distributed.LocalCluster of processes."""

import chseg
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import chseg.dask as cd  # noqa: E402
from conftest import HAVE_GPU, gpu, needs_cupy  # noqa: E402


def spiral(n):
    """A one-pixel-wide square spiral on zeros, its arms one pixel apart: one component that crosses every chunk."""
    image = np.zeros((n, n), np.uint8)

    def free(y, x, dy, dx):
        ny, nx = y + dy, x + dx
        if not (0 <= ny < n and 0 <= nx < n) or image[ny, nx]:
            return False
        ay, ax = ny + dy, nx + dx
        return not (0 <= ay < n and 0 <= ax < n and image[ay, ax])

    y, x, dy, dx = 0, 0, 0, 1
    image[y, x] = 1
    while True:
        if not free(y, x, dy, dx):
            dy, dx = dx, -dy  # turn right
            if not free(y, x, dy, dx):
                return image
        y, x = y + dy, x + dx
        image[y, x] = 1


CHUNKINGS_2D = [(10, 10), (1, 53), (47, 1), (7, (20, 3, 30)), (47, 53), (3, 4)]
CHUNKINGS_3D = [(5, 6, 7), (1, 12, 13), (11, 12, 1), ((2, 9), 5, (10, 3)), (11, 12, 13)]


def images_2d():
    rng = np.random.default_rng(0)
    return {
        "noise": (rng.random((47, 53)) < 0.5).astype(np.uint8),
        "spiral": spiral(53)[:47],
        "levels": rng.integers(0, 4, (47, 53)).astype(np.int16),
    }


@pytest.mark.parametrize("chunks", CHUNKINGS_2D)
@pytest.mark.parametrize("fully_connected", [False, True])
def test_label_2d_every_chunking(chunks, fully_connected):
    for name, image in images_2d().items():
        for flat_zones in (False, True):
            got = cd.label(
                da.from_array(image, chunks=chunks),
                fully_connected=fully_connected,
                flat_zones=flat_zones,
                backend="cpu",
            )
            assert got.chunks == da.from_array(image, chunks=chunks).chunks
            expected = chseg.label(
                image, fully_connected=fully_connected, flat_zones=flat_zones, dtype=np.uint64, backend="cpu"
            )
            assert np.array_equal(got.compute(), expected), (name, flat_zones)


@pytest.mark.parametrize("chunks", CHUNKINGS_3D)
@pytest.mark.parametrize("fully_connected", [False, True])
def test_label_and_alpha_cut_3d(chunks, fully_connected):
    rng = np.random.default_rng(1)
    volume = rng.integers(0, 7, (11, 12, 13)).astype(np.uint8)
    array = da.from_array(volume, chunks=chunks)
    assert np.array_equal(
        cd.label(array > 2, fully_connected=fully_connected, backend="cpu").compute(),
        chseg.label(volume > 2, fully_connected=fully_connected, dtype=np.uint64, backend="cpu"),
    )
    tree = chseg.alpha_tree(volume, fully_connected=fully_connected, backend="cpu")
    for alpha in (0, 1, 2):
        got = cd.alpha_cut(array, alpha, fully_connected=fully_connected, backend="cpu").compute()
        assert np.array_equal(got, tree.cut(alpha)), alpha


@pytest.mark.parametrize("chunks", CHUNKINGS_2D[:4])
def test_alpha_cut_of_long_plateaux(chunks):
    image = (spiral(53)[:47] * 10 + np.random.default_rng(2).integers(0, 2, (47, 53))).astype(np.uint8)
    tree = chseg.alpha_tree(image, backend="cpu")
    for alpha in (1, 5, 10):
        got = cd.alpha_cut(da.from_array(image, chunks=chunks), alpha, backend="cpu").compute()
        assert np.array_equal(got, tree.cut(alpha))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint32, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("fully_connected", [False, True])
def test_single_linkage_tree_equals_the_whole_volumes(dtype, fully_connected):
    rng = np.random.default_rng(3)
    for shape, chunks in (
        ((23, 31), (5, 7)),
        ((23, 31), (1, 31)),
        ((9, 10, 11), (3, (4, 6), 5)),
        ((9, 10, 11), (9, 10, 1)),
    ):
        image = (rng.random(shape) * 20).astype(dtype)
        got = cd.single_linkage_tree(
            da.from_array(image, chunks=chunks), fully_connected=fully_connected, backend="cpu"
        )
        expected = chseg.single_linkage(image, fully_connected=fully_connected, backend="cpu")
        for name in ("parents", "weights", "edges", "u", "v"):
            assert np.array_equal(getattr(got, name), getattr(expected, name)), (shape, chunks, name)
        assert np.array_equal(got.cut(4), expected.cut(4)) and got.cut(4).shape == shape


def watershed_images_2d():
    """Integer and float noise, a flat image, and the spiral as one plateau that crosses every chunk: draining at
    one end (geodesic distances along the whole spiral) or a regional minimum (one basin)."""
    rng = np.random.default_rng(6)
    walls = np.where(spiral(53)[:47] == 1, 5, 9).astype(np.uint8)
    draining = walls.copy()
    draining[0, 0] = 0
    return {
        "levels": rng.integers(0, 4, (47, 53)).astype(np.int16),
        "float": rng.random((47, 53)).astype(np.float32),
        "flat": np.zeros((47, 53), np.uint8),
        "spiral plateau": draining,
        "spiral minimum": walls,
    }


@pytest.mark.parametrize("chunks", CHUNKINGS_2D)
@pytest.mark.parametrize("fully_connected", [False, True])
def test_watershed_2d_every_chunking(chunks, fully_connected):
    for name, image in watershed_images_2d().items():
        got = cd.watershed(da.from_array(image, chunks=chunks), fully_connected=fully_connected, backend="cpu")
        expected = chseg.watershed(image, fully_connected=fully_connected, dtype=np.uint64, backend="cpu")
        assert np.array_equal(got.compute(), expected), name


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int64, np.uint64, np.float64, bool])
@pytest.mark.parametrize("fully_connected", [False, True])
def test_watershed_3d(dtype, fully_connected):
    rng = np.random.default_rng(7)
    volume = rng.integers(0, 3, (11, 12, 13)).astype(dtype)
    expected = chseg.watershed(volume, fully_connected=fully_connected, dtype=np.uint64, backend="cpu")
    for chunks in CHUNKINGS_3D[:4]:
        got = cd.watershed(da.from_array(volume, chunks=chunks), fully_connected=fully_connected, backend="cpu")
        assert np.array_equal(got.compute(), expected), chunks


def test_watershed_exchanges_distances_until_they_settle(monkeypatch):
    """The spiral plateau's distances cross the chunk rows dozens of times: chunks run again until no halo changes
    (more runs than chunks), and the result is still the whole volume's."""
    import chseg._dask_watershed as implementation

    runs = []
    original = implementation._pass
    monkeypatch.setattr(implementation, "_pass", lambda *a: runs.append(1) or original(*a))
    image = watershed_images_2d()["spiral plateau"]
    got = cd.watershed(da.from_array(image, chunks=(1, 53)), backend="cpu")
    assert len(runs) > 3 * got.numblocks[0]
    assert np.array_equal(got.compute(), chseg.watershed(image, dtype=np.uint64, backend="cpu"))


def test_outputs_are_lazy_and_go_to_zarr_chunk_by_chunk(tmp_path):
    zarr = pytest.importorskip("zarr")
    image = images_2d()["noise"]
    labels = cd.label(da.from_array(image, chunks=(16, 20)), backend="cpu")
    assert isinstance(labels, da.Array)
    labels.to_zarr(str(tmp_path / "labels.zarr"))
    stored = zarr.open(str(tmp_path / "labels.zarr"), mode="r")
    assert stored.chunks == (16, 20)
    assert np.array_equal(stored[:], chseg.label(image, dtype=np.uint64, backend="cpu"))


def test_to_zarr_leaves_no_complete_looking_store_when_interrupted(tmp_path):
    zarr = pytest.importorskip("zarr")
    image = images_2d()["noise"]
    labels = cd.watershed(da.from_array(image, chunks=(16, 20)), backend="cpu")

    def fail_on_the_last_chunk(block, block_info=None):
        if block_info[0]["chunk-location"] == (2, 2):
            raise RuntimeError("interrupted")
        return block

    target = tmp_path / "ws.zarr"
    with pytest.raises(RuntimeError, match="interrupted"):
        cd.to_zarr(labels.map_blocks(fail_on_the_last_chunk, dtype=labels.dtype), target)
    assert not target.exists()  # what the failed run wrote, if anything, keeps its .partial- name
    assert all(".partial-" in p.name for p in tmp_path.iterdir())
    cd.to_zarr(labels, target)
    assert np.array_equal(zarr.open(str(target), mode="r")[:], chseg.watershed(image, dtype=np.uint64, backend="cpu"))
    assert all(p.name == "ws.zarr" or ".partial-" in p.name for p in tmp_path.iterdir())
    with pytest.raises(FileExistsError):
        cd.to_zarr(labels, target)
    cd.to_zarr(labels + 1, target, overwrite=True)
    assert zarr.open(str(target), mode="r")[0, 0] == labels[0, 0].compute() + 1


@pytest.mark.skipif(HAVE_GPU, reason="a CUDA device is present")
def test_a_worker_without_a_gpu():
    """backend='cuda' on a worker without a GPU raises the reason through Dask; 'auto' runs the chunk on the CPU."""
    image = images_2d()["noise"]
    array = da.from_array(image, chunks=(16, 20))
    for function in (cd.label, cd.watershed):
        with pytest.raises(RuntimeError, match="no CUDA device is usable"):
            function(array, backend="cuda").compute()
    assert np.array_equal(cd.label(array).compute(), chseg.label(image, dtype=np.uint64, backend="cpu"))


def test_errors():
    with pytest.raises(ValueError, match="NaN: the voxel at \\(2, 3\\)"):
        image = np.zeros((5, 6))
        image[2, 3] = np.nan
        cd.watershed(da.from_array(image, chunks=(2, 2)), backend="cpu").compute()
    with pytest.raises(ValueError, match="64 bits"):
        cd.watershed(da.zeros((4, 4), dtype=np.complex64))
    with pytest.raises(ValueError, match="axes"):
        cd.label(da.zeros((3, 3, 3, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="NaN"):
        cd.alpha_cut(da.zeros((4, 4), dtype=np.uint8), float("nan"))
    with pytest.raises(ValueError):
        cd.single_linkage_tree(da.zeros((4, 4), dtype=np.int64))


def test_on_a_local_cluster_of_processes(cluster_client):
    rng = np.random.default_rng(4)
    volume = rng.integers(0, 5, (14, 15, 16)).astype(np.uint8)
    array = da.from_array(volume, chunks=(5, (4, 11), 7))
    assert np.array_equal(
        cd.label(array > 1, fully_connected=True, backend="cpu").compute(),
        chseg.label(volume > 1, fully_connected=True, dtype=np.uint64, backend="cpu"),
    )
    assert np.array_equal(
        cd.alpha_cut(array, 1, backend="cpu").compute(), chseg.alpha_tree(volume, backend="cpu").cut(1)
    )
    tree = cd.single_linkage_tree(array, backend="cpu")
    assert np.array_equal(tree.parents, chseg.single_linkage(volume, backend="cpu").parents)
    for fully_connected in (False, True):
        assert np.array_equal(
            cd.watershed(array, fully_connected=fully_connected, backend="cpu").compute(),
            chseg.watershed(volume, fully_connected=fully_connected, dtype=np.uint64, backend="cpu"),
        )


@gpu
@needs_cupy
def test_cupy_chunks_on_the_gpu():
    import cupy

    rng = np.random.default_rng(5)
    volume = rng.integers(0, 5, (40, 45, 50)).astype(np.uint8)
    array = da.from_array(cupy.asarray(volume), chunks=(16, 20, 25), asarray=False)
    labels = cd.label(array > 1, fully_connected=True)
    computed = labels.compute()
    assert isinstance(computed, cupy.ndarray)
    assert np.array_equal(computed.get(), chseg.label(volume > 1, fully_connected=True, dtype=np.uint64, backend="cpu"))
    assert np.array_equal(cd.alpha_cut(array, 1).compute().get(), chseg.alpha_tree(volume, backend="cpu").cut(1))
    tree = cd.single_linkage_tree(array)
    assert np.array_equal(chseg._arrays.host(tree.parents), chseg.single_linkage(volume, backend="cpu").parents)
    for fully_connected in (False, True):
        got = cd.watershed(array, fully_connected=fully_connected).compute()
        assert isinstance(got, cupy.ndarray)
        assert np.array_equal(
            got.get(), chseg.watershed(volume, fully_connected=fully_connected, dtype=np.uint64, backend="cpu")
        )
    walls = cupy.asarray(watershed_images_2d()["spiral plateau"])
    got = cd.watershed(da.from_array(walls, chunks=(5, 7), asarray=False)).compute()
    assert np.array_equal(got.get(), chseg.watershed(walls.get(), dtype=np.uint64, backend="cpu"))


@gpu
@needs_cupy
def test_cupy_chunks_on_a_local_cuda_cluster():
    """dask_cuda's LocalCUDACluster, one worker process per GPU (dask-cuda refuses two on one device), two threads
    each, so that two chunks share a GPU at once: the chunks become CuPy arrays on the workers, and every function
    gives the whole volume's result."""
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    import cupy

    rng = np.random.default_rng(8)
    volume = rng.integers(0, 6, (30, 33, 36)).astype(np.uint8)
    with (
        dask_cuda.LocalCUDACluster(threads_per_worker=2, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        array = da.from_array(volume, chunks=(11, 16, (20, 16))).map_blocks(cupy.asarray)
        labels = cd.label(array > 2, fully_connected=True).compute()
        assert isinstance(labels, cupy.ndarray)
        assert np.array_equal(
            labels.get(), chseg.label(volume > 2, fully_connected=True, dtype=np.uint64, backend="cpu")
        )
        assert np.array_equal(cd.alpha_cut(array, 1).compute().get(), chseg.alpha_tree(volume, backend="cpu").cut(1))
        assert np.array_equal(
            cd.watershed(array).compute().get(), chseg.watershed(volume, dtype=np.uint64, backend="cpu")
        )
        tree = cd.single_linkage_tree(array)
        assert np.array_equal(chseg._arrays.host(tree.parents), chseg.single_linkage(volume, backend="cpu").parents)


def _chunk_device(block):
    """The PCI bus id of the GPU a CuPy chunk lives on, as a one-voxel array (a chunk task's device)."""
    import cupy

    bus = cupy.cuda.Device().pci_bus_id  # e.g. "0000:1B:00.0"
    return np.full((1,) * block.ndim, int(bus.replace(":", "").replace(".", ""), 16), np.int64)


@gpu
@needs_cupy
def test_local_cuda_cluster_spreads_chunks_over_every_gpu():
    """On a machine with several GPUs, LocalCUDACluster starts one worker per GPU, chunk tasks run on every one of
    them, and chseg.dask.label on that cluster equals the whole volume's labels (skipped with one GPU)."""
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    import cupy

    gpus = cupy.cuda.runtime.getDeviceCount()
    if gpus < 2:
        pytest.skip("one GPU")
    rng = np.random.default_rng(9)
    volume = rng.integers(0, 6, (64, 48, 40)).astype(np.uint8)
    with (
        dask_cuda.LocalCUDACluster(threads_per_worker=2, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert len(client.scheduler_info()["workers"]) == gpus
        array = da.from_array(volume, chunks=(8, 16, 20)).map_blocks(cupy.asarray)  # 48 chunks
        seen = set(
            array.map_blocks(_chunk_device, chunks=(1, 1, 1), dtype=np.int64, meta=np.empty((0, 0, 0), np.int64))
            .compute()
            .ravel()
            .tolist()
        )
        assert len(seen) == gpus
        labels = cd.label(array > 2).compute()
        assert np.array_equal(labels.get(), chseg.label(volume > 2, dtype=np.uint64, backend="cpu"))
