#!/usr/bin/env python3
"""Regions of a 3D volume as surfaces, for users of the `itk` Python package: the waterfall of the volume's gradient
magnitude (itk.CudaWaterfallImageFilter, on the GPU where there is one), the finest level with at most --regions
regions, one smoothed surface per region with VTK (`pip install vtk`, or Debian's python3-vtk9), written as a .vtp
file (the volume's physical coordinates, a cell array "Label") and rendered off-screen to a PNG. The C++ example
RenderLabelSurfaces does the same from a label volume file.

    label_surfaces.py VOLUME SURFACES.vtp PICTURE.png [--regions 40] [--sigma 1.5] [--labels LABELS.nrrd]

Without a screen, run it under Xvfb (xvfb-run -a python3 label_surfaces.py ...) where VTK renders through X.
"""

import argparse
import colorsys

import itk
import numpy as np
import scipy.ndimage as ndi
import vtk
from vtk.util import numpy_support


def waterfall_level(volume, sigma, regions):
    """The labels of the finest waterfall level with at most `regions` regions (x fastest: NumPy's [z, y, x])."""
    grey = itk.array_view_from_image(volume).astype(np.float32)
    spacing = np.array(itk.spacing(volume))[::-1]
    gradient = ndi.gaussian_gradient_magnitude(grey, sigma / spacing).astype(np.float32)
    relief = itk.image_from_array(gradient)
    relief.CopyInformation(volume)
    waterfall = itk.CudaWaterfallImageFilter[type(relief), itk.Image[itk.UL, 3]].New(Input=relief)
    waterfall.Update()
    levels = waterfall.GetNumberOfComputedLevels()
    k = next(k for k in range(levels) if waterfall.GetRegionCount(k) <= regions)
    labels = waterfall.GetLevel(k)
    labels.CopyInformation(volume)
    return labels, k, waterfall.GetRegionCount(k)


def segment_colour(label):
    """The colour of the label's segment in the modules' .seg.nrrd files (golden-angle hues)."""
    return colorsys.hsv_to_rgb((label * 137.50776405) % 360.0 / 360.0, 0.65, 0.95)


def surfaces(labels, smoothing=20):
    """One closed surface per label, in the volume's physical (LPS) coordinates, with a cell array "Label"."""
    array = itk.array_view_from_image(labels).astype(np.uint32)
    present = np.unique(array[array != 0])
    padded = np.pad(array, 1)  # a background border closes the surfaces
    image = vtk.vtkImageData()
    image.SetDimensions(padded.shape[2], padded.shape[1], padded.shape[0])
    image.SetOrigin(-1, -1, -1)  # index space, mapped to physical space below
    image.GetPointData().SetScalars(numpy_support.numpy_to_vtk(padded.ravel(), deep=True))
    contours = vtk.vtkDiscreteFlyingEdges3D()
    contours.SetInputData(image)
    contours.SetNumberOfContours(len(present))
    for i, label in enumerate(present):
        contours.SetValue(i, float(label))
    contours.ComputeScalarsOn()
    contours.ComputeNormalsOff()
    contours.ComputeGradientsOff()
    smooth = vtk.vtkWindowedSincPolyDataFilter()
    smooth.SetInputConnection(contours.GetOutputPort())
    smooth.SetNumberOfIterations(smoothing)
    smooth.SetPassBand(0.05)
    smooth.NormalizeCoordinatesOn()
    smooth.BoundarySmoothingOff()
    smooth.FeatureEdgeSmoothingOff()
    smooth.NonManifoldSmoothingOn()
    smooth.Update()
    mesh = vtk.vtkPolyData()
    mesh.DeepCopy(smooth.GetOutput())
    # index -> physical: origin + direction x spacing x index
    index = numpy_support.vtk_to_numpy(mesh.GetPoints().GetData()).astype(np.float64)
    matrix = itk.array_from_matrix(labels.GetDirection()) @ np.diag(itk.spacing(labels))
    physical = index @ matrix.T + np.array(itk.origin(labels))
    mesh.GetPoints().SetData(numpy_support.numpy_to_vtk(physical, deep=True))
    # The label of every triangle (all its points carry it) as cell data.
    point_labels = numpy_support.vtk_to_numpy(mesh.GetPointData().GetScalars())
    triangles = numpy_support.vtk_to_numpy(mesh.GetPolys().GetConnectivityArray()).reshape(-1, 3)
    cell_labels = numpy_support.numpy_to_vtk(point_labels[triangles[:, 0]].astype(np.uint32), deep=True)
    cell_labels.SetName("Label")
    mesh.GetPointData().Initialize()
    mesh.GetCellData().AddArray(cell_labels)
    return mesh


