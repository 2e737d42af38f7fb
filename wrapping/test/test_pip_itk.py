"""The module beside pip's itk: every wrapped class and functional form found through `import itk`, every pixel type
pip's itk wraps for images in 2D and 3D, images from itk.imread and NumPy into the module's filters and their outputs
into itk's own filters, ITK's singletons shared with the itk package, and an itk of another release refused.

Run against pip's itk with the module's wheel installed beside it (scripts/python-test.sh). GPU cases skip without
a CUDA device.
"""

import subprocess
import sys

import itk
import numpy as np
import pytest
import scipy.ndimage as ndi
from conftest import backend, has_gpu

GPU = has_gpu()
BACKENDS = ["CPU", pytest.param("CUDA", marks=pytest.mark.skipif(not GPU, reason="no CUDA device"))]
# The scalar pixel types pip's itk wraps for images.
PIXEL_TYPES = [np.uint8, np.uint16, np.int16, np.float32, np.float64]
SHAPES = [(40, 52), (14, 18, 22)]


def test_every_wrapped_class_and_functional_form_is_found():
    names = [
        "CudaConnectedComponentImageFilter",
        "CudaWatershedImageFilter",
        "CudaWaterfallImageFilter",
        "CudaWaterpixelImageFilter",
        "CudaImageForestingTransformImageFilter",
        "CudaImageToAlphaTreeFilter",
        "AlphaTree",
        "AlphaTreeCutImageFilter",
        "AlphaTreeSaliencyImageFilter",
        "CudaImageToSingleLinkageDendrogramFilter",
        "CudaGraphToSingleLinkageDendrogramFilter",
        "Dendrogram",
        "DendrogramToLabelImageFilter",
        "CudaSegmentationBackendEnums",
        "CudaWatershedEnums",
        "CudaAlphaTreeEnums",
        "CudaSingleLinkageEnums",
        "cuda_connected_component_image_filter",
        "cuda_watershed_image_filter",
        "cuda_waterfall_image_filter",
        "cuda_waterpixel_image_filter",
        "cuda_image_to_alpha_tree_filter",
        "cuda_image_to_single_linkage_dendrogram_filter",
    ]
    missing = [n for n in names if not hasattr(itk, n)]
    assert not missing, missing


def relief(shape, seed):
    """Whole values 0..200, so every pixel type holds the same image."""
    rng = np.random.default_rng(seed)
    a = ndi.gaussian_filter(rng.standard_normal(shape), 2.0)
    return np.round((a - a.min()) / (a.max() - a.min()) * 200)


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_pixel_type_gives_the_same_result(backend_name, shape):
    """Each filter on the same whole-valued image stored as each pixel type: the same labels, tree and cut (the
    definitions depend on the values' order only), read through NumPy views of unsigned long (uint64) images."""
    values = relief(shape, seed=len(shape))
    first = None
    for dtype in PIXEL_TYPES:
        image = itk.image_from_array(values.astype(dtype))
        be = backend(backend_name)
        results = {
            "components": itk.cuda_connected_component_image_filter(image, flat_zones=True, backend=be),
            "watershed": itk.cuda_watershed_image_filter(image, backend=be),
            "waterpixels": itk.cuda_waterpixel_image_filter(image, grid_step=6, backend=be),
        }
        if dtype != np.float64:
            results["watershed level 10"] = itk.cuda_watershed_image_filter(image, level=10.0, backend=be)
        else:  # the flood from markers (a Level makes them) takes pixels of up to 32 bits, and says so
            with pytest.raises(RuntimeError, match="up to 32 bits"):
                itk.cuda_watershed_image_filter(image, level=10.0, backend=be)
        results = {k: itk.array_view_from_image(v) for k, v in results.items()}
        waterfall = itk.CudaWaterfallImageFilter.New(image, Backend=be)
        waterfall.Update()
        results["waterfall level 1"] = itk.array_from_image(waterfall.GetLevel(1))
        dendrogram = itk.CudaImageToSingleLinkageDendrogramFilter.New(image, Backend=be)
        dendrogram.Update()
        results["single-linkage parents"] = itk.array_from_vector_container(dendrogram.GetOutput().GetParents())
        if dtype != np.float64:  # the alpha-tree takes 8- and 16-bit integers and float
            alpha = itk.CudaImageToAlphaTreeFilter.New(image, Backend=be)
            alpha.Update()
            results["alpha-tree parents"] = itk.array_from_vector_container(alpha.GetOutput().GetParents())
        for name in ("components", "watershed", "waterpixels", "waterfall level 1", "watershed level 10"):
            if name not in results:
                continue
            assert results[name].dtype == np.uint64 and results[name].shape == shape, name
            assert results[name].min() >= 1, name
        if first is None:
            first = results
            continue
        for name, array in results.items():
            assert np.array_equal(array, first[name]), (dtype, name)
        assert len(results) >= 5


