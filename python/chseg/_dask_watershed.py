"""The watershed on Dask arrays (``chseg.dask.watershed``): exactly ``chseg.watershed`` of the whole volume, whatever
the chunking, plateaux and basins that cross any number of chunks included.

The definition (include/chs/Watershed.h) depends on the rest of the volume through two things only: a voxel's
neighbours (its lowest neighbour, a halo of one voxel) and the geodesic distance d(p) inside its plateau to where the
plateau drains, which can come from anywhere in the plateau. So:

1. Each chunk computes its voxels' distances given d on the layer of voxels around it (its halo; unknown, i.e.
   infinite, at first): a multi-source shortest-path search (SciPy's Dijkstra) inside the chunk from its descending
   voxels (d = 0) and from halo voxels of the same value (d(halo) + 1). The client gathers the chunks' face layers of
   d, gives every chunk its new halo, and runs again the chunks whose halo changed, until none does. The distances
   only decrease and are always lengths of real paths, so the fixed point is the whole volume's d.
2. With d known around it, a chunk computes every voxel's steepest-descent pointer by the definition's tie rules and
   follows the pointers inside the chunk (pointer doubling): each voxel ends in a minimal plateau of the chunk (a
   flat zone of voxels without distance) or leaves the chunk at a halo voxel. The chunk reports its minimal flat
   zones' faces, where its face voxels end, and the first voxel (global raster index) that ends in each place.
3. On the client: minimal flat zones joined across faces (equal values) are one regional minimum (union-find);
   every face voxel's end is followed from chunk to chunk (pointer doubling over the face voxels) to a regional
   minimum; each basin's first voxel is the smallest over the chunks, and basins are labelled 1, 2, ... in that order.
4. The output recomputes each chunk with its final halo (lazily, chunk by chunk) and maps every voxel's end through
   the chunk's tables: its minimal zones' labels and the labels of the halo voxels it leaves through.

Memory on the client: for every face voxel of every chunk, d (8 bytes), its value, its end (8 bytes), its minimal-zone
id (8 bytes) and its global index (8 bytes), kept for the whole run; per chunk, the labels of its minimal zones and of
the halo voxels it leaves through.
"""

from __future__ import annotations

import itertools

import numpy as np

import chseg

from ._dask_chunks import _assemble, _dask, _is_cupy, _lateral_offsets, _layers, _roots, _shifted, _starts
from ._dask_chunks import _to_numpy as _host

INF = np.int64(2**62)


def _xp(a):
    if _is_cupy(a):
        import cupy

        return cupy
    return np


def _neighbour_offsets(ndim, fully_connected):
    """Every neighbour offset, in raster order of the neighbour (lexicographic, axis 0 slowest): the order in which
    the last of equal candidates is the one of largest raster index."""
    return [
        o for o in itertools.product((-1, 0, 1), repeat=ndim) if any(o) and (fully_connected or sum(map(abs, o)) == 1)
    ]


