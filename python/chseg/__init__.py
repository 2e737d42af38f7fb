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
from typing import Any, Optional, Sequence, Tuple, Union

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
    no_device_reason,
    prepare,
    release_host_cache,
    resolve,
    set_host_cache_limit,
    to_caller,
)
from ._trees import AlphaTree, Dendrogram, WaterfallHierarchy, _dendrogram_arrays

# What the functions take as arrays: NumPy arrays and array-likes, CuPy arrays, itk.Image objects.
ArrayLike = Any
# What they return: an array of the input's kind, or a tuple of arrays (and counts) where asked for.
ArrayOrTuple = Union[Any, Tuple[Any, ...]]

__all__ = [
    "AlphaTree",
    "Dendrogram",
    "WaterfallHierarchy",
    "alpha_tree",
    "device_count",
    "get_host_cache_limit",
    "ift",
    "label",
    "no_device_reason",
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

# The choices of each option are the extension's enums (python/src/chsegModule.cxx); chseg._arrays.choice maps names.
_ALGORITHMS = _chseg.WatershedAlgorithm
_PLATEAUS = _chseg.PlateauResolution
_DISTANCES = _chseg.VectorDistance
_ALPHA_ALGORITHMS = _chseg.AlphaTreeAlgorithm
_ARC_WEIGHTS = _chseg.ArcWeightFunction


def label(
    image: ArrayLike,
    *,
    mask: Optional[ArrayLike] = None,
    fully_connected: bool = False,
    flat_zones: bool = False,
    background: int = 0,
    statistics: bool = False,
    return_num: bool = False,
    dtype: Any = np.uint32,
    backend: str = "auto",
    device: Optional[int] = None,
) -> ArrayOrTuple:
    """Connected components of a 2D or 3D image, as ITK's ConnectedComponentImageFilter defines them.

    Binary mode (default): non-zero voxels (inside ``mask``, when given: non-zero = inside) are foreground and
    foreground neighbours are joined whatever their values. ``flat_zones=True``: every voxel inside the mask belongs
    to a component, and neighbours of equal value are joined. Objects are numbered in raster order of their first
    voxel (NumPy's C order), counting up from 0 and skipping ``background``, the label of background and masked-out
    voxels (so 0 gives 1..N).

    Parameters
    ----------
    image : array_like, 2D or 3D
        NumPy, CuPy or ``itk.Image``; any integer or float type of up to 64 bits.
    mask : array_like, optional
        Of the image's shape; non-zero = inside.
    fully_connected : bool, optional
        Face neighbours (4 in 2D, 6 in 3D; default) or all (8, 26).
    flat_zones : bool, optional
        Label the zones of equal value instead of the non-zero voxels.
    background : int, optional
        The label of the background; the objects' labels skip it.
    statistics : bool, optional
        Also return each object's voxel count and bounding box.
    return_num : bool, optional
        Also return the number of objects.
    dtype : dtype, optional
        The labels' type: uint8, uint16, uint32 (default) or uint64.
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.

    Returns
    -------
    labels : ndarray
        Of the input's kind (NumPy, CuPy, ``itk.Image``) and shape.
    num : int
        With ``return_num``.
    stats : dict
        With ``statistics``: ``voxel_count`` (N,), and the inclusive bounding boxes ``bbox_min`` and ``bbox_max``
        (N, ndim) in NumPy axis order.

    Raises
    ------
    ValueError
        For a bad argument, or more objects than ``dtype`` holds; nothing is written.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> image = np.array([[1, 1, 0, 0], [0, 0, 0, 1], [1, 0, 1, 1]], np.uint8)
    >>> labels, num = chseg.label(image, return_num=True, backend="cpu")
    >>> labels
    array([[1, 1, 0, 0],
           [0, 0, 0, 2],
           [3, 0, 2, 2]], dtype=uint32)
    >>> num
    3
    >>> int(chseg.label(image, fully_connected=True, backend="cpu").max())
    3
    """
    run = resolve(backend, device, image, mask)
    a = prepare(run, image, "image")
    m = prepare(run, mask, "mask")
    if m is not None:
        if m.shape != a.shape:
            raise ValueError(f"mask shape {m.shape} differs from the image's {a.shape}")
        m = (m != 0).view(np.uint8) if m.dtype == np.bool_ else (m != 0).astype(np.uint8)
    labels = run.empty(a.shape, label_dtype(dtype))
    mode = _chseg.ConnectedComponentMode.FLAT_ZONES if flat_zones else _chseg.ConnectedComponentMode.BINARY
    r = _chseg.label(
        a,
        m,
        labels,
        check_connectivity(fully_connected),
        False,  # edge_connected
        mode,
        0.0,  # delta
        False,  # periodic
        int(background),
        bool(statistics),
        False,  # only_counts
        run.context,
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
    image: ArrayLike,
    markers: Optional[ArrayLike] = None,
    *,
    mask: Optional[ArrayLike] = None,
    level: float = 0,
    fully_connected: bool = False,
    watershed_line: bool = False,
    algorithm: str = "pruf",
    plateaus: str = "balanced",
    reduction_rate: int = 6,
    return_num: bool = False,
    dtype: Any = np.uint32,
    backend: str = "auto",
    device: Optional[int] = None,
) -> ArrayOrTuple:
    """The watershed of a 2D or 3D image by steepest descent, or by flooding from markers.

    By steepest descent (Yeghiazaryan, Gabrielyan and Voiculescu's PRUF, APRUF and PRW; docs/watershed.md): one basin
    per regional minimum (a minimal plateau), every pixel in one basin. Ties: a pixel descends to its lowest
    neighbour, the one of largest raster index among equal ones; a pixel of a non-minimal plateau points to the
    plateau neighbour of largest raster index one step nearer (geodesic distance) to where the plateau drains. Basins
    are labelled 1, 2, ... in raster order of their first pixel. Floats compare as numbers.

    With ``markers``, ``mask`` or ``level`` > 0, the image is flooded from markers instead, as
    ``skimage.segmentation.watershed(image, markers, mask=mask)`` and ITK's MorphologicalWatershedFromMarkersImageFilter
    do: each pixel takes the label of the marker whose flood reaches it first as the level rises (a path costs its
    largest pixel, the marker's included; ties: geodesic distance on plateaux, then raster order). Without
    ``markers``, the markers are the regional minima of the h-minima transform of height ``level`` (minima shallower
    than ``level`` merge into deeper ones), each connected component inside the mask a marker, numbered 1, 2, ... in
    raster order. Pixels the flood does not reach are 0.

    Parameters
    ----------
    image : array_like, 2D or 3D
        NumPy, CuPy or ``itk.Image``; integers or floats of up to 64 bits (up to 32 bits when flooding); no NaN.
    markers : array_like of int, optional
        Of the image's shape: its non-zero pixels are markers with their labels.
    mask : array_like, optional
        Of the image's shape; non-zero = inside, pixels outside are 0.
    level : float, optional
        Without markers: the depth below which minima merge (a whole number for integer images).
    fully_connected : bool, optional
        Face neighbours (4 in 2D, 6 in 3D; default) or all (8, 26).
    watershed_line : bool, optional
        Steepest descent only: set a pixel to 0 when a neighbour in another basin is lower, or equal and earlier in
        raster order.
    algorithm : {'pruf', 'apruf', 'prw'}, optional
        The steps of the steepest descent; not the result.
    plateaus : {'balanced', 'synchronous', 'block-asynchronous'}, optional
        How plateaux are resolved: the first two give the defined result; 'block-asynchronous' may split non-minimal
        plateaux differently.
    reduction_rate : int, optional
        PRUF's path-reduction jumps between global synchronisations.
    return_num : bool, optional
        Also return the number of basins (of markers found, when flooding without ``markers``; 0 with them).
    dtype : dtype, optional
        The labels' type: uint8, uint16, uint32 (default) or uint64.
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.

    Returns
    -------
    labels : ndarray
        Of the input's kind and shape.
    num : int
        With ``return_num``.

    Raises
    ------
    ValueError
        For a NaN pixel, a bad argument, ``watershed_line`` when flooding, or more basins than ``dtype`` holds.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> relief = np.array([[0, 1, 2, 1, 0], [0, 1, 3, 1, 0], [1, 2, 3, 2, 1]], np.uint8)
    >>> chseg.watershed(relief, backend="cpu")
    array([[1, 1, 2, 2, 2],
           [1, 1, 2, 2, 2],
           [1, 1, 2, 2, 2]], dtype=uint32)
    >>> markers = np.zeros_like(relief)
    >>> markers[0, 0], markers[0, 4] = 1, 2
    >>> chseg.watershed(relief, markers, backend="cpu")
    array([[1, 1, 1, 2, 2],
           [1, 1, 1, 2, 2],
           [1, 1, 1, 2, 2]], dtype=uint32)
    """
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
        r = _chseg.marker_watershed(a, k, m, labels, check_connectivity(fully_connected), float(level), run.context)
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
        run.context,
    )
    out = run.output(to_caller(run, labels))
    return (out, int(r["count"])) if return_num else out


