"""The objects that hold hierarchies: the waterfall, the alpha-tree and single-linkage dendrograms."""

from __future__ import annotations

import math
from typing import Any, List, Optional, Tuple

import numpy as np

from . import _chseg  # type: ignore[attr-defined]  # the compiled extension, no stub
from ._arrays import Run, choice, host, to_caller


def _first_order_labels(xp, roots):
    """Labels 1..K numbered in raster order of each group's first element."""
    _, first, inverse = xp.unique(roots, return_index=True, return_inverse=True)
    rank = xp.empty(first.shape[0], dtype=np.int64)
    rank[xp.argsort(first)] = xp.arange(first.shape[0], dtype=np.int64)
    return rank[inverse.ravel()] + 1


def _dendrogram_arrays(run: Run, n: int, wide_node_ids: bool = False):
    """The backend's output arrays of a dendrogram of n leaves: parents, and per tree edge weight, edge, u and v. Node
    ids (parents, u, v) are uint64 beyond 2^31 - 1 leaves or when ``wide_node_ids`` asks, else uint32."""
    ids = np.uint64 if wide_node_ids or n > 2**31 - 1 else np.uint32
    return (
        run.empty((2 * n - 1,), ids),
        run.empty((n - 1,), np.float64),
        run.empty((n - 1,), np.uint64),
        run.empty((n - 1,), ids),
        run.empty((n - 1,), ids),
    )


def _filter_threshold(threshold, attribute: str) -> float:
    """The checked arguments of an attribute filter: its threshold as a float (ValueError for NaN or an attribute other
    than area, volume or height)."""
    if attribute not in ("area", "volume", "height"):
        raise ValueError(f"attribute must be 'area', 'volume' or 'height', not {attribute!r}")
    threshold = float(threshold)
    if math.isnan(threshold):
        raise ValueError("threshold must be a number, not NaN")
    return threshold


def _highest_kept_ancestor(xp, parent, kept):
    """For every node, its highest ancestor reached through kept nodes only (pointer jumping): `kept[x]` says whether
    node x joins its children; along a path to the root the kept nodes must come first (levels never fall)."""
    nodes = parent.shape[0]
    index = xp.arange(nodes, dtype=parent.dtype)
    up = xp.where(kept[parent], parent, index)
    while True:
        nxt = up[up]
        if bool((nxt == up).all()):
            return up
        up = nxt


class WaterfallHierarchy:
    """The waterfall of an image, kept as a hierarchy: level 0 (the watershed) as a label image, and for every level k
    the label at level k + 1 of each of its regions. ``labels(k)`` makes the label image of any level.

    Attributes: ``level0`` (labels 1..region_counts[0]), ``region_counts`` (regions of each level), ``parents``
    (``parents[k][r - 1]``: the region of level k + 1 that region r of level k belongs to; uint32 NumPy arrays)."""

    def __init__(self, run: Run, level0, region_counts: List[int], parents: List[np.ndarray]):
        self._run = run
        self._level0 = level0  # NumPy or CuPy, as the caller gave the image
        self.level0 = run.output(level0)
        self.region_counts = list(region_counts)
        self.parents = parents

    @property
    def num_levels(self) -> int:
        """The number of levels, level 0 included."""
        return len(self.region_counts)

    def labels(self, level: int):
        """The label image of one level.

        Parameters
        ----------
        level : int
            0 .. num_levels - 1.

        Returns
        -------
        ndarray
            Labels 1 .. region_counts[level] in raster order of each region's first pixel, of the input's kind
            (NumPy, CuPy, ``itk.Image``); computed from level 0 and the parent maps (on the device for CuPy inputs).

        Raises
        ------
        ValueError
            For a level out of range.
        """
        if not 0 <= int(level) < self.num_levels:
            raise ValueError(f"level must be in 0..{self.num_levels - 1}, not {level}")
        xp = self._run.xp if self._run.on_device else np
        level0 = self._level0
        lookup: np.ndarray = np.arange(1, self.region_counts[0] + 1, dtype=np.uint64)
        for k in range(int(level)):
            lookup = self.parents[k][lookup - 1].astype(np.uint64)
        lookup = np.concatenate([np.zeros(1, np.uint64), lookup]).astype(level0.dtype)
        if xp is not np:
            with xp.cuda.Device(self._run.device):
                result = xp.asarray(lookup)[level0]
        else:
            result = lookup[level0]
        return self._run.output(result)


