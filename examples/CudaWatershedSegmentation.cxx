// CudaWatershedSegmentation: the watershed of any ITK-readable image on the GPU (PRUF, APRUF or PRW), optionally of
// its gradient magnitude at a given scale, with or without watershed lines; or flooded from markers, inside a mask,
// or from the minima deeper than a level.
//
//   CudaWatershedSegmentation [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkCudaWatershedImageFilter.h"
#include "chsExampleCli.h"
#include "chsExampleOverlay.h"
#include "chsExampleWatershed.h"
#include "chsSlicerModule.h"

#include "itkImageFileReader.h"

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "CudaWatershedSegmentation";

struct Options
{
  std::string                   input, output, overlay, markers, mask;
  double                        level = 0.0;
  chs_example::WatershedOptions watershed;
  bool                          lines = false;
  chs_example::CommonOptions    common;
};

/** The options, declared once: --help, --xml and the parser come from here. */
chs_example::Module
Describe(Options & o)
{
  chs_example::Module m(kProgram,
                        R"(Usage: CudaWatershedSegmentation [options] <input> <output>

Computes the watershed of a 2D image or 3D volume (any format ITK reads) on the GPU: every pixel follows its
steepest descent to a regional minimum, and the pixels that reach the same minimum form a basin. Writes the basins
as unsigned 32-bit labels, 1..N in raster order of their first pixel.
)",
                        "CUDA Watershed",
                        "Watershed by steepest descent on the GPU (PRUF, APRUF, PRW): one basin per regional minimum "
                        "of the image, or of its gradient magnitude at a given scale.");
  m.Group("Watershed", "What is flooded and how.");
  chs_example::AddWatershedOptions(m, o.watershed);
  m.Add(chs_example::Switch("--lines",
                            o.lines,
                            "set the watershed-line pixels to 0 (pixels with a lower, or equal and earlier, neighbour "
                            "in another basin)")
          .Slicer("lines", "Watershed lines", "Set the pixels on the watershed lines to 0."));
  m.Add(chs_example::Path("--markers",
                          "<labels>",
                          o.markers,
                          "flood from the non-zero labels of this image instead (ITK's watershed from markers): every "
                          "pixel takes the label of the marker whose flood reaches it first as the level rises")
          .Slicer("markers",
                  "Markers",
                  "Optional: flood from the non-zero labels of this label map instead of from every minimum.")
          .As("image", "input", " type=\"label\""));
  m.Add(
    chs_example::Path(
      "--mask", "<image>", o.mask, "label only where this image is non-zero (the rest is 0; floods do not cross it)")
      .Slicer("mask", "Mask", "Optional: label only where this image is non-zero.")
      .As("image", "input"));
  m.Add(chs_example::Number(
          "--level", "<h>", o.level, "without --markers: flood from the minima at least h deep (smaller ones merge)")
          .Slicer(
            "level", "Level", "Without markers: minima shallower than this merge into deeper ones (0: every minimum).")
          .Range("0", "100000", "1"));
  m.Add(chs_example::Path("--overlay",
                          "<file.png>",
                          o.overlay,
                          "also write the basin borders over the image (the middle slice of a volume)"));
  chs_example::AddImageToLabelMap(m, "basins", o.common);
  m.AddExecution(o.common);
  return m;
}

template <unsigned D>
void
Run(const Options & o)
{
  using Image  = itk::Image<float, D>;
  using Labels = itk::Image<unsigned int, D>;
  chs_example::SlicerProgress progress(kProgram, "Watershed of " + o.input);
  auto                        reader = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  progress.Watch(reader, 0.0f, 0.1f);
  reader->Update();
  const auto relief = chs_example::Relief(reader->GetOutput(), o.watershed.sigma);
  auto       filter = itk::CudaWatershedImageFilter<Image, Labels>::New();
  filter->SetInput(relief);
  chs_example::ApplyWatershedOptions(o.watershed, filter.GetPointer());
  filter->SetMarkWatershedLine(o.lines);
  filter->SetLevel(o.level);
  if (!o.markers.empty())
  {
    auto markers = itk::ImageFileReader<Labels>::New();
    markers->SetFileName(o.markers);
    markers->Update();
    filter->SetMarkerImage(markers->GetOutput()); // ITK checks that it lies on the input's grid
  }
  if (!o.mask.empty())
  {
    using Mask = itk::Image<unsigned char, D>;
    auto mask  = itk::ImageFileReader<Mask>::New();
    mask->SetFileName(o.mask);
    mask->Update();
    filter->SetMaskImage(mask->GetOutput());
  }
  o.common.Apply(filter.GetPointer());
  progress.Watch(filter, 0.2f, 0.9f);
  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  chs_example::WriteLabelOutputs(filter->GetOutput(), o.output, o.common, filter->GetObjectCount(), "Basin", progress);
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), filter->GetOutput(), chs_example::Output(o.overlay));
  std::cout << filter->GetObjectCount() << " basins in " << ms << " ms (" << chs_example::RanOn(filter.GetPointer())
            << ") -> " << o.output << '\n';
  progress.Finish();
}

} // namespace

int
main(int argc, char ** argv)
{
  Options                        o;
  const std::vector<std::string> positional = Describe(o).Parse(argc, argv);
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
