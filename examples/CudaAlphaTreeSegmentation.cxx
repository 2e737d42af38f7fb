// CudaAlphaTreeSegmentation: builds the alpha-tree (quasi-flat zone hierarchy) of any ITK-readable image on the GPU
// and writes its cut at a given alpha, optionally constrained by omega (Soille's alpha-omega connectivity), with
// the mean value of every region (the simplification of Carlinet, Kaci and Blin's Fig. 1) and the saliency map.
//
//   CudaAlphaTreeSegmentation [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkAlphaTreeCutImageFilter.h"
#include "itkAlphaTreeSaliencyImageFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "chsExampleCli.h"
#include "chsExampleOverlay.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "CudaAlphaTreeSegmentation";

const char * kUsage = R"(Usage: CudaAlphaTreeSegmentation [options] <input> <output>

Builds the alpha-tree of a 2D image or 3D volume (any format ITK reads) on the GPU: the hierarchy of its
alpha-connected components, the regions whose pixels are joined by paths of neighbours that differ by at most
alpha. Writes the regions at --alpha as unsigned 32-bit labels, 1..N in raster order; with --omega, the largest
such regions whose values span at most omega (alpha-omega constrained connectivity).

Options:
  --alpha <a>             largest step inside a region (default 0: the flat zones)
  --omega <w>             largest range of values inside a region (default: none)
  --mean <file>           also write the image with every region set to its mean value
  --saliency <file>       also write the saliency map: the level at which neighbours merge, on the interpixel grid
                          (2n - 1 samples per axis)
  --fully-connected       8-connectivity in 2D, 26 in 3D (default: 4 / 6)
  --algorithm <name>      CUDA construction: auto (default), insert-all, skip-redundant or spanning-tree
  --overlay <file.png>    also write the region borders over the image (the middle slice of a volume)
  --backend <name>        auto (default: the GPU when there is one), cuda or cpu (the sequential reference)
  --device <id>           CUDA device (default 0)
  --xml                   print the 3D Slicer command-line module description and exit
  --help                  this text
)";

const std::string kSlicerXml = std::string(R"(<?xml version="1.0" encoding="utf-8"?>
<executable>
  <category>Segmentation.CudaHierarchicalSegmentation</category>
  <title>CUDA Alpha-Tree Segmentation</title>
  <description>Builds the alpha-tree (quasi-flat zone hierarchy) on the GPU and writes its alpha or alpha-omega cut, the mean-value simplification and the saliency map.</description>
  <version>0.1.0</version>
  <documentation-url>https://github.com/InsightSoftwareConsortium/ITKCudaHierarchicalSegmentation</documentation-url>
  <license>Apache 2.0</license>
  <contributor>CudaHierarchicalSegmentation developers</contributor>
  <parameters>
    <label>Cut</label>
    <double>
      <name>alpha</name>
      <longflag>--alpha</longflag>
      <label>Alpha</label>
      <description>Largest difference between neighbours inside a region.</description>
      <default>0</default>
    </double>
    <double>
      <name>omega</name>
      <longflag>--omega</longflag>
      <label>Omega</label>
      <description>Largest range of values inside a region (negative: no constraint).</description>
      <default>-1</default>
    </double>
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
      <name>inputVolume</name>
      <label>Input volume</label>
      <channel>input</channel>
      <index>0</index>
    </image>
    <image type="label">
      <name>outputVolume</name>
      <label>Output label map</label>
      <channel>output</channel>
      <index>1</index>
    </image>
    <image>
      <name>meanVolume</name>
      <longflag>--mean</longflag>
      <label>Simplified volume</label>
      <description>Every region set to its mean value.</description>
      <channel>output</channel>
    </image>
  </parameters>
</executable>
)";

struct Options
{
  std::string                                input, output, overlay, mean, saliency;
  double                                     alpha = 0.0, omega = std::numeric_limits<double>::infinity();
  bool                                       fullyConnected = false;
  std::string                                algorithm      = "auto";
  itk::CudaSegmentationBackendEnums::Backend backend        = itk::CudaSegmentationBackendEnums::Backend::Auto;
  int                                        device         = 0;
};

