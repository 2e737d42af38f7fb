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

const std::string kUsage =
  std::string(R"(Usage: CudaWatershedSegmentation [options] <input> <output>

Computes the watershed of a 2D image or 3D volume (any format ITK reads) on the GPU: every pixel follows its
steepest descent to a regional minimum, and the pixels that reach the same minimum form a basin. Writes the basins
as unsigned 32-bit labels, 1..N in raster order of their first pixel.

Options:
)") +
  chs_example::kWatershedUsage +
  R"(  --lines                 set the watershed-line pixels to 0 (pixels with a lower, or equal and earlier, neighbour
                          in another basin)
  --markers <labels>      flood from the non-zero labels of this image instead (ITK's watershed from markers): every
                          pixel takes the label of the marker whose flood reaches it first as the level rises
  --mask <image>          label only where this image is non-zero (the rest is 0; floods do not cross it)
  --level <h>             without --markers: flood from the minima at least h deep (smaller ones merge)
  --overlay <file.png>    also write the basin borders over the image (the middle slice of a volume)
)" +
  chs_example::kCommonUsage;

const std::string kSlicerXml = chs_example::SlicerModuleXml(
  "CUDA Watershed",
  "Watershed by steepest descent on the GPU (PRUF, APRUF, PRW): one basin per regional minimum of the image, or of "
  "its gradient magnitude at a given scale.",
  std::string(R"(  <parameters>
    <label>Watershed</label>
    <description>What is flooded and how.</description>
)") +
    chs_example::kSlicerWatershedParameters + R"(    <boolean>
      <name>lines</name>
      <longflag>--lines</longflag>
      <label>Watershed lines</label>
      <description>Set the pixels on the watershed lines to 0.</description>
      <default>false</default>
    </boolean>
    <image type="label">
      <name>markers</name>
      <longflag>--markers</longflag>
      <label>Markers</label>
      <channel>input</channel>
      <description>Optional: flood from the non-zero labels of this label map instead of from every minimum.</description>
    </image>
    <image>
      <name>mask</name>
      <longflag>--mask</longflag>
      <label>Mask</label>
      <channel>input</channel>
      <description>Optional: label only where this image is non-zero.</description>
    </image>
    <double>
      <name>level</name>
      <longflag>--level</longflag>
      <label>Level</label>
      <description>Without markers: minima shallower than this merge into deeper ones (0: every minimum).</description>
      <default>0</default>
      <constraints>
        <minimum>0</minimum>
        <maximum>100000</maximum>
        <step>1</step>
      </constraints>
    </double>
  </parameters>
)" + chs_example::SlicerImageToLabelMap("basins"));

struct Options
{
  std::string                   input, output, overlay, markers, mask;
  double                        level = 0.0;
  chs_example::WatershedOptions watershed;
  bool                          lines = false;
  chs_example::CommonOptions    common;
};

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
  chs_example::ApplyWatershedOptions(kProgram, o.watershed, filter.GetPointer());
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
  const std::vector<std::string> positional =
    chs_example::ParseArguments(argc,
                                argv,
                                kProgram,
                                kUsage.c_str(),
                                kSlicerXml,
                                o.common,
                                [&](const std::string & a, const std::function<std::string()> & value)
                                {
                                  if (chs_example::ParseWatershedOption(a, value, o.watershed))
                                    return true;
                                  if (a == "--lines")
                                    o.lines = true;
                                  else if (a == "--markers")
                                    o.markers = value();
                                  else if (a == "--mask")
                                    o.mask = value();
                                  else if (a == "--level")
                                    o.level = std::stod(value());
                                  else if (a == "--overlay")
                                    o.overlay = value();
                                  else
                                    return false;
                                  return true;
                                });
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