class _Chunk:
    """A chunk padded by one voxel on every side: the halo where the volume goes on, invalid padding where it ends."""

    def __init__(self, block, start, shape, halo, fully_connected):
        xp = _xp(block)
        self.xp = xp
        if block.dtype == bool:
            block = block.view(np.uint8)
        if block.dtype.kind == "f" and bool(xp.isnan(block).any()):
            local = np.unravel_index(int(xp.argmax(xp.isnan(block).ravel())), block.shape)
            voxel = tuple(int(c) + s for c, s in zip(local, start))
            raise ValueError(f"the watershed takes no NaN: the voxel at {voxel} (axis 0 first) is NaN")
        self.core_shape = block.shape
        self.start, self.shape = start, shape
        self.ndim = block.ndim
        padded = tuple(s + 2 for s in block.shape)
        self.padded = padded
        core = tuple(slice(1, s + 1) for s in block.shape)
        self.core = core
        values = xp.zeros(padded, block.dtype)
        valid = xp.zeros(padded, bool)
        distance = xp.full(padded, INF, np.int64)
        values[core] = block
        valid[core] = True
        for (axis, side), (layer_values, layer_distance) in halo.items():
            where = self._layer(axis, side)
            values[where] = xp.asarray(layer_values)
            valid[where] = True
            distance[where] = xp.asarray(layer_distance)
        self.values, self.valid, self.distance = values, valid, distance
        self.in_core = xp.zeros(padded, bool)
        self.in_core[core] = True
        self.flat = xp.arange(int(np.prod(padded)), dtype=np.int64).reshape(padded)  # padded raster indices
        self.offsets = _neighbour_offsets(self.ndim, fully_connected)

    def _layer(self, axis, side):
        """Where a halo layer goes in the padded chunk: its lateral extent is the chunk's, one voxel wider on each
        side where the volume goes on."""
        where = []
        for a in range(self.ndim):
            if a == axis:
                where.append(0 if side == "low" else self.core_shape[a] + 1)
            else:
                first = max(0, self.start[a] - 1)
                last = min(self.shape[a], self.start[a] + self.core_shape[a] + 1)
                where.append(slice(first - (self.start[a] - 1), last - (self.start[a] - 1)))
        return tuple(where)

    def neighbour(self, array, offset):
        """array at p + offset for every core voxel p."""
        return array[tuple(slice(1 + d, s + 1 + d) for d, s in zip(offset, self.core_shape))]

    def lowest(self):
        """Index (in self.offsets) of each core voxel's lowest neighbour (-1: none) and whether the voxel descends."""
        xp = self.xp
        v = self.values[self.core]
        best = xp.full(self.core_shape, -1, np.int64)
        best_value = v.copy()
        for j, offset in enumerate(self.offsets):
            nv = self.neighbour(self.values, offset)
            take = self.neighbour(self.valid, offset) & ((best < 0) | (nv <= best_value))
            best_value = xp.where(take, nv, best_value)
            best = xp.where(take, j, best)
        return best, (best >= 0) & (best_value < v)

    def distances(self, descends):
        """d of the core voxels given the halo's d: 0 where a voxel descends, else the shortest path inside its
        plateau from a voxel that descends or from a halo voxel (d(halo) + 1); INF for minimal plateaux."""
        from scipy import sparse
        from scipy.sparse import csgraph

        xp = self.xp
        v = self.values[self.core]
        start = xp.where(descends, 0, INF)
        on_plateau = xp.zeros(self.core_shape, bool)
        pairs = []
        flat = self.flat
        for offset in self.offsets:
            equal = self.neighbour(self.valid, offset) & (self.neighbour(self.values, offset) == v)
            on_plateau |= equal
            halo = equal & ~self.neighbour(self.in_core, offset)
            start = xp.where(halo, xp.minimum(start, self.neighbour(self.distance, offset) + 1), start)
            if offset > (0,) * self.ndim:  # each pair of core voxels once
                inner = equal & self.neighbour(self.in_core, offset)
                pairs.append((flat[self.core][inner], self.neighbour(flat, offset)[inner]))
        result = start.copy()
        nodes = _host(flat[self.core][on_plateau])
        if nodes.size:
            a = _host(xp.concatenate([p for p, _ in pairs])) if pairs else np.zeros(0, np.int64)
            b = _host(xp.concatenate([q for _, q in pairs])) if pairs else np.zeros(0, np.int64)
            a, b = np.searchsorted(nodes, a), np.searchsorted(nodes, b)
            s = _host(start[on_plateau])
            finite = np.flatnonzero(s < INF)
            n = nodes.size
            rows = np.concatenate([a, b, np.full(finite.size, n)])
            cols = np.concatenate([b, a, finite])
            weights = np.concatenate([np.ones(2 * a.size), s[finite] + 1.0])  # the source's edges shifted by 1
            graph = sparse.csr_matrix((weights, (rows, cols)), shape=(n + 1, n + 1))
            reached = csgraph.dijkstra(graph, directed=True, indices=n)[:n]
            d = np.where(np.isfinite(reached), reached - 1, INF).astype(np.int64)
            result[on_plateau] = xp.asarray(d)
        self.distance[self.core] = result
        return result

    def ends(self, best, descends, d, backend):
        """Where each core voxel's steepest-descent path ends, as codes: c >= 1 for the chunk's minimal flat zone c;
        -(g + 1) for the halo voxel of global raster index g where the path leaves the chunk. Also the minimal zones'
        labels (0 elsewhere) and their count."""
        xp = self.xp
        v = self.values[self.core]
        size = int(np.prod(self.padded))
        flat = self.flat
        here = flat[self.core]
        target = here.copy()
        plateau = (d > 0) & (d < INF)
        for j, offset in enumerate(self.offsets):
            q = self.neighbour(flat, offset)
            target = xp.where(descends & (best == j), q, target)
            nearer = (
                plateau
                & self.neighbour(self.valid, offset)
                & (self.neighbour(self.values, offset) == v)
                & (self.neighbour(self.distance, offset) == d - 1)
            )
            target = xp.where(nearer, q, target)
        pointer = xp.arange(size, dtype=np.int64)
        pointer[here.ravel()] = target.ravel()
        while True:  # pointer doubling; halo voxels and minimal voxels point to themselves
            following = pointer[pointer]
            if bool((following == pointer).all()):
                break
            pointer = following
        end = pointer[here]
        minimal = d == INF
        zones = chseg.label(
            xp.ascontiguousarray(v),
            fully_connected=len(self.offsets) > 2 * self.ndim,
            flat_zones=True,
            dtype=np.uint64,
            backend=backend,
        )
        zones = xp.where(minimal, zones, 0)
        ids, compact = xp.unique(zones, return_inverse=True)
        compact = compact.reshape(self.core_shape).astype(np.int64)
        if ids.size and int(ids[0]) == 0:
            count = int(ids.size) - 1
        else:
            count = int(ids.size)
            compact += 1
        compact = xp.where(minimal, compact, 0)
        in_core = self.in_core.ravel()[end]
        padded_zone = xp.zeros(size, np.int64)
        padded_zone[here.ravel()] = compact.ravel()
        coords = xp.unravel_index(end, self.padded)
        global_end = xp.zeros(end.shape, np.int64)
        stride = 1
        for a in reversed(range(self.ndim)):
            global_end += (coords[a] + (self.start[a] - 1)) * stride
            stride *= self.shape[a]
        codes = xp.where(in_core, padded_zone[end], -(global_end + 1))
        return codes, compact, count


