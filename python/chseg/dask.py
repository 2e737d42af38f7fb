"""chseg on Dask arrays: exact chunked connected components, alpha cuts, watersheds (``_dask_watershed.py``) and
single-linkage trees, and a Zarr writer whose store appears only when complete.

Each function gives exactly what the whole-volume function gives, whatever the chunking: the chunks are processed
independently (NumPy chunks on the cpu backend, CuPy chunks on the GPU of the worker that runs them), then what
crosses chunk faces is merged on the client, and the output is relabelled chunk by chunk.

How (docs/python-package.md, "Dask"):

1. Per chunk (one task each; NumPy chunks on the worker's GPU when the backend runs there): the chunk's own labels
   (``chseg.label`` or an alpha-tree cut), their count, the count of their first voxels in each row of the chunk (a
   row: all axes but the last), the global row of each face label's first voxel, and the chunk's six (four in 2D)
   faces: labels and input values.
2. On the client: for each plane between two chunk layers, the faces on both sides are assembled across the volume
   and every pair of neighbours across the plane (with the diagonal ones for full connectivity, which also covers
   chunk edges and corners) that the definition connects gives an equivalence of two chunk labels. A union-find over
   the labels that touch a face (SciPy's connected components) joins them; the label with the smallest first voxel
   leads each group. Components are numbered by the rank of their first voxel in raster order, as the whole-volume
   functions number them: by a prefix sum of the per-row counts over (row, chunk along the last axis) (``_merge``).
3. The output is a lazy Dask array: each chunk's labels are computed again and mapped through a table the chunk
   builds from its rows' prefix sums and its joined labels' final labels, so that the volume is never gathered and
   can be written to Zarr chunk by chunk.

Memory on the client: the faces of one plane at a time (labels 8 bytes and values per face voxel, both sides), 32
bytes per label on a face, and 24 bytes per (row of the volume, chunk along the last axis).
"""

from __future__ import annotations

import itertools
import os
import shutil
from typing import Any, Optional

import numpy as np

import chseg

from ._dask_chunks import (
    _assemble,
    _dask,
    _groups,
    _is_cupy,
    _lateral_offsets,
    _layers,
    _shifted,
    _starts,
    _to_numpy,
)

__all__ = [
    "alpha_cut",
    "dust",
    "filter_regions",
    "hierarchy",
    "label",
    "node_attributes",
    "single_linkage_tree",
    "statistics",
    "to_zarr",
    "watershed",
]


def _global_index(local_flat, shape_local, start, shape):
    """Global raster indices of local raster indices of a chunk at `start`."""
    coords = np.unravel_index(local_flat, shape_local)
    return np.ravel_multi_index(tuple(c + s for c, s in zip(coords, start)), shape).astype(np.int64)


def _faces(labels, values) -> dict:
    """The chunk's first and last layers along every axis: (labels, input values)."""
    label_layers, value_layers = _layers(labels), _layers(values)
    return {key: (label_layers[key], value_layers[key]) for key in label_layers}


def _chunk_labels(block, mode, fully_connected, flat_zones, alpha, backend):
    """A chunk's own labels (0 = background in binary mode), numbered in raster order of their first voxel."""
    if mode == "label":  # 32-bit chunk labels where they fit: half the bytes to download, scan and gather
        return chseg.label(
            block,
            fully_connected=fully_connected,
            flat_zones=flat_zones,
            dtype=np.uint32 if block.size < 2**32 else np.uint64,
            backend=backend,
        )
    return chseg.alpha_tree(block, fully_connected=fully_connected, backend=backend).cut(alpha)


def _on_gpu(block, backend):
    """A NumPy chunk moved to the worker's GPU when the backend runs there and CuPy is installed (the chunk's labels
    then stay on the device; only the rows' largest labels, the faces, the relabel table and the output cross the
    link)."""
    if _is_cupy(block) or backend == "cpu" or chseg.device_count() == 0:
        return block
    try:
        import cupy
    except ImportError:
        return block
    return cupy.asarray(block)


