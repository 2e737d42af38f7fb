"""What chseg takes and gives: NumPy layouts, itk.Image objects, CuPy arrays, backends, errors, threads."""

import threading

import chseg
import numpy as np
import pytest
from conftest import HAVE_GPU, gpu, needs_cupy


def test_non_contiguous_and_other_layouts_are_copied():
    image = (np.random.default_rng(0).random((40, 60)) < 0.5).astype(np.uint8)
    expected = chseg.label(np.ascontiguousarray(image.T), backend="cpu")
    assert np.array_equal(chseg.label(image.T, backend="cpu"), expected)
    assert np.array_equal(chseg.label(np.asfortranarray(image), backend="cpu"), chseg.label(image, backend="cpu"))
    assert np.array_equal(chseg.label(image.astype(bool), backend="cpu"), chseg.label(image, backend="cpu"))


def _every_function(backend):
    """Each public function on one input that the test varies (a function of it), returning its arrays."""
    rng = np.random.default_rng(7)
    image = (rng.random((13, 17)) * 6).astype(np.uint16)
    binary = (image > 2).astype(np.uint8)
    seeds = np.zeros(image.shape, np.uint32)
    seeds[0, 0], seeds[-1, -1], seeds[6, 8] = 1, 2, 3
    u, v = np.arange(20, dtype=np.int64), np.arange(1, 21, dtype=np.int64)
    w = rng.random(20)

    def trees(a):
        t = chseg.alpha_tree(a, backend=backend)
        d = chseg.single_linkage(a, backend=backend)
        return [t.parents, t.levels, d.parents, d.weights, d.edges]

    return {
        "label": (binary, lambda a: [chseg.label(a, backend=backend)]),
        "label flat zones": (image, lambda a: [chseg.label(a, flat_zones=True, backend=backend)]),
        "label mask": (binary, lambda a: [chseg.label(image, mask=a, flat_zones=True, backend=backend)]),
        "watershed": (image, lambda a: [chseg.watershed(a, backend=backend)]),
        "watershed markers": (seeds, lambda a: [chseg.watershed(image, a, backend=backend)]),
        "watershed mask": (binary, lambda a: [chseg.watershed(image, seeds, mask=a, backend=backend)]),
        "waterfall": (image, lambda a: [chseg.waterfall(a, backend=backend).labels(1)]),
        "alpha_tree and single_linkage": (image, trees),
        "single_linkage_graph": (w, lambda a: [chseg.single_linkage_graph(u, v, a, 21, backend=backend).parents]),
        "single_linkage_graph ends": (u, lambda a: [chseg.single_linkage_graph(a, v, w, 21, backend=backend).weights]),
        "watershed_hierarchy": (image, lambda a: [chseg.watershed_hierarchy(a, backend=backend).weights]),
        "ift weights": (image, lambda a: list(chseg.ift(a, seeds, return_cost=True, backend=backend))),
        "ift seeds": (seeds, lambda a: [chseg.ift(image, a, backend=backend)]),
        "waterpixels": (image, lambda a: [chseg.waterpixels(a, 4, backend=backend)]),
    }


@pytest.mark.parametrize("name", list(_every_function("cpu")))
@pytest.mark.parametrize("form", ["read-only", "non-contiguous view", "big-endian", "read-only big-endian view"])
def test_every_function_reads_any_numpy_input(backend, name, form):
    """Inputs are read, never written: a read-only array (np.load(mmap_mode="r"), np.broadcast_to, arrays other
    libraries hand over), a strided view and a big-endian array give what the plain C-contiguous array gives."""
    x, run = _every_function(backend)[name]
    expected = run(np.ascontiguousarray(x))
    if form == "read-only":
        a = x.copy()
        a.flags.writeable = False
    elif form == "non-contiguous view":
        big = np.zeros((2 * x.shape[0],) + x.shape[1:], x.dtype)
        big[::2] = x
        a = big[::2]
        assert not a.flags.c_contiguous
    elif form == "big-endian":
        a = x.astype(x.dtype.newbyteorder(">"))
    else:
        big = np.zeros((2 * x.shape[0],) + x.shape[1:], x.dtype.newbyteorder(">"))
        big[::2] = x
        a = big[::2]
        a.flags.writeable = False
    got = run(a)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.array_equal(np.asarray(g), np.asarray(e)), (name, form)


