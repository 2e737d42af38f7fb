"""Inputs and outputs of the chseg functions: NumPy arrays, CuPy arrays (and other arrays on a CUDA device that
expose ``__cuda_array_interface__``) and ``itk.Image`` objects; the backend and device of a run."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from . import _chseg  # type: ignore[attr-defined]  # the compiled extension, no stub

BACKENDS = ("auto", "cuda", "cpu")


def device_count() -> int:
    """Number of usable CUDA devices.

    Returns
    -------
    int
        0 without a driver, without a GPU, with a driver older than the CUDA runtime chseg was built with, or with
        only GPUs older than the oldest architecture chseg has code for (the cpu backend still runs, and
        ``backend="auto"`` chooses it; :func:`no_device_reason` says why).

    Examples
    --------
    >>> import chseg
    >>> chseg.device_count() >= 0
    True
    """
    return _chseg.device_count()


def no_device_reason() -> str:
    """Why no CUDA device is usable, as the CUDA runtime or chseg's check says it.

    Returns
    -------
    str
        ``""`` when :func:`device_count` is positive; else the runtime's message (no driver, a driver older than the
        runtime, no device) or which device is older than the oldest GPU architecture chseg has code for.

    Examples
    --------
    >>> import chseg
    >>> (chseg.device_count() > 0) == (chseg.no_device_reason() == "")
    True
    """
    return _chseg.no_device_reason()


_CACHED_DTYPES = {"uint8", "uint16", "uint32", "uint64", "int64", "float32", "float64"}


def host_empty(shape, dtype, pinned: bool = False) -> np.ndarray:
    """An uninitialised NumPy array whose storage comes from the module's host array cache and returns to it when the
    array is freed (include/chs/HostCache.h): a fresh allocation's pages are mapped on first write, which on the GPU
    machine ran at 1.8 GB/s, slower than the host link; cached arrays are mapped already."""
    d = np.dtype(dtype)
    if d.name not in _CACHED_DTYPES:
        return np.empty(shape, dtype=d)
    return _chseg.host_empty([int(s) for s in shape], d.name, bool(pinned))


def release_host_cache() -> None:
    """Free the host arrays that released outputs gave back to the cache.

    They are kept for the next outputs (whose pages are then mapped already), up to :func:`get_host_cache_limit`
    bytes; the environment variable CHS_HOST_CACHE_MB sets the limit, 0 keeps nothing.
    """
    _chseg.release_host_cache()


def get_host_cache_limit() -> int:
    """The bytes of released host outputs the cache keeps for the next ones.

    Returns
    -------
    int
        The limit (CHS_HOST_CACHE_MB, or :func:`set_host_cache_limit`).
    """
    return _chseg.get_host_cache_limit()


def set_host_cache_limit(nbytes: int) -> None:
    """Set the bytes of released host outputs the cache keeps (0: none; what it holds beyond is freed).

    Parameters
    ----------
    nbytes : int
        The new limit.

    Examples
    --------
    >>> import chseg
    >>> limit = chseg.get_host_cache_limit()
    >>> chseg.set_host_cache_limit(0)
    >>> chseg.get_host_cache_limit()
    0
    >>> chseg.set_host_cache_limit(limit)
    """
    _chseg.set_host_cache_limit(int(nbytes))


def _is_cuda_array(x: Any) -> bool:
    return hasattr(x, "__cuda_array_interface__")


def _is_itk_image(x: Any) -> bool:
    return type(x).__name__.startswith("itkImage") or type(x).__name__.startswith("itkVectorImage")


@dataclass
class Run:
    """Where a call runs and what kind of array it returns."""

    backend: str  # "cuda" or "cpu"
    device: int
    stream: int  # a cudaStream_t as an integer; 0: the legacy default stream
    xp: Any  # numpy or cupy: the module that allocates the outputs
    on_device: bool  # the inputs and outputs are device arrays
    itk_input: Any = None  # the itk.Image the call was given, for the outputs' geometry

    @property
    def context(self) -> Any:
        """The extension's execution context of the call: its backend, device and stream."""
        return _chseg.ExecutionContext(choice(self.backend, _chseg.Backend, "backend"), self.device, self.stream)

    @property
    def device_arrays(self) -> bool:
        """The backend reads and writes device arrays: CuPy inputs on the cuda backend."""
        return self.on_device and self.backend == "cuda"

    @property
    def backend_xp(self):
        """numpy or cupy: the kind of array the backend reads and writes."""
        return self.xp if self.device_arrays else np

    def empty(self, shape, dtype):
        """An output array for the backend: on the device for CuPy inputs; else a host array from the module's host
        array cache (pages mapped, page-locked for CUDA runs: see release_host_cache)."""
        if self.device_arrays:
            with self.xp.cuda.Device(self.device):
                return self.xp.empty(shape, dtype=dtype)
        return host_empty(shape, dtype, pinned=self.backend == "cuda")

    def array(self, host: np.ndarray):
        """A host array as an array of the caller's kind (on the call's device for CuPy)."""
        if self.on_device:
            with self.xp.cuda.Device(self.device):
                return self.xp.asarray(host)
        return host

    def output(self, result):
        """An output array as the caller expects it: CuPy, NumPy, or an itk.Image with the input's geometry."""
        if self.itk_input is None:
            return result
        import itk

        image = itk.image_from_array(np.ascontiguousarray(result))
        image.SetSpacing(self.itk_input.GetSpacing())
        image.SetOrigin(self.itk_input.GetOrigin())
        image.SetDirection(self.itk_input.GetDirection())
        return image