def _summary(block, start, shape, mode, fully_connected, flat_zones, alpha, backend):
    """Pass 1 on a chunk: its label count, the count of its labels' first voxels in each row of the chunk (a row: all
    axes but the last), its faces, and the global row of the first voxel of each label on a face.

    The chunk labels are 1..K in raster order of their first voxel, so the labels whose first voxel lies in rows
    0..r are 1..top[r], top the running maximum of the rows' largest labels: only the rows' maxima cross the link."""
    labels = _chunk_labels(_on_gpu(block, backend), mode, fully_connected, flat_zones, alpha, backend)
    top = np.maximum.accumulate(_to_numpy(labels.reshape(-1, block.shape[-1]).max(axis=1)).astype(np.int64))
    faces = _faces(labels, block)
    on_faces = np.unique(np.concatenate([f[0].ravel() for f in faces.values()]))
    on_faces = on_faces[on_faces != 0].astype(np.int64)
    local_row = np.searchsorted(top, on_faces, side="left")  # the first row whose labels reach the label
    return {
        "count": int(top[-1]),
        "per_row": np.diff(top, prepend=0),
        "faces": faces,
        "face_labels": on_faces,
        "face_row": _global_index(local_row, block.shape[:-1], start[:-1], shape[:-1]),
    }


def _connected(a, b, mode, flat_zones, alpha):
    """Whether neighbours of values a and b are joined (arrays)."""
    if mode == "label":
        return (a == b) if flat_zones else ((a != 0) & (b != 0))
    return _difference(a, b) <= alpha


def _difference(a, b):
    """|a - b| as the module's image graphs weigh it: exact for integers, in float32 for float32, the double result
    rounded to float32 for float64."""
    if a.dtype.kind in "ui":
        return abs(a.astype(np.int64) - b.astype(np.int64)).astype(np.float64)  # abs(): NumPy's or CuPy's
    if a.dtype == np.float32:
        return abs(a - b).astype(np.float64)
    return abs(a - b).astype(np.float32).astype(np.float64)


def _plane(summaries, grid_index, axis, i, side, offsets, nblocks):
    """The face layer of all chunks with index `i` along `axis`, assembled across the volume: (labels, values), with
    chunk labels made global (offset added; background stays 0)."""
    other = [a for a in range(len(nblocks)) if a != axis]
    labels, values = {}, {}
    for k in grid_index:
        if k[axis] != i:
            continue
        chunk_labels, chunk_values = summaries[k]["faces"][(axis, side)]
        g = chunk_labels.astype(np.int64)
        g[g != 0] += offsets[k]  # chunk label l (1-based) -> global label offset + l
        key = tuple(k[a] for a in other)
        labels[key], values[key] = g, chunk_values
    return _assemble(labels, other, nblocks), _assemble(values, other, nblocks)


