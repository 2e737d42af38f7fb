"""Checks of a label volume's surfaces (.vtp) and of their rendering (.png), shared by the tests of the C++ example
(test/cli) and of the Python example (wrapping/test). Independent of the examples: VTK's readers and NumPy."""

import os
import shutil
import subprocess

import numpy as np
import vtk
from vtk.util import numpy_support


def headless(command):
    """The command under Xvfb where there is no display (Debian's VTK renders through X)."""
    if os.environ.get("DISPLAY") or not shutil.which("xvfb-run"):
        return command
    return ["xvfb-run", "-a", "-s", "-screen 0 1024x768x24"] + command


def run_headless(command, **kwargs):
    return subprocess.run(headless(command), capture_output=True, text=True, timeout=600, **kwargs)


def check_surfaces(vtp, labels, spacing=None):
    """The .vtp holds one closed surface region per label of `labels` (a NumPy volume, 0 = background): a cell
    array "Label" whose values are exactly the labels present, each label's triangles closed (every edge shared by
    two of them). With `spacing`, each region's enclosed volume is that of its voxels, within 35% (the surface cuts
    the corners of the voxels; regions of fewer than 50 voxels are left out). Returns the labels found."""
    reader = vtk.vtkXMLPolyDataReader()
    reader.SetFileName(str(vtp))
    reader.Update()
    mesh = reader.GetOutput()
    assert mesh.GetNumberOfCells() > 0
    cell_labels = numpy_support.vtk_to_numpy(mesh.GetCellData().GetArray("Label"))
    present = np.unique(labels[labels != 0])
    found = np.unique(cell_labels)
    np.testing.assert_array_equal(found, present)
    polys = numpy_support.vtk_to_numpy(mesh.GetPolys().GetConnectivityArray()).reshape(-1, 3)
    offsets = numpy_support.vtk_to_numpy(mesh.GetPolys().GetOffsetsArray())
    assert (np.diff(offsets) == 3).all(), "triangles only"
    for label in found:
        tri = polys[cell_labels == label]
        edges = np.sort(np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]]), axis=1)
        _, uses = np.unique(edges, axis=0, return_counts=True)
        assert (uses == 2).all(), f"label {label}: the surface is not closed"
    if spacing is not None:
        voxel = float(np.prod(spacing))
        for label in found:
            count = int((labels == label).sum())
            if count < 50:
                continue
            part = vtk.vtkThreshold()
            part.SetInputData(mesh)
            part.SetInputArrayToProcess(0, 0, 0, vtk.vtkDataObject.FIELD_ASSOCIATION_CELLS, "Label")
            part.SetLowerThreshold(float(label))
            part.SetUpperThreshold(float(label))
            part.SetThresholdFunction(vtk.vtkThreshold.THRESHOLD_BETWEEN)
            surface = vtk.vtkDataSetSurfaceFilter()
            surface.SetInputConnection(part.GetOutputPort())
            mass = vtk.vtkMassProperties()
            mass.SetInputConnection(surface.GetOutputPort())
            mass.Update()
            assert abs(mass.GetVolume() - count * voxel) < 0.35 * count * voxel, (label, mass.GetVolume(), count)
    return found


def check_picture(png, size, colours_at_least):
    """The picture has the size asked for and is not blank: the surfaces cover between 3% and 97% of it, in at
    least `colours_at_least` colours."""
    reader = vtk.vtkPNGReader()
    reader.SetFileName(str(png))
    reader.Update()
    image = reader.GetOutput()
    w, h, _ = image.GetDimensions()
    assert (w, h) == size
    pixels = numpy_support.vtk_to_numpy(image.GetPointData().GetScalars())[:, :3].astype(int)
    background = (pixels == pixels[0]).all(axis=1)  # the corner's colour
    covered = 1.0 - background.mean()
    assert 0.03 < covered < 0.97, covered
    colours = len(np.unique(pixels[~background] // 16, axis=0))
    assert colours >= colours_at_least, colours
