// CudaWaterpixels: waterpixel superpixels (supervoxels in 3D) of any ITK-readable image on the GPU.
//
//   CudaWaterpixels [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkCudaWaterpixelImageFilter.h"
#include "chsExampleCli.h"
#include "chsSlicerModule.h"
#include "chsExampleOverlay.h"

#include "itkImageFileReader.h"

#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "CudaWaterpixels";

struct Options
{
  std::string                     input, output, overlay;
  std::vector<itk::SizeValueType> step{ 10 };
  double                          compactness     = -1.0;
  bool                            gradientMinimum = false, fullyConnected = false;
  chs_example::CommonOptions      common;
};

/** The options, declared once: --help, --xml and the parser come from here. */
chs_example::Module
Describe(Options & o)
{
  chs_example::Module m(
    kProgram,
    R"(Usage: CudaWaterpixels [options] <input> <output>

Waterpixels (Machairas et al.): compact watershed superpixels of a 2D image or supervoxels of a 3D volume (any
format ITK reads), computed on the GPU by the Image Foresting Transform of |grad I| + k E from one seed per cell of
a regular grid. Writes the labels as unsigned 32-bit integers, 1..N, one per grid cell in raster order.
)",
    "CUDA Waterpixels",
    "Compact watershed superpixels (supervoxels in 3D) on the GPU: the Image Foresting Transform of "
    "the gradient plus a distance to a regular grid of seeds.");
  m.Group("Waterpixels", "The grid of cells and how compact the superpixels are.");
  m.Add(
    chs_example::Numbers(
      "--step", "<s>[,<s>[,<s>]]", o.step, "cell size (sigma) in pixels, one for all axes or one per axis (default 10)")
      .Slicer("step", "Grid step", "Cell size (sigma) in pixels, one value for all axes or one per axis."));
  m.Add(chs_example::Number("--compactness",
                            "<k>",
                            o.compactness,
                            "weight of the distance to the grid seeds (default: automatic, 0.04 x the input's range)")
          .Slicer("compactness",
                  "Compactness",
                  "Weight k of the distance to the grid seeds; negative: automatic (0.04 x the input's range).")
          .Range("-1", "1000", "0.01"));
  m.Add(chs_example::Switch(
          "--gradient-minimum", o.gradientMinimum, "seed each cell at its smallest gradient instead of its centre")
          .Slicer("gradientMinimum",
                  "Seeds at gradient minima",
                  "Seed each cell at its smallest gradient instead of its centre."));
  m.Add(chs_example::Switch("--fully-connected", o.fullyConnected, "8-connectivity in 2D, 26 in 3D (default: 4 / 6)")
          .Slicer("fullyConnected", "Fully connected", "26-connectivity (8 in 2D) instead of face connectivity."));
  m.Add(chs_example::Path("--overlay",
                          "<file.png>",
                          o.overlay,
                          "also write the superpixel borders over the image (the middle slice of a volume)"));
  chs_example::AddImageToLabelMap(m, "superpixels", o.common);
  m.AddExecution(o.common);
  return m;
}

template <unsigned D>
void
Run(const Options & o)
{
  using Image  = itk::Image<float, D>;
  using Labels = itk::Image<unsigned int, D>;
  chs_example::SlicerProgress progress(kProgram, "Waterpixels of " + o.input);
  auto                        reader = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  progress.Watch(reader, 0.0f, 0.1f);
  auto filter = itk::CudaWaterpixelImageFilter<Image, Labels>::New();
  filter->SetInput(reader->GetOutput());
  typename Image::SizeType step;
  for (unsigned d = 0; d < D; ++d)
    step[d] = o.step[o.step.size() == 1 ? 0 : d];
  filter->SetGridStep(step);
  filter->SetCompactness(o.compactness);
  filter->SetGradientMinimumSeeds(o.gradientMinimum);
  filter->SetFullyConnected(o.fullyConnected);
  o.common.Apply(filter.GetPointer());
  progress.Watch(filter, 0.1f, 0.9f);
  reader->Update();
  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  chs_example::WriteLabelOutputs(
    filter->GetOutput(), o.output, o.common, filter->GetNumberOfSuperpixels(), "Superpixel", progress);
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), filter->GetOutput(), chs_example::Output(o.overlay));
  std::cout << filter->GetNumberOfSuperpixels() << " waterpixels, compactness " << filter->GetCompactnessUsed() << ", "
            << ms << " ms (" << chs_example::RanOn(filter.GetPointer()) << ") -> " << o.output << '\n';
  progress.Finish();
}

} // namespace

int
main(int argc, char ** argv)
{
  Options                        o;
  const std::vector<std::string> positional = Describe(o).Parse(argc, argv);
  return chs_example::RunOnInputDimension(kProgram,
                                          positional,
                                          o.input,
                                          o.output,
                                          [&](auto dimension)
                                          {
                                            constexpr unsigned D = decltype(dimension)::value;
                                            if (o.step.empty() || (o.step.size() != 1 && o.step.size() != D))
                                              chs_example::Fail(kProgram, "--step takes one value or one per axis");
                                            Run<D>(o);
                                          });
}