def _merge(array, mode, fully_connected, flat_zones, alpha, backend):
    """Passes 1 and 2: per-chunk summaries, equivalences across chunk faces, and what each chunk needs to number its
    labels: per row of the chunk, how many final labels come before its first one, and the final labels of its labels
    that are not their component's first (the components' other labels, joined across faces).

    A component's final label is 1 + the number of components whose first voxel comes before its own in raster
    order. Taking the rows of the volume (all axes but the last) in order, and in a row the chunks along the last axis
    in order, a component's first voxel is preceded by every first voxel of earlier rows, of the same row in chunks to
    its left, and of its own chunk's row before it. So the client needs only each chunk's count of first voxels per
    row (a component's first voxel is its first label's; labels joined to an earlier one are taken out) and a prefix
    sum over (row, chunk along the last axis): never a table of every label of the volume."""
    dask, _ = _dask()
    shape = tuple(int(s) for s in array.shape)
    starts = _starts(array.chunks)
    blocks = array.to_delayed()
    nblocks = list(blocks.shape)
    grid_index = list(np.ndindex(*blocks.shape))
    tasks = [
        dask.delayed(_summary)(
            blocks[k],
            tuple(int(starts[a][k[a]]) for a in range(len(k))),
            shape,
            mode,
            fully_connected,
            flat_zones,
            alpha,
            backend,
        )
        for k in grid_index
    ]
    summaries = dict(zip(grid_index, dask.compute(*tasks)))
    counts = np.array([summaries[k]["count"] for k in grid_index], dtype=np.int64)
    base = np.concatenate([[0], np.cumsum(counts)])
    offsets = {k: int(base[j]) for j, k in enumerate(grid_index)}  # global label = offset + chunk label (1-based)

    pairs_a, pairs_b = [], []
    for axis in range(array.ndim):
        for i in range(1, nblocks[axis]):
            low_labels, low_values = _plane(summaries, grid_index, axis, i - 1, "high", offsets, nblocks)
            high_labels, high_values = _plane(summaries, grid_index, axis, i, "low", offsets, nblocks)
            for offset in _lateral_offsets(array.ndim, axis, fully_connected):
                lateral = offset[:axis] + offset[axis + 1 :]
                src, dst = _shifted(low_labels, lateral)
                a, b = low_labels[src], high_labels[dst]
                joined = _connected(low_values[src], high_values[dst], mode, flat_zones, alpha)
                joined &= (a != 0) & (b != 0)
                pairs_a.append(a[joined].ravel())
                pairs_b.append(b[joined].ravel())
    # the face labels, global (sorted), with the row of their first voxels and their rank in raster order of first
    # voxels: by (row, chunk along the last axis, chunk label), since the chunks of a row cover its voxels left to
    # right and a chunk numbers its labels in raster order
    face_labels = np.concatenate([summaries[k]["face_labels"] + offsets[k] for k in grid_index])
    face_row = np.concatenate([summaries[k]["face_row"] for k in grid_index])
    face_last = np.concatenate([np.full(summaries[k]["face_labels"].size, k[-1], np.int64) for k in grid_index])
    face_rank = np.empty(face_labels.size, np.int64)
    face_rank[np.lexsort((face_labels, face_last, face_row))] = np.arange(face_labels.size)
    a = np.concatenate(pairs_a) if pairs_a else np.zeros(0, np.int64)
    b = np.concatenate(pairs_b) if pairs_b else np.zeros(0, np.int64)
    touched, leader = _groups(a, b, lambda g: face_rank[np.searchsorted(face_labels, g)])
    moved = touched != leader  # labels joined to a component whose first voxel is in another label
    joined, joined_leader = touched[moved], leader[moved]
    chunk_of = lambda g: np.searchsorted(base, g, side="left") - 1  # noqa: E731  (global label g >= 1)

    def rows_of(k):  # the chunk's rows in the volume's (row, chunk along the last axis) array
        return tuple(slice(int(starts[ax][k[ax]]), int(starts[ax][k[ax] + 1])) for ax in range(array.ndim - 1)) + (
            k[-1],
        )

    # first voxels per (row of the volume, chunk along the last axis), joined labels taken out; exclusive prefix sum
    per_row = np.zeros(shape[:-1] + (nblocks[-1],), np.int64)
    for k in grid_index:
        per_row[rows_of(k)] = summaries[k]["per_row"].reshape(per_row[rows_of(k)].shape)
    joined_row = face_row[np.searchsorted(face_labels, joined)]
    joined_chunk = chunk_of(joined)
    last_index = np.array([k[-1] for k in grid_index], np.int64)
    np.subtract.at(per_row.reshape(-1), joined_row * nblocks[-1] + last_index[joined_chunk], 1)
    before = np.cumsum(per_row.reshape(-1)) - per_row.reshape(-1)
    before = before.reshape(per_row.shape)

    # final labels of the leaders of joined labels (the rule `_table` applies on the workers: the labels before the
    # row, plus the leader's place in its row among the labels not joined), then of the joined labels
    leaders = np.unique(joined_leader)
    leader_row = face_row[np.searchsorted(face_labels, leaders)]
    leader_chunk = chunk_of(leaders)
    order = np.sort(joined)
    final_of_leader = np.empty(leaders.size, np.uint64)
    for j in np.unique(leader_chunk):
        k = grid_index[j]
        rows = rows_of(k)
        which = leader_chunk == j
        g = leaders[which]
        coords = np.unravel_index(leader_row[which], shape[:-1])
        local_row = np.ravel_multi_index(
            tuple(c - r.start for c, r in zip(coords, rows[:-1])), tuple(r.stop - r.start for r in rows[:-1])
        )
        row_start = np.concatenate([[0], np.cumsum(summaries[k]["per_row"])])[local_row] + offsets[k]  # labels before
        skipped = np.searchsorted(order, g) - np.searchsorted(order, row_start + 1)  # joined labels before, same row
        final_of_leader[which] = (before[tuple(coords) + (k[-1],)] + g - row_start - skipped).astype(np.uint64)
    joined_final = final_of_leader[np.searchsorted(leaders, joined_leader)]

    plan = {}
    for j, k in enumerate(grid_index):
        mine = joined_chunk == j
        plan[k] = (before[rows_of(k)].ravel(), summaries[k]["per_row"], joined[mine] - offsets[k], joined_final[mine])
    return grid_index, plan


