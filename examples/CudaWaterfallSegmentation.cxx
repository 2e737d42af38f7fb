// CudaWaterfallSegmentation: the waterfall hierarchy of any ITK-readable image on the GPU, optionally of its
// gradient magnitude at a given scale. Writes one level as the output, and with --levels every level.
//
//   CudaWaterfallSegmentation [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkCudaWaterfallImageFilter.h"
#include "chsExampleCli.h"
#include "chsExampleOverlay.h"
#include "chsExampleWatershed.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "CudaWaterfallSegmentation";

const std::string kUsage =
  std::string(R"(Usage: CudaWaterfallSegmentation [options] <input> <output>

Computes the waterfall hierarchy of a 2D image or 3D volume (any format ITK reads) on the GPU: level 0 is the
watershed, and every level joins each region of the level before to its neighbours across its lowest pass, down to
one region. Writes level --level as unsigned 32-bit labels, 1..N in raster order of their first pixel (the last
level when the hierarchy has fewer).

Options:
  --level <k>             the level written to <output> (default 2)
  --levels <prefix>       also write every level k as <prefix><k>.nrrd
  --number-of-levels <n>  compute at most n levels, the watershed included (default 0: down to one region)
)") +
  chs_example::kWatershedUsage +
  R"(  --overlay <file.png>    also write the borders of the output level over the image (the middle slice of a volume)
  --backend <name>        auto (default: the GPU when there is one), cuda or cpu (the sequential reference)
  --device <id>           CUDA device (default 0)
  --xml                   print the 3D Slicer command-line module description and exit
  --help                  this text
)";

const std::string kSlicerXml = std::string(R"(<?xml version="1.0" encoding="utf-8"?>
<executable>
  <category>Segmentation.CudaHierarchicalSegmentation</category>
  <title>CUDA Waterfall</title>
  <description>The waterfall hierarchy on the GPU: the watershed, then coarser and coarser partitions, each region a union of regions of the level before. Writes one level.</description>
  <version>0.1.0</version>
  <documentation-url>https://github.com/InsightSoftwareConsortium/ITKCudaHierarchicalSegmentation</documentation-url>
  <license>Apache 2.0</license>
  <contributor>CudaHierarchicalSegmentation developers</contributor>
  <parameters>
    <label>Waterfall</label>
    <integer>
      <name>level</name>
      <longflag>--level</longflag>
      <label>Level</label>
      <description>The level written: 0 is the watershed, higher levels are coarser.</description>
      <default>2</default>
      <constraints><minimum>0</minimum><maximum>64</maximum><step>1</step></constraints>
    </integer>
)") + chs_example::kSlicerWatershedParameters +
                               R"(  </parameters>
)" + chs_example::kSlicerImageToLabelMap +
                               R"(  <parameters advanced="true">
    <label>Execution</label>
)" + chs_example::kSlicerBackendParameters +
                               R"(  </parameters>
</executable>
)";

struct Options
{
  std::string                                input, output, overlay, levels;
  unsigned                                   level = 2, numberOfLevels = 0;
  chs_example::WatershedOptions              watershed;
  itk::CudaSegmentationBackendEnums::Backend backend = itk::CudaSegmentationBackendEnums::Backend::Auto;
  int                                        device  = 0;
};

template <unsigned D>
void
Run(const Options & o)
{
  using Image  = itk::Image<float, D>;
  using Labels = itk::Image<unsigned int, D>;
  auto reader  = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  reader->Update();
  const auto relief = chs_example::Relief(reader->GetOutput(), o.watershed.sigma);
  auto       filter = itk::CudaWaterfallImageFilter<Image, Labels>::New();
  filter->SetInput(relief);
  chs_example::ApplyWatershedOptions(kProgram, o.watershed, filter.GetPointer());
  filter->SetNumberOfLevels(o.numberOfLevels);
  filter->SetBackend(o.backend);
  filter->SetDeviceId(o.device);
  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double   ms   = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const unsigned last = filter->GetNumberOfComputedLevels() - 1, level = std::min(o.level, last);
  const auto     write = [](const Labels * labels, const std::string & file)
  {
    auto writer = itk::ImageFileWriter<Labels>::New();
    writer->SetInput(labels);
    writer->SetFileName(file);
    writer->UseCompressionOn();
    writer->Update();
  };
  write(filter->GetLevel(level), o.output);
  if (!o.levels.empty())
    for (unsigned k = 0; k <= last; ++k)
      write(filter->GetLevel(k), o.levels + std::to_string(k) + ".nrrd");
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), filter->GetLevel(level), o.overlay);
  const bool cuda = filter->GetLastBackend() == itk::CudaSegmentationBackendEnums::Backend::CUDA;
  std::cout << filter->GetRegionCount(level) << " regions at level " << level << "; regions per level:";
  for (auto c : filter->GetRegionCounts())
    std::cout << ' ' << c;
  std::cout << "; " << ms << " ms (" << (cuda ? "CUDA" : "CPU reference") << ") -> " << o.output << '\n';
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
                                o.backend,
                                o.device,
                                [&](const std::string & a, const std::function<std::string()> & value)
                                {
                                  if (chs_example::ParseWatershedOption(a, value, o.watershed))
                                    return true;
                                  if (a == "--level")
                                    o.level = unsigned(std::stoul(value()));
                                  else if (a == "--levels")
                                    o.levels = value();
                                  else if (a == "--number-of-levels")
                                    o.numberOfLevels = unsigned(std::stoul(value()));
                                  else if (a == "--overlay")
                                    o.overlay = value();
                                  else
                                    return false;
                                  return true;
                                });
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