template <unsigned D>
void
Run(const Options & o)
{
  using Image     = itk::Image<float, D>;
  using Labels    = itk::Image<unsigned int, D>;
  using Algorithm = itk::CudaAlphaTreeEnums::Algorithm;
  auto reader     = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  auto tree = itk::CudaImageToAlphaTreeFilter<Image>::New();
  tree->SetInput(reader->GetOutput());
  tree->SetFullyConnected(o.fullyConnected);
  tree->SetBackend(o.backend);
  tree->SetDeviceId(o.device);
  if (o.algorithm == "auto")
    tree->SetAlgorithm(Algorithm::Auto);
  else if (o.algorithm == "insert-all")
    tree->SetAlgorithm(Algorithm::InsertAllEdges);
  else if (o.algorithm == "skip-redundant")
    tree->SetAlgorithm(Algorithm::SkipRedundantEdges);
  else if (o.algorithm == "spanning-tree")
    tree->SetAlgorithm(Algorithm::SpanningTree);
  else
    chs_example::Fail(kProgram, "unknown algorithm '" + o.algorithm + "'");
  tree->SetComputeValueRanges(!std::isinf(o.omega));
  auto cut = itk::AlphaTreeCutImageFilter<Labels>::New();
  cut->SetInput(tree->GetOutput());
  cut->SetAlpha(o.alpha);
  cut->SetOmega(o.omega);
  reader->Update();
  const auto start = std::chrono::steady_clock::now();
  tree->Update();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  cut->Update();
  auto writer = itk::ImageFileWriter<Labels>::New();
  writer->SetInput(cut->GetOutput());
  writer->SetFileName(o.output);
  writer->UseCompressionOn();
  writer->Update();
  if (!o.mean.empty())
  {
    // Every region set to its mean value.
    const Image *       image  = reader->GetOutput();
    const unsigned *    labels = cut->GetOutput()->GetBufferPointer();
    const size_t        n      = image->GetLargestPossibleRegion().GetNumberOfPixels();
    std::vector<double> sum(cut->GetObjectCount() + 1, 0.0), count(cut->GetObjectCount() + 1, 0.0);
    for (size_t i = 0; i < n; ++i)
    {
      sum[labels[i]] += image->GetBufferPointer()[i];
      count[labels[i]] += 1;
    }
    auto mean = Image::New();
    mean->CopyInformation(image);
    mean->SetRegions(image->GetLargestPossibleRegion());
    mean->Allocate();
    for (size_t i = 0; i < n; ++i)
      mean->GetBufferPointer()[i] = float(sum[labels[i]] / count[labels[i]]);
    auto w = itk::ImageFileWriter<Image>::New();
    w->SetInput(mean);
    w->SetFileName(o.mean);
    w->Update();
  }
  if (!o.saliency.empty())
  {
    auto saliency = itk::AlphaTreeSaliencyImageFilter<Image>::New();
    saliency->SetInput(tree->GetOutput());
    auto w = itk::ImageFileWriter<Image>::New();
    w->SetInput(saliency->GetOutput());
    w->SetFileName(o.saliency);
    w->Update();
  }
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), cut->GetOutput(), o.overlay);
  const bool cuda = tree->GetLastBackend() == itk::CudaSegmentationBackendEnums::Backend::CUDA;
  std::cout << cut->GetObjectCount() << " regions; alpha-tree of " << tree->GetOutput()->GetNumberOfLeaves()
            << " pixels, " << tree->GetOutput()->GetNumberOfNodes() << " nodes in " << ms << " ms ("
            << (cuda ? "CUDA" : "CPU reference") << ") -> " << o.output << '\n';
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
      if (a == "--alpha")
        o.alpha = std::stod(value());
      else if (a == "--omega")
      {
        o.omega = std::stod(value());
        if (o.omega < 0)
          o.omega = std::numeric_limits<double>::infinity(); // Slicer's "no constraint"
      }
      else if (a == "--mean")
        o.mean = value();
      else if (a == "--saliency")
        o.saliency = value();
      else if (a == "--algorithm")
        o.algorithm = value();
      else if (a == "--fully-connected")
        o.fullyConnected = true;
      else if (a == "--overlay")
        o.overlay = value();
      else
        return false;
      return true;
    });
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