def waterfall(
    image: ArrayLike,
    *,
    levels: int = 0,
    fully_connected: bool = False,
    algorithm: str = "pruf",
    plateaus: str = "balanced",
    reduction_rate: int = 6,
    dtype: Any = np.uint32,
    backend: str = "auto",
    device: Optional[int] = None,
) -> WaterfallHierarchy:
    """The waterfall hierarchy (Beucher) of a 2D or 3D image.

    Level 0 is ``watershed(image)``; level k + 1 joins every region of level k to each neighbour across a boundary
    pair of height max(I(p), I(q)) equal to its lowest pass, and labels the unions 1, 2, ... in raster order of their
    first pixel. It stops at one region, or after ``levels`` levels.

    Parameters
    ----------
    image : array_like, 2D or 3D
        NumPy, CuPy or ``itk.Image``; integers or floats of up to 64 bits; no NaN.
    levels : int, optional
        Levels to compute, level 0 included; 0 (default): until one region is left.
    fully_connected, algorithm, plateaus, reduction_rate, dtype
        As for :func:`watershed`.
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.

    Returns
    -------
    WaterfallHierarchy
        Level 0's labels and each level's parent map (what crosses the host link); ``labels(k)`` makes level k's
        label image, ``region_counts`` the number of regions of each level.

    Raises
    ------
    ValueError
        For a NaN pixel, a bad argument, or more regions than ``dtype`` holds.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> relief = np.array([[0, 2, 1, 3, 0]], np.uint8)
    >>> hierarchy = chseg.waterfall(relief, backend="cpu")
    >>> hierarchy.region_counts
    [3, 1]
    >>> hierarchy.labels(0)
    array([[1, 1, 2, 3, 3]], dtype=uint32)
    """
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
        run.context,
    )
    return WaterfallHierarchy(run, to_caller(run, level0), r["region_counts"], list(r["parents"]))