def _table(before, per_row, joined, joined_final):
    """A chunk's relabel table (chunk label -> final label; 0 -> 0), built on the host (NumPy, K entries): a label
    that leads its component is numbered after the final labels before its row's first label (`before`) and its
    row's earlier leading labels; a joined label takes its leader's final label."""
    count = int(per_row.sum())
    row = np.repeat(np.arange(per_row.size), per_row)  # the row of each label 1..count
    row_start = np.cumsum(per_row) - per_row  # labels before each row's first
    is_joined = np.zeros(count + 1, np.int64)
    is_joined[joined] = 1
    joined_upto = np.cumsum(is_joined)  # joined labels among 1..l
    label = np.arange(1, count + 1)
    table = np.zeros(count + 1, np.uint64)
    table[1:] = (before[row] + label - row_start[row] - (joined_upto[:-1] - joined_upto[row_start[row]])).astype(
        np.uint64
    )
    table[joined] = joined_final
    return table


def _relabel(block, plan, mode, fully_connected, flat_zones, alpha, backend):
    """Pass 3 on a chunk: its labels again, mapped through its table (uploaded when the labels are on the GPU)."""
    labels = _chunk_labels(_on_gpu(block, backend), mode, fully_connected, flat_zones, alpha, backend)
    table = _table(*plan)
    if _is_cupy(labels):
        import cupy

        table = cupy.asarray(table)
    out = table[labels]
    return out if _is_cupy(block) else _to_numpy(out)


def _chunked(array, mode, fully_connected, flat_zones, alpha, backend):
    dask, da = _dask()
    if not isinstance(array, da.Array):
        array = da.from_array(array)
    if array.ndim not in (2, 3):
        raise ValueError(f"the array must have 2 or 3 axes, not {array.ndim}")
    if array.size == 0:
        raise ValueError("the array is empty")
    grid_index, plan = _merge(array, mode, fully_connected, flat_zones, alpha, backend)
    blocks = array.to_delayed()
    meta = array._meta
    out = np.empty(blocks.shape, dtype=object)
    for k in grid_index:
        shape = tuple(array.chunks[a][k[a]] for a in range(array.ndim))
        task = dask.delayed(_relabel)(blocks[k], plan[k], mode, fully_connected, flat_zones, alpha, backend)
        out[k] = da.from_delayed(
            task, shape=shape, dtype=np.uint64, meta=meta.astype(np.uint64) if hasattr(meta, "astype") else None
        )
    return da.block(out.tolist())


def label(array: Any, fully_connected: bool = False, flat_zones: bool = False, backend: str = "auto") -> Any:
    """Connected components of a 2D or 3D Dask array, numbered as ``chseg.label`` numbers the whole volume.

    Labels are 1.. in raster order of each component's first voxel (0 the background in binary mode), identical for
    every chunking. The merge across chunks is computed when this function is called, the labels when the returned
    array is.

    Parameters
    ----------
    array : dask.array.Array or array_like, 2D or 3D
        NumPy or CuPy chunks.
    fully_connected, flat_zones
        As for :func:`chseg.label`.
    backend : {'auto', 'cuda', 'cpu'}, optional
        Where each chunk runs: 'auto' (default) the worker's GPU when it has one, else the CPU reference.

    Returns
    -------
    dask.array.Array of uint64
        Lazy, with the input's chunks.

    Examples
    --------
    >>> import numpy as np, dask.array as da, chseg.dask
    >>> volume = da.from_array(np.array([[1, 1, 0, 1], [0, 0, 0, 1]], np.uint8), chunks=(1, 2))
    >>> chseg.dask.label(volume, backend="cpu").compute()
    array([[1, 1, 0, 2],
           [0, 0, 0, 2]], dtype=uint64)
    """
    return _chunked(array, "label", fully_connected, flat_zones, None, backend)