def test_read_only_input_is_not_copied():
    """A read-only C-contiguous input reaches the backend as it is (no copy where none is needed)."""
    from chseg._arrays import prepare, resolve

    a = np.arange(12, dtype=np.uint8).reshape(3, 4)
    a.flags.writeable = False
    assert prepare(resolve("cpu", None, a), a, "image") is a


def numpy_outputs(backend):
    """Every NumPy array the functions return, by name."""
    image = (np.random.default_rng(0).random((9, 11)) * 5).astype(np.uint8)
    out = {
        f"label {np.dtype(t).name}": chseg.label(image > 2, dtype=t, backend=backend)
        for t in (np.uint8, np.uint16, np.uint32, np.uint64)
    }
    _, stats = chseg.label(image > 2, statistics=True, backend=backend)
    out.update({f"statistics {k}": v for k, v in stats.items() if isinstance(v, np.ndarray)})
    out["watershed"] = chseg.watershed(image, dtype=np.uint64, backend=backend)
    hierarchy = chseg.waterfall(image, dtype=np.uint64, backend=backend)
    out.update({"waterfall level 0": hierarchy.level0, "waterfall level 1": hierarchy.labels(1)})
    out.update({f"waterfall parents {k}": p for k, p in enumerate(hierarchy.parents)})
    tree = chseg.alpha_tree(image, backend=backend)
    out.update(
        {
            "alpha parents": tree.parents,
            "alpha levels": tree.levels,
            "alpha cut": tree.cut(1),
            "alpha saliency": tree.saliency(),
            "alpha areas": tree.areas(),
            "alpha ranges": tree.ranges(),
            "alpha-omega cut": tree.cut(1, 2),
        }
    )
    dendrogram = chseg.single_linkage(image, backend=backend)
    out.update({f"single linkage {k}": getattr(dendrogram, k) for k in ("parents", "weights", "edges", "u", "v")})
    out.update({"single linkage cut": dendrogram.cut(1), "linkage matrix": dendrogram.linkage_matrix()})
    seeds = np.zeros(image.shape, np.uint32)
    seeds[0, 0], seeds[-1, -1] = 1, 2
    out.update({f"ift {k}": a for k, a in enumerate(chseg.ift(image, seeds, backend=backend))})
    out.update({f"waterpixels {k}": a for k, a in enumerate(chseg.waterpixels(image, 3, backend=backend))})
    return out


@pytest.mark.parametrize("backend", ["cpu", pytest.param("cuda", marks=gpu)])
def test_numpy_outputs_have_numpys_own_dtypes(backend, tmp_path):
    """64-bit integer outputs are NumPy's uint64 / int64 ('L' / 'l' on Linux), not the equal 'Q' / 'q' of another
    dtype class that Zarr 3 refuses; and a uint64 label array goes to Zarr."""
    for name, array in numpy_outputs(backend).items():
        assert isinstance(array, np.ndarray), name
        assert type(array.dtype) is type(np.dtype(array.dtype.name)), (name, array.dtype.char)
    zarr = pytest.importorskip("zarr")
    labels = chseg.label(np.eye(5, dtype=bool), fully_connected=True, dtype=np.uint64, backend=backend)
    stored = zarr.open(str(tmp_path / "labels.zarr"), mode="w", shape=labels.shape, dtype=labels.dtype)
    stored[:] = labels
    assert np.array_equal(stored[:], labels)


def test_bad_arguments_raise_value_errors():
    image = np.ones((4, 4), np.uint8)
    with pytest.raises(ValueError, match="backend"):
        chseg.label(image, backend="gpu")
    with pytest.raises(ValueError, match="empty"):
        chseg.label(np.ones((0, 4), np.uint8))
    with pytest.raises(ValueError, match="axes"):
        chseg.label(np.ones(4, np.uint8))
    with pytest.raises(ValueError, match="fully_connected"):
        chseg.label(image, fully_connected="yes")
    with pytest.raises(ValueError, match="labels"):
        chseg.label(image, dtype=np.int32)
    with pytest.raises(ValueError, match="algorithm"):
        chseg.watershed(image, algorithm="fast")
    with pytest.raises(ValueError, match="alpha-trees"):
        chseg.alpha_tree(image.astype(np.float64))
    with pytest.raises(ValueError, match="grid_step"):
        chseg.waterpixels(image, 0)
    with pytest.raises(ValueError, match="mask"):
        chseg.label(image, mask=np.ones((3, 4), bool))


@pytest.mark.skipif(HAVE_GPU, reason="a CUDA device is present")
def test_cuda_backend_without_a_device_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="no CUDA device"):
        chseg.label(np.ones((4, 4), np.uint8), backend="cuda")