def resolve(backend: str, device: Optional[int], *arrays) -> Run:
    """The run's backend ('auto': CUDA when a device is there, else the CPU reference) and device (default: the device
    of the first CuPy input, else 0)."""
    if not isinstance(backend, str) or backend.lower() not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    backend = backend.lower()
    cuda_inputs = [a for a in arrays if a is not None and _is_cuda_array(a)]
    itk_inputs = [a for a in arrays if a is not None and _is_itk_image(a)]
    count = _chseg.device_count()
    if backend == "auto":
        backend = "cuda" if count > 0 else "cpu"
    if backend == "cuda" and count == 0:
        raise RuntimeError(
            "chseg: backend 'cuda' asked for, and no CUDA device is usable: " + _chseg.no_device_reason()
        )
    if cuda_inputs:
        import cupy

        if device is None:
            device = int(cupy.asarray(cuda_inputs[0]).device.id)
        with cupy.cuda.Device(device):
            stream = int(cupy.cuda.get_current_stream().ptr)
        return Run(backend, int(device), stream if backend == "cuda" else 0, cupy, True)
    device = 0 if device is None else int(device)
    if backend == "cuda" and not 0 <= device < count:
        raise ValueError(f"device {device} does not exist: {count} CUDA device(s)")
    return Run(backend, device, 0, np, False, itk_inputs[0] if itk_inputs else None)


def prepare(run: Run, x: Any, name: str, ndims=(2, 3)):
    """The array a backend reads: C-contiguous and in the machine's byte order (a copy when the input is not), of the
    run's kind; for the cpu backend a host copy of device arrays. A read-only array is read as it is, without a copy."""
    if x is None:
        return None
    if _is_itk_image(x):
        import itk

        x = itk.array_view_from_image(x)
    if _is_cuda_array(x):
        import cupy

        a = cupy.ascontiguousarray(cupy.asarray(x))
        if not run.device_arrays:
            a = cupy.asnumpy(a)
    else:
        a = np.ascontiguousarray(np.asarray(x))
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        if run.device_arrays:
            a = run.array(a)
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    if a.ndim not in ndims:
        raise ValueError(f"{name} must have {' or '.join(map(str, ndims))} axes, not {a.ndim}")
    if a.size == 0:
        raise ValueError(f"{name} is empty (shape {tuple(a.shape)})")
    return a


def to_caller(run: Run, a):
    """A backend's output as an array of the caller's kind."""
    if run.on_device and isinstance(a, np.ndarray):
        return run.array(a)
    return a


def host(a) -> np.ndarray:
    """A host (NumPy) copy or view of any array the package holds."""
    if isinstance(a, np.ndarray):
        return a
    return a.get()


def label_dtype(dtype) -> np.dtype:
    d = np.dtype(dtype)
    if d not in (np.uint8, np.uint16, np.uint32, np.uint64):
        raise ValueError(f"labels are unsigned integers of 8 to 64 bits, not {d}")
    return d


def check_connectivity(fully_connected) -> bool:
    if not isinstance(fully_connected, (bool, np.bool_)):
        raise ValueError("fully_connected must be True or False")
    return bool(fully_connected)


def check_number(value, name, minimum=-math.inf, allow_inf=False) -> float:
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf) or v < minimum:
        raise ValueError(f"{name} must be a number of at least {minimum}, not {value!r}")
    return v


def choice(value: Any, options: Any, name: str) -> Any:
    """The member of the bound enum `options` (chseg._chseg.WatershedAlgorithm, ...) that `value` names: a member, or
    its name in any case with '-' for '_' ('block-asynchronous'). The one place where strings meet the extension's
    enums; ValueError naming the argument and the accepted names otherwise."""
    if isinstance(value, options):
        return value
    names = {member.name.lower().replace("_", "-"): member for member in options}
    key = str(value).lower().replace("_", "-")
    if not isinstance(value, str) or key not in names:
        raise ValueError(f"{name} must be one of {tuple(names)}, not {value!r}")
    return names[key]


def channels_last(run: Run, a, channel_axis, name: str):
    """(array with the channels last, number of spatial axes)."""
    if channel_axis is None:
        if a.ndim not in (2, 3):
            raise ValueError(f"{name} must have 2 or 3 axes (or give channel_axis), not {a.ndim}")
        return a, a.ndim
    xp = run.backend_xp
    a = xp.ascontiguousarray(xp.moveaxis(a, channel_axis, -1))
    if a.ndim - 1 not in (2, 3):
        raise ValueError(f"{name} must have 2 or 3 spatial axes besides the channel axis")
    return a, a.ndim - 1