def alpha_cut(array: Any, alpha: float, fully_connected: bool = False, backend: str = "auto") -> Any:
    """The alpha-tree's cut at ``alpha`` of a 2D or 3D Dask array.

    The connected components of the edges of weight at most alpha (abs(a - b) between neighbours): the labels
    ``chseg.alpha_tree(volume).cut(alpha)`` gives the whole volume.

    Parameters
    ----------
    array : dask.array.Array or array_like, 2D or 3D
        uint8, int8, uint16, int16 or float32 chunks (NumPy or CuPy).
    alpha : float
        The largest edge weight inside a region.
    fully_connected : bool, optional
        As for :func:`chseg.alpha_tree`.
    backend : {'auto', 'cuda', 'cpu'}, optional
        Where each chunk runs: 'auto' (default) the worker's GPU when it has one, else the CPU reference.

    Returns
    -------
    dask.array.Array of uint64
        Lazy, with the input's chunks.

    Raises
    ------
    ValueError
        For a NaN alpha or another pixel type.
    """
    alpha = float(alpha)
    if np.isnan(alpha):
        raise ValueError("alpha must be a number, not NaN")
    return _chunked(array, "alpha", fully_connected, False, alpha, backend)


def watershed(array: Any, fully_connected: bool = False, backend: str = "auto") -> Any:
    """The watershed of a 2D or 3D Dask array, as ``chseg.watershed(volume, dtype=np.uint64)`` gives it.

    Whatever the chunking, plateaux and basins that cross any number of chunks included (one basin per regional
    minimum; non-minimal plateaux split by geodesic distance; basins numbered in raster order of their first voxel).
    The plateau distances across chunks are exchanged on the client until they settle, then basins are joined across
    chunks there; the output is lazy and recomputes each chunk (docs/python-package.md, "Dask").

    Parameters
    ----------
    array : dask.array.Array or array_like, 2D or 3D
        Scalar chunks of up to 64 bits (NumPy or CuPy); no NaN.
    fully_connected : bool, optional
        As for :func:`chseg.watershed`.
    backend : {'auto', 'cuda', 'cpu'}, optional
        Where each chunk runs: 'auto' (default) the worker's GPU when it has one, else the CPU reference.

    Returns
    -------
    dask.array.Array of uint64
        Lazy, with the input's chunks.
    """
    from ._dask_watershed import watershed as run

    return run(array, bool(fully_connected), backend)


_SL_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32, np.float64)


def _after_offsets(ndim, fully_connected):
    """The image graph's edge slots: neighbours after a pixel, in the module's order (include/chs/SingleLinkage.h)."""
    out = []
    for offset in itertools.product((-1, 0, 1), repeat=ndim):
        if offset > (0,) * ndim and (fully_connected or sum(map(abs, offset)) == 1):
            out.append(offset)
    return out


