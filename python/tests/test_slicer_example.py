"""examples/slicer_chseg.py, the 3D Slicer script, run against a stand-in for Slicer's `slicer` module (there is no
Slicer on the project's machines): it hands chseg the volume's voxels as Slicer does (a read-only view), writes the
same labels as chseg.watershed into a label map node with the volume's geometry, and makes a segmentation only below
the segment limit."""

import importlib.util
import sys
import types
from pathlib import Path

import chseg
import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "slicer_chseg.py"


class Node:
    def __init__(self, kind, name):
        self.kind, self.name, self.array, self.orientation_of, self.imported = kind, name, None, None, None

    def GetName(self):
        return self.name

    def CopyOrientation(self, other):
        self.orientation_of = other


@pytest.fixture
def slicer(monkeypatch):
    """A stand-in for the parts of `slicer` the script calls, recording what it is asked."""
    scene = types.SimpleNamespace(nodes=[])

    def add(kind, name):
        scene.nodes.append(Node(kind, name))
        return scene.nodes[-1]

    def array_from_volume(node):
        view = node.array.view()
        view.flags.writeable = False  # Slicer's array shares the node's memory; chseg must not need it writable
        return view

    def update_volume(node, array):
        node.array = np.array(array)

    def import_labelmap(label_node, segmentation):
        segmentation.imported = label_node

    pip = []
    module = types.SimpleNamespace(
        mrmlScene=types.SimpleNamespace(AddNewNodeByClass=add),
        util=types.SimpleNamespace(
            arrayFromVolume=array_from_volume, updateVolumeFromArray=update_volume, pip_install=pip.append
        ),
        modules=types.SimpleNamespace(
            segmentations=types.SimpleNamespace(
                logic=lambda: types.SimpleNamespace(ImportLabelmapToSegmentationNode=import_labelmap)
            )
        ),
        scene=scene,
        pip=pip,
    )
    monkeypatch.setitem(sys.modules, "slicer", module)
    return module


@pytest.fixture
def example():
    spec = importlib.util.spec_from_file_location("slicer_chseg", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relief(shape=(12, 20, 24), seed=5):
    rng = np.random.default_rng(seed)
    return (rng.random(shape) * 100).astype(np.int16)


def test_watershed_volume_writes_chseg_labels_with_the_volume_geometry(slicer, example):
    volume = Node("vtkMRMLScalarVolumeNode", "CT")
    volume.array = relief()
    label_node, segmentation = example.watershed_volume(volume, level=30, backend="cpu")
    expected, n = chseg.watershed(volume.array, level=30, backend="cpu", return_num=True)
    assert label_node.kind == "vtkMRMLLabelMapVolumeNode" and label_node.name == "CT basins"
    assert label_node.orientation_of is volume
    np.testing.assert_array_equal(label_node.array, expected)
    assert 1 < n <= 5000
    assert segmentation.kind == "vtkMRMLSegmentationNode" and segmentation.imported is label_node


def test_more_basins_than_the_limit_give_the_label_map_only(slicer, example):
    volume = Node("vtkMRMLScalarVolumeNode", "noise")
    volume.array = relief(seed=9)
    label_node, segmentation = example.watershed_volume(volume, max_segments=3, backend="cpu")
    assert segmentation is None
    assert label_node.array.max() > 3
    assert [n.kind for n in slicer.scene.nodes] == ["vtkMRMLLabelMapVolumeNode"]


def test_install_runs_slicers_pip(slicer, example):
    example.install("chseg.whl")
    assert slicer.pip == ["chseg.whl"]


def test_hierarchy_cut_volume_over_slabs(slicer, example):
    """The watershed hierarchy by area computed slab by slab, cut: the labels of the whole volume's hierarchy's cut."""
    volume = Node("vtkMRMLScalarVolumeNode", "CT")
    volume.array = relief(seed=11)
    label_node, segmentation = example.hierarchy_cut_volume(volume, 40, "area", slab=5, backend="cpu")
    expected = chseg.watershed_hierarchy(volume.array, "area", backend="cpu").cut(40)
    np.testing.assert_array_equal(label_node.array, expected)
    assert label_node.name == "CT area 40" and label_node.orientation_of is volume
    assert segmentation.imported is label_node and 1 < expected.max() <= 5000
