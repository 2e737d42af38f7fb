"""Helpers shared by the wrapping tests: the backend enumerators as SWIG names them, and whether the CUDA backend
runs here (the GPU cases skip without it)."""

import functools

import itk
import numpy as np


def backend(name):
    """itk::CudaSegmentationBackendEnums::Backend::<name>, as SWIG names it."""
    return getattr(itk.CudaSegmentationBackendEnums, "Backend_" + name)


@functools.lru_cache(maxsize=None)
def has_gpu():
    """Whether a filter runs on the CUDA backend here: a 4 x 4 connected components on it."""
    f = itk.CudaConnectedComponentImageFilter.New(itk.image_from_array(np.zeros((4, 4), np.uint8)))
    f.SetBackend(backend("CUDA"))
    try:
        f.Update()
        return True
    except RuntimeError:
        return False