def single_linkage_tree(array: Any, fully_connected: bool = False, backend: str = "auto") -> Any:
    """The single-linkage dendrogram of a 2D or 3D Dask array's pixel graph, gathered on the client.

    Each chunk's minimum spanning tree (``chseg.single_linkage``) plus every edge across chunk faces, whose minimum
    spanning tree is the volume's (cycle property; edges ordered by (weight, image edge index) as the module orders
    them), then its dendrogram. For volumes whose minimum spanning tree fits the client (24 bytes per voxel).

    Parameters
    ----------
    array : dask.array.Array or array_like, 2D or 3D
        8-, 16-, 32-bit integers, float32 or float64 chunks.
    fully_connected : bool, optional
        As for :func:`chseg.single_linkage`.
    backend : {'auto', 'cuda', 'cpu'}, optional
        Where each chunk runs: 'auto' (default) the worker's GPU when it has one, else the CPU reference.

    Returns
    -------
    chseg.Dendrogram
        The arrays ``chseg.single_linkage`` gives the whole volume, image edge indices included.

    Raises
    ------
    ValueError
        For an empty array, another dimension or another pixel type.
    """
    dask, da = _dask()
    if not isinstance(array, da.Array):
        array = da.from_array(array)
    if array.ndim not in (2, 3) or array.size == 0:
        raise ValueError(f"the array must be a non-empty 2D or 3D array, not of shape {array.shape}")
    if array.dtype not in _SL_TYPES:
        raise ValueError(f"single linkage takes 8-, 16-, 32-bit integers, float32 or float64, not {array.dtype}")
    shape = tuple(int(s) for s in array.shape)
    starts = _starts(array.chunks)
    blocks = array.to_delayed()
    grid_index = list(np.ndindex(*blocks.shape))
    tasks = [
        dask.delayed(_tree_part)(
            blocks[k], tuple(int(starts[a][k[a]]) for a in range(len(k))), shape, fully_connected, backend
        )
        for k in grid_index
    ]
    parts = dict(zip(grid_index, dask.compute(*tasks)))
    offsets = _after_offsets(array.ndim, fully_connected)
    slot_of = {o: s for s, o in enumerate(offsets)}
    us = [parts[k]["u"] for k in grid_index]
    vs = [parts[k]["v"] for k in grid_index]
    ws = [parts[k]["w"] for k in grid_index]
    es = [parts[k]["edge"] for k in grid_index]
    for axis in range(array.ndim):
        for i in range(1, blocks.shape[axis]):
            low_index, low_values = _index_plane(parts, grid_index, axis, i - 1, "high", shape, starts)
            high_index, high_values = _index_plane(parts, grid_index, axis, i, "low", shape, starts)
            for offset in _lateral_offsets(array.ndim, axis, fully_connected):
                lateral = offset[:axis] + offset[axis + 1 :]
                src, dst = _shifted(low_index, lateral)
                p, q = low_index[src].ravel(), high_index[dst].ravel()
                w = _difference(low_values[src].ravel(), high_values[dst].ravel())
                # the edge belongs to the earlier pixel; its slot is the offset from it to the later one
                if offset in slot_of:
                    a, b, s = p, q, slot_of[offset]
                else:
                    a, b, s = q, p, slot_of[tuple(-d for d in offset)]
                us.append(a)
                vs.append(b)
                ws.append(w)
                es.append(a * len(offsets) + s)
    u, v, w, e = (np.concatenate(x) for x in (us, vs, ws, es))
    e, keep = np.unique(e, return_index=True)  # sorted by image edge index; diagonal edges seen twice kept once
    u, v, w = u[keep], v[keep], w[keep]
    n = int(np.prod(shape))
    dendrogram = chseg.single_linkage_graph(u.astype(np.uint32), v.astype(np.uint32), w, n, backend=backend)
    image_edges = e[chseg._arrays.host(dendrogram.edges).astype(np.int64)].astype(np.uint64)
    return chseg.Dendrogram(
        dendrogram._run,
        shape,
        dendrogram.parents,
        dendrogram.weights,
        dendrogram._run.array(image_edges) if dendrogram._run.on_device else image_edges,
        dendrogram.u,
        dendrogram.v,
    )


def hierarchy(
    array: Any, attribute: Optional[str] = None, fully_connected: bool = False, store: Any = None, backend: str = "auto"
) -> Any:
    """The single-linkage hierarchy (``attribute=None``) or a watershed hierarchy by attribute of a 2D or 3D
    Dask array, by slabs: its chunks along the first axis (the other axes are rechunked whole). Each slab's minimum
    spanning tree and its partial tree run on the workers (their GPU when they have one), the closures between slabs
    are tasks in two chains, one each way (chseg.slabs.hierarchy runs the same steps in turn on one machine;
    docs/python-package.md, "Slabs").

    Parameters
    ----------
    array : dask.array.Array or array_like, 2D or 3D
        8-, 16-, 32-bit integers, float32 or float64 chunks (NumPy or CuPy).
    attribute, fully_connected
        As for :func:`chseg.slabs.hierarchy`.
    store : str or os.PathLike, optional
        A directory the workers write each slab's edges to (a path they all see; a Zarr group, marked complete
        last: python/chseg/_slab_store.py); None: the edges come back to the client.
    backend : {'auto', 'cuda', 'cpu'}, optional
        Where each slab runs: 'auto' (default) the worker's GPU when it has one, else the CPU reference.

    Returns
    -------
    chseg.slabs.SlabHierarchy
        ``gather()``: the arrays of ``chseg.single_linkage`` / ``chseg.watershed_hierarchy`` of the whole volume;
        ``cut(t, out=)``: label volumes written slab by slab.

    Raises
    ------
    ValueError
        For an empty array, another dimension or pixel type, or another attribute.
    """
    from ._slab_dask import dask_hierarchy

    return dask_hierarchy(array, attribute, fully_connected, store, backend)