class _Tree:
    """What alpha-trees and dendrograms share: parents after children, the root last and its own parent."""

    parents: Any
    num_leaves: int

    def altitudes(self) -> Any:
        """The nodes' altitudes as Higra has them."""
        raise NotImplementedError

    def __init__(self, run: Run, shape: Optional[Tuple[int, ...]]):
        self._run = run
        self.shape = shape
        self._areas: Optional[np.ndarray] = None

    @property
    def num_nodes(self) -> int:
        """The number of nodes, leaves included."""
        return int(self.parents.shape[0])

    def _xp(self):
        return self._run.xp if self._run.on_device else np

    def areas(self) -> np.ndarray:
        """Number of leaves under each node.

        Returns
        -------
        numpy.ndarray of uint64
            One per node, 1 for the leaves.
        """
        if self._areas is None:
            self._areas = _chseg.tree_areas(host(self.parents), self.num_leaves)
        return self._areas

    def _labels_from_roots(self, roots):
        xp = self._xp()
        labels = _first_order_labels(xp, roots).astype(np.uint32)
        if self.shape is not None:
            return self._run.output(labels.reshape(self.shape))
        return labels

    def to_higra(self) -> Tuple[Any, np.ndarray]:
        """The same tree for Higra (``pip install higra``), node ids kept.

        Returns
        -------
        tuple
            (``higra.Tree``, altitudes as a NumPy float64 array).
        """
        import higra as hg

        return hg.Tree(host(self.parents).astype(np.int64)), host(self.altitudes())


class AlphaTree(_Tree):
    """The alpha-tree (quasi-flat zone hierarchy) of an image: ``parents`` (uint32, or uint64 for trees of more than
    2^32 - 1 nodes) and ``levels`` (float64) of its
    nodes, the pixels first (raster order, leaves at level 0), the internal nodes ordered by (level, smallest pixel),
    the root last. Arrays of the input's kind (NumPy or CuPy)."""

    shape: Tuple[int, ...]  # an alpha-tree is always of an image

    def __init__(self, run: Run, shape, parents, levels, values: Optional[np.ndarray], fully_connected: bool = False):
        super().__init__(run, shape)
        self._fully_connected = bool(fully_connected)
        self._backend_arrays = (parents, levels)  # what the backend wrote and reads (host for the cpu backend)
        self.parents = to_caller(run, parents)
        self.levels = to_caller(run, levels)
        self.num_leaves = int(np.prod(shape))
        self._values = values
        self._ranges: Optional[np.ndarray] = None

    def altitudes(self) -> Any:
        """The nodes' levels (Higra's altitudes)."""
        return self.levels

    def ranges(self) -> np.ndarray:
        """Per node, the largest difference of pixel values inside it (the largest over the channels).

        Returns
        -------
        numpy.ndarray of float64
            The omega of an alpha-omega cut, one per node.
        """
        if self._ranges is None:
            self._ranges = _chseg.alpha_tree_ranges(host(self.parents), self._values, self.num_leaves)
        return self._ranges

    def cut(self, alpha: float, omega: float = math.inf) -> Any:
        """The regions of the cut at ``alpha`` (and ``omega``).

        Each pixel's region is its highest ancestor x with level(x) <= alpha and, when omega is finite,
        range(x) <= omega (constrained connectivity, Soille's alpha-omega cut).

        Parameters
        ----------
        alpha : float
            The largest level kept.
        omega : float, optional
            The largest range of values inside a region (default: no bound).

        Returns
        -------
        ndarray
            Labels of the parents' type, 1 .. K in raster order of each region's first pixel, of the input's kind.

        Raises
        ------
        ValueError
            For NaN.

        Examples
        --------
        >>> import numpy as np, chseg
        >>> tree = chseg.alpha_tree(np.array([[0, 1, 5, 9]], np.uint8), backend="cpu")
        >>> tree.cut(1)
        array([[1, 1, 2, 3]], dtype=uint32)
        >>> tree.cut(4)
        array([[1, 1, 1, 1]], dtype=uint32)
        """
        alpha = float(alpha)
        omega = float(omega)
        if math.isnan(alpha) or math.isnan(omega):
            raise ValueError("alpha and omega must be numbers, not NaN")
        run = self._run
        ranges = None
        if not math.isinf(omega):
            ranges = self.ranges()
            if run.device_arrays:
                ranges = run.array(ranges)
        parents, levels = self._backend_arrays
        labels = run.empty(self.shape, parents.dtype)
        _chseg.alpha_tree_cut(parents, levels, ranges, self.num_leaves, alpha, omega, labels, run.context)
        return run.output(to_caller(run, labels))

    def filter_regions(self, threshold: float, attribute: str = "area") -> "Dendrogram":
        """The tree with the frontiers of regions whose ``attribute`` is below ``threshold`` removed.

        As Higra filters a tree that is not binary (``filter_small_nodes_from_tree``,
        ``filter_non_relevant_node_from_tree`` with ``canonize_tree=False``): the binary partition tree of the image
        graph weighted by this tree's saliency (the level at which each edge's pixels merge), then the filter of that
        tree.

        Parameters
        ----------
        threshold : float
            Regions whose attribute is below it lose their frontiers.
        attribute : {'area', 'volume', 'height'}, optional
            Default 'area'.

        Returns
        -------
        Dendrogram
            Its edges are image edge indices; ``cut(t)`` gives the filtered partitions.

        Raises
        ------
        ValueError
            For another attribute or a NaN threshold.
        """
        threshold = _filter_threshold(threshold, attribute)
        run = self._run
        parents, levels = self._backend_arrays
        out = _dendrogram_arrays(run, self.num_leaves, parents.dtype == np.uint64)
        # The image graph, its saliency, their dendrogram and its filter in one call (on the device for CUDA runs).
        _chseg.alpha_tree_filter(
            parents,
            levels,
            [int(s) for s in self.shape],
            self._fully_connected,
            choice(attribute, _chseg.RegionAttribute, "attribute"),
            threshold,
            *out,
            run.context,
        )
        return Dendrogram(run, self.shape, *(to_caller(run, x) for x in out))

    def saliency(self) -> Any:
        """The saliency map on the interpixel grid.

        Returns
        -------
        ndarray of float32
            2 s - 1 samples per axis of s pixels: 0 at the pixels, between two face neighbours the level of their
            lowest common ancestor; of the input's kind.
        """
        run = self._run
        out = run.empty(tuple(2 * s - 1 for s in self.shape), np.float32)
        parents, levels = self._backend_arrays
        _chseg.alpha_tree_saliency(parents, levels, list(self.shape), out, run.context)
        return to_caller(run, out)


