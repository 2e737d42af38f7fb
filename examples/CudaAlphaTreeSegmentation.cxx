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

struct Options
{
  std::string                        input, output, overlay, mean, saliency;
  double                             alpha = 0.0, omega = std::numeric_limits<double>::infinity();
  bool                               fullyConnected = false;
  itk::CudaAlphaTreeEnums::Algorithm algorithm      = itk::CudaAlphaTreeEnums::Algorithm::Auto;
  chs_example::CommonOptions         common;
};

/** The options, declared once: --help, --xml and the parser come from here. */
chs_example::Module
Describe(Options & o)
{
  using Algorithm = itk::CudaAlphaTreeEnums::Algorithm;
  chs_example::Module m(kProgram,
                        R"(Usage: CudaAlphaTreeSegmentation [options] <input> <output>

Builds the alpha-tree of a 2D image or 3D volume (any format ITK reads) on the GPU: the hierarchy of its
alpha-connected components, the regions whose pixels are joined by paths of neighbours that differ by at most
alpha. Writes the regions at --alpha as unsigned 32-bit labels, 1..N in raster order; with --omega, the largest
such regions whose values span at most omega (alpha-omega constrained connectivity).
)",
                        "CUDA Alpha-Omega Simplification",
                        "Builds the alpha-tree (quasi-flat zone hierarchy) on the GPU and writes its alpha cut or "
                        "alpha-omega cut, optionally the image with every region set to its mean value, and the "
                        "saliency map.");
  m.Group("Cut", "Which regions of the alpha-tree are written.");
  m.Add(chs_example::Number("--alpha", "<a>", o.alpha, "largest step inside a region (default 0: the flat zones)")
          .Slicer("alpha", "Alpha", "Largest difference between neighbours inside a region.")
          .Range("0", "65535", "1"));
  chs_example::Parameter omega =
    chs_example::Number("--omega", "<w>", o.omega, "largest range of values inside a region (default: none)")
      .Slicer("omega", "Omega", "Largest range of values inside a region (negative: no constraint, the alpha cut).")
      .Range("-1", "65535", "1")
      .Default("-1");
  omega.set = [&o](const std::string & v)
  {
    o.omega = chs_example::detail::ParseNumber<double>(v);
    if (o.omega < 0)
      o.omega = std::numeric_limits<double>::infinity(); // Slicer's "no constraint"
  };
  m.Add(std::move(omega));
  m.Add(chs_example::Switch("--fully-connected", o.fullyConnected, "8-connectivity in 2D, 26 in 3D (default: 4 / 6)")
          .Slicer("fullyConnected", "Fully connected", "26-connectivity (8 in 2D) instead of face connectivity."));
  m.Add(chs_example::Choice("--algorithm",
                            "<name>",
                            o.algorithm,
                            { { "auto", Algorithm::Auto },
                              { "insert-all", Algorithm::InsertAllEdges },
                              { "skip-redundant", Algorithm::SkipRedundantEdges },
                              { "spanning-tree", Algorithm::SpanningTree },
                              { "level-synchronous", Algorithm::LevelSynchronous } },
                            "algorithm",
                            "CUDA construction: auto (default), insert-all, skip-redundant, spanning-tree or "
                            "level-synchronous (8/16-bit scalar images)")
          .Slicer("algorithm",
                  "GPU construction",
                  "How the GPU builds the tree (the same tree every time): auto, insert-all (the paper's v1), "
                  "skip-redundant (v2), spanning-tree or level-synchronous (8-bit and 16-bit scalar images only)."));
  m.Add(chs_example::Path("--overlay",
                          "<file.png>",
                          o.overlay,
                          "also write the region borders over the image (the middle slice of a volume)"));
  chs_example::AddImageToLabelMap(m, "regions", o.common);
  m.Add(chs_example::Path("--mean", "<file>", o.mean, "also write the image with every region set to its mean value")
          .Slicer("meanVolume", "Simplified volume", "Every region set to its mean value.")
          .As("image", "output"));
  m.Add(chs_example::Path("--saliency",
                          "<file>",
                          o.saliency,
                          "also write the saliency map: the level at which neighbours merge, on the interpixel grid "
                          "(2n - 1 samples per axis)")
          .Slicer("saliencyVolume",
                  "Saliency map",
                  "The level at which neighbours merge, on the interpixel grid (2n - 1 samples per axis).")
          .As("image", "output"));
  m.AddExecution(o.common);
  return m;
}

template <unsigned D>
void
Run(const Options & o)
{
  using Image  = itk::Image<float, D>;
  using Labels = itk::Image<unsigned int, D>;
  chs_example::SlicerProgress progress(kProgram, "Alpha-tree of " + o.input);
  auto                        reader = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  progress.Watch(reader, 0.0f, 0.1f);
  auto tree = itk::CudaImageToAlphaTreeFilter<Image>::New();
  tree->SetInput(reader->GetOutput());
  tree->SetFullyConnected(o.fullyConnected);
  o.common.Apply(tree.GetPointer());
  tree->SetAlgorithm(o.algorithm);
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
  const std::vector<std::string> positional = Describe(o).Parse(argc, argv);
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