def node_attributes(hierarchy: Any, names=("area", "volume", "height", "dynamics"), backend: str = "auto") -> Any:
    """The attributes of every node of a hierarchy over slabs (``chseg.dask.hierarchy``'s or
    ``chseg.slabs.hierarchy``'s), computed as Dask tasks: :meth:`chseg.slabs.SlabHierarchy.node_attributes`'s second
    run over the slabs, each slab's part read and its partial tree built on a worker (their GPU when they have one),
    the closures in two chains of tasks. With a store, the workers write the attributes there (a path they all see).

    Parameters
    ----------
    hierarchy : chseg.slabs.SlabHierarchy
    names, backend
        As for :meth:`chseg.slabs.SlabHierarchy.node_attributes`.

    Returns
    -------
    chseg.slabs.SlabHierarchy
        ``hierarchy``; ``part(s)`` gives the attributes of slab s's nodes.

    Raises
    ------
    ValueError
        As :meth:`chseg.slabs.SlabHierarchy.node_attributes` does.
    """
    from ._slab_nodes import node_attributes as nodes

    return nodes(hierarchy, names, backend, dask=True)


def filter_regions(
    array: Any,
    threshold: float,
    attribute: str = "area",
    tree: str = "alpha_tree",
    fully_connected: bool = False,
    store: Any = None,
    backend: str = "auto",
) -> Any:
    """The area filter of a 2D or 3D Dask array's alpha-tree or single-linkage tree, by slabs (its chunks along the
    first axis, the other axes rechunked whole), as :func:`chseg.slabs.filter_regions` computes it in turn on one
    machine: each slab's trees, the closures' chains and each slab's output are tasks (for the alpha-tree, two runs:
    the saliencies of the first stay on the workers, or in the store, until the second takes them).

    Parameters
    ----------
    array : dask.array.Array or array_like, 2D or 3D
        8-, 16-, 32-bit integers, float32 or float64 chunks (NumPy or CuPy).
    threshold, attribute, tree, fully_connected
        As for :func:`chseg.slabs.filter_regions`.
    store, backend
        As for :func:`hierarchy`.

    Returns
    -------
    chseg.slabs.SlabHierarchy
        ``gather()``: the arrays of ``chseg.alpha_tree(volume).filter_regions(threshold)`` (or the single-linkage
        tree's); ``cut(alpha)``: the filtered alpha cut, written slab by slab.

    Raises
    ------
    ValueError
        For an empty array, another dimension or pixel type, another attribute or tree, or a threshold that is not a
        number.
    """
    from ._slab_filters import dask_filter_regions

    return dask_filter_regions(array, threshold, attribute, tree, fully_connected, store, backend)


def _block_tree(block, start, shape, fully_connected, backend):
    """A block's minimum spanning tree (chseg.single_linkage) in the volume's voxel ids and image edge indices:
    (u, v, w, edge) as NumPy arrays. The block at `start` of a volume of `shape`."""
    dendrogram = chseg.single_linkage(block, fully_connected=fully_connected, backend=backend)
    slots = len(_after_offsets(block.ndim, fully_connected))
    u = _global_index(_to_numpy(dendrogram.u).astype(np.int64), block.shape, start, shape)
    v = _global_index(_to_numpy(dendrogram.v).astype(np.int64), block.shape, start, shape)
    slot = (_to_numpy(dendrogram.edges) % slots).astype(np.int64)
    return u, v, _to_numpy(dendrogram.weights), u * slots + slot


def _tree_part(block, start, shape, fully_connected, backend):
    u, v, w, edge = _block_tree(block, start, shape, fully_connected, backend)
    return {"u": u, "v": v, "w": w, "edge": edge, "faces": _layers(block)}


def _index_plane(parts, grid_index, axis, i, side, shape, starts):
    """The face layer of the chunks with index `i` along `axis`: global raster indices and values."""
    ndim = len(shape)
    other = [a for a in range(ndim) if a != axis]
    nblocks = [len(starts[a]) - 1 for a in range(ndim)]
    rows = {tuple(k[a] for a in other): parts[k]["faces"][(axis, side)] for k in grid_index if k[axis] == i}
    values = _assemble(rows, other, nblocks)
    layer = int(starts[axis][i + 1] - 1) if side == "high" else int(starts[axis][i])
    grids = np.meshgrid(*[np.arange(shape[a]) for a in other], indexing="ij")
    coords = list(grids)
    coords.insert(axis, np.full(values.shape, layer))
    return np.ravel_multi_index(tuple(coords), shape).astype(np.int64), values


