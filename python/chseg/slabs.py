"""The single-linkage minimum spanning tree of a volume read slab by slab, for volumes larger than one device.

The volume is read in slabs of whole layers along its first (slowest) axis. For each slab in turn:

1. the slab's own minimum spanning tree (``chseg.single_linkage`` of the slab; on the GPU when there is one);
2. the graph H of that tree, the edges between the previous slab's last layer and this slab's first (weighted as the
   module weighs image edges), and the *live* edges carried from the slabs before;
3. H's minimum spanning tree and its dendrogram (``chseg.single_linkage_graph``; edges ordered by (weight, image edge
   index), as the module orders them, so every tie breaks as in the whole volume's tree);
4. an edge of that tree is *final* (an edge of the whole volume's tree, written out) unless the two regions it joins
   in Kruskal's order both hold a voxel of this slab's last layer. Only edges to later slabs can close a cycle through
   an edge, and they leave from that layer; if one side holds none of its voxels, no later cycle can pass through
   the edge. The live edges go on to the next slab as edges between one last-layer voxel of each side (same weight,
   same image edge index): a tree on the last layer's voxels with the same minimax weights between them.

After the last slab every edge is final. Memory: one slab, its tree, and fewer live edges than a layer has voxels;
the final edges of each slab are handed to the caller as they come (:func:`spanning_tree`). :func:`single_linkage`
gathers them into the dendrogram that ``chseg.single_linkage`` gives the whole volume, array by array
(python/tests/test_slabs.py; docs/python-package.md, "Slabs"). The hierarchies over slabs (partial trees, cuts
written slab by slab): :func:`hierarchy` (python/chseg/_slab_hierarchy.py); the alpha-tree's and the single-linkage
tree's area filter over slabs: :func:`filter_regions` (python/chseg/_slab_filters.py); the area, volume, height and
dynamics of every node of such a hierarchy: :meth:`SlabHierarchy.node_attributes` (python/chseg/_slab_nodes.py).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator

import numpy as np

import chseg

from ._dask_chunks import _to_numpy
from ._slab_common import _check, _crossing, _ends
from ._slab_hierarchy import SlabHierarchy, _Closure, _Tree, hierarchy
from .dask import _block_tree

__all__ = ["SlabHierarchy", "filter_regions", "hierarchy", "single_linkage", "spanning_tree"]


def _no_edges():
    """(u, v, w, edge) of no edge."""
    return [np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.int64)]


def spanning_tree(
    volume: Any, slab: int, *, fully_connected: bool = False, backend: str = "auto"
) -> Iterator[Dict[str, Any]]:
    """The volume's minimum spanning tree (the single-linkage dendrogram's tree edges), slab by slab.

    Parameters
    ----------
    volume : array_like, 2D or 3D
        NumPy, CuPy, a Zarr array or anything sliced along its first axis into such arrays; 8-, 16-, 32-bit
        integers, float32 or float64; no NaN. One slab of it is read at a time.
    slab : int
        Layers of the first axis in each slab (the last slab may have fewer).
    fully_connected : bool, optional
        As for :func:`chseg.single_linkage`.
    backend : {'auto', 'cuda', 'cpu'}, optional
        As for :func:`chseg.single_linkage`.

    Yields
    ------
    dict of numpy.ndarray
        Per slab: ``u``, ``v`` (global raster voxel ids, int64), ``w`` (float64) and ``edge`` (image edge indices,
        int64) of the tree edges that became final with that slab, sorted by image edge index; ``live``, the number
        of edges carried to the next slab. Together the slabs' edges are the whole volume's tree.

    Raises
    ------
    ValueError
        For an empty or non-2D/3D volume, another pixel type, or a slab that is not a whole number of at least 1.
    """
    slab = _check(volume, slab)
    shape = tuple(int(s) for s in volume.shape)
    plane = int(np.prod(shape[1:]))
    carried = _no_edges()
    last_layer = None
    for a in range(0, shape[0], slab):
        b = min(shape[0], a + slab)
        block = volume[a:b]
        start = (a,) + (0,) * (len(shape) - 1)
        parts = [_block_tree(block, start, shape, fully_connected, backend), tuple(carried)]
        if last_layer is not None:
            parts.append(_crossing(last_layer, _to_numpy(block[0]), a - 1, shape, fully_connected))
        if sum(p[0].size for p in parts) == 0:  # a one-voxel first slab: no edge yet
            yield dict(zip(("u", "v", "w", "edge"), _no_edges()), live=np.int64(0))
            last_layer = _to_numpy(block[-1])
            continue
        # H's dendrogram (edges by image edge index, so ties break as in the whole volume), its preorder and children
        tree = _Tree([(*p, np.zeros(p[0].size, np.int8)) for p in parts], _Closure.empty(), None, backend)
        w, e = tree.w, tree.e  # by rank
        if b == shape[0]:
            live = np.zeros(e.size, bool)
        else:
            has0, has1, rep = tree.sides((tree.vertices >= (b - 1) * plane) & (tree.vertices < b * plane))
            live = has0 & has1
            # one last-layer voxel of each side: the first flagged leaf of the side's preorder range
            carried = [rep(tree.kids[live, 0]), rep(tree.kids[live, 1]), w[live], e[live]]
        final = np.argsort(e[~live])
        w_final, e_final = w[~live][final], e[~live][final]
        # the true ends (a carried edge joined one last-layer voxel of each side in H)
        first, second = _ends(e_final, shape, fully_connected)
        yield {"u": first, "v": second, "w": w_final, "edge": e_final, "live": np.int64(int(live.sum()))}
        last_layer = _to_numpy(block[-1])


def single_linkage(volume: Any, slab: int, *, fully_connected: bool = False, backend: str = "auto") -> Any:
    """The single-linkage dendrogram of a volume whose tree is computed slab by slab (:func:`spanning_tree`), gathered.

    The same arrays as ``chseg.single_linkage(volume)`` gives, image edge indices included, for volumes whose tree
    fits the host (24 bytes a voxel) while the volume itself need not fit the device.

    Parameters and errors as for :func:`spanning_tree`.

    Returns
    -------
    chseg.Dendrogram
        NumPy arrays, with the volume's shape.
    """
    _check(volume, slab)
    n = int(np.prod(volume.shape))
    if n > 2**32 - 1:
        raise ValueError(f"volume has {n} voxels: a dendrogram gathers at most 2^32 - 1 (spanning_tree streams more)")
    if n == 1:  # no edge: the one-leaf dendrogram
        return chseg.single_linkage(volume[:], fully_connected=fully_connected, backend=backend)
    parts = list(spanning_tree(volume, slab, fully_connected=fully_connected, backend=backend))
    u, v, w, e = (np.concatenate([p[k] for p in parts]) for k in ("u", "v", "w", "edge"))
    if e.size != n - 1:
        raise RuntimeError(f"the slabs gave {e.size} tree edges for {n} voxels (internal error: please report it)")
    order = np.argsort(e, kind="stable")
    u, v, w, e = u[order], v[order], w[order], e[order]
    tree = chseg.single_linkage_graph(u.astype(np.uint32), v.astype(np.uint32), w, n, is_tree=True, backend=backend)
    edges = e[_to_numpy(tree.edges).astype(np.int64)].astype(np.uint64)
    shape = tuple(int(s) for s in volume.shape)
    return chseg.Dendrogram(tree._run, shape, tree.parents, tree.weights, edges, tree.u, tree.v)


def filter_regions(
    volume: Any,
    slab: int,
    threshold: float,
    attribute: str = "area",
    *,
    tree: str = "alpha_tree",
    fully_connected: bool = False,
    store: Any = None,
    backend: str = "auto",
) -> SlabHierarchy:
    """The area filter of a volume's alpha-tree (``chseg.alpha_tree(volume).filter_regions(threshold)``) or
    single-linkage tree (``chseg.single_linkage(volume).filter_regions(threshold)``), read slab by slab, as a
    :class:`SlabHierarchy`: its ``cut(alpha)`` is the filtered alpha cut (regions smaller than the threshold lose their
    frontiers), ``gather()`` the filtered dendrogram, array by array (python/chseg/_slab_filters.py).

    Parameters
    ----------
    volume : array_like, 2D or 3D
        As for :func:`hierarchy` (read twice for the single-linkage tree, four times for the alpha-tree).
    slab : int
        Layers of the first axis in each slab (the last slab may have fewer).
    threshold : float
        Regions of fewer voxels lose their frontiers.
    attribute : {'area'}, optional
        The filter's attribute (over slabs: the area).
    tree : {'alpha_tree', 'single_linkage'}, optional
        Whose filter: the alpha-tree's (default; as Higra filters a tree that is not binary, through the binary
        partition tree of the image graph weighted by the alpha-tree's saliency) or the single-linkage tree's.
    fully_connected, store, backend
        As for :func:`hierarchy` (the alpha-tree's saliencies go through the store too until the end).

    Returns
    -------
    SlabHierarchy

    Raises
    ------
    ValueError
        For what :func:`hierarchy` refuses, another attribute or tree, or a threshold that is not a number.

    Examples
    --------
    >>> import numpy as np, chseg, chseg.slabs
    >>> volume = np.random.default_rng(0).integers(0, 4, (8, 9, 10)).astype(np.uint8)
    >>> h = chseg.slabs.filter_regions(volume, 3, 20, backend="cpu")
    >>> expected = chseg.alpha_tree(volume, backend="cpu").filter_regions(20, "area")
    >>> bool((h.cut(1) == expected.cut(1)).all())
    True
    """
    from ._slab_filters import filter_regions as run

    return run(volume, slab, threshold, attribute, tree, fully_connected, store, backend)
