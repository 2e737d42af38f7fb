"""chseg: CudaHierarchicalSegmentation's GPU morphological partitions and hierarchies for NumPy and CuPy arrays.

Every function runs on the CUDA backend when a GPU is there (``backend="auto"``) and otherwise on the module's
sequential CPU reference, which gives identical results. Inputs are 2D or 3D arrays, NumPy order (z, y, x):

- NumPy arrays (a C-contiguous copy is made of other layouts);
- CuPy arrays (any array with ``__cuda_array_interface__``): read and written on the GPU, on CuPy's current stream,
  without crossing the host link; the outputs are CuPy arrays on the same device. With ``backend="cpu"`` they are
  copied to the host and back;
- ``itk.Image`` objects (the ``itk`` package): read through ``itk.array_view_from_image``; label images come back as
  ``itk.Image`` with the input's spacing, origin and direction.

Functions: ``label`` (connected components, flat zones, statistics), ``watershed``, ``waterfall`` (a
``WaterfallHierarchy``), ``alpha_tree`` (an ``AlphaTree``: ``cut``, ``saliency``, ``areas``, ``to_higra``),
``single_linkage`` and ``single_linkage_graph`` (a ``Dendrogram``: ``cut``, ``clusters``, ``linkage_matrix``,
``to_higra``, ``watershed_hierarchy``, ``filter_regions``, ``attribute``), ``watershed_hierarchy`` (by area, volume or
dynamics, a ``Dendrogram``), ``ift`` (the Image Foresting Transform by seed competition) and ``waterpixels``. The
definitions and tie rules are the module's (docs/*.md); the docstrings give them in short. The GIL is released while a
backend runs.
Errors: ValueError for bad arguments (nothing is written), MemoryError when the device lacks the memory a run needs
(naming the bytes needed and free), RuntimeError naming any other CUDA error.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Union

import numpy as np

from . import _chseg  # type: ignore[attr-defined]  # the compiled extension, no stub
from ._arrays import (
    channels_last,
    check_connectivity,
    choice,
    device_count,
    get_host_cache_limit,
    host,
    label_dtype,
    prepare,
    release_host_cache,
    resolve,
    set_host_cache_limit,
    to_caller,
)
from ._trees import AlphaTree, Dendrogram, WaterfallHierarchy, _dendrogram_arrays

__all__ = [
    "AlphaTree",
    "Dendrogram",
    "WaterfallHierarchy",
    "alpha_tree",
    "device_count",
    "get_host_cache_limit",
    "ift",
    "label",
    "release_host_cache",
    "set_host_cache_limit",
    "single_linkage",
    "single_linkage_graph",
    "watershed_hierarchy",
    "waterfall",
    "waterpixels",
    "watershed",
]
__version__ = "0.1.0"

_ALGORITHMS = {"pruf": 0, "apruf": 1, "prw": 2}
_PLATEAUS = {"balanced": 0, "synchronous": 1, "block-asynchronous": 2}
_DISTANCES = {"l1": 0, "l2": 1, "linf": 2}
_ALPHA_ALGORITHMS = {
    "auto": 0,
    "insert-all-edges": 1,
    "skip-redundant-edges": 2,
    "spanning-tree": 3,
    "level-synchronous": 4,
}
_ARC_WEIGHTS = {"target": 0, "maximum": 1, "absolute-difference": 2}


def label(
    image,
    *,
    mask=None,
    fully_connected: bool = False,
    flat_zones: bool = False,
    background: int = 0,
    statistics: bool = False,
    return_num: bool = False,
    dtype=np.uint32,
    backend: str = "auto",
    device: Optional[int] = None,
):
    """Connected components of a 2D or 3D image, as ITK's ConnectedComponentImageFilter defines them.

    Binary mode (default): non-zero voxels (inside ``mask``, when given: non-zero = inside) are foreground and
    foreground neighbours are joined whatever their values. ``flat_zones=True``: every voxel inside the mask belongs
    to a component, and neighbours of equal value are joined. Neighbours: faces (4 in 2D, 6 in 3D), or all (8 / 26)
    with ``fully_connected``. Objects are numbered in raster order of their first voxel (NumPy's C order), counting
    up from 0 and skipping ``background``, the label of background and masked-out voxels (so 0 gives 1..N).

    Returns the labels (``dtype``: uint8 to uint64; too many objects for it is a ValueError), with ``return_num`` also
    the number of objects, with ``statistics`` also a dict: ``voxel_count`` (N,) and inclusive bounding boxes
    ``bbox_min``, ``bbox_max`` (N, ndim) in NumPy axis order. Any integer or float pixel type of up to 64 bits."""
    run = resolve(backend, device, image, mask)
    a = prepare(run, image, "image")
    m = prepare(run, mask, "mask")
    if m is not None:
        if m.shape != a.shape:
            raise ValueError(f"mask shape {m.shape} differs from the image's {a.shape}")
        m = (m != 0).view(np.uint8) if m.dtype == np.bool_ else (m != 0).astype(np.uint8)
    labels = run.empty(a.shape, label_dtype(dtype))
    r = _chseg.label(
        a,
        m,
        labels,
        check_connectivity(fully_connected),
        bool(flat_zones),
        int(background),
        bool(statistics),
        run.backend,
        run.device,
        run.stream,
    )
    out = [run.output(to_caller(run, labels))]
    if return_num:
        out.append(int(r["count"]))
    if statistics:
        ndim = a.ndim
        out.append(
            {
                "voxel_count": r["voxel_count"],
                "bbox_min": r["minimum"][:, :ndim][:, ::-1].copy(),
                "bbox_max": r["maximum"][:, :ndim][:, ::-1].copy(),
            }
        )
    return out[0] if len(out) == 1 else tuple(out)


def watershed(
    image,
    markers=None,
    *,
    mask=None,
    level: float = 0,
    fully_connected: bool = False,
    watershed_line: bool = False,
    algorithm: str = "pruf",
    plateaus: str = "balanced",
    reduction_rate: int = 6,
    return_num: bool = False,
    dtype=np.uint32,
    backend: str = "auto",
    device: Optional[int] = None,
):
    """The watershed of a 2D or 3D image by steepest descent (Yeghiazaryan, Gabrielyan and Voiculescu's PRUF, APRUF
    and PRW; docs/watershed.md): one basin per regional minimum (a minimal plateau), every pixel in one basin.

    Ties: a pixel descends to its lowest neighbour, the one of largest raster index among equal ones; a pixel of a
    non-minimal plateau points to the plateau neighbour of largest raster index one step nearer (geodesic distance)
    to where the plateau drains. Basins are labelled 1, 2, ... in raster order of their first pixel. With
    ``watershed_line``, a pixel is set to 0 when a neighbour in another basin is lower, or equal and earlier in raster
    order. Floats compare as numbers; NaN is a ValueError. ``algorithm`` ('pruf', 'apruf', 'prw') and ``plateaus``
    ('balanced', 'synchronous'; 'block-asynchronous' may split non-minimal plateaux differently) change the steps,
    not the result.

    With ``markers`` (an integer array: its non-zero pixels are markers with their labels), ``mask`` (non-zero =
    inside; pixels outside are 0) or ``level`` > 0, the image is flooded from markers instead, as
    ``skimage.segmentation.watershed(image, markers, mask=mask)`` and ITK's MorphologicalWatershedFromMarkersImageFilter
    do: each pixel takes the label of the marker whose flood reaches it first as the level rises (a path costs its
    largest pixel, the marker's included; ties: geodesic distance on plateaux, then raster order). Without
    ``markers``, the markers are the regional minima of the h-minima transform of height ``level`` (minima shallower
    than ``level`` merge into deeper ones; a whole number for integer images), each connected component inside the mask
    a marker, numbered 1, 2, ... in raster order; ``return_num`` then gives their number (0 with ``markers``). Pixels
    the flood does not reach are 0. Pixels of up to 32 bits; no ``watershed_line`` in this mode."""
    run = resolve(backend, device, image, markers, mask)
    a = prepare(run, image, "image")
    labels = run.empty(a.shape, label_dtype(dtype))
    if markers is not None or mask is not None or level != 0:
        if watershed_line:
            raise ValueError("watershed_line is not available with markers, a mask or a level")
        k = prepare(run, markers, "markers")
        m = prepare(run, mask, "mask")
        for name, x in (("markers", k), ("mask", m)):
            if x is not None and x.shape != a.shape:
                raise ValueError(f"{name} shape {x.shape} differs from the image's {a.shape}")
        if k is not None:
            if k.dtype.kind not in "biu" or (k.dtype.kind == "i" and bool((k < 0).any())):
                raise ValueError(
                    f"markers must be non-negative integers, not {k.dtype} with negative values"
                    if k.dtype.kind == "i"
                    else f"markers must be integers, not {k.dtype}"
                )
            if k.size and int(k.max()) > int(np.iinfo(labels.dtype).max):
                raise ValueError(f"a marker label ({int(k.max())}) does not fit the output dtype {labels.dtype}")
            k = k.astype(labels.dtype)
        if m is not None:
            m = (m != 0).view(np.uint8) if m.dtype == np.bool_ else (m != 0).astype(np.uint8)
        r = _chseg.marker_watershed(
            a, k, m, labels, check_connectivity(fully_connected), float(level), run.backend, run.device, run.stream
        )
        out = run.output(to_caller(run, labels))
        return (out, int(r["count"])) if return_num else out
    r = _chseg.watershed(
        a,
        labels,
        check_connectivity(fully_connected),
        choice(algorithm, _ALGORITHMS, "algorithm"),
        choice(plateaus, _PLATEAUS, "plateaus"),
        int(reduction_rate),
        bool(watershed_line),
        run.backend,
        run.device,
        run.stream,
    )
    out = run.output(to_caller(run, labels))
    return (out, int(r["count"])) if return_num else out


def waterfall(
    image,
    *,
    levels: int = 0,
    fully_connected: bool = False,
    algorithm: str = "pruf",
    plateaus: str = "balanced",
    reduction_rate: int = 6,
    dtype=np.uint32,
    backend: str = "auto",
    device: Optional[int] = None,
) -> WaterfallHierarchy:
    """The waterfall hierarchy (Beucher): level 0 is ``watershed(image)``; level k + 1 joins every region of level k
    to each neighbour across a boundary pair of height max(I(p), I(q)) equal to its lowest pass, and labels the unions
    1, 2, ... in raster order of their first pixel. Stops at one region, or after ``levels`` levels (0: all).

    Returns a ``WaterfallHierarchy``: level 0's labels and each level's parent map (what crosses the host link);
    ``labels(k)`` makes level k's label image."""
    run = resolve(backend, device, image)
    a = prepare(run, image, "image")
    if int(levels) < 0:
        raise ValueError(f"levels must be 0 (all) or more, not {levels}")
    level0 = run.empty(a.shape, label_dtype(dtype))
    r = _chseg.waterfall(
        a,
        level0,
        check_connectivity(fully_connected),
        choice(algorithm, _ALGORITHMS, "algorithm"),
        choice(plateaus, _PLATEAUS, "plateaus"),
        int(reduction_rate),
        int(levels),
        run.backend,
        run.device,
        run.stream,
    )
    return WaterfallHierarchy(run, to_caller(run, level0), r["region_counts"], list(r["parents"]))


def _alpha_tree_input(a):
    if a.dtype == np.int8:
        return a.astype(np.int16)  # exact: the differences of int8 values are those of the same int16 values
    if a.dtype not in (np.uint8, np.uint16, np.int16, np.float32):
        raise ValueError(f"alpha-trees take uint8, int8, uint16, int16 or float32 pixels, not {a.dtype}")
    return a


def alpha_tree(
    image,
    *,
    fully_connected: bool = False,
    channel_axis: Optional[int] = None,
    distance: str = "l2",
    algorithm: str = "auto",
    wide_node_ids: bool = False,
    backend: str = "auto",
    device: Optional[int] = None,
) -> AlphaTree:
    """The alpha-tree (quasi-flat zone hierarchy) of a 2D or 3D image: its nodes are the distinct alpha-connected
    components for every alpha (pixels joined by paths whose edges weigh at most alpha; edge weight |a - b|, or the
    'l1', 'l2' or 'linf' norm of the channels' differences with ``channel_axis``), a node's level the smallest such
    alpha. The tree is canonical: leaves are the pixels (raster order), internal nodes ordered by (level, smallest
    pixel), each with two children or more, the root last. Pixel types: uint8, int8, uint16, int16, float32; a NaN or
    infinite pixel is a ValueError (|inf - inf| has no weight). Parents are uint32 for trees of up to 2^32 - 1 nodes,
    uint64 beyond (images of 2^31 pixels and more) or with ``wide_node_ids``."""
    run = resolve(backend, device, image)
    a = prepare(run, image, "image", ndims=(2, 3, 4))
    a, spatial = channels_last(run, a, channel_axis, "image")
    a = _alpha_tree_input(a)
    shape = tuple(int(s) for s in a.shape[:spatial])

    def allocate(nodes):
        ids = np.uint64 if wide_node_ids or nodes > 2**32 - 1 else np.uint32
        return run.empty((nodes,), ids), run.empty((nodes,), np.float64)

    r = _chseg.alpha_tree(
        a,
        spatial,
        check_connectivity(fully_connected),
        choice(distance, _DISTANCES, "distance"),
        choice(algorithm, _ALPHA_ALGORITHMS, "algorithm"),
        allocate,
        run.backend,
        run.device,
        run.stream,
    )
    parents, levels = r["arrays"]
    return AlphaTree(run, shape, parents, levels, host(a), check_connectivity(fully_connected))


def single_linkage(
    image,
    *,
    fully_connected: bool = False,
    channel_axis: Optional[int] = None,
    distance: str = "l2",
    backend: str = "auto",
    device: Optional[int] = None,
    wide_node_ids: bool = False,
) -> Dendrogram:
    """The single-linkage dendrogram of an image's pixel graph (edges between neighbours, weight |a - b| or a norm
    of the channels' differences): its minimum spanning tree (Boruvka on the GPU) and the tree's dendrogram (PANDORA).
    Edges are ordered by (weight, edge index pixel * K + slot), so the tree is unique. Pixel types: 8-, 16-, 32-bit
    integers, float32, float64; a NaN or infinite pixel is a ValueError. Node ids are uint32 up to 2^31 - 1 pixels,
    uint64 beyond (the GPU takes up to 2^32 - 1 pixels) or with ``wide_node_ids``."""
    run = resolve(backend, device, image)
    a = prepare(run, image, "image", ndims=(2, 3, 4))
    a, spatial = channels_last(run, a, channel_axis, "image")
    shape = tuple(int(s) for s in a.shape[:spatial])
    n = int(np.prod(shape))
    out = _dendrogram_arrays(run, n, wide_node_ids)
    _chseg.image_single_linkage(
        a,
        spatial,
        check_connectivity(fully_connected),
        choice(distance, _DISTANCES, "distance"),
        *out,
        run.backend,
        run.device,
        run.stream,
    )
    return Dendrogram(run, shape, *(to_caller(run, x) for x in out))


def single_linkage_graph(
    u,
    v,
    w,
    num_vertices: int,
    *,
    is_tree: bool = False,
    backend: str = "auto",
    device: Optional[int] = None,
    wide_node_ids: bool = False,
) -> Dendrogram:
    """The single-linkage dendrogram of a connected weighted graph given as edge arrays (u[i], v[i], w[i]) on vertices
    0..num_vertices-1 (vertex ids below 2^32; weights float32 or float64, no NaN). Edges are ordered by (weight, edge
    index); ``is_tree`` promises that the edges already form a tree (its own minimum spanning tree). Node ids are
    uint32 up to 2^31 - 1 vertices, uint64 beyond or with ``wide_node_ids``."""
    run = resolve(backend, device, u, v, w)
    uu, vv, ww = (prepare(run, x, name, ndims=(1,)) for x, name in ((u, "u"), (v, "v"), (w, "w")))
    if not (uu.shape == vv.shape == ww.shape):
        raise ValueError("u, v and w must have one length")
    for x, name in ((uu, "u"), (vv, "v")):
        if x.dtype.kind not in "ui":
            raise ValueError(f"{name} must hold integer vertex ids")
    xp = run.backend_xp
    if bool((uu < 0).any()) or bool((vv < 0).any()):
        raise ValueError("vertex ids must not be negative")
    uu, vv = uu.astype(np.uint32), vv.astype(np.uint32)
    if ww.dtype not in (np.float32, np.float64):
        ww = ww.astype(np.float64)
    n = int(num_vertices)
    if n < 1:
        raise ValueError("num_vertices must be at least 1")
    out = _dendrogram_arrays(run, n, wide_node_ids)
    _chseg.graph_single_linkage(
        uu, vv, xp.ascontiguousarray(ww), n, bool(is_tree), *out, run.backend, run.device, run.stream
    )
    return Dendrogram(run, None, *(to_caller(run, x) for x in out))


def watershed_hierarchy(
    image,
    attribute: str = "area",
    *,
    fully_connected: bool = False,
    channel_axis: Optional[int] = None,
    distance: str = "l2",
    backend: str = "auto",
    device: Optional[int] = None,
) -> Dendrogram:
    """The watershed hierarchy by ``attribute`` ('area', 'volume' or 'dynamics') of an image's pixel graph (edges
    between neighbours weighted |a - b| or a norm of the channels' differences, as ``single_linkage``): the graph's
    minimum spanning tree with each edge weighted by the attribute at which the regions it separates merge, as a
    Dendrogram (``cut(t)``: the watershed regions whose minima survive the attribute filter at t). Equal to Higra's
    ``watershed_hierarchy_by_area`` / ``_volume`` / ``_dynamics`` with ``canonize_tree=False`` on the same graph."""
    return single_linkage(
        image,
        fully_connected=fully_connected,
        channel_axis=channel_axis,
        distance=distance,
        backend=backend,
        device=device,
    ).watershed_hierarchy(attribute)


def ift(
    weights,
    seeds,
    *,
    fully_connected: bool = False,
    arc_weight: str = "target",
    return_cost: bool = False,
    return_predecessor: bool = False,
    backend: str = "auto",
    device: Optional[int] = None,
):
    """The Image Foresting Transform by seed competition (Falcao et al.): each pixel gets the label of the seed
    (``seeds != 0``) with the cheapest path to it, path cost f_max (the largest arc weight along the path; arcs weigh
    w(p, q) = B(q) 'target', max(B(p), B(q)) 'maximum' or |B(p) - B(q)| 'absolute-difference').

    Ties are resolved by the key (cost, D), D the arcs since the path last rose to the cost: plateaux are split by
    geodesic distance as a FIFO queue would; the predecessor is the neighbour with the smallest key, then the smallest
    raster index. Weights: 8-, 16-, 32-bit integers or float32, not negative. Seeds: unsigned integers (the labels'
    type; other integer types are converted when non-negative). Returns the labels, and with ``return_cost`` /
    ``return_predecessor`` the cost map and the predecessor map (flat indices, -1 at the seeds)."""
    run = resolve(backend, device, weights, seeds)
    b = prepare(run, weights, "weights")
    s = prepare(run, seeds, "seeds")
    if s.shape != b.shape:
        raise ValueError(f"seeds shape {s.shape} differs from the weights' {b.shape}")
    if s.dtype.kind == "b":
        s = s.astype(np.uint8)
    if s.dtype.kind == "i":
        if bool((s < 0).any()):
            raise ValueError("seed labels must not be negative")
        s = s.astype(np.dtype(f"uint{8 * s.dtype.itemsize}"))
    label_dtype(s.dtype)
    if b.dtype not in (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32):
        raise ValueError(f"weights are 8-, 16-, 32-bit integers or float32, not {b.dtype}")
    labels = run.empty(b.shape, s.dtype)
    cost = run.empty(b.shape, np.float32 if b.dtype == np.float32 else np.uint32) if return_cost else None
    predecessor = run.empty(b.shape, np.int64) if return_predecessor else None
    _chseg.foresting_transform(
        b,
        s,
        labels,
        cost,
        predecessor,
        check_connectivity(fully_connected),
        choice(arc_weight, _ARC_WEIGHTS, "arc_weight"),
        0,
        run.backend,
        run.device,
        run.stream,
    )
    out = [run.output(to_caller(run, labels))]
    if return_cost:
        out.append(run.output(to_caller(run, cost)))
    if return_predecessor:
        out.append(to_caller(run, predecessor))
    return out[0] if len(out) == 1 else tuple(out)


def waterpixels(
    image,
    grid_step: Union[int, Sequence[int]] = 10,
    *,
    compactness: Optional[float] = None,
    gradient_minimum_seeds: bool = False,
    fully_connected: bool = False,
    return_border: bool = False,
    dtype=np.uint32,
    backend: str = "auto",
    device: Optional[int] = None,
):
    """Waterpixels (Machairas et al.): superpixels on a regular grid of cells of ``grid_step`` pixels (one number, or
    one per axis in NumPy order), each grown from its cell's seed (the cell's centre, or its pixel of smallest
    gradient) by the Image Foresting Transform of B = |Sobel gradient| + k * 2 * (distance to the nearest grid seed /
    grid step). k is ``compactness`` (default: 0.04 * (largest - smallest value)). Labels are the cells' numbers,
    1.. in raster order. With ``return_border``, also B (float32)."""
    run = resolve(backend, device, image)
    a = prepare(run, image, "image")
    steps = [int(x) for x in np.atleast_1d(grid_step)]
    if np.ndim(grid_step) == 0:
        steps *= a.ndim
    if len(steps) != a.ndim or min(steps) < 1:
        raise ValueError(f"grid_step must be one positive integer or {a.ndim} of them, not {grid_step!r}")
    if a.dtype.itemsize == 8 and a.dtype.kind in "ui":
        raise ValueError(f"waterpixels take 8-, 16-, 32-bit integers, float32 or float64 pixels, not {a.dtype}")
    k = -1.0 if compactness is None else float(compactness)
    if math.isnan(k) or (compactness is not None and k < 0):
        raise ValueError(f"compactness must be a non-negative number, not {compactness!r}")
    labels = run.empty(a.shape, label_dtype(dtype))
    border = run.empty(a.shape, np.float32) if return_border else None
    _chseg.waterpixels(
        a,
        labels,
        border,
        steps[::-1],
        k,
        bool(gradient_minimum_seeds),
        check_connectivity(fully_connected),
        run.backend,
        run.device,
        run.stream,
    )
    out = run.output(to_caller(run, labels))
    return (out, to_caller(run, border)) if return_border else out
