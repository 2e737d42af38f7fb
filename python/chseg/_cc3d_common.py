"""What chseg.cc3d's modules share: cc3d's exception, the reading of arrays (NumPy, CuPy, torch) in their memory
order, cc3d's connectivities, and the call of the core's labelling."""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from . import _chseg
from ._arrays import Run, host


class DimensionError(Exception):
    """The array has a number of axes the function does not take (cc3d's exception of the same name)."""


_SUPPORTED = "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64"
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _module(a: Any):
    if hasattr(a, "__cuda_array_interface__"):
        import cupy

        return cupy
    return np


def _as_array(data: Any) -> Tuple[Any, bool]:
    """(the array, whether it came from a torch tensor: cc3d returns torch tensors for them)."""
    if hasattr(data, "cpu") and hasattr(data, "numpy") and not hasattr(data, "__cuda_array_interface__"):
        return data.cpu().numpy(), True
    if hasattr(data, "__cuda_array_interface__"):
        if hasattr(data, "cpu") and hasattr(data, "numpy"):  # a torch tensor on a device: cc3d reads it on the host
            return data.cpu().numpy(), True
        return _module(data).asarray(data), False
    return np.asarray(data), False


def _memory_order(a: Any) -> str:
    """cc3d's reading of an array: 'F' when Fortran-contiguous (1D arrays are), else 'C'."""
    return "F" if a.flags.f_contiguous else "C"


def _c_view(a: Any, order: str, xp: Any) -> Any:
    """The array as a C-contiguous array in memory order: the transpose of a Fortran-contiguous one, a C-ordered
    copy of one that is neither. Its raster order (last axis fastest) is the input's memory order."""
    if order == "F":
        return a.T
    return xp.ascontiguousarray(a)


def _unsigned_view(a: Any) -> Any:
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    if a.dtype.kind == "i":
        return a.view(_UNSIGNED[a.dtype.itemsize])
    return a


def _check_connectivity(dims: int, connectivity: int) -> None:
    if dims == 2 and connectivity not in (4, 8, 6, 18, 26):
        raise ValueError(
            "Only 4, 8, and 6, 18, 26 connectivities are supported for 2D images. Got: " + str(connectivity)
        )
    if dims != 2 and connectivity not in (6, 18, 26):
        raise ValueError("Only 6, 18, and 26 connectivities are supported for 3D images. Got: " + str(connectivity))


def _neighbourhood(connectivity: int, spatial: int) -> Tuple[bool, bool]:
    """(fully_connected, edge_connected) of a cc3d connectivity on `spatial` (2 or 3) grid axes."""
    if connectivity in (4, 6):
        return False, False
    if connectivity == 18 and spatial == 3:
        return False, True
    return True, False


def _grid_array(c: Any) -> Any:
    """A C-ordered array of 1 to 3 axes as the 2D or 3D grid the core labels (a 1D array is one row)."""
    return c.reshape(1, c.shape[0]) if c.ndim == 1 else c


def _label(
    run: Run,
    grid: Any,
    out: Any,
    *,
    mode: Any,
    connectivity: int,
    delta: float = 0.0,
    periodic: bool = False,
    statistics: bool = False,
) -> Dict[str, Any]:
    """Runs the core's labelling of `grid` (C-ordered, 2D or 3D, on the run's side) into `out`."""
    fully, edge = _neighbourhood(connectivity, grid.ndim)
    try:
        return _chseg.label(
            grid, None, out, fully, edge, mode, float(delta), bool(periodic), 0, bool(statistics), True, run.context
        )
    except ValueError as e:
        raise ValueError(f"chseg.cc3d: {e}") from None


def _to_backend(run: Run, a: Any) -> Any:
    """An array of the caller's kind on the side the backend reads (a host copy of device arrays for 'cpu')."""
    if run.on_device and not run.device_arrays:
        return host(a)
    return a