def _value_faces(block):
    return _layers(block.view(np.uint8) if block.dtype == bool else block)


def _solve(block, start, shape, halo, fully_connected, backend, final):
    chunk = _Chunk(block, start, shape, halo, fully_connected)
    best, descends = chunk.lowest()
    d = chunk.distances(descends)
    result = {"d": _layers(d)}
    if not final:
        return result
    codes, zones, count = chunk.ends(best, descends, d, backend)
    return result, codes, zones, count


def _pass(block, start, shape, halo, fully_connected, backend):
    """One chunk given its halo: the faces of d, and what the client needs to join basins across chunks."""
    result, codes, zones, count = _solve(block, start, shape, halo, fully_connected, backend, True)
    xp = _xp(codes)
    ends, first = xp.unique(codes.ravel(), return_index=True)
    result.update(count=count, ends=_host(ends), first=_host(first), codes=_layers(codes), zones=_layers(zones))
    return result


def _output(block, start, shape, halo, fully_connected, backend, zone_labels, exits, exit_labels):
    _, codes, _, _ = _solve(block, start, shape, halo, fully_connected, backend, True)
    xp = _xp(codes)
    zone_labels, exits, exit_labels = xp.asarray(zone_labels), xp.asarray(exits), xp.asarray(exit_labels)
    inside = codes > 0
    out = zone_labels[xp.where(inside, codes, 0)]
    if exits.size:
        leaving = xp.searchsorted(exits, xp.where(inside, 0, -codes - 1))
        out = xp.where(inside, out, exit_labels[xp.minimum(leaving, exits.size - 1)])
    return out


