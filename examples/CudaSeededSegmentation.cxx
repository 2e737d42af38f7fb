// CudaSeededSegmentation: interactive-style segmentation from a marker label map by the Image Foresting Transform
// (seeded watershed with exact tie breaking) on the GPU.
//
//   CudaSeededSegmentation [options] <weights> <markers> <output>    run with --help for the options
#include "itkCudaImageForestingTransformImageFilter.h"
#include "chsExampleCli.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "CudaSeededSegmentation";

const char * kUsage = R"(Usage: CudaSeededSegmentation [options] <weights> <markers> <output>

Grows the labelled markers of <markers> (a label map of the same size: 0 = not a seed) over <weights> (for example a
gradient magnitude image: non-negative, read as float) by the Image Foresting Transform with the f_max path cost:
every pixel takes the label of the marker it reaches by the path whose largest arc weight is smallest. Ties are
broken by one documented rule, so the result is the same on the GPU and the CPU, run after run. Writes the labels
as unsigned 32-bit integers.

Options:
  --arc-weight <name>     target (default: w(p,q) = B(q)), maximum (max(B(p), B(q))) or difference (|B(p) - B(q)|)
  --fully-connected       8-connectivity in 2D, 26 in 3D (default: 4 / 6)
  --cost <file>           also write the cost map (the optimum path cost of every pixel)
  --backend <name>        auto (default: the GPU when there is one), cuda or cpu (the sequential reference)
  --device <id>           CUDA device (default 0)
  --xml                   print the 3D Slicer command-line module description and exit
  --help                  this text
)";

const std::string kSlicerXml = std::string(R"(<?xml version="1.0" encoding="utf-8"?>
<executable>
  <category>Segmentation.CudaHierarchicalSegmentation</category>
  <title>CUDA Seeded Segmentation (IFT)</title>
  <description>Grows the labels of a marker label map over a weight image (a gradient magnitude, say) by the Image Foresting Transform on the GPU: a seeded watershed with exact, deterministic tie breaking.</description>
  <version>0.1.0</version>
  <documentation-url>https://github.com/InsightSoftwareConsortium/ITKCudaHierarchicalSegmentation</documentation-url>
  <license>Apache 2.0</license>
  <contributor>CudaHierarchicalSegmentation developers</contributor>
  <parameters>
    <label>Transform</label>
    <string-enumeration>
      <name>arcWeight</name>
      <longflag>--arc-weight</longflag>
      <label>Arc weight</label>
      <description>target: w(p,q) = B(q); maximum: max(B(p), B(q)); difference: |B(p) - B(q)|.</description>
      <default>target</default>
      <element>target</element>
      <element>maximum</element>
      <element>difference</element>
    </string-enumeration>
    <boolean>
      <name>fullyConnected</name>
      <longflag>--fully-connected</longflag>
      <label>Fully connected</label>
      <description>26-connectivity (8 in 2D) instead of face connectivity.</description>
      <default>false</default>
    </boolean>
)") + chs_example::kSlicerBackendParameters + R"(  </parameters>
  <parameters>
    <label>IO</label>
    <image>
      <name>weightVolume</name>
      <label>Weight volume</label>
      <description>Non-negative arc weights, for example a gradient magnitude.</description>
      <channel>input</channel>
      <index>0</index>
    </image>
    <image type="label">
      <name>markerVolume</name>
      <label>Markers</label>
      <description>Label map of the seeds; 0 is not a seed.</description>
      <channel>input</channel>
      <index>1</index>
    </image>
    <image type="label">
      <name>outputVolume</name>
      <label>Output label map</label>
      <channel>output</channel>
      <index>2</index>
    </image>
    <image>
      <name>costVolume</name>
      <longflag>--cost</longflag>
      <label>Cost map</label>
      <description>The optimum path cost of every pixel.</description>
      <channel>output</channel>
    </image>
  </parameters>
</executable>
)";

struct Options
{
  std::string                                 weights, markers, output, cost;
  itk::CudaForestingTransformEnums::ArcWeight arc            = itk::CudaForestingTransformEnums::ArcWeight::Target;
  bool                                        fullyConnected = false;
  itk::CudaSegmentationBackendEnums::Backend  backend        = itk::CudaSegmentationBackendEnums::Backend::Auto;
  int                                         device         = 0;
};

template <typename TImage>
void
Write(const TImage * image, const std::string & file)
{
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(file);
  writer->UseCompressionOn();
  writer->Update();
}

template <unsigned D>
void
Run(const Options & o)
{
  using Weights = itk::Image<float, D>;
  using Labels  = itk::Image<unsigned int, D>;
  auto weights  = itk::ImageFileReader<Weights>::New();
  weights->SetFileName(o.weights);
  auto markers = itk::ImageFileReader<Labels>::New();
  markers->SetFileName(o.markers);
  auto filter = itk::CudaImageForestingTransformImageFilter<Weights, Labels>::New();
  filter->SetInput(weights->GetOutput());
  filter->SetSeedImage(markers->GetOutput());
  filter->SetArcWeight(o.arc);
  filter->SetFullyConnected(o.fullyConnected);
  filter->SetBackend(o.backend);
  filter->SetDeviceId(o.device);
  weights->Update();
  markers->Update();
  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  Write(filter->GetOutput(), o.output);
  if (!o.cost.empty())
    Write(filter->GetCostOutput(), o.cost);
  const bool cuda = filter->GetLastBackend() == itk::CudaSegmentationBackendEnums::Backend::CUDA;
  std::cout << filter->GetSeedCount() << " seed pixels grown, " << ms << " ms (" << (cuda ? "CUDA" : "CPU reference")
            << ") -> " << o.output << '\n';
}

} // namespace

int
main(int argc, char ** argv)
{
  Options                        o;
  const std::vector<std::string> positional = chs_example::ParseArguments(
    argc,
    argv,
    kProgram,
    kUsage,
    kSlicerXml,
    o.backend,
    o.device,
    [&](const std::string & a, const std::function<std::string()> & value)
    {
      if (a == "--arc-weight")
      {
        const std::string w = value();
        if (w == "target")
          o.arc = itk::CudaForestingTransformEnums::ArcWeight::Target;
        else if (w == "maximum")
          o.arc = itk::CudaForestingTransformEnums::ArcWeight::Maximum;
        else if (w == "difference")
          o.arc = itk::CudaForestingTransformEnums::ArcWeight::AbsoluteDifference;
        else
          chs_example::Fail(kProgram, "unknown arc weight '" + w + "' (target, maximum or difference)");
      }
      else if (a == "--fully-connected")
        o.fullyConnected = true;
      else if (a == "--cost")
        o.cost = value();
      else
        return false;
      return true;
    });
  if (positional.size() != 3)
    chs_example::Fail(kProgram, "expected a weight image, a marker image and an output file");
  o.weights = positional[0];
  o.markers = positional[1];
  o.output  = positional[2];
  try
  {
    if (chs_example::ImageDimension(kProgram, o.weights) == 3)
      Run<3>(o);
    else
      Run<2>(o);
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << kProgram << ": " << e.GetDescription() << '\n';
    return 1;
  }
  return 0;
}