def render(mesh, picture, size=(800, 600)):
    labels = numpy_support.vtk_to_numpy(mesh.GetCellData().GetArray("Label"))
    colours = np.array([segment_colour(int(label)) for label in labels]) * 255
    colour_array = numpy_support.numpy_to_vtk(colours.astype(np.uint8), deep=True)
    colour_array.SetName("Colors")
    shown = vtk.vtkPolyData()
    shown.ShallowCopy(mesh)
    shown.GetCellData().AddArray(colour_array)
    normals = vtk.vtkPolyDataNormals()
    normals.SetInputData(shown)
    normals.SplittingOff()
    mapper = vtk.vtkPolyDataMapper()
    mapper.SetInputConnection(normals.GetOutputPort())
    mapper.SetScalarModeToUseCellFieldData()
    mapper.SelectColorArray("Colors")
    mapper.SetColorModeToDirectScalars()
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    actor.GetProperty().SetSpecular(0.2)
    renderer = vtk.vtkRenderer()
    renderer.AddActor(actor)
    renderer.SetBackground(1.0, 1.0, 1.0)
    renderer.ResetCamera()
    renderer.GetActiveCamera().Azimuth(35)
    renderer.GetActiveCamera().Elevation(25)
    renderer.ResetCamera()
    renderer.GetActiveCamera().Zoom(1.15)
    window = vtk.vtkRenderWindow()
    window.SetOffScreenRendering(1)
    window.AddRenderer(renderer)
    window.SetSize(*size)
    window.Render()
    grab = vtk.vtkWindowToImageFilter()
    grab.SetInput(window)
    grab.ReadFrontBufferOff()
    writer = vtk.vtkPNGWriter()
    writer.SetInputConnection(grab.GetOutputPort())
    writer.SetFileName(str(picture))
    writer.Write()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("volume")
    parser.add_argument("surfaces")
    parser.add_argument("picture")
    parser.add_argument("--regions", type=int, default=40, help="at most this many regions (default 40)")
    parser.add_argument("--sigma", type=float, default=1.5, help="gradient scale, physical units (default 1.5)")
    parser.add_argument("--labels", help="also write the level's labels (.nrrd)")
    args = parser.parse_args()
    volume = itk.imread(args.volume, itk.F)
    labels, level, count = waterfall_level(volume, args.sigma, args.regions)
    if args.labels:
        # pip's itk writes no unsigned long images (its ImageFileWriter is not wrapped for them): the level's few
        # labels go to the file as unsigned int.
        as_uint = itk.cast_image_filter(labels, ttype=(type(labels), itk.Image[itk.UI, labels.GetImageDimension()]))
        itk.imwrite(as_uint, args.labels, compression=True)
    mesh = surfaces(labels)
    writer = vtk.vtkXMLPolyDataWriter()
    writer.SetInputData(mesh)
    writer.SetFileName(args.surfaces)
    writer.SetDataModeToBinary()
    writer.Write()
    render(mesh, args.picture)
    print(
        f"waterfall level {level}: {count} regions, {mesh.GetNumberOfCells()} triangles -> {args.surfaces}, "
        f"{args.picture}"
    )


if __name__ == "__main__":
    main()
