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

const std::string kUsage = std::string(R"(Usage: CudaWaterpixels [options] <input> <output>

Waterpixels (Machairas et al.): compact watershed superpixels of a 2D image or supervoxels of a 3D volume (any
format ITK reads), computed on the GPU by the Image Foresting Transform of |grad I| + k E from one seed per cell of
a regular grid. Writes the labels as unsigned 32-bit integers, 1..N, one per grid cell in raster order.

Options:
  --step <s>[,<s>[,<s>]]  cell size (sigma) in pixels, one for all axes or one per axis (default 10)
  --compactness <k>       weight of the distance to the grid seeds (default: automatic, 0.04 x the input's range)
  --gradient-minimum      seed each cell at its smallest gradient instead of its centre
  --fully-connected       8-connectivity in 2D, 26 in 3D (default: 4 / 6)
  --overlay <file.png>    also write the superpixel borders over the image (the middle slice of a volume)
)") + chs_example::kCommonUsage;

const std::string kSlicerXml = chs_example::SlicerModuleXml(
  "CUDA Waterpixels",
  "Compact watershed superpixels (supervoxels in 3D) on the GPU: the Image Foresting Transform of the gradient plus "
  "a distance to a regular grid of seeds.",
  R"(  <parameters>
    <label>Waterpixels</label>
    <description>The grid of cells and how compact the superpixels are.</description>
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
      <constraints>
        <minimum>-1</minimum>
        <maximum>1000</maximum>
        <step>0.01</step>
      </constraints>
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
  </parameters>
)" + chs_example::SlicerImageToLabelMap("superpixels"));

struct Options
{
  std::string                     input, output, overlay;
  std::vector<itk::SizeValueType> step{ 10 };
  double                          compactness     = -1.0;
  bool                            gradientMinimum = false, fullyConnected = false;
  chs_example::CommonOptions      common;
};

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
  const std::vector<std::string> positional =
    chs_example::ParseArguments(argc,
                                argv,
                                kProgram,
                                kUsage.c_str(),
                                kSlicerXml,
                                o.common,
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
