"""chseg.ift against a minimax Dijkstra written here (the path costs are unique), and the forest's own consistency;
chseg.waterpixels against the grid's definition."""

import heapq

import chseg
import numpy as np
import pytest
from conftest import neighbour_pairs
from scipy import ndimage


def neighbours_of(shape, fully_connected):
    p, q = neighbour_pairs(shape, fully_connected)
    adjacency = [[] for _ in range(int(np.prod(shape)))]
    for a, b in zip(p.tolist(), q.tolist()):
        adjacency[a].append(b)
        adjacency[b].append(a)
    return adjacency


def minimax_costs(weights, seeds, fully_connected, arc):
    flat = weights.ravel().astype(np.float64)
    adjacency = neighbours_of(weights.shape, fully_connected)
    cost = np.full(flat.size, np.inf)
    heap = []
    for s in np.flatnonzero(seeds.ravel()):
        cost[s] = 0
        heap.append((0.0, s))
    heapq.heapify(heap)
    while heap:
        c, p = heapq.heappop(heap)
        if c > cost[p]:
            continue
        for q in adjacency[p]:
            w = {"target": flat[q], "maximum": max(flat[p], flat[q]), "absolute-difference": abs(flat[p] - flat[q])}[
                arc
            ]
            nc = max(c, w)
            if nc < cost[q]:
                cost[q] = nc
                heapq.heappush(heap, (nc, q))
    return cost.reshape(weights.shape)


@pytest.mark.parametrize("arc", ["target", "maximum", "absolute-difference"])
@pytest.mark.parametrize("shape, fully_connected", [((23, 27), False), ((23, 27), True), ((7, 9, 8), False)])
def test_costs_are_minimax_and_the_forest_is_consistent(backend, arc, shape, fully_connected):
    rng = np.random.default_rng(21)
    weights = rng.integers(0, 25, shape).astype(np.uint16)
    seeds = np.zeros(shape, np.uint8)
    for k in range(1, 6):
        seeds[tuple(rng.integers(0, s) for s in shape)] = k
    labels, cost, predecessor = chseg.ift(
        weights,
        seeds,
        fully_connected=fully_connected,
        arc_weight=arc,
        return_cost=True,
        return_predecessor=True,
        backend=backend,
    )
    assert np.array_equal(cost, minimax_costs(weights, seeds, fully_connected, arc))
    flat_labels, flat_pred, flat_seeds = labels.ravel(), predecessor.ravel(), seeds.ravel()
    is_seed = flat_seeds != 0
    assert np.all(flat_pred[is_seed] == -1) and np.array_equal(flat_labels[is_seed], flat_seeds[is_seed])
    others = np.flatnonzero(~is_seed)
    assert np.all(flat_pred[others] >= 0)
    assert np.array_equal(flat_labels[others], flat_labels[flat_pred[others]])
    assert set(np.unique(labels)) <= set(range(1, 6))


def test_ift_refuses_bad_input(backend):
    weights = np.ones((8, 8), np.int16)
    with pytest.raises(ValueError, match="seed"):
        chseg.ift(weights, np.zeros((8, 8), np.uint8), backend=backend)
    weights[3, 3] = -1
    seeds = np.zeros((8, 8), np.int32)
    seeds[0, 0] = 1
    with pytest.raises(ValueError, match="negative"):
        chseg.ift(weights, seeds, backend=backend)
    with pytest.raises(ValueError):
        chseg.ift(np.ones((8, 8), np.float64), seeds, backend=backend)


@pytest.mark.parametrize("shape, step", [((60, 75), 10), ((61, 47), (7, 12)), ((20, 22, 18), 6)])
def test_waterpixels_one_connected_superpixel_per_cell(backend, shape, step):
    image = ndimage.gaussian_filter(np.random.default_rng(3).random(shape), 2).astype(np.float32)
    labels, border = chseg.waterpixels(image, step, return_border=True, backend=backend)
    steps = [step] * len(shape) if np.ndim(step) == 0 else list(step)
    cells = int(np.prod([-(-s // t) for s, t in zip(shape, steps)]))
    assert labels.max() == cells and len(np.unique(labels)) == cells
    assert border.dtype == np.float32 and border.shape == shape and np.all(border >= 0)
    structure = ndimage.generate_binary_structure(len(shape), 1)
    for k in range(1, cells + 1):
        assert ndimage.label(labels == k, structure)[1] == 1
    # the seed of a cell, its centre, is in the cell's superpixel
    for index in np.ndindex(*[-(-s // t) for s, t in zip(shape, steps)]):
        first = [i * t for i, t in zip(index, steps)]
        last = [min(f + t, s) - 1 for f, t, s in zip(first, steps, shape)]
        centre = tuple((f + e) // 2 for f, e in zip(first, last))
        assert labels[centre] == np.ravel_multi_index(index, [-(-s // t) for s, t in zip(shape, steps)]) + 1