def watershed(array, fully_connected, backend):
    dask, da = _dask()
    if not isinstance(array, da.Array):
        array = da.from_array(array)
    if array.ndim not in (2, 3) or array.size == 0:
        raise ValueError(f"the array must be a non-empty 2D or 3D array, not of shape {array.shape}")
    if array.dtype.kind not in "buif" or array.dtype.itemsize > 8:
        raise ValueError(f"the watershed takes scalar pixels of up to 64 bits, not {array.dtype}")
    ndim = array.ndim
    shape = tuple(int(s) for s in array.shape)
    starts = _starts(array.chunks)
    blocks = array.to_delayed()
    nblocks = list(blocks.shape)
    grid = list(np.ndindex(*blocks.shape))
    start_of = {k: tuple(int(starts[a][k[a]]) for a in range(ndim)) for k in grid}
    size_of = {k: tuple(int(array.chunks[a][k[a]]) for a in range(ndim)) for k in grid}

    def planes(faces):
        """For every interior plane between chunk layers: the layer just below it and the layer just above it,
        assembled across the volume from the chunks' faces."""
        out = {}
        for axis in range(ndim):
            other = [a for a in range(ndim) if a != axis]
            for i in range(1, nblocks[axis]):
                below = {tuple(k[a] for a in other): faces[k][(axis, "high")] for k in grid if k[axis] == i - 1}
                above = {tuple(k[a] for a in other): faces[k][(axis, "low")] for k in grid if k[axis] == i}
                out[(axis, i)] = (_assemble(below, other, nblocks), _assemble(above, other, nblocks))
        return out

    def lateral(k, axis):
        return tuple(
            slice(max(0, start_of[k][a] - 1), min(shape[a], start_of[k][a] + size_of[k][a] + 1))
            for a in range(ndim)
            if a != axis
        )

    def halo_of(k, value_planes, distance_planes):
        halo = {}
        for axis in range(ndim):
            for side, i, which in (("low", k[axis], 0), ("high", k[axis] + 1, 1)):
                if 0 < i < nblocks[axis]:
                    sl = lateral(k, axis)
                    values = value_planes[(axis, i)][which][sl]
                    distance = distance_planes[(axis, i)][which][sl] if distance_planes else np.full(values.shape, INF)
                    halo[(axis, side)] = (values, distance)
        return halo

    value_planes = planes(dict(zip(grid, dask.compute(*[dask.delayed(_value_faces)(blocks[k]) for k in grid]))))
    halos = {k: halo_of(k, value_planes, None) for k in grid}
    results = {}
    pending = list(grid)
    while pending:  # step 1: distances until no chunk's halo changes (step 2 done with them each time)
        tasks = [
            dask.delayed(_pass)(blocks[k], start_of[k], shape, halos[k], fully_connected, backend) for k in pending
        ]
        results.update(zip(pending, dask.compute(*tasks)))
        distance_planes = planes({k: results[k]["d"] for k in grid})
        pending = []
        for k in grid:
            new = halo_of(k, value_planes, distance_planes)
            if any(not np.array_equal(new[s][1], halos[k][s][1]) for s in new):
                pending.append(k)
            halos[k] = new

    # step 3: regional minima across faces, ends followed across chunks, basins numbered by their first voxel
    counts = np.array([results[k]["count"] for k in grid], np.int64)
    base = np.concatenate([[0], np.cumsum(counts)])
    offset = {k: int(base[j]) for j, k in enumerate(grid)}
    total = int(base[-1])
    zone_first = np.full(total, np.iinfo(np.int64).max, np.int64)
    pairs_a, pairs_b = [], []
    for axis in range(ndim):
        other = [a for a in range(ndim) if a != axis]
        for i in range(1, nblocks[axis]):
            zones = []
            for side, layer in (("high", i - 1), ("low", i)):
                rows = {}
                for k in grid:
                    if k[axis] == layer:
                        z = results[k]["zones"][(axis, side)].astype(np.int64)
                        z[z != 0] += offset[k]
                        rows[tuple(k[a] for a in other)] = z
                zones.append(_assemble(rows, other, nblocks))
            (za, zb), (va, vb) = zones, value_planes[(axis, i)]
            for o in _lateral_offsets(ndim, axis, fully_connected):
                src, dst = _shifted(za, o[:axis] + o[axis + 1 :])
                joined = (za[src] != 0) & (zb[dst] != 0) & (va[src] == vb[dst])
                pairs_a.append(za[src][joined])
                pairs_b.append(zb[dst][joined])
    keys, ends = [], []
    for k in grid:
        for (axis, side), codes in results[k]["codes"].items():
            layer = start_of[k][axis] + (0 if side == "low" else size_of[k][axis] - 1)
            grids = np.meshgrid(
                *[np.arange(start_of[k][a], start_of[k][a] + size_of[k][a]) for a in range(ndim) if a != axis],
                indexing="ij",
            )
            coords = list(grids)
            coords.insert(axis, np.full(codes.shape, layer))
            keys.append(np.ravel_multi_index(tuple(coords), shape).ravel().astype(np.int64))
            c = codes.ravel().astype(np.int64)
            ends.append(np.where(c > 0, c + offset[k], c))
    keys, where = np.unique(np.concatenate(keys), return_index=True)
    ends = np.concatenate(ends)[where]
    following = np.arange(keys.size)
    leaving = ends < 0
    following[leaving] = np.searchsorted(keys, -ends[leaving] - 1)
    while True:
        nxt = following[following]
        if np.array_equal(nxt, following):
            break
        following = nxt
    face_zone = ends[following]  # every face voxel's regional-minimum zone (global zone id, 1-based)

    def zone_of(k, e):
        """Global zone ids (1-based) of a chunk's ends."""
        e = np.asarray(e, np.int64)
        out = np.where(e > 0, e + offset[k], 0)
        if leaving.size and (e < 0).any():
            out[e < 0] = face_zone[np.searchsorted(keys, -e[e < 0] - 1)]
        return out

    firsts = []
    for k in grid:
        first = np.unravel_index(results[k]["first"], size_of[k])
        g = np.ravel_multi_index(tuple(c + s for c, s in zip(first, start_of[k])), shape)
        zones = zone_of(k, results[k]["ends"])
        firsts.append((zones, g))
        inside = results[k]["ends"] > 0
        np.minimum.at(zone_first, zones[inside] - 1, g[inside])
    root = _roots(
        total,
        np.concatenate(pairs_a) - 1 if pairs_a else np.zeros(0, np.int64),
        np.concatenate(pairs_b) - 1 if pairs_b else np.zeros(0, np.int64),
        zone_first,
    )
    basin_first = np.full(total, np.iinfo(np.int64).max, np.int64)
    for zones, g in firsts:
        np.minimum.at(basin_first, root[zones - 1], g)
    roots = np.flatnonzero(root == np.arange(total))
    rank = np.zeros(total, np.uint64)
    rank[roots[np.argsort(basin_first[roots], kind="stable")]] = np.arange(1, roots.size + 1, dtype=np.uint64)
    label_of_zone = rank[root]

    out = np.empty(blocks.shape, dtype=object)
    meta = array._meta
    for j, k in enumerate(grid):
        zone_labels = np.concatenate([[0], label_of_zone[offset[k] : offset[k] + counts[j]]]).astype(np.uint64)
        e = results[k]["ends"]
        exits = np.sort(-e[e < 0] - 1).astype(np.int64)
        exit_labels = label_of_zone[zone_of(k, -(exits + 1)) - 1] if exits.size else np.zeros(0, np.uint64)
        task = dask.delayed(_output)(
            blocks[k], start_of[k], shape, halos[k], fully_connected, backend, zone_labels, exits, exit_labels
        )
        out[k] = da.from_delayed(
            task, shape=size_of[k], dtype=np.uint64, meta=meta.astype(np.uint64) if hasattr(meta, "astype") else None
        )
    return da.block(out.tolist())
