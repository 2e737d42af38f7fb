// CudaSeededSegmentation: interactive-style segmentation from a marker label map by the Image Foresting Transform
// (seeded watershed with exact tie breaking) on the GPU.
//
//   CudaSeededSegmentation [options] <weights> <markers> <output>    run with --help for the options
#include "itkCudaImageForestingTransformImageFilter.h"
#include "chsExampleCli.h"
#include "chsSlicerModule.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <chrono>
#include <iostream>
#include <string>
#include <unordered_set>
#include <vector>

namespace
{
const char * kProgram = "CudaSeededSegmentation";

struct Options
{
  std::string                                 weights, markers, output, cost;
  itk::CudaForestingTransformEnums::ArcWeight arc            = itk::CudaForestingTransformEnums::ArcWeight::Target;
  bool                                        fullyConnected = false;
  chs_example::CommonOptions                  common;
};

/** The options, declared once: --help, --xml and the parser come from here. */
chs_example::Module
Describe(Options & o)
{
  using ArcWeight = itk::CudaForestingTransformEnums::ArcWeight;
  chs_example::Module m(kProgram,
                        R"(Usage: CudaSeededSegmentation [options] <weights> <markers> <output>

Grows the labelled markers of <markers> (a label map of the same size: 0 = not a seed) over <weights> (for example a
gradient magnitude image: non-negative, read as float) by the Image Foresting Transform with the f_max path cost:
every pixel takes the label of the marker it reaches by the path whose largest arc weight is smallest. Ties are
broken by one documented rule, so the result is the same on the GPU and the CPU, run after run. Writes the labels
as unsigned 32-bit integers.
)",
                        "CUDA Seeded Segmentation (IFT)",
                        "Grows the labels of a marker label map over a weight image (a gradient magnitude, say) by the "
                        "Image Foresting Transform on the GPU: a seeded watershed with exact, deterministic tie "
                        "breaking.");
  m.Group("Transform", "The arc weights and the neighbourhood.");
  m.Add(chs_example::Choice("--arc-weight",
                            "<name>",
                            o.arc,
                            { { "target", ArcWeight::Target },
                              { "maximum", ArcWeight::Maximum },
                              { "difference", ArcWeight::AbsoluteDifference } },
                            "arc weight",
                            "target (default: w(p,q) = B(q)), maximum (max(B(p), B(q))) or difference (|B(p) - B(q)|)")
          .Slicer(
            "arcWeight", "Arc weight", "target: w(p,q) = B(q); maximum: max(B(p), B(q)); difference: |B(p) - B(q)|."));
  m.Add(chs_example::Switch("--fully-connected", o.fullyConnected, "8-connectivity in 2D, 26 in 3D (default: 4 / 6)")
          .Slicer("fullyConnected", "Fully connected", "26-connectivity (8 in 2D) instead of face connectivity."));
  m.Group("IO", "Inputs and outputs.");
  m.Add(chs_example::InputImage(
    0, "weightVolume", "Weight volume", "Non-negative arc weights, for example a gradient magnitude."));
  m.Add(chs_example::InputImage(1, "markerVolume", "Markers", "Label map of the seeds; 0 is not a seed.", true));
  chs_example::AddLabelOutputs(m, 2, "labels", o.common);
  m.Add(chs_example::Path("--cost", "<file>", o.cost, "also write the cost map (the optimum path cost of every pixel)")
          .Slicer("costVolume", "Cost map", "The optimum path cost of every pixel.")
          .As("image", "output"));
  m.AddExecution(o.common);
  return m;
}

template <unsigned D>
void
Run(const Options & o)
{
  using Weights = itk::Image<float, D>;
  using Labels  = itk::Image<unsigned int, D>;
  chs_example::SlicerProgress progress(kProgram, "Seeded segmentation of " + o.weights);
  auto                        weights = itk::ImageFileReader<Weights>::New();
  weights->SetFileName(o.weights);
  progress.Watch(weights, 0.0f, 0.1f);
  auto markers = itk::ImageFileReader<Labels>::New();
  markers->SetFileName(o.markers);
  auto filter = itk::CudaImageForestingTransformImageFilter<Weights, Labels>::New();
  filter->SetInput(weights->GetOutput());
  filter->SetSeedImage(markers->GetOutput());
  filter->SetArcWeight(o.arc);
  filter->SetFullyConnected(o.fullyConnected);
  o.common.Apply(filter.GetPointer());
  progress.Watch(filter, 0.2f, 0.9f);
  weights->Update();
  markers->Update();
  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!o.cost.empty())
    chs_example::WriteImage(filter->GetCostOutput(), o.cost);
  // The labels grown: the marker labels that occur.
  std::unordered_set<unsigned> grown;
  const unsigned *             labels = filter->GetOutput()->GetBufferPointer();
  unsigned                     last   = 0;
  for (size_t i = 0, n = filter->GetOutput()->GetBufferedRegion().GetNumberOfPixels(); i < n; ++i)
    if (labels[i] != 0 && labels[i] != last)
      grown.insert(last = labels[i]);
  chs_example::WriteLabelOutputs(filter->GetOutput(), o.output, o.common, grown.size(), "Label", progress);
  std::cout << filter->GetSeedCount() << " seed pixels grown, " << ms << " ms ("
            << chs_example::RanOn(filter.GetPointer()) << ") -> " << o.output << '\n';
  progress.Finish();
}

} // namespace

int
main(int argc, char ** argv)
{
  Options                        o;
  const std::vector<std::string> positional = Describe(o).Parse(argc, argv);
  if (positional.size() != 3)
    chs_example::Fail(kProgram, "expected a weight image, a marker image and an output file");
  o.weights = positional[0];
  o.markers = positional[1];
  o.output  = positional[2];
  return chs_example::ReportFailures(kProgram,
                                     [&]
                                     {
                                       chs_example::CheckPngFile(kProgram, o.markers);
                                       if (chs_example::ImageDimension(kProgram, o.weights) == 3)
                                         Run<3>(o);
                                       else
                                         Run<2>(o);
                                       return 0;
                                     });
}