_PARTIALS = itertools.count()


def dust(
    array: Any,
    threshold: Any,
    connectivity: int = 26,
    binary_image: bool = False,
    invert: bool = False,
    return_N: bool = False,
    backend: str = "auto",
) -> Any:
    """cc3d's dust over chunks (:func:`chseg.cc3d.dust`): the components smaller than ``threshold`` set to 0.

    The components are the whole volume's (:func:`label`'s, exact for any chunking): cc3d's multilabel components
    (equal non-zero neighbours) or, with ``binary_image`` (bool arrays always), the non-zero voxels'. Their sizes are
    summed over the chunks when this function is called; the result is computed when the returned array is.

    Parameters
    ----------
    array : dask.array.Array or array_like, 2D or 3D
        NumPy or CuPy chunks.
    threshold : number or (lower, upper)
        A number: remove components of fewer voxels. A pair: remove those whose size is outside [lower, upper).
    connectivity : int, optional
        4 or 8 in 2D, 6 or 26 (default) in 3D.
    binary_image, invert, return_N
        As for :func:`chseg.cc3d.dust`.
    backend : {'auto', 'cuda', 'cpu'}, optional
        Where each chunk runs.

    Returns
    -------
    dask.array.Array
        Lazy, of the input's type and chunks (with ``return_N``, also the number of components kept).

    Examples
    --------
    >>> import numpy as np, dask.array as da, chseg.dask
    >>> image = da.from_array(np.array([[1, 1, 0, 2], [1, 0, 0, 0]], np.uint8), chunks=(1, 2))
    >>> chseg.dask.dust(image, 2, connectivity=4, backend="cpu").compute()
    array([[1, 1, 0, 0],
           [1, 0, 0, 0]], dtype=uint8)
    """
    from ._dask_cc3d import dust as run

    return run(label, array, threshold, connectivity, binary_image, invert, return_N, backend)


def statistics(array: Any, no_slice_conversion: bool = False, backend: str = "auto") -> dict:
    """cc3d's statistics of a label image over chunks (:func:`chseg.cc3d.statistics`): voxel counts, bounding boxes
    and centroids of every label value 0..N, summed over the chunks (exact: integer counts and coordinate sums).

    Parameters
    ----------
    array : dask.array.Array or array_like, 2D or 3D
        Non-negative integer labels (e.g. :func:`label`'s), NumPy or CuPy chunks.
    no_slice_conversion : bool, optional
        Bounding boxes as an array instead of tuples of slices.
    backend : {'auto', 'cuda', 'cpu'}, optional
        Where each chunk runs.

    Returns
    -------
    dict
        As :func:`chseg.cc3d.statistics` returns it for the whole volume.

    Examples
    --------
    >>> import numpy as np, dask.array as da, chseg.dask
    >>> labels = da.from_array(np.array([[0, 1, 1], [0, 0, 2]], np.uint8), chunks=(1, 2))
    >>> chseg.dask.statistics(labels, backend="cpu")["voxel_counts"]
    array([3, 2, 1], dtype=uint32)
    """
    from ._dask_cc3d import statistics as run

    return run(array, no_slice_conversion, backend)


def to_zarr(array: Any, path: Any, overwrite: bool = False, **kwargs: Any) -> None:
    """Write a Dask array to a Zarr store so that an interrupted run leaves no store that looks complete.

    The chunks are written to ``<path>.partial-<pid>-<call>``, renamed to ``path`` once every chunk is written. If
    the computation raises, the partial store is removed (tasks still running may write into it again: what they
    leave keeps its ``.partial-`` name, as does the store of a killed process).

    Parameters
    ----------
    array : dask.array.Array
        The labels of this module's functions, or any other array.
    path : str or os.PathLike
        A local or shared directory.
    overwrite : bool, optional
        Replace an existing store.
    **kwargs
        Passed to ``dask.array.to_zarr``.

    Raises
    ------
    FileExistsError
        When ``path`` exists and ``overwrite`` is False.
    """
    path = os.fspath(path)
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists (overwrite=True replaces it)")
    partial = f"{path}.partial-{os.getpid()}-{next(_PARTIALS)}"
    try:
        array.to_zarr(partial, **kwargs)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if os.path.exists(path):
        shutil.rmtree(path)
    os.rename(partial, path)
