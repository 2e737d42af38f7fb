"""chseg.dask's cc3d operations over chunks: dust (chseg.cc3d.dust) and statistics (chseg.cc3d.statistics).

Both need per-component totals over the whole volume: each chunk reports its own (voxel counts by global label, and
for statistics the boxes and coordinate sums shifted by the chunk's start), the client adds them up, and dust then
maps the chunks through a table of the labels to clear. The global labels are chseg.dask.label's (exact for any
chunking), so the totals are the whole volume's."""

from __future__ import annotations

from typing import Any, Callable, Dict, Sequence, Tuple

import numpy as np

from ._dask_chunks import _dask, _is_cupy, _starts, _to_numpy


def _fully_connected(ndim: int, connectivity: int) -> bool:
    accepted = (4, 8) if ndim == 2 else (6, 26)
    if connectivity not in accepted:
        raise ValueError(
            f"connectivity must be one of {accepted} for {ndim}D arrays over chunks, not {connectivity!r} "
            "(18-connectivity runs on whole arrays only: chseg.cc3d)"
        )
    return connectivity in (8, 26)


def _block_counts(labels: Any, image: Any) -> Tuple[np.ndarray, np.ndarray]:
    """(voxel counts by label, the labels of zero-valued voxels) of one chunk."""
    lab = _to_numpy(labels).ravel()
    counts = np.bincount(lab.astype(np.intp))
    zero = np.unique(lab[_to_numpy(image).ravel() == 0])
    return counts, zero


def _clear(image: Any, labels: Any, table: np.ndarray) -> Any:
    """The chunk with the voxels whose label's entry of `table` is True set to 0."""
    if _is_cupy(image):
        import cupy

        return cupy.where(cupy.asarray(table)[labels], image.dtype.type(0), image)
    return np.where(table[np.asarray(labels)], image.dtype.type(0), image)


def dust(
    label: Callable[..., Any],
    array: Any,
    threshold: Any,
    connectivity: int,
    binary_image: bool,
    invert: bool,
    return_N: bool,
    backend: str,
) -> Any:
    dask, da = _dask()
    if not isinstance(array, da.Array):
        array = da.from_array(array)
    full = _fully_connected(array.ndim, int(connectivity))
    binary = bool(binary_image) or array.dtype == np.bool_
    # Multilabel components are the flat zones of the non-zero voxels; the zones of zero are not components.
    labels = label(array, fully_connected=full, flat_zones=not binary, backend=backend)
    parts = dask.compute(
        *[
            dask.delayed(_block_counts)(lab, img)
            for lab, img in zip(labels.to_delayed().ravel(), array.to_delayed().ravel())
        ]
    )
    sizes = np.zeros(max(len(c) for c, _ in parts), np.int64)
    for counts, _ in parts:
        sizes[: len(counts)] += counts
    component = np.ones(len(sizes), bool)
    component[0] = False
    component[np.unique(np.concatenate([z for _, z in parts]))] = False
    if isinstance(threshold, (tuple, list)):
        small = ~((threshold[0] <= sizes) & (sizes < threshold[1]))
    else:
        small = sizes < threshold
    removed = component & small
    table = component & ~removed if invert else removed
    n = int(removed.sum()) if invert else int(component.sum() - removed.sum())
    out = da.map_blocks(_clear, array, labels, table, dtype=array.dtype, meta=array._meta)
    return (out, n) if return_N else out


def _block_statistics(labels: Any, start: Sequence[int], backend: str) -> Tuple[np.ndarray, ...]:
    """(label values, their voxel counts, minima, maxima and coordinate sums in the volume's coordinates) of one
    chunk. The chunk's values are numbered 0.. first (a chunk's global labels may exceed its voxel count, which the
    core's statistics refuse), then the rows are given back their values."""
    from .cc3d import statistics_arrays

    block = _to_numpy(labels)
    if block.dtype.kind == "i" and block.size and int(block.min()) < 0:
        raise ValueError(
            f"Statistics can only be computed on volumes containing labels with values >= 0. Min: {int(block.min())}"
        )
    values, compact = np.unique(block, return_inverse=True)
    counts, low, high, sums = statistics_arrays(compact.reshape(block.shape).astype(np.uint32), backend=backend)
    counts = np.asarray(counts, np.uint64)
    offset = np.asarray(start, np.uint64)
    low = np.asarray(low, np.uint64) + offset
    high = np.asarray(high, np.uint64) + offset
    sums = np.asarray(sums, np.uint64) + counts[:, None] * offset[None, :]
    return values.astype(np.uint64), counts, low, high, sums


def statistics(array: Any, no_slice_conversion: bool, backend: str) -> Dict[str, Any]:
    from .cc3d import statistics_output

    dask, da = _dask()
    if not isinstance(array, da.Array):
        array = da.from_array(array)
    if array.ndim not in (2, 3):
        raise ValueError(f"the array must have 2 or 3 axes, not {array.ndim}")
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    starts = _starts(array.chunks)
    blocks = array.to_delayed()
    tasks = []
    for index in np.ndindex(*blocks.shape):
        start = [int(starts[a][index[a]]) for a in range(array.ndim)]
        tasks.append(dask.delayed(_block_statistics)(blocks[index], start, backend))
    parts = dask.compute(*tasks)
    rows = int(max(int(p[0][-1]) for p in parts)) + 1
    if rows - 1 > array.size:
        raise ValueError(
            "Statistics can only be computed on volumes containing labels with values lower than the number of "
            f"voxels. Max: {rows - 1}"
        )
    counts = np.zeros(rows, np.uint64)
    low = np.full((rows, array.ndim), np.iinfo(np.uint64).max, np.uint64)
    high = np.zeros((rows, array.ndim), np.uint64)
    sums = np.zeros((rows, array.ndim), np.uint64)
    for values, c, lo, hi, su in parts:
        counts[values] += c  # the values of one chunk are distinct
        low[values] = np.minimum(low[values], lo)
        high[values] = np.maximum(high[values], hi)
        sums[values] += su
    return statistics_output(counts, low, high, sums, array.shape, bool(no_slice_conversion))