def test_the_gil_is_released_during_a_run():
    image = (np.random.default_rng(1).random((3000, 3000)) < 0.5).astype(np.uint8)
    done = []
    worker = threading.Thread(target=lambda: done.append(chseg.label(image, backend="cpu").max()))
    steps = 0
    worker.start()
    while worker.is_alive():
        steps += 1
    worker.join()
    assert done and done[0] > 0
    assert steps > 10000, steps  # the main thread ran while the labelling ran


def test_threads_give_the_single_threaded_results():
    rng = np.random.default_rng(2)
    images = [rng.random((200, 220)).astype(np.float32) for _ in range(6)]
    expected = [chseg.watershed(x) for x in images]
    results = [None] * len(images)

    def work(i):
        for _ in range(5):
            results[i] = chseg.watershed(images[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(images))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, expected):
        assert np.array_equal(got, want)


@gpu
def test_threads_with_volumes_of_different_shapes():
    """Engines whose kernels size their shared memory by the volume's shape, from threads at once (as Dask's threaded
    scheduler runs slabs of uneven chunks): each result is the single-threaded one. (A kernel's shared-memory limit is
    the process's: one call lowering it under another's launch failed so before it only rose.)"""
    rng = np.random.default_rng(5)
    shapes = [(1, 9, 8), (5, 9, 8), (7, 9, 8), (3, 40, 50), (2, 3, 4), (64, 70), (9, 300)]
    volumes = [rng.integers(0, 9, shape).astype(np.uint8) for shape in shapes]

    def run(volume):
        sl = chseg.single_linkage(volume, fully_connected=True, backend="cuda")
        alpha = chseg.alpha_tree(volume, fully_connected=True, backend="cuda")
        return [np.asarray(chseg._arrays.host(x)) for x in (sl.parents, sl.weights, sl.edges, alpha.cut(3))]

    expected = [run(v) for v in volumes]
    failures, results = [], {}

    def work(i):
        try:
            for _ in range(20):
                results[i] = run(volumes[i])
        except Exception as exc:  # noqa: BLE001 - reported below with its volume
            failures.append((shapes[i], exc))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(volumes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    for i, want in enumerate(expected):
        assert all(np.array_equal(a, b) for a, b in zip(results[i], want)), shapes[i]


def test_itk_images_keep_their_geometry():
    itk = pytest.importorskip("itk")
    array = (np.random.default_rng(3).random((12, 20, 30)) < 0.4).astype(np.uint8)
    image = itk.image_from_array(array)
    image.SetSpacing((0.5, 0.7, 2.0))
    image.SetOrigin((1.0, -2.0, 3.0))
    labels = chseg.label(image, backend="cpu")
    assert isinstance(labels, itk.Image)
    assert tuple(labels.GetSpacing()) == (0.5, 0.7, 2.0) and tuple(labels.GetOrigin()) == (1.0, -2.0, 3.0)
    assert np.array_equal(itk.array_from_image(labels), chseg.label(array, backend="cpu"))
    hierarchy = chseg.waterfall(itk.image_from_array(np.random.default_rng(4).random((30, 30)).astype(np.float32)))
    assert isinstance(hierarchy.labels(1), itk.Image) and isinstance(hierarchy.level0, itk.Image)


# --- the GPU: every function equal to the CPU reference, NumPy and CuPy inputs ---------------------------------------


def _everything(image, seeds, backend):
    """Every function's outputs on one input, as NumPy arrays."""
    import cupy

    get = lambda x: cupy.asnumpy(x) if isinstance(x, cupy.ndarray) else np.asarray(x)  # noqa: E731
    out = {}
    out["label"] = get(chseg.label(image > 0.5, backend=backend))
    out["flat"] = get(
        chseg.label(
            (image * 4).astype(np.uint8) if isinstance(image, np.ndarray) else (image * 4).astype(cupy.uint8),
            flat_zones=True,
            backend=backend,
        )
    )
    out["watershed"] = get(chseg.watershed(image, fully_connected=True, backend=backend))
    hierarchy = chseg.waterfall(image, backend=backend)
    out["waterfall"] = [get(hierarchy.labels(k)) for k in range(hierarchy.num_levels)]
    quantised = (image * 40).astype(np.uint8) if isinstance(image, np.ndarray) else (image * 40).astype(cupy.uint8)
    tree = chseg.alpha_tree(quantised, backend=backend)
    out["alpha_tree"] = (
        get(tree.parents),
        get(tree.levels),
        get(tree.cut(3)),
        get(tree.cut(5, omega=9)),
        get(tree.saliency()),
    )
    dendrogram = chseg.single_linkage(image, backend=backend)
    out["single_linkage"] = (
        get(dendrogram.parents),
        get(dendrogram.weights),
        get(dendrogram.edges),
        get(dendrogram.clusters(10)),
        get(dendrogram.cut(0.01)),
    )
    out["ift"] = tuple(
        get(x) for x in chseg.ift(image, seeds, return_cost=True, return_predecessor=True, backend=backend)
    )
    out["waterpixels"] = tuple(get(x) for x in chseg.waterpixels(image, 9, return_border=True, backend=backend))
    return out


def _assert_same(a, b, path="result"):
    if isinstance(a, dict):
        for k in a:
            _assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{path}[{i}]")
    else:
        assert a.dtype == b.dtype and np.array_equal(a, b), path


def _inputs(shape):
    rng = np.random.default_rng(sum(shape))
    from scipy import ndimage

    image = ndimage.gaussian_filter(rng.random(shape), 1.5).astype(np.float32)
    image = (image - image.min()) / (image.max() - image.min())
    seeds = np.zeros(shape, np.uint16)
    for k in range(1, 9):
        seeds[tuple(rng.integers(0, s) for s in shape)] = k
    return image, seeds


@gpu
@needs_cupy
@pytest.mark.parametrize("shape", [(256, 301), (40, 45, 50)])
def test_gpu_equals_cpu_for_numpy_and_cupy_inputs(shape):
    import cupy

    image, seeds = _inputs(shape)
    reference = _everything(image, seeds, "cpu")
    _assert_same(reference, _everything(image, seeds, "cuda"))
    _assert_same(reference, _everything(cupy.asarray(image), cupy.asarray(seeds), "cuda"))
    _assert_same(reference, _everything(cupy.asarray(image), cupy.asarray(seeds), "cpu"))


@gpu
@needs_cupy
def test_cupy_outputs_stay_on_the_device_and_use_the_current_stream():
    import cupy

    image, seeds = _inputs((300, 280))
    d_image = cupy.asarray(image)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        labels = chseg.watershed(d_image)
        tree = chseg.alpha_tree((d_image * 40).astype(cupy.uint8))
        cut = tree.cut(2)
    assert isinstance(labels, cupy.ndarray) and labels.device.id == d_image.device.id
    assert isinstance(tree.parents, cupy.ndarray) and isinstance(tree.levels, cupy.ndarray)
    assert isinstance(cut, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(labels), chseg.watershed(image, backend="cpu"))
    # the watershed through the widened download path (uint64 labels from 32-bit device labels)
    wide = chseg.watershed(d_image, dtype=np.uint64)
    assert wide.dtype == cupy.uint64 and np.array_equal(cupy.asnumpy(wide), cupy.asnumpy(labels).astype(np.uint64))
    # a non-contiguous CuPy view is copied on the device
    view = d_image[:, ::2]
    assert np.array_equal(cupy.asnumpy(chseg.watershed(view)), chseg.watershed(image[:, ::2], backend="cpu"))


@gpu
@needs_cupy
def test_cupy_inputs_never_cross_the_host_link():
    """The backends' transfer counter: NumPy inputs move their bytes over the host link, CuPy inputs none."""
    import cupy
    from chseg import _chseg

    image, seeds = _inputs((128, 64, 64))
    before = _chseg.host_transfer_bytes()
    chseg.watershed(image, backend="cuda")
    assert _chseg.host_transfer_bytes() - before >= image.nbytes * 2  # float input up, uint32 labels down
    d_image, d_seeds = cupy.asarray(image), cupy.asarray(seeds)
    d_small = cupy.asarray(image[:8])
    before = _chseg.host_transfer_bytes()
    chseg.label(d_image > 0.5)
    chseg.label((d_image * 4).astype(cupy.uint8), flat_zones=True)
    chseg.watershed(d_image)
    tree = chseg.alpha_tree((d_small * 40).astype(cupy.uint8))
    tree.cut(3)
    tree.saliency()
    dendrogram = chseg.single_linkage(d_small)
    dendrogram.clusters(5)
    chseg.ift(d_image, d_seeds, return_cost=True, return_predecessor=True)
    chseg.waterpixels(d_image, 8, return_border=True)
    cupy.cuda.get_current_stream().synchronize()
    assert _chseg.host_transfer_bytes() == before


@gpu
def test_device_memory_errors_are_memory_errors_and_the_next_run_succeeds():
    """A failing device allocation (the library's test hook) in every function: MemoryError (as CuPy's
    OutOfMemoryError) naming the CUDA error, then the same call succeeds with the reference's result."""
    from chseg import _chseg

    with pytest.raises(ValueError, match="device"):
        chseg.label(np.ones((4, 4), np.uint8), backend="cuda", device=chseg.device_count())
    image, seeds = _inputs((60, 70))
    calls = [
        lambda: chseg.label(image > 0.5, backend="cuda"),
        lambda: chseg.watershed(image, backend="cuda"),
        lambda: chseg.waterfall(image, backend="cuda").labels(1),
        lambda: chseg.alpha_tree((image * 40).astype(np.uint8), backend="cuda").parents,
        lambda: chseg.single_linkage(image, backend="cuda").parents,
        lambda: chseg.ift(image, seeds, backend="cuda"),
        lambda: chseg.waterpixels(image, 7, backend="cuda"),
    ]
    for call in calls:
        expected = call()
        _chseg.fail_device_allocation_after(1)
        try:
            with pytest.raises(MemoryError, match="cudaErrorMemoryAllocation"):
                call()
        finally:
            _chseg.fail_device_allocation_after(0)
        assert np.array_equal(call(), expected)


@gpu
def test_a_run_larger_than_the_free_device_memory_is_refused_with_the_bytes():
    """With 1 MiB of device memory free (the library's test hook), the functions whose runs reserve their memory
    raise MemoryError naming the bytes needed and free before allocating; the next call succeeds."""
    from chseg import _chseg

    image, seeds = _inputs((60, 70))
    calls = [
        lambda: chseg.label(image > 0.5, backend="cuda"),
        lambda: chseg.watershed(image, backend="cuda"),
        lambda: chseg.watershed(image, level=0.1, backend="cuda"),
        lambda: chseg.waterfall(image, backend="cuda").labels(1),
        lambda: chseg.ift(image, seeds, backend="cuda"),
        lambda: chseg.waterpixels(image, 7, backend="cuda"),
    ]
    for call in calls:
        expected = call()
        _chseg.set_device_memory_limit(1 << 20)
        try:
            with pytest.raises(
                MemoryError, match=r"needs .* of device memory; device 0 has 0.00 GB \(1048576 bytes\) free"
            ):
                call()
        finally:
            _chseg.set_device_memory_limit(0)
        assert np.array_equal(call(), expected)


def test_outputs_from_the_host_cache_hold_no_stale_values(backend):
    """NumPy outputs take their storage from the host array cache: arrays left full of garbage by earlier outputs
    must not show through (every backend writes every element)."""
    from chseg._arrays import host_empty

    image, seeds = _inputs((130, 170))  # 22,100 pixels: uint64 and float64 outputs over the cache's 1 MiB minimum
    big = np.kron(image, np.ones((4, 4), np.float32))

    def run():
        tree = chseg.alpha_tree((big * 40).astype(np.uint8), backend=backend)
        dendrogram = chseg.single_linkage(big, backend=backend)
        return [
            chseg.label(big > 0.5, backend=backend, dtype=np.uint64),
            chseg.watershed(big, backend=backend),
            tree.parents.copy(),
            tree.levels.copy(),
            tree.cut(3),
            tree.saliency(),
            dendrogram.parents.copy(),
            dendrogram.weights.copy(),
            chseg.ift(big, np.kron(seeds, np.ones((4, 4), np.uint16)), backend=backend),
            chseg.waterpixels(big, 9, backend=backend),
            chseg.waterfall(big, backend=backend).labels(1),
        ]

    limit = chseg.get_host_cache_limit()
    try:
        chseg.set_host_cache_limit(0)
        chseg.release_host_cache()
        reference = run()
        chseg.set_host_cache_limit(1 << 31)
        for dtype in ("uint8", "uint16", "uint32", "uint64", "int64", "float32", "float64"):
            for size in (big.size, 2 * big.size, big.size * 13 // 4, 4 * big.size):
                garbage = host_empty((size,), dtype)
                garbage.view(np.uint8)[:] = 0xA5
                del garbage  # back to the cache, full of 0xA5
        for got, want in zip(run(), reference):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    finally:
        chseg.set_host_cache_limit(limit)
