// RenderLabelSurfaces: turns a 3D label volume (the waterfall of a CT-like volume, supervoxels, connected
// components: any output of the module's programs) into one surface per label with VTK, writes the surfaces as a
// .vtp file that ParaView and 3D Slicer open (points in the volume's physical space, a cell array "Label"), and
// renders them off-screen to a PNG.
//
//   RenderLabelSurfaces [--smoothing <n>] [--size <w>x<h>] [--interior] <labels> <surfaces.vtp> <picture.png>
//
// Without a screen, run it under Xvfb (xvfb-run -a RenderLabelSurfaces ...): Debian's VTK renders through X.
#include "chsSlicerModule.h" // the segment colours, so that the picture and the .seg.nrrd agree

#include "itkImage.h"
#include "itkImageFileReader.h"

#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkCellData.h>
#include <vtkDiscreteFlyingEdges3D.h>
#include <vtkErrorCode.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPNGWriter.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkPolyDataNormals.h>
#include <vtkProperty.h>
#include <vtkRenderWindow.h>
#include <vtkRenderer.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnsignedIntArray.h>
#include <vtkWindowToImageFilter.h>
#include <vtkWindowedSincPolyDataFilter.h>
#include <vtkXMLPolyDataWriter.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "RenderLabelSurfaces";

const char * kUsage = R"(Usage: RenderLabelSurfaces [options] <labels> <surfaces.vtp> <picture.png>

Makes one surface per label of a 3D label volume (0 is background), smooths it, writes the surfaces as a VTK
PolyData file in the volume's physical (LPS) coordinates with a cell array "Label", and renders them to a PNG, each
label in the colour its segment has in the programs' .seg.nrrd output.

Options:
  --smoothing <n>         windowed-sinc smoothing iterations (default 20; 0: the voxel staircase)
  --size <w>x<h>          picture size in pixels (default 800x600)
  --interior              leave out the labels that touch a face of the volume (shows the inner regions' shapes)
  --help                  this text
)";

using Labels = itk::Image<unsigned int, 3>;

/** The label volume, padded by one background voxel on every side so that every surface is closed. */
vtkSmartPointer<vtkImageData>
PaddedVolume(const Labels * labels, bool interior, std::vector<unsigned> & present)
{
  const auto size  = labels->GetLargestPossibleRegion().GetSize();
  auto       image = vtkSmartPointer<vtkImageData>::New();
  image->SetDimensions(int(size[0] + 2), int(size[1] + 2), int(size[2] + 2));
  image->SetOrigin(-1, -1, -1); // index space; points are mapped to physical space afterwards
  image->SetSpacing(1, 1, 1);
  vtkNew<vtkUnsignedIntArray> values;
  values->SetName("Label");
  values->SetNumberOfTuples(vtkIdType((size[0] + 2) * (size[1] + 2) * (size[2] + 2)));
  values->FillValue(0);
  const unsigned *  in = labels->GetBufferPointer();
  std::vector<char> seen; // 1: present, 2: touches a face
  for (size_t z = 0, i = 0; z < size[2]; ++z)
    for (size_t y = 0; y < size[1]; ++y)
      for (size_t x = 0; x < size[0]; ++x, ++i)
      {
        const unsigned l = in[i];
        if (l >= seen.size())
          seen.resize(size_t(l) + 1, 0);
        const bool face = x == 0 || y == 0 || z == 0 || x + 1 == size[0] || y + 1 == size[1] || z + 1 == size[2];
        seen[l]         = char(std::max<int>(seen[l], face ? 2 : 1));
      }
  for (size_t z = 0, i = 0; z < size[2]; ++z)
    for (size_t y = 0; y < size[1]; ++y)
      for (size_t x = 0; x < size[0]; ++x, ++i)
        values->SetValue(vtkIdType(((z + 1) * (size[1] + 2) + y + 1) * (size[0] + 2) + x + 1),
                         interior && seen[in[i]] == 2 ? 0u : in[i]);
  for (unsigned l = 1; l < seen.size(); ++l)
    if (seen[l] == 1 || (seen[l] == 2 && !interior))
      present.push_back(l);
  image->GetPointData()->SetScalars(values);
  return image;
}

} // namespace

