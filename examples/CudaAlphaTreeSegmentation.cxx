// CudaAlphaTreeSegmentation: builds the alpha-tree (quasi-flat zone hierarchy) of any ITK-readable image on the GPU
// and writes its cut at a given alpha, optionally constrained by omega (Soille's alpha-omega connectivity), with
// the mean value of every region (the simplification of Carlinet, Kaci and Blin's Fig. 1) and the saliency map.
//
//   CudaAlphaTreeSegmentation [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkAlphaTreeCutImageFilter.h"
#include "itkAlphaTreeSaliencyImageFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "chsExampleCli.h"
#include "chsSlicerModule.h"
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

const std::string kUsage = std::string(R"(Usage: CudaAlphaTreeSegmentation [options] <input> <output>

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
  --algorithm <name>      CUDA construction: auto (default), insert-all, skip-redundant, spanning-tree or
                          level-synchronous (8/16-bit scalar images)
  --overlay <file.png>    also write the region borders over the image (the middle slice of a volume)
)") + chs_example::kCommonUsage;

const std::string kSlicerXml = chs_example::SlicerModuleXml(
  "CUDA Alpha-Omega Simplification",
  "Builds the alpha-tree (quasi-flat zone hierarchy) on the GPU and writes its alpha cut or alpha-omega cut, "
  "optionally the image with every region set to its mean value, and the saliency map.",
  R"(  <parameters>
    <label>Cut</label>
    <description>Which regions of the alpha-tree are written.</description>
    <double>
      <name>alpha</name>
      <longflag>--alpha</longflag>
      <label>Alpha</label>
      <description>Largest difference between neighbours inside a region.</description>
      <default>0</default>
      <constraints>
        <minimum>0</minimum>
        <maximum>65535</maximum>
        <step>1</step>
      </constraints>
    </double>
    <double>
      <name>omega</name>
      <longflag>--omega</longflag>
      <label>Omega</label>
      <description>Largest range of values inside a region (negative: no constraint, the alpha cut).</description>
      <default>-1</default>
      <constraints>
        <minimum>-1</minimum>
        <maximum>65535</maximum>
        <step>1</step>
      </constraints>
    </double>
    <boolean>
      <name>fullyConnected</name>
      <longflag>--fully-connected</longflag>
      <label>Fully connected</label>
      <description>26-connectivity (8 in 2D) instead of face connectivity.</description>
      <default>false</default>
    </boolean>
    <string-enumeration>
      <name>algorithm</name>
      <longflag>--algorithm</longflag>
      <label>GPU construction</label>
      <description>How the GPU builds the tree (the same tree every time): auto, insert-all (the paper's v1), skip-redundant (v2), spanning-tree or level-synchronous (8-bit and 16-bit scalar images only).</description>
      <default>auto</default>
      <element>auto</element>
      <element>insert-all</element>
      <element>skip-redundant</element>
      <element>spanning-tree</element>
      <element>level-synchronous</element>
    </string-enumeration>
  </parameters>
)" + chs_example::SlicerImageToLabelMap("regions", R"(    <image>
      <name>meanVolume</name>
      <longflag>--mean</longflag>
      <label>Simplified volume</label>
      <description>Every region set to its mean value.</description>
      <channel>output</channel>
    </image>
    <image>
      <name>saliencyVolume</name>
      <longflag>--saliency</longflag>
      <label>Saliency map</label>
      <description>The level at which neighbours merge, on the interpixel grid (2n - 1 samples per axis).</description>
      <channel>output</channel>
    </image>
)"));

struct Options
{
  std::string                input, output, overlay, mean, saliency;
  double                     alpha = 0.0, omega = std::numeric_limits<double>::infinity();
  bool                       fullyConnected = false;
  std::string                algorithm      = "auto";
  chs_example::CommonOptions common;
};

template <unsigned D>
void
Run(const Options & o)
{
  using Image     = itk::Image<float, D>;
  using Labels    = itk::Image<unsigned int, D>;
  using Algorithm = itk::CudaAlphaTreeEnums::Algorithm;
  chs_example::SlicerProgress progress(kProgram, "Alpha-tree of " + o.input);
  auto                        reader = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  progress.Watch(reader, 0.0f, 0.1f);
  auto tree = itk::CudaImageToAlphaTreeFilter<Image>::New();
  tree->SetInput(reader->GetOutput());
  tree->SetFullyConnected(o.fullyConnected);
  o.common.Apply(tree.GetPointer());
  if (o.algorithm == "auto")
    tree->SetAlgorithm(Algorithm::Auto);
  else if (o.algorithm == "insert-all")
    tree->SetAlgorithm(Algorithm::InsertAllEdges);
  else if (o.algorithm == "skip-redundant")
    tree->SetAlgorithm(Algorithm::SkipRedundantEdges);
  else if (o.algorithm == "spanning-tree")
    tree->SetAlgorithm(Algorithm::SpanningTree);
  else if (o.algorithm == "level-synchronous")
    tree->SetAlgorithm(Algorithm::LevelSynchronous);
  else
    chs_example::Fail(kProgram, "unknown algorithm '" + o.algorithm + "'");
  tree->SetComputeValueRanges(!std::isinf(o.omega));
  auto cut = itk::AlphaTreeCutImageFilter<Labels>::New();
  cut->SetInput(tree->GetOutput());
  cut->SetAlpha(o.alpha);
  cut->SetOmega(o.omega);
  progress.Watch(tree, 0.1f, 0.7f);
  progress.Watch(cut, 0.7f, 0.75f);
  reader->Update();
  const auto start = std::chrono::steady_clock::now();
  tree->Update();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  cut->Update();
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
    w->SetFileName(chs_example::Output(o.mean));
    w->Update();
  }
  if (!o.saliency.empty())
  {
    auto saliency = itk::AlphaTreeSaliencyImageFilter<Image>::New();
    saliency->SetInput(tree->GetOutput());
    auto w = itk::ImageFileWriter<Image>::New();
    w->SetInput(saliency->GetOutput());
    w->SetFileName(chs_example::Output(o.saliency));
    w->Update();
  }
  progress.Report(0.9f);
  chs_example::WriteLabelOutputs(cut->GetOutput(), o.output, o.common, cut->GetObjectCount(), "Region", progress);
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), cut->GetOutput(), chs_example::Output(o.overlay));
  std::cout << cut->GetObjectCount() << " regions; alpha-tree of " << tree->GetOutput()->GetNumberOfLeaves()
            << " pixels, " << tree->GetOutput()->GetNumberOfNodes() << " nodes in " << ms << " ms ("
            << chs_example::RanOn(tree.GetPointer()) << ") -> " << o.output << '\n';
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
