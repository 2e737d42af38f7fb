"""The two passes of chseg.slabs.hierarchy over the slabs in turn (python/chseg/_slab_hierarchy.py has the steps and
the closures' definitions; python/chseg/_slab_dask.py the same passes as Dask tasks): the anti-causal pass makes
each slab's border closure B(s) and the chain R(s), the causal pass each slab's partial tree and the chain C(s). The
closures the second pass takes are held up to _HOLD_BYTES; beyond, R(s) is written to the store and removed once
taken, B(s) made again from its slab's tree (the engine's dendrogram of the slab, at hand in the second pass). The
next slab is read on a thread meanwhile, and each slab's edges are written to the store on a thread. The second pass
starts where the first ends, with slab 0 as the first pass read it (its tree and border layers: read once)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List

import numpy as np

from . import _slab_hierarchy as _sh
from . import _slab_store as _store
from ._dask_chunks import _to_numpy
from ._slab_common import _read_ahead
from ._slab_hierarchy import (
    SlabHierarchy,
    _border_step,
    _Closure,
    _digest,
    _left_step,
    _owned,
    _right_step,
    _Spec,
)


def _ahead(spec: _Spec, volume, order, firsts=False, done=None):
    """(s, slab s's tree and border layers, the next slab's first layer) for s in `order`, the next slab's voxels
    (what spec.fetch gives) read on a thread meanwhile; with `firsts`, the next slab's first layer (the next in
    `order`; None for the last) taken from what was read of it (spec.first), else None; `done`: what spec.read gave
    for order[0] already (the slab where the first pass ended, not read again)."""
    blocks = _read_ahead(lambda s: spec.fetch(volume, s), order if done is None else order[1:])
    block = next(blocks, None) if done is None else None
    for i, s in enumerate(order):
        later = next(blocks) if i + 1 < len(order) else None  # the thread goes on to the one after
        first = spec.first(volume, order[i + 1], later) if firsts and i + 1 < len(order) else None
        yield s, done if i == 0 and done is not None else spec.read(volume, s, block), first
        block = later


def _passes(spec: _Spec, volume, h: SlabHierarchy, store):
    bounds, nslabs = spec.bounds, len(spec.bounds)
    held = 0

    def hold(closure: _Closure, name):
        """A closure the second pass takes: held while they all take at most _HOLD_BYTES, else in the store (no
        `name`: None, a border closure that the second pass makes again from its slab's tree)."""
        nonlocal held
        if store is None or held + closure.nbytes() <= _sh._HOLD_BYTES:
            held += closure.nbytes()
            return closure
        return None if name is None else _keep(closure, store, name)

    def taken(kept):
        closure = _load(kept, store)
        if isinstance(kept, str):
            _store.remove(store, kept)
        return closure

    # Anti-causal pass: B(s) and R(s) for s = last .. 1 (slab s - 1's partial tree needs R(s), C(s) needs B(s), made
    # again where it was not held); each slab's border digests.
    right: List[Any] = [None] * (nslabs + 1)
    borders: List[Any] = [None] * nslabs
    digests = {}
    after, next_first, slab0 = _Closure.empty(), None, None
    for s, (tree, first_layer, last_layer), _ in _ahead(spec, volume, list(reversed(range(nslabs)))):
        digests[s] = _digests(first_layer, last_layer)
        if s == 0:
            slab0 = (tree, first_layer, last_layer)  # the second pass starts where this one ends: slab 0 as read
        right[s + 1] = hold(after, f"right-{s + 1:06d}")
        if nslabs > 1:
            border = _border_step(spec, s, tree)  # about twice a chain's closure (two layers): not in closure_bytes
            if s + 1 < nslabs:
                borders[s] = hold(border, None)  # beyond the budget, made again: cheaper than a disk's round trip
            if s > 0:
                after = _right_step(spec, s, border, after, last_layer, next_first)
                h.closure_bytes = max(h.closure_bytes, after.nbytes())
        next_first = first_layer
    # Causal pass: C(s - 1) and R(s + 1) around slab s give its partial tree; C(s) from C(s - 1) and B(s). Each slab's
    # edges are written to the store on a thread while the next is computed (one write pending at most).
    before, prev_last = _Closure.empty(), None
    with ThreadPoolExecutor(1) as writer:
        written = None
        for s, (tree, first_layer, last_layer), next_first in _ahead(spec, volume, list(range(nslabs)), True, slab0):
            a, b = bounds[s]
            same = _digests(first_layer, last_layer)
            border = None
            if s + 1 < nslabs:
                border = taken(borders[s]) if borders[s] is not None else _border_step(spec, s, tree)
            if getattr(tree, "dendrogram", None) is not None:
                tree.dendrogram = None  # the slab's dendrogram (B(s)'s tree) freed before the partial tree
            after = taken(right[s + 1])
            owned = _owned(spec, s, tree, before, after, prev_last, first_layer, last_layer, next_first)
            if same.result() != digests[s].result():  # checked before the slab's edges are written
                raise ValueError(f"volume changed between the passes: slab {s} (layers {a}..{b - 1}) reads differently")
            if written is not None:
                written.result()
            written = writer.submit(_emit, h, s, owned, store, spec.prefix)
            if s + 1 < nslabs:
                before = _left_step(spec, s, border, before, prev_last, first_layer)
                h.closure_bytes = max(h.closure_bytes, before.nbytes())
            prev_last = last_layer
        if written is not None:
            written.result()


_HASHER: Dict[int, Any] = {}  # a thread that hashes border layers (hashlib lets go of the GIL) while the device works


def _digests(first_layer, last_layer):
    """A future of the digests of a slab's two border layers (the thread is the process's own: a forked child starts
    one of its own, its parent's not being there)."""
    pid = os.getpid()
    if pid not in _HASHER:
        _HASHER[pid] = ThreadPoolExecutor(1, thread_name_prefix="chseg-slab-digest")
    return _HASHER[pid].submit(lambda: (_digest(first_layer), _digest(last_layer)))


def _keep(closure: _Closure, store, name):
    """A closure of the first pass written to the store until the second pass takes it (weights and fields in the
    narrowest dtype that holds them; read back as float64, as the partial trees take them)."""
    u, v, w, e = closure.edges
    fields = {"field_" + k: _store._narrow(a) for k, a in closure.fields.items()}
    if closure.t is not None:
        fields["t"] = _store._narrow(closure.t)
    arrays = dict(u=u, v=v, w=_store._narrow(w), e=e, pid=closure.pid, **fields)
    _store.write(store, name, {k: _to_numpy(a) for k, a in arrays.items()})
    return name


def _load(kept, store) -> _Closure:
    if not isinstance(kept, str):
        return kept
    f = _store.read(store, kept)
    fields = {k[len("field_") :]: a.astype(np.float64) for k, a in f.items() if k.startswith("field_")}
    t = f["t"].astype(np.float64) if "t" in f else None
    return _Closure(f["u"], f["v"], f["w"].astype(np.float64), f["e"], f["pid"], fields, t)


def _emit(h: SlabHierarchy, s: int, owned, store, prefix="slab"):
    if store is None:
        h._parts.append(owned)
    else:
        _store.write(store, f"{prefix}-{s:06d}", owned)
