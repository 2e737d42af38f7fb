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

struct Options
{
  std::string                   input, output, overlay, levels;
  unsigned                      level = 2, numberOfLevels = 0;
  chs_example::WatershedOptions watershed;
  chs_example::CommonOptions    common;
};

/** The options, declared once: --help, --xml and the parser come from here. */
chs_example::Module
Describe(Options & o)
{
  chs_example::Module m(kProgram,
                        R"(Usage: CudaWaterfallSegmentation [options] <input> <output>

Computes the waterfall hierarchy of a 2D image or 3D volume (any format ITK reads) on the GPU: level 0 is the
watershed, and every level joins each region of the level before to its neighbours across its lowest pass, down to
one region. Writes level --level as unsigned 32-bit labels, 1..N in raster order of their first pixel (the last
level when the hierarchy has fewer).
)",
                        "CUDA Waterfall",
                        "The waterfall hierarchy on the GPU: the watershed, then coarser and coarser partitions, each "
                        "region a union of regions of the level before. Writes one chosen level, and optionally every "
                        "level as its own label map.");
  m.Group("Waterfall", "The levels and the watershed they start from.");
  m.Add(chs_example::Number("--level", "<k>", o.level, "the level written to <output> (default 2)")
          .Slicer("level",
                  "Level",
                  "The level written: 0 is the watershed, higher levels are coarser (the last level when there are "
                  "fewer).")
          .Range("0", "64", "1"));
  m.Add(chs_example::Number("--number-of-levels",
                            "<n>",
                            o.numberOfLevels,
                            "compute at most n levels, the watershed included (default 0: down to one region)")
          .Slicer("numberOfLevels",
                  "Number of levels",
                  "Compute at most this many levels, the watershed included; 0: down to one region.")
          .Range("0", "64", "1"));
  chs_example::AddWatershedOptions(m, o.watershed);
  m.Add(chs_example::Path("--overlay",
                          "<file.png>",
                          o.overlay,
                          "also write the borders of the output level over the image (the middle slice of a volume)"));
  chs_example::AddImageToLabelMap(m, "regions", o.common);
  m.Add(chs_example::Path("--levels",
                          "<folder>",
                          o.levels,
                          "also write every level k as the label map <folder>/level-<k>.nrrd (made if missing)")
          .Slicer("levelsDirectory",
                  "Every level",
                  "Also write every level k as its own label map, level-k.nrrd, in this folder.")
          .As("directory", "output"));
  m.AddExecution(o.common);
  return m;
}

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
  chs_example::ApplyWatershedOptions(o.watershed, filter.GetPointer());
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
  const std::vector<std::string> positional = Describe(o).Parse(argc, argv);
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
