"""Python tests of itk.CudaWaterpixelImageFilter and itk.CudaImageForestingTransformImageFilter through ITK's wrapping.

Oracles: a Python implementation of the Image Foresting Transform's definition (Dijkstra on the (cost, hop count)
keys with heapq and the stated predecessor rule), written here apart from the module's C++; for waterpixels, the
grid's cells (count, consecutive labels) and the Voronoi cells of the centres on a flat image. GPU cases skip without
a CUDA device; on the GPU machine each case runs on both backends and they must agree.
"""

import heapq

import itk
import numpy as np
import pytest
import scipy.ndimage as ndi
import skimage.io
from conftest import backend, has_gpu

GPU = has_gpu()
BACKENDS = ["CPU", pytest.param("CUDA", marks=pytest.mark.skipif(not GPU, reason="no CUDA device"))]


def smooth(shape, seed, scale):
    rng = np.random.default_rng(seed)
    a = ndi.gaussian_filter(rng.standard_normal(shape), 1.5)
    return (a - a.min()) / (a.max() - a.min()) * scale


# ---- Waterpixels ----------------------------------------------------------------------------------------------


def waterpixels(image, backend_name, step, **settings):
    f = itk.CudaWaterpixelImageFilter[type(image), itk.Image[itk.UL, image.GetImageDimension()]].New(image)
    f.SetBackend(backend(backend_name))
    f.SetGridStep(step)
    for name, value in settings.items():
        getattr(f, "Set" + name)(value)
    f.Update()
    assert f.GetLastBackend() == backend(backend_name)
    return itk.array_from_image(f.GetOutput()), f.GetNumberOfSuperpixels()


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
@pytest.mark.parametrize("shape", [(61, 83), (19, 26, 33)])
def test_waterpixels_are_the_cells_numbered_from_one(backend_name, dtype, shape):
    image = itk.image_from_array(smooth(shape, 3, 200).astype(dtype))
    labels, n = waterpixels(image, backend_name, 8, GradientMinimumSeeds=True)
    cells = int(np.prod([-(-s // 8) for s in shape]))
    assert n == cells
    assert np.array_equal(np.unique(labels), np.arange(1, cells + 1))
    if GPU and backend_name == "CPU":
        gpu, _ = waterpixels(image, "CUDA", 8, GradientMinimumSeeds=True)
        assert np.array_equal(labels, gpu)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_flat_image_with_large_compactness_gives_voronoi_cells(backend_name):
    shape, step = (50, 70), 10
    labels, _ = waterpixels(itk.image_from_array(np.full(shape, 5, np.uint8)), backend_name, step, Compactness=1e4)
    centres = [(np.arange(0, n, step) + np.minimum(np.arange(0, n, step) + step, n) - 1) // 2 for n in shape]
    y, x = np.mgrid[0 : shape[0], 0 : shape[1]]
    cy, cx = np.meshgrid(*centres, indexing="ij")
    d = ((y[..., None, None] - cy) ** 2 + (x[..., None, None] - cx) ** 2).reshape(shape + (-1,))
    voronoi = np.argmin(d, axis=-1) + 1
    inner = (np.abs(y - cy.ravel()[voronoi - 1]) <= step / 4) & (np.abs(x - cx.ravel()[voronoi - 1]) <= step / 4)
    assert np.array_equal(labels[inner], voronoi[inner])
    assert np.mean(labels == voronoi) > 0.9


def test_waterpixels_functional_interface():
    image = itk.image_from_array(smooth((40, 40), 5, 100).astype(np.float32))
    labels = itk.cuda_waterpixel_image_filter(image, grid_step=10, backend=backend("CPU"))
    assert np.array_equal(np.unique(itk.array_from_image(labels)), np.arange(1, 17))


def test_python_example_writes_the_overlay(tmp_path):
    import os
    import subprocess
    import sys

    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "waterpixels.py")
    done = subprocess.run([sys.executable, example, "--step", "32"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "256 waterpixels" in done.stdout
    picture = skimage.io.imread(tmp_path / "waterpixels.png")
    assert picture.shape == (512, 512, 3)
    assert np.any(np.all(picture == (255, 40, 40), axis=-1))


# ---- Image Foresting Transform --------------------------------------------------------------------------------


def ift_oracle(weights, seeds, full):
    """The definition, in Python: keys (V, D) by Dijkstra; predecessor = the neighbour whose offer equals the key,
    with the smallest (key, index); label of the root. Arc weight B(q)."""
    shape = weights.shape
    flat_w = weights.ravel().astype(np.float64)
    flat_s = seeds.ravel()
    n = flat_w.size
    offsets = [o for o in np.ndindex(*(3,) * len(shape)) if any(c != 1 for c in o)]
    offsets = [tuple(c - 1 for c in o) for o in offsets if full or sum(abs(c - 1) for c in o) == 1]

    def neighbours(i):
        c = np.unravel_index(i, shape)
        for o in offsets:  # raster order of the neighbours
            q = tuple(a + b for a, b in zip(c, o))
            if all(0 <= a < s for a, s in zip(q, shape)):
                yield int(np.ravel_multi_index(q, shape))

    def offer(k, w):
        return (w, 0) if w > k[0] else (k[0], k[1] + 1)

    key = [None] * n
    done = [False] * n
    heap = []
    for i in range(n):
        if flat_s[i]:
            key[i] = (0.0, 0)
            heapq.heappush(heap, ((0.0, 0), i))
    labels = np.zeros(n, np.uint64)
    cost = np.zeros(n)
    while heap:
        k, q = heapq.heappop(heap)
        if done[q] or k != key[q]:
            continue
        done[q] = True
        cost[q] = k[0]
        if flat_s[q]:
            labels[q] = flat_s[q]
        else:
            best = min((key[p], p) for p in neighbours(q) if done[p] and offer(key[p], flat_w[q]) == k)
            labels[q] = labels[best[1]]
        for p in neighbours(q):
            if not done[p]:
                o = offer(k, flat_w[p])
                if key[p] is None or o < key[p]:
                    key[p] = o
                    heapq.heappush(heap, (o, p))
    return labels.reshape(shape), cost.reshape(shape)


def ift(weights, seeds, backend_name, full):
    w = itk.image_from_array(weights.astype(np.float32))
    s = itk.image_from_array(seeds.astype(np.uint64))  # unsigned long, the labels' type
    s.CopyInformation(w)
    f = itk.CudaImageForestingTransformImageFilter[type(w), type(s)].New(w)
    f.SetSeedImage(s)
    f.SetFullyConnected(full)
    f.SetBackend(backend(backend_name))
    f.Update()
    return itk.array_from_image(f.GetOutput()), itk.array_from_image(f.GetCostOutput()), f.GetSeedCount()


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("shape", [(17, 23), (7, 9, 11)])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("levels", [3, 0])
def test_ift_equals_python_oracle(backend_name, shape, full, levels):
    rng = np.random.default_rng(len(shape) + 2 * full + levels)
    weights = rng.integers(0, levels, shape) if levels else smooth(shape, 7, 50)
    weights = weights.astype(np.float32)
    seeds = np.zeros(shape, np.uint64)
    seeds.ravel()[rng.choice(seeds.size, 5, replace=False)] = rng.integers(1, 4, 5)
    labels, cost, count = ift(weights, seeds, backend_name, full)
    oracle_labels, oracle_cost = ift_oracle(weights, seeds, full)
    assert count == 5
    assert np.array_equal(cost, oracle_cost.astype(np.float32))
    assert np.array_equal(labels, oracle_labels)


def test_ift_arc_weight_enum_and_bad_input():
    w = itk.image_from_array(np.ones((6, 6), np.float32))
    s = itk.image_from_array(np.zeros((6, 6), np.uint64))
    f = itk.CudaImageForestingTransformImageFilter[type(w), type(s)].New(w)
    f.SetSeedImage(s)
    f.SetArcWeight(itk.CudaForestingTransformEnums.ArcWeight_Maximum)
    assert f.GetArcWeight() == itk.CudaForestingTransformEnums.ArcWeight_Maximum
    f.SetBackend(backend("CPU"))
    with pytest.raises(RuntimeError, match="no seed"):
        f.Update()