int
main(int argc, char ** argv)
{
  unsigned                 smoothing = 20;
  bool                     interior  = false;
  int                      width = 800, height = 600;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h")
    {
      std::cout << kUsage;
      return 0;
    }
    if ((a == "--smoothing" || a == "--size") && i + 1 >= argc)
      chs_example::Fail(kProgram, a + " needs a value");
    if (a == "--interior")
      interior = true;
    else if (a == "--smoothing")
      smoothing = unsigned(std::stoul(argv[++i]));
    else if (a == "--size")
    {
      char               x = 0;
      std::istringstream s(argv[++i]);
      if (!(s >> width >> x >> height) || x != 'x' || width < 16 || height < 16)
        chs_example::Fail(kProgram, "--size takes <width>x<height>, at least 16x16");
    }
    else if (!a.empty() && a[0] == '-')
      chs_example::Fail(kProgram, "unknown option " + a);
    else
      positional.push_back(a);
  }
  if (positional.size() != 3)
    chs_example::Fail(kProgram, "expected a label volume, a .vtp file and a .png file");
  if (chs_example::ImageDimension(kProgram, positional[0]) != 3)
    chs_example::Fail(kProgram, positional[0] + " is not a 3D volume");
  try
  {
    auto reader = itk::ImageFileReader<Labels>::New();
    reader->SetFileName(positional[0]);
    reader->Update();
    const Labels *        labels = reader->GetOutput();
    std::vector<unsigned> present;
    const auto            volume = PaddedVolume(labels, interior, present);
    if (present.empty())
    {
      // Returned, not std::exit: the reader and the volume are released before the libraries' static teardown
      // (exiting with them alive crashed about one run in six).
      std::cerr << kProgram << ": " << positional[0] << " has no label other than 0" << (interior ? " inside" : "")
                << "\n(run with --help for the usage)\n";
      return 2;
    }

    // One closed surface per label value; the points carry their label.
    vtkNew<vtkDiscreteFlyingEdges3D> surfaces;
    surfaces->SetInputData(volume);
    surfaces->SetNumberOfContours(int(present.size()));
    for (size_t k = 0; k < present.size(); ++k)
      surfaces->SetValue(int(k), present[k]);
    surfaces->ComputeScalarsOn();
    surfaces->ComputeNormalsOff();
    surfaces->ComputeGradientsOff();
    vtkNew<vtkWindowedSincPolyDataFilter> smooth;
    smooth->SetInputConnection(surfaces->GetOutputPort());
    smooth->SetNumberOfIterations(smoothing);
    smooth->SetPassBand(0.05);
    smooth->NormalizeCoordinatesOn();
    smooth->BoundarySmoothingOff();
    smooth->FeatureEdgeSmoothingOff();
    smooth->NonManifoldSmoothingOn();
    if (smoothing > 0)
      smooth->Update();
    else
      surfaces->Update();
    vtkNew<vtkPolyData> mesh;
    mesh->DeepCopy(smoothing > 0 ? smooth->GetOutput() : surfaces->GetOutput());

    // Index space to the volume's physical space (origin + direction x spacing x index), as ITK and Slicer see it.
    vtkPoints * points = mesh->GetPoints();
    for (vtkIdType p = 0; p < points->GetNumberOfPoints(); ++p)
    {
      double                          q[3];
      itk::ContinuousIndex<double, 3> index;
      points->GetPoint(p, q);
      for (unsigned d = 0; d < 3; ++d)
        index[d] = q[d];
      Labels::PointType physical;
      labels->TransformContinuousIndexToPhysicalPoint(index, physical);
      points->SetPoint(p, physical[0], physical[1], physical[2]);
    }
    // The label of every triangle (all its points carry it) as cell data, and its colour for the picture.
    vtkDataArray *               pointLabels = mesh->GetPointData()->GetScalars();
    vtkNew<vtkUnsignedIntArray>  cellLabels;
    vtkNew<vtkUnsignedCharArray> colors;
    cellLabels->SetName("Label");
    colors->SetName("Colors");
    colors->SetNumberOfComponents(3);
    for (vtkIdType c = 0; c < mesh->GetNumberOfCells(); ++c)
    {
      const auto label = unsigned(pointLabels->GetTuple1(mesh->GetCell(c)->GetPointId(0)));
      cellLabels->InsertNextValue(label);
      double             rgb[3];
      std::istringstream s(chs_example::SegmentColor(label));
      s >> rgb[0] >> rgb[1] >> rgb[2];
      colors->InsertNextTuple3(255 * rgb[0], 255 * rgb[1], 255 * rgb[2]);
    }
    mesh->GetPointData()->Initialize();
    mesh->GetCellData()->AddArray(cellLabels);
    vtkNew<vtkXMLPolyDataWriter> writer;
    writer->SetInputData(mesh);
    writer->SetFileName(positional[1].c_str());
    writer->SetDataModeToBinary();
    if (!writer->Write() || writer->GetErrorCode() != vtkErrorCode::NoError) // Write() returns 1 on some failures
    {
      std::cerr << kProgram << ": cannot write " << positional[1] << '\n';
      return 1;
    }

    // Off-screen rendering: an oblique view of all the surfaces.
    mesh->GetCellData()->AddArray(colors);
    vtkNew<vtkPolyDataNormals> normals;
    normals->SetInputData(mesh);
    normals->SplittingOff();
    vtkNew<vtkPolyDataMapper> mapper;
    mapper->SetInputConnection(normals->GetOutputPort());
    mapper->SetScalarModeToUseCellFieldData();
    mapper->SelectColorArray("Colors");
    mapper->SetColorModeToDirectScalars();
    mapper->ScalarVisibilityOn();
    vtkNew<vtkActor> actor;
    actor->SetMapper(mapper);
    actor->GetProperty()->SetSpecular(0.2);
    vtkNew<vtkRenderer> renderer;
    renderer->AddActor(actor);
    renderer->SetBackground(1.0, 1.0, 1.0);
    renderer->ResetCamera();
    renderer->GetActiveCamera()->Azimuth(35);
    renderer->GetActiveCamera()->Elevation(25);
    renderer->ResetCamera();
    renderer->GetActiveCamera()->Zoom(1.15);
    vtkNew<vtkRenderWindow> window;
    window->SetOffScreenRendering(1);
    window->AddRenderer(renderer);
    window->SetSize(width, height);
    window->Render();
    vtkNew<vtkWindowToImageFilter> grab;
    grab->SetInput(window);
    grab->ReadFrontBufferOff();
    vtkNew<vtkPNGWriter> png;
    png->SetInputConnection(grab->GetOutputPort());
    png->SetFileName(positional[2].c_str());
    png->Write();
    std::cout << present.size() << " labels, " << mesh->GetNumberOfCells() << " triangles -> " << positional[1] << ", "
              << positional[2] << '\n';
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << kProgram << ": " << e.GetDescription() << '\n';
    return 1;
  }
  return 0;
}
