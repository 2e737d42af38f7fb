// CudaWaterfallSegmentation: the waterfall hierarchy of any ITK-readable image on the GPU, optionally of its
// gradient magnitude at a given scale. Writes one level as the output, and with --levels every level as its own
// label map.
//
//   CudaWaterfallSegmentation [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkCudaWaterfallImageFilter.h"
#include "chsExampleCli.h"
#include "chsExampleOverlay.h"
#include "chsExampleWatershed.h"
#include "chsSlicerModule.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
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
  --levels <folder>       also write every level k as the label map <folder>/level-<k>.nrrd (made if missing)
  --number-of-levels <n>  compute at most n levels, the watershed included (default 0: down to one region)
)") +
  chs_example::kWatershedUsage +
  R"(  --overlay <file.png>    also write the borders of the output level over the image (the middle slice of a volume)
)" +
  chs_example::kCommonUsage;

const std::string kSlicerXml = chs_example::SlicerModuleXml(
  "CUDA Waterfall",
  "The waterfall hierarchy on the GPU: the watershed, then coarser and coarser partitions, each region a union of "
  "regions of the level before. Writes one chosen level, and optionally every level as its own label map.",
  std::string(R"(  <parameters>
    <label>Waterfall</label>
    <description>The levels and the watershed they start from.</description>
    <integer>
      <name>level</name>
      <longflag>--level</longflag>
      <label>Level</label>
      <description>The level written: 0 is the watershed, higher levels are coarser (the last level when there are fewer).</description>
      <default>2</default>
      <constraints>
        <minimum>0</minimum>
        <maximum>64</maximum>
        <step>1</step>
      </constraints>
    </integer>
    <integer>
      <name>numberOfLevels</name>
      <longflag>--number-of-levels</longflag>
      <label>Number of levels</label>
      <description>Compute at most this many levels, the watershed included; 0: down to one region.</description>
      <default>0</default>
      <constraints>
        <minimum>0</minimum>
        <maximum>64</maximum>
        <step>1</step>
      </constraints>
    </integer>
)") +
    chs_example::kSlicerWatershedParameters + R"(  </parameters>
)" + chs_example::SlicerImageToLabelMap("regions", R"(    <directory>
      <name>levelsDirectory</name>
      <longflag>--levels</longflag>
      <label>Every level</label>
      <description>Also write every level k as its own label map, level-k.nrrd, in this folder.</description>
      <channel>output</channel>
    </directory>
)"));

struct Options
{
  std::string                   input, output, overlay, levels;
  unsigned                      level = 2, numberOfLevels = 0;
  chs_example::WatershedOptions watershed;
  chs_example::CommonOptions    common;
};

template <unsigned D>
void
Run(const Options & o)
{
  using Image  = itk::Image<float, D>;
  using Labels = itk::Image<unsigned int, D>;
  chs_example::SlicerProgress progress(kProgram, "Waterfall of " + o.input);
  auto                        reader = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  progress.Watch(reader, 0.0f, 0.1f);
  reader->Update();
  const auto relief = chs_example::Relief(reader->GetOutput(), o.watershed.sigma);
  auto       filter = itk::CudaWaterfallImageFilter<Image, Labels>::New();
  filter->SetInput(relief);
  chs_example::ApplyWatershedOptions(kProgram, o.watershed, filter.GetPointer());
  filter->SetNumberOfLevels(o.numberOfLevels);
  o.common.Apply(filter.GetPointer());
  progress.Watch(filter, 0.2f, 0.8f);
  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double   ms   = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const unsigned last = filter->GetNumberOfComputedLevels() - 1, level = std::min(o.level, last);
  const auto     write = [](const Labels * labels, const std::string & file)
  {
    auto writer = itk::ImageFileWriter<Labels>::New();
    writer->SetInput(labels);
    writer->SetFileName(chs_example::Output(file));
    writer->UseCompressionOn();
    writer->Update();
  };
  if (!o.levels.empty())
  {
    std::filesystem::create_directories(o.levels);
    for (unsigned k = 0; k <= last; ++k)
    {
      write(filter->GetLevel(k), o.levels + "/level-" + std::to_string(k) + ".nrrd");
      progress.Report(0.8f + 0.1f * float(k + 1) / float(last + 1));
    }
  }
  chs_example::WriteLabelOutputs(
    filter->GetLevel(level), o.output, o.common, filter->GetRegionCount(level), "Region", progress);
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), filter->GetLevel(level), chs_example::Output(o.overlay));
  std::cout << filter->GetRegionCount(level) << " regions at level " << level << "; regions per level:";
  for (auto c : filter->GetRegionCounts())
    std::cout << ' ' << c;
  std::cout << "; " << ms << " ms (" << chs_example::RanOn(filter.GetPointer()) << ") -> " << o.output << '\n';
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