def _alpha_tree_input(a):
    if a.dtype == np.int8:
        return a.astype(np.int16)  # exact: the differences of int8 values are those of the same int16 values
    if a.dtype not in (np.uint8, np.uint16, np.int16, np.float32):
        raise ValueError(f"alpha-trees take uint8, int8, uint16, int16 or float32 pixels, not {a.dtype}")
    return a


def alpha_tree(
    image: ArrayLike,
    *,
    fully_connected: bool = False,
    channel_axis: Optional[int] = None,
    distance: str = "l2",
    algorithm: str = "auto",
    wide_node_ids: bool = False,
    backend: str = "auto",
    device: Optional[int] = None,
) -> AlphaTree:
    """The alpha-tree (quasi-flat zone hierarchy) of a 2D or 3D image.

    Its nodes are the distinct alpha-connected components for every alpha (pixels joined by paths whose edges weigh
    at most alpha; an edge weighs |a - b|, or a norm of the channels' differences), a node's level the smallest such
    alpha. The tree is canonical: leaves are the pixels (raster order), internal nodes ordered by (level, smallest
    pixel), each with two children or more, the root last (docs/alpha-tree.md).

    Parameters
    ----------
    image : array_like, 2D or 3D (and a channel axis)
        NumPy, CuPy or ``itk.Image``; uint8, int8, uint16, int16 or float32; no NaN or infinity.
    fully_connected : bool, optional
        The image graph's edges join face neighbours (4 in 2D, 6 in 3D; default) or all (8, 26).
    channel_axis : int, optional
        The axis of the channels of a vector image (its edges weigh a norm of the channels' differences).
    distance : {'l1', 'l2', 'linf'}, optional
        That norm (default 'l2').
    algorithm : {'auto', 'insert-all-edges', 'skip-redundant-edges', 'spanning-tree', 'level-synchronous'}, optional
        The construction on the GPU (all give the same tree); 'auto' the fastest measured for the pixel type.
    wide_node_ids : bool, optional
        uint64 parents even where uint32 hold them (they do up to 2^32 - 1 nodes).
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.

    Returns
    -------
    AlphaTree
        ``parents`` and ``levels`` of its nodes, of the input's kind; ``cut``, ``saliency``, ``areas``,
        ``filter_regions``, ``to_higra``.

    Raises
    ------
    ValueError
        For another pixel type, a NaN or infinite pixel, or a bad argument.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> tree = chseg.alpha_tree(np.array([[0, 0, 5], [1, 9, 5]], np.uint8), backend="cpu")
    >>> tree.num_nodes, tree.levels[tree.num_leaves:].tolist()
    (11, [0.0, 0.0, 1.0, 4.0, 5.0])
    >>> tree.cut(1)
    array([[1, 1, 2],
           [1, 3, 2]], dtype=uint32)
    """
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
        run.context,
    )
    parents, levels = r["arrays"]
    return AlphaTree(run, shape, parents, levels, host(a), check_connectivity(fully_connected))