def test_images_pass_both_ways(tmp_path):
    """itk.imwrite/itk.imread into the module's watershed, its unsigned long labels into itk's own filters."""
    values = relief((48, 40), seed=5).astype(np.float32)
    path = str(tmp_path / "relief.nrrd")
    itk.imwrite(itk.image_from_array(values), path)
    image = itk.imread(path, itk.F)
    labels = itk.cuda_watershed_image_filter(image, level=10.0, backend=backend("CPU"))
    expected = itk.array_from_image(
        itk.cuda_watershed_image_filter(itk.image_from_array(values), level=10.0, backend=backend("CPU"))
    )
    array = itk.array_from_image(labels)
    assert np.array_equal(array, expected) and array.max() > 1
    # The itk package's own filters take the module's output: a cast (itk-core) and, where itk-segmentation is
    # installed, its relabelling by size (unsigned long labels in, as after itk.ConnectedComponentImageFilter).
    cast = itk.cast_image_filter(labels, ttype=(type(labels), itk.Image[itk.UI, 2]))
    assert np.array_equal(itk.array_from_image(cast), array.astype(np.uint32))
    assert itk.array_from_image(cast).dtype == np.uint32
    try:
        relabel = itk.RelabelComponentImageFilter[type(labels), itk.Image[itk.US, 2]].New(labels)
    except (AttributeError, ImportError):
        return
    relabel.Update()
    sizes = np.bincount(array.ravel().astype(np.int64))[1:]
    assert list(relabel.GetSizeOfObjectsInPixels()) == sorted(sizes.tolist(), reverse=True)


def test_itk_singletons_are_shared():
    """ITK's global settings are one set for the itk package and the module: the default number of threads set
    through pip's itk reaches the module's filters, and their threaders are of the itk package's default kind."""
    before = itk.MultiThreaderBase.GetGlobalDefaultNumberOfThreads()
    try:
        itk.MultiThreaderBase.SetGlobalDefaultNumberOfThreads(3)
        f = itk.CudaWatershedImageFilter.New(itk.image_from_array(np.zeros((4, 4), np.float32)))
        assert f.GetMultiThreader().GetMaximumNumberOfThreads() == 3
        assert f.GetMultiThreader().GetNameOfClass() == itk.MultiThreaderBase.New().GetNameOfClass()
    finally:
        itk.MultiThreaderBase.SetGlobalDefaultNumberOfThreads(before)


def test_another_itk_release_is_refused():
    """The module beside an itk of another release: an ImportError naming both versions, not a crash (the release
    number that itkConfig reports is changed before itk loads, as another release's itk would report its own)."""
    code = """
import itkConfig
built = itkConfig.ITK_GLOBAL_VERSION_STRING
itkConfig.ITK_GLOBAL_VERSION_STRING = "5.4.6"
import itk
try:
    itk.CudaWatershedImageFilter
except ImportError as e:
    print("refused:", built, "|", e)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    built, message = run.stdout.split("refused:", 1)[1].split("|", 1)
    assert f"built against ITK {built.strip()}" in message and "this itk is 5.4.6" in message, run.stdout
