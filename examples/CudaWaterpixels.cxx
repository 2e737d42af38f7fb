// CudaWaterpixels: waterpixel superpixels (supervoxels in 3D) of any ITK-readable image on the GPU.
//
//   CudaWaterpixels [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkCudaWaterpixelImageFilter.h"
#include "chsExampleCli.h"
#include "chsExampleOverlay.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "CudaWaterpixels";

const char * kUsage = R"(Usage: CudaWaterpixels [options] <input> <output>

Waterpixels (Machairas et al.): compact watershed superpixels of a 2D image or supervoxels of a 3D volume (any
format ITK reads), computed on the GPU by the Image Foresting Transform of |grad I| + k E from one seed per cell of
a regular grid. Writes the labels as unsigned 32-bit integers, 1..N, one per grid cell in raster order.

Options:
  --step <s>[,<s>[,<s>]]  cell size (sigma) in pixels, one for all axes or one per axis (default 10)
  --compactness <k>       weight of the distance to the grid seeds (default: automatic, 0.04 x the input's range)
  --gradient-minimum      seed each cell at its smallest gradient instead of its centre
  --fully-connected       8-connectivity in 2D, 26 in 3D (default: 4 / 6)
  --overlay <file.png>    also write the superpixel borders over the image (the middle slice of a volume)
  --backend <name>        auto (default: the GPU when there is one), cuda or cpu (the sequential reference)
  --device <id>           CUDA device (default 0)
  --xml                   print the 3D Slicer command-line module description and exit
  --help                  this text
)";

const std::string kSlicerXml = std::string(R"(<?xml version="1.0" encoding="utf-8"?>
<executable>
  <category>Segmentation.CudaHierarchicalSegmentation</category>
  <title>CUDA Waterpixels</title>
  <description>Compact watershed superpixels (supervoxels in 3D) on the GPU: the Image Foresting Transform of the gradient plus a distance to a regular grid of seeds.</description>
  <version>0.1.0</version>
  <documentation-url>https://github.com/InsightSoftwareConsortium/ITKCudaHierarchicalSegmentation</documentation-url>
  <license>Apache 2.0</license>
  <contributor>CudaHierarchicalSegmentation developers</contributor>
  <parameters>
    <label>Waterpixels</label>
    <integer-vector>
      <name>step</name>
      <longflag>--step</longflag>
      <label>Grid step</label>
      <description>Cell size (sigma) in pixels, one value for all axes or one per axis.</description>
      <default>10</default>
    </integer-vector>
    <double>
      <name>compactness</name>
      <longflag>--compactness</longflag>
      <label>Compactness</label>
      <description>Weight k of the distance to the grid seeds; negative: automatic (0.04 x the input's range).</description>
      <default>-1</default>
    </double>
    <boolean>
      <name>gradientMinimum</name>
      <longflag>--gradient-minimum</longflag>
      <label>Seeds at gradient minima</label>
      <description>Seed each cell at its smallest gradient instead of its centre.</description>
      <default>false</default>
    </boolean>
    <boolean>
      <name>fullyConnected</name>
      <longflag>--fully-connected</longflag>
      <label>Fully connected</label>
      <description>26-connectivity (8 in 2D) instead of face connectivity.</description>
      <default>false</default>
    </boolean>
)") + chs_example::kSlicerBackendParameters + R"(  </parameters>
)" + chs_example::kSlicerImageToLabelMap + R"(</executable>
)";

struct Options
{
  std::string                                input, output, overlay;
  std::vector<itk::SizeValueType>            step{ 10 };
  double                                     compactness     = -1.0;
  bool                                       gradientMinimum = false, fullyConnected = false;
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
  auto filter = itk::CudaWaterpixelImageFilter<Image, Labels>::New();
  filter->SetInput(reader->GetOutput());
  typename Image::SizeType step;
  for (unsigned d = 0; d < D; ++d)
    step[d] = o.step[o.step.size() == 1 ? 0 : d];
  filter->SetGridStep(step);
  filter->SetCompactness(o.compactness);
  filter->SetGradientMinimumSeeds(o.gradientMinimum);
  filter->SetFullyConnected(o.fullyConnected);
  filter->SetBackend(o.backend);
  filter->SetDeviceId(o.device);
  reader->Update();
  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double ms     = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto         writer = itk::ImageFileWriter<Labels>::New();
  writer->SetInput(filter->GetOutput());
  writer->SetFileName(o.output);
  writer->UseCompressionOn();
  writer->Update();
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), filter->GetOutput(), o.overlay);
  const bool cuda = filter->GetLastBackend() == itk::CudaSegmentationBackendEnums::Backend::CUDA;
  std::cout << filter->GetNumberOfSuperpixels() << " waterpixels, compactness " << filter->GetCompactnessUsed() << ", "
            << ms << " ms (" << (cuda ? "CUDA" : "CPU reference") << ") -> " << o.output << '\n';
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
      if (a == "--step")
      {
        o.step.clear();
        std::stringstream s(value());
        for (std::string part; std::getline(s, part, ',');)
          o.step.push_back(std::stoul(part));
      }
      else if (a == "--compactness")
        o.compactness = std::stod(value());
      else if (a == "--gradient-minimum")
        o.gradientMinimum = true;
      else if (a == "--fully-connected")
        o.fullyConnected = true;
      else if (a == "--overlay")
        o.overlay = value();
      else
        return false;
      return true;
    });
  if (positional.size() != 2)
    chs_example::Fail(kProgram, "expected an input and an output file");
  o.input  = positional[0];
  o.output = positional[1];
  try
  {
    const unsigned d = chs_example::ImageDimension(kProgram, o.input);
    if (o.step.empty() || (o.step.size() != 1 && o.step.size() != d))
      chs_example::Fail(kProgram, "--step takes one value or one per axis");
    if (d == 3)
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