def single_linkage(
    image: ArrayLike,
    *,
    fully_connected: bool = False,
    channel_axis: Optional[int] = None,
    distance: str = "l2",
    backend: str = "auto",
    device: Optional[int] = None,
    wide_node_ids: bool = False,
) -> Dendrogram:
    """The single-linkage dendrogram of an image's pixel graph.

    Its minimum spanning tree (Boruvka on the GPU) and the tree's dendrogram (PANDORA; docs/single-linkage.md). The
    graph's edges join neighbours and weigh |a - b| or a norm of the channels' differences; edges are ordered by
    (weight, edge index pixel * K + slot), so the tree is unique.

    Parameters
    ----------
    image : array_like, 2D or 3D (and a channel axis)
        NumPy, CuPy or ``itk.Image``; 8-, 16-, 32-bit integers, float32 or float64; no NaN or infinity.
    fully_connected : bool, optional
        The image graph's edges join face neighbours (4 in 2D, 6 in 3D; default) or all (8, 26).
    channel_axis : int, optional
        The axis of the channels of a vector image (its edges weigh a norm of the channels' differences).
    distance : {'l1', 'l2', 'linf'}, optional
        That norm (default 'l2').
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.
    wide_node_ids : bool, optional
        uint64 node ids even where uint32 hold them (they do up to 2^31 - 1 pixels; the GPU takes up to 2^32 - 1).

    Returns
    -------
    Dendrogram
        ``parents``, ``weights``, ``edges``, ``u``, ``v`` of the input's kind; ``cut``, ``clusters``,
        ``linkage_matrix``, ``watershed_hierarchy``, ``filter_regions``, ``attribute``, ``to_higra``.

    Raises
    ------
    ValueError
        For another pixel type, a NaN or infinite pixel, or a bad argument.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> tree = chseg.single_linkage(np.array([[0, 1, 7, 8]], np.uint8), backend="cpu")
    >>> tree.weights.tolist()
    [1.0, 1.0, 6.0]
    >>> tree.cut(2)
    array([[1, 1, 2, 2]], dtype=uint32)
    """
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
        run.context,
    )
    return Dendrogram(run, shape, *(to_caller(run, x) for x in out))


