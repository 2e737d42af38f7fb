"""Shared helpers of the chseg tests. The oracles are independent of the module: SciPy, scikit-image, Higra, and
small NumPy implementations of the definitions. GPU cases skip without a CUDA device; CuPy cases without CuPy."""

import chseg
import numpy as np
import pytest

HAVE_GPU = chseg.device_count() > 0
try:
    import cupy  # noqa: F401

    HAVE_CUPY = HAVE_GPU
except ImportError:  # pragma: no cover - depends on the machine
    HAVE_CUPY = False

gpu = pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
needs_cupy = pytest.mark.skipif(not HAVE_CUPY, reason="CuPy or a CUDA device missing")

BACKENDS = ["cpu"] + (["cuda"] if HAVE_GPU else [])


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def same_partition(a, b):
    """True when the label arrays a and b group the elements alike (whatever the label values)."""
    a = np.asarray(a).ravel()
    b = np.asarray(b).ravel()
    pairs = np.unique(np.stack([a, b]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


def raster_numbered(labels, first=1):
    """True when the labels are first, first + 1, ... in raster order of each label's first element."""
    values, index = np.unique(np.asarray(labels).ravel(), return_index=True)
    in_order = values[np.argsort(index)]
    return np.array_equal(in_order, np.arange(first, first + len(values)))


def offsets(ndim, fully_connected):
    """Neighbour offsets after the origin in raster order (half the neighbourhood)."""
    out = []
    for off in np.ndindex(*(3,) * ndim):
        o = tuple(x - 1 for x in off)
        if o == (0,) * ndim:
            continue
        if not fully_connected and sum(map(abs, o)) != 1:
            continue
        if o > (0,) * ndim:
            out.append(o)
    return out


def neighbour_pairs(shape, fully_connected):
    """Flat indices (p, q) of every pair of neighbours, each pair once."""
    index = np.arange(int(np.prod(shape))).reshape(shape)
    ps, qs = [], []
    for o in offsets(len(shape), fully_connected):
        src = tuple(slice(max(0, -d), s - max(0, d)) for d, s in zip(o, shape))
        dst = tuple(slice(max(0, d), s - max(0, -d)) for d, s in zip(o, shape))
        ps.append(index[src].ravel())
        qs.append(index[dst].ravel())
    return np.concatenate(ps), np.concatenate(qs)


@pytest.fixture(scope="module")
def cluster_client():
    """A distributed.LocalCluster of two one-thread processes, and its client (one per test module)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client