class Dendrogram(_Tree):
    """A single-linkage dendrogram: ``parents`` (2n - 1 nodes), and per internal node n + r (the minimum spanning
    tree's edge of rank r, edges ordered by (weight, edge index)) ``weights`` (float64), ``edges`` (the edge's index in
    the input, or the image edge index pixel * K + slot) and its end vertices ``u``, ``v``. Node ids (parents, u, v)
    are uint32 up to 2^31 - 1 vertices, uint64 beyond (or when the building call asked with ``wide_node_ids``)."""

    def __init__(self, run: Run, shape, parents, weights, edges, u, v):
        super().__init__(run, shape)
        self.parents = parents
        self.weights = weights
        self.edges = edges
        self.u = u
        self.v = v
        self.num_leaves = (int(parents.shape[0]) + 1) // 2

    def altitudes(self) -> Any:
        """The nodes' altitudes as Higra has them: 0 for the leaves, then the weights."""
        xp = self._xp()
        return xp.concatenate([xp.zeros(self.num_leaves, dtype=np.float64), self.weights])

    def cut(self, distance: float) -> Any:
        """The clusters joined by edges of weight at most ``distance``.

        Parameters
        ----------
        distance : float
            The largest weight of the merges kept.

        Returns
        -------
        ndarray of uint32
            Labels 1 .. K in order of each cluster's first vertex; of an image's shape for image graphs.

        Raises
        ------
        ValueError
            For NaN.

        Examples
        --------
        >>> import numpy as np, chseg
        >>> tree = chseg.single_linkage_graph([0, 1, 2], [1, 2, 3], [1.0, 5.0, 2.0], 4, backend="cpu")
        >>> tree.cut(2.0)
        array([1, 1, 2, 2], dtype=uint32)
        """
        distance = float(distance)
        if math.isnan(distance):
            raise ValueError("distance must be a number, not NaN")
        xp = self._xp()
        kept = xp.concatenate([xp.zeros(self.num_leaves, dtype=bool), self.weights <= distance])
        roots = _highest_kept_ancestor(xp, self.parents, kept)[: self.num_leaves]
        return self._labels_from_roots(roots)

    def clusters(self, k: int) -> Any:
        """The k clusters left when the k - 1 heaviest merges are undone.

        Parameters
        ----------
        k : int
            1 .. the number of vertices.

        Returns
        -------
        ndarray of uint32
            Labels 1 .. k in order of each cluster's first vertex.

        Raises
        ------
        ValueError
            For k out of range.

        Examples
        --------
        >>> import numpy as np, chseg
        >>> tree = chseg.single_linkage_graph([0, 1, 2], [1, 2, 3], [1.0, 5.0, 2.0], 4, backend="cpu")
        >>> tree.clusters(3)
        array([1, 1, 2, 3], dtype=uint32)
        """
        n = self.num_leaves
        if not 1 <= int(k) <= n:
            raise ValueError(f"k must be in 1..{n}, not {k}")
        xp = self._xp()
        kept = xp.concatenate([xp.zeros(n, dtype=bool), xp.arange(n - 1) < n - int(k)])
        roots = _highest_kept_ancestor(xp, self.parents, kept)[:n]
        return self._labels_from_roots(roots)

    def _backend_inputs(self):
        run = self._run
        return [x if run.device_arrays else host(x) for x in (self.parents, self.weights, self.edges, self.u, self.v)]

    def _reweighted(self, attribute: str, filter_regions: bool, threshold: float) -> "Dendrogram":
        run = self._run
        n = self.num_leaves
        out = _dendrogram_arrays(run, n, self.parents.dtype == np.uint64)  # the input's id width
        _chseg.attribute_hierarchy(
            *self._backend_inputs(),
            choice(attribute, _chseg.RegionAttribute, "attribute"),
            bool(filter_regions),
            float(threshold),
            *out,
            run.context,
        )
        return Dendrogram(run, self.shape, *(to_caller(run, x) for x in out))

    def watershed_hierarchy(self, attribute: str = "area") -> "Dendrogram":
        """The watershed hierarchy by ``attribute`` of the graph this dendrogram was built from.

        Najman, Cousty and Perret's algorithm, as Higra's ``watershed_hierarchy_by_area`` / ``_volume`` /
        ``_dynamics`` with ``canonize_tree=False``: the same minimum spanning tree, each tree edge weighted by the
        attribute at which the regions it separates merge.

        Parameters
        ----------
        attribute : {'area', 'volume', 'dynamics'}, optional
            Default 'area'.

        Returns
        -------
        Dendrogram
            ``cut(t)`` keeps the regions whose minima survive an attribute filter at t.

        Raises
        ------
        ValueError
            For another attribute.
        """
        if attribute not in ("area", "volume", "dynamics"):
            raise ValueError(f"attribute must be 'area', 'volume' or 'dynamics', not {attribute!r}")
        return self._reweighted(attribute, False, 0.0)

    def filter_regions(self, threshold: float, attribute: str = "area") -> "Dendrogram":
        """This dendrogram with the frontiers of regions whose ``attribute`` is below ``threshold`` removed.

        Those merges weigh 0: regions of the result are regions of this dendrogram or unions of adjacent ones
        (Higra's ``filter_small_nodes_from_tree`` for the area, ``filter_non_relevant_node_from_tree`` in general,
        with ``canonize_tree=False``).

        Parameters
        ----------
        threshold : float
            Regions whose attribute is below it lose their frontiers.
        attribute : {'area', 'volume', 'height'}, optional
            Default 'area'.

        Returns
        -------
        Dendrogram

        Raises
        ------
        ValueError
            For another attribute or a NaN threshold.
        """
        threshold = _filter_threshold(threshold, attribute)
        return self._reweighted(attribute, True, threshold)

    def attribute(self, name: str) -> np.ndarray:
        """The attribute ``name`` of every node, as the hierarchies by attribute define it.

        Parameters
        ----------
        name : {'area', 'volume', 'height', 'dynamics'}

        Returns
        -------
        numpy.ndarray of float64
            One per node (include/chs/AttributeHierarchy.h).

        Raises
        ------
        ValueError
            For another name.
        """
        return _chseg.dendrogram_attribute(
            host(self.parents),
            host(self.weights),
            host(self.u),
            host(self.v),
            choice(name, _chseg.RegionAttribute, "name"),
        )

    def linkage_matrix(self) -> np.ndarray:
        """SciPy's linkage matrix of this dendrogram.

        Returns
        -------
        numpy.ndarray of float64, (n - 1) x 4
            Row r joins the clusters Z[r, 0] < Z[r, 1] (ids as SciPy numbers them: vertices 0 .. n - 1, the cluster of
            row r is n + r) at distance Z[r, 2]; Z[r, 3] vertices.

        Examples
        --------
        >>> import numpy as np, chseg
        >>> chseg.single_linkage_graph([0, 1], [1, 2], [2.0, 1.0], 3, backend="cpu").linkage_matrix()
        array([[1., 2., 1., 2.],
               [0., 3., 2., 3.]])
        """
        n = self.num_leaves
        parents = host(self.parents).astype(np.int64)
        children = np.full((n - 1, 2), -1, dtype=np.int64)
        nodes = np.arange(2 * n - 2, dtype=np.int64)
        rows = parents[:-1] - n
        order = np.argsort(rows, kind="stable")
        pairs = nodes[order].reshape(n - 1, 2)
        children[:] = np.sort(pairs, axis=1)
        z = np.empty((n - 1, 4), dtype=np.float64)
        z[:, :2] = children
        z[:, 2] = host(self.weights)
        z[:, 3] = self.areas()[n:]
        return z