def single_linkage_graph(
    u: ArrayLike,
    v: ArrayLike,
    w: ArrayLike,
    num_vertices: int,
    *,
    is_tree: bool = False,
    backend: str = "auto",
    device: Optional[int] = None,
    wide_node_ids: bool = False,
) -> Dendrogram:
    """The single-linkage dendrogram of a connected weighted graph given as edge arrays.

    Edges (u[i], v[i]) of weight w[i] join vertices 0 .. num_vertices - 1; they are ordered by (weight, edge index),
    so the minimum spanning tree and its dendrogram are unique.

    Parameters
    ----------
    u, v : array_like of int, 1D
        The edges' ends: vertex ids below 2^32.
    w : array_like, 1D
        The edges' weights (float32 or float64; others are converted to float64); no NaN.
    num_vertices : int
        The number of vertices; the graph must be connected.
    is_tree : bool, optional
        The edges already form a tree (their own minimum spanning tree): only its dendrogram is built.
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.
    wide_node_ids : bool, optional
        uint64 node ids even where uint32 hold them (up to 2^31 - 1 vertices).

    Returns
    -------
    Dendrogram
        As :func:`single_linkage` gives, without an image shape (``cut`` gives one label per vertex).

    Raises
    ------
    ValueError
        For arrays of different lengths, negative ids, a graph that is not connected, or a bad argument.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> tree = chseg.single_linkage_graph([0, 1, 2], [1, 2, 0], [0.5, 2.0, 1.0], 3, backend="cpu")
    >>> tree.weights.tolist(), tree.edges.tolist()
    ([0.5, 1.0], [0, 2])
    """
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
    _chseg.graph_single_linkage(uu, vv, xp.ascontiguousarray(ww), n, bool(is_tree), *out, run.context)
    return Dendrogram(run, None, *(to_caller(run, x) for x in out))


def watershed_hierarchy(
    image: ArrayLike,
    attribute: str = "area",
    *,
    fully_connected: bool = False,
    channel_axis: Optional[int] = None,
    distance: str = "l2",
    backend: str = "auto",
    device: Optional[int] = None,
) -> Dendrogram:
    """The watershed hierarchy by ``attribute`` of an image's pixel graph.

    The graph's minimum spanning tree (as :func:`single_linkage` builds it), each edge weighted by the attribute at
    which the regions it separates merge (Najman, Cousty and Perret); equal to Higra's
    ``watershed_hierarchy_by_area`` / ``_volume`` / ``_dynamics`` with ``canonize_tree=False`` on the same graph.

    Parameters
    ----------
    image : array_like, 2D or 3D (and a channel axis)
        As for :func:`single_linkage`.
    attribute : {'area', 'volume', 'dynamics'}, optional
        The regions' attribute (default 'area').
    fully_connected : bool, optional
        The image graph's edges join face neighbours (4 in 2D, 6 in 3D; default) or all (8, 26).
    channel_axis : int, optional
        The axis of the channels of a vector image (its edges weigh a norm of the channels' differences).
    distance : {'l1', 'l2', 'linf'}, optional
        That norm (default 'l2').
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.

    Returns
    -------
    Dendrogram
        ``cut(t)``: the watershed regions whose minima survive the attribute filter at t.

    Raises
    ------
    ValueError
        For another attribute, or what :func:`single_linkage` refuses.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> image = np.array([[0, 3, 1, 3, 0, 0]], np.uint8)  # edges weigh 3, 2, 2, 3, 0: two minima
    >>> chseg.watershed_hierarchy(image, "area", backend="cpu").cut(1)
    array([[1, 1, 1, 1, 2, 2]], dtype=uint32)
    """
    return single_linkage(
        image,
        fully_connected=fully_connected,
        channel_axis=channel_axis,
        distance=distance,
        backend=backend,
        device=device,
    ).watershed_hierarchy(attribute)


