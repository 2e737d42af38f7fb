"""chseg in 3D Slicer: the watershed of a volume node into a label map node and a segmentation, from Slicer's Python
console or a scripted module's logic (Slicer 5.10 to 5.12 run CPython 3.12, which chseg's abi3 wheel fits).

In Slicer's Python console:

    exec(open("/path/to/examples/slicer_chseg.py").read())
    install("/path/to/cuda_hierarchical_segmentation-0.1.0-cp312-abi3-manylinux_2_34_x86_64.whl")  # once
    labels, segmentation = watershed_volume(slicer.util.getNode("MRHead"), level=20)

`install` runs Slicer's own pip (`slicer.util.pip_install`) on the wheel; chseg then imports in every later session.
`watershed_volume` reads the node's voxels as a NumPy array (`slicer.util.arrayFromVolume`, axes k, j, i), runs
`chseg.watershed` on them (the GPU when there is one, else the CPU reference: the same labels), and writes the basins
into a new label map node with the volume's geometry (`slicer.util.updateVolumeFromArray`); with at most
`max_segments` basins it also imports them into a segmentation node, one segment per basin (Slicer slows down with
thousands of segments; the label map holds every basin either way).

    labels, segmentation = hierarchy_cut_volume(slicer.util.getNode("CT"), 500, attribute="area", slab=64)

`hierarchy_cut_volume` cuts the watershed hierarchy by area, volume or dynamics (or the single-linkage hierarchy) of a
volume
node at a threshold, computed slab by slab (`chseg.slabs.hierarchy`): one slab's tree on the device at a time, for
volumes whose whole hierarchy would not fit the GPU (137 to 466 bytes a voxel in one call).
"""

from typing import Any, Optional, Tuple

import numpy as np


def install(wheel: str) -> None:
    """Installs chseg's wheel into Slicer's Python (Slicer's pip; no compiler, no CUDA toolkit needed)."""
    import slicer

    slicer.util.pip_install(wheel)


def basins(
    voxels: np.ndarray, level: float = 0.0, fully_connected: bool = False, backend: str = "auto"
) -> Tuple[np.ndarray, int]:
    """The watershed basins of a volume's voxels (any layout Slicer hands over: a read-only or strided view is read
    as it is), labelled 1..n in raster order, and n."""
    import chseg

    labels, n = chseg.watershed(voxels, level=level, fully_connected=fully_connected, backend=backend, return_num=True)
    return labels, int(n)


def watershed_volume(
    volume_node: Any,
    level: float = 0.0,
    fully_connected: bool = False,
    backend: str = "auto",
    max_segments: int = 5000,
    name: Optional[str] = None,
) -> Tuple[Any, Any]:
    """The watershed of a scalar volume node: a new label map node with the basins (the volume's geometry), and a new
    segmentation node with one segment per basin, or None when there are more than `max_segments` basins."""
    import slicer

    labels, n = basins(slicer.util.arrayFromVolume(volume_node), level, fully_connected, backend)
    return _label_nodes(volume_node, labels, n, name or volume_node.GetName() + " basins", max_segments)


def hierarchy_cut_volume(
    volume_node: Any,
    threshold: float,
    attribute: Optional[str] = "area",
    slab: int = 64,
    fully_connected: bool = False,
    backend: str = "auto",
    max_segments: int = 5000,
    name: Optional[str] = None,
) -> Tuple[Any, Any]:
    """The regions of a volume node's watershed hierarchy by `attribute` ('area', 'volume', 'dynamics'; None: single
    linkage) cut at
    `threshold`, computed `slab` layers at a time (chseg.slabs.hierarchy), as watershed_volume writes basins."""
    import chseg.slabs
    import slicer

    voxels = slicer.util.arrayFromVolume(volume_node)
    hierarchy = chseg.slabs.hierarchy(voxels, slab, attribute, fully_connected=fully_connected, backend=backend)
    labels = hierarchy.cut(threshold, backend=backend)
    base = name or f"{volume_node.GetName()} {attribute or 'single-linkage'} {threshold:g}"
    return _label_nodes(volume_node, labels, int(labels.max()), base, max_segments)


def _label_nodes(volume_node: Any, labels: np.ndarray, n: int, base: str, max_segments: int) -> Tuple[Any, Any]:
    """A new label map node with `labels` and the volume's geometry, and a segmentation node of them (None above
    `max_segments` labels)."""
    import slicer

    label_node = slicer.mrmlScene.AddNewNodeByClass("vtkMRMLLabelMapVolumeNode", base)
    label_node.CopyOrientation(volume_node)  # origin, spacing and axis directions
    slicer.util.updateVolumeFromArray(label_node, labels)
    if n > max_segments:
        return label_node, None
    segmentation = slicer.mrmlScene.AddNewNodeByClass("vtkMRMLSegmentationNode", base + " segmentation")
    slicer.modules.segmentations.logic().ImportLabelmapToSegmentationNode(label_node, segmentation)
    return label_node, segmentation
