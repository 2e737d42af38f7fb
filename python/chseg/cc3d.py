"""cc3d's API on chseg: ``from chseg import cc3d`` where ``import cc3d`` was.

The functions of connected-components-3d (cc3d 4.1) with their names, parameters, defaults, return types and
numbering, computed by chseg's connected-components core: on the GPU when there is one (NumPy in, NumPy out; CuPy in,
CuPy out), on the CPU reference otherwise, with the same result. Every function takes two keyword arguments more,
``backend`` ('auto', 'cuda' or 'cpu') and ``device``, as the other chseg functions do.

Numbering follows cc3d: components are numbered 1..N in the order of their first voxel in the array's memory order
(C order for C-contiguous arrays, Fortran order for Fortran-contiguous ones; other arrays are read as a C-ordered
copy), and the output has the input's memory order. Signed integers are labelled as the unsigned integers of their
bits, as cc3d does (which matters only with ``delta``). docs/connected-components.md lists where cc3d's results are
defined by its implementation and how this module matches them, and the one place it does not (cc3d's 2D
8-connected labelling with ``delta`` joins some vertical neighbours whose values differ by more than delta; this
module keeps to the documented rule).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _chseg
from ._arrays import host, host_empty, resolve, to_caller
from ._cc3d_common import (
    _SUPPORTED,
    _UNSIGNED,
    DimensionError,
    _as_array,
    _c_view,
    _check_connectivity,
    _grid_array,
    _label,
    _memory_order,
    _module,
    _to_backend,
    _unsigned_view,
)
from ._cc3d_graphs import (
    DisjointSet,
    color_connectivity_graph,
    contacts,
    each,
    region_graph,
    voxel_connectivity_graph,
)

__all__ = [
    "DimensionError",
    "DisjointSet",
    "color_connectivity_graph",
    "connected_components",
    "connected_components_stack",
    "contacts",
    "dust",
    "each",
    "estimate_provisional_labels",
    "largest_k",
    "region_graph",
    "statistics",
    "voxel_connectivity_graph",
]


def estimate_provisional_labels(data: Any) -> Tuple[int, int, int]:
    """cc3d's estimate of the provisional labels of a multilabel image, which chooses the default output type.

    Parameters
    ----------
    data : array_like
        Of 1 to 3 axes.

    Returns
    -------
    (count, first_foreground_row, last_foreground_row) : tuple of int
        The number of runs of equal non-zero values along the rows of the array's memory order (its fastest axis),
        and the first and last rows that hold a non-zero value (-1 when none does).

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> cc3d.estimate_provisional_labels(np.array([[1, 1, 2, 0], [0, 0, 0, 0]], np.uint8))
    (2, 0, 0)
    """
    data, _ = _as_array(data)
    xp = _module(data)
    if data.dtype == np.float16:
        data = data.view(np.uint16)
    if data.dtype.kind not in "biuf" or data.dtype.itemsize > 8:
        raise TypeError(f"Type {data.dtype} is not currently supported. Supported: {_SUPPORTED}")
    order = _memory_order(data)
    c = _c_view(data, order, xp)
    if c.ndim == 0 or c.size == 0:
        return 0, -1, -1
    return _estimate(_unsigned_view(c), 0)


def _estimate(c: Any, limit: int) -> Tuple[int, int, int]:
    """estimate_provisional_labels of a C-ordered array (unsigned or float), stopping at `limit` (0: none) on the
    host (the count is exact below the limit)."""
    if isinstance(c, np.ndarray):
        count, first, last = _chseg.provisional_label_estimate(c, int(limit))
        return int(count), int(first), int(last)
    xp = _module(c)
    rows = c.reshape(-1, c.shape[-1])
    nonzero = rows != 0
    starts = nonzero.copy()
    starts[:, 1:] &= rows[:, 1:] != rows[:, :-1]
    per_row = starts.sum(axis=1)
    count = int(per_row.sum())
    foreground = xp.flatnonzero(per_row)
    if foreground.size == 0:
        return count, -1, -1
    return count, int(foreground[0]), int(foreground[-1])


def _even_ceil(n: int) -> int:
    return n << 1 if n & 1 else n  # cc3d's rounding, as it is written


def _default_out_dtype(dims3: Sequence[int], connectivity: int, binary: bool, epl: int, out_dtype: Any) -> np.dtype:
    """cc3d's choice of the output type and its refusals of too narrow ones."""
    voxels = int(np.prod(dims3))
    max_labels = min(epl, voxels)
    if binary:
        union_find_voxels = _even_ceil(dims3[0]) * _even_ceil(dims3[1]) * _even_ceil(dims3[2])
        if connectivity in (4, 6):
            max_labels = min(max_labels, union_find_voxels // 2 + 1)
        else:
            max_labels = min(max_labels, union_find_voxels // 8 + 1)
    if out_dtype is not None:
        out = np.dtype(out_dtype)
        if out not in (np.uint16, np.uint32, np.uint64):
            raise ValueError(f"Explicitly defined out_dtype ({out}) must be one of: np.uint16, np.uint32, np.uint64")
        if np.iinfo(out).max < max_labels:
            raise ValueError(
                f"Explicitly defined out_dtype ({out}) is too small "
                f"to contain the estimated maximum number of labels ({max_labels})."
            )
        return out
    if max_labels < np.iinfo(np.uint16).max:
        return np.dtype(np.uint16)
    if max_labels < np.iinfo(np.uint32).max:
        return np.dtype(np.uint32)
    return np.dtype(np.uint64)


def connected_components(
    data: Any,
    max_labels: int = -1,
    connectivity: int = 26,
    return_N: bool = False,
    delta: Union[int, float] = 0,
    out_dtype: Any = None,
    out_file: Any = None,
    periodic_boundary: bool = False,
    binary_image: bool = False,
    *,
    backend: str = "auto",
    device: Optional[int] = None,
    _sizes: Optional[list] = None,
) -> Any:
    """Connected components of a 1D, 2D or 3D image, binary, multilabel or continuous (cc3d.connected_components).

    Parameters
    ----------
    data : array_like
        NumPy or CuPy (a torch tensor is read on the host, as cc3d reads it); bool, integers of 8 to 64 bits,
        float16 (without delta), float32, float64.
    max_labels : int, optional
        Ignored (deprecated in cc3d, which ignores it too).
    connectivity : int, optional
        2D: 4 (edges) or 8 (edges and corners); 6 means 4, 18 and 26 mean 8. 3D (and 1D): 6 (faces), 18 (and
        edges) or 26 (and corners; default).
    return_N : bool, optional
        Also return the number of components.
    delta : int or float, optional
        Join non-zero neighbours whose values differ by at most delta (default 0: equal values).
    out_dtype : dtype, optional
        uint16, uint32 or uint64; by default the narrowest of them that cc3d's estimate of the label count fits.
    out_file : str or file, optional
        Write the labels into this file as a memory map (cc3d's memmap, in the output's memory order).
    periodic_boundary : bool, optional
        The image wraps around on every axis (connectivities 4, 8 and 6, without delta).
    binary_image : bool, optional
        Label the non-zero voxels whatever their values (bool images always are).
    backend, device
        As in :func:`chseg.label`.
    _sizes : list, optional
        Internal (dust, largest_k): receives the voxel counts of label values 0..N, from the labelling's own pass.

    Returns
    -------
    labels : ndarray
        Of the input's shape, kind and memory order; 0 for background, components 1..N in the order of their
        first voxel in memory order.
    N : int
        With ``return_N``.

    Raises
    ------
    DimensionError
        Not 1 to 3 axes.
    ValueError
        A connectivity the dimension does not take, periodic boundaries with 18/26 or delta, an out_dtype that is
        not unsigned 16 to 64 bits or too narrow for the estimate.
    TypeError
        An unsupported dtype, or float16 with delta.

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> image = np.array([[1, 1, 0, 2], [0, 3, 3, 2]], np.uint8)
    >>> cc3d.connected_components(image, connectivity=4, backend="cpu")
    array([[1, 1, 0, 2],
           [0, 3, 3, 2]], dtype=uint16)
    >>> cc3d.connected_components(image, connectivity=4, delta=1, return_N=True, backend="cpu")[1]
    2
    """
    del max_labels  # deprecated in cc3d and disconnected there
    data, is_torch = _as_array(data)
    xp = _module(data)
    dims = data.ndim
    if dims not in (1, 2, 3):
        raise DimensionError("Only 1D, 2D, and 3D arrays supported. Got: " + str(dims))
    connectivity = int(connectivity)
    _check_connectivity(dims, connectivity)
    if periodic_boundary and connectivity not in (4, 8, 6):
        raise ValueError(f"periodic_boundary is not yet implemented for {connectivity}-connectivity.")
    if periodic_boundary and delta != 0:
        raise ValueError("periodic_boundary is not yet implemented continuous data.")
    if data.size == 0:
        out = xp.zeros(data.shape, dtype=out_dtype if out_dtype is not None else data.dtype)
        return (out, 0) if return_N else out

    order = _memory_order(data)
    if data.dtype == np.float16:
        if delta != 0:
            raise TypeError("float16 is not supported for continuous images (delta != 0).")
        data = data.view(np.uint16)
    dtype = data.dtype
    if dtype.kind not in "biuf" or dtype.itemsize > 8:
        raise TypeError(f"Type {dtype} is not currently supported. Supported: {_SUPPORTED}")
    binary = bool(binary_image) or dtype == np.bool_
    if dtype.kind == "f":
        delta = float(delta)
        binary = binary or delta == np.finfo(dtype).max
    elif dtype != np.bool_:
        delta = int(delta)
        binary = binary or delta == np.iinfo(dtype).max
    if delta < 0:
        raise ValueError(f"delta must be >= 0, not {delta}")

    # The padded shape cc3d sizes its arrays with (its even_ceil rule) and the memory-order grid.
    dims3 = list(data.shape) + [1] * (3 - dims) if order == "F" else [1] * (3 - dims) + list(data.shape)
    c = _unsigned_view(_c_view(data, order, xp))
    voxels = int(data.size)
    if binary:
        epl, first_row, last_row = voxels, 0, -2  # cc3d does not estimate binary images
    elif periodic_boundary:
        epl, first_row, last_row = _estimate(c, 0)  # the foreground rows decide the wrapping (below)
    elif voxels < 2**16 - 1:
        epl, first_row, last_row = voxels, 0, -2  # uint16 whatever the estimate
    else:
        # The type needs the estimate only up to the ranges it is compared with (uint16, and uint32 for volumes of
        # 2^32 voxels or more): the count stops there.
        epl, first_row, last_row = _estimate(c, 2**16 if voxels < 2**32 - 1 else 2**32)
    out_type = _default_out_dtype(dims3, connectivity, binary, epl, out_dtype)
    # cc3d labels an image whose only foreground is one row by its runs of equal values, without periodic wrapping.
    periodic = bool(periodic_boundary) and not (delta == 0 and first_row == last_row and first_row >= 0)

    run = resolve(backend, device, c)
    grid = _grid_array(_to_backend(run, c))
    labels = run.empty(grid.shape, out_type)
    mode = _chseg.ConnectedComponentMode.BINARY if binary else _chseg.ConnectedComponentMode.NON_ZERO_ZONES
    r = _label(
        run,
        grid,
        labels,
        mode=mode,
        connectivity=connectivity,
        delta=0 if binary else delta,
        periodic=periodic,
        statistics=_sizes is not None,
    )
    n = int(r["count"])
    if _sizes is not None:
        counts = r["voxel_count"]
        _sizes.append(np.concatenate([[voxels - int(counts.sum())], counts]).astype(np.uint32))
    out = to_caller(run, labels).reshape(c.shape)
    if order == "F":
        out = out.T
    if out_file is not None:
        out = _to_memmap(out, out_file, order)
    if is_torch:
        import torch  # type: ignore[import-not-found]

        out = torch.from_numpy(out)
    return (out, n) if return_N else out


def _to_memmap(out: Any, out_file: Any, order: Any) -> np.ndarray:
    a = host(out)
    if isinstance(out_file, (str, os.PathLike)):
        with open(out_file, "wb") as f:
            os.ftruncate(f.fileno(), a.size * a.dtype.itemsize)
    m = np.memmap(out_file, order="F", dtype=a.dtype, shape=(a.size,))
    flat = a.reshape(-1, order=order)
    m[:] = flat
    return m.reshape(a.shape, order=order)


def _same_layout_views(*arrays: Any) -> Optional[list]:
    """C-ordered views of arrays of one shape and one memory order (the transposes of Fortran-ordered ones), or None
    when their orders differ or one is not contiguous."""
    if all(a.flags.c_contiguous for a in arrays):
        return list(arrays)
    if all(a.flags.f_contiguous for a in arrays):
        return [a.T for a in arrays]
    return None


def _map_labels(labels: Any, table: np.ndarray, out: Any, backend: str, device: Optional[int]) -> Any:
    """out[...] = table[labels] through the core (MapLabels: on the GPU for NumPy arrays too); CuPy gathers itself."""
    xp = _module(labels)
    views = _same_layout_views(labels, out) if xp is np else None
    if views is None:
        out[...] = xp.asarray(table)[labels]
        return out
    run = resolve(backend, device, views[0])
    grids = [_grid_array(_unsigned_view(v)) for v in views]
    _chseg.map_labels(grids[0], _unsigned_view(table), grids[1], run.context)
    return out


def _output_like(a: Any, backend: str, device: Optional[int]) -> Any:
    """An uninitialised array of a's shape, type and memory order: for NumPy from the module's host array cache
    (pages mapped; page-locked when the GPU runs), else (CuPy, other layouts) a copy of a."""
    xp = _module(a)
    if xp is not np or not (a.flags.c_contiguous or a.flags.f_contiguous):
        return a.copy(order="K")
    pinned = resolve(backend, device).backend == "cuda"
    if a.flags.c_contiguous:
        return host_empty(a.shape, a.dtype, pinned=pinned)
    return host_empty(a.shape[::-1], a.dtype, pinned=pinned).T


def _keep_labels(image: Any, labels: Any, keep: np.ndarray, backend: str, device: Optional[int], out: Any) -> None:
    """out = image where keep[labels], 0 elsewhere (out may be image): through the core (KeepLabels) for NumPy
    arrays of one layout, which writes every voxel of out; CuPy (and other layouts) mask a copy themselves."""
    xp = _module(image)
    kept = image.dtype.kind == "u" or image.dtype in (np.float32, np.float64)
    views = _same_layout_views(image, labels, out) if xp is np and kept else None
    if views is None:
        if out is not image:
            out[...] = image
        out[~xp.asarray(keep.astype(bool))[labels]] = 0
        return
    run = resolve(backend, device, views[0])
    _chseg.keep_labels(
        _grid_array(views[0]), _grid_array(_unsigned_view(views[1])), keep, _grid_array(views[2]), run.context
    )


def statistics(
    out_labels: Any, no_slice_conversion: bool = False, *, backend: str = "auto", device: Optional[int] = None
) -> Dict[str, Any]:
    """Voxel counts, bounding boxes and centroids of every label value 0..N of a label image (cc3d.statistics).

    Parameters
    ----------
    out_labels : array_like
        Non-negative integers (or bool), 1 to 3 axes, the largest at most the number of voxels.
    no_slice_conversion : bool, optional
        Return the bounding boxes as an (N+1, 2*ndim) array instead of tuples of slices.
    backend, device
        As in :func:`chseg.label`.

    Returns
    -------
    dict
        ``voxel_counts`` (N+1,) uint32; ``bounding_boxes``: per label a tuple of slices in NumPy axis order (None for
        a value that does not occur, as cc3d decides it), or with ``no_slice_conversion`` the array of rows
        (min0, max0, min1, max1[, min2, max2]) in uint16 (uint32 when an axis exceeds 65535 voxels), where a value
        that does not occur has the type's maximum as minimum and 0 as maximum; ``centroids`` (N+1, ndim) float64,
        NaN for a value that does not occur. Arrays are NumPy arrays whatever the input's kind.

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> s = cc3d.statistics(np.array([[0, 1, 1], [0, 0, 2]], np.uint8), backend="cpu")
    >>> s["voxel_counts"]
    array([3, 2, 1], dtype=uint32)
    >>> s["bounding_boxes"][1]
    (slice(0, 1, None), slice(1, 3, None))
    >>> s["centroids"][2]
    array([1., 2.])
    """
    labels, _ = _as_array(out_labels)
    while labels.ndim < 2:
        labels = labels[..., None]
    if labels.dtype == np.bool_:
        labels = labels.view(np.uint8)
    ndim = labels.ndim
    if ndim > 3:
        raise DimensionError("Only 1D, 2D, and 3D arrays supported. Got: " + str(ndim))
    if labels.size == 0:
        return {"voxel_counts": None, "bounding_boxes": None, "centroids": None}
    counts, minimum, maximum, sums = statistics_arrays(labels, backend, device)
    return statistics_output(counts, minimum, maximum, sums, labels.shape, no_slice_conversion)


def statistics_arrays(labels: Any, backend: str = "auto", device: Optional[int] = None) -> Tuple[np.ndarray, ...]:
    """(voxel counts, inclusive minima, inclusive maxima, coordinate sums) of every label value 0..N of a non-empty
    2D or 3D integer label image, rows by value and columns in NumPy axis order, from the core's one pass
    (ComputeLabelStatistics); cc3d's refusals of negative labels and of labels above the voxel count."""
    xp = _module(labels)
    ndim = labels.ndim
    if labels.dtype.kind not in "ui":
        raise TypeError(f"Statistics are computed on integer labels, not {labels.dtype}")
    original = labels
    signed = labels.dtype.kind == "i"
    if signed:
        labels = labels.view(_UNSIGNED[labels.dtype.itemsize])
    order = "F" if labels.flags.f_contiguous else "C"
    c = _c_view(labels, order, xp)
    run = resolve(backend, device, c)
    try:
        r = _chseg.label_statistics(_to_backend(run, c), run.context)
    except ValueError:
        # A label above the voxel count (the core finds the largest label on the device): cc3d's messages.
        low = int(original.min()) if signed else 0
        if low < 0:
            raise ValueError(
                f"Statistics can only be computed on volumes containing labels with values >= 0. Min: {low}"
            ) from None
        raise ValueError(
            "Statistics can only be computed on volumes containing labels with values lower than the number of "
            f"voxels. Max: {int(labels.max())}"
        ) from None
    # The core's grid axes are the C view's, fastest first; NumPy axis d of the input is grid axis ndim-1-d of a
    # C-ordered array and grid axis d of a Fortran-ordered one.
    axes = list(range(ndim)) if order == "F" else [ndim - 1 - d for d in range(ndim)]
    return r["voxel_count"], r["minimum"][:, axes], r["maximum"][:, axes], r["coordinate_sum"][:, axes]


def statistics_output(
    counts: np.ndarray,
    minimum: np.ndarray,
    maximum: np.ndarray,
    sums: np.ndarray,
    shape: Sequence[int],
    no_slice_conversion: bool,
) -> Dict[str, Any]:
    """cc3d.statistics' dict from per-label voxel counts, inclusive minima and maxima and coordinate sums (rows:
    label values 0..N; columns: NumPy axes) of an image of `shape` (chseg.dask.statistics sums them over chunks)."""
    ndim = len(shape)
    voxels = int(np.prod(shape))
    top = len(counts) - 1
    wide = any(s > np.iinfo(np.uint16).max for s in shape)
    bbox_type = np.uint32 if wide else np.uint16
    missing = np.iinfo(bbox_type).max
    boxes = np.zeros((top + 1, 2 * ndim), dtype=bbox_type)
    present = counts > 0
    centroids = np.full((top + 1, ndim), np.nan)
    for d in range(ndim):
        boxes[:, 2 * d] = np.where(present, minimum[:, d], missing)
        boxes[:, 2 * d + 1] = np.where(present, maximum[:, d], 0)
        centroids[present, d] = sums[present, d].astype(np.float64) / counts[present]
    output: Dict[str, Any] = {
        "voxel_counts": counts.astype(np.uint32),
        "bounding_boxes": boxes,
        "centroids": centroids,
    }
    if no_slice_conversion:
        return output
    slices: list = []
    for row in boxes:
        starts, ends = row[0::2], row[1::2]
        if all(int(s) < voxels for s in starts):
            slices.append(tuple(slice(int(s), int(e) + 1) for s, e in zip(starts, ends)))
        else:
            slices.append(None)
    output["bounding_boxes"] = slices
    return output


def _sizes_of_labelling(
    img: Any, connectivity: int, delta: Union[int, float], binary_image: bool, backend: str, device: Optional[int]
) -> Tuple[Any, int, np.ndarray]:
    """(labels, N, voxel counts indexed by label 0..N) of one labelling, the counts from the same GPU pass."""
    sizes: list = []
    labels, n = connected_components(
        img,
        connectivity=connectivity,
        return_N=True,
        delta=delta,
        binary_image=binary_image,
        backend=backend,
        device=device,
        _sizes=sizes,
    )
    return labels, n, sizes[0] if sizes else np.zeros(1, np.uint32)


def dust(
    img: Any,
    threshold: Union[int, float, Tuple[float, float], Sequence[float]],
    connectivity: int = 26,
    in_place: bool = False,
    binary_image: bool = False,
    precomputed_ccl: bool = False,
    invert: bool = False,
    return_N: bool = False,
    *,
    backend: str = "auto",
    device: Optional[int] = None,
) -> Any:
    """Remove the components smaller than threshold (cc3d.dust).

    Parameters
    ----------
    img : array_like
        A 2D or 3D image (its components are labelled with ``connectivity``), or a labelling with
        ``precomputed_ccl``.
    threshold : number or (lower, upper)
        A number: remove components of fewer voxels. A pair: remove components whose size is outside [lower, upper).
    connectivity, binary_image
        As in :func:`connected_components`.
    in_place : bool, optional
        Write into ``img`` (NumPy or CuPy) instead of a copy.
    precomputed_ccl : bool, optional
        ``img`` is a labelling already: its values are the components.
    invert : bool, optional
        Keep what would be removed and remove the rest.
    return_N : bool, optional
        Also return the number of components kept.
    backend, device
        As in :func:`chseg.label`.

    Returns
    -------
    image : ndarray
        ``img`` with the removed components set to 0 (cc3d returns the unsigned view of a signed image when nothing
        is removed; so does this function).
    N : int
        With ``return_N``.

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> img = np.array([[1, 1, 0, 2], [1, 0, 0, 0]], np.uint8)
    >>> cc3d.dust(img, 2, connectivity=4, backend="cpu")
    array([[1, 1, 0, 0],
           [1, 0, 0, 0]], dtype=uint8)
    """
    img, _ = _as_array(img)
    xp = _module(img)
    orig_dtype = img.dtype
    source = _unsigned_view(img) if img.dtype != np.bool_ else img
    if precomputed_ccl:
        cc_labels = source
        sizes = statistics(cc_labels, no_slice_conversion=True, backend=backend, device=device)["voxel_counts"]
        n = len(sizes) - 1
    else:
        cc_labels, n, sizes = _sizes_of_labelling(source, connectivity, 0, binary_image, backend, device)
    sizes = np.asarray(sizes)
    ids = np.arange(1, n + 1)
    if isinstance(threshold, (tuple, list)):
        remove = ~((threshold[0] <= sizes[1:]) & (sizes[1:] < threshold[1]))
    else:
        remove = sizes[1:] < threshold
    to_mask = ids[remove]
    dust_n = len(to_mask) if invert else n - len(to_mask)
    if len(to_mask) == 0:
        # cc3d returns the unsigned view then (and for invert a Fortran-ordered zero image).
        if invert:
            out = xp.zeros(source.shape, dtype=source.dtype, order="F")
        else:
            out = source if in_place else source.copy(order="K")
        return (out, dust_n) if return_N else out
    keep = np.ones(max(n + 1, len(sizes)), dtype=np.uint8)
    keep[to_mask] = 0
    if invert:
        keep = (1 - keep).astype(np.uint8)
    as_bytes = (lambda a: a.view(np.uint8)) if source.dtype == np.bool_ else (lambda a: a)
    out = source if in_place else _output_like(source, backend, device)
    _keep_labels(as_bytes(source), cc_labels, keep, backend, device, out=as_bytes(out))
    out = out.view(orig_dtype)
    return (out, dust_n) if return_N else out


def largest_k(
    img: Any,
    k: int,
    connectivity: int = 26,
    delta: Union[int, float] = 0,
    return_N: bool = False,
    binary_image: bool = False,
    precomputed_ccl: bool = False,
    *,
    backend: str = "auto",
    device: Optional[int] = None,
) -> Any:
    """The k largest components (cc3d.largest_k), numbered 1..k from the smallest of them to the largest.

    Parameters
    ----------
    img : array_like
        A 2D or 3D image, or a labelling with ``precomputed_ccl``.
    k : int
        How many components to keep (>= 0).
    connectivity, delta, binary_image
        As in :func:`connected_components`.
    return_N : bool, optional
        Also return the number of components returned.
    precomputed_ccl : bool, optional
        ``img`` is a labelling already.
    backend, device
        As in :func:`chseg.label`.

    Returns
    -------
    labels : ndarray
        k = 1: a bool mask of the largest component. k >= N: the labelling itself. Else the k largest components
        numbered by increasing size (ties ordered as cc3d orders them, by NumPy's argpartition of the sizes).
    N : int
        With ``return_N``.

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> img = np.array([[1, 1, 0, 2], [1, 0, 3, 3]], np.uint8)
    >>> cc3d.largest_k(img, 2, connectivity=4, backend="cpu")
    array([[2, 2, 0, 0],
           [2, 0, 1, 1]], dtype=uint16)
    """
    assert k >= 0
    img, _ = _as_array(img)
    xp = _module(img)
    order = "C" if img.flags.c_contiguous else "F"
    if k == 0:
        return xp.zeros(img.shape, dtype=np.uint16, order=order)
    if precomputed_ccl:
        cc_labels = xp.array(img, order="F", copy=True)
        cts = statistics(cc_labels, no_slice_conversion=True, backend=backend, device=device)["voxel_counts"]
        n = len(cts) - 1
    else:
        cc_labels, n, cts = _sizes_of_labelling(img, connectivity, delta, binary_image, backend, device)
    if n <= k:
        return (cc_labels, n) if return_N else cc_labels
    if k == 1:
        largest = int(np.argmax(cts[1:])) + 1
        if xp is np:
            mask_table = np.zeros(len(cts), dtype=np.uint8)
            mask_table[largest] = 1
            fortran = cc_labels.flags.f_contiguous and not cc_labels.flags.c_contiguous
            empty = np.empty(cc_labels.shape, np.uint8, order="F" if fortran else "C")
            cc_out = _map_labels(cc_labels, mask_table, empty, backend, device).view(bool)
        else:
            cc_out = cc_labels == largest
        return (cc_out, 1) if return_N else cc_out
    preserve = np.argpartition(cts[1:], len(cts) - k - 1)[-k:]
    preserve += 1
    preserve_list = [int(x) for x in sorted(preserve, key=lambda label: cts[label])]
    lookup = np.zeros(len(cts), dtype=cc_labels.dtype)
    for i, label in enumerate(preserve_list):
        lookup[label] = i + 1
    cc_order = "C" if cc_labels.flags.c_contiguous else "F"
    cc_out = _map_labels(cc_labels, lookup, xp.empty(cc_labels.shape, cc_labels.dtype, order=cc_order), backend, device)
    return (cc_out, len(preserve_list)) if return_N else cc_out


def connected_components_stack(
    stacked_images: Any,
    connectivity: int = 26,
    return_N: bool = False,
    binary_image: bool = False,
    *,
    backend: str = "auto",
    device: Optional[int] = None,
) -> Any:
    """Connected components of a volume given as a sequence of 3D blocks along the last axis (z), each labelled on
    its own and joined across the block faces (cc3d.connected_components_stack).

    cc3d returns a crackle-compressed array; this returns the labels as one NumPy array (the components and their
    numbering are cc3d's: by first voxel in Fortran order of the whole volume).

    Parameters
    ----------
    stacked_images : iterable of array_like
        3D blocks of one x and y extent, in z order.
    connectivity : int, optional
        6 or 26 (default).
    return_N : bool, optional
        Also return the number of components.
    binary_image : bool, optional
        Label the non-zero voxels whatever their values.
    backend, device
        As in :func:`chseg.label`.

    Returns
    -------
    labels : ndarray
        uint32 or uint64 (the narrowest of them that the count fits), Fortran-ordered.
    N : int
        With ``return_N``.
    """
    blocks = [host(_as_array(b)[0]) for b in stacked_images]
    if not blocks:
        raise ValueError("stacked_images is empty")
    if connectivity not in (6, 26):
        raise ValueError(f"Only 6 and 26 connectivity are supported. Got: {connectivity}")
    for b in blocks:
        if b.ndim != 3 or b.shape[:2] != blocks[0].shape[:2]:
            raise ValueError("the stacked images must be 3D blocks of one x and y extent")
    volume = np.asfortranarray(np.concatenate(blocks, axis=2))
    labels, n = connected_components(
        volume,
        connectivity=connectivity,
        return_N=True,
        binary_image=binary_image,
        out_dtype=np.uint32 if volume.size < 2**32 - 1 else np.uint64,
        backend=backend,
        device=device,
    )
    labels = host(labels)
    return (labels, n) if return_N else labels