def ift(
    weights: ArrayLike,
    seeds: ArrayLike,
    *,
    fully_connected: bool = False,
    arc_weight: str = "target",
    return_cost: bool = False,
    return_predecessor: bool = False,
    backend: str = "auto",
    device: Optional[int] = None,
) -> ArrayOrTuple:
    """The Image Foresting Transform by seed competition (Falcao et al.).

    Each pixel gets the label of the seed (``seeds != 0``) with the cheapest path to it, a path costing the largest
    arc weight along it (f_max). Ties are resolved by the key (cost, D), D the arcs since the path last rose to the
    cost: plateaux are split by geodesic distance as a FIFO queue would; the predecessor is the neighbour with the
    smallest key, then the smallest raster index (docs/image-foresting-transform.md).

    Parameters
    ----------
    weights : array_like, 2D or 3D
        The pixel weights B: 8-, 16-, 32-bit integers or float32, not negative.
    seeds : array_like of int
        Of the weights' shape: the seeds' labels (0: not a seed); unsigned, or signed and not negative.
    fully_connected : bool, optional
        Face neighbours (4 in 2D, 6 in 3D; default) or all (8, 26).
    arc_weight : {'target', 'maximum', 'absolute-difference'}, optional
        w(p, q) = B(q) (default), max(B(p), B(q)) or abs(B(p) - B(q)).
    return_cost : bool, optional
        Also return the cost map (uint32, or float32 for float weights).
    return_predecessor : bool, optional
        Also return the predecessor map (int64 flat indices, -1 at the seeds and at unreached pixels).
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.

    Returns
    -------
    labels : ndarray
        Of the seeds' type, 0 where no seed reaches.
    cost, predecessor : ndarray
        With ``return_cost`` / ``return_predecessor``.

    Raises
    ------
    ValueError
        For negative weights or seeds, another type, or shapes that differ.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> weights = np.array([[1, 1, 5, 1, 1]], np.uint8)
    >>> seeds = np.array([[1, 0, 0, 0, 2]], np.uint8)
    >>> labels, cost = chseg.ift(weights, seeds, return_cost=True, backend="cpu")
    >>> labels
    array([[1, 1, 1, 2, 2]], dtype=uint8)
    >>> cost
    array([[0, 1, 5, 1, 0]], dtype=uint32)
    """
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
        run.context,
    )
    out = [run.output(to_caller(run, labels))]
    if return_cost:
        out.append(run.output(to_caller(run, cost)))
    if return_predecessor:
        out.append(to_caller(run, predecessor))
    return out[0] if len(out) == 1 else tuple(out)


def waterpixels(
    image: ArrayLike,
    grid_step: Union[int, Sequence[int]] = 10,
    *,
    compactness: Optional[float] = None,
    gradient_minimum_seeds: bool = False,
    fully_connected: bool = False,
    return_border: bool = False,
    dtype: Any = np.uint32,
    backend: str = "auto",
    device: Optional[int] = None,
) -> ArrayOrTuple:
    """Waterpixels (Machairas et al.): superpixels on a regular grid.

    The image is cut into cells of ``grid_step`` pixels; each superpixel grows from its cell's seed (the cell's
    centre, or its pixel of smallest gradient) by the Image Foresting Transform of
    B = |Sobel gradient| + k * 2 * (distance to the nearest grid seed / grid step) (docs/waterpixels.md).

    Parameters
    ----------
    image : array_like, 2D or 3D
        8-, 16-, 32-bit integers, float32 or float64.
    grid_step : int or sequence of int, optional
        The cells' size: one number, or one per axis in NumPy order (default 10).
    compactness : float, optional
        k, not negative; default 0.04 * (largest - smallest value).
    gradient_minimum_seeds : bool, optional
        Seed each cell at its pixel of smallest gradient instead of its centre.
    fully_connected : bool, optional
        Face neighbours (4 in 2D, 6 in 3D; default) or all (8, 26) for the growth.
    return_border : bool, optional
        Also return B (float32).
    dtype : dtype, optional
        The labels' type: uint8, uint16, uint32 (default) or uint64.
    backend : {'auto', 'cuda', 'cpu'}, optional
        'auto' (default): the CUDA backend when a device is usable, else the CPU reference; both give the same result.
    device : int, optional
        The CUDA device: by default that of the first CuPy input, else 0.

    Returns
    -------
    labels : ndarray
        The cells' numbers, 1.. in raster order of the cells.
    border : ndarray
        With ``return_border``.

    Raises
    ------
    ValueError
        For a bad grid step or compactness, 64-bit integers, or more cells than ``dtype`` holds.

    Examples
    --------
    >>> import numpy as np, chseg
    >>> image = np.zeros((4, 6), np.uint8)
    >>> chseg.waterpixels(image, (4, 3), backend="cpu")
    array([[1, 1, 1, 2, 2, 2],
           [1, 1, 1, 2, 2, 2],
           [1, 1, 1, 2, 2, 2],
           [1, 1, 1, 2, 2, 2]], dtype=uint32)
    """
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
        run.context,
    )
    out = run.output(to_caller(run, labels))
    return (out, to_caller(run, border)) if return_border else out
